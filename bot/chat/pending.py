"""Thread questions answered once, even across a crash. A question is claimed in the store before it is
answered, with what it takes to answer it later (bot/ports/protocols.Question) and who claimed it; the
claim is marked answered once the answer is posted. A process killed in between (kill -9, out of memory,
a deploy) leaves its claim 'answering', and the platform does not deliver the acknowledged question again:
the platform's runtime runs `keep_answering`, which renews this process's claims and takes over and
answers the claims of processes that are gone.

A claimant is gone when it stopped renewing its claims (CLAIM_TTL), or at once when it ran on this host
and its pid is not running, or is ours (a container's first process gets the same pid at every restart).
The take-over is one write transaction, so two processes starting at once never both get a question.
Before posting, the thread is read back for an answer already there (posted by the dead process just
before it died): it is not posted again. Questions asked more than RECOVER_WITHIN ago are not worth an
answer any more: dropped, with a line naming them."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sqlite3
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from analysis.errors import DigestError
from analysis.questions.parse import question_lang
from bot.chat.floods import refusal_text
from bot.ports.protocols import Question, ThreadAnswerer, ThreadContext

log = logging.getLogger(__name__)

CLAIM_TTL = 60.0  # seconds a claim stays its claimant's without being renewed
RENEW_EVERY = 20.0  # seconds between the renewals of our claims, and the looks for abandoned ones
RECOVER_WITHIN = timedelta(hours=1)  # a question asked longer ago is dropped, not answered late
ANSWERS_AT_ONCE = 4  # recovered questions answered at a time (each may call the model)


@dataclass(frozen=True, slots=True)
class Claimant:
    """This process, as its claims name it: a token of its own (a pid is reused), its host and pid."""

    owner: str = field(default_factory=lambda: uuid.uuid4().hex)
    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)

    def columns(self) -> dict[str, Any]:
        return {"owner": self.owner, "host": self.host, "pid": self.pid}


def record_of(question: Question, claimant: Claimant) -> dict[str, Any]:
    """The claim's columns beside its key (bot/store/migrations._m_pending_questions)."""
    return {
        "thread_id": question.thread,
        "replied_to": question.replied_to,
        "question": question.text,
        "asker": question.asker,
        "mentioned": int(question.mentioned),
        "asked_at": question.asked_at.isoformat(),
        **claimant.columns(),
    }


def stored_question(row: dict[str, Any]) -> Question:
    """A claim read back from the store."""
    return Question(
        platform=row["platform"],
        channel=row["channel"],
        message_id=row["message_id"],
        text=row["question"],
        asker=row["asker"] or "",
        mentioned=bool(row["mentioned"]),
        asked_at=datetime.fromisoformat(row["asked_at"]),
        thread=row["thread_id"],
        replied_to=row["replied_to"],
    )


def named(question: Question) -> str:
    """A question as log lines name it (never its text: the person's words stay in the thread)."""
    return f"{question.platform}:{question.channel} message {question.message_id}"


async def answer_once(service: Any, answerer: ThreadAnswerer, question: Question) -> None:
    """A question just delivered: claimed, answered, marked. A thread not ours is left alone unless we
    were mentioned; a question claimed already (a delivery again) is not answered again. Past the answers
    a thread, an asker or the bot may have in a minute (bot/chat/floods.py) the thread is told once a
    minute when to ask again, and the question is not answered (nor claimed: a crash leaves nothing)."""
    floods = getattr(service, "answer_floods", None)
    thread, asker = _thread_key(question), f"{question.platform}:{question.asker}" if question.asker else ""
    refused = floods.admit(thread, asker) if floods is not None else None
    if refused is not None and not refused.notice:
        return  # told this minute already: not even its digest is loaded (a flood would load it 1,000 times)
    ctx = await asyncio.to_thread(context_of, service, question)
    if ctx is None:
        ctx = await forgotten_context(service, answerer, question)
    if ctx is None and not question.mentioned:
        if floods is not None and refused is None:
            floods.give_back(thread, asker)  # not one of our threads: it costs no answer
        return  # not one of our threads: stay silent
    if refused is not None:
        log.info(
            "%s: past %d answers a minute (%s cap): the thread is told",
            named(question),
            refused.limit,
            refused.reason,
        )
        await answerer.notify(question, refusal_text(question_lang(question.text), refused))
        return
    if not await asyncio.to_thread(begin, service, question):
        log.info("%s is answered already: not again", named(question))
        return
    await _answer_claimed(service, answerer, question, ctx)


def _thread_key(question: Question) -> str:
    """The thread a question's answer goes to, as the answer caps count it."""
    return f"{question.platform}:{question.channel}:{question.thread or question.message_id}"


def begin(service: Any, question: Question) -> bool:
    """Claim the answer in the store, with what it takes to answer it later: False when it was answered,
    or is being answered, by this process or another. A store that cannot say answers."""
    try:
        return service.store.begin_answer(
            question.platform,
            question.channel,
            question.message_id,
            record=record_of(question, service.claimant),
        )
    except (sqlite3.Error, DigestError) as exc:
        # said once per question at most: the answer's own store writes warn of a broken store
        log.info("cannot record %s as answered: %s", named(question), exc)
        return True


def end(service: Any, question: Question, answered: bool) -> None:
    """The claimed answer is posted (never again), or it failed: a later delivery may try again."""
    try:
        service.store.end_answer(question.platform, question.channel, question.message_id, answered)
    except (sqlite3.Error, DigestError) as exc:
        log.info("cannot record %s as answered: %s", named(question), exc)


def context_of(service: Any, question: Question) -> ThreadContext | None:
    """The digest or card the question's thread (or the message it replies to) belongs to."""
    if not question.thread and not question.replied_to:
        return None
    return service.thread_context(question.platform, question.thread or question.channel, question.replied_to)


async def forgotten_context(service: Any, answerer: Any, question: Question) -> ThreadContext | None:
    """A thread the store has no record of (a wiped database, another host) that our parent message still
    names, on a platform whose answerer can read it (bot.ports.protocols.ThreadKeys: Slack's metadata,
    Discord's embed footer): its context from that key, so the asker hears which day it is and what to ask
    rather than silence."""
    thread_key = getattr(answerer, "thread_key", None)
    if thread_key is None or not question.thread:
        return None
    key = await thread_key(question)
    if not key:
        return None
    ctx = await asyncio.to_thread(
        service.context_of_key, question.platform, question.thread, key, None, None, True
    )
    if ctx is not None:
        log.info("%s: a thread the store has no record of, named %s by its parent", named(question), key)
    return ctx


async def _answer_claimed(
    service: Any, answerer: ThreadAnswerer, question: Question, ctx: ThreadContext | None
) -> None:
    """Answer a claimed question and mark it. Cancelled (the service stopping past its grace), the claim
    is left as it is: the next start answers it."""
    answered = False
    try:
        answered = await answerer.reply(question, ctx)
    except asyncio.CancelledError:
        log.info("%s: stopped before its answer was posted; the next start answers it", named(question))
        raise
    except BaseException:
        await asyncio.to_thread(end, service, question, False)
        raise
    await asyncio.to_thread(end, service, question, answered)


async def keep_answering(service: Any, answerer: ThreadAnswerer, every: float = RENEW_EVERY) -> None:
    """Until cancelled, every `every` seconds (the first time at once): renew this process's claims on
    the platform's questions, then take over the claims of processes that are gone and answer them."""
    turns = asyncio.Semaphore(ANSWERS_AT_ONCE)
    running: set[asyncio.Task[None]] = set()
    try:
        while True:
            try:
                questions = await asyncio.to_thread(_take_over, service, answerer.platform)
            except (sqlite3.Error, DigestError) as exc:  # the store failing must not end the loop
                log.warning("pending questions: cannot read or update the store: %s", exc)
                questions = []
            except Exception:  # nor a bug: the next turn tries again
                log.exception("pending questions: looking for them failed")
                questions = []
            for question in questions:
                task = asyncio.create_task(_recover(service, answerer, question, turns))
                running.add(task)
                task.add_done_callback(running.discard)
            await asyncio.sleep(every)
    finally:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)


def _take_over(service: Any, platform: str) -> list[Question]:
    store, claimant = service.store, service.claimant
    store.renew_answers(platform, claimant.owner)
    since = service.clock() - RECOVER_WITHIN
    taken, dropped = store.take_over_answers(platform, claimant.columns(), CLAIM_TTL, since)
    for row in dropped:
        log.info(
            "%s was asked at %s and left unanswered by a process that stopped: too old to answer now,"
            " dropped",
            named(stored_question(row)),
            row["asked_at"][:19].replace("T", " "),
        )
    questions = [stored_question(row) for row in taken]
    for question in questions:
        log.info("%s was left unanswered by a process that stopped: answering it", named(question))
    return questions


async def _recover(
    service: Any, answerer: ThreadAnswerer, question: Question, turns: asyncio.Semaphore
) -> None:
    """A taken-over question: looked for in its thread first (the dead process may have posted it just
    before it died), answered when it is not there."""
    async with turns:
        try:
            if await answerer.answered(question):
                log.info("%s was answered before its process stopped: not again", named(question))
                await asyncio.to_thread(end, service, question, True)
                return
            ctx = await asyncio.to_thread(context_of, service, question)
            if ctx is None:
                ctx = await forgotten_context(service, answerer, question)
            if ctx is None and not question.mentioned:
                await asyncio.to_thread(end, service, question, False)
                return
            await _answer_claimed(service, answerer, question, ctx)
        except DigestError as exc:  # its thread cannot be read: answering blind could answer twice
            log.warning("%s cannot be answered after the restart: %s", named(question), exc)
            await asyncio.to_thread(end, service, question, False)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug: the claim ended as for a failed answer, not renewed for ever
            log.exception("%s: answering it after the restart failed; not tried again", named(question))
            await asyncio.to_thread(end, service, question, False)
