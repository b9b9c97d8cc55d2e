"""What the rules find in a commit's facts, each finding a `Signal` with its weight on one of the two
scores: impact points (what the change does to its users) or a risk step (how likely it needs a fix).
The scores and the tier they make are in `scores.py`; the rubric is listed in the package docstring. The
readers of diff lines the rules share live beside it, named for what they read: `setting_lines` (defaults,
option mappings, supported-value lists, switches), `requirement_lines` (dependency versions), `foreign_lines`
(another package's installed version or settings),
`version_lines`, `mechanical_lines`, `security_lines`, `title_claims`, `surface_reach`, `written_up`.

Over 400 lines because it is the rubric itself: one function per signal, kept side by side so their weights
can be read and compared in one place.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from analysis.heuristic.facts import Diff, Facts
from analysis.heuristic.foreign_lines import foreign_settings, version_gates
from analysis.heuristic.mechanical_lines import comments_only, mechanical_file, moved_files
from analysis.heuristic.requirement_lines import (
    DEVELOPER_ONLY,
    PYTHON_CLASSIFIER,
    PYTHON_FLOOR,
    manifest_stem,
    version_changes,
)
from analysis.heuristic.security_lines import SECURITY_PATH, guards_in, risky_calls_in
from analysis.heuristic.setting_lines import (
    changed_defaults,
    dropped_keys,
    flipped_switches,
    renamed_keys,
    setting_changes,
    supported_lists,
)
from analysis.heuristic.surface_reach import ENV_KINDS, reaches_everyone, test_knob
from analysis.heuristic.text_only import changed_code_lines
from analysis.heuristic.title_claims import (
    FIXES,
    RESTRUCTURING,
    TITLE_DEFAULT,
    TITLE_FEATURE,
    TITLE_NOTICE,
    TITLE_PERF,
    USER_IMPACT,
    declared_by_verb,
)
from analysis.heuristic.version_lines import sets_only_the_version
from analysis.heuristic.written_up import written_up_docs
from analysis.models import (
    BREAKING_KINDS,
    DEPENDENCY_KINDS,
    MODULE_KINDS,
    FileChange,
    SurfaceChange,
    SurfaceKind,
)
from analysis.paths import PathKind, builds_what_ships
from analysis.release_headings import Category
from analysis.surface.packaging_files import is_dev_requirements
from analysis.titles import (
    conventional_prefix,
    declared_breaking,
    gitmoji_kind,
    leading_tags,
    without_gitmoji,
)

SIZE_LOW_MAX = 50
SIZE_MEDIUM_MAX = 740
_FEATURE_KEYS = frozenset({"feature", "feature_deep"})
# what a title or the commit's release-notes entry claims, where the code says nothing
_TITLE_CLAIMS = frozenset({"title_feature", "title_perf", "title_notice", "notes_entry", "written_up"})
# Lines outside what users run beyond which a commit with a small runtime change is large only outside it:
# twice a small change's worth, so that a small fix with its tests keeps the risk its paths' record gives it.
OUTSIDE_MIN = 2 * SIZE_LOW_MAX
# Changed lines of one runtime file beyond which its prose is not told from its code (about 10 µs a line).
CODE_SCAN_MAX = 2000

# Impact points, one scale for every finding: a change that breaks users' code is high on its own; a
# change of what existing users get (a default, a switch, a security fix, a fix of a crash) weighs 2, a
# new capability, a new dependency version or a deprecation 1; either makes the commit at least medium
# (on real history a behaviour change was not followed up more often than its risk says: the weight
# orders, the risk score decides above medium). `scores.py` reads them.
BREAKING = 3
BEHAVIOUR = 2
NOTICE = 1
# The findings that say the change breaks users (each weighs BREAKING): what Compatibility and Risks must name.
BREAKING_KEYS = (
    "breaking",
    "breaking_deep",
    "breaking_undocumented",
    "declared_breaking",
    "supported_dropped",
    "setting_renamed",
    "setting_dropped",
    "notes_breaking",
)
# What a commit's own release-notes entry may declare of weight: breaking (a removal included) is BREAKING; a
# new capability, a changed behaviour, a deprecation or a speed-up is NOTICE (at least medium). A fix, docs or
# internal entry adds nothing: it never lowers what the code says.
_NOTED_ENTRIES = frozenset({Category.FEATURE, Category.CHANGE, Category.DEPRECATION, Category.PERFORMANCE})


@dataclass(frozen=True, slots=True)
class Signal:
    key: str  # see find_signals
    impact: int = 0  # impact points (BREAKING, BEHAVIOUR, NOTICE), 0 for none
    risk: int = 0  # +1 raises the risk score (a percentile nudge with history, a tier without), -1 lowers it
    items: tuple[str, ...] = ()  # the facts it rests on: paths, names, phrases from the commit
    changes: tuple[SurfaceChange, ...] = ()  # the surface changes it rests on (analysis/surface/)


# Public API surface by path: entrypoint / CLI / server / schema folders anywhere, or files named so.
_API_PATH = re.compile(
    r"^(?:.*/)?(?:"
    r"(?:entrypoints?|api|apis|cli|cmd|commands|endpoints|routes|routers|openapi|protos?|schemas?|graphql|grpc"
    r"|public|include|sdk)/.*"
    r"|(?:cli|__main__|main|api|api_server|apiserver|server|routes|urls|endpoints|openapi|schemas?|protocol"
    r"|public_api|exports?)(?:\.\w+)?"
    r"|lib\.rs|index\.[cm]?[jt]s|.*\.(?:proto|graphql|gql|thrift|avsc|avdl|capnp|fbs)|.*\.schema\.json"
    r"|openapi[\w.-]*\.(?:ya?ml|json))$",
    re.M,
)
_MODEL_DIRS = frozenset({"models", "backends", "backend", "platforms", "providers", "drivers"})
_CONFIG_MODULE = re.compile(
    r"(^|[_-])(config|configs|configuration|settings|defaults?|constants|consts|envs?|options|args|"
    r"arg_utils|flags|params|parameters)([_-]|\.|$)"
)
_CONFIG_DIRS = frozenset({"config", "configs", "conf", "settings", "defaults"})


def find_signals(facts: Facts) -> list[Signal]:
    """Everything the rules found, in the order the reason states them. Impact findings come from the
    files that change what users run (`Facts.runtime`) only: a default changed in an example is no
    default changed for users."""
    found = [
        *_surface_signals(facts),
        _sig_support_dropped(facts),
        _sig_security(facts),
        _sig_config_default(facts),
        _sig_switch(facts),
        _sig_user_impact(facts),
        _sig_title_default(facts),
        _sig_declared_breaking(facts),
        _sig_notes_entry(facts),
        _sig_title_feature(facts),
        _sig_title_perf(facts),
        _sig_title_notice(facts),
        _sig_written_up(facts),
        _sig_host_patch(facts),
        _sig_foreign_setting(facts),
        *_sig_mapping_settings(facts),
        *_sig_supported_values(facts),
        _sig_dependency(facts),
        _sig_build(facts),
        _sig_version_gate(facts),
        _sig_kernel(facts),
        _sig_public_api(facts),
        _sig_new_model(facts),
        _sig_revert(facts),
        _sig_prose(facts),
        _sig_non_runtime(facts),
        _sig_version_bump(facts),
        _sig_isolated(facts),
        _sig_outside_runtime(facts),
        _sig_mechanical(facts),
    ]
    kept = [s for s in found if s is not None]
    if facts.no_functional_change:  # names an NFC commit adds are its own restructuring: no new capability
        kept = [s for s in kept if s.key not in _FEATURE_KEYS]
    if any(s.key == "breaking" for s in kept):  # the code names what it breaks for users: the claims go
        kept = [s for s in kept if s.key not in ("declared_breaking", "notes_breaking")]
    if any(s.impact >= NOTICE for s in kept if s.key not in _TITLE_CLAIMS):  # the code says what is new
        kept = [s for s in kept if s.key not in _TITLE_CLAIMS]
    return kept


def _runtime(facts: Facts, *kinds: PathKind) -> list[tuple[FileChange, PathKind]]:
    """Changed files that reach what users run, with their kinds (of the given kinds; all when none)."""
    return [(f, k) for f, k in facts.meaningful() if f.path in facts.runtime and (not kinds or k in kinds)]


def _runtime_files(facts: Facts, *kinds: PathKind) -> list[FileChange]:
    return [f for f, _ in _runtime(facts, *kinds)]


# -- what the code says: surface changes (analysis/surface/) -----------------------------------

_NOTICE_KINDS = frozenset({SurfaceKind.RAISES, SurfaceKind.DEPRECATION})
_SUPPORT_KINDS = frozenset(
    {
        SurfaceKind.SUPPORT_DROPPED,
        SurfaceKind.SUPPORT_ADDED,
        SurfaceKind.DEPENDENCY_OPTIONAL,
        SurfaceKind.DEPENDENCY_DROPPED,
    }
)
# Facts the surface step judged by the packaging before the commit: a module users had, moved or deleted
# (its new path may ship nothing, or hold the same code with a comment changed: prose, not runtime).
_OWN_JUDGMENT = _SUPPORT_KINDS | MODULE_KINDS


def _surface_signals(facts: Facts) -> list[Signal]:
    """The surface changes of the files users run, by weight: breaking (a name removed or renamed
    without an alias, a supported version dropped), behaviour (a default or switch changed), notice (a
    new exception, a deprecation, a rename that keeps an alias), feature (something new). A change deep
    in the package (see `reaches_everyone`) weighs one step less: a breaking one is stated apart; so does
    a code name the repository's reference docs never mention (analysis/surface/doc_mentions.py). The
    switches of the project's own tests and CI (`test_knob`) weigh nothing."""
    surface = facts.commit.surface
    if not surface:
        return []
    mine = [
        c
        for c in surface
        if (c.kind in _OWN_JUDGMENT or c.path in facts.runtime or _documented_deprecation(c, facts))
        and not (c.kind in ENV_KINDS and test_knob(c.name))
    ]
    breaking = [c for c in mine if c.breaking]
    # one partition pass: `c not in wide` compared dataclasses pairwise (18,000 renames took 34 s)
    wide, deep = _partition(breaking, reaches_everyone)
    # a name near the top that the repository's reference docs never mention reaches the package's own callers
    documented, undocumented = _partition(wide, lambda c: c.documented is not False)
    groups = (
        ("breaking", BREAKING, documented),
        ("breaking_deep", BREAKING, deep),
        ("breaking_undocumented", BREAKING, undocumented),
        ("behaviour", BEHAVIOUR, [c for c in mine if c.behaviour and c.kind not in _NOTICE_KINDS]),
        (
            "notice",
            NOTICE,
            [c for c in mine if c.kind in _NOTICE_KINDS or (c.aliased and c.kind in BREAKING_KINDS)],
        ),
        ("feature", NOTICE, [c for c in mine if c.feature]),
    )
    found = []
    for key, points, changes in groups:
        if key.startswith("breaking"):
            if changes:
                found.append(Signal(key, impact=points - (key != "breaking"), changes=tuple(changes)))
            continue
        wide_ones, deep_ones = _partition(changes, reaches_everyone)
        if wide_ones:
            found.append(Signal(key, impact=points, changes=tuple(wide_ones)))
        if deep_ones:
            found.append(Signal(f"{key}_deep", impact=points - 1, changes=tuple(deep_ones)))
    return found


def _documented_deprecation(change: SurfaceChange, facts: Facts) -> bool:
    """A deprecation a doc comment states (Go's `Deprecated:` paragraph, JSDoc's `@deprecated`) is what the
    language's tools show every caller, though no line of code changed: prose, but not only prose."""
    return change.kind == SurfaceKind.DEPRECATION and change.path in facts.prose


def _partition(
    changes: list[SurfaceChange], test: Callable[[SurfaceChange], bool]
) -> tuple[list[SurfaceChange], list[SurfaceChange]]:
    """The changes that pass `test` and those that do not, each in their order."""
    passed: list[SurfaceChange] = []
    failed: list[SurfaceChange] = []
    for c in changes:
        (passed if test(c) else failed).append(c)
    return passed, failed


# -- supported Python versions (read from the patch when the files were not parsed) ----------------


def _sig_support_dropped(facts: Facts) -> Signal | None:
    """`requires-python` / `python_requires` raised, or a Python version classifier removed: users on
    that version can no longer install the next release. From the surface facts when they were read."""
    if facts.commit.surface is not None:
        return None
    dropped: list[str] = []
    for f in facts.files_of(PathKind.DEPENDENCY_MANIFEST, PathKind.BUILD):
        diff = facts.diffs.get(f.path)
        if diff is None:
            continue
        old, new = PYTHON_FLOOR.search(diff.removed), PYTHON_FLOOR.search(diff.added)
        if old and new:
            low, high = (int(old[1]), int(old[2])), (int(new[1]), int(new[2]))
            dropped += [f"Python {low[0]}.{minor}" for minor in range(low[1], high[1]) if high[0] == low[0]]
        kept = {(m[1], m[2]) for m in PYTHON_CLASSIFIER.finditer(diff.added)}
        dropped += [
            f"Python {m[1]}.{m[2]}"
            for m in PYTHON_CLASSIFIER.finditer(diff.removed)
            if (m[1], m[2]) not in kept
        ]
    found = tuple(dict.fromkeys(dropped))
    if not found:
        return None
    changes = tuple(SurfaceChange(SurfaceKind.SUPPORT_DROPPED, name, "") for name in found)
    return Signal("breaking", impact=BREAKING, changes=changes)


def _sig_public_api(facts: Facts) -> Signal | None:
    """API-looking paths, stated without weight (on real history they were followed up no more often
    than other paths); only where the files were not parsed: the surface facts say more."""
    if facts.commit.surface is not None:
        return None
    candidates = _runtime_files(facts, PathKind.SOURCE, PathKind.CONFIG)
    api = _matching(_API_PATH, candidates)
    paths = [
        f.path
        for f in candidates
        if (f.path.lower() in api or _is_package_init(f.path)) and not comments_only(facts.diffs.get(f.path))
    ]
    return Signal("public_api", items=tuple(paths)) if paths else None


def _sig_build(facts: Facts) -> Signal | None:
    """How what ships is built changed (compiler flags, the sources a target compiles, an image's steps):
    its failures show where it is built next — another platform, toolchain or version than CI's — not in
    the diff. On the reference history such commits were later reverted or fixed at almost three times
    the branch's rate (BENCHMARKS.md); a floor of medium, like a dependency change."""
    paths = [
        p
        for p in sorted(facts.runtime)
        if builds_what_ships(p)
        and not comments_only(diff := facts.diffs.get(p))
        and not _version_only(p, diff)
    ]
    return Signal("build", items=tuple(paths)) if paths else None


def _version_only(path: str, diff: Diff | None) -> bool:
    # `project(x VERSION 1.5.0)` → `1.6.0`: a release bump, built as before (`_sig_version_bump` states it)
    return diff is not None and sets_only_the_version(path, diff)


def _sig_version_gate(facts: Facts) -> Signal | None:
    """A path that now runs by the installed version of a dependency (`if not is_lib_equal_or_newer("2.8.0"):`),
    in the Python files users run: continuous integration pins the dependency to one version, so the other
    path first runs on users' machines, as a build change first builds where CI does not. A floor of medium,
    like a dependency or build change (a risk, not an impact finding). Not Python's own version: CI runs every
    supported one. On the reference history's six months: 21 commits, 1 followed up (4.8 %, the branch 1.4 %)."""
    items = tuple(version_gates(_python_diffs(facts)))
    return Signal("version_gate", items=items) if items else None


def _python_diffs(facts: Facts) -> list[Diff]:
    """The patches of the Python files users run."""
    files = _runtime_files(facts, PathKind.SOURCE)
    return [d for f in files if f.path.endswith(".py") and (d := facts.diffs.get(f.path)) is not None]


def _sig_kernel(facts: Facts) -> Signal | None:
    paths = [p for p in facts.kernels if p in facts.runtime and not comments_only(facts.diffs.get(p))]
    return Signal("kernel", risk=1, items=tuple(paths)) if paths else None


def _matching(pattern: re.Pattern[str], files: list[FileChange]) -> set[str]:
    """Lower-cased paths that match a line-anchored pattern: one regex pass over all paths, which
    is much faster than one match per path on a 3000-file commit."""
    text = "\n".join(f.path.lower() for f in files)
    return {m.group(0) for m in pattern.finditer(text)}


def _is_package_init(path: str) -> bool:
    # A package's top-level __init__ is what `import pkg` exports; deeper ones are internal wiring.
    if not path.endswith("__init__.py"):
        return False
    dirs = [s for s in path.lower().split("/") if s][:-1]
    return len(dirs) == 1 or (len(dirs) == 2 and dirs[0] in ("src", "lib"))


def _sig_new_model(facts: Facts) -> Signal | None:
    paths = [
        f.path
        for f in _runtime_files(facts, PathKind.SOURCE)
        if f.status == "added"
        and not f.path.endswith("__init__.py")
        and set(f.path.lower().split("/")[:-1]) & _MODEL_DIRS
    ]
    return Signal("new_model", items=tuple(paths)) if paths else None


def _sig_revert(facts: Facts) -> Signal | None:
    # Stated, never weighed: a revert's own changes are the reverted change's, inverted, and carry its
    # impact (scores.py caps it below "breaking"); its risk is in the history score (a follow-up).
    return Signal("revert") if facts.reverts else None


def _sig_prose(facts: Facts) -> Signal | None:
    """Source files whose changed lines are all comments, docstrings or message text."""
    return Signal("prose", items=tuple(sorted(facts.prose))) if facts.prose else None


def _sig_non_runtime(facts: Facts) -> Signal | None:
    """Nothing users run changed: docs, tests, CI, examples, dev tooling, prose, files not shipped."""
    meaningful = [f for f, _ in facts.meaningful()]
    if any(_documented_deprecation(c, facts) for c in facts.commit.surface or ()):
        return None  # a doc comment's deprecation is for every caller (see `_documented_deprecation`)
    return Signal("non_runtime") if meaningful and not facts.runtime else None


# -- release version bumps ------------------------------------------------------------------


def _sig_version_bump(facts: Facts) -> Signal | None:
    """A release bump: every changed line of what ships sets the project's own version (release notes
    and other docs may change beside it). Ranked low unless something else changes what ships (a new
    dependency pin is found by its own rule)."""
    runtime = _runtime_files(facts)
    if not runtime:
        return None
    paths = []
    for f in runtime:
        diff = facts.diffs.get(f.path)
        if diff is None:
            return None
        if not sets_only_the_version(f.path, diff):
            return None
        paths.append(f.path)
    return Signal("version_bump", items=tuple(paths))


# -- isolated new files -----------------------------------------------------------------------


def _sig_isolated(facts: Facts) -> Signal | None:
    """What users run changed mostly in new files, and existing runtime files changed by a small change's
    worth of lines at most (a new model or backend file beside its one-line registration): existing code
    paths are barely touched, so size alone does not make it risky. `scores.py` keeps its risk tier at
    medium at most."""
    runtime = _runtime_files(facts)
    added = [f for f in runtime if f.status == "added"]
    existing = sum(f.changes for f in runtime if f.status != "added")
    if not added or sum(f.changes for f in added) <= SIZE_LOW_MAX or existing > SIZE_LOW_MAX:
        return None
    return Signal("isolated", items=tuple(f.path for f in added))


def _sig_outside_runtime(facts: Facts) -> Signal | None:
    """What users run changed by a small change's worth of code lines at most, in a commit large only outside
    it (tests, docs, CI, examples, tooling, prose, what the packaging states): its size is not in the code users
    run, so size alone does not make it risky. `scores.py` keeps its risk tier at medium at most. Not for a
    revert: its risk is in being a follow-up, whatever its size."""
    if facts.reverts or facts.commit.files_truncated:  # unlisted files may be code users run
        return None
    runtime = _runtime_files(facts)
    if not runtime or facts.counted_lines <= OUTSIDE_MIN:
        return None
    lines = 0
    for f in runtime:  # docstring and comment lines of a runtime file are not code users run
        diff = facts.diffs.get(f.path)
        if f.changes > CODE_SCAN_MAX:
            return None  # telling its prose from its code would cost more than it can change
        shown = 0 if diff is None else sum(1 for line in diff.text.split("\n") if line[:1] in ("+", "-"))
        if shown < f.changes or f.changes <= 1:  # no patch, or one cut short: its lines may all be code
            lines += f.changes
        else:
            lines += changed_code_lines(diff.text, diff.language, SIZE_LOW_MAX - lines)
        if lines > SIZE_LOW_MAX:
            return None
    if facts.counted_lines - lines <= OUTSIDE_MIN:
        return None
    return Signal("outside_runtime", items=tuple(f.path for f in runtime))


# -- config defaults --------------------------------------------------------------------------


def _is_config_module(path: str, kind: PathKind) -> bool:
    if kind == PathKind.CONFIG:
        return True
    if kind != PathKind.SOURCE:
        return False
    segments = path.lower().split("/")
    return bool(set(segments[:-1]) & _CONFIG_DIRS) or bool(_CONFIG_MODULE.search(segments[-1]))


def _sig_config_default(facts: Facts) -> Signal | None:
    """Defaults changed, read from the patch lines: in configuration files always, in code only where
    the files were not parsed (the surface facts compare real values)."""
    parsed = facts.commit.surface is not None
    changed: list[str] = []
    for f, kind in _runtime(facts, PathKind.SOURCE, PathKind.CONFIG):
        diff = facts.diffs.get(f.path)
        if diff is not None and not (parsed and kind == PathKind.SOURCE):
            changed.extend(changed_defaults(diff, _is_config_module(f.path, kind)))
    names = tuple(dict.fromkeys(changed))
    return Signal("config_default", impact=BEHAVIOUR, items=names) if names else None


# -- another package's behaviour replaced at import (monkey-patching) ----------------------------

# A module-level assignment to an attribute of another object (`Sampler.forward = forward`,
# `torch.backends.cudnn.benchmark = True`): every program that imports the module gets the other package —
# the engine a plugin extends, a library — doing something else. Indented lines (a method setting its own
# attributes) are no such statement.
_MODULE_ATTR_ASSIGN = re.compile(
    r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)[ \t]*(?::[^=\n]{1,60})?=(?!=)[ \t]*(\S[^\n]*?)[ \t]*$", re.M
)


def _sig_host_patch(facts: Facts) -> Signal | None:
    """Module-level replacements of another object's attribute added, removed or re-pointed in the Python
    files users run; a statement only moved (the same target and value on both sides) is none."""
    found: list[str] = []
    for f in _runtime_files(facts, PathKind.SOURCE):
        diff = facts.diffs.get(f.path)
        if diff is None or not f.path.endswith(".py") or "." not in diff.removed + diff.added:
            continue
        old = {(m[1], m[2]) for m in _MODULE_ATTR_ASSIGN.finditer(diff.removed)}
        new = {(m[1], m[2]) for m in _MODULE_ATTR_ASSIGN.finditer(diff.added)}
        found += [t for t, _ in sorted(old ^ new) if not t.endswith(".__doc__")]
    names = tuple(dict.fromkeys(found))
    return Signal("host_patch", impact=BEHAVIOUR, items=names) if names else None


def _sig_foreign_setting(facts: Facts) -> Signal | None:
    """Another library's settings changed at run time by the Python files users run: its settings object
    patched or set by name (`lib.config.patch("enable_x", False)`), a named logger's level. Like a patch at
    import, every user's process gets the other library doing something else (a compile step skipped, its
    logs hidden); on the reference history's six months 2 of the 6 such commits ranked low were reverted."""
    names = tuple(foreign_settings(_python_diffs(facts)))
    return Signal("foreign_setting", impact=BEHAVIOUR, items=names) if names else None


# -- settings read by key from a mapping of options ----------------------------------------------


def _sig_mapping_settings(facts: Facts) -> list[Signal]:
    """Settings read by key in the source files users run (any mapping named so in a configuration module,
    elsewhere one named options or settings), and literals given under a setting's `is None` guard: a default
    that really changed (same mapping and key on both sides) changes what users get; a key read for the first
    time is a new setting; a key renamed where it is read, the old one read nowhere in the patch any more, breaks
    every user who set it (their setting is silently ignored); so does an environment variable renamed so,
    where the files were not parsed (the surface facts find those), and a key a configuration module no longer
    reads that no file of the commit names any more (not in a file deleted: its module's removal speaks for it).
    A key only moved (read on both sides, or by another file of the commit) is none of these; elsewhere than a
    configuration module a key no longer read is not stated (the code may read it elsewhere)."""
    changed: list[str] = []
    new_keys: list[str] = []
    renamed: list[str] = []
    dropped: list[str] = []
    still_read: str | None = None
    env = facts.commit.surface is None
    for f in _runtime_files(facts, PathKind.SOURCE):
        diff = facts.diffs.get(f.path)
        # outside a configuration module a `config` is as often a model's or a kernel's (config.json, a tuned
        # table) as the user's: there only mappings named options or settings count
        any_mapping = _is_config_module(f.path, PathKind.SOURCE)
        if diff is None or not (
            _reads_keys(diff.added, env)
            or " is None" in diff.text
            or (any_mapping and _reads_keys(diff.removed, env))
        ):
            continue
        file_changed, file_new = setting_changes(diff, any_mapping)
        changed += file_changed
        new_keys += file_new
        pairs = renamed_keys(diff, any_mapping, env)
        if pairs or (any_mapping and f.status != "removed"):
            still_read = _still_read(facts) if still_read is None else still_read
        # an old key another file of the commit still reads (a fallback moved there) is no rename
        renamed += [f"{old} → {new}" for old, new in pairs if not _quoted_in(old, still_read or "")]
        if any_mapping and f.status != "removed":
            dropped += dropped_keys(diff, any_mapping, still_read or "")
    out = []
    if renamed:
        out.append(Signal("setting_renamed", impact=BREAKING, items=tuple(dict.fromkeys(renamed))))
    if dropped:
        out.append(Signal("setting_dropped", impact=BREAKING, items=tuple(dict.fromkeys(dropped))))
    if changed:
        out.append(Signal("setting_default", impact=BEHAVIOUR, items=tuple(dict.fromkeys(changed))))
    if new_keys:
        out.append(Signal("setting_added", impact=NOTICE, items=tuple(dict.fromkeys(new_keys))))
    return out


def _quoted_in(key: str, text: str) -> bool:
    return f'"{key}"' in text or f"'{key}'" in text


def _reads_keys(text: str, env: bool) -> bool:
    """Whether lines may read a key (a cheap test before the patterns)."""
    return ".get(" in text or ".pop(" in text or "[" in text or (env and "getenv(" in text)


def _still_read(facts: Facts) -> str:
    """The added and context lines of every patch of the commit: what the code reads after it."""
    return "\n".join(
        line[1:] for d in facts.diffs.values() for line in d.text.split("\n") if line[:1] in ("+", " ")
    )


# -- values a list of supported ones gained or lost -------------------------------------------


def _sig_supported_values(facts: Facts) -> list[Signal]:
    """String values a one-line list named `*supported*` (not `unsupported`) lost (breaks those users) or
    gained (a new capability), in the files users run; a list only new or only removed states nothing."""
    lost: list[str] = []
    gained: list[str] = []
    for f in _runtime_files(facts, PathKind.SOURCE):
        diff = facts.diffs.get(f.path)
        if diff is None or "upported" not in diff.removed.lower() or "upported" not in diff.added.lower():
            continue
        old, new = supported_lists(diff.removed), supported_lists(diff.added)
        for name in sorted(old.keys() & new.keys()):
            lost += [f"{name}: {v}" for v in old[name] if v not in new[name]]
            gained += [f"{name}: {v}" for v in new[name] if v not in old[name]]
    out = []
    if lost:
        out.append(Signal("supported_dropped", impact=BREAKING, items=tuple(dict.fromkeys(lost))))
    if gained:
        out.append(Signal("supported_added", impact=NOTICE, items=tuple(dict.fromkeys(gained))))
    return out


# -- switches (read from the patch when the files were not parsed) ---------------------------


def _sig_switch(facts: Facts) -> Signal | None:
    """A feature switch flipped: the same flag set to the opposite boolean. Only where the files were
    not parsed (the surface facts find switches and guards by syntax)."""
    if facts.commit.surface is not None:
        return None
    flipped: list[str] = []
    for f in _runtime_files(facts, PathKind.SOURCE, PathKind.CONFIG):
        diff = facts.diffs.get(f.path)
        if diff is not None:
            flipped += flipped_switches(diff)
    found = tuple(dict.fromkeys(flipped))
    return Signal("switch", impact=BEHAVIOUR, items=found) if found else None


# -- dependency versions ----------------------------------------------------------------------


def _sig_dependency(facts: Facts) -> Signal | None:
    """The dependencies users install changed: from the packaging facts when the files were read
    (analysis/surface/requirements.py), else from the manifests' patch lines: not a developer-only manifest or
    table (test, lint, docs, dev requirements; `[dependency-groups]`, `devDependencies`), not a key
    of a tool's settings, not a path."""
    surface = facts.commit.surface
    # a submodule's pointer moved is the version of code the build compiles in (see facts._submodules)
    moved = tuple(
        SurfaceChange(SurfaceKind.DEPENDENCY_CHANGED, p, p, old=a, new=b) for p, a, b in facts.submodules
    )
    if surface is not None:
        changes = tuple(c for c in surface if c.kind in DEPENDENCY_KINDS) + moved
        return Signal("dependency", changes=changes) if changes else None
    names: list[str] = []
    for f in facts.files_of(PathKind.DEPENDENCY_MANIFEST):
        diff = facts.diffs.get(f.path)
        name = f.path.lower().rsplit("/", 1)[-1]
        if diff is None or (
            not name.startswith(("pyproject", "package", "cargo"))
            and (DEVELOPER_ONLY.search(manifest_stem(f.path)) or is_dev_requirements(f.path))
        ):
            continue
        names.extend(version_changes(diff, name))
    found = tuple(dict.fromkeys(names))
    if moved and not found:
        return Signal("dependency", changes=moved)
    found += tuple(f"{c.name}: {c.old} → {c.new}" for c in moved)
    return Signal("dependency", items=found) if found else None


# -- security ---------------------------------------------------------------------------------


def _sig_user_impact(facts: Facts) -> Signal | None:
    title = facts.commit.title
    if ("bugfix" not in facts.tags and not FIXES.search(title)) or facts.no_functional_change:
        return None
    if not _code_changed(facts):
        return None
    found = tuple(dict.fromkeys(m.group(0).lower() for m in USER_IMPACT.finditer(title)))
    return Signal("user_impact", impact=BEHAVIOUR, items=found) if found else None


def _sig_title_default(facts: Facts) -> Signal | None:
    found = TITLE_DEFAULT.search(facts.commit.title)
    if found is None or facts.no_functional_change or not _code_changed(facts):
        return None
    return Signal("title_default", impact=BEHAVIOUR, items=(" ".join(found.group(0).lower().split()),))


def _sig_declared_breaking(facts: Facts) -> Signal | None:
    """The message declares the change breaking (analysis/titles.py `declared_breaking`): the author's
    word on what users must change, which no parser of the code may see (a default flipped, a behaviour
    changed, a name served another way). A claim, so it counts only where code users run changed."""
    marker = declared_breaking(facts.commit.message or facts.commit.title)
    if marker is None or not _code_changed(facts):
        return None
    return Signal("declared_breaking", impact=BREAKING, items=(marker,))


def _sig_notes_entry(facts: Facts) -> Signal | None:
    """The release-notes entry the commit adds for itself (analysis/surface/release_entries.py): its author
    files it under "Breaking changes" or "Removed", "Added", "Deprecated" … for users to read. A breaking one
    is `notes_breaking` (BREAKING), one of `_NOTED_ENTRIES` is `notes_entry` (NOTICE); named by its category
    and text. A claim, so it counts only where code users run changed, and not in a revert nor in a release (its
    code change only sets the version: the entries a "Prepare release" commit writes are other pull
    requests')."""
    if not facts.entries or facts.reverts or not _code_changed(facts) or _sig_version_bump(facts) is not None:
        return None
    breaking = [e.declares for e in facts.entries if e.category == Category.BREAKING]
    if breaking:
        return Signal("notes_breaking", impact=BREAKING, items=tuple(breaking))
    noted = [e.declares for e in facts.entries if e.category in _NOTED_ENTRIES]
    return Signal("notes_entry", impact=NOTICE, items=tuple(noted)) if noted else None


def _sig_title_feature(facts: Facts) -> Signal | None:
    """A new capability the title declares where no surface fact states one: many features change what
    existing calls do (a dependency kind now supported, a form now accepted) without a new name. Declared by a
    convention for it or by the leading verb a release-notes item would use ("Support X", "Allow X")."""
    found = TITLE_FEATURE.search(facts.commit.title)
    claim = found.group(0) if found else declared_by_verb(facts.subject, facts.tags, Category.FEATURE)
    return _title_claim(facts, "title_feature", claim)


def _sig_title_perf(facts: Facts) -> Signal | None:
    """A speed-up the title declares ("[Perf] Remove the transpose after attention"): what users get changes
    though no name, option or default does, as a release-notes entry under "Performance" says."""
    found = TITLE_PERF.search(facts.commit.title)
    return _title_claim(facts, "title_perf", found and found.group(0).strip())


def _sig_title_notice(facts: Facts) -> Signal | None:
    """A title that says the change now raises or warns ("Raise error if an incompatible core is installed",
    "Warn when …", "Deprecate …") where no surface fact states it: the raise may sit in a private helper or
    run at import."""
    found = TITLE_NOTICE.search(without_gitmoji(facts.subject))
    return _title_claim(facts, "title_notice", found and found["claim"].replace("`", ""))


def _sig_written_up(facts: Facts) -> Signal | None:
    """Docs written for users beside a change of code they run (analysis/heuristic/written_up.py): what the
    change does is worth telling users though no surface fact names it (a function body now sends a header,
    now accepts a value). Not where the title calls the change a fix or a restructuring by its words (nor, by a
    tag, prefix or gitmoji, docs, tests or CI: scores.judge); a claim like the title's, so `find_signals` drops
    it beside a finding of weight."""
    if (
        facts.reverts
        or facts.no_functional_change
        or _declared_fix(facts)
        or RESTRUCTURING.match(without_gitmoji(facts.subject))
        or not _code_changed(facts)
    ):
        return None
    docs = written_up_docs(facts)
    return Signal("written_up", impact=NOTICE, items=tuple(docs)) if docs else None


def _title_claim(facts: Facts, key: str, claim: str | None) -> Signal | None:
    """What the title claims, as its words: a claim counts only where code users run changed (not in a revert,
    nor where the title also declares no functional change), and `find_signals` drops it beside a finding of
    weight."""
    if not claim or facts.reverts or facts.no_functional_change or not _code_changed(facts):
        return None
    return Signal(key, impact=NOTICE, items=(" ".join(claim.lower().split()),))


def _code_changed(facts: Facts) -> list[FileChange]:
    """The runtime files whose change is more than comments: the evidence a claim about the code needs."""
    return [f for f in _runtime_files(facts) if not comments_only(facts.diffs.get(f.path))]


def _sig_security(facts: Facts) -> Signal | None:
    """Security needs code evidence: a security advisory id in the message (breaking weight: users must
    upgrade), security words in the title, a security-sensitive path or a risky call added, each only
    when code users run changed (a folder named `security/` does not make a docstring typo a security
    fix). Advisory ids count anywhere in the message; words only in the title, where they are a claim
    about the change ("no security impact" in a body is not). A fix that adds a check refusing hostile input
    (a path held inside its root, a carriage return refused) is security-relevant whatever the title calls it;
    like a risky call it weighs as a behaviour change (only an advisory says users must upgrade: a check is
    added by many fixes that close no hole)."""
    code = {f.path for f in _code_changed(facts)}
    if not code:
        return None
    advisories = list(facts.advisories)
    items = list(facts.security_words)
    source = [f for f in _runtime_files(facts, PathKind.SOURCE) if f.path in code]
    flagged = _matching(SECURITY_PATH, source)
    items += [f.path for f in source if f.path.lower() in flagged]
    items += _risky_calls(facts)
    guards = _risky_calls(facts, guards_in) if _declared_fix(facts) else []
    found = tuple(dict.fromkeys([*advisories, *guards, *items]))
    if not found:
        return None
    return Signal("security", impact=BREAKING if advisories else BEHAVIOUR, items=found)


def _declared_fix(facts: Facts) -> bool:
    """The title calls the change a fix: a tag, a conventional `fix:` type, a fix or security gitmoji, or the
    words (a new feature that ships with its own checks closes no hole)."""
    title = facts.commit.title
    prefix = conventional_prefix(leading_tags(title)[1])
    return (
        "bugfix" in facts.tags
        or FIXES.search(title) is not None
        or gitmoji_kind(title) in ("fix", "security")
        or (prefix is not None and prefix[0] in ("fix", "security"))
    )


def _risky_calls(facts: Facts, find: Callable[..., list[str]] = risky_calls_in) -> list[str]:
    """The risky calls (or with `find`, the guards) the commit adds: not one it moves from one of its files to
    another (a helper that calls eval() moved to a new module) or re-indents."""
    calls: list[str] = []
    diffs = [d for f in _runtime_files(facts, PathKind.SOURCE) if (d := facts.diffs.get(f.path)) is not None]
    removed: frozenset[str] | None = None

    def removed_lines() -> frozenset[str]:
        nonlocal removed
        if removed is None:
            removed = frozenset(line.strip() for d in diffs for line in d.removed_code().split("\n"))
        return removed

    for diff in diffs:
        calls.extend(find(diff, removed_lines))
    return calls


# -- mechanical changes -----------------------------------------------------------------------


def _sig_mechanical(facts: Facts) -> Signal | None:
    if facts.counted_lines <= SIZE_LOW_MAX:
        return None  # only "big but mechanical" matters; small changes are low already
    meaningful = [f for f, _ in facts.meaningful()]
    proven: Counter[str] = Counter()
    moved = moved_files(meaningful, facts.diffs)
    for f in meaningful:
        how = "rename" if f.path in moved else mechanical_file(f, facts.diffs.get(f.path))
        if how:
            proven[how] += f.changes
    # Most of the counted lines must be proven mechanical, not just some files.
    if sum(proven.values()) * 10 < facts.counted_lines * 9:
        return None
    return Signal("mechanical", risk=-1, items=tuple(k for k, _ in proven.most_common()))
