"""Facts of a commit's files taken together: a removal and an addition of the same shape in two files are one
rename; a definition moved to another module and imported back (or re-exported from the package as before) did
not move for users; an environment variable or option that leaves one file for another did not change for
users."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace

from analysis.models import SurfaceChange, SurfaceKind
from analysis.surface.python import FileSurface
from analysis.surface.registrations import registered_key
from analysis.surface.shapes import Shape


def without_moved_names(results: Sequence[FileSurface]) -> list[FileSurface]:
    """A public function, class or constant a module no longer defines but imports from another module of its
    package (moved and imported back), or that the package's __init__ now imports from another module than the
    one it imported it from before (the definition moved, the re-export followed), is still where users import
    it: neither removed there nor new where it went."""
    imports = {name: where for r in results for name, where in r.imports.items()}
    if not imports:
        return list(results)
    repointed = {before: now for r in results for before, now in r.reexports.items()}
    moved: set[str] = set()  # the names removed that are served as before
    went: set[str] = set()  # where they went
    for r in results:
        for c in r.changes:
            if c.kind != SurfaceKind.REMOVED:
                continue
            if c.name in imports:  # imported back under the same name
                moved.add(c.name)
                went.add(imports[c.name])
            elif c.name in repointed:
                moved.add(c.name)
                went.add(repointed[c.name])
    if not moved:
        return list(results)
    stack = list(went)  # imported back through a module that itself imports it anew (the package's __init__)
    while stack:
        further = imports.get(stack.pop())
        if further is not None and further not in went:
            went.add(further)
            stack.append(further)
    out = []
    for r in results:
        kept = [
            c
            for c in r.changes
            if not (c.kind == SurfaceKind.REMOVED and c.name in moved)
            and not (c.kind == SurfaceKind.ADDED and c.name in went)
        ]
        out.append(replace(r, changes=kept) if len(kept) != len(r.changes) else r)
    return out


def pair_renames(results: Iterable[FileSurface]) -> tuple[SurfaceChange, ...]:
    """A removal and an addition of the same shape, each the only one of that shape, are one rename."""
    changes: list[SurfaceChange] = []
    removed: dict[str, SurfaceChange] = {}
    added: dict[str, SurfaceChange] = {}
    shaped: list[tuple[SurfaceChange, Shape]] = []
    for result in results:
        for change in result.changes:
            shape = result.shapes.get((change.kind, change.name))
            if shape is not None:
                shaped.append((change, shape))
            changes.append(change)
    # only a kind both removed and added can pair: the others' shapes are never computed
    kinds = {s.kind for c, s in shaped if c.kind == SurfaceKind.REMOVED}
    kinds &= {s.kind for c, s in shaped if c.kind == SurfaceKind.ADDED}
    shape_of: dict[int, str] = {}
    for change, shape in shaped:
        if shape.kind in kinds:
            try:
                shape_of[id(change)] = shape.text
            except RecursionError:  # a definition too deeply nested to dump: not paired
                continue
    removed_counts = Counter(
        shape_of[id(c)] for c in changes if c.kind == SurfaceKind.REMOVED and id(c) in shape_of
    )
    added_counts = Counter(
        shape_of[id(c)] for c in changes if c.kind == SurfaceKind.ADDED and id(c) in shape_of
    )
    for c in changes:
        shape = shape_of.get(id(c))
        if shape is None or removed_counts[shape] != 1 or added_counts[shape] != 1:
            continue
        (removed if c.kind == SurfaceKind.REMOVED else added)[shape] = c
    out: list[SurfaceChange] = []
    paired: set[int] = set()
    for shape, gone in removed.items():
        came = added.get(shape)
        if came is None:
            continue
        paired |= {id(gone), id(came)}
        out.append(
            SurfaceChange(
                SurfaceKind.RENAMED, came.name, came.path, came.line, old=gone.name, new=came.name,
                aliased=gone.aliased,
            )
        )  # fmt: skip
    out.extend(c for c in changes if id(c) not in paired)
    out.sort(key=lambda c: (c.path, c.line or 0, c.kind.value, c.name))
    return tuple(out)


_MOVES = {
    SurfaceKind.ENV_REMOVED: SurfaceKind.ENV_ADDED,
    SurfaceKind.OPTION_REMOVED: SurfaceKind.OPTION_ADDED,
}
_RENAMES = {
    SurfaceKind.ENV_RENAMED: SurfaceKind.ENV_ADDED,
    SurfaceKind.OPTION_RENAMED: SurfaceKind.OPTION_ADDED,
}


def without_moves(changes: tuple[SurfaceChange, ...]) -> tuple[SurfaceChange, ...]:
    """An environment variable or option no longer read in one file but read in another is where it was for
    its users: neither removed nor added. A file that drops one and reads a new one looks renamed to its
    own parser; when another file of the commit reads the old one, the new one is only added. A name users
    select registered again anywhere in the commit, under the same key, is still served (`_moved_keys`)."""
    changes = _moved_keys(changes)
    came = {(c.kind, c.name) for c in changes if c.kind in _MOVES.values()}
    gone = [c for c in changes if c.kind in _MOVES and (_MOVES[c.kind], c.name) in came]
    kept = [c for c in changes if c.kind in _RENAMES and (_RENAMES[c.kind], c.old) in came]
    if not gone and not kept:
        return changes
    moved = {(_MOVES[c.kind], c.name) for c in gone} | {(_RENAMES[c.kind], c.old) for c in kept}
    out: list[SurfaceChange] = []
    for c in changes:
        if c.kind in _RENAMES and (_RENAMES[c.kind], c.old) in moved:
            out.append(SurfaceChange(_RENAMES[c.kind], c.name, c.path, c.line))
        elif (c.kind, c.name) in moved or (c.kind in _MOVES and (_MOVES[c.kind], c.name) in moved):
            continue
        else:
            out.append(c)
    return tuple(out)


def _moved_keys(changes: tuple[SurfaceChange, ...]) -> tuple[SurfaceChange, ...]:
    """Registrations of one key both removed and added (moved to another file or registry, or written
    another way): users selecting the key get it as before, so neither is said."""
    removed = {registered_key(c.name) for c in changes if c.kind == SurfaceKind.REGISTRATION_REMOVED}
    if not removed:
        return changes
    added = {registered_key(c.name) for c in changes if c.kind == SurfaceKind.REGISTRATION_ADDED}
    both = removed & added
    if not both:
        return changes
    registrations = (SurfaceKind.REGISTRATION_REMOVED, SurfaceKind.REGISTRATION_ADDED)
    return tuple(c for c in changes if not (c.kind in registrations and registered_key(c.name) in both))
