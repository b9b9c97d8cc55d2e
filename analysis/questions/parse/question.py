"""What a thread question is once read: its intent (the day's riskiest commits, a tier, follow-ups, what a
commit changes, surface changes, an overview), the aspects of one commit it asks about, the surface facets,
and what it names (commits, paths and areas, an author, tiers, "top 3")."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from analysis.models import Importance


class Intent(StrEnum):
    RISKIEST = "riskiest"  # the day's commits carrying the most risk (or the focused commit's risks)
    LIST = "list"  # the day's commits matching filters: tier, path/area, author (or how many)
    FOLLOWUPS = "followups"  # reverted or fixed forward: a commit's, or the day's
    EXPLAIN = "explain"  # what a commit changes, or one aspect of it
    SURFACE = "surface"  # breaking changes, changed defaults, new options
    OVERVIEW = "overview"  # the day in short
    UNKNOWN = "unknown"


class Aspect(StrEnum):
    """What part of one commit a question is about."""

    SUMMARY = "summary"
    RISKS = "risks"
    ADVICE = "advice"
    TESTS = "tests"
    FILES = "files"
    AUTHOR = "author"
    WHEN = "when"
    SIZE = "size"
    REASON = "reason"  # why it was ranked as it was
    TYPE = "type"


class Facet(StrEnum):
    """Which surface changes a question is about (analysis/surface/)."""

    BREAKING = "breaking"
    BEHAVIOUR = "behaviour"  # changed defaults, flipped switches, new exceptions, deprecations
    FEATURE = "feature"  # new options, parameters, fields, routes


SHORT_SHA = 7  # fewer hex characters: a short SHA, read only with a digit and a letter


@dataclass(frozen=True, slots=True)
class NamedCommit:
    """A commit the question names: `#123`, a SHA, or a commit / pull-request URL."""

    kind: Literal["pr", "sha"]
    value: str  # the PR number, or a lower-case hex SHA (prefix)
    repo: str | None = None  # from a URL or owner/name@sha
    # All digits, or short and maybe a name ("a100", "c10d"): a SHA only if a commit (short: of the thread's
    # day) has it.
    weak: bool = False

    @property
    def short(self) -> bool:
        """A SHA of fewer than 7 hex characters: looked up among the commits we know, never fetched."""
        return self.kind == "sha" and len(self.value) < SHORT_SHA

    @property
    def text(self) -> str:
        return f"#{self.value}" if self.kind == "pr" else self.value[:12]


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    lang: str
    intent: Intent
    commits: tuple[NamedCommit, ...] = ()
    aspects: frozenset[Aspect] = frozenset()
    tiers: frozenset[Importance] = frozenset()
    terms: tuple[str, ...] = ()  # paths and areas, lower-case; each may hold several words
    author: str | None = None
    facets: frozenset[Facet] = frozenset()
    count: bool = False  # "how many"
    limit: int | None = None  # "top 3"
    # "day": the question is about the day's commits; "commit": about one commit (a pronoun, a name);
    # None: the thread decides (its focused commit if it has one, else the day).
    scope: Literal["day", "commit"] | None = None
    vague: bool = False  # a bare reference ("and #123?"): a model, when there is one, answers it better
    authors_ranked: bool = False  # "who landed the most commits?"
    env_vars: bool = False  # about environment variables: only those surface changes
    # A commit named by what it is, not by #N or SHA: "the bump version commit" (words of its title),
    # "the second one" (the n-th commit of the thread's last list; -1: the last).
    title_words: tuple[str, ...] = ()
    ordinal: int | None = None
    # The question's words that are no keyword ("is xxhash safe?": "xxhash"): the caller reads them as a
    # title when exactly one of the day's commits holds them all.
    loose_words: tuple[str, ...] = ()
    lines_total: bool = False  # "how many lines changed today?": the (matching) commits' changed lines
    untested: bool = False  # "which commits have no tests?": those changing no test file
    biggest: bool = False  # "what's the biggest commit?": by changed lines

    def about_commit(self, has_focus: bool) -> bool:
        """Whether the answer is about one commit: one is named, or the wording or the thread says so."""
        if self.commits or self.title_words or self.ordinal is not None:
            return True
        if self.scope is not None:
            return self.scope == "commit" and has_focus
        # "and its risks?", "reverted?" follow the thread's commit; surface questions are the day's.
        return has_focus and self.intent in (Intent.EXPLAIN, Intent.RISKIEST, Intent.FOLLOWUPS)
