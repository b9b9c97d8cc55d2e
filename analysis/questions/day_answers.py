"""Answers about the day: the riskiest commits, lists and counts by tier, path, area or author, the overview."""

from __future__ import annotations

import re
from collections.abc import Sequence

from analysis.labels import importance_word
from analysis.models import Analysis, Commit, Importance
from analysis.paths import PathKind, classify_path
from analysis.questions.document import Answer, QAData, Span, Strong
from analysis.questions.matching import filtered, path_like
from analysis.questions.parse import Aspect, Question
from analysis.questions.wording import phrase
from analysis.text import display_author, display_title

LIST_MAX = 15  # commits listed one per line; the rest are named in one line of links
RISKIEST_DEFAULT = 5
BIGGEST_DEFAULT = 3


def _analysis(data: QAData, commit: Commit) -> Analysis | None:
    return data.analyses.get(commit.sha)


def _risk_key(data: QAData, commit: Commit) -> tuple[float, int, int, int]:
    an = _analysis(data, commit)
    if an is None:
        return (1.0, 3, 0, 0)
    score = an.risk_score if an.risk_score is not None else 0.0
    return (-score, an.importance.rank, -len(an.risks), -commit.changed_lines)


def _what(q: Question) -> str:
    parts = []
    zh = q.lang == "zh"
    if q.tiers:
        tiers = "/".join(importance_word(q.lang, t) for t in Importance if t in q.tiers)
        parts.append(phrase(q.lang, "tier", tier=tiers))
    if q.terms:
        parts.append(
            phrase(q.lang, "touching", what=("、" if zh else ", ").join(_term_label(t) for t in q.terms))
        )
    if q.author:
        parts.append(phrase(q.lang, "by", who=q.author))
    return ("，" if zh else "; ").join(parts)


def _term_label(term: str) -> str:
    return " / ".join(term.split("|"))


def riskiest(a: Answer, q: Question, data: QAData) -> None:
    pool = filtered(q, data)
    ranked = sorted(pool, key=lambda c: _risk_key(data, c))
    risky = [c for c in ranked if (an := _analysis(data, c)) is not None and an.risks]
    if not risky:
        a.add(phrase(q.lang, "no_risks", what=_what(q)))
        return
    shown = risky[: q.limit or RISKIEST_DEFAULT]
    if q.terms or q.author or q.tiers:
        a.add(Strong(phrase(q.lang, "riskiest_filtered", n=len(pool), shown=len(shown))))
    else:
        a.add(Strong(phrase(q.lang, "riskiest", shown=len(shown), total=len(data.commits))))
    for commit in shown:
        an = _analysis(data, commit)
        assert an is not None
        a.add(
            "• ", a.cite(commit), " ", display_title(commit),
            f" ({importance_word(q.lang, an.importance)}) — ", phrase(q.lang, "risk"), an.risks[0],
        )  # fmt: skip


def listing(a: Answer, q: Question, data: QAData) -> None:
    if q.authors_ranked:
        _authors(a, q, data)
        return
    measure = _lines_total if q.lines_total else _untested if q.untested else _biggest if q.biggest else None
    if measure is not None:
        measure(a, q, data)
        return
    total = len(data.commits)
    if not (q.tiers or q.terms or q.author):
        stats = {lvl.value: 0 for lvl in Importance}
        for commit in data.commits:
            an = _analysis(data, commit)
            if an is not None:
                stats[an.importance.value] += 1
        a.add(phrase(q.lang, "count_all", total=total, **stats))
        return
    matches = filtered(q, data)
    what = _what(q)
    if not matches:
        a.add(phrase(q.lang, "list_none", what=what, total=total))
        # A tier or a path means what it says; an area or a name nobody has may be a misreading.
        a.confident = bool(q.tiers) or any(path_like(t) for t in q.terms)
        if q.author:
            a.add(
                phrase(q.lang, "authors_today"), ", ".join(sorted({display_author(c) for c in data.commits}))
            )
        return
    if q.count:
        a.add(phrase(q.lang, "count_match", n=len(matches), total=total, what=what))
    elif q.tiers and not (q.terms or q.author):
        tiers = "/".join(importance_word(q.lang, t) for t in Importance if t in q.tiers)
        a.add(Strong(phrase(q.lang, "list_tier", tiers=tiers, n=len(matches), total=total)))
    else:
        a.add(Strong(phrase(q.lang, "list_match", n=len(matches), total=total, what=what)))
    commit_lines(a, q.lang, data, matches, risks=Aspect.RISKS in q.aspects)


def _lines_total(a: Answer, q: Question, data: QAData) -> None:
    """The lines the (matching) commits changed, added and deleted."""
    commits = filtered(q, data)
    add, dele = sum(c.total_additions for c in commits), sum(c.total_deletions for c in commits)
    what = _what(q)
    key = "lines_match" if what else "lines_total"
    a.add(phrase(q.lang, key, total=add + dele, add=add, dele=dele, n=len(commits), what=what))


def _untested(a: Answer, q: Question, data: QAData) -> None:
    """The (matching) commits that change no test file, the most important first; a commit whose file
    list is incomplete may have one among the files not read: not known."""
    commits = filtered(q, data)
    untested, unknown = [], 0
    for commit in commits:
        if any(classify_path(f.path) == PathKind.TESTS for f in commit.files):
            continue
        if not commit.files or len(commit.files) < commit.file_count:
            unknown += 1
            continue
        untested.append(commit)
    if not untested:
        a.add(phrase(q.lang, "untested_none", n=len(commits) - unknown))
    else:
        untested.sort(
            key=lambda c: (an.importance.rank if (an := _analysis(data, c)) else 3, -c.changed_lines)
        )
        a.add(Strong(phrase(q.lang, "untested_head", n=len(untested), total=len(commits))))
        commit_lines(a, q.lang, data, untested)
    if unknown:
        a.add(phrase(q.lang, "untested_unknown", n=unknown))


def _biggest(a: Answer, q: Question, data: QAData) -> None:
    """The (matching) commits with the most changed lines, with their size."""
    ranked = sorted(filtered(q, data), key=lambda c: (-c.changed_lines, -c.file_count))
    shown = ranked[: q.limit or BIGGEST_DEFAULT]
    a.add(Strong(phrase(q.lang, "biggest_head", shown=len(shown), total=len(ranked))))
    for commit in shown:
        an = _analysis(data, commit)
        tier = f" ({importance_word(q.lang, an.importance)})" if an is not None else ""
        size = phrase(
            q.lang,
            "size",
            total=commit.changed_lines,
            add=commit.total_additions,
            dele=commit.total_deletions,
            n=commit.file_count,
        )
        a.add("• ", a.cite(commit), " ", display_title(commit), f"{tier} — ", size)


def _authors(a: Answer, q: Question, data: QAData) -> None:
    """Authors by how many of the (matching) commits they landed, most first, with those commits."""
    by: dict[str, list[Commit]] = {}
    for commit in filtered(q, data):
        by.setdefault(display_author(commit) or "?", []).append(commit)
    ranked = sorted(by.items(), key=lambda item: (-len(item[1]), item[0].lower()))
    a.add(Strong(phrase(q.lang, "authors_head", n=len(ranked), total=sum(len(c) for _, c in ranked))))
    for name, commits in ranked[:LIST_MAX]:
        spans: list[Span] = ["• ", name, f" ({len(commits)}): "]
        for i, commit in enumerate(commits):
            spans += ([", "] if i else []) + [a.cite(commit)]
        a.add(*spans)
    rest = ranked[LIST_MAX:]
    if rest:
        a.add(phrase(q.lang, "authors_more", n=len(rest), commits=sum(len(c) for _, c in rest)))


def commit_lines(
    a: Answer, lang: str, data: QAData, commits: Sequence[Commit], *, risks: bool = False
) -> None:
    for commit in commits[:LIST_MAX]:
        an = _analysis(data, commit)
        line: list[Span] = ["• ", a.cite(commit), " ", display_title(commit)]
        if an is not None:
            line.append(f" ({importance_word(lang, an.importance)}) — ")
            if risks and an.risks:
                line += [phrase(lang, "risk"), an.risks[0]]
            else:
                line.append(_first_sentence(an.summary))
        a.add(*line)
    rest = list(commits[LIST_MAX:])
    if rest:
        spans: list[Span] = [phrase(lang, "more", n=len(rest))]
        for i, commit in enumerate(rest):
            spans += ([", "] if i else []) + [a.cite(commit)]
        a.add(*spans)


def _first_sentence(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    m = re.search(r"(?<=[。！？.!?])\s", text)
    head = text[: m.start()] if m and m.start() <= limit else text
    return head if len(head) <= limit else head[: limit - 1].rstrip() + "…"


def overview(a: Answer, q: Question, data: QAData) -> None:
    stats = {lvl.value: 0 for lvl in Importance}
    for commit in data.commits:
        an = _analysis(data, commit)
        if an is not None:
            stats[an.importance.value] += 1
    day = data.day.isoformat() if data.day else ""
    a.add(phrase(q.lang, "overview", repo=data.repo, day=day, total=len(data.commits), **stats))
    high = [
        c for c in data.commits if (an := _analysis(data, c)) is not None and an.importance == Importance.HIGH
    ]
    if high:
        a.add(Strong(phrase(q.lang, "overview_top")))
        commit_lines(a, q.lang, data, high)
        return
    a.add(phrase(q.lang, "overview_none_high"))
    medium = [
        c
        for c in data.commits
        if (an := _analysis(data, c)) is not None and an.importance == Importance.MEDIUM
    ]
    if medium:  # a day without high commits still has something to say
        a.add(Strong(phrase(q.lang, "overview_medium")))
        commit_lines(a, q.lang, data, medium)
