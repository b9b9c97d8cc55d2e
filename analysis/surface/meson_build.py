"""What a Meson build installs, read from its `meson.build` files (meson-python's backend builds the wheel
from them): the sources of its extension modules and libraries, the Python files `install_sources()` and
`install_subdir()` install, the headers of their include folders and `install_headers()`; `subdir()` followed
into each folder's own file.

Read by tokens and expressions, never run: strings, arrays, `files()`, `include_directories()`, variables
assigned before (across `subdir()`s, as Meson does), `+` and the path operator `/`. A value computed otherwise
(a `run_command()`, a loop's variable) is left out; a statement that does not read is skipped to its line's end.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_TOKEN = re.compile(
    r"(?P<space>[ \t\r]+|\\\n)|(?P<comment>#[^\n]*)|(?P<newline>\n)"
    r"|(?P<string>f?'''.*?'''|f?'(?:[^'\\\n]|\\.)*')"
    r"|(?P<number>0[xXoObB][0-9a-fA-F]+|\d+)|(?P<name>[A-Za-z_]\w*)"
    r"|(?P<op>\+=|==|!=|<=|>=|[-+*/%()\[\]{},:.=?<>])",
    re.S,
)
_ESCAPE = re.compile(r"\\(.)")
_KEYWORDS = frozenset({"if", "elif", "else", "endif", "foreach", "endforeach", "and", "or", "not", "in"})
_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc")
# Calls whose sources are compiled into what a wheel installs (an `executable()` is a tool or a test).
_COMPILED = frozenset(
    {"extension_module", "library", "static_library", "shared_library", "both_libraries", "shared_module"}
)
_MAX_FILES = 200  # meson.build files followed through subdir() (a cycle ends here too)
_MAX_TOKENS = 200_000


@dataclass(frozen=True, slots=True)
class Files:
    """Repository paths (`files()` or a source string resolved against its meson.build's folder)."""

    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class IncludeDirs:
    folders: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SiteDir:
    """A folder of the Python installation (`py.get_install_dir() / 'pkg'`): `sub` below site-packages."""

    sub: str = ""


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    args: tuple[object, ...]
    kwargs: Mapping[str, object]


@dataclass(slots=True)
class MesonInstall:
    """What the build installs, as repository paths: files, folders (ending in "/"), and the folders the
    Python packages are imported from (an installed `pkg/` at `python/pkg/`: "python/")."""

    files: set[str] = field(default_factory=set)
    folders: set[str] = field(default_factory=set)
    header_folders: set[str] = field(default_factory=set)
    import_roots: set[str] = field(default_factory=set)
    read: bool = False  # the top meson.build was read
    unread: set[str] = field(default_factory=set)  # meson.build files a subdir() reached that were not given


def meson_install(root: str, texts: Mapping[str, str]) -> MesonInstall:
    """What the Meson build whose top file is `{root}meson.build` installs; texts: {path: text} of the
    repository's meson.build files."""
    found = MesonInstall()
    variables: dict[str, object] = {}
    todo = [root]
    seen: set[str] = set()
    while todo and len(seen) < _MAX_FILES:
        folder = todo.pop(0)
        path = f"{folder}meson.build"
        if path not in texts:
            found.unread.add(path)
        if path in seen or path not in texts:
            continue
        seen.add(path)
        found.read = found.read or folder == root
        for call in _calls(texts[path], folder, variables):
            _record(call, folder, found, todo)
    found.unread.update(f"{folder}meson.build" for folder in todo)  # past the bound
    found.unread -= seen
    return found


def _record(call: Call, folder: str, found: MesonInstall, todo: list[str]) -> None:
    name = call.name
    if name == "subdir":
        sub = next(iter(_strings(call.args)), None)
        if sub:
            todo.append(_join(folder, sub) + "/")
    elif name in _COMPILED:
        found.files.update(_sources(call.args[1:], folder))
        found.files.update(_sources((call.kwargs.get("sources"),), folder))
        found.header_folders.update(_folders(call.kwargs.get("include_directories"), folder))
    elif name == "install_sources":
        installed = _sources(call.args, folder)
        found.files.update(installed)
        target = next(iter(_strings((call.kwargs.get("subdir"),))), "")
        preserve = call.kwargs.get("preserve_path") is True
        for path in installed:
            where = posixpath.dirname(path)
            inside = where if preserve else target.strip("/")
            root = _root_of(where, inside)
            if root is not None and path.endswith(".py"):
                found.import_roots.add(root)
    elif name == "install_subdir":
        sub = next(iter(_strings(call.args)), None)
        if sub:
            path = _join(folder, sub)
            found.folders.add(path + "/")
            # installed as `<install_dir>/<its last folder>`: imported from where that path starts
            target = call.kwargs.get("install_dir")
            inside = (
                posixpath.join(target.sub, posixpath.basename(path)) if isinstance(target, SiteDir) else ""
            )
            root = _root_of(path, inside)
            if root is not None:
                found.import_roots.add(root)
            else:
                found.import_roots.add(posixpath.dirname(path) + "/" if "/" in path else "")
    elif name == "install_headers":
        found.files.update(_sources(call.args, folder))


def _root_of(path: str, installed: str) -> str | None:
    """The folder a repository path is imported from when it is installed as `installed` below site-packages
    ("python/ncc", "ncc" → "python/"); None when the path does not end so."""
    if not installed or not (path == installed or path.endswith("/" + installed)):
        return None
    return path[: len(path) - len(installed)]


def _sources(values: tuple[object, ...], folder: str) -> list[str]:
    out: list[str] = []
    for value in values:
        if isinstance(value, Files):
            out += value.paths
        elif isinstance(value, str) and value:
            out.append(_join(folder, value))
        elif isinstance(value, list):
            out += _sources(tuple(value), folder)
    return out


def _folders(value: object, folder: str) -> list[str]:
    if isinstance(value, IncludeDirs):
        return list(value.folders)
    if isinstance(value, str):
        return [_join(folder, value)]
    if isinstance(value, list):
        return [f for item in value for f in _folders(item, folder)]
    return []


def _strings(values: tuple[object, ...]) -> list[str]:
    return [v for v in values if isinstance(v, str)]


def _join(folder: str, path: str) -> str:
    joined = posixpath.normpath(folder + path) if not path.startswith("/") else path
    return "" if joined == "." else joined.lstrip("/")


def header_patterns(folders: set[str]) -> tuple[str, ...]:
    """Gitignore-style patterns, anchored at the repository's top, of the headers in include folders."""
    return tuple(
        f"/{folder}/**/*{suffix}" if folder else f"**/*{suffix}"
        for folder in sorted(folders)
        for suffix in _HEADER_SUFFIXES
    )


# --- reading -------------------------------------------------------------------------------------------


class _Unreadable(Exception):
    """A statement this reader does not follow: skipped to its line's end."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text) and len(out) < _MAX_TOKENS:
        m = _TOKEN.match(text, pos)
        if m is None:
            out.append(("op", text[pos]))  # a character Meson has no use for: the statement is skipped
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup or ""
        if kind in ("space", "comment"):
            continue
        out.append((kind, m.group(0)))
    out.append(("newline", "\n"))
    return out


class _Reader:
    def __init__(self, text: str, folder: str, variables: dict[str, object]) -> None:
        self.tokens = _tokens(text)
        self.pos = 0
        self.depth = 0  # brackets open: a newline inside them is no statement's end
        self.folder = folder
        self.variables = variables
        self.calls: list[Call] = []

    def peek(self) -> tuple[str, str]:
        while self.depth and self.tokens[self.pos][0] == "newline" and self.pos < len(self.tokens) - 1:
            self.pos += 1
        return self.tokens[self.pos]

    def take(self) -> tuple[str, str]:
        token = self.peek()
        self.pos = min(self.pos + 1, len(self.tokens) - 1)
        return token

    def expect(self, text: str) -> None:
        if self.take()[1] != text:
            raise _Unreadable

    def statements(self) -> list[Call]:
        while self.pos < len(self.tokens) - 1:
            start = self.pos
            try:
                self.statement()
            except (_Unreadable, RecursionError):
                self.depth = 0
                self.pos = max(self.pos, start + 1)
                while self.pos < len(self.tokens) - 1 and self.tokens[self.pos][0] != "newline":
                    self.pos += 1
            if self.tokens[self.pos][0] == "newline":
                self.pos += 1
        return self.calls

    def statement(self) -> None:
        kind, text = self.peek()
        if kind == "newline":
            return
        if kind == "name" and text in _KEYWORDS:
            # `if cond`, `foreach x : list`, `else`, `endif`...: the condition is read for the calls in it
            self.take()
            if text in ("if", "elif"):
                self.expression()
            elif text == "foreach":
                while self.peek()[1] != ":" and self.peek()[0] != "newline":
                    self.take()
                if self.peek()[1] == ":":
                    self.take()
                    self.expression()
            return
        if kind == "name" and self.tokens[self.pos + 1][1] in ("=", "+="):
            self.take()
            operator = self.take()[1]
            value = self.expression()
            if operator == "+=":
                value = _plus(self.variables.get(text), value)
            self.variables[text] = value
            return
        self.expression()
        if self.peek()[0] != "newline":
            raise _Unreadable

    def expression(self) -> object:
        value = self.binary()
        if self.peek()[1] == "?":  # a ternary: which side holds is not known
            self.take()
            self.expression()
            self.expect(":")
            self.expression()
            return None
        return value

    def binary(self) -> object:
        value = self.unary()
        while True:
            kind, text = self.peek()
            if text in ("+", "/", "-", "*", "%", "==", "!=", "<", ">", "<=", ">=") or (
                kind == "name" and text in ("and", "or", "in", "not")
            ):
                self.take()
                if text == "not":  # `not in`
                    self.expect("in")
                right = self.unary()
                value = _plus(value, right) if text == "+" else _path(value, right) if text == "/" else None
            else:
                return value

    def unary(self) -> object:
        if self.peek()[1] in ("-", "not"):
            self.take()
            self.unary()
            return None
        return self.postfix()

    def postfix(self) -> object:
        value, name = self.primary()
        while True:
            text = self.peek()[1]
            if text == "(":
                value = self.call(name, value)
                name = ""
            elif text == ".":
                self.take()
                kind, method = self.take()
                if kind != "name":
                    raise _Unreadable
                name = method
            elif text == "[":
                self.take()
                self.depth += 1
                self.expression()
                self.depth -= 1
                self.expect("]")
                value, name = None, ""
            else:
                return value

    def primary(self) -> tuple[object, str]:
        kind, text = self.take()
        if kind == "string":
            if text.startswith("f"):
                return None, ""
            body = text[3:-3] if text.startswith("'''") else _ESCAPE.sub(r"\1", text[1:-1])
            return body, ""
        if kind == "number":
            return None, ""
        if kind == "name":
            if text in ("true", "false"):
                return text == "true", ""
            return self.variables.get(text), text
        if text == "(":
            self.depth += 1
            value = self.expression()
            self.depth -= 1
            self.expect(")")
            return value, ""
        if text == "[":
            self.depth += 1
            items: list[object] = []
            while self.peek()[1] != "]":
                items.append(self.expression())
                if self.peek()[1] != ",":
                    break
                self.take()
            self.depth -= 1
            self.expect("]")
            return items, ""
        if text == "{":
            self.depth += 1
            while self.peek()[1] != "}":
                self.expression()
                self.expect(":")
                self.expression()
                if self.peek()[1] != ",":
                    break
                self.take()
            self.depth -= 1
            self.expect("}")
            return None, ""
        raise _Unreadable

    def call(self, name: str, _callee: object) -> object:
        self.expect("(")
        self.depth += 1
        args: list[object] = []
        kwargs: dict[str, object] = {}
        while self.peek()[1] != ")":
            if self.peek()[0] == "name" and self.tokens[self.pos + 1][1] == ":":
                key = self.take()[1]
                self.take()
                kwargs[key] = self.expression()
            else:
                args.append(self.expression())
            if self.peek()[1] != ",":
                break
            self.take()
        self.depth -= 1
        self.expect(")")
        if name == "files":
            return Files(tuple(_sources(tuple(args), self.folder)))
        if name == "include_directories":
            return IncludeDirs(tuple(_join(self.folder, s) for s in _flat_strings(args)))
        if name == "get_install_dir":
            return SiteDir(next(iter(_flat_strings([kwargs.get("subdir")])), "").strip("/"))
        if name == "join_paths":
            parts = _flat_strings(args)
            return "/".join(parts) if len(parts) == len(args) else None
        self.calls.append(Call(name, tuple(args), kwargs))
        return None


def _flat_strings(values: list[object]) -> list[str]:
    out: list[str] = []
    for value in values:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            out += _flat_strings(value)
    return out


def _plus(left: object, right: object) -> object:
    if isinstance(left, str) and isinstance(right, str):
        return left + right
    if isinstance(left, list):
        return [*left, *(right if isinstance(right, list) else [right])]
    if isinstance(left, Files) and isinstance(right, Files):
        return [left, right]
    return None


def _path(left: object, right: object) -> object:
    """Meson's `/` on strings: a path joined."""
    if isinstance(left, SiteDir) and isinstance(right, str):
        return SiteDir(posixpath.join(left.sub, right).strip("/"))
    return posixpath.join(left, right) if isinstance(left, str) and isinstance(right, str) else None


def _calls(text: str, folder: str, variables: dict[str, object]) -> list[Call]:
    """The calls a meson.build makes, with their arguments' values (variables updated in place)."""
    return _Reader(text, folder, variables).statements()
