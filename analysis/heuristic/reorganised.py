"""What a restructuring moves is no new capability. A commit its author calls a restructuring (scores.py's
`_restructuring`: "Refactor", "Split", "Move", "Reorganize", "Rename" …) that adds public names which are the old
code moved — a helper split out of a class into its own module, a private function made a module's public one,
a module moved with its old path kept importable — brings users nothing new: its "added" names and its renames
that keep an alias are not weighed. A name is moved when the commit's removed lines name it (leading underscores
aside: `_set_device` → `set_device`) or hold its body. A code name renamed with its old path kept is moved
too, unless the title says "rename": there the new name is the point, and users should know it. What it adds or
renames that users set (an option, an environment variable, a configuration field, a parameter, a route, an
entry point, a supported version) is still judged.

A restructuring whose title calls the code it touches internal (`INTERNAL_CODE`: "Refactor internal `f()`",
"Rename internal X") and whose code names the repository's docs never mention takes nothing from users and
gives them nothing: its removals and renames of such names (`breaking_undocumented`) and the code names it
adds are not weighed either (an `internal_names` statement names them). Both must hold: the author's word and
the docs' silence. What users set is still judged, and so is a name the docs mention.
"""

from __future__ import annotations

import re
from dataclasses import replace

from analysis.heuristic.facts import Facts
from analysis.heuristic.signals import Signal
from analysis.heuristic.title_claims import INTERNAL_CODE
from analysis.models import CODE_BREAKING_KINDS, SurfaceChange, SurfaceKind
from analysis.titles import without_gitmoji

# The findings whose changes may be the old code moved: code names added, renames that keep an alias.
_MOVABLE_KEYS = frozenset({"feature", "feature_deep", "notice", "notice_deep"})
# A body moved when this share of its statement lines is among the commit's removed lines.
MOVED_SHARE = 0.8
_DEF = r"^([ \t]*)(?:async[ \t]+)?(?:def|class)[ \t]+{name}\b"


def without_moved(facts: Facts, signals: tuple[Signal, ...], restructuring: Signal) -> tuple[Signal, ...]:
    """The signals of a restructuring (its `restructuring` finding: the title's word) without the changes that
    are old code moved, and a `moved_names` statement naming them (no weight) when there are any."""
    renaming = restructuring.items[:1] in (("rename",), ("renames",), ("renamed",))
    # the code users ran before: docs that name a name are no code it came from
    removed = "\n".join(d.removed for path, d in facts.diffs.items() if path in facts.runtime)
    removed_lines = {line.strip() for line in removed.split("\n") if line.strip()}
    moved: list[str] = []
    out: list[Signal] = []
    for signal in signals:
        if signal.key not in _MOVABLE_KEYS or not signal.changes:
            out.append(signal)
            continue
        kept = []
        for change in signal.changes:
            if _moved(change, facts, removed, removed_lines, renaming):
                moved.append(_tail(change.name))
            else:
                kept.append(change)
        if kept:
            out.append(replace(signal, changes=tuple(kept)))
    if moved:
        out.append(Signal("moved_names", items=tuple(dict.fromkeys(moved))))
    return tuple(out)


def without_internal(facts: Facts, signals: tuple[Signal, ...]) -> tuple[Signal, ...]:
    """The signals of a restructuring without the code names its title calls internal (see the module's
    docstring): the undocumented names it breaks and the code names it adds; unchanged when the title does not
    say "internal" or "private"."""
    if INTERNAL_CODE.search(without_gitmoji(facts.subject)) is None:
        return signals
    internal: list[str] = []
    out: list[Signal] = []
    for signal in signals:
        if signal.key not in _INTERNAL_KEYS or not signal.changes:
            out.append(signal)
            continue
        kept = [c for c in signal.changes if not _internal(c, signal.key)]
        internal += [_tail(c.name) for c in signal.changes if _internal(c, signal.key)]
        if kept:
            out.append(replace(signal, changes=tuple(kept)))
    if internal:
        out.append(Signal("internal_names", items=tuple(dict.fromkeys(internal))))
    return tuple(out)


# The findings whose changes may be code names the title calls internal.
_INTERNAL_KEYS = frozenset({"breaking_undocumented", "feature", "feature_deep"})


def _internal(change: SurfaceChange, key: str) -> bool:
    if key == "breaking_undocumented":
        return change.kind in CODE_BREAKING_KINDS and change.documented is False
    return change.kind == SurfaceKind.ADDED  # a code name; an option, a field, a route users set is judged


def _moved(
    change: SurfaceChange, facts: Facts, removed: str, removed_lines: set[str], renaming: bool
) -> bool:
    if change.kind in CODE_BREAKING_KINDS:
        return change.aliased and not renaming  # the old path kept working: the name only moved
    if change.kind != SurfaceKind.ADDED:
        return False  # what users set or pass is judged by itself
    name = _tail(change.name).lstrip("_")
    # the substring test first: the pattern cannot match without it, and it is the common answer
    if not name or (name in removed and re.search(rf"(?<!\w)_*{re.escape(name)}\b", removed)):
        return True
    diff = facts.diffs.get(change.path)
    body = _body(diff.added, name) if diff is not None else []
    return bool(body) and sum(line in removed_lines for line in body) >= MOVED_SHARE * len(body)


def _tail(name: str) -> str:
    """The last name of a dotted one: `pkg.mod.Class.method` → `method`."""
    return name.partition("(")[0].rsplit(".", 1)[-1].rsplit(":", 1)[-1]


def _body(added: str, name: str) -> list[str]:
    """The statement lines of a Python function or class the added lines define (its docstring aside)."""
    lines = added.split("\n")
    pattern = re.compile(_DEF.format(name=re.escape(name)))
    for i, line in enumerate(lines):
        found = pattern.match(line)
        if found is None:
            continue
        indent = len(found.group(1).expandtabs())
        body = []
        for inner in lines[i + 1 :]:
            if not inner.strip():
                continue
            if len(inner) - len(inner.lstrip()) <= indent:
                break
            body.append(inner.strip())
        return [b for b in body if not b.startswith(('"""', "'''", "#"))]
    return []
