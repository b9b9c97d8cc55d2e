"""Domain models shared by every layer: commits in, analyses and digests out.

Plain data, no I/O. Commits are dataclasses (many of them, read-only); analyses are pydantic
models because they are stored as JSON and double as the validated shape of LLM output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from analysis.surface import SurfaceChange

if TYPE_CHECKING:
    from analysis.followup_view import DayFollowUp

PR_IN_TITLE = re.compile(r"\(#(\d+)\)\s*$")


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
    # What the change does to its users (analysis/surface.py), read from the files before and after;
    # None: the files were not read (no source support, quota, a commit too large).
    surface: tuple[SurfaceChange, ...] | None = None
    # The changed paths that the repository's packaging ships to users (pyproject, setup.cfg, package.json,
    # Cargo.toml, ... read at the commit); None: no packaging file understood.
    shipped: frozenset[str] | None = None

    @property
    def title(self) -> str:
        return self.message.strip().split("\n", 1)[0].strip() if self.message.strip() else "(no message)"

    @property
    def short_sha(self) -> str:
        return self.sha[:7]

    @property
    def pr_number(self) -> int | None:
        m = PR_IN_TITLE.search(self.title)
        return int(m.group(1)) if m else None

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
    # The LLM path (bot/llm_analyzer.py): the rubric's tier, which the model may move one tier at most,
    # and the model's own 0-100 score, by which a day's tiers are banded (analysis/bands.py). None for
    # the heuristic.
    rubric_importance: Importance | None = None
    model_score: int | None = None


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
