"""Answers to questions asked in a digest thread (DESIGN.md §5), for both chat adapters.

1. The question is parsed (analysis/questions/parse/). A commit it names — `#N`, a SHA, a commit link,
   from any day of the repository — becomes the thread's focus: found among the day's commits, in the
   store, or fetched and analysed on demand like `/digest <sha>`. Later turns keep the focus (stored per
   thread) until another commit is named.
2. A question the data answers is answered from the data (analysis/questions/answers.py): no model call, citing
   every commit it speaks about as a link.
3. Anything else goes to the model when one is configured, at most QA_CALLS_PER_MINUTE times a minute
   per thread. Its answer is fact-checked before it is posted (analysis/questions/fact_check.py): a sentence
   naming a SHA, PR, path or figure that is not in the thread's commits, its day or the store is removed
   and the answer says that something was removed; an answer with nothing left, or a failed call, falls
   back to the data's answer. Without a model, the bot says plainly what it can answer.

Over 400 lines because it is the one path from a question to its answer: what the question names (#N, SHA,
title words, a place in the thread's last list), the thread's focus, the follow-ups, and the model's
checked answer share the same thread context and data.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from dataclasses import replace
from datetime import UTC
from typing import Any
from zoneinfo import ZoneInfo

from analysis.errors import DigestError, OverLimit
from analysis.llm.echo import mostly_echo
from analysis.llm.prompts import qa_instructions
from analysis.models import Analysis, Commit, commit_ref
from analysis.questions.answers import (
    answer_from_data,
    example_questions,
    focus_answer,
    help_answer,
    sha_answer,
    unresolved_answer,
)
from analysis.questions.document import Answer, FollowUpFact, QAData
from analysis.questions.fact_check import answer_evidence, check_answer, cited_commits, cited_refs, data_text
from analysis.questions.matching import loosely_area, loosely_titled, titled
from analysis.questions.model_text import MODEL_REPLY_CHARS, add_model_text, bounded_reply
from analysis.questions.parse import NamedCommit, Question, parse_question, question_lang
from analysis.refs import Ref
from bot.chat.recover import lost_answer, recover
from bot.digest.radar import commit_title_ref, with_original_notes
from bot.monitoring import metrics
from bot.monitoring.logs import secrets_of
from bot.ports.protocols import ThreadContext
from bot.ports.secrets import scrub
from bot.store.db import Store
from bot.store.health import database_error

log = logging.getLogger(__name__)

NAMED_MAX = 3  # commits one question may name and get answered about
SHAS_LISTED = 8  # commits listed for a short SHA several of them start


_WORDS = {
    "en": {
        "not_ours": "I don't know which digest this thread belongs to. Ask in the thread of a digest or "
        "of a commit card I posted (the riskiest commits, reverts, what a commit changes, breaking changes, "
        "counts), or post a card here with /digest <sha>, /digest #N or /digest YYYY-MM-DD.",
        "not_found": "I can't find {ref} in {repo}: {error}",
        "removed": "(Fact check: {n} statement(s) naming commits, files or figures that are not in the data "
        "were removed from this answer.)",
        "withheld": "(Fact check: the model's answer named commits, files or figures that are not in the data, "
        "so it was withheld. From the stored data:)",
        "no_model": "(No model answer ({why}). From the stored data:)",
        "late": "none within {s} s",
        "echo": "it repeated its instructions",
        "empty": "it had no visible text",
        "stopping": "the bot is restarting",
        "failed": "the model call failed",
        "cut": "(The model's answer went on past {n} characters; the rest is not shown.)",
        "sources": "Sources: ",
        "limited": "I've asked the model {n} times in this thread in the last minute, which is its limit here; "
        "please ask again in {s} s. Questions the data answers need no model and are answered at once, e.g. "
        "“{example}”.",
    },
    "zh": {
        "not_ours": "我不知道这个讨论串对应哪个摘要。请在我发布的摘要或提交卡片的讨论串中提问（风险最高的提交、回滚、"
        "某个提交改了什么、破坏性变更、数量统计），或用 /digest <sha>、/digest #N、/digest YYYY-MM-DD 发布一张卡片。",
        "not_found": "在 {repo} 中找不到 {ref}：{error}",
        "removed": "（事实核查：本回答删除了 {n} 处提到数据中不存在的提交、文件或数字的内容。）",
        "withheld": "（事实核查：模型的回答提到了数据中不存在的提交、文件或数字，因此未予发布。以下来自已存储的数据：）",
        "no_model": "（没有模型回答（{why}）。以下来自已存储的数据：）",
        "late": "{s} 秒内未回答",
        "echo": "模型复述了提示词",
        "empty": "回答中没有可见的文字",
        "stopping": "机器人正在重启",
        "failed": "模型调用失败",
        "cut": "（模型的回答超过 {n} 个字符，其余部分未显示。）",
        "sources": "来源：",
        "limited": "这个讨论串在过去一分钟内已向模型提问 {n} 次，达到上限；请 {s} 秒后再问。数据能回答的问题不需要模型，"
        "会立即回答，例如“{example}”。",
    },
}


def _w(lang: str, key: str, **fmt: object) -> str:
    text = _WORDS["zh" if lang == "zh" else "en"][key]
    return text.format(**fmt) if fmt else text


async def answer_question(service: Any, ctx: ThreadContext | None, question: str) -> Answer:
    """The answer to post in the thread. `service` is the ChatService (store, sources, answerer)."""
    lang = question_lang(question)
    if ctx is None:
        answer = Answer(lang, source="none", kind="unknown")
        answer.add(_w(lang, "not_ours"))
        return answer
    why = ""
    if ctx.lost is not None:  # ours, but its commits are gone from the store: fetched again if they can be
        ctx, why = await recover(service, ctx)
    try:
        answer = lost_answer(lang, ctx.lost, why) if ctx.lost else await _answer(service, ctx, question, lang)
    except DigestError as exc:  # a source's error while fetching a named commit
        answer = Answer(lang, source="none", kind="error")
        answer.add(scrub(str(exc), secrets_of(service.settings)))
    if answer.listing and answer.cites and ctx.thread:  # "the second one" in a later turn is its second
        repo = ctx.digest.repo if ctx.digest else ctx.commit.repo if ctx.commit else ""
        _remember(
            service, "list", service.store.set_thread_listing, ctx.platform, ctx.thread, repo, answer.cites
        )
    metrics.record_qa(answer.source, answer.removed)
    log.info(
        "qa %s:%s: %s answer (%s), %d commit(s) cited%s",
        ctx.platform,
        ctx.thread,
        answer.source,
        answer.kind,
        len(answer.cites),
        f", {answer.removed} statement(s) removed" if answer.removed else "",
    )
    return answer


async def _answer(service: Any, ctx: ThreadContext, question: str, lang: str) -> Answer:
    data = _day_data(service, ctx)
    q = parse_question(question, authors=data.authors())
    listed = True
    if q.ordinal is not None and not _listing(service, ctx)[1]:  # "the last commit?" with no list: the day's
        listed = False
        q = parse_question(question, authors=data.authors(), listed=False)
    named, missing, stray = await _resolve(service, ctx, q, data, lang)
    if stray and not named and missing is None:
        # "a100", "1234567": no commit has it, so it is a word ("which commits touch a100 kernels?"); a
        # question that is then about "it" is about that SHA, never the focus in its place.
        q = parse_question(question, authors=data.authors(), listed=listed, words=[n.value for n in stray])
        if q.about_commit(True) and not (q.commits or q.title_words or q.ordinal is not None):
            return sha_answer(lang, stray[0].value, data)
        named, missing, _ = await _resolve(service, ctx, q, data, lang)
    if missing is not None and not named:
        if not missing.confident and service.answerer is not None:
            return await _model_answer(service, ctx, q, question, data, missing)
        return missing
    if not named and (titled_one := loosely_titled(q, data)) is not None:  # "is xxhash safe?"
        named, q = [(titled_one, data.analyses.get(titled_one.sha))], replace(q, scope="commit")
    elif not named and (in_area := loosely_area(q, data)) is not None:  # "are the kernels safe?"
        q = in_area
    if named:
        ctx.commit, ctx.analysis = named[0]
        _remember_focus(service, ctx)
    elif ctx.replied and ctx.commit is not None:
        _remember_focus(service, ctx)  # a reply to a card names that card's commit
    else:
        _recall_focus(service, ctx, lang)
    data.focus = ctx.commit
    if ctx.commit is not None and ctx.analysis is None:
        ctx.analysis = await _analysed_again(service, ctx, ctx.commit, lang, data)
    if ctx.commit is not None and ctx.analysis is not None:
        data.analyses[ctx.commit.sha] = ctx.analysis
    _add_followups(service.store, data, ctx)

    answerer = service.answerer
    if q.vague and answerer is not None:
        return await _model_answer(service, ctx, q, question, data)
    if len(named) > 1 and q.about_commit(True):
        return _each(q, data, named)
    answer = answer_from_data(q, data)
    if answer is not None and (answer.confident or answerer is None):
        return answer
    if answerer is not None:
        return await _model_answer(service, ctx, q, question, data, answer)
    return help_answer(lang, data)


def _each(q: Question, data: QAData, named: list[tuple[Commit, Analysis | None]]) -> Answer:
    """One answer about each commit the question names ("compare #1 and #2")."""
    whole = Answer(q.lang, kind=q.intent.value)
    one = replace(q, commits=(), scope="commit")  # about the focus, which we set to each in turn
    for commit, analysis in named:
        if analysis is not None:
            data.analyses[commit.sha] = analysis
        data.focus = commit
        part = answer_from_data(one, data)
        if part is not None:
            whole.lines += part.lines
            whole.cites += [sha for sha in part.cites if sha not in whole.cites]
    data.focus = named[0][0]
    return whole


# --- what the thread is about ---------------------------------------------------------------------------


def _day_data(service: Any, ctx: ThreadContext) -> QAData:
    d = ctx.digest
    if d is not None:
        return QAData(
            repo=d.repo,
            tz=ZoneInfo(d.timezone),
            commits=list(d.commits),
            analyses=dict(d.analyses),
            day=d.day,
        )
    repo = ctx.commit.repo if ctx.commit else (service.settings.digest_repo or "")
    return QAData(repo=repo, tz=ZoneInfo(service.settings.digest_tz))


async def _resolve(
    service: Any, ctx: ThreadContext, q: Question, data: QAData, lang: str
) -> tuple[list[tuple[Commit, Analysis | None]], Answer | None, list[NamedCommit]]:
    """The commits the question names, found or fetched; an answer saying which one cannot be found; the
    weak SHAs no commit has (words, most likely)."""
    found: list[tuple[Commit, Analysis | None]] = []
    missing: Answer | None = None
    stray: list[NamedCommit] = []
    for named in q.commits[:NAMED_MAX]:
        if named.kind == "sha" and (named.short or named.weak):
            # Too short to fetch, or maybe no SHA: one of the commits we know, or said to be none or several.
            shas = _known_shas(service, ctx, named, data)
            if len(shas) > 1:
                candidates = [
                    _candidate(service, ctx, data, named.repo or data.repo, sha) for sha in shas[:SHAS_LISTED]
                ]
                missing = sha_answer(lang, named.value, data, candidates, more=len(shas) > SHAS_LISTED)
                continue
            if not shas:
                if named.weak:
                    stray.append(named)
                else:
                    missing = sha_answer(lang, named.value, data)
                continue
            named = NamedCommit("sha", shas[0], named.repo)
        try:
            hit = await _find(service, ctx, named, data, lang)
        except OverLimit:
            raise  # the thread's rate: said as it is, not as a commit that cannot be found
        except DigestError as exc:
            if named.weak:
                continue
            missing = Answer(lang, source="none", kind="not found")
            error = scrub(str(exc), secrets_of(service.settings))
            missing.add(_w(lang, "not_found", ref=named.text, repo=named.repo or data.repo, error=error))
            continue
        if hit is not None and all(c.sha != hit[0].sha for c, _ in found):
            found.append(hit)
    if q.commits:
        return found, missing, stray
    if q.ordinal is not None:  # "the second one": of the thread's last list
        repo, shas = _listing(service, ctx)
        index = q.ordinal - 1 if q.ordinal > 0 else q.ordinal
        if not -len(shas) <= index < len(shas):
            return [], unresolved_answer(q, data, [], len(shas)), []
        try:
            hit = await _find(service, ctx, NamedCommit("sha", shas[index], repo or None), data, lang)
        except DigestError as exc:  # listed, but gone from the store and the source
            hit, error = None, scrub(str(exc), secrets_of(service.settings))
        else:
            error = "not found"
        if hit is not None:
            return [hit], None, []
        missing = Answer(lang, source="none", kind="not found")
        missing.add(_w(lang, "not_found", ref=shas[index][:12], repo=repo or data.repo, error=error))
        return [], missing, []
    if q.title_words:  # "the bump version commit": the one commit whose title says so, never a guess
        data.focus = ctx.commit
        matches = titled(q, data)
        if len(matches) == 1:
            commit = matches[0]
            analysis = data.analyses.get(commit.sha) or (ctx.analysis if commit is ctx.commit else None)
            return [(commit, analysis)], None, []
        return [], unresolved_answer(q, data, matches), []
    return found, missing, stray


def _known_shas(service: Any, ctx: ThreadContext, named: NamedCommit, data: QAData) -> list[str]:
    """The full SHAs a SHA prefix starts among the thread's commits and the store (commits, history): the
    thread's first, at most SHAS_LISTED + 1."""
    repo = named.repo or data.repo
    shas: list[str] = []
    if repo == data.repo:
        for commit in [*data.commits, *([ctx.commit] if ctx.commit else [])]:
            if commit.sha.lower().startswith(named.value) and commit.sha not in shas:
                shas.append(commit.sha)
    if named.weak and named.short:
        return shas  # "a100", "bf16": among a long history some SHA starts so; only the thread's own count
    for sha in service.store.shas_starting(repo, named.value, SHAS_LISTED + 1):
        if sha not in shas:
            shas.append(sha)
    return shas[: SHAS_LISTED + 1]


def _candidate(
    service: Any, ctx: ThreadContext, data: QAData, repo: str, sha: str
) -> tuple[str, str, str | None]:
    """(sha, title, web page) of a commit we know, for a list asking which one was meant."""
    ours = [*data.commits, *([ctx.commit] if ctx.commit else [])]
    for commit in ours:
        if commit.sha == sha:
            return sha, commit.title, commit.url
    title, _ = commit_title_ref(service.store, repo, sha)
    near = next((c for c in ours if c.repo == repo), None)
    return sha, title, _url_of(service.store, near, sha) if near is not None else None


async def _find(
    service: Any, ctx: ThreadContext, named: NamedCommit, data: QAData, lang: str
) -> tuple[Commit, Analysis | None] | None:
    def matches(c: Commit) -> bool:
        return (
            c.pr_number == int(named.value) if named.kind == "pr" else c.sha.lower().startswith(named.value)
        )

    repo = named.repo or data.repo
    if repo == data.repo:
        for commit in [*data.commits, *([ctx.commit] if ctx.commit else [])]:
            if matches(commit):
                analysis = data.analyses.get(commit.sha) or (ctx.analysis if commit is ctx.commit else None)
                return commit, analysis
    store = service.store
    shas = (
        store.shas_for_pr(repo, int(named.value))
        if named.kind == "pr"
        else store.find_shas(repo, named.value)
    )
    if len(shas) == 1:
        commit = store.get_commit(repo, shas[0])
        analysis = store.latest_analysis(repo, shas[0], lang) or store.latest_analysis(repo, shas[0])
        if commit is not None and analysis is not None:
            return commit, with_original_notes(store, repo, analysis, analysis.lang)
    if named.weak:
        return None  # digits only: a SHA only when a commit we know has it

    # fetched and analysed on demand, ranked as the thread's digest zone would rank it
    return await service.card(Ref(named.kind, named.value, repo), lang, data.tz.key, asker=_asker(ctx))


def _asker(ctx: ThreadContext) -> str:
    """Who a thread's new model analyses are counted against: the thread, held to CHAT_CARDS_PER_MINUTE
    as a person's `/digest <sha>` cards are."""
    return f"{ctx.platform}:thread:{ctx.thread}" if ctx.thread else ""


def _listing(service: Any, ctx: ThreadContext) -> tuple[str, list[str]]:
    """The repository and SHAs of the thread's last list (none: "", [])."""
    return service.store.thread_listing(ctx.platform, ctx.thread) if ctx.thread else ("", [])


def _remember_focus(service: Any, ctx: ThreadContext) -> None:
    if ctx.commit is not None and ctx.thread:
        _remember(
            service,
            "focus",
            service.store.set_thread_focus,
            ctx.platform,
            ctx.thread,
            ctx.commit.repo,
            ctx.commit.sha,
        )


def _remember(service: Any, what: str, write: Any, *args: Any) -> None:
    """A thread's memory (its focus, its last list) only helps later turns: a database that cannot take
    the write (read-only, disk full, busy) costs that, never the answer being made; one warning line. It
    waits Store.LOOP_WAIT at most: on the event loop, a busy database held every ack up to the busy timeout."""
    impatient = getattr(service.store, "impatient", None)
    try:
        with impatient() if impatient is not None else contextlib.nullcontext():
            write(*args)
    except sqlite3.Error as exc:
        error = database_error(exc, getattr(service.store, "path", None), Store.LOOP_WAIT)
        log.warning("qa: the thread's %s is not remembered: %s", what, error)


async def _analysed_again(
    service: Any, ctx: ThreadContext, commit: Commit, lang: str, data: QAData
) -> Analysis | None:
    """The thread's commit when its stored analysis is gone (deleted, or a card's row pruned): analysed
    again as `/digest <sha>` would (the store first), so "what are the risks?" is answered, not met
    with the bare title; a new model analysis counts against the thread's card rate like any other, and
    past it the asker hears when to ask again. None when it fails (the answer then says it has no stored
    analysis)."""
    ref = Ref("sha", commit.sha, commit.repo)
    try:
        _, analysis = await service.card(ref, lang, data.tz.key, asker=_asker(ctx))
    except OverLimit:
        raise
    except DigestError as exc:
        log.warning("qa: the analysis of %s is gone and could not be made again: %s", commit.short_sha, exc)
        return None
    return with_original_notes(service.store, commit.repo, analysis, analysis.lang)


def _recall_focus(service: Any, ctx: ThreadContext, lang: str) -> None:
    """The commit an earlier turn of this thread named, when there was one."""
    stored = service.store.thread_focus(ctx.platform, ctx.thread) if ctx.thread else None
    if stored is None:
        return
    repo, sha = stored
    if ctx.commit is not None and ctx.commit.sha == sha:
        return
    if ctx.digest is not None:
        for commit in ctx.digest.commits:
            if commit.sha == sha:
                ctx.commit, ctx.analysis = commit, ctx.digest.analyses.get(sha)
                return
    commit = service.store.get_commit(repo, sha)
    if commit is not None:
        analysis = service.store.latest_analysis(repo, sha, lang) or service.store.latest_analysis(repo, sha)
        ctx.commit, ctx.analysis = commit, analysis


def _add_followups(store: Any, data: QAData, ctx: ThreadContext) -> None:
    """The stored follow-up links of the day's commits and the focus: what reverted or fixed them later,
    what they revert or fix."""
    commits = list(data.commits)
    if data.focus is not None and all(c.sha != data.focus.sha for c in commits):
        commits.append(data.focus)
    for commit in commits:
        for link in store.followups_of(commit.repo, commit.sha):
            fact = _fact(store, commit, link, link.follow_up, link.follow_up_at)
            data.later.setdefault(commit.sha, []).append(fact)
        for link in store.followed_up_by(commit.repo, commit.sha):
            fact = _fact(store, commit, link, link.original, link.original_at)
            data.earlier.setdefault(commit.sha, []).append(fact)
    branch = ctx.digest.branch if ctx.digest else None
    if branch:
        covered = store.history_range(data.repo, branch)
        data.history_until = covered[1] if covered else None


def _fact(store: Any, commit: Commit, link: Any, other: str, at: Any) -> FollowUpFact:
    """A stored link seen from `commit`: the other commit's title, #N, web page, and when it landed."""
    title, ref = commit_title_ref(store, commit.repo, other)
    return FollowUpFact(link.kind, other, title, ref, _url_of(store, commit, other), at)


def _url_of(store: Any, near: Commit, sha: str) -> str | None:
    """A commit's web page: stored, else beside a commit of the same repository."""
    commit = store.get_commit(near.repo, sha)
    if commit is not None:
        return commit.url
    if near.url and "/commit/" in near.url:
        return near.url.split("/commit/", 1)[0] + "/commit/" + sha
    return None


# --- the model ------------------------------------------------------------------------------------------


async def _model_answer(
    service: Any, ctx: ThreadContext, q: Question, question: str, data: QAData, fallback: Answer | None = None
) -> Answer:
    """The model's answer, checked; `fallback` (else the focus's / the day's data) when it fails."""
    lang = q.lang
    wait = service.qa_limiter.take(f"{ctx.platform}:{ctx.thread}")
    if wait:
        answer = Answer(lang, source="limited", kind="limited")
        answer.add(
            _w(
                lang,
                "limited",
                n=service.qa_limiter.limit,
                s=round(wait),
                example=example_questions(lang, data)[0],
            )
        )
        return answer
    timeout = service.settings.qa_answer_timeout
    # "What else landed today?" after a commit was named: the day's commits, not the focus's diff.
    day_wide = q.scope == "day" and not q.commits and ctx.digest is not None
    asked = replace(ctx, commit=None, analysis=None) if day_wide else ctx
    if day_wide:
        data = replace(data, focus=None)
    try:
        # The client's own timeout is per attempt (LLM_TIMEOUT, 120 s, up to LLM_MAX_RETRIES more): someone
        # waiting in a thread gets the data's answer after QA_ANSWER_TIMEOUT instead of minutes of silence.
        async with asyncio.timeout(timeout):
            text = await _unless_stopping(service, service.answerer.answer(asked, question, lang))
    except Exception as exc:  # the thread still gets an answer: the data's
        late = isinstance(exc, TimeoutError)
        # said in words: a Python class name means nothing in a thread (the log keeps it)
        why = (
            _w(lang, "late", s=f"{timeout:g}")
            if late
            else _w(lang, "stopping")
            if isinstance(exc, _Stopping)
            else _w(lang, "failed")
        )
        log.warning(
            "LLM answer failed (%s); answering from the stored data",
            why if late else f"{type(exc).__name__}: {scrub(str(exc), secrets_of(service.settings))}",
        )
        return _fallen_back(fallback, data, lang, why)
    text, cut = bounded_reply(text)
    if not text:  # nothing visible: zero-width characters, blanks
        log.warning("LLM answer has no visible text; answering from the stored data")
        return _fallen_back(fallback, data, lang, _w(lang, "empty"))
    if mostly_echo(text, qa_instructions(lang)):  # our rules said back: no answer of its own
        log.warning("LLM answer repeats its instructions; answering from the stored data")
        return _fallen_back(fallback, data, lang, _w(lang, "echo"))
    commits = _thread_commits(service.store, data)
    checked = check_answer(text, _evidence(service.store, data, commits, text))
    if checked.removed:
        log.info(
            "qa: the fact-check removed %d statement(s) from the model's answer (cited: %s)",
            checked.removed,
            ", ".join(checked.items[:20]),
        )
    if not checked.text:
        answer = fallback or focus_answer(data, lang)
        answer.source, answer.removed, answer.removed_items = "fallback", checked.removed, checked.items
        answer.lines.insert(0, (_w(lang, "withheld"),))
        return answer
    answer = Answer(lang, source="llm", kind="model", removed=checked.removed, removed_items=checked.items)
    add_model_text(answer, checked.text, commits)  # its Markdown as our spans, links only to our commits
    if cut:
        answer.add(_w(lang, "cut", n=f"{MODEL_REPLY_CHARS:,}"))
    if checked.removed:
        answer.add(_w(lang, "removed", n=checked.removed))
    cited = cited_commits(checked.text, commits) or ([data.focus] if data.focus else [])
    if cited:
        spans: list[Any] = [_w(lang, "sources")]
        for i, commit in enumerate(cited):
            spans += ([", "] if i else []) + [
                answer.cite(commit),
                f" {commit_ref(commit)}" if commit.pr_number else "",
            ]
        answer.add(*spans)
    return answer


class _Stopping(Exception):
    """The service is stopping while the model has not answered."""


async def _unless_stopping(service: Any, asked: Any) -> str:
    """The model's answer, or _Stopping once the service begins to stop: the shutdown's grace (30 s) is
    shorter than QA_ANSWER_TIMEOUT, and a question cancelled at its end went unanswered, unlogged."""
    stopping = getattr(service, "stopping", None)
    if stopping is None:
        return await asked
    answer = asyncio.ensure_future(asked)
    stop = asyncio.ensure_future(stopping.wait())
    try:
        await asyncio.wait({answer, stop}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
        if not answer.done():
            answer.cancel()
    if not answer.done() or answer.cancelled():
        raise _Stopping("the service is stopping")
    return answer.result()


def _fallen_back(fallback: Answer | None, data: QAData, lang: str, why: str) -> Answer:
    """The data's answer when the model gave none, saying why."""
    answer = fallback or focus_answer(data, lang)
    answer.source = "fallback"
    answer.lines.insert(0, (_w(lang, "no_model", why=why),))
    return answer


def _thread_commits(store: Any, data: QAData) -> list[Commit]:
    """The commits an answer may speak about: the day's, the focus, and those of their follow-ups."""
    commits = {c.sha: c for c in data.commits}
    if data.focus is not None:
        commits.setdefault(data.focus.sha, data.focus)
    for facts in (*data.later.values(), *data.earlier.values()):
        for fact in facts:
            other = store.get_commit(data.repo, fact.sha)
            if other is not None:
                commits.setdefault(other.sha, other)
    return list(commits.values())


def _evidence(store: Any, data: QAData, commits: list[Commit], text: str):
    """What the model's answer may cite: the thread's commits and analyses, the figures we computed, the
    follow-ups, and the SHAs / PR numbers the store knows of those the answer names."""
    extra = [data.day.isoformat() if data.day else "", str(len(data.commits))]
    for c in commits:
        extra.append(c.committed_at.astimezone(data.tz).date().isoformat())
        extra.append(c.committed_at.astimezone(UTC).date().isoformat())
    for facts in (*data.later.values(), *data.earlier.values()):
        for fact in facts:
            extra += [fact.sha, fact.title, fact.ref, fact.at.astimezone(data.tz).date().isoformat()]
            extra.append(fact.at.astimezone(UTC).date().isoformat())
    counts: dict[str, int] = {}
    for a in data.analyses.values():
        counts[a.importance.value] = counts.get(a.importance.value, 0) + 1
    extra += [str(n) for n in counts.values()]
    shas, prs = cited_refs(text)
    known_shas = {s for s in shas if store.known_sha(data.repo, s)}
    known_prs = {n for n in prs if store.shas_for_pr(data.repo, n)}
    analyses = [data.analyses[c.sha] for c in commits if c.sha in data.analyses]
    return answer_evidence(commits, data_text(commits, analyses, extra), known_shas, known_prs)
