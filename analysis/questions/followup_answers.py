"""Answers about reverts and fix-forwards: one commit's, or the day's, as of the stored history's end."""

from __future__ import annotations

from datetime import datetime, tzinfo

from analysis.history.followups import FollowUpKind
from analysis.models import Commit
from analysis.questions.document import Answer, FollowUpFact, Link, QAData, Span, Strong
from analysis.questions.matching import filtered
from analysis.questions.parse import Question
from analysis.questions.wording import phrase
from analysis.text import display_title


def as_of(lang: str, data: QAData) -> str:
    if data.history_until is None:
        return ""
    return phrase(lang, "asof", day=data.history_until.astimezone(data.tz).date().isoformat())


def commit_followups(a: Answer, lang: str, data: QAData, commit: Commit) -> None:
    later, earlier = data.later.get(commit.sha, []), data.earlier.get(commit.sha, [])
    for fact in later:
        a.add("⚠️ " if fact.kind == FollowUpKind.REVERT else "🔧 ", *fact_spans(lang, data, fact, later=True))
    for fact in earlier:
        a.add(*fact_spans(lang, data, fact, later=False))
    if not later:
        a.add(phrase(lang, "not_followed", asof=as_of(lang, data)))


def fact_spans(lang: str, data: QAData, fact: FollowUpFact, *, later: bool) -> list[Span]:
    """ "reverted by #N on DAY: <sha> title" (a later commit) or "reverts #N (committed DAY): …"."""
    revert = fact.kind == FollowUpKind.REVERT
    key = ("reverted_by" if revert else "fixed_by") if later else ("reverts" if revert else "fixes")
    return [
        phrase(lang, key, ref=fact.ref, day=_day(fact.at, data.tz)),
        Link(fact.sha[:7], fact.url),
        " ",
        fact.title,
    ]


def _day(moment: datetime, tz: tzinfo) -> str:
    return moment.astimezone(tz).date().isoformat()


def day_followups(a: Answer, q: Question, data: QAData) -> None:
    asof = as_of(q.lang, data)
    involved = [c for c in filtered(q, data) if data.later.get(c.sha) or data.earlier.get(c.sha)]
    if not involved:
        a.add(phrase(q.lang, "followups_day_none", asof=asof))
        return
    a.add(Strong(phrase(q.lang, "followups_day_head", asof=asof)))
    for commit in involved:
        a.add("• ", a.cite(commit), " ", display_title(commit))
        for fact in data.later.get(commit.sha, []):
            a.add("    ◦ ", *fact_spans(q.lang, data, fact, later=True))
        for fact in data.earlier.get(commit.sha, []):
            a.add("    ◦ ", *fact_spans(q.lang, data, fact, later=False))
