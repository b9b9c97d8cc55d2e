"""The heuristic analyser: change type, importance and a full tier-shaped analysis without an LLM.

Everything here is derived from facts in the commit (paths, statuses, line counts, the title, the
message body without trailers, patch lines) by fixed, documented rules, so a reader can check every
statement. It is the embedded default and the fallback when an LLM call fails.

Importance rubric (RUBRIC_VERSION is part of the analysis cache key: bump it when a rule changes):

- Size prior on changed lines, not counting lockfile / generated / vendored / minified / binary
  files: <= SIZE_LOW_MAX low, <= SIZE_MEDIUM_MAX medium, else high (the reference's only rule).
- Then one tier per signal, capped at high and low:
  up:   public API surface, changed config defaults, security relevance (CVE / advisory id, security
        words in the title, security-sensitive paths, added deserialisation / eval / shell=True calls), a new
        model / backend / platform file, GPU kernel code (CUDA / Triton / csrc: hardware-dependent
        behaviour and speed, hard to review), a revert, changed dependency versions;
  down: only docs / tests / CI / examples / dev tooling; big but mechanical (formatting-only,
        annotation-only, rename-only, proven from the patches).
  Files whose changed lines are all comments raise nothing.

Change type: a revert first, then a CVE / GHSA id in the message, title tags (the most meaningful
of several wins), a conventional-commit prefix, security words, the paths when they are all of one kind, the
title's first word and keywords, weak tags ([Chore], [Model]), new source files; else `other`.

Patches are read within a budget (whole patches, most reviewable files first) so that a 3000-file
commit stays fast; what is not read is counted but not inspected. Text is built only from the
commit's facts, in Chinese or English; untrusted commit text is cut, stripped of trailers, e-mails,
mentions and Markdown constructs before use.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from analysis.labels import LANGS
from analysis.models import INSIGHT_DIMENSIONS, Analysis, ChangeType, Commit, FileChange, Importance
from analysis.paths import PathKind, classify_path, is_low_value, review_priority
from analysis.text import neutralize_mentions, one_line, strip_trailers

RUBRIC_VERSION = "h1"
SIZE_LOW_MAX = 50
SIZE_MEDIUM_MAX = 740

_TIERS = (Importance.LOW, Importance.MEDIUM, Importance.HIGH)
# Patch text scanned per signal: keeps a 3000-file commit fast; the rest is counted but not read.
_PATCH_BUDGET = 250_000
_PER_FILE_PATCH_CAP = 60_000
_MAX_AREAS = 6  # folders listed in a scope before "N other folders"
_AREA_DEPTH = 3  # folder segments that name an area

# --------------------------------------------------------------------------------------------
# Facts: everything the rules look at, computed once per commit.
# --------------------------------------------------------------------------------------------

_TAGS = re.compile(r"^\s*((?:\[[^\[\]\n]{1,60}\]\s*:?\s*)+)")
_PR_SUFFIX = re.compile(r"\s*\(#\d+\)\s*$")
_NON_RUNTIME = frozenset(
    {PathKind.DOCS, PathKind.EXAMPLE, PathKind.TESTS, PathKind.BENCHMARK, PathKind.CI, PathKind.TOOLING}
)


@dataclass(frozen=True, slots=True)
class _Area:
    name: str  # folder path, "" for the repository root
    files: int
    lines: int
    kinds: tuple[PathKind, ...]  # most common first


def _areas(files: tuple[FileChange, ...], kinds: tuple[PathKind, ...]) -> list[_Area]:
    """Folders touched (up to three segments deep: `vllm/model_executor/models`), most files first."""
    groups: dict[str, list[tuple[FileChange, PathKind]]] = {}
    for f, k in zip(files, kinds, strict=True):
        groups.setdefault(_folder(f.path, _AREA_DEPTH), []).append((f, k))
    areas = [
        _Area(name, len(members), sum(f.changes for f, _ in members), _common_kinds(k for _, k in members))
        for name, members in groups.items()
    ]
    return sorted(areas, key=lambda a: (-a.files, -a.lines, a.name))


def _folder(path: str, depth: int) -> str:
    segments = [s for s in path.replace("\\", "/").split("/") if s]
    return "/".join(segments[:-1][:depth])


def _common_kinds(kinds: Iterable[PathKind]) -> tuple[PathKind, ...]:
    return tuple(k for k, _ in Counter(kinds).most_common())


@dataclass(frozen=True, slots=True)
class _Facts:
    commit: Commit
    files: tuple[FileChange, ...]
    kinds: tuple[PathKind, ...]  # parallel to files
    tags: tuple[str, ...]  # title tags, normalised ("bugfix", "ci/build", ...)
    subject: str  # title without tags and "(#123)"
    body: str  # message body without title and trailers
    counted_lines: int  # size for the prior: commit totals minus low-value files' lines
    ignored_lines: int
    areas: tuple[_Area, ...]  # folders touched, most files first
    kernels: tuple[str, ...]  # paths of GPU / native kernel code
    by_path: dict[str, FileChange]
    diffs: dict[str, _Diff]  # patches read within the scan budget, by path

    def kinds_present(self) -> set[PathKind]:
        return set(self.kinds)

    def meaningful(self) -> Iterator[tuple[FileChange, PathKind]]:
        return ((f, k) for f, k in zip(self.files, self.kinds, strict=True) if not is_low_value(k))

    def lines_of(self, *kinds: PathKind) -> int:
        return sum(f.changes for f, k in zip(self.files, self.kinds, strict=True) if k in kinds)

    def files_of(self, *kinds: PathKind) -> list[FileChange]:
        return [f for f, k in zip(self.files, self.kinds, strict=True) if k in kinds]


def _facts(commit: Commit) -> _Facts:
    files = tuple(commit.files)
    kinds = tuple(classify_path(f.path) for f in files)
    ignored = sum(f.changes for f, k in zip(files, kinds, strict=True) if is_low_value(k))
    tags, subject = _split_title(commit.title)
    body = _body(commit.message)
    counted = max(0, commit.changed_lines - ignored)
    diffs = _read_diffs(files, kinds)
    kernels = tuple(f.path for f, k in zip(files, kinds, strict=True) if _is_kernel(f, k, diffs.get(f.path)))
    by_path = {f.path: f for f in files}
    areas = tuple(_areas(files, kinds))
    return _Facts(commit, files, kinds, tags, subject, body, counted, ignored, areas, kernels, by_path, diffs)


@dataclass(frozen=True, slots=True)
class _Diff:
    """One file's patch, split once: rules run their patterns over whole texts, which is what
    keeps them fast on huge commits."""

    text: str  # the whole patch, context lines included
    removed: str  # removed lines without their "-", newline-joined
    added: str  # added lines without their "+", newline-joined

    def changed_lines(self) -> list[str]:
        return [*self.removed.split("\n"), *self.added.split("\n")]


def _read_diffs(files: tuple[FileChange, ...], kinds: tuple[PathKind, ...]) -> dict[str, _Diff]:
    """Patches the rules may read: whole patches only, most reviewable kinds first, until the
    budget is spent. Keeps a 3000-file commit fast; unread files are counted but not inspected."""
    budget = _PATCH_BUDGET
    diffs: dict[str, _Diff] = {}
    for i in sorted(range(len(files)), key=lambda i: review_priority(kinds[i])):
        patch = files[i].patch
        if not patch or is_low_value(kinds[i]) or len(patch) > min(budget, _PER_FILE_PATCH_CAP):
            continue
        budget -= len(patch)
        diffs[files[i].path] = _split_diff(patch)
    return diffs


def _split_diff(patch: str) -> _Diff:
    # File headers ("--- a/x", "+++ b/x"), if a source left them in, come before the first hunk.
    start = patch.find("@@")
    body = patch[start:] if start >= 0 else patch
    removed = "\n".join(_REMOVED_LINE.findall(body))
    added = "\n".join(_ADDED_LINE.findall(body))
    return _Diff(patch, removed, added)


_REMOVED_LINE = re.compile(r"^-(.*)$", re.M)
_ADDED_LINE = re.compile(r"^\+(.*)$", re.M)


_GPU_EXT = (".cu", ".cuh", ".hip", ".metal", ".cl", ".ptx")
_KERNEL_DIRS = frozenset({"csrc", "triton_ops", "cuda_kernels"})
# Markers of kernel code inside a patch (its context lines included): Triton and CUDA.
_KERNEL_HINTS = ("triton", "tl.", "num_warps", "__global__", "<<<")
_KERNEL_MARKERS = re.compile(
    r"@triton\.jit|\btl\.(constexpr|load|store|program_id)\b|\bnum_warps\b|__global__|<<<"
)


def _is_kernel(f: FileChange, kind: PathKind, diff: _Diff | None) -> bool:
    if kind != PathKind.SOURCE:
        return False
    path = f.path.lower()
    if path.endswith(_GPU_EXT) or set(path.split("/")[:-1]) & _KERNEL_DIRS:
        return True
    if diff is None or not any(hint in diff.text for hint in _KERNEL_HINTS):
        return False  # a plain substring test first: far cheaper than the regex on big patches
    return bool(_KERNEL_MARKERS.search(diff.text))


def _split_title(title: str) -> tuple[tuple[str, ...], str]:
    if title == "(no message)":  # Commit.title's placeholder for an empty message
        return (), ""
    m = _TAGS.match(title)
    tags: tuple[str, ...] = ()
    rest = title
    if m:
        tags = tuple(_norm_tag(t) for t in re.findall(r"\[([^\[\]\n]+)\]", m.group(1)))
        rest = title[m.end() :]
    rest = _PR_SUFFIX.sub("", rest).strip(" :-\t")
    return tags, rest or title.strip()


def _norm_tag(tag: str) -> str:
    return re.sub(r"[\s_-]+", "", tag.lower())


def _body(message: str) -> str:
    parts = message.strip().split("\n", 1)
    if len(parts) < 2:
        return ""
    # git's own revert line is said by the summary already, more readably.
    return _REVERTS_SHA_LINE.sub("", strip_trailers(parts[1])).strip()


# --------------------------------------------------------------------------------------------
# Change type
# --------------------------------------------------------------------------------------------

# Most meaningful first: with several tags ("[ROCm][Bugfix]", "[CI/Build][BugFix]") the earliest wins.
_PRECEDENCE = (
    ChangeType.REVERT,
    ChangeType.SECURITY,
    ChangeType.BUGFIX,
    ChangeType.PERFORMANCE,
    ChangeType.FEATURE,
    ChangeType.REFACTOR,
    ChangeType.CONFIG,
    ChangeType.DEPENDENCY,
    ChangeType.TESTS,
    ChangeType.DOCS,
    ChangeType.CI_BUILD,
)


def _words(table: dict[ChangeType, str]) -> dict[str, ChangeType]:
    """{type: "word word ..."} → {word: type}: keeps the vocabularies readable."""
    return {word: change for change, words in table.items() for word in words.split()}


_STRONG_TAGS = _words(
    {
        ChangeType.REVERT: "revert reverts rollback",
        ChangeType.SECURITY: "security sec cve vuln vulnerability securityfix",
        ChangeType.BUGFIX: "bugfix bugfixes fix fixes bug hotfix bugfixing fixbug regression",
        ChangeType.PERFORMANCE: "perf performance optim optimization optimisation optimize speedup",
        ChangeType.FEATURE: "feature feat features newmodel newfeature",
        ChangeType.REFACTOR: "refactor refactoring cleanup codestyle style lint",
        ChangeType.CONFIG: "config configuration settings",
        ChangeType.DEPENDENCY: "dependency dependencies deps dep bump dependabot renovate",
        ChangeType.TESTS: "test tests testing unittest e2e",
        ChangeType.DOCS: "doc docs documentation readme typo typos",
        ChangeType.CI_BUILD: "ci build ci/build cicd release docker packaging",
    }
)
# Area-like tags that only hint at a type: used when nothing more specific is known.
_WEAK_TAGS: dict[str, ChangeType] = {
    "chore": ChangeType.REFACTOR,
    "model": ChangeType.FEATURE,
    "models": ChangeType.FEATURE,
}

_CONVENTIONAL = re.compile(r"^(?P<type>[A-Za-z]+)(?:\((?P<scope>[^)\n]*)\))?!?:\s*\S")
_CONVENTIONAL_TYPES = _words(
    {
        ChangeType.FEATURE: "feat feature",
        ChangeType.BUGFIX: "fix bugfix hotfix bug",
        ChangeType.PERFORMANCE: "perf",
        ChangeType.DOCS: "docs doc",
        ChangeType.TESTS: "test tests",
        ChangeType.CI_BUILD: "ci build",
        ChangeType.REFACTOR: "refactor style",
        ChangeType.REVERT: "revert",
        ChangeType.SECURITY: "security sec",
        ChangeType.DEPENDENCY: "deps dep",
        ChangeType.CONFIG: "config",
    }
)
_DEP_SCOPES = frozenset({"deps", "dep", "deps-dev", "dependencies", "dependency"})

_REVERT_TITLE = re.compile(r"^\s*revert(s|ed)?\b", re.IGNORECASE)
_REVERTS_SHA = re.compile(r"This reverts commit ([0-9a-f]{7,40})", re.IGNORECASE)
_REVERTS_SHA_LINE = re.compile(r"^\s*This reverts commit [0-9a-f]{7,40}\.?\s*$", re.IGNORECASE | re.MULTILINE)
_ADVISORY = re.compile(r"\b(CVE-\d{4}-\d{4,}|GHSA(?:-[0-9a-z]{4}){3})\b", re.IGNORECASE)
_SECURITY_WORDS = re.compile(
    r"\b(security|vulnerab\w*|exploit\w*|xss|csrf|ssrf|rce|privilege escalation|auth(?:entication)? bypass|"
    r"path traversal|directory traversal|arbitrary code|unsafe deseriali[sz]ation|sandbox escape)\b",
    re.IGNORECASE,
)

_FIRST_WORD_TYPES = _words(
    {
        ChangeType.BUGFIX: "fix fixes fixed fixing bugfix hotfix resolve resolves correct corrects",
        ChangeType.PERFORMANCE: "optimize optimise optimized optimizes speed speedup accelerate tune tuning",
        ChangeType.FEATURE: "add adds added adding support supports introduce introduces implement implements "
        "enable enables allow allows initial new create",
        ChangeType.REFACTOR: "refactor rename renames cleanup clean simplify simplifies remove removes delete "
        "deletes drop drops move moves reorganize restructure replace replaces consolidate deduplicate dedupe "
        "refine tidy extract unify migrate",
        ChangeType.DOCS: "document documents docs doc typo typos",
    }
)
_DEP_WORDS = frozenset(["bump", "bumps", "upgrade", "upgrades", "pin", "pins", "unpin", "downgrade"])
_KEYWORD_TYPES: tuple[tuple[re.Pattern[str], ChangeType], ...] = (
    (
        re.compile(r"\b(bug|crash\w*|regression|broken|race condition|incorrect|wrong)\b", re.I),
        ChangeType.BUGFIX,
    ),
    (
        re.compile(
            r"\b(performance|throughput|latency|faster|speed ?up|optimi[sz]\w*|memory access)\b", re.I
        ),
        ChangeType.PERFORMANCE,
    ),
    (re.compile(r"\b(refactor\w*|simplif\w*|clean ?ups?|dedup\w*|renam\w*)\b", re.I), ChangeType.REFACTOR),
)


def classify_change(commit: Commit) -> ChangeType:
    """The change type: revert, then a CVE / advisory id, title tags, a conventional-commit prefix,
    security words, what the paths say when they are all of one kind, words in the title, weak
    tags ([Chore], [Model]), new source files; `other` when nothing applies."""
    return _classify(_facts(commit))


def _classify(facts: _Facts) -> ChangeType:
    steps = (
        _type_from_revert,
        _type_from_advisory,  # a CVE fix is a security fix even when tagged [Bugfix]
        _type_from_tags,
        _type_from_prefix,
        _type_from_security_words,
        _type_from_paths,
        _type_from_words,
        _type_from_weak_tags,
        _type_from_new_files,
    )
    for step in steps:
        found = step(facts)
        if found is not None:
            return found
    return ChangeType.OTHER


def _type_from_revert(facts: _Facts) -> ChangeType | None:
    revert = _REVERT_TITLE.match(facts.commit.title) or "revert" in facts.tags
    return ChangeType.REVERT if revert or _REVERTS_SHA.search(facts.commit.message) else None


def _tag_types(tags: Iterable[str], table: dict[str, ChangeType]) -> list[ChangeType]:
    found: list[ChangeType] = []
    for tag in tags:
        if tag in table:
            found.append(table[tag])
            continue
        # "[CI/Build]" is in the table; "[Doc/Test]" or "[Perf+Fix]" are read part by part.
        found.extend(table[p] for p in re.split(r"[/+,&|]", tag) if p in table)
    return found


def _best(types: list[ChangeType]) -> ChangeType | None:
    ranked = [t for t in _PRECEDENCE if t in types]
    return ranked[0] if ranked else None


def _type_from_tags(facts: _Facts) -> ChangeType | None:
    return _best(_tag_types(facts.tags, _STRONG_TAGS))


def _type_from_advisory(facts: _Facts) -> ChangeType | None:
    return ChangeType.SECURITY if _ADVISORY.search(facts.commit.message) else None


def _type_from_prefix(facts: _Facts) -> ChangeType | None:
    m = _CONVENTIONAL.match(facts.subject)
    if not m:
        return None
    kind, scope = m.group("type").lower(), (m.group("scope") or "").strip().lower()
    if scope in _DEP_SCOPES:
        return ChangeType.DEPENDENCY
    if kind == "chore":
        return None  # chore alone says little: let the paths and words decide
    return _CONVENTIONAL_TYPES.get(kind)


def _type_from_security_words(facts: _Facts) -> ChangeType | None:
    return ChangeType.SECURITY if _SECURITY_WORDS.search(facts.subject) else None


def _type_from_paths(facts: _Facts) -> ChangeType | None:
    kinds = {k for _, k in facts.meaningful()} | (
        facts.kinds_present() & {PathKind.LOCKFILE, PathKind.VENDORED}
    )
    if not kinds:
        return None
    groups = (
        ({PathKind.DOCS, PathKind.EXAMPLE}, ChangeType.DOCS),
        ({PathKind.TESTS, PathKind.BENCHMARK}, ChangeType.TESTS),
        ({PathKind.CI, PathKind.BUILD, PathKind.TOOLING}, ChangeType.CI_BUILD),
        ({PathKind.DEPENDENCY_MANIFEST, PathKind.LOCKFILE, PathKind.VENDORED}, ChangeType.DEPENDENCY),
        ({PathKind.CONFIG}, ChangeType.CONFIG),
    )
    for group, change in groups:
        if kinds <= group:
            return change
    if kinds <= _NON_RUNTIME:
        # Mixed docs / tests / CI: the kind with the most changed lines names it.
        weights = {
            ChangeType.TESTS: facts.lines_of(PathKind.TESTS, PathKind.BENCHMARK),
            ChangeType.DOCS: facts.lines_of(PathKind.DOCS, PathKind.EXAMPLE),
            ChangeType.CI_BUILD: facts.lines_of(PathKind.CI, PathKind.TOOLING),
        }
        return max(weights, key=lambda t: weights[t])
    return None


def _type_from_words(facts: _Facts) -> ChangeType | None:
    words = re.findall(r"[a-z]+", facts.subject.lower())
    if not words:
        return None
    if words[0] in _DEP_WORDS and facts.files_of(PathKind.DEPENDENCY_MANIFEST, PathKind.LOCKFILE):
        return ChangeType.DEPENDENCY
    if words[0] in _FIRST_WORD_TYPES:
        return _FIRST_WORD_TYPES[words[0]]
    for pattern, change in _KEYWORD_TYPES:
        if pattern.search(facts.subject):
            return change
    return None


def _type_from_weak_tags(facts: _Facts) -> ChangeType | None:
    return _best(_tag_types(facts.tags, _WEAK_TAGS))


def _type_from_new_files(facts: _Facts) -> ChangeType | None:
    added_source = any(f.status == "added" and k == PathKind.SOURCE for f, k in facts.meaningful())
    return ChangeType.FEATURE if added_source else None


# --------------------------------------------------------------------------------------------
# Importance signals
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Signal:
    key: str  # public_api, config_default, security, new_model, kernel, revert, dependency, non_runtime, mechanical
    step: int  # +1 raises one tier, -1 lowers one tier
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


def _signals(facts: _Facts) -> list[_Signal]:
    found = [
        _sig_public_api(facts),
        _sig_config_default(facts),
        _sig_security(facts),
        _sig_new_model(facts),
        _sig_kernel(facts),
        _sig_revert(facts),
        _sig_dependency(facts),
        _sig_non_runtime(facts),
        _sig_mechanical(facts),
    ]
    return [s for s in found if s is not None]


def _sig_public_api(facts: _Facts) -> _Signal | None:
    candidates = [f for f, k in facts.meaningful() if k in (PathKind.SOURCE, PathKind.CONFIG)]
    api = _matching(_API_PATH, candidates)
    paths = [
        f.path
        for f in candidates
        if (f.path.lower() in api or _is_package_init(f.path)) and not _comments_only(facts.diffs.get(f.path))
    ]
    return _Signal("public_api", 1, tuple(paths)) if paths else None


def _sig_kernel(facts: _Facts) -> _Signal | None:
    paths = [p for p in facts.kernels if not _comments_only(facts.diffs.get(p))]
    return _Signal("kernel", 1, tuple(paths)) if paths else None


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


def _sig_new_model(facts: _Facts) -> _Signal | None:
    paths = [
        f.path
        for f, k in facts.meaningful()
        if f.status == "added"
        and k == PathKind.SOURCE
        and not f.path.endswith("__init__.py")
        and set(f.path.lower().split("/")[:-1]) & _MODEL_DIRS
    ]
    return _Signal("new_model", 1, tuple(paths)) if paths else None


def _sig_revert(facts: _Facts) -> _Signal | None:
    return _Signal("revert", 1) if _type_from_revert(facts) else None


def _sig_non_runtime(facts: _Facts) -> _Signal | None:
    kinds = {k for _, k in facts.meaningful()}
    return _Signal("non_runtime", -1) if kinds and kinds <= _NON_RUNTIME else None


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
        if _LITERAL.match(value.strip()):
            found.setdefault(key, []).append(value.strip())
    return found


def _sig_config_default(facts: _Facts) -> _Signal | None:
    changed: list[str] = []
    for f, k in facts.meaningful():
        diff = facts.diffs.get(f.path)
        if k in (PathKind.SOURCE, PathKind.CONFIG) and diff is not None:
            changed.extend(_changed_defaults(diff, _is_config_module(f.path, k)))
    names = tuple(dict.fromkeys(changed))
    return _Signal("config_default", 1, names) if names else None


def _changed_defaults(diff: _Diff, config_module: bool) -> list[str]:
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


def _sig_dependency(facts: _Facts) -> _Signal | None:
    names: list[str] = []
    for f in facts.files_of(PathKind.DEPENDENCY_MANIFEST):
        diff = facts.diffs.get(f.path)
        names.extend(_version_changes(diff) if diff else [])
    found = tuple(dict.fromkeys(names))
    return _Signal("dependency", 1, found) if found else None


def _version_changes(diff: _Diff) -> list[str]:
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


def _sig_security(facts: _Facts) -> _Signal | None:
    # Advisory ids count anywhere in the message; security words only in the title, where they
    # are a claim about the change ("no security impact" in a body is not).
    items = [m.group(0) for m in _ADVISORY.finditer(facts.commit.title + "\n" + facts.body)]
    items += [m.group(0).lower() for m in _SECURITY_WORDS.finditer(facts.subject)]
    source = [f for f, k in facts.meaningful() if k == PathKind.SOURCE]
    flagged = _matching(_SECURITY_PATH, source)
    items += [f.path for f in source if f.path.lower() in flagged]
    items += _risky_calls(facts)
    found = tuple(dict.fromkeys(items))
    return _Signal("security", 1, found) if found else None


def _risky_calls(facts: _Facts) -> list[str]:
    calls: list[str] = []
    for f, k in facts.meaningful():
        diff = facts.diffs.get(f.path)
        if k == PathKind.SOURCE and diff is not None:
            calls.extend(_risky_calls_in(diff))
    return calls


def _risky_calls_in(diff: _Diff) -> list[str]:
    calls: list[str] = []
    text = diff.added
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


def _sig_mechanical(facts: _Facts) -> _Signal | None:
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
    return _Signal("mechanical", -1, tuple(k for k, _ in proven.most_common()))


def _moved_files(files: list[FileChange], diffs: dict[str, _Diff]) -> set[str]:
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


def _mechanical_file(f: FileChange, diff: _Diff | None) -> str | None:
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


def _comments_only(diff: _Diff | None) -> bool:
    """True when every changed line is a comment or blank: such a change cannot alter behaviour."""
    return diff is not None and all(_COMMENT.match(line) for line in diff.changed_lines())


def _squash(text: str) -> str:
    return "".join(text.split())


def _unannotated(text: str) -> str:
    # Annotation changes often add or drop typing imports: imports do not count either.
    text = _IMPORT.sub("", text)
    return _RETURN_ANNOTATION.sub(")", _ANNOTATION.sub(r"\1", text))


# --------------------------------------------------------------------------------------------
# Rank
# --------------------------------------------------------------------------------------------


def size_prior(lines: int) -> Importance:
    """The reference generator's rule, used as our starting point."""
    if lines <= SIZE_LOW_MAX:
        return Importance.LOW
    return Importance.MEDIUM if lines <= SIZE_MEDIUM_MAX else Importance.HIGH


def counted_lines(commit: Commit) -> int:
    """Changed lines for the size prior: commit totals minus lines in low-value files."""
    return _facts(commit).counted_lines


def rank(commit: Commit, lang: str = "zh") -> tuple[Importance, str]:
    """Importance and the reason for it, naming the facts used, in the report language."""
    facts = _facts(commit)
    importance, reason, _ = _rank(facts, _lang(lang))
    return importance, reason


def _rank(facts: _Facts, lang: str) -> tuple[Importance, str, list[_Signal]]:
    prior = size_prior(facts.counted_lines)
    signals = _signals(facts)
    level = _TIERS.index(prior) + sum(s.step for s in signals)
    importance = _TIERS[max(0, min(len(_TIERS) - 1, level))]
    return importance, _reason(facts, prior, signals, lang), signals


def _lang(lang: str) -> str:
    return lang if lang in LANGS else "en"


# --------------------------------------------------------------------------------------------
# Text. Everything below only formats facts computed above.
# --------------------------------------------------------------------------------------------

_KIND_NAMES = {
    "zh": {
        PathKind.SOURCE: "源代码",
        PathKind.CONFIG: "配置",
        PathKind.TESTS: "测试",
        PathKind.DOCS: "文档",
        PathKind.CI: "CI",
        PathKind.BUILD: "构建",
        PathKind.TOOLING: "开发工具脚本",
        PathKind.DEPENDENCY_MANIFEST: "依赖清单",
        PathKind.LOCKFILE: "锁文件",
        PathKind.GENERATED: "生成文件",
        PathKind.VENDORED: "第三方代码",
        PathKind.MINIFIED: "压缩文件",
        PathKind.BINARY: "二进制文件",
        PathKind.EXAMPLE: "示例",
        PathKind.BENCHMARK: "基准测试",
    },
    "en": {
        PathKind.SOURCE: "source",
        PathKind.CONFIG: "config",
        PathKind.TESTS: "tests",
        PathKind.DOCS: "docs",
        PathKind.CI: "CI",
        PathKind.BUILD: "build",
        PathKind.TOOLING: "dev tooling",
        PathKind.DEPENDENCY_MANIFEST: "dependency manifest",
        PathKind.LOCKFILE: "lockfile",
        PathKind.GENERATED: "generated",
        PathKind.VENDORED: "vendored",
        PathKind.MINIFIED: "minified",
        PathKind.BINARY: "binary",
        PathKind.EXAMPLE: "examples",
        PathKind.BENCHMARK: "benchmarks",
    },
}

_T: dict[str, dict[str, str]] = {
    "zh": {
        "size": "共 {lines} 行变更，涉及 {files} 个文件（规模先验：{prior}）",
        "ignored": "，未计入锁文件/生成/第三方/压缩/二进制文件中的 {n} 行",
        "up": "（上调一级）",
        "down": "（下调一级）",
        "sep": "；",
        "list_sep": "、",
        "more": " 等 {total} 项",
        "public_api": "触及公共接口 {items}",
        "config_default": "修改默认值 {items}",
        "security": "涉及安全：{items}",
        "new_model": "新增模型/后端/平台文件 {items}",
        "revert": "回滚此前的提交",
        "kernel": "修改 GPU/原生内核代码 {items}",
        "dependency": "修改依赖版本：{items}",
        "non_runtime": "仅涉及文档/测试/CI/示例/开发工具",
        "mechanical": "机械性改动（{items}）",
        "mech_formatting": "仅格式",
        "mech_annotations": "仅类型注解",
        "mech_rename": "仅重命名",
        "summary": "提交“{subject}”改动了 {files} 个文件（+{add}/−{dele} 行）{where}。",
        "summary_no_files": "提交“{subject}”未列出改动的文件。",
        "where_one": "，位于 {area}",
        "where_many": "，主要位于 {areas}",
        "where_root": "，位于仓库根目录",
        "body": "提交说明：{text}",
        "reverts": "回滚 “{what}”{sha}。",
        "reverts_sha": "（提交 `{sha}`）",
        "adds": "新增 {n} 个文件",
        "deletes": "删除 {n} 个文件",
        "and": "，",
        "end": "。",
        "root": "（根目录）",
        "scope_line": "{area}：{n} 个文件（{kinds}）",
        "scope_more": "其余 {areas} 个目录：{n} 个文件",
        "truncated": "文件列表被截断：仅列出 {shown} / {total} 个文件",
        "scope_none": "提交未列出改动的文件",
        "risk_no_tests": "{lines} 行源代码变更，但没有同时修改测试文件",
        "risk_api": "公共接口变更（{items}），调用方可能受影响",
        "risk_defaults": "默认值变更（{items}），依赖旧默认值的部署行为会改变",
        "risk_deps": "依赖版本变更（{items}），需确认兼容性与安装环境",
        "risk_security": "涉及安全相关内容（{items}）",
        "risk_deleted": "删除了 {n} 个文件，引用这些文件的代码或文档可能失效",
        "risk_renamed": "重命名了 {n} 个文件，旧路径的导入或引用可能失效",
        "risk_large": "大范围改动：{lines} 行，跨 {areas} 个目录",
        "risk_kernel": "修改了内核代码（{items}），其行为和速度依赖硬件，需要在目标硬件上测试",
        "risk_new_model": "新增模型/后端文件（{items}），尚无既有用户验证",
        "risk_revert": "回滚会撤销此前的行为，后续依赖该改动的提交可能受影响",
        "risk_binary": "{n} 个二进制文件无法通过 diff 审查",
        "risk_no_patch": "{n} 个文件没有可用的 diff",
        "risk_none": "启发式规则未发现特定风险信号；共 {lines} 行变更待审查",
        "rec_review_first": "优先审查 {areas}",
        "rec_run_tests": "运行本次改动涉及的测试：{items}",
        "rec_add_tests": "本次未修改测试：为 {areas} 的改动补充或运行相应测试",
        "rec_api": "检查公共接口 {items} 的调用方与文档是否同步更新",
        "rec_defaults": "在发布说明中注明默认值变更（{items}）",
        "rec_deps": "查看 {items} 的更新日志，并重新生成环境/锁文件",
        "rec_security": "请熟悉安全的人员审查 {items}",
        "rec_kernel": "在目标硬件上运行相关内核测试与基准测试",
        "rec_revert": "确认被回滚改动之后的提交是否依赖它",
        "rec_new_model": "确认新模型/后端已注册并有测试覆盖：{items}",
        "rec_largest": "阅读改动最多的文件 {path}",
        "rec_none": "阅读该提交的完整 diff",
        "ins_arch_areas": "涉及 {areas} 个目录（{list}）",
        "ins_arch_files": "；{text}",
        "ins_arch_modify": "；仅修改已有文件，未新增或删除文件",
        "ins_arch_new_model": "；新增模型/后端文件 {items}",
        "ins_perf_claim": "提交信息提到性能相关内容：“{text}”；启发式分析无法验证该说法",
        "ins_perf_kernel": "修改了内核代码（{items}），性能影响需要基准测试确认",
        "ins_perf_none": "启发式分析无法判断：提交信息未提及性能，且未修改内核代码",
        "ins_sec": "发现安全相关信号：{items}；需人工审查",
        "ins_sec_none": "启发式检查未发现安全关键词、CVE 编号、安全相关路径或反序列化/eval 调用；更深入的判断需要模型分析",
        "ins_maint_tests": "测试文件改动 {tests} 个（{tlines} 行），源代码改动 {slines} 行",
        "ins_maint_tests_only": "测试文件改动 {tests} 个（{tlines} 行），未修改源代码",
        "ins_maint_no_tests": "源代码改动 {slines} 行，未修改测试文件",
        "ins_maint_no_source": "未修改源代码（{kinds}）",
        "ins_maint_net": "；净变化 +{add}/−{dele} 行",
        "ins_compat": "可能影响兼容性：{items}",
        "ins_compat_none": "未检测到公共接口、默认值、依赖或文件删除方面的变化；更深入的兼容性判断需要模型分析",
        "ins_res": "可能影响资源：{items}",
        "ins_res_none": "启发式分析无法判断（需要模型分析代码）",
        "res_deps": "依赖变更 {items}",
        "res_binary": "{n} 个二进制文件",
        "res_kernel": "内核代码 {items}",
        "compat_api": "公共接口 {items}",
        "compat_defaults": "默认值 {items}",
        "compat_deps": "依赖版本 {items}",
        "compat_removed": "删除 {n} 个文件",
        "compat_renamed": "重命名 {n} 个文件",
        "note": "启发式分析（未使用大模型）：内容由规则根据文件、行数和提交说明生成。",
        "note_truncated": "来源仅列出 {shown} / {total} 个文件，其余文件只计入总行数。",
        "empty_subject": "（无提交说明）",
    },
    "en": {
        "size": "{lines} changed lines in {files} files (size prior: {prior})",
        "ignored": ", not counting {n} lines in lockfile/generated/vendored/minified/binary files",
        "up": " (raises one tier)",
        "down": " (lowers one tier)",
        "sep": "; ",
        "list_sep": ", ",
        "more": " and {rest} more",
        "public_api": "touches public API {items}",
        "config_default": "changes default values {items}",
        "security": "security-relevant: {items}",
        "new_model": "adds new model/backend/platform files {items}",
        "revert": "reverts an earlier commit",
        "kernel": "changes GPU/native kernel code {items}",
        "dependency": "changes dependency versions: {items}",
        "non_runtime": "only docs/tests/CI/examples/dev tooling",
        "mechanical": "mechanical change ({items})",
        "mech_formatting": "formatting only",
        "mech_annotations": "type annotations only",
        "mech_rename": "renames only",
        "summary": 'Commit "{subject}" changes {files} files (+{add}/−{dele} lines){where}.',
        "summary_no_files": 'Commit "{subject}" lists no changed files.',
        "where_one": " in {area}",
        "where_many": " mainly in {areas}",
        "where_root": " at the repository root",
        "body": "The message says: {text}",
        "reverts": 'Reverts "{what}"{sha}.',
        "reverts_sha": " (commit `{sha}`)",
        "adds": "Adds {n} files",
        "deletes": "deletes {n} files",
        "and": " and ",
        "end": ".",
        "root": "(root)",
        "scope_line": "{area}: {n} files ({kinds})",
        "scope_more": "{areas} other folders: {n} files",
        "truncated": "File list capped: {shown} of {total} files listed",
        "scope_none": "The commit lists no changed files",
        "risk_no_tests": "{lines} lines of source changed with no test files changed alongside",
        "risk_api": "Public API changed ({items}): callers may be affected",
        "risk_defaults": "Default values changed ({items}): deployments relying on the old defaults behave differently",
        "risk_deps": "Dependency versions changed ({items}): check compatibility and installed environments",
        "risk_security": "Security-relevant content ({items})",
        "risk_deleted": "Deletes {n} files: code or docs that refer to deleted files may break",
        "risk_renamed": "Renames {n} files: imports or links to old paths may break",
        "risk_large": "Large change: {lines} lines across {areas} folders",
        "risk_kernel": "Kernel code changed ({items}): behaviour and speed depend on the hardware; "
        "test on the target hardware",
        "risk_new_model": "New model/backend files ({items}) have no existing users yet",
        "risk_revert": "A revert undoes earlier behaviour: later commits that relied on it may be affected",
        "risk_binary": "{n} binary files cannot be reviewed as a diff",
        "risk_no_patch": "No diff available for {n} files",
        "risk_none": "No specific risk signal found by the heuristic rules; {lines} changed lines to review",
        "rec_review_first": "Review {areas} first",
        "rec_run_tests": "Run the tests this commit touches: {items}",
        "rec_add_tests": "No tests changed: add or run tests covering {areas}",
        "rec_api": "Check that callers and docs of the public API {items} were updated",
        "rec_defaults": "Mention the default changes ({items}) in the release notes",
        "rec_deps": "Read the changelogs of {items} and regenerate environments/lockfiles",
        "rec_security": "Have someone familiar with security review {items}",
        "rec_kernel": "Run the related kernel tests and benchmarks on the target hardware",
        "rec_revert": "Check whether later commits depended on the reverted change",
        "rec_new_model": "Check that the new model/backend is registered and covered by tests: {items}",
        "rec_largest": "Read the most-changed file {path}",
        "rec_none": "Read the commit's full diff",
        "ins_arch_areas": "Touches {areas} folders ({list})",
        "ins_arch_files": "; {text}",
        "ins_arch_modify": "; modifies existing files only, none added or deleted",
        "ins_arch_new_model": "; new model/backend files {items}",
        "ins_perf_claim": 'The message makes a performance-related statement: "{text}"; the heuristic cannot verify it',
        "ins_perf_kernel": "Changes kernel code ({items}): the performance effect needs a benchmark",
        "ins_perf_none": "Not assessable without a model: no performance statement in the message and no kernel code",
        "ins_sec": "Security-relevant signals: {items}; needs a human review",
        "ins_sec_none": "The heuristic checks found no security keyword, CVE id, security-sensitive path or "
        "deserialisation/eval call; a deeper judgement needs a model",
        "ins_maint_tests": "{tests} test files changed ({tlines} lines) against {slines} lines of source",
        "ins_maint_tests_only": "{tests} test files changed ({tlines} lines), no source changed",
        "ins_maint_no_tests": "{slines} lines of source changed, no test files changed",
        "ins_maint_no_source": "No source changed ({kinds})",
        "ins_maint_net": "; net +{add}/−{dele} lines",
        "ins_compat": "May affect compatibility: {items}",
        "ins_compat_none": "No public API, default value, dependency or file removal change detected; "
        "a deeper compatibility judgement needs a model",
        "ins_res": "May affect resources: {items}",
        "ins_res_none": "Not assessable without a model",
        "res_deps": "dependency changes {items}",
        "res_binary": "{n} binary files",
        "res_kernel": "kernel code {items}",
        "compat_api": "public API {items}",
        "compat_defaults": "default values {items}",
        "compat_deps": "dependency versions {items}",
        "compat_removed": "deletes {n} files",
        "compat_renamed": "renames {n} files",
        "note": "Heuristic analysis (no LLM): derived by rules from the files, line counts and commit message.",
        "note_truncated": "The source listed {shown} of {total} files; the rest count in the totals only.",
        "empty_subject": "(no message)",
    },
}

_TIER_NAMES = {
    "zh": {Importance.HIGH: "高", Importance.MEDIUM: "中", Importance.LOW: "低"},
    "en": {Importance.HIGH: "high", Importance.MEDIUM: "medium", Importance.LOW: "low"},
}
_PERF_CLAIM = re.compile(
    r"\b(perf|performance|throughput|latency|faster|slower|speed ?up|optimi[sz]\w*|tpot|ttft|memory usage)\b",
    re.I,
)
_MAX_ITEMS = 3


_ONE = re.compile(r"(?<![\d,.+/−-])1 (file|line|folder|changed line|test file|binary file|other folder)s\b")


def _t(lang: str, key: str, **fmt: object) -> str:
    text = _T[lang][key]
    text = text.format(**fmt) if fmt else text
    # English plurals: "1 files" → "1 file". "(+1/−1 lines)" stays: it counts two lines.
    return _ONE.sub(r"1 \1", text) if lang == "en" else text


def _num(n: int) -> str:
    return f"{n:,}"


def _code(text: str) -> str:
    """An identifier or path as a code span. Paths and names come from the commit too: no backticks
    (they would break the span) and no mentions."""
    return "`" + neutralize_mentions(one_line(text).replace("`", "'")) + "`"


def _items(lang: str, items: Iterable[str]) -> str:
    """Up to three facts as code spans, then how many more there are."""
    values = list(items)
    shown = [_code(v) for v in values[:_MAX_ITEMS]]
    if len(values) > _MAX_ITEMS:
        return _t(lang, "list_sep").join(shown) + _t(
            lang, "more", total=_num(len(values)), rest=_num(len(values) - _MAX_ITEMS)
        )
    return _t(lang, "list_sep").join(shown)


def _untrusted(text: str, limit: int) -> str:
    """Commit text as plain prose: one line, no trailers or e-mails, no mentions, no Markdown
    constructs (links, headings, HTML), balanced backticks. Over `limit`, whole sentences are kept
    (at least the first, however long): we quote, we never cut mid-sentence."""
    text = strip_trailers(text)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"!?\[([^\]\n]*)\]\([^)\n]*\)", r"\1", text)  # [label](url) → label
    text = re.sub(r"https?://\S+", "", text)
    # Line-level Markdown (headings, quotes, bullets, checkboxes) would be noise once joined.
    text = re.sub(r"^[ \t]*(#{1,6}|>|[-*+]|\d+[.)])[ \t]+(\[[ xX]\][ \t]+)?", "", text, flags=re.M)
    text = neutralize_mentions(one_line(text))
    if text.count("`") % 2:
        text = text.replace("`", "'")
    if len(text) > limit:
        text = _whole_sentences(text, limit)
    return text.strip()


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


def _whole_sentences(text: str, limit: int) -> str:
    sentences = _SENTENCE_END.split(text)
    kept = [sentences[0]]
    for sentence in sentences[1:]:
        if len(" ".join([*kept, sentence])) > limit:
            break
        kept.append(sentence)
    result = " ".join(kept)
    return result.replace("`", "'") if result.count("`") % 2 else result


def _join_clauses(parts: list[str], lang: str) -> str:
    """Clauses joined by "; ": in English the later ones start lower-case, mid-sentence."""
    if lang == "en":
        parts = parts[:1] + [p[:1].lower() + p[1:] for p in parts[1:]]
    return _t(lang, "sep").join(parts)


def _reason(facts: _Facts, prior: Importance, signals: list[_Signal], lang: str) -> str:
    parts = [
        _t(
            lang,
            "size",
            lines=_num(facts.counted_lines),
            files=_num(facts.commit.file_count),
            prior=_TIER_NAMES[lang][prior],
        )
    ]
    if facts.ignored_lines:
        parts[0] += _t(lang, "ignored", n=_num(facts.ignored_lines))
    parts.extend(_signal_text(s, lang) + _t(lang, "up" if s.step > 0 else "down") for s in signals)
    return _t(lang, "sep").join(parts)


def _signal_text(signal: _Signal, lang: str) -> str:
    if signal.key == "mechanical":
        names = [_t(lang, f"mech_{k}") for k in signal.items]
        return _t(lang, "mechanical", items=_t(lang, "list_sep").join(names))
    return _t(lang, signal.key, items=_items(lang, signal.items))


# -- areas ------------------------------------------------------------------------------------


def _area_name(area: _Area, lang: str) -> str:
    return _code(area.name) if area.name else _t(lang, "root")


# -- summary ----------------------------------------------------------------------------------


def _summary(facts: _Facts, change: ChangeType, importance: Importance, lang: str) -> str:
    sentences = [_files_sentence(facts, lang)]
    if change == ChangeType.REVERT:
        sentences.append(_revert_sentence(facts, lang))
    if importance == Importance.HIGH:
        sentences.append(_added_deleted(facts, lang))
    if importance != Importance.LOW:
        body = _untrusted(facts.body, 240)
        sentences.append(_t(lang, "body", text=body) if body else "")
    return (" " if lang == "en" else "").join(s for s in sentences if s)


def _added_deleted(facts: _Facts, lang: str) -> str:
    parts = [
        _t(lang, key, n=_num(n))
        for key, n in (("adds", _count_status(facts, "added")), ("deletes", _count_status(facts, "removed")))
        if n
    ]
    if not parts:
        return ""
    text = _t(lang, "and").join(parts)
    return text[0].upper() + text[1:] + _t(lang, "end")


def _revert_sentence(facts: _Facts, lang: str) -> str:
    m = re.match(r'^\s*revert(?:s|ed)?\s*:?\s*"(.+)"\s*$', _PR_SUFFIX.sub("", facts.commit.title), re.I)
    what = _untrusted(m.group(1) if m else facts.subject, 160)
    sha = _REVERTS_SHA.search(facts.commit.message)
    sha_text = _t(lang, "reverts_sha", sha=sha.group(1)[:10]) if sha else ""
    return _t(lang, "reverts", what=what, sha=sha_text)


def _files_sentence(facts: _Facts, lang: str) -> str:
    subject = _untrusted(facts.subject, 200) or _t(lang, "empty_subject")
    if not facts.commit.file_count:
        return _t(lang, "summary_no_files", subject=subject)
    areas = facts.areas
    if not areas:
        where = ""
    elif len(areas) == 1:
        where = _t(lang, "where_one", area=_code(areas[0].name)) if areas[0].name else _t(lang, "where_root")
    else:
        names = _t(lang, "list_sep").join(_area_name(a, lang) for a in areas[:2])
        where = _t(lang, "where_many", areas=names)
    return _t(
        lang,
        "summary",
        subject=subject,
        files=_num(facts.commit.file_count),
        add=_num(facts.commit.total_additions),
        dele=_num(facts.commit.total_deletions),
        where=where,
    )


def _count_status(facts: _Facts, status: str) -> int:
    return sum(1 for f in facts.files if f.status == status)


# -- scope, risks, recommendations --------------------------------------------------------------


def _scope(facts: _Facts, lang: str) -> list[str]:
    areas = facts.areas
    lines = [
        _t(
            lang,
            "scope_line",
            area=_area_name(a, lang),
            n=_num(a.files),
            kinds=_t(lang, "list_sep").join(_KIND_NAMES[lang][k] for k in a.kinds),
        )
        for a in areas[:_MAX_AREAS]
    ]
    rest = areas[_MAX_AREAS:]
    if rest:
        lines.append(_t(lang, "scope_more", areas=_num(len(rest)), n=_num(sum(a.files for a in rest))))
    if facts.commit.files_truncated:
        lines.append(_t(lang, "truncated", shown=_num(len(facts.files)), total=_num(facts.commit.file_count)))
    return lines or [_t(lang, "scope_none")]


def _by_key(signals: list[_Signal]) -> dict[str, _Signal]:
    return {s.key: s for s in signals}


def _risks(facts: _Facts, signals: list[_Signal], lang: str) -> list[str]:
    sig = _by_key(signals)
    risks: list[str] = []
    source_lines = facts.lines_of(PathKind.SOURCE)
    if source_lines >= 20 and not facts.files_of(PathKind.TESTS):
        risks.append(_t(lang, "risk_no_tests", lines=_num(source_lines)))
    for key, text_key in (
        ("public_api", "risk_api"),
        ("config_default", "risk_defaults"),
        ("dependency", "risk_deps"),
        ("security", "risk_security"),
        ("new_model", "risk_new_model"),
    ):
        if key in sig:
            risks.append(_t(lang, text_key, items=_items(lang, sig[key].items)))
    if "revert" in sig:
        risks.append(_t(lang, "risk_revert"))
    risks.extend(_file_risks(facts, sig, lang))
    if not risks:
        risks.append(_t(lang, "risk_none", lines=_num(facts.counted_lines)))
    return risks


def _file_risks(facts: _Facts, sig: dict[str, _Signal], lang: str) -> list[str]:
    risks: list[str] = []
    if "kernel" in sig:
        risks.append(_t(lang, "risk_kernel", items=_items(lang, sig["kernel"].items)))
    for status, key in (("removed", "risk_deleted"), ("renamed", "risk_renamed")):
        n = _count_status(facts, status)
        if n:
            risks.append(_t(lang, key, n=_num(n)))
    areas = facts.areas
    if facts.counted_lines > SIZE_MEDIUM_MAX and len(areas) >= 3:
        risks.append(_t(lang, "risk_large", lines=_num(facts.counted_lines), areas=_num(len(areas))))
    binary = len(facts.files_of(PathKind.BINARY))
    if binary:
        risks.append(_t(lang, "risk_binary", n=_num(binary)))
    no_patch = sum(1 for f, k in facts.meaningful() if f.patch is None and f.changes > 0)
    if no_patch:
        risks.append(_t(lang, "risk_no_patch", n=_num(no_patch)))
    return risks


def _recommendations(facts: _Facts, signals: list[_Signal], lang: str) -> list[str]:
    sig = _by_key(signals)
    recs: list[str] = []
    review = _review_areas(facts)
    if review:
        recs.append(_t(lang, "rec_review_first", areas=_items(lang, review)))
    test_dirs = list(
        dict.fromkeys(f.path.rsplit("/", 1)[0] if "/" in f.path else f.path for f in _tests(facts))
    )
    if test_dirs:
        recs.append(_t(lang, "rec_run_tests", items=_items(lang, test_dirs)))
    elif facts.lines_of(PathKind.SOURCE):
        recs.append(_t(lang, "rec_add_tests", areas=_items(lang, review or ["."])))
    for key, text_key in (
        ("public_api", "rec_api"),
        ("config_default", "rec_defaults"),
        ("dependency", "rec_deps"),
        ("new_model", "rec_new_model"),
    ):
        if key in sig:
            recs.append(_t(lang, text_key, items=_items(lang, sig[key].items)))
    if "security" in sig:
        # Review files, not CVE ids: the flagged paths, else the folders with runtime changes.
        paths = [i for i in sig["security"].items if i in facts.by_path] or review or ["."]
        recs.append(_t(lang, "rec_security", items=_items(lang, paths)))
    if "revert" in sig:
        recs.append(_t(lang, "rec_revert"))
    if "kernel" in sig:
        recs.append(_t(lang, "rec_kernel"))
    if not recs and facts.files:
        largest = max(facts.files, key=lambda f: f.changes)
        recs.append(_t(lang, "rec_largest", path=_code(largest.path)))
    return recs or [_t(lang, "rec_none")]


def _tests(facts: _Facts) -> list[FileChange]:
    return [f for f in facts.files_of(PathKind.TESTS) if f.status != "removed"]


def _review_areas(facts: _Facts) -> list[str]:
    """Folders with source or config changes, most changed lines first: where a reviewer starts."""
    runtime = {PathKind.SOURCE, PathKind.CONFIG, PathKind.DEPENDENCY_MANIFEST, PathKind.BUILD}
    lines: Counter[str] = Counter()
    for f, k in facts.meaningful():
        if k in runtime:
            lines[_folder(f.path, _AREA_DEPTH) or f.path] += f.changes + 1
    return [name for name, _ in lines.most_common(_MAX_ITEMS)]


# -- insights (high tier) ---------------------------------------------------------------------


def _insights(facts: _Facts, signals: list[_Signal], lang: str) -> dict[str, str]:
    sig = _by_key(signals)
    builders = {
        "architecture": _ins_architecture,
        "performance": _ins_performance,
        "security": _ins_security,
        "maintainability": _ins_maintainability,
        "compatibility": _ins_compatibility,
        "resources": _ins_resources,
    }
    return {dim: builders[dim](facts, sig, lang) for dim in INSIGHT_DIMENSIONS if dim in builders}


def _ins_architecture(facts: _Facts, sig: dict[str, _Signal], lang: str) -> str:
    areas = facts.areas
    names = [a.name or "." for a in areas]
    text = _t(lang, "ins_arch_areas", areas=_num(len(areas)), list=_items(lang, names))
    changed_set = _added_deleted(facts, lang).rstrip("。.")
    if changed_set:
        text += _t(lang, "ins_arch_files", text=changed_set[0].lower() + changed_set[1:])
    elif facts.files:
        text += _t(lang, "ins_arch_modify")
    if "new_model" in sig:
        text += _t(lang, "ins_arch_new_model", items=_items(lang, sig["new_model"].items))
    return text


def _ins_performance(facts: _Facts, sig: dict[str, _Signal], lang: str) -> str:
    claim = _perf_claim(facts)
    parts = []
    if claim:
        parts.append(_t(lang, "ins_perf_claim", text=claim))
    if "kernel" in sig:
        parts.append(_t(lang, "ins_perf_kernel", items=_items(lang, sig["kernel"].items)))
    return _join_clauses(parts, lang) if parts else _t(lang, "ins_perf_none")


def _perf_claim(facts: _Facts) -> str:
    """The first title or body sentence that talks about performance, quoted as the author's claim."""
    for sentence in re.split(r"(?<=[.!?。])\s+|\n+", facts.subject + "\n" + facts.body):
        if _PERF_CLAIM.search(sentence):
            return _untrusted(sentence, 160)
    return ""


def _ins_security(facts: _Facts, sig: dict[str, _Signal], lang: str) -> str:
    if "security" in sig:
        return _t(lang, "ins_sec", items=_items(lang, sig["security"].items))
    return _t(lang, "ins_sec_none")


def _ins_maintainability(facts: _Facts, sig: dict[str, _Signal], lang: str) -> str:
    tests = facts.files_of(PathKind.TESTS)
    source_lines = facts.lines_of(PathKind.SOURCE)
    if tests:
        text = _t(
            lang,
            "ins_maint_tests" if source_lines else "ins_maint_tests_only",
            tests=_num(len(tests)),
            tlines=_num(sum(f.changes for f in tests)),
            slines=_num(source_lines),
        )
    elif source_lines:
        text = _t(lang, "ins_maint_no_tests", slines=_num(source_lines))
    else:
        kinds = _common_kinds(facts.kinds)
        text = _t(
            lang, "ins_maint_no_source", kinds=_t(lang, "list_sep").join(_KIND_NAMES[lang][k] for k in kinds)
        )
    text += _t(
        lang, "ins_maint_net", add=_num(facts.commit.total_additions), dele=_num(facts.commit.total_deletions)
    )
    if "mechanical" in sig:
        text += _t(lang, "sep") + _signal_text(sig["mechanical"], lang)
    return text


def _ins_compatibility(facts: _Facts, sig: dict[str, _Signal], lang: str) -> str:
    items = [
        _t(lang, text_key, items=_items(lang, sig[key].items))
        for key, text_key in (
            ("public_api", "compat_api"),
            ("config_default", "compat_defaults"),
            ("dependency", "compat_deps"),
        )
        if key in sig
    ]
    for status, key in (("removed", "compat_removed"), ("renamed", "compat_renamed")):
        n = _count_status(facts, status)
        if n:
            items.append(_t(lang, key, n=_num(n)))
    if not items:
        return _t(lang, "ins_compat_none")
    return _t(lang, "ins_compat", items=_t(lang, "sep").join(items))


def _ins_resources(facts: _Facts, sig: dict[str, _Signal], lang: str) -> str:
    items = []
    if "dependency" in sig:
        items.append(_t(lang, "res_deps", items=_items(lang, sig["dependency"].items)))
    binary = len(facts.files_of(PathKind.BINARY))
    if binary:
        items.append(_t(lang, "res_binary", n=_num(binary)))
    if "kernel" in sig:
        items.append(_t(lang, "res_kernel", items=_items(lang, sig["kernel"].items)))
    if not items:
        return _t(lang, "ins_res_none")
    return _t(lang, "ins_res", items=_t(lang, "sep").join(items))


# --------------------------------------------------------------------------------------------
# Analyse
# --------------------------------------------------------------------------------------------


def analyze(commit: Commit, lang: str = "zh", tier: Importance | None = None) -> Analysis:
    """A complete analysis for the commit's tier (DESIGN.md §3), built only from its facts. `tier`
    overrides the rubric's rank (an LLM ranked the commit but could not analyse it): the fields of
    that tier are filled all the same."""
    lang = _lang(lang)
    facts = _facts(commit)
    change = _classify(facts)
    importance, reason, signals = _rank(facts, lang)
    importance = tier or importance
    notes = [_t(lang, "note")]
    if commit.files_truncated:
        notes.append(_t(lang, "note_truncated", shown=_num(len(facts.files)), total=_num(commit.file_count)))
    analysis = Analysis(
        sha=commit.sha,
        importance=importance,
        importance_reason=reason,
        change_type=change,
        summary=_summary(facts, change, importance, lang),
        analyzer="heuristic",
        model="heuristic",
        prompt_version=RUBRIC_VERSION,
        lang=lang,
        notes=notes,
    )
    if importance != Importance.LOW:
        analysis.scope = _scope(facts, lang)
        analysis.risks = _risks(facts, signals, lang)
        analysis.recommendations = _recommendations(facts, signals, lang)
    if importance == Importance.HIGH:
        analysis.insights = _insights(facts, signals, lang)
    return analysis


__all__ = [
    "RUBRIC_VERSION",
    "SIZE_LOW_MAX",
    "SIZE_MEDIUM_MAX",
    "analyze",
    "classify_change",
    "counted_lines",
    "rank",
    "size_prior",
]
