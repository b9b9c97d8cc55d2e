"""The answer to a thread question as a small document, and what it is made from.

An answer is lines of spans (text, our links, our bold words) that each chat renderer turns into its own
markup (analysis/render/answer.py), so commit text stays inert on every platform and every commit an answer
speaks about is cited as a link. `QAData` is what bot/chat/answers.py gathers from the store and the sources.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo

from analysis.history.followups import FollowUpKind
from analysis.models import Analysis, Commit


@dataclass(frozen=True, slots=True)
class Link:
    text: str  # our own label (a short SHA, "#N")
    url: str | None


@dataclass(frozen=True, slots=True)
class Strong:
    text: str  # our own words


Span = str | Link | Strong  # str: any text, ours or untrusted; renderers escape it
Line = tuple[Span, ...]


@dataclass(slots=True)
class Answer:
    lang: str
    lines: list[Line] = field(default_factory=list)
    # data: from the store; llm: the model's (checked); fallback: the data's after the model failed or
    # said nothing that survived the check; help: what the bot can answer; limited: the per-thread cap.
    source: str = "data"
    kind: str = ""  # the intent answered
    cites: list[str] = field(default_factory=list)  # full SHAs of the commits cited, in order
    removed: int = 0  # statements the fact-check took out of the model's answer
    removed_items: list[str] = field(default_factory=list)  # what they cited: for logs, never shown
    # False when the question may not have meant what we read ("changes to production": no commit
    # touches a "production" area): a model, when there is one, gets to answer instead.
    confident: bool = True
    # A list of the day's commits (riskiest, by tier, path, author, surface...): "the second one" in a
    # later turn is its second. An answer about one commit cites others too (its revert) and is no list.
    listing: bool = False

    def add(self, *spans: Span) -> None:
        self.lines.append(tuple(s for s in spans if s != ""))

    def cite(self, commit: Commit) -> Link:
        if commit.sha not in self.cites:
            self.cites.append(commit.sha)
        return Link(commit.short_sha, commit.url)

    def plain(self) -> str:
        """The answer as plain text (thread history, logs, console)."""
        return "\n".join("".join(_plain_span(s) for s in line) for line in self.lines)


def _plain_span(span: Span) -> str:
    if isinstance(span, Link):
        return span.text
    if isinstance(span, Strong):
        return span.text
    return span


# --------------------------------------------------------------------------------------------
# What an answer is made from
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FollowUpFact:
    """A stored follow-up link seen from one side: the other commit, what it did, when."""

    kind: FollowUpKind
    sha: str  # the other commit
    title: str
    ref: str  # "#N" or a short SHA
    url: str | None
    at: datetime  # when the later of the two landed (a revert's date, or the original's for `earlier`)


@dataclass(slots=True)
class QAData:
    repo: str
    tz: tzinfo
    commits: list[Commit] = field(default_factory=list)  # the thread's day, newest first; [] for a card
    analyses: dict[str, Analysis] = field(default_factory=dict)  # by SHA: the day's and the focus's
    day: date | None = None
    focus: Commit | None = None  # the commit the conversation is about
    later: dict[str, list[FollowUpFact]] = field(default_factory=dict)  # SHA → what reverted/fixed it later
    earlier: dict[str, list[FollowUpFact]] = field(default_factory=dict)  # SHA → what it reverts/fixes
    history_until: datetime | None = None  # the stored history's end: "none known as of …"

    def authors(self) -> list[str]:
        names = {c.author for c in self.commits} | {c.author_login or "" for c in self.commits}
        if self.focus is not None:
            names |= {self.focus.author, self.focus.author_login or ""}
        return sorted(n for n in names if n)
