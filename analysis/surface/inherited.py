"""Members a class lost that it still inherits: a method or field removed from a class whose base class
defines it is no removal for users (`obj.name` still answers, from the base). python.py knows the bases of
the same file; this module follows bases imported from the repository's other modules.

The work is split so that the reading stays with the caller (bot/digest/, through the source): `queries`
looks at a commit's facts and its files as read (the member removals, and where each class's imported
bases are), `lookup` at one base module's text (whether its class defines the member, else where its own
bases are), and `without_inherited` drops the removals found inherited. Pure: text in, facts out.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from analysis.models import SurfaceChange, SurfaceKind
from analysis.surface.python import MAX_SOURCE_CHARS  # the same bound on what is parsed
from analysis.surface.python_nodes import branch_blocks
from analysis.surface.shared_parse import PARSE_FAILURES
from analysis.surface.shared_parse import parse as parse_python

# The member removals a commit's queries ask about (a commit removing more is a rewrite: its bases are not
# followed), and the candidate paths of one imported module (a module file or a package's __init__).
MAX_QUERIES = 12
_MEMBER_REMOVALS = (SurfaceKind.REMOVED, SurfaceKind.FIELD_REMOVED)
_KEPT_MODULES = 64  # parsed base modules a caller's cache holds


@dataclass(frozen=True, slots=True)
class BaseRef:
    """A base class imported from another module of the repository: its name there and the paths that
    module may be at (the first one the tree has, or that a read finds)."""

    paths: tuple[str, ...]
    name: str


@dataclass(frozen=True, slots=True)
class Query:
    """A member removal to check: the fact, the member's name, and the class's imported bases."""

    change: SurfaceChange
    member: str
    bases: tuple[BaseRef, ...]


def member_of(change: SurfaceChange, classes: Iterable[str]) -> tuple[str, str] | None:
    """(class qualname, member) of a removal fact named `module.Class.member`, the class one of `classes`
    (the qualnames the file still defines); None for a removal of anything else."""
    if change.kind not in _MEMBER_REMOVALS:
        return None
    owner, _, member = change.name.rpartition(".")
    if not owner or not member:
        return None
    for qual in sorted(classes, key=len, reverse=True):  # `Outer.Inner` before a top-level `Inner`
        if owner == qual or owner.endswith(f".{qual}"):
            return qual, member
    return None


def queries(
    changes: Iterable[SurfaceChange],
    texts: Mapping[str, str | None],
    tree: Collection[str] | None,
    parsed: Callable[[str], ast.Module | None] | None = None,
) -> tuple[set[int], list[Query]]:
    """For a commit's facts and its files' texts after it ({path: text}): the ids of the member removals a
    base class of the same file still defines (dropped at once), and the queries to follow for the others
    whose class has bases imported from the repository's modules. tree: every path of the repository at
    the commit (None: unknown, each candidate path is read). parsed: a text's tree parsed already, if any
    (function bodies may be blanked: only classes' own statements and the module's imports are read)."""
    inherited: set[int] = set()
    out: list[Query] = []
    classes_of: dict[str, _Classes | None] = {}
    for change in changes:
        if change.kind not in _MEMBER_REMOVALS or not change.path.endswith((".py", ".pyi")):
            continue
        if change.path not in classes_of:
            classes_of[change.path] = _classes(texts.get(change.path), change.path, parsed)
        classes = classes_of[change.path]
        found = member_of(change, classes.defs) if classes is not None else None
        if classes is None or found is None:
            continue
        answer = classes.lookup(found[0], found[1], tree, itself=False)
        if answer is True:
            inherited.add(id(change))
        elif answer and len(out) < MAX_QUERIES:
            out.append(Query(change, found[1], answer))
    return inherited, out


def lookup(
    text: str | None,
    path: str,
    name: str,
    member: str,
    tree: Collection[str] | None,
    cache: dict[Any, Any] | None = None,
) -> bool | tuple[BaseRef, ...]:
    """Whether class `name` of the module at `path` defines `member` (itself or through a base of that
    module): True; else the bases it imports from other modules of the repository, or the module its name is
    imported from (a package's __init__ re-exporting it), to look in next; () when nothing is left to follow
    (no such class, a base from outside the repository). cache: modules parsed before, by path and text (kept
    by the caller from commit to commit: a base module is mostly the same text at each)."""
    if cache is None:
        classes = _classes(text, path)
    else:
        if (path, text) not in cache:
            if len(cache) >= _KEPT_MODULES:
                cache.clear()
            cache[path, text] = _classes(text, path)
        classes = cache[path, text]
    if classes is None:
        return ()
    if name not in classes.defs:
        ref = classes.imported_ref(name, tree)
        return (ref,) if ref is not None else ()
    return classes.lookup(name, member, tree)


def without_inherited(
    changes: Iterable[SurfaceChange], inherited: Collection[int]
) -> tuple[SurfaceChange, ...]:
    """The facts without the removals found inherited (ids of the fact objects)."""
    return tuple(c for c in changes if id(c) not in inherited)


# --- one module's classes ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Classes:
    path: str
    defs: dict[str, ast.ClassDef]  # qualname → class
    imports: dict[str, tuple[str, str]]  # local name → (module as written, with its dots; name there)

    def lookup(
        self, qual: str, member: str, tree: Collection[str] | None, *, itself: bool = True
    ) -> bool | tuple[BaseRef, ...]:
        """True when the class (itself: else only its bases) or a base of this module defines member; else
        its imported bases."""
        stack, seen, refs = [qual], {qual}, []
        while stack:
            current = stack.pop()
            node = self.defs[current]
            if (itself or current != qual) and _defines(node.body, member):
                return True
            for base in node.bases:
                local = _dotted(base)
                if local is None:
                    continue
                if local in self.defs:  # a class of this module (top-level, or a sibling in scope)
                    if local not in seen:
                        seen.add(local)
                        stack.append(local)
                    continue
                ref = self.imported_ref(local, tree)
                if ref is not None and ref not in refs:
                    refs.append(ref)
        return tuple(refs)

    def imported_ref(self, local: str, tree: Collection[str] | None) -> BaseRef | None:
        """Where a name (`Base`, or `mod.Base` with `mod` imported) this module imports is defined, when the
        repository has that module."""
        head, _, rest = local.partition(".")
        if head not in self.imports:
            return None
        module, name = self.imports[head]
        if rest:  # `from pkg import mod` or `import pkg.mod as mod`, then `mod.Base`: the module is pkg.mod
            if "." in rest:
                return None
            if name:
                module = f"{module}.{name}" if module.strip(".") else f"{module}{name}"
            name = rest
        elif not name:  # `import pkg.mod as m` then `class X(m)`: not a class
            return None
        paths = _module_paths(self.path, module, tree)
        return BaseRef(paths, name) if paths else None


def _classes(
    text: str | None, path: str, parsed: Callable[[str], ast.Module | None] | None = None
) -> _Classes | None:
    if text is None or len(text) > MAX_SOURCE_CHARS:
        return None
    tree = parsed(text) if parsed is not None else None
    if tree is None:
        try:
            tree = parse_python(text)
        except PARSE_FAILURES:
            return None
    defs: dict[str, ast.ClassDef] = {}
    imports: dict[str, tuple[str, str]] = {}
    _walk(tree.body, "", defs, imports)
    return _Classes(path, defs, imports)


def _walk(
    body: list[ast.stmt], scope: str, defs: dict[str, ast.ClassDef], imports: dict[str, tuple[str, str]]
) -> None:
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            qual = f"{scope}{stmt.name}"
            defs[qual] = stmt
            _walk(stmt.body, f"{qual}.", defs, imports)
        elif scope:
            continue
        elif isinstance(stmt, ast.ImportFrom):
            module = "." * stmt.level + (stmt.module or "")
            for alias in stmt.names:
                if alias.name != "*":
                    imports[alias.asname or alias.name] = (module, alias.name)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    imports[alias.asname] = (alias.name, "")
                # `import pkg.mod` binds `pkg`: `pkg.mod.Base` is a dotted name too deep to follow
        elif isinstance(stmt, ast.If | ast.Try):  # `if TYPE_CHECKING:` / `try: from x import y`
            for inner in branch_blocks(stmt):
                _walk(inner, scope, defs, imports)


def _defines(body: list[ast.stmt], member: str) -> bool:
    """Whether a class body defines the name: a method, an attribute or a field (also under an `if`)."""
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and stmt.name == member:
            return True
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == member for t in stmt.targets
        ):
            return True
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == member:
            return True
        if isinstance(stmt, ast.If | ast.Try) and any(
            _defines(inner, member) for inner in branch_blocks(stmt)
        ):
            return True
    return False


def _dotted(node: ast.expr) -> str | None:
    """`Base`, `mod.Base`, `Base[T]` → the dotted name; None for anything else (a call, `Generic[T]`'s
    subscript keeps its name)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _module_paths(path: str, module: str, tree: Collection[str] | None) -> tuple[str, ...]:
    """The paths a module imported by the file at `path` may be at: a relative import from the file's own
    folder; an absolute one under the folder its top package sits in (the file's path names it: `src/pkg/a.py`
    importing `pkg.b` → `src/pkg/b.py`). With the tree known, only paths it has; () for a module outside the
    repository (another distribution's)."""
    folder = posixpath.dirname(path)
    stripped = module.lstrip(".")
    level = len(module) - len(stripped)
    parts = stripped.split(".") if stripped else []
    if level:
        base = folder
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        stem = posixpath.join(base, *parts) if parts else base
    else:
        if not parts:
            return ()
        folders = folder.split("/") if folder else []
        if parts[0] not in folders:
            return ()  # not the file's own top package: another distribution's module, or a sibling's
        at = folders.index(parts[0])  # the outermost folder of that name: the top package
        stem = posixpath.join(*folders[:at], *parts) if at else posixpath.join(*parts)
    candidates = (
        (f"{stem}.py", posixpath.join(stem, "__init__.py"))
        if parts
        else (posixpath.join(stem, "__init__.py"),)
    )
    if tree is not None:
        return tuple(p for p in candidates if p in tree)
    return candidates
