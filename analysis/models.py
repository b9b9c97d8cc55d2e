"""Domain models shared by every layer: commits in, analyses and digests out, with the surface
changes a commit makes and the follow-ups a day holds.

Plain data, no I/O. Commits are dataclasses (many of them, read-only); analyses are pydantic
models because they are stored as JSON and double as the validated shape of LLM output.

Over 400 lines because it is the domain's vocabulary: the models every package shares, kept in one module so
none of them imports a view.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from analysis.titles import PR_DIGITS, merge_pr, message_title

PR_IN_TITLE = re.compile(rf"\(#({PR_DIGITS})\)\s*$")


# -- what a change does to its users (DESIGN.md §3c) -------------------------------------------
# The public names, parameters, defaults, options, switches and routes a commit adds, removes or changes,
# found by analysis/surface parsing each touched file before and after. A commit whose files were not read
# has `Commit.surface is None`; one read with nothing user-facing found has an empty tuple.


class SurfaceKind(StrEnum):
    ADDED = "added"  # a public function, class, method or constant
    REMOVED = "removed"
    RENAMED = "renamed"
    # A Python module users import (`from pkg.util import x`) deleted, or moved to another import path; a
    # package moved is one fact, its modules implied. `name`: the module (after, for a rename).
    MODULE_REMOVED = "module_removed"
    MODULE_RENAMED = "module_renamed"
    PARAM_ADDED = "param_added"
    PARAM_REMOVED = "param_removed"
    PARAM_RENAMED = "param_renamed"
    PARAM_REORDERED = "param_reordered"  # also: a positional parameter inserted before existing ones
    PARAM_REQUIRED = "param_required"  # a new parameter without a default, or a default taken away
    # A method added to an existing public class as abstract (`@abstractmethod`, or a body that only raises
    # NotImplementedError): every subclass users wrote must now implement it.
    ABSTRACT_ADDED = "abstract_added"
    DEFAULT_CHANGED = "default_changed"  # a value that really changed, not the same value retyped
    FIELD_ADDED = "field_added"  # a configuration field: dataclass, pydantic model, TypedDict
    FIELD_REMOVED = "field_removed"
    FIELD_RENAMED = "field_renamed"
    OPTION_ADDED = "option_added"  # a command-line option (argparse, click, typer)
    OPTION_REMOVED = "option_removed"
    SUPPORT_ADDED = "support_added"  # a runtime version newly supported (a classifier added, a cap lifted)
    OPTION_RENAMED = "option_renamed"
    ENV_ADDED = "env_added"  # an environment variable read
    ENV_REMOVED = "env_removed"
    ENV_RENAMED = "env_renamed"
    DEPRECATION = "deprecation"  # a deprecation warning added
    SWITCH_FLIPPED = "switch_flipped"  # enable_* / *_disabled flipped, a guard that now lets a path run
    ROUTE_ADDED = "route_added"  # an HTTP route
    ROUTE_REMOVED = "route_removed"
    # A name users select registered with a registry (`register_model("foo", Foo)`, `BACKENDS = {"foo": Foo}`:
    # analysis/surface/registrations.py). `name`: the registry and the key, `register_model("foo")`.
    REGISTRATION_ADDED = "registration_added"
    REGISTRATION_REMOVED = "registration_removed"
    RAISES = "raises"  # an exception newly raised on a public path
    # A public class no longer derives from a base it had (replaced or dropped): `isinstance` checks and
    # `except` clauses match it differently. `old`/`new`: the bases as written.
    BASES_CHANGED = "bases_changed"
    SUPPORT_DROPPED = "support_dropped"  # a supported runtime version dropped (requires-python, classifiers)
    # What the distribution depends on (analysis/surface/requirements.py): runtime and optional requirements only,
    # never a tool section, a dev group or a coverage list. Neither breaking nor a feature by itself.
    DEPENDENCY_ADDED = "dependency_added"
    DEPENDENCY_REMOVED = "dependency_removed"
    DEPENDENCY_CHANGED = "dependency_changed"  # its version range changed
    # A runtime requirement moved to an optional extra: the default install no longer brings it (`new`: the extra).
    DEPENDENCY_OPTIONAL = "dependency_optional"
    # A runtime requirement removed outright: `pip install pkg` stops bringing it, as DEPENDENCY_OPTIONAL does,
    # and no extra brings it back; code and deployments that got it with this package fail to import it.
    DEPENDENCY_DROPPED = "dependency_dropped"
    # An item the commit adds to its release notes, under the heading the notes' text places it
    # (analysis/surface/release_entries.py): what its author says, not what its code does. `name`: the
    # item's category, `new`: its text (shortened, untrusted). Kept out of Commit.surface (release_entries).
    RELEASE_ENTRY = "release_entry"


# Kinds that break the callers of a name in the code (a function, class, method or constant, its parameters, a
# module) unless an alias keeps the old name working.
CODE_BREAKING_KINDS = frozenset(
    {
        SurfaceKind.REMOVED,
        SurfaceKind.RENAMED,
        SurfaceKind.MODULE_REMOVED,
        SurfaceKind.MODULE_RENAMED,
        SurfaceKind.PARAM_REMOVED,
        SurfaceKind.PARAM_RENAMED,
        SurfaceKind.PARAM_REORDERED,
        SurfaceKind.PARAM_REQUIRED,
        SurfaceKind.ABSTRACT_ADDED,
    }
)
# Kinds that break a user's code or command line unless an alias keeps the old name working.
BREAKING_KINDS = CODE_BREAKING_KINDS | frozenset(
    {
        SurfaceKind.FIELD_REMOVED,
        SurfaceKind.FIELD_RENAMED,
        SurfaceKind.OPTION_REMOVED,
        SurfaceKind.OPTION_RENAMED,
        SurfaceKind.ENV_REMOVED,
        SurfaceKind.ENV_RENAMED,
        SurfaceKind.ROUTE_REMOVED,
        SurfaceKind.REGISTRATION_REMOVED,
        SurfaceKind.SUPPORT_DROPPED,
        SurfaceKind.DEPENDENCY_OPTIONAL,
        SurfaceKind.DEPENDENCY_DROPPED,
    }
)
# Breaking kinds no alias could soften: what users can install, not a name.
UNALIASED_KINDS = frozenset(
    {
        SurfaceKind.SUPPORT_DROPPED,
        SurfaceKind.DEPENDENCY_OPTIONAL,
        SurfaceKind.DEPENDENCY_DROPPED,
        SurfaceKind.ABSTRACT_ADDED,
    }
)
# Kinds that give users something new.
FEATURE_KINDS = frozenset(
    {
        SurfaceKind.ADDED,
        SurfaceKind.PARAM_ADDED,
        SurfaceKind.FIELD_ADDED,
        SurfaceKind.OPTION_ADDED,
        SurfaceKind.ENV_ADDED,
        SurfaceKind.ROUTE_ADDED,
        SurfaceKind.REGISTRATION_ADDED,
        SurfaceKind.SUPPORT_ADDED,
    }
)
# Kinds that change what existing users get without changing a name.
BEHAVIOUR_KINDS = frozenset(
    {
        SurfaceKind.DEFAULT_CHANGED,
        SurfaceKind.SWITCH_FLIPPED,
        SurfaceKind.RAISES,
        SurfaceKind.DEPRECATION,
        SurfaceKind.BASES_CHANGED,
    }
)
MODULE_KINDS = frozenset({SurfaceKind.MODULE_REMOVED, SurfaceKind.MODULE_RENAMED})
DEPENDENCY_KINDS = frozenset(
    {SurfaceKind.DEPENDENCY_ADDED, SurfaceKind.DEPENDENCY_REMOVED, SurfaceKind.DEPENDENCY_CHANGED}
)


@dataclass(slots=True)
class FileTexts:
    """What a source read for the surface: text by (commit sha, path), None when that commit has no such
    file; `skipped` were there but not read (binary, over the size cap). A pair in neither was not read
    at all (a request budget spent, a failure): the commits that needed it get no facts."""

    texts: dict[tuple[str, str], str | None]
    skipped: set[tuple[str, str]]

    def read(self, key: tuple[str, str]) -> bool:
        return key in self.texts or key in self.skipped


@dataclass(frozen=True, slots=True)
class SurfaceChange:
    kind: SurfaceKind
    name: str  # what users call it: "pkg.mod.Class.method", "--max-batch", "APP_TIMEOUT", "GET /v1/models"
    path: str  # the file it was found in
    line: int | None = None  # in the new file; in the old file for a removal
    old: str | None = None  # the old name or value (renames, changed defaults)
    new: str | None = None  # the new name or value
    aliased: bool = False  # a deprecation alias or shim keeps the old name working
    # A code name removed or renamed: whether the docs before the commit mention it (analysis/surface/
    # doc_mentions.py); None when not known (no docs that read as a reference, or not a code name).
    documented: bool | None = None
    # A field of an HTTP API's request or response body (analysis/surface/python.py's _PAYLOAD_SUFFIXES):
    # every API client sends or reads it, however deep in the package its model is.
    api: bool = False

    @property
    def breaking(self) -> bool:
        return self.kind in BREAKING_KINDS and not self.aliased

    @property
    def feature(self) -> bool:
        return self.kind in FEATURE_KINDS

    @property
    def behaviour(self) -> bool:
        return self.kind in BEHAVIOUR_KINDS


_WORDS = {
    SurfaceKind.ADDED: "added",
    SurfaceKind.REMOVED: "removed",
    SurfaceKind.RENAMED: "renamed",
    SurfaceKind.MODULE_REMOVED: "module removed",
    SurfaceKind.MODULE_RENAMED: "module renamed",
    SurfaceKind.PARAM_ADDED: "parameter added",
    SurfaceKind.PARAM_REMOVED: "parameter removed",
    SurfaceKind.PARAM_RENAMED: "parameter renamed",
    SurfaceKind.PARAM_REORDERED: "positional parameters moved",
    SurfaceKind.PARAM_REQUIRED: "parameter now required",
    SurfaceKind.ABSTRACT_ADDED: "abstract method added (subclasses must implement it)",
    SurfaceKind.DEFAULT_CHANGED: "default changed",
    SurfaceKind.FIELD_ADDED: "field added",
    SurfaceKind.FIELD_REMOVED: "field removed",
    SurfaceKind.FIELD_RENAMED: "field renamed",
    SurfaceKind.OPTION_ADDED: "command-line option added",
    SurfaceKind.OPTION_REMOVED: "command-line option removed",
    SurfaceKind.OPTION_RENAMED: "command-line option renamed",
    SurfaceKind.ENV_ADDED: "environment variable added",
    SurfaceKind.ENV_REMOVED: "environment variable no longer read",
    SurfaceKind.ENV_RENAMED: "environment variable renamed",
    SurfaceKind.DEPRECATION: "deprecation warning added",
    SurfaceKind.SWITCH_FLIPPED: "switch flipped",
    SurfaceKind.ROUTE_ADDED: "HTTP route added",
    SurfaceKind.ROUTE_REMOVED: "HTTP route removed",
    SurfaceKind.REGISTRATION_ADDED: "registration added",
    SurfaceKind.REGISTRATION_REMOVED: "registration removed",
    SurfaceKind.RAISES: "newly raises",
    SurfaceKind.BASES_CHANGED: "base classes changed",
    SurfaceKind.SUPPORT_DROPPED: "support dropped",
    SurfaceKind.SUPPORT_ADDED: "support added",
    SurfaceKind.DEPENDENCY_ADDED: "dependency added",
    SurfaceKind.DEPENDENCY_REMOVED: "dependency removed",
    SurfaceKind.DEPENDENCY_CHANGED: "dependency range changed",
    SurfaceKind.DEPENDENCY_OPTIONAL: "dependency made optional",
    SurfaceKind.DEPENDENCY_DROPPED: "runtime dependency dropped",
    SurfaceKind.RELEASE_ENTRY: "release-notes entry",
}


# How `describe` joins a fact's parts, in English; other languages pass their own (analysis/questions/wording.py).
DESCRIBE_PARTS = {
    "name": "{kind}: {name}",
    "both": " ({old} → {new})",
    "was": " (was {old})",
    "new": " ({new})",
    "aliased": "; an alias keeps the old form working",
    "no_alias": "; no alias",
    "undocumented": "; the docs never mention it",
    "at": "{text} at {where}",
}


def describe(
    change: SurfaceChange,
    kinds: Mapping[SurfaceKind, str] | None = None,
    parts: Mapping[str, str] = DESCRIBE_PARTS,
) -> str:
    """One plain line for a fact, in English unless `kinds` and `parts` say otherwise: "field renamed:
    pkg.Config.b (a → b); no alias at pkg/config.py:12". The names are the code's own (untrusted text: the
    renderer escapes them)."""
    text = parts["name"].format(kind=(kinds or _WORDS)[change.kind], name=change.name)
    if change.old is not None and change.new is not None:
        text += parts["both"].format(old=change.old, new=change.new)
    elif change.old is not None:
        text += parts["was"].format(old=change.old)
    elif change.new is not None and change.new != change.name:
        text += parts["new"].format(new=change.new)
    if change.kind in BREAKING_KINDS and change.kind not in UNALIASED_KINDS:
        text += parts["aliased"] if change.aliased else parts["no_alias"]
    if change.documented is False:
        text += parts["undocumented"]
    where = f"{change.path}:{change.line}" if change.line else change.path
    return parts["at"].format(text=text, where=where)


def module_depth(name: str, path: str) -> int | None:
    """How deep in its package the module of a dotted name is (`pkg.sub.mod.Class.f` from
    `src/pkg/sub/mod.py`: 3), read from where the name's leading segments match the file's path; None
    when they do not (a name that is not a dotted module path)."""
    stems = path.rsplit(".", 1)[0].split("/")
    if stems and stems[-1] == "__init__":
        stems = stems[:-1]
    segments = name.split("(", 1)[0].split(".")
    for k in range(min(len(stems), len(segments)), 0, -1):
        if stems[-k:] == segments[:k]:
            return k
    return None


def user_name(name: str, path: str) -> str:
    """A name as users type it once they have imported it: the module path dropped (`pkg.mod.Class.f(x)` →
    `Class.f(x)`, `pkg.mod.func` → `func`); names that are no module path (`--opt`, `APP_ENV`, `GET /x`,
    `Type::method`) as they are."""
    depth = module_depth(name, path)
    if not depth:
        return name
    head, paren, args = name.partition("(")
    segments = head.split(".")
    rest = segments[depth:] or segments[-1:]
    return ".".join(rest) + paren + args


# -- commits, analyses, digests -----------------------------------------------------------------


class Importance(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def rank(self) -> int:
        """0 for high: sorts the most important first."""
        return {"high": 0, "medium": 1, "low": 2}[self.value]


class ChangeType(StrEnum):
    """The closed set of DESIGN.md §3."""

    FEATURE = "feature"
    BUGFIX = "bugfix"
    PERFORMANCE = "performance"
    REFACTOR = "refactor"
    DOCS = "docs"
    TESTS = "tests"
    CI_BUILD = "ci/build"
    CONFIG = "config"
    DEPENDENCY = "dependency"
    REVERT = "revert"
    SECURITY = "security"
    OTHER = "other"


INSIGHT_DIMENSIONS = (
    "architecture",
    "performance",
    "security",
    "maintainability",
    "compatibility",
    "resources",
)


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str
    status: str  # added | modified | removed | renamed | copied | changed
    additions: int
    deletions: int
    patch: str | None = None  # None: diff unavailable (binary, too large, or not served)
    previous_path: str | None = None

    @property
    def changes(self) -> int:
        return self.additions + self.deletions


@dataclass(frozen=True, slots=True)
class Commit:
    repo: str  # owner/name, or the folder name for a local clone without a GitHub remote
    sha: str
    message: str  # full message as written (untrusted text)
    author: str
    committed_at: datetime  # timezone-aware
    parents: tuple[str, ...] = ()
    files: tuple[FileChange, ...] = ()
    url: str | None = None  # web page of the commit, when the repository has one
    author_login: str | None = None  # GitHub login when known (filters such as "ignore bots")
    additions: int | None = None  # whole-commit totals; may exceed the files' sums when the list is capped
    deletions: int | None = None
    files_total: int | None = None  # number of files the commit changed, even past a listing cap
    # What the change does to its users (analysis/surface/), read from the files before and after;
    # None: the files were not read (no source support, quota, a commit too large).
    surface: tuple[SurfaceChange, ...] | None = None
    # The changed paths that the repository's packaging ships to users (pyproject, setup.cfg, package.json,
    # Cargo.toml, ... read at the commit); None: no packaging file understood.
    shipped: frozenset[str] | None = None
    # Touched Python files whose two versions parse to the same code but for comments, docstrings, message text
    # and layout (analysis/surface/same_code.py); None: the files were not read.
    prose_files: frozenset[str] | None = None
    # The release-notes items the commit adds, placed under their headings from the notes' text (RELEASE_ENTRY
    # facts, stored with the surface): apart from `surface`, which says what the code does to its users.
    release_entries: tuple[SurfaceChange, ...] = ()

    @property
    def title(self) -> str:
        return message_title(self.message)[0] or "(no message)"

    @property
    def short_sha(self) -> str:
        return self.sha[:7]

    @property
    def pr_number(self) -> int | None:
        m = PR_IN_TITLE.search(self.title)
        return int(m.group(1)) if m else merge_pr(self.title)

    @property
    def total_additions(self) -> int:
        return self.additions if self.additions is not None else sum(f.additions for f in self.files)

    @property
    def total_deletions(self) -> int:
        return self.deletions if self.deletions is not None else sum(f.deletions for f in self.files)

    @property
    def changed_lines(self) -> int:
        return self.total_additions + self.total_deletions

    @property
    def file_count(self) -> int:
        return self.files_total if self.files_total is not None else len(self.files)

    @property
    def files_truncated(self) -> bool:
        """True when the source could not list every changed file (GitHub caps at 3000)."""
        return self.file_count > len(self.files)


class Analysis(BaseModel):
    """One commit's analysis. Which fields are filled follows the importance tier (DESIGN.md §3):
    low: change_type + summary; medium: + scope, risks, recommendations; high: + insights."""

    sha: str
    importance: Importance
    importance_reason: str
    change_type: ChangeType
    summary: str
    scope: list[str] = Field(default_factory=list)
    insights: dict[str, str] = Field(default_factory=dict)  # keys from INSIGHT_DIMENSIONS
    risks: list[str] = Field(default_factory=list)
    recommendations: list[str] = Field(default_factory=list)
    analyzer: str = "heuristic"  # heuristic | llm | heuristic-fallback
    model: str | None = None
    prompt_version: str | None = None
    lang: str = "zh"
    notes: list[str] = Field(default_factory=list)  # coverage, fallbacks, grounding flags: shown to readers
    # The files and figures the fact-check removed: kept for the JSON output and llm_calls, never shown
    # to readers (a note saying what was invented would publish it).
    grounding_removed: list[str] = Field(default_factory=list)
    # The two questions behind the tier (DESIGN.md §3c): what the change does to its users (impact) and
    # how likely it is to need a revert or a fix (risk). None: not scored (an older analysis).
    impact_score: float | None = None
    risk_score: float | None = None
    # The LLM path (bot/digest/llm_analyzer.py): the rubric's tier, which the model may move one tier at most,
    # and the model's own 0-100 score, by which a day's tiers are banded (analysis/heuristic/bands.py). None for
    # the heuristic.
    rubric_importance: Importance | None = None
    model_score: int | None = None
    # The highest tier the model may give: low when the rubric found nothing users run changed (docs, tests,
    # CI, a release's version bump), which stay low unless they break users. None: no ceiling.
    ceiling: Importance | None = None
    # The rubric's floor: what breaks users stays high whatever a model says. None: no floor.
    floor: Importance | None = None


class FollowUpKind(StrEnum):
    """How a later commit follows up an earlier one (analysis/history/followups.py finds the links)."""

    REVERT = "revert"
    FIX = "fix"


@dataclass(frozen=True, slots=True)
class DayFollowUp:
    """One follow-up of a day's digest: the day's commit, the earlier commit it follows up and how we
    saw that commit then."""

    follow_up: Commit
    kind: FollowUpKind
    evidence: str
    original_sha: str
    original_title: str
    original_at: datetime
    original_url: str | None = None
    original_pr: int | None = None
    original_rank: Importance | None = None  # the tier we gave it, when we analysed it
    original_report: str | None = None  # relative link to its section in its day's report, when we wrote one

    @property
    def original_ref(self) -> str:
        return f"#{self.original_pr}" if self.original_pr else self.original_sha[:7]

    @property
    def follow_up_ref(self) -> str:
        return commit_ref(self.follow_up)


def commit_ref(commit: Commit) -> str:
    """How a commit is named in one line: its pull request, else its short sha."""
    return f"#{commit.pr_number}" if commit.pr_number else commit.short_sha


@dataclass(slots=True)
class Digest:
    """One repository's day: every commit in the window, newest first, with its analysis."""

    repo: str
    branch: str
    day: date
    timezone: str
    window_start: datetime
    window_end: datetime
    generated_at: datetime
    commits: list[Commit]
    analyses: dict[str, Analysis] = field(default_factory=dict)  # by sha
    lang: str = "zh"
    filtered_out: int = 0  # commits of the window left out by a subscription's filters (stated, not hidden)
    # When the source's history of the branch starts inside the window (a shallow clone's cut), in the
    # digest's zone: commits of the day before it may be missing (stated, not hidden). None: the whole day.
    history_start: datetime | None = None
    # When the day has no commits and the local clone's newest commit on the branch is older than the day,
    # in the digest's zone: a clone nobody updates reads as a quiet day (stated, not hidden). None otherwise.
    clone_newest: datetime | None = None
    # The zone of the previous day's posted digest, when this day's window starts where that one ended
    # instead of at the day's own midnight (the subscription's zone changed in between): stated, not hidden.
    previous_zone: str | None = None
    followups: list[DayFollowUp] = field(
        default_factory=list
    )  # the day's reverts/fix-forwards of earlier commits

    def analysis_of(self, commit: Commit) -> Analysis:
        return self.analyses[commit.sha]

    def by_importance(self, level: Importance) -> list[Commit]:
        return [c for c in self.commits if self.analyses[c.sha].importance == level]

    @property
    def stats(self) -> dict[str, int]:
        counts = {lvl.value: len(self.by_importance(lvl)) for lvl in Importance}
        return {**counts, "total": len(self.commits)}

    @property
    def analyzers(self) -> list[str]:
        return sorted({a.analyzer for a in self.analyses.values()})


# A digest's identity: the store keeps it and every post of it under this key (never changed: posts made
# before a change would be posted again).
def digest_key(repo: str, branch: str, day: str, timezone: str, lang: str) -> str:
    return f"{repo}@{branch}/{day}/{timezone}/{lang}"


def key_of(digest: Digest) -> str:
    key = digest_key(digest.repo, digest.branch, digest.day.isoformat(), digest.timezone, digest.lang)
    if digest.previous_zone is None:
        return key
    # A window moved by a zone change holds other commits than the plain day: a digest of its own, which a
    # plain build of the day (`digest --date`, a weekly roll-up) must not overwrite in the store.
    return f"{key}/since:{digest.window_start.astimezone(UTC):%Y-%m-%dT%H:%MZ}"
