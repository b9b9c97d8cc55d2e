"""Python modules removed or renamed. `from pkg.util import x` names a file: moving or deleting the file
breaks that import as surely as deleting `x`, though the names inside may not change at all (a pure
`git mv`). One fact per module users import (public, shipped before the commit), a package moved being one
fact for all its modules; aliased when a shim keeps the old import path working.

A module git did not see moved (deleted, and one added with the same names: too rewritten for its rename
detection) is paired by the names the two files share; those names then move with the module, they are not
also reported removed and added.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from analysis.models import SurfaceChange, SurfaceKind
from analysis.surface.shared_parse import PARSE_FAILURES
from analysis.surface.shared_parse import parse as parse_python


class FileVersions(Protocol):
    """A touched file's two texts (commit.py's FileVersions); None: absent."""

    @property
    def path(self) -> str: ...
    @property
    def before(self) -> str | None: ...
    @property
    def after(self) -> str | None: ...
    @property
    def previous_path(self) -> str | None: ...


# A shim that keeps an old import path working from the package or the new module: a `sys.modules` entry,
# or a module-level `__getattr__` (PEP 562) that answers the old name.
_SHIM_MARKERS = ("sys.modules", "__getattr__")
_SHARED_NAMES = 0.5  # of the deleted module's public names, for a deleted and an added module to be one moved


@dataclass(frozen=True, slots=True)
class ModuleFacts:
    changes: list[SurfaceChange]  # the modules removed and renamed
    moved: set[int]  # ids of name facts that only say a name moved with its module: dropped
    removed_paths: frozenset[str]  # deleted modules' files: their names' removals are implied (dropped)


def module_facts(
    files: Sequence[FileVersions],
    before: Callable[[str], str | None],
    after: Callable[[str], str | None],
    names: Sequence[SurfaceChange],
) -> ModuleFacts:
    """The modules the commit removes or renames. before(path): the module a path was imported by when
    the distribution shipped it before the commit (None: not shipped, a test); after(path): the same after
    it. names: the commit's name facts (REMOVED and ADDED pair a deleted module with an added one)."""
    python = [f for f in files if f.path.endswith(".py") and (f.previous_path or f.path).endswith(".py")]
    old_of = {id(f): m for f in python if f.before is not None and (m := before(f.previous_path or f.path))}
    new_of = {id(f): m for f in python if f.after is not None and (m := after(f.path))}
    had, has = set(old_of.values()), set(new_of.values())
    gone = [f for f in python if id(f) in old_of and old_of[id(f)] not in has and _public(old_of[id(f)])]
    came = [f for f in python if id(f) in new_of and new_of[id(f)] not in had]
    by_file: dict[tuple[SurfaceKind, str], list[SurfaceChange]] = {}  # (REMOVED | ADDED, path) → its facts
    for c in names:
        by_file.setdefault((c.kind, c.path), []).append(c)
    renamed: list[tuple[str, str, str]] = []  # (old module, new module, new path)
    removed: list[tuple[str, str]] = []  # (module, old path)
    moved: set[int] = set()
    taken: set[int] = set()
    for f in gone:
        old = old_of[id(f)]
        if f.after is not None and id(f) in new_of:  # git saw the file move
            renamed.append((old, new_of[id(f)], f.path))
            taken.add(id(f))
            continue
        candidates = [c for c in came if c.before is None and id(c) not in taken]
        partner, shared = _partner(old, f, candidates, new_of, by_file)
        if partner is None:
            removed.append((old, f.previous_path or f.path))
            continue
        taken.add(id(partner))
        renamed.append((old, new_of[id(partner)], partner.path))
        moved |= shared
    # a package whose `__init__` holds nothing is no import path of its own: its modules say what moved
    hollow = {
        old_of[id(f)]
        for f in gone
        if f.before is not None and _hollow_init(f.previous_path or f.path, f.before)
    }
    renamed = [r for r in renamed if r[0] not in hollow]
    removed = [r for r in removed if r[0] not in hollow]
    texts = [f.after for f in files if f.after is not None and f.path.endswith((".py", ".pyi"))]
    inits = {after(f.path): f.after for f in python if f.after is not None and f.path.endswith("__init__.py")}
    changes = [
        SurfaceChange(
            SurfaceKind.MODULE_RENAMED, new, path, old=old, new=new, aliased=_shimmed(old, texts, inits)
        )
        for old, new, path in renamed
        if not _implied(old, new, renamed)
    ]
    changes += [
        SurfaceChange(SurfaceKind.MODULE_REMOVED, old, path, aliased=_shimmed(old, texts, inits))
        for old, path in removed
        if not any(old.startswith(f"{other}.") for other, _ in removed)
    ]
    removed_paths = frozenset(path for _, path in removed)
    return ModuleFacts(changes, moved, removed_paths)


def _public(module: str) -> bool:
    return bool(module) and not any(p.startswith("_") and not p.startswith("__") for p in module.split("."))


def _partner(
    old: str,
    deleted: FileVersions,
    added: Sequence[FileVersions],
    new_of: dict[int, str],
    by_file: dict[tuple[SurfaceKind, str], list[SurfaceChange]],
) -> tuple[FileVersions | None, set[int]]:
    """The added module that holds most of a deleted module's public names (at least _SHARED_NAMES of
    them), with the ids of the REMOVED and ADDED facts of the names they share."""
    gone = {
        c.name[len(old) + 1 :]: c
        for c in by_file.get((SurfaceKind.REMOVED, deleted.path), ())
        if c.name.startswith(f"{old}.")
    }
    best: FileVersions | None = None
    best_shared: set[int] = set()
    most = 0
    for f in added if gone else ():
        new = new_of[id(f)]
        came = {
            c.name[len(new) + 1 :]: c
            for c in by_file.get((SurfaceKind.ADDED, f.path), ())
            if c.name.startswith(f"{new}.")
        }
        shared = gone.keys() & came.keys()
        if len(shared) >= _SHARED_NAMES * len(gone) and len(shared) > most:
            best, most = f, len(shared)
            best_shared = {id(gone[q]) for q in shared} | {id(came[q]) for q in shared}
    return best, best_shared


def _hollow_init(path: str, text: str) -> bool:
    """A package `__init__` with no statement but a docstring (nothing to import from it)."""
    if not path.endswith("__init__.py"):
        return False
    try:
        body = parse_python(text).body
    except PARSE_FAILURES:
        return False
    return all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) for s in body)


def _implied(old: str, new: str, renamed: Sequence[tuple[str, str, str]]) -> bool:
    """A module moved with its package (`pkg.util` → `newpkg.util` beside `pkg` → `newpkg`)."""
    return any(
        old.startswith(f"{o}.") and new == n + old[len(o) :] for o, n, _ in renamed if (o, n) != (old, new)
    )


def _shimmed(old: str, texts: Sequence[str], inits: dict[str | None, str]) -> bool:
    """Whether a file the commit leaves keeps `old` importable: one that names it whole in a string next to
    `sys.modules` (the new module or another registering itself under the old path), or a package
    `__init__` above it that names it, whole or by its last part, next to `sys.modules` or a module
    `__getattr__`."""
    whole = _literal(old)
    if any("sys.modules" in text and whole.search(text) for text in texts):
        return True
    last = _literal(old.rsplit(".", 1)[-1])
    parents = [old.rsplit(".", k)[0] for k in range(1, old.count(".") + 1)]
    for package in parents:
        text = inits.get(package)
        if text and any(m in text for m in _SHIM_MARKERS) and (whole.search(text) or last.search(text)):
            return True
    return False


def _literal(value: str) -> re.Pattern[str]:
    return re.compile(rf"""(['"]){re.escape(value)}\1""")
