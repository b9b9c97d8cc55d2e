"""Importance: the size prior on counted lines, then one tier up or down per signal found in the
commit's facts, capped at high and low. The rubric is listed in the package docstring."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from analysis.heuristic.change_type import ADVISORY, SECURITY_WORDS, type_from_revert
from analysis.heuristic.facts import NON_RUNTIME, Diff, Facts
from analysis.models import FileChange, Importance
from analysis.paths import PathKind

if TYPE_CHECKING:
    from analysis.history import HistoryFacts

SIZE_LOW_MAX = 50
SIZE_MEDIUM_MAX = 740
# Shares of the branch's recent commits scoring at or above the cut: the history-aware prior puts that
# share of a typical day at high, or at medium and above (signals then move commits a tier either way).
HIGH_SHARE = 0.12
FLAGGED_SHARE = 0.55
# With a history prior, weaker signals nudge the commit's percentile instead of moving a whole tier:
# on real history, kernel and dependency changes were followed up a little more often than their
# size predicts, while security, changed defaults and reverts were followed up several times as often.
NUDGE = 0.05
NUDGING = frozenset({"kernel", "dependency"})

_TIERS = (Importance.LOW, Importance.MEDIUM, Importance.HIGH)


def size_prior(lines: int) -> Importance:
    """The reference generator's rule, used as our starting point."""
    if lines <= SIZE_LOW_MAX:
        return Importance.LOW
    return Importance.MEDIUM if lines <= SIZE_MEDIUM_MAX else Importance.HIGH


def weigh(facts: Facts, history: HistoryFacts | None = None) -> tuple[Importance, Importance, list[Signal]]:
    """The importance, the prior it started from and the signals that moved it. With enough history
    the prior is where the commit's risk score falls among the branch's recent commits (the top
    HIGH_SHARE high, the next ones down to FLAGGED_SHARE medium); else the size prior."""
    signals = find_signals(facts)
    if history is not None and history.percentile is not None:
        nudged = history.percentile + NUDGE * sum(s.step for s in signals if s.key in NUDGING)
        prior = _percentile_tier(history.percentile)
        level = _TIERS.index(_percentile_tier(nudged)) + sum(s.step for s in signals if s.key not in NUDGING)
    else:
        prior = size_prior(facts.counted_lines)
        level = _TIERS.index(prior) + sum(s.step for s in signals)
    return _TIERS[max(0, min(len(_TIERS) - 1, level))], prior, signals


def _percentile_tier(percentile: float) -> Importance:
    if percentile >= 1 - HIGH_SHARE:
        return Importance.HIGH
    return Importance.MEDIUM if percentile >= 1 - FLAGGED_SHARE else Importance.LOW


@dataclass(frozen=True, slots=True)
class Signal:
    key: str  # public_api, config_default, security, new_model, kernel, revert, dependency, user_impact,
    # non_runtime, mechanical
    step: int  # +1 raises one tier, -1 lowers one tier, 0 a fact stated that does not move the rank
    items: tuple[str, ...] = ()  # the facts it rests on: paths, names, phrases from the commit


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
    found = [
        _sig_public_api(facts),
        _sig_config_default(facts),
        _sig_security(facts),
        _sig_new_model(facts),
        _sig_kernel(facts),
        _sig_revert(facts),
        _sig_dependency(facts),
        _sig_user_impact(facts),
        _sig_non_runtime(facts),
        _sig_mechanical(facts),
    ]
    return [s for s in found if s is not None]


def _sig_public_api(facts: Facts) -> Signal | None:
    candidates = [f for f, k in facts.meaningful() if k in (PathKind.SOURCE, PathKind.CONFIG)]
    api = _matching(_API_PATH, candidates)
    paths = [
        f.path
        for f in candidates
        if (f.path.lower() in api or _is_package_init(f.path)) and not _comments_only(facts.diffs.get(f.path))
    ]
    return Signal("public_api", 0, tuple(paths)) if paths else None


def _sig_kernel(facts: Facts) -> Signal | None:
    paths = [p for p in facts.kernels if not _comments_only(facts.diffs.get(p))]
    return Signal("kernel", 1, tuple(paths)) if paths else None


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
        for f, k in facts.meaningful()
        if f.status == "added"
        and k == PathKind.SOURCE
        and not f.path.endswith("__init__.py")
        and set(f.path.lower().split("/")[:-1]) & _MODEL_DIRS
    ]
    return Signal("new_model", 0, tuple(paths)) if paths else None


def _sig_revert(facts: Facts) -> Signal | None:
    return Signal("revert", 1) if type_from_revert(facts) else None


def _sig_non_runtime(facts: Facts) -> Signal | None:
    kinds = {k for _, k in facts.meaningful()}
    return Signal("non_runtime", -1) if kinds and kinds <= NON_RUNTIME else None


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
    changed: list[str] = []
    for f, k in facts.meaningful():
        diff = facts.diffs.get(f.path)
        if k in (PathKind.SOURCE, PathKind.CONFIG) and diff is not None:
            changed.extend(_changed_defaults(diff, _is_config_module(f.path, k)))
    names = tuple(dict.fromkeys(changed))
    return Signal("config_default", 1, names) if names else None


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
            if old != new:
                names.append(f"{key}: {old} → {new}" if key != "default" else f"default {old} → {new}")
                break
    return names


# -- dependency versions ----------------------------------------------------------------------

# A dependency line's package name: "torch==2.9", "mistral_common[image] >= 1.8", '"react": "^18"',
# 'serde = "1.0"', "github.com/x/y v1.2.3", "gem 'rails', '~> 7.0'".
_REQ_NAME = re.compile(
    r"^\s*(?:gem\s+|require\s+)?[\"']?(@?[A-Za-z0-9][\w.\-/@]*)(?:\[[^\]]*\])?[\"']?"
    r"\s*(?:==|>=|<=|~=|!=|===|>|<|=|:|\s+v?\d|,)"
)


# Manifest keys that carry a version but are not dependencies (the project's own version, ...).
_NOT_PACKAGES = frozenset(
    {"version", "name", "description", "license", "edition", "rust-version", "requires-python", "go"}
    | {"toolchain", "module", "authors", "homepage", "repository", "main", "types", "private", "engines"}
)


def _sig_dependency(facts: Facts) -> Signal | None:
    names: list[str] = []
    for f in facts.files_of(PathKind.DEPENDENCY_MANIFEST):
        diff = facts.diffs.get(f.path)
        names.extend(_version_changes(diff) if diff else [])
    found = tuple(dict.fromkeys(names))
    return Signal("dependency", 1, found) if found else None


def _version_changes(diff: Diff) -> list[str]:
    removed: dict[str, str] = {}
    added: dict[str, str] = {}
    for sign, lines in (("-", diff.removed), ("+", diff.added)):
        for line in lines.split("\n"):
            _note_requirement(line, removed if sign == "-" else added)
    return [
        _version_change(name, old, added[name])
        for name, old in removed.items()
        if added.get(name, old) != old
    ]


def _note_requirement(line: str, side: dict[str, str]) -> None:
    text = line.split("#", 1)[0].strip()
    m = _REQ_NAME.match(text)
    if not m or not re.search(r"\d", text):
        return
    name = m.group(1).lower().replace("_", "-")
    if name not in _NOT_PACKAGES:
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


# A fix whose title names a failure users see: a crash, a hang, lost or wrong results, a slowdown.
_FIXES = re.compile(r"\b(?:fix(?:es|ed|ing)?|bug\s*fix|hot\s*fix|resolve[sd]?)\b", re.IGNORECASE)
_USER_IMPACT = re.compile(
    r"\b(?:crash(?:es|ed|ing)?|hangs?|hanging|deadlocks?|data\s+(?:loss|corruption)|corrupt(?:s|ed|ion)?"
    r"|memory\s+leaks?|leaks?\s+memory|oom|out\s+of\s+memory|segfaults?|segmentation\s+fault"
    r"|degrad(?:es|ed|ing|ation)|(?:throughput|latency|performance)\s+(?:drop|regression|loss)"
    r"|race\s+condition|wrong\s+(?:results?|outputs?|answers?)|incorrect\s+(?:results?|outputs?)"
    r"|RuntimeError|panics?)\b",
    re.IGNORECASE,
)


def _sig_user_impact(facts: Facts) -> Signal | None:
    title = facts.commit.title
    if "bugfix" not in facts.tags and not _FIXES.search(title):
        return None
    kinds = {k for _, k in facts.meaningful()}
    if not kinds or kinds <= NON_RUNTIME:
        return None
    found = tuple(dict.fromkeys(m.group(0).lower() for m in _USER_IMPACT.finditer(title)))
    return Signal("user_impact", 1, found) if found else None


def _sig_security(facts: Facts) -> Signal | None:
    # Advisory ids count anywhere in the message; security words only in the title, where they
    # are a claim about the change ("no security impact" in a body is not).
    items = [m.group(0) for m in ADVISORY.finditer(facts.commit.title + "\n" + facts.body)]
    items += [m.group(0).lower() for m in SECURITY_WORDS.finditer(facts.subject)]
    source = [f for f, k in facts.meaningful() if k == PathKind.SOURCE]
    flagged = _matching(_SECURITY_PATH, source)
    items += [f.path for f in source if f.path.lower() in flagged]
    items += _risky_calls(facts)
    found = tuple(dict.fromkeys(items))
    return Signal("security", 1, found) if found else None


def _risky_calls(facts: Facts) -> list[str]:
    calls: list[str] = []
    for f, k in facts.meaningful():
        diff = facts.diffs.get(f.path)
        if k == PathKind.SOURCE and diff is not None:
            calls.extend(_risky_calls_in(diff))
    return calls


def _risky_calls_in(diff: Diff) -> list[str]:
    calls: list[str] = []
    if not _RISKY_CALLS.search(diff.added):
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
    return Signal("mechanical", -1, tuple(k for k, _ in proven.most_common()))


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
