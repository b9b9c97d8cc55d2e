"""A thread of ours whose commits the store no longer has (their rows deleted by hand, a database restored
without them): the post still says which digest or card the thread is, and the digest's record still holds
the day's list and analyses. The missing commits are fetched again from the repository's source and stored
(no model call), and the question is answered as before. When that cannot be done, or the digest's record
itself is gone, the answer says which digest it was, what is missing and what to ask for — never "I don't
know which digest this thread belongs to"."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

from analysis.errors import DigestError
from analysis.labels import label
from analysis.questions.document import Answer
from bot.digest.pipeline import keep_commits
from bot.monitoring.logs import secrets_of
from bot.ports.protocols import LostCommits, ThreadContext
from bot.ports.secrets import scrub

log = logging.getLogger(__name__)

FETCHES_AT_ONCE = 8  # commits asked of the source at a time (a day may have hundreds)
_DIGEST_KEY = re.compile(r"(?P<repo>[^@]+)@.+/(?P<day>\d{4}-\d{2}-\d{2})/.+/[^/]+")


def lost_digest(store: Any, key: str, message_id: str | None, forgotten: bool = False) -> LostCommits | None:
    """What a digest post's thread lacks, its digest not loading: the commits its record lists that the store
    does not have, or (the record gone) the digest named by its key alone. None: not a digest's key.
    `forgotten`: the store has no record of the post either (the platform's message named the key)."""
    row = store.get_digest(key)
    if row is not None:
        shas = json.loads(row["shas"])
        stored = store.stored_shas(row["repo"], shas)
        missing = tuple(sha for sha in shas if sha not in stored)
        return LostCommits(key, row["repo"], row["day"], missing, message_id, forgotten)
    named = _DIGEST_KEY.fullmatch(key)
    if named is None:
        return None
    return LostCommits(key, named["repo"], named["day"], (), message_id, forgotten)


async def recover(service: Any, ctx: ThreadContext) -> tuple[ThreadContext, str]:
    """The thread's context once its lost commits are fetched again and stored; else the same context and
    why not ("" when there was nothing to fetch: the digest's record is gone, which `/digest <day>`
    rebuilds — that may call the model, so it is the asker's to request, under their rate)."""
    lost = ctx.lost
    assert lost is not None
    if not lost.shas:
        return ctx, ""
    try:
        source = service.source(lost.repo)
    except DigestError as exc:
        return ctx, scrub(str(exc), secrets_of(service.settings))
    try:
        commits = await _fetch(source, lost.shas)
        await asyncio.to_thread(keep_commits, service.store, commits)
    except DigestError as exc:  # gone from the repository, or the source refuses
        return ctx, scrub(str(exc), secrets_of(service.settings))
    finally:
        await source.aclose()
    if lost.forgotten:  # no record of the post: the key its platform message carried, again
        again = service.context_of_key(ctx.platform, ctx.thread, lost.key, lost.message_id, forgotten=True)
    else:
        again = service.thread_context(ctx.platform, ctx.thread, lost.message_id)
    if again is None or again.lost is not None:
        return ctx, "the fetched commits did not complete it"
    again.history = ctx.history
    log.info(
        "thread %s:%s: %d commit(s) of %s were missing from the store: fetched again",
        ctx.platform,
        ctx.thread,
        len(lost.shas),
        lost.key,
    )
    return again, ""


async def _fetch(source: Any, shas: tuple[str, ...]) -> list[Any]:
    turns = asyncio.Semaphore(FETCHES_AT_ONCE)

    async def one(sha: str) -> Any:
        async with turns:
            return await source.get_commit(sha)

    return list(await asyncio.gather(*(one(sha) for sha in shas)))


def lost_answer(lang: str, lost: LostCommits, error: str) -> Answer:
    """Which digest or card the thread is, what the store lacks, and what to ask for."""
    answer = Answer(lang, source="none", kind="lost")
    if lost.key.startswith("card:"):
        sha = lost.shas[0][:12] if lost.shas else ""
        answer.add(label(lang, "thread_lost_card", repo=lost.repo, sha=sha, error=error))
    elif lost.shas:
        answer.add(
            label(lang, "thread_lost_commits", repo=lost.repo, day=lost.day, n=len(lost.shas), error=error)
        )
    elif lost.forgotten:  # nothing of it stored: a day's rebuild is a choice, a commit's card is cheap
        answer.add(label(lang, "thread_forgotten_digest", repo=lost.repo, day=lost.day))
    else:
        answer.add(label(lang, "thread_lost_digest", repo=lost.repo, day=lost.day))
    return answer
