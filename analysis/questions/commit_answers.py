"""Answers about one commit: its header line, then the aspects asked for (summary, risks, advice, tests,
files, author, time, size, reason, type), its follow-ups and its surface facts."""

from __future__ import annotations

from analysis.labels import change_type_label, importance_label, importance_word
from analysis.models import Analysis, Commit
from analysis.paths import PathKind, classify_path
from analysis.questions.document import Answer, QAData, Span, Strong
from analysis.questions.followup_answers import commit_followups
from analysis.questions.parse import Aspect, Intent, Question
from analysis.questions.surface_answers import commit_surface
from analysis.questions.wording import phrase
from analysis.text import display_author, display_title

FILES_MAX = 15


def commit_answer(a: Answer, q: Question, data: QAData, commit: Commit) -> None:
    lang = q.lang
    if q.intent == Intent.FOLLOWUPS:
        header(a, lang, data, commit)
        commit_followups(a, lang, data, commit)
    elif q.intent == Intent.SURFACE:
        header(a, lang, data, commit)
        commit_surface(a, q, commit)
    else:
        aspects = set(q.aspects) or {Aspect.SUMMARY}
        if q.intent == Intent.RISKIEST:
            aspects.add(Aspect.RISKS)
        explain(a, lang, data, commit, frozenset(aspects))


def header(a: Answer, lang: str, data: QAData, commit: Commit) -> None:
    analysis = data.analyses.get(commit.sha)
    head: list[Span] = [a.cite(commit), " ", display_title(commit)]
    if analysis is not None:
        head += [
            " — ",
            phrase(
                lang,
                "header",
                tier=importance_label(lang, analysis.importance),
                ctype=change_type_label(lang, analysis.change_type),
            ),
        ]
    a.add(*head)


_ASPECT_ORDER = (
    Aspect.SUMMARY, Aspect.TYPE, Aspect.REASON, Aspect.AUTHOR, Aspect.WHEN, Aspect.SIZE, Aspect.FILES,
    Aspect.TESTS, Aspect.RISKS, Aspect.ADVICE,
)  # fmt: skip


def explain(a: Answer, lang: str, data: QAData, commit: Commit, aspects: frozenset[Aspect]) -> None:
    header(a, lang, data, commit)
    analysis = data.analyses.get(commit.sha)
    for aspect in _ASPECT_ORDER:
        if aspect in aspects:
            _ASPECTS[aspect](a, lang, data, commit, analysis)
    if analysis is not None and analysis.notes and (aspects & {Aspect.SUMMARY, Aspect.RISKS}):
        # Reverted / fixed forward later, coverage, fallbacks: facts a reader must not miss.
        a.add(phrase(lang, "notes"), " ".join(analysis.notes))
    if Aspect.SUMMARY in aspects and data.later.get(commit.sha):
        commit_followups(a, lang, data, commit)


def _summary(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    if an is None:
        a.add(phrase(lang, "no_analysis"))
    else:
        a.add(phrase(lang, "summary"), an.summary)


def _risks(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    if an is not None:
        _items(a, lang, an.risks, "risks", "no_risk_listed")


def _advice(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    if an is not None:
        _items(a, lang, an.recommendations, "advice", "no_advice")


def _items(a: Answer, lang: str, items: list[str], head: str, none: str) -> None:
    """A field of the analysis as a list, or a line saying the analysis has none."""
    if not items:
        a.add(phrase(lang, none))
        return
    a.add(Strong(phrase(lang, head)))
    for item in items:
        a.add("• ", item)


def _tests(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    tests = [f for f in commit.files if classify_path(f.path) == PathKind.TESTS]
    if not tests:
        a.add(phrase(lang, "no_tests", n=commit.file_count))
        return
    a.add(Strong(phrase(lang, "tests_changed", n=len(tests))))
    for f in tests[:FILES_MAX]:
        a.add("• ", f.path, f" (+{f.additions} −{f.deletions})")
    if len(tests) > FILES_MAX:
        a.add(phrase(lang, "files_more", n=len(tests) - FILES_MAX))


def _files(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    a.add(
        Strong(
            phrase(
                lang, "files", n=commit.file_count, add=commit.total_additions, dele=commit.total_deletions
            )
        )
    )
    for f in commit.files[:FILES_MAX]:
        a.add("• ", f.path, f" (+{f.additions} −{f.deletions})")
    if commit.file_count > FILES_MAX:
        a.add(phrase(lang, "files_more", n=commit.file_count - min(FILES_MAX, len(commit.files))))


def _author(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    who = display_author(commit) or "?"
    if commit.author_login and commit.author_login.lower() not in who.lower():
        who += f" ({commit.author_login})"
    a.add(phrase(lang, "author", who=who))


def _when(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    moment = commit.committed_at.astimezone(data.tz)
    a.add(phrase(lang, "when", when=moment.strftime("%Y-%m-%d %H:%M"), tz=str(data.tz)))


def _size(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    a.add(
        phrase(
            lang,
            "size",
            total=commit.changed_lines,
            add=commit.total_additions,
            dele=commit.total_deletions,
            n=commit.file_count,
        )
    )


def _reason(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    if an is not None:
        a.add(phrase(lang, "reason", tier=importance_word(lang, an.importance)), an.importance_reason)


def _type(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    if an is not None:
        a.add(phrase(lang, "type", ctype=change_type_label(lang, an.change_type)))


_ASPECTS = {
    Aspect.SUMMARY: _summary,
    Aspect.RISKS: _risks,
    Aspect.ADVICE: _advice,
    Aspect.TESTS: _tests,
    Aspect.FILES: _files,
    Aspect.AUTHOR: _author,
    Aspect.WHEN: _when,
    Aspect.SIZE: _size,
    Aspect.REASON: _reason,
    Aspect.TYPE: _type,
}
