"""What the rules find in a commit's facts, each finding a `Signal` with its weight on one of the two
scores: impact points (what the change does to its users) or a risk step (how likely it needs a fix).
The scores and the tier they make are in `scores.py`; the rubric is listed in the package docstring.

Over 400 lines because it is the rubric itself: one function per signal, kept side by side so their weights
can be read and compared in one place.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from analysis.heuristic.facts import Diff, Facts
from analysis.models import (
    BREAKING_KINDS,
    DEPENDENCY_KINDS,
    MODULE_KINDS,
    FileChange,
    SurfaceChange,
    SurfaceKind,
)
from analysis.models import module_depth as name_depth
from analysis.paths import PathKind, builds_what_ships
from analysis.titles import declared_breaking

SIZE_LOW_MAX = 50
SIZE_MEDIUM_MAX = 740

# Impact points, one scale for every finding: a change that breaks users' code is high on its own; a
# change of what existing users get (a default, a switch, a security fix, a fix of a crash) weighs 2, a
# new capability, a new dependency version or a deprecation 1; either makes the commit at least medium
# (on real history a behaviour change was not followed up more often than its risk says: the weight
# orders, the risk score decides above medium). `scores.py` reads them.
BREAKING = 3
BEHAVIOUR = 2
NOTICE = 1


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
        _sig_title_feature(facts),
        _sig_host_patch(facts),
        *_sig_mapping_settings(facts),
        *_sig_supported_values(facts),
        _sig_dependency(facts),
        _sig_build(facts),
        _sig_kernel(facts),
        _sig_public_api(facts),
        _sig_new_model(facts),
        _sig_revert(facts),
        _sig_prose(facts),
        _sig_non_runtime(facts),
        _sig_version_bump(facts),
        _sig_isolated(facts),
        _sig_mechanical(facts),
    ]
    kept = [s for s in found if s is not None]
    if any(s.key in ("breaking", "breaking_deep") for s in kept):  # the code says which names it breaks
        kept = [s for s in kept if s.key != "declared_breaking"]
    if any(s.impact >= NOTICE for s in kept if s.key != "title_feature"):  # the code says what is new
        kept = [s for s in kept if s.key != "title_feature"]
    return kept


def _runtime(facts: Facts, *kinds: PathKind) -> list[tuple[FileChange, PathKind]]:
    """Changed files that reach what users run, with their kinds (of the given kinds; all when none)."""
    return [(f, k) for f, k in facts.meaningful() if f.path in facts.runtime and (not kinds or k in kinds)]


def _runtime_files(facts: Facts, *kinds: PathKind) -> list[FileChange]:
    return [f for f, _ in _runtime(facts, *kinds)]


# -- what the code says: surface changes (analysis/surface/) -----------------------------------

_NOTICE_KINDS = frozenset({SurfaceKind.RAISES, SurfaceKind.DEPRECATION})
_SUPPORT_KINDS = frozenset({SurfaceKind.SUPPORT_DROPPED, SurfaceKind.SUPPORT_ADDED})
# Facts the surface step judged by the packaging before the commit: a module users had, moved or deleted
# (its new path may ship nothing, or hold the same code with a comment changed: prose, not runtime).
_OWN_JUDGMENT = _SUPPORT_KINDS | MODULE_KINDS


def _surface_signals(facts: Facts) -> list[Signal]:
    """The surface changes of the files users run, by weight: breaking (a name removed or renamed
    without an alias, a supported version dropped), behaviour (a default or switch changed), notice (a
    new exception, a deprecation, a rename that keeps an alias), feature (something new). A change deep
    in the package (see `reaches_everyone`) weighs one step less: a breaking one is stated apart. The
    switches of the project's own tests and CI (`_test_knob`) weigh nothing."""
    surface = facts.commit.surface
    if not surface:
        return []
    mine = [
        c
        for c in surface
        if (c.kind in _OWN_JUDGMENT or c.path in facts.runtime or _documented_deprecation(c, facts))
        and not (c.kind in _ENV_KINDS and _test_knob(c.name))
    ]
    breaking = [c for c in mine if c.breaking]
    # one partition pass: `c not in wide` compared dataclasses pairwise (18,000 renames took 34 s)
    wide, deep = _partition(breaking, reaches_everyone)
    groups = (
        ("breaking", BREAKING, wide),
        ("breaking_deep", BREAKING, deep),
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
                found.append(Signal(key, impact=points - key.endswith("_deep"), changes=tuple(changes)))
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


# Who a surface change reaches. What users type (command-line options, environment variables, HTTP
# routes, the runtime versions they install on) reaches every user. A name in code reaches the users who
# import it, and they import from near the package's top: a public name in a module at most REACH_DEPTH
# deep (`pkg`, `pkg.mod`, `pkg.sub.mod`) reaches users; deeper (`pkg.a.b.mod`: a model's layers, an
# engine's worker internals) it reaches mostly the package's own callers, and weighs one step less.
REACH_DEPTH = 3
_TYPED_KINDS = frozenset(
    {
        SurfaceKind.OPTION_ADDED,
        SurfaceKind.OPTION_REMOVED,
        SurfaceKind.OPTION_RENAMED,
        SurfaceKind.ENV_ADDED,
        SurfaceKind.ENV_REMOVED,
        SurfaceKind.ENV_RENAMED,
        SurfaceKind.ROUTE_ADDED,
        SurfaceKind.ROUTE_REMOVED,
        SurfaceKind.SUPPORT_DROPPED,
        SurfaceKind.SUPPORT_ADDED,
    }
)


_ENV_KINDS = frozenset({SurfaceKind.ENV_ADDED, SurfaceKind.ENV_REMOVED, SurfaceKind.ENV_RENAMED})
# A word of an environment variable's name that makes it a switch of the project's own tests or CI
# (`PKG_TEST_USE_NIGHTLY_WHEEL`, `RUN_SLOW_TESTS`, `PKG_CI_SHARD`): users never set it.
_TEST_WORDS = frozenset({"TEST", "TESTS", "TESTING", "PYTEST", "CI"})


def _test_knob(name: str) -> bool:
    return not _TEST_WORDS.isdisjoint(name.upper().split("_"))


def reaches_everyone(change: SurfaceChange) -> bool:
    if change.kind in _TYPED_KINDS:
        return True
    depth = module_depth(change)
    return depth is None or depth <= REACH_DEPTH


def module_depth(change: SurfaceChange) -> int | None:
    return name_depth(change.name, change.path)


# -- supported Python versions (read from the patch when the files were not parsed) ----------------

_PY_FLOOR = re.compile(r"""(?:requires-python|python_requires)\s*=\s*["'][^"'\n]*?>=?\s*(\d+)\.(\d+)""")
_PY_CLASSIFIER = re.compile(r"Programming Language :: Python :: (\d+)\.(\d+)\b")


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
        old, new = _PY_FLOOR.search(diff.removed), _PY_FLOOR.search(diff.added)
        if old and new:
            low, high = (int(old[1]), int(old[2])), (int(new[1]), int(new[2]))
            dropped += [f"Python {low[0]}.{minor}" for minor in range(low[1], high[1]) if high[0] == low[0]]
        kept = {(m[1], m[2]) for m in _PY_CLASSIFIER.finditer(diff.added)}
        dropped += [
            f"Python {m[1]}.{m[2]}" for m in _PY_CLASSIFIER.finditer(diff.removed) if (m[1], m[2]) not in kept
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
        if (f.path.lower() in api or _is_package_init(f.path)) and not _comments_only(facts.diffs.get(f.path))
    ]
    return Signal("public_api", items=tuple(paths)) if paths else None


def _sig_build(facts: Facts) -> Signal | None:
    """How what ships is built changed (compiler flags, the sources a target compiles, an image's steps):
    its failures show where it is built next — another platform, toolchain or version than CI's — not in
    the diff. On the reference history such commits were later reverted or fixed at almost three times
    the branch's rate (BENCHMARKS.md); a floor of medium, like a dependency change."""
    paths = [p for p in sorted(facts.runtime) if builds_what_ships(p) and not _comments_only(facts.diffs.get(p))]
    return Signal("build", items=tuple(paths)) if paths else None


def _sig_kernel(facts: Facts) -> Signal | None:
    paths = [p for p in facts.kernels if p in facts.runtime and not _comments_only(facts.diffs.get(p))]
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

# The project's own version: `version = "2.11.0"`, `__version__ = '1.2'`, `"version": "3.0.0"`,
# `VERSION = (1, 2, 0)`, `version='1.2.0',` in setup.py, or a VERSION file's one line.
_VERSION_VALUE = r"""["'(]?v?\d+(?:[.,+-]\s*\w+)*["')]?\s*,?\s*$"""
_VERSION_LINE = re.compile(
    r"""^\s*["']?(?i:[\w.-]*version(?:_info)?_*)["']?\s*[:=]\s*""" + _VERSION_VALUE
)  # also `_COMPATIBLE_CORE_VERSION = '2.46.0'`: a release moves the versions it is built with
_BARE_VERSION = re.compile(r"^\s*" + _VERSION_VALUE)
_VERSION_FILES = re.compile(r"(?:^|/)(?:_?version\.py|version|version\.txt|\.version)$", re.IGNORECASE)


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
        lines = [line for line in diff.changed_lines() if line.strip()]
        bare = bool(_VERSION_FILES.search(f.path))
        if not lines or not all(_VERSION_LINE.match(x) or (bare and _BARE_VERSION.match(x)) for x in lines):
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


# -- config defaults --------------------------------------------------------------------------

_ASSIGN = re.compile(
    r"^[ \t]*(?:self\.)?([A-Za-z_][\w.-]*)[ \t]*(?::[^=\n]{1,80})?=(?!=)[ \t]*(.+?)[ \t]*,?[ \t]*$", re.M
)
_MAPPING = re.compile(r"^[ \t]*[\"']?([\w.-]+)[\"']?[ \t]*:[ \t]*(.+?)[ \t]*,?[ \t]*$", re.M)
_DEFAULT_KW = re.compile(r"\bdefault[ \t]*=[ \t]*([^,)\n]+)")
_ENV_DEFAULT = re.compile(r"(?:getenv|environ\.get)\(\s*[\"']([\w.-]+)[\"']\s*,\s*([^)\n]+)\)")
_LITERAL = re.compile(
    r"^(-?[\d_]+(\.[\d_]+)?([eE]-?\d+)?|True|False|None|true|false|null|nil|\"[^\"]*\"|'[^']*'|"
    r"[A-Za-z_][\w]*\.[A-Z][A-Z0-9_]*)$"
)


# A string of several words is prose (a help text, a message), not a setting: fixing a typo in it
# changes no default. Keys that name text are skipped for the same reason.
_PROSE = re.compile(r"""^(["'])[^"'\n]*\s\S+\s[^"'\n]*\1$""")
_TEXT_KEY = re.compile(
    r"(?:^|[_.-])(?:help|description|desc|doc|docs|docstring|message|msg|text|title|label|hint|comment|example|usage)$",
    re.IGNORECASE,
)


def _is_config_module(path: str, kind: PathKind) -> bool:
    if kind == PathKind.CONFIG:
        return True
    if kind != PathKind.SOURCE:
        return False
    segments = path.lower().split("/")
    return bool(set(segments[:-1]) & _CONFIG_DIRS) or bool(_CONFIG_MODULE.search(segments[-1]))


def _defaults(text: str, config_module: bool) -> dict[str, list[str]]:
    """Literal values given to defaults in some lines of code: {name: [value, ...]} in order."""
    found: dict[str, list[str]] = {}
    matches = [(m.group(1), m.group(2)) for m in _ENV_DEFAULT.finditer(text)]
    matches += [("default", m.group(1)) for m in _DEFAULT_KW.finditer(text)]
    if config_module:
        matches += [(m.group(1), m.group(2)) for m in _ASSIGN.finditer(text)]
        matches += [(m.group(1), m.group(2)) for m in _MAPPING.finditer(text)]
    for key, value in matches:
        value = value.strip()
        if _LITERAL.match(value) and not _PROSE.match(value) and not _TEXT_KEY.search(key):
            found.setdefault(key, []).append(value)
    return found


def _sig_config_default(facts: Facts) -> Signal | None:
    """Defaults changed, read from the patch lines: in configuration files always, in code only where
    the files were not parsed (the surface facts compare real values)."""
    parsed = facts.commit.surface is not None
    changed: list[str] = []
    for f, kind in _runtime(facts, PathKind.SOURCE, PathKind.CONFIG):
        diff = facts.diffs.get(f.path)
        if diff is not None and not (parsed and kind == PathKind.SOURCE):
            changed.extend(_changed_defaults(diff, _is_config_module(f.path, kind)))
    names = tuple(dict.fromkeys(changed))
    return Signal("config_default", impact=BEHAVIOUR, items=names) if names else None


def _changed_defaults(diff: Diff, config_module: bool) -> list[str]:
    removed, added = _defaults(diff.removed, config_module), _defaults(diff.added, config_module)
    names = []
    for key, old_values in removed.items():
        new_values = added.get(key, [])
        # Same names on both sides, value changed. A different count means options were added or
        # removed, not a default changed.
        if len(new_values) != len(old_values):
            continue
        for old, new in zip(old_values, new_values, strict=True):
            if not same_value(old, new):
                names.append(f"{key}: {old} → {new}" if key != "default" else f"default {old} → {new}")
                break
    return names


def same_value(old: str, new: str) -> bool:
    """Two literals that mean the same value: `0.0` and `"0.0"` (a number retyped as the string a
    parser reads it from), `1e3` and `1000`, `True` and `true`."""
    a, b = (v.strip().strip("\"'").strip().lower() for v in (old, new))
    if a == b:
        return True
    try:
        return float(a.replace("_", "")) == float(b.replace("_", ""))
    except ValueError:
        return False


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


# -- settings read by key from a mapping of options ----------------------------------------------

# `additional_config.get("enable_x", False)`, `options.get("timeout", 30)`, `settings.pop("mode", "fast")`:
# a setting users pass as a key of a configuration mapping, read with its default, the mapping's name saying so.
_MAPPING_READ = re.compile(
    r"\b([A-Za-z_]*(?i:config|configs|cfg|conf|options|opts|settings))\s*\.\s*(?:get|pop)\(\s*"
    r"""(["'])([A-Za-z_][\w.-]{0,80})\2\s*(?:,\s*([^(),\n]{1,80}?))?\s*\)"""
)


def _sig_mapping_settings(facts: Facts) -> list[Signal]:
    """Settings read by key in the source files users run (any mapping named so in a configuration module,
    elsewhere one named options or settings), and literals given under a setting's `is None` guard: a default
    that really changed (same mapping and key on both sides) changes what users get; a key read for the first
    time is a new setting. A key only moved (read on both sides) is neither; a key no longer read is not
    stated (the code may read it elsewhere)."""
    changed: list[str] = []
    new_keys: list[str] = []
    for f in _runtime_files(facts, PathKind.SOURCE):
        diff = facts.diffs.get(f.path)
        if diff is None or (
            ".get(" not in diff.added and ".pop(" not in diff.added and " is None" not in diff.text
        ):
            continue
        changed += _guarded_defaults(diff.text)
        # outside a configuration module a `config` is as often a model's or a kernel's (config.json, a tuned
        # table) as the user's: there only mappings named options or settings count
        anywhere = _is_config_module(f.path, PathKind.SOURCE)
        old, new = _mapping_reads(diff.removed, anywhere), _mapping_reads(diff.added, anywhere)
        for key, defaults in new.items():
            before = old.get(key)
            if before is None:
                new_keys.append(key[1])
            elif len(before) == len(defaults):
                changed += [
                    f"{key[1]}: {a} → {b}"
                    for a, b in zip(before, defaults, strict=True)
                    if not same_value(a, b)
                ]
    out = []
    if changed:
        out.append(Signal("setting_default", impact=BEHAVIOUR, items=tuple(dict.fromkeys(changed))))
    if new_keys:
        out.append(Signal("setting_added", impact=NOTICE, items=tuple(dict.fromkeys(new_keys))))
    return out


# A default given where a setting was left unset: `if cache_config.block_size is None:` then
# `cache_config.block_size = 128` on the next line. The patch shows the guard as the changed line's context.
_UNSET_GUARD = re.compile(r"^ [ \t]*if\s+([A-Za-z_][\w.]*)\s+is\s+None\s*:\s*$")
_LITERAL_SET = re.compile(
    r"^[-+][ \t]*([A-Za-z_][\w.]*)\s*=\s*(-?[\d.]+(?:e-?\d+)?|True|False|\"[^\"\n]{0,40}\"|'[^'\n]{0,40}')\s*$"
)


def _guarded_defaults(patch: str) -> list[str]:
    """Literals assigned to a setting right under its `is None` guard that changed: `target: old → new`."""
    out: list[str] = []
    guard: str | None = None
    removed: dict[str, str] = {}
    for line in patch.split("\n"):
        if line.startswith(" "):
            found = _UNSET_GUARD.match(line)
            guard, removed = (found.group(1) if found else None), {}
            continue
        literal = _LITERAL_SET.match(line)
        if guard is None or literal is None or literal.group(1) != guard:
            if not line.startswith(("-", "+")):
                guard = None
            continue
        if line.startswith("-"):
            removed[guard] = literal.group(2)
        elif guard in removed and not same_value(removed[guard], literal.group(2)):
            out.append(f"{guard}: {removed[guard]} → {literal.group(2)}")
    return out


_USER_MAPPINGS = ("options", "opts", "settings")


def _mapping_reads(text: str, any_mapping: bool) -> dict[tuple[str, str], list[str]]:
    """{(mapping, key): [the default of each read, "None" when not given]}; `any_mapping` False: only
    mappings named options or settings."""
    found: dict[tuple[str, str], list[str]] = {}
    for m in _MAPPING_READ.finditer(text):
        if not any_mapping and not m.group(1).lower().endswith(_USER_MAPPINGS):
            continue
        found.setdefault((m.group(1), m.group(3)), []).append((m.group(4) or "None").strip())
    return found


# -- values a list of supported ones gained or lost -------------------------------------------

# `supported_quantization = ["w8a8", "w4a16"]`, `SUPPORTED_DTYPES = (...)`, `_supported_archs = {...}` on one
# line: what users may ask for. A value taken out no longer works for those who used it.
_SUPPORTED_LIST = re.compile(
    r"^[ \t]*((?:self\.)?[A-Za-z_]*[Ss][Uu][Pp][Pp][Oo][Rr][Tt][Ee][Dd]\w*)[ \t]*(?::[^=\n]{1,80})?=[ \t]*"
    r"(?:frozenset|set|tuple|list)?[ \t]*([\[({][^\n]*[\])}])[ \t]*,?[ \t]*$",
    re.M,
)
_STRING_VALUE = re.compile(r"""(["'])([^"'\n]{1,80})\1""")


def _sig_supported_values(facts: Facts) -> list[Signal]:
    """String values a one-line list named `*supported*` (not `unsupported`) lost (breaks those users) or
    gained (a new capability), in the files users run; a list only new or only removed states nothing."""
    lost: list[str] = []
    gained: list[str] = []
    for f in _runtime_files(facts, PathKind.SOURCE):
        diff = facts.diffs.get(f.path)
        if diff is None or "upported" not in diff.removed.lower() or "upported" not in diff.added.lower():
            continue
        old, new = _supported_lists(diff.removed), _supported_lists(diff.added)
        for name in sorted(old.keys() & new.keys()):
            lost += [f"{name}: {v}" for v in old[name] if v not in new[name]]
            gained += [f"{name}: {v}" for v in new[name] if v not in old[name]]
    out = []
    if lost:
        out.append(Signal("supported_dropped", impact=BREAKING, items=tuple(dict.fromkeys(lost))))
    if gained:
        out.append(Signal("supported_added", impact=NOTICE, items=tuple(dict.fromkeys(gained))))
    return out


def _supported_lists(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for m in _SUPPORTED_LIST.finditer(text):
        name = m.group(1)
        if "unsupported" in name.lower() or "not_supported" in name.lower():
            continue
        found[name] = [v for _, v in _STRING_VALUE.findall(m.group(2))]
    return found


# -- switches (read from the patch when the files were not parsed) ---------------------------

# A flag that turns a path on or off: `enable_ep = False` → `True`, `use_cache=True`, `disable_x: bool = ...`.
_SWITCH = re.compile(
    r"(?<![\w.])((?:self\.)?[A-Za-z_]\w*)[ \t]*(?::[^=\n]{1,60})?=(?!=)[ \t]*(True|False|true|false)\b"
)
_BOOLEAN = re.compile(r"True|False|true|false")
_SWITCH_NAME = re.compile(r"enable|disable|allow|support|use_|skip|force", re.IGNORECASE)


def _sig_switch(facts: Facts) -> Signal | None:
    """A feature switch flipped: the same flag set to the opposite boolean. Only where the files were
    not parsed (the surface facts find switches and guards by syntax)."""
    if facts.commit.surface is not None:
        return None
    flipped: list[str] = []
    for f in _runtime_files(facts, PathKind.SOURCE, PathKind.CONFIG):
        diff = facts.diffs.get(f.path)
        if diff is None or not _BOOLEAN.search(diff.removed) or not _BOOLEAN.search(diff.added):
            continue
        old = {m[1]: m[2].lower() for m in _SWITCH.finditer(diff.removed) if _SWITCH_NAME.search(m[1])}
        new = {m[1]: m[2].lower() for m in _SWITCH.finditer(diff.added) if _SWITCH_NAME.search(m[1])}
        flipped += [
            f"{name}: {old[name]} → {value}" for name, value in new.items() if old.get(name, value) != value
        ]
    found = tuple(dict.fromkeys(flipped))
    return Signal("switch", impact=BEHAVIOUR, items=found) if found else None


# -- dependency versions ----------------------------------------------------------------------

# A dependency line's package name: "torch==2.9", "mistral_common[image] >= 1.8", '"react": "^18"',
# 'serde = "1.0"', "github.com/x/y v1.2.3", "gem 'rails', '~> 7.0'".
_REQ_NAME = re.compile(
    r"^\s*(?:gem\s+|require\s+)?[\"']?(@?[A-Za-z0-9][\w.\-/@]*)(?:\[[^\]]*\])?[\"']?"
    r"\s*(?:==|>=|<=|~=|!=|===|>|<|=|:|\s+v?\d|,)"
)
# Manifests whose package names may hold a "/" (Go module paths, npm scopes); elsewhere a name with a
# "/" is a path (a coverage `omit` entry, an include pattern), not a package.
_SLASH_NAMES = frozenset({"go.mod", "go.work", "package.json", "deno.json", "bower.json", "composer.json"})
# A TOML table or JSON object whose entries are dependencies, and those that only developers install.
_TOML_TABLE = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*$")
_JSON_KEY = re.compile(r"""^\s*["']([\w.-]+)["']\s*:\s*[{\[]\s*$""")
_DEV = re.compile(
    r"(?:^|[^a-z])(?:dev|devel|develop|test|tests|testing|lint|linting|docs?|typing|bench)(?:[^a-z]|$)"
    r"|^dependency-groups$",  # PEP 735 groups are for developers: users never install them
    re.I,
)
_QUOTED = re.compile(r"""(["'])([^"'\n]+)\1""")
_DEPS_TABLE = re.compile(r"(?:^|[.-])(?:dependencies|requires|deps)$|^dependency-groups$", re.I)
# Manifest keys that carry a version but are not dependencies (the project's own version, ...).
_NOT_PACKAGES = frozenset(
    {"version", "name", "description", "license", "edition", "rust-version", "requires-python", "go"}
    | {"toolchain", "module", "authors", "homepage", "repository", "main", "types", "private", "engines"}
)


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
            not name.startswith(("pyproject", "package", "cargo")) and _DEV.search(_stem(f.path))
        ):
            continue
        names.extend(_version_changes(diff, name))
    found = tuple(dict.fromkeys(names))
    if moved and not found:
        return Signal("dependency", changes=moved)
    found += tuple(f"{c.name}: {c.old} → {c.new}" for c in moved)
    return Signal("dependency", items=found) if found else None


def _stem(path: str) -> str:
    """A requirements file's name and folder without the generic words: `requirements/test.txt` → `test.txt`."""
    return re.sub(
        r"requirements|constraints", "", path.lower().rsplit("/", 2)[-1] if "/" in path else path.lower()
    )


def _version_changes(diff: Diff, name: str) -> list[str]:
    removed: dict[str, str] = {}
    added: dict[str, str] = {}
    toml, json_like = name.endswith(".toml"), name.endswith(".json")
    table: str | None = None  # the TOML table (or JSON object) the line is in, when the hunk shows it
    for line in diff.text.split("\n"):
        sign, text = line[:1], line[1:]
        header = _TOML_TABLE.match(text) if toml else _JSON_KEY.match(text) if json_like else None
        if header:
            table = header.group(1)
            continue
        if sign not in ("-", "+") or (table is not None and _DEV.search(table)):
            continue
        side = removed if sign == "-" else added
        if toml:
            for requirement in _toml_requirements(text, table):
                _note_requirement(requirement, side, slash=False)
            continue
        _note_requirement(text, side, slash=name in _SLASH_NAMES)
    return [
        _version_change(name, old, added[name])
        for name, old in removed.items()
        if added.get(name, old) != old
    ]


def _toml_requirements(text: str, table: str | None) -> list[str]:
    """The requirements a TOML manifest line states: its quoted requirement strings ("name>=1.0",
    inside an array or not); else, only in a table of dependencies (Cargo's [dependencies], Poetry's),
    a `name = "1.0"` entry: elsewhere such a key is a tool's setting (`required-version = "0.8"`)."""
    quoted = [m.group(2) for m in _QUOTED.finditer(text)]
    found = [q for q in quoted if _REQ_NAME.match(q)]
    if found or not (table is not None and _DEPS_TABLE.search(table)):
        return found
    return [text]


def _note_requirement(line: str, side: dict[str, str], *, slash: bool) -> None:
    text = line.split("#", 1)[0].strip()
    m = _REQ_NAME.match(text)
    if not m or not re.search(r"\d", text[m.end(1) :]):
        return
    name = m.group(1).lower().replace("_", "-")
    if name not in _NOT_PACKAGES and (slash or "/" not in name):
        side.setdefault(name, " ".join(text.split()))


def _version_change(name: str, old: str, new: str) -> str:
    """Name and versions ("torch 2.9.0 → 2.10.0") when both lines carry one, else the name alone."""
    versions = [re.search(r"\d[\w.+*-]*", line) for line in (old[len(name) :], new[len(name) :])]
    if versions[0] and versions[1] and versions[0].group(0) != versions[1].group(0):
        return f"{name} {versions[0].group(0)} → {versions[1].group(0)}"
    return name


# -- security ---------------------------------------------------------------------------------

# Security-sensitive words as whole path tokens ("auth_utils.py", not "authors.py" or "tokenizer").
_SECURITY_PATH = re.compile(
    r"^.*?(?<![a-z0-9])(?:auth|authn|authz|oauth|jwt|security|secrets?|crypto|sandbox(?:ing)?|permissions?|acl"
    r"|rbac|csrf|credentials?|password|passwd|tls|ssl|sanitizer?|pickle|deserializ(?:e|ation))(?![a-z0-9]).*$",
    re.M,
)
_RISKY_CALLS = re.compile(
    r"(?<![\w.])(?:eval|exec)(?=\s*\()"  # the builtins, not model.eval()
    r"|\b(?:c?pickle|cloudpickle|dill)\.loads?(?=\s*\()|\bmarshal\.loads(?=\s*\()"
    r"|\byaml\.load(?=\s*\()|\btorch\.load(?=\s*\()|\bos\.system(?=\s*\()"
    r"|\bshell\s*=\s*True\b|\btrust_remote_code\s*=\s*True\b|\bverify\s*=\s*False\b"
    r"|\bdangerouslySetInnerHTML\b|\.innerHTML\s*=(?!=)",
    re.M,
)
# Text each of those contains: a diff with none of it skips the expression's search. As specific as the
# expression allows ("torch.load", not "torch", which most diffs of a deep-learning project hold).
_RISKY_WORDS = (
    "eval", "exec", "pickle.", "dill.", "marshal.", "yaml.load", "torch.load", "os.system", "shell",
    "trust_remote_code", "verify", "nnerHTML",
)  # fmt: skip


# A fix whose title names a failure users see: a crash, a hang, lost or wrong results, a slowdown.
_FIXES = re.compile(r"\b(?:fix(?:es|ed|ing)?|bug\s*fix|hot\s*fix|resolve[sd]?)\b", re.IGNORECASE)
_USER_IMPACT = re.compile(
    r"\b(?:crash(?:es|ed|ing)?|hangs?|hanging|deadlocks?|data\s+(?:loss|corruption)|corrupt(?:s|ed|ion)?"
    r"|memory\s+leaks?|leaks?\s+memory|oom|out\s+of\s+memory|segfaults?|segmentation\s+fault"
    r"|degrad(?:es|ed|ing|ation)|(?:throughput|latency|performance)\s+(?:drop|regression|loss)"
    r"|race\s+condition|(?:wrong|incorrect|garbled|corrupted)(?:\s+[\w-]+){0,3}?\s+"
    r"(?:results?|outputs?|answers?|values?|logits|tokens|code\s*gen)|garbled|gibberish|miscompil\w*"
    r"|out[\s-]+of[\s-]+bounds?|illegal\s+(?:memory\s+)?(?:access|address)|use[\s-]+after[\s-]+free"
    r"|NaNs?|accuracy\s+(?:drop|regression|loss|issues?|problems?)|RuntimeError|panics?)\b",
    re.IGNORECASE,
)


def _sig_user_impact(facts: Facts) -> Signal | None:
    title = facts.commit.title
    if "bugfix" not in facts.tags and not _FIXES.search(title):
        return None
    if not _code_changed(facts):
        return None
    found = tuple(dict.fromkeys(m.group(0).lower() for m in _USER_IMPACT.finditer(title)))
    return Signal("user_impact", impact=BEHAVIOUR, items=found) if found else None


# A title that says what users get by default changes ("Disable X by default", "Set default backend to
# Y", "Prefer A as default over B"): a default chosen in code (a backend's priority, a platform check) is
# often no literal the patch rules can read. A claim, so it counts only where code users run changed.
_TITLE_DEFAULT = re.compile(
    r"\b(?:by[ -]default|as\s+(?:the\s+)?default|defaults?\s+to|new\s+defaults?"
    r"|(?:change[sd]?|switch(?:es|ed)?|makes?|sets?|flip(?:s|ped)?|update[sd]?|enable[sd]?|disable[sd]?)"
    r"\s+(?:the\s+)?defaults?|default\s+(?:value|backend|behaviou?r|mode|setting)s?"
    # "Make strict matching the default (#1)", "make X the default for Y" (not "make sure the default ...")
    r"|\bmake[s]?\s+(?!the\b|sure\b|it\b)[\w`.:-]+(?:\s+[\w`.:-]+){0,4}?\s+the\s+default(?:\s+\w+)?"
    r"(?=\s*(?:$|[(\[,;:.]|(?:for|in|on|when|everywhere)\b)))\b",
    re.IGNORECASE,
)


def _sig_title_default(facts: Facts) -> Signal | None:
    found = _TITLE_DEFAULT.search(facts.commit.title)
    if found is None or not _code_changed(facts):
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


# A title that declares a new capability by a convention for it: the ✨ (:sparkles:) gitmoji, a conventional
# `feat:` / `feat(x):`, a leading `[Feature]` / `[Feat]` / `[New Feature]` tag, or "add(s) support for".
_TITLE_FEATURE = re.compile(
    r"^\s*(?:✨|:sparkles:|feat(?:\([^)\n]*\))?:|\[\s*(?:feat|feature|new feature)\s*\])"
    r"|\badd(?:s|ed)?\s+support\s+(?:for|of)\b",
    re.IGNORECASE,
)


def _sig_title_feature(facts: Facts) -> Signal | None:
    """A new capability the title declares where no surface fact states one: many features change what
    existing calls do (a dependency kind now supported, a form now accepted) without a new name. A claim,
    so it counts only where code users run changed; `find_signals` drops it beside a finding of weight."""
    found = _TITLE_FEATURE.search(facts.commit.title)
    if found is None or facts.reverts or not _code_changed(facts):
        return None
    return Signal("title_feature", impact=NOTICE, items=(" ".join(found.group(0).lower().split()),))


def _code_changed(facts: Facts) -> list[FileChange]:
    """The runtime files whose change is more than comments: the evidence a claim about the code needs."""
    return [f for f in _runtime_files(facts) if not _comments_only(facts.diffs.get(f.path))]


def _sig_security(facts: Facts) -> Signal | None:
    """Security needs code evidence: a security advisory id in the message (breaking weight: users must
    upgrade), security words in the title, a security-sensitive path or a risky call added, each only
    when code users run changed (a folder named `security/` does not make a docstring typo a security
    fix). Advisory ids count anywhere in the message; words only in the title, where they are a claim
    about the change ("no security impact" in a body is not)."""
    code = {f.path for f in _code_changed(facts)}
    if not code:
        return None
    advisories = list(facts.advisories)
    items = list(facts.security_words)
    source = [f for f in _runtime_files(facts, PathKind.SOURCE) if f.path in code]
    flagged = _matching(_SECURITY_PATH, source)
    items += [f.path for f in source if f.path.lower() in flagged]
    items += _risky_calls(facts)
    found = tuple(dict.fromkeys([*advisories, *items]))
    if not found:
        return None
    return Signal("security", impact=BREAKING if advisories else BEHAVIOUR, items=found)


def _risky_calls(facts: Facts) -> list[str]:
    calls: list[str] = []
    for f in _runtime_files(facts, PathKind.SOURCE):
        diff = facts.diffs.get(f.path)
        if diff is not None:
            calls.extend(_risky_calls_in(diff))
    return calls


def _risky_calls_in(diff: Diff) -> list[str]:
    calls: list[str] = []
    added = diff.added
    if not any(word in added for word in _RISKY_WORDS) or not _RISKY_CALLS.search(added):
        return calls
    text = diff.added_code()  # not in string literals or comments: a pattern or docstring is no call
    for m in _RISKY_CALLS.finditer(text):
        end = text.find("\n", m.end())
        line = text[text.rfind("\n", 0, m.start()) + 1 : end if end >= 0 else None]
        # torch.load with weights_only=True is the safe form.
        if not (m.group(0) == "torch.load" and "weights_only=True" in line):
            calls.append(re.sub(r"\s+", "", m.group(0)).lstrip("."))
    return calls


# -- mechanical changes -----------------------------------------------------------------------

_ANNOTATION = re.compile(
    r"(?<![\w\"'.\[])([A-Za-z_]\w*)[ \t]*:[ \t]*[A-Za-z_][\w.\[\], |\"']*?(?=[ \t]*(?:=|,[ \t]*$|\)|$))",
    re.M,
)
_RETURN_ANNOTATION = re.compile(r"\)[ \t]*->[ \t]*[^:\n]+(?=:[ \t]*$)", re.M)
_IMPORT = re.compile(r"^[ \t]*(from[ \t]+\S+[ \t]+)?import[ \t].*$", re.M)
_ANNOTATED_EXT = (".py", ".pyi", ".ts", ".tsx")


def _sig_mechanical(facts: Facts) -> Signal | None:
    if facts.counted_lines <= SIZE_LOW_MAX:
        return None  # only "big but mechanical" matters; small changes are low already
    meaningful = [f for f, _ in facts.meaningful()]
    proven: Counter[str] = Counter()
    moved = _moved_files(meaningful, facts.diffs)
    for f in meaningful:
        how = "rename" if f.path in moved else _mechanical_file(f, facts.diffs.get(f.path))
        if how:
            proven[how] += f.changes
    # Most of the counted lines must be proven mechanical, not just some files.
    if sum(proven.values()) * 10 < facts.counted_lines * 9:
        return None
    return Signal("mechanical", risk=-1, items=tuple(k for k, _ in proven.most_common()))


def _moved_files(files: list[FileChange], diffs: dict[str, Diff]) -> set[str]:
    """Paths of files deleted in one place and added with the same content elsewhere: a rename
    that the source reported as delete + add (git without rename detection does)."""
    deleted: dict[str, str] = {}
    for f in files:
        diff = diffs.get(f.path)
        if f.status == "removed" and diff is not None and not diff.added:
            deleted.setdefault(_squash(diff.removed), f.path)
    moved: set[str] = set()
    for f in files:
        diff = diffs.get(f.path)
        if f.status == "added" and diff is not None and not diff.removed:
            twin = deleted.pop(_squash(diff.added), None)
            if twin is not None:
                moved.update((twin, f.path))
    return moved


def _mechanical_file(f: FileChange, diff: Diff | None) -> str | None:
    if diff is None:
        return None
    removed, added = diff.removed, diff.added
    if not removed.strip() or not added.strip():
        return None
    if _squash(removed) == _squash(added):
        return "formatting"
    if not f.path.endswith(_ANNOTATED_EXT) or "lambda" in removed or "lambda" in added:
        return None  # "lambda x: y" is code, not an annotation
    return "annotations" if _squash(_unannotated(removed)) == _squash(_unannotated(added)) else None


_COMMENT = re.compile(r"^\s*(#|//|/\*|\*|--|;|<!--|$)")


def _comments_only(diff: Diff | None) -> bool:
    """True when every changed line is a comment or blank: such a change cannot alter behaviour."""
    return diff is not None and all(_COMMENT.match(line) for line in diff.changed_lines())


def _squash(text: str) -> str:
    return "".join(text.split())


def _unannotated(text: str) -> str:
    # Annotation changes often add or drop typing imports: imports do not count either.
    text = _IMPORT.sub("", text)
    return _RETURN_ANNOTATION.sub(")", _ANNOTATION.sub(r"\1", text))
