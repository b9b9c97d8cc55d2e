"""Answers to thread questions from the stored data alone: the day's commits and analyses, the
follow-up links, the surface changes. Pure: bot/chat/answers.py gathers `QAData` from the store and the sources.

This module routes a parsed question to its answer (commit_answers, day_answers, followup_answers,
surface_answers); document.py holds the answer's shape and wording.py its words.
"""

from __future__ import annotations

from collections.abc import Sequence

from analysis.models import Commit, commit_ref
from analysis.questions.commit_answers import commit_answer, explain
from analysis.questions.day_answers import commit_lines, listing, overview, riskiest
from analysis.questions.document import Answer, Link, QAData, Strong
from analysis.questions.followup_answers import day_followups
from analysis.questions.parse import Aspect, Intent, Question
from analysis.questions.surface_answers import day_surface
from analysis.questions.wording import phrase


def answer_from_data(q: Question, data: QAData) -> Answer | None:
    """The data's answer to a recognised question; None for UNKNOWN (the model's turn, or help)."""
    if q.intent == Intent.UNKNOWN:
        return None
    a = Answer(q.lang, kind=q.intent.value)
    if q.about_commit(data.focus is not None):
        commit = _named(q, data) or data.focus
        if commit is None:
            a.add(phrase(q.lang, "which_commit", example=example_questions(q.lang, data)[1]))
            return a
        commit_answer(a, q, data, commit)
        return a
    if not data.commits:
        a.add(phrase(q.lang, "no_day"))
        return a
    {
        Intent.RISKIEST: riskiest,
        Intent.LIST: listing,
        Intent.FOLLOWUPS: day_followups,
        Intent.SURFACE: day_surface,
        Intent.OVERVIEW: overview,
        Intent.EXPLAIN: _which_commit,
    }[q.intent](a, q, data)
    a.listing = True
    return a


def _named(q: Question, data: QAData) -> Commit | None:
    """The first commit the question names among those at hand (the caller resolves the others)."""
    pool = [*data.commits, *([data.focus] if data.focus else [])]
    for named in q.commits:
        for commit in pool:
            if (named.kind == "pr" and commit.pr_number == int(named.value)) or (
                named.kind == "sha" and commit.sha.lower().startswith(named.value)
            ):
                return commit
    return None


def focus_answer(data: QAData, lang: str) -> Answer:
    """What the thread is about, from the data: the focused commit's analysis, else the day in short.
    The fallback when the model's answer is unusable."""
    a = Answer(lang, kind="explain" if data.focus else "overview")
    if data.focus is not None:
        explain(a, lang, data, data.focus, frozenset({Aspect.SUMMARY, Aspect.RISKS}))
    elif data.commits:
        overview(a, Question(text="", lang=lang, intent=Intent.OVERVIEW), data)
    return a


def unresolved_answer(q: Question, data: QAData, matches: Sequence[Commit], listed: int = 0) -> Answer:
    """A commit called by its title's words or by its place in a list, when that is not one commit: the
    candidates (never a guess), or why none fits. `listed`: how long the thread's last list was."""
    a = Answer(q.lang, source="data", kind="which commit")
    example = example_questions(q.lang, data)[1]
    called = " ".join(q.title_words)
    if matches:
        a.add(Strong(phrase(q.lang, "title_several", phrase=called, n=len(matches))))
        commit_lines(a, q.lang, data, matches)
        a.listing = True  # "which one? ... the second one"
    elif q.ordinal is not None:
        a.add(phrase(q.lang, "ordinal_short", n=listed) if listed else phrase(q.lang, "ordinal_none"))
    else:
        a.add(phrase(q.lang, "title_none", phrase=called))
        a.confident = False  # the words may not be a title at all: a model, when there is one, may know
    a.add(phrase(q.lang, "which_commit", example=example))
    return a


def sha_answer(
    lang: str,
    sha: str,
    data: QAData,
    candidates: Sequence[tuple[str, str, str | None]] = (),
    *,
    more: bool = False,
) -> Answer:
    """A short SHA that is not one commit: the commits it starts (sha, title, web page), or that none
    does; never the thread's focus in its place. `more`: there are more candidates than listed."""
    a = Answer(lang, source="data", kind="which commit")
    if candidates:
        a.add(Strong(phrase(lang, "sha_several", sha=sha, repo=data.repo)))
        for full, title, url in candidates:
            a.add("• ", Link(full[:10], url), " ", title)
        if more:
            a.add(phrase(lang, "sha_more"))
    else:
        a.add(phrase(lang, "sha_none", sha=sha, repo=data.repo))
    a.add(phrase(lang, "which_commit", example=example_questions(lang, data)[1]))
    return a


def _which_commit(a: Answer, q: Question, data: QAData) -> None:
    a.add(phrase(q.lang, "which_commit", example=example_questions(q.lang, data)[1]))


def example_questions(lang: str, data: QAData) -> tuple[str, str]:
    """Two questions this thread's data can answer, naming a real commit when there is one."""
    commit = data.focus or (data.commits[0] if data.commits else None)
    ref = commit_ref(commit) if commit is not None else "#123"
    if lang == "zh":
        first = "今天哪些提交风险最高？" if data.commits else f"{ref} 有什么风险？"
        return first, f"{ref} 被回滚了吗？"
    first = (
        "Which of today's commits carry the most risk?" if data.commits else f"What are the risks of {ref}?"
    )
    return first, f"Was {ref} reverted?"


_HELP = {
    "en": (
        "I can't answer that from the data, and no model is configured to try. In this thread I can "
        "answer: the day's riskiest, high or medium commits; whether a commit was reverted or fixed "
        "forward; what a commit changes (risks, tests, files, author, size); commits touching a path or "
        "area, or by an author; breaking changes, defaults and new options; counts, lines changed, commits "
        "without tests, the biggest commits. For example:"
    ),
    "zh": (
        "这个问题无法从数据中回答，也没有配置可以尝试回答的模型。在这个讨论串里我可以回答：当天风险最高、高或中重要度的"
        "提交；某个提交是否被回滚或修复跟进；某个提交改了什么（风险、测试、文件、作者、规模）；涉及某个路径或模块、"
        "或某位作者的提交；破坏性变更、默认值和新选项；数量统计、改动行数、没有测试的提交、最大的提交。例如："
    ),
}


def help_answer(lang: str, data: QAData) -> Answer:
    a = Answer(lang, source="help", kind="unknown")
    a.add(_HELP["zh" if lang == "zh" else "en"])
    for example in example_questions(lang, data):
        a.add("• ", example)
    return a
