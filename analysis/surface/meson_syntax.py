"""Meson's build language read by tokens and expressions, never run (what meson_build.py asks of a
`meson.build`): strings, numbers, arrays, dicts, calls with keyword arguments, methods, `+`, the path operator
`/`, the ternary, `if`/`foreach` lines; variables assigned before, across files as Meson shares them. Values are
what an install needs: strings, arrays, `files()`, `include_directories()`, `py.get_install_dir()`; any other
is None. A statement that does not read is skipped to its line's end.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

_TOKEN = re.compile(
    r"(?P<space>[ \t\r]+|\\\n)|(?P<comment>#[^\n]*)|(?P<newline>\n)"
    r"|(?P<string>f?'''.*?'''|f?'(?:[^'\\\n]|\\.)*')"
    r"|(?P<number>0[xXoObB][0-9a-fA-F]+|\d+)|(?P<name>[A-Za-z_]\w*)"
    r"|(?P<op>\+=|==|!=|<=|>=|[-+*/%()\[\]{},:.=?<>])",
    re.S,
)
_ESCAPE = re.compile(r"\\(.)")
_KEYWORDS = frozenset({"if", "elif", "else", "endif", "foreach", "endforeach", "and", "or", "not", "in"})
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


def sources(values: tuple[object, ...], folder: str) -> list[str]:
    out: list[str] = []
    for value in values:
        if isinstance(value, Files):
            out += value.paths
        elif isinstance(value, str) and value:
            out.append(join(folder, value))
        elif isinstance(value, list):
            out += sources(tuple(value), folder)
    return out


def join(folder: str, path: str) -> str:
    joined = posixpath.normpath(folder + path) if not path.startswith("/") else path
    return "" if joined == "." else joined.lstrip("/")


# --- reading ---------------------------------------------------------------------------------------------


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
            items: list[object] = []
            self.separated("]", lambda: items.append(self.expression()))
            return items, ""
        if text == "{":
            self.separated("}", self.entry)
            return None, ""
        raise _Unreadable

    def entry(self) -> None:
        """A dict's `key: value`, read for the calls in it (a dict's value is not followed)."""
        self.expression()
        self.expect(":")
        self.expression()

    def separated(self, close: str, item: Callable[[], object]) -> None:
        """Items separated by commas up to `close` (a trailing comma allowed), the closing bracket taken;
        newlines inside are no statement's end."""
        self.depth += 1
        while self.peek()[1] != close:
            item()
            if self.peek()[1] != ",":
                break
            self.take()
        self.depth -= 1
        self.expect(close)

    def call(self, name: str, _callee: object) -> object:
        self.expect("(")
        args: list[object] = []
        kwargs: dict[str, object] = {}

        def argument() -> None:
            if self.peek()[0] == "name" and self.tokens[self.pos + 1][1] == ":":
                key = self.take()[1]
                self.take()
                kwargs[key] = self.expression()
            else:
                args.append(self.expression())

        self.separated(")", argument)
        if name == "files":
            return Files(tuple(sources(tuple(args), self.folder)))
        if name == "include_directories":
            return IncludeDirs(tuple(join(self.folder, s) for s in _flat_strings(args)))
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


def calls(text: str, folder: str, variables: dict[str, object]) -> list[Call]:
    """The calls a meson.build makes, with their arguments' values (variables updated in place)."""
    return _Reader(text, folder, variables).statements()
