"""Posting a digest into a chat channel, idempotently, whatever the platform.

A digest becomes an ordered list of items: the parent message, then in its thread one card per
high commit, the compact list of medium commits, and the full report as a file. Every item posted
is recorded (platform, channel, digest key, item) the moment the platform accepts it, so posting the
same digest again posts nothing and an interrupted post resumes with only the missing items.

A day posted in a channel is what it was: the items its parent announced are recorded with it (its
plan), and a later post of the day — after the ranking changed, say — adds none that the parent does
not announce, unless a re-post (`repost=True`, `digestbot post --repost`) first edits the parent.

Two more guards keep "never twice" across processes and inside an item:
- `posting_lock()`: a lock in this process and a lease row in SQLite per (platform, channel, job) —
  a day, a week, a notice or a banner: a second process posting the same job waits for the first
  (bounded), then finds it all posted; a crashed holder's lease expires, and one whose process is gone
  on this host is free at once;
- `part_log()`: while an item is being posted, the adapter records each platform message of it (a
  card split over several messages) the moment it is accepted, and skips the parts already up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import weakref
from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from analysis.errors import ServiceError
from analysis.models import Analysis, Commit, Digest, Importance
from bot.pipeline import key_of
from bot.store import Store

log = logging.getLogger(__name__)

LEASE_TTL = 60.0  # seconds a post's lease lasts without renewal (renewed every LEASE_TTL / 3)
LEASE_WAIT = 120.0  # seconds a second poster of the same digest waits for the first to finish


@dataclass(frozen=True, slots=True)
class Posted:
    message_id: str
    thread_id: str | None = None  # where replies go (Slack: the parent ts; Discord: the thread id)


class Poster(Protocol):
    """What a chat adapter implements; each call posts exactly one logical item (it may split it
    into several platform messages to respect limits, and returns the first one's id)."""

    platform: str

    async def post_parent(self, channel: str, digest: Digest) -> Posted: ...

    async def post_card(
        self, channel: str, thread: str, digest: Digest, commit: Commit, analysis: Analysis
    ) -> Posted: ...

    async def post_medium_list(
        self, channel: str, thread: str, digest: Digest, commits: list[Commit]
    ) -> Posted: ...

    async def post_report(
        self, channel: str, thread: str, digest: Digest, filename: str, markdown: str
    ) -> Posted: ...


@dataclass(slots=True)
class PostResult:
    key: str
    posted: list[str]  # items posted by this call
    skipped: list[str]  # items found already posted
    thread_id: str | None
    edited: list[str] = field(default_factory=list)  # items edited in place (a re-post's parent)


def digest_items(digest: Digest) -> list[str]:
    """The ordered item names of a digest's post. Stable: they are the idempotency keys."""
    items = ["parent"]
    items += [f"card:{c.sha}" for c in digest.by_importance(Importance.HIGH)]
    if digest.by_importance(Importance.MEDIUM):
        items.append("medium")
    items.append("report")
    return items


def report_filename(digest: Digest) -> str:
    return f"digest-{digest.repo.replace('/', '-')}-{digest.day.isoformat()}.{digest.lang}.md"


@dataclass(slots=True)
class PartLog:
    """The parts of one item already up (part → message id, from the store) and how to record more."""

    store: Store
    platform: str
    channel: str
    key: str
    item: str
    done: dict[int, str] = field(default_factory=dict)

    def record(self, part: int, message_id: str) -> None:
        self.done[part] = message_id
        self.store.record_part(self.platform, self.channel, self.key, self.item, part, message_id)


_part_log: ContextVar[PartLog | None] = ContextVar("digestbot_part_log", default=None)


def part_log() -> PartLog | None:
    """The item being posted by post_digest in this task, for adapters that post it in parts."""
    return _part_log.get()


def lease_holder() -> str:
    return f"digestbot pid {os.getpid()} on {socket.gethostname()}"


class Busy(ServiceError):
    """Another poster holds the job's lease (in this process or another) beyond the wait."""


# One lock per (platform, channel, job) while a post is in progress: the scheduler and a chat
# command posting the same digest at the same moment must not both post the parent. Weak values: a
# lock lives only while someone holds it.
_posting: weakref.WeakValueDictionary[tuple[str, str, str], asyncio.Lock] = weakref.WeakValueDictionary()


@contextlib.asynccontextmanager
async def posting_lock(
    store: Store, platform: str, channel: str, key: str, *, wait: float = LEASE_WAIT
) -> AsyncIterator[None]:
    """Hold the posting job `key` in `channel` for the block: in this process (a lock) and across the
    processes sharing the database (a lease). Every posting job — a day, a week, a notice, a banner —
    runs inside one, then looks at what is recorded before it posts. Raises Busy after `wait` s."""
    lock = _posting.get((platform, channel, key))
    if lock is None:
        lock = _posting[(platform, channel, key)] = asyncio.Lock()
    busy = Busy(f"{platform}:{channel}:{key} is being posted in this process")
    if lock.locked() and wait <= 0:
        raise busy
    try:
        await asyncio.wait_for(lock.acquire(), wait) if lock.locked() else await lock.acquire()
    except TimeoutError:
        raise busy from None
    try:
        async with _leased(store, f"post:{platform}:{channel}:{key}", wait):
            yield
    finally:
        lock.release()


async def post_digest(
    poster: Poster,
    store: Store,
    channel: str,
    digest: Digest,
    *,
    wait: float = LEASE_WAIT,
    repost: bool = False,
) -> PostResult:
    """Post what is missing of this digest in this channel; record each item as soon as it is up.
    A day already posted here keeps what its parent announced; `repost` edits the parent to today's
    digest first and then adds what that announces."""
    key = key_of(digest)
    async with posting_lock(store, poster.platform, channel, key, wait=wait):
        result = await _post_missing(poster, store, channel, digest, key, repost)
        await _correct_originals(poster, store, channel, digest)
        return result


async def _correct_originals(poster: Poster, store: Store, channel: str, digest: Digest) -> None:
    """The radar: banner the cards of earlier commits this digest reverts or fixes (bot/radar.py)."""
    from bot.radar import correct_originals

    await correct_originals(poster, store, channel, digest)


@contextlib.asynccontextmanager
async def _leased(store: Store, name: str, wait: float) -> AsyncIterator[None]:
    """Hold the lease `name` for the block: wait up to `wait` seconds for another holder, renew it
    while the block runs, release it after. Another process still holding it: one clear error."""
    holder = lease_holder()
    deadline = time.monotonic() + wait
    while (current := store.take_lease(name, holder, LEASE_TTL)) is not None:
        if time.monotonic() >= deadline:
            since = str(current["acquired_at"])[:19].replace("T", " ")
            raise Busy(
                f"{name.removeprefix('post:')} is being posted by {current['holder']} (since {since} UTC);"
                " this post stopped so as not to post it twice: run it again once that one has finished"
            )
        await asyncio.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
    renew = asyncio.create_task(_renew(store, name, holder), name=f"renew {name}")
    try:
        yield
    finally:
        renew.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renew
        store.release_lease(name, holder)


async def _renew(store: Store, name: str, holder: str) -> None:
    while True:
        await asyncio.sleep(LEASE_TTL / 3)
        if store.take_lease(name, holder, LEASE_TTL) is not None:
            log.warning("lost the lease %s to another process while posting", name)
            return


def announced(store: Store, platform: str, channel: str, key: str, done: dict[str, Any]) -> list[str] | None:
    """The items the parent posted in this channel announced (its plan); for a post recorded before
    plans were, what it holds when it was finished (its report is up); None when unknown."""
    plan = store.get_plan(platform, channel, key)
    if plan is not None:
        return plan
    return list(done) if "report" in done else None


async def _post_missing(
    poster: Poster, store: Store, channel: str, digest: Digest, key: str, repost: bool = False
) -> PostResult:
    done = store.get_posts(poster.platform, channel, key)
    result = PostResult(key=key, posted=[], skipped=[], thread_id=None)
    by_sha = {c.sha: c for c in digest.commits}
    items = digest_items(digest)
    if "parent" not in done:
        store.record_plan(poster.platform, channel, key, items)
    elif repost:
        await _edit_parent(poster, store, channel, digest, done["parent"])
        store.record_plan(poster.platform, channel, key, items)
        result.edited.append("parent")
    elif (plan := announced(store, poster.platform, channel, key, done)) is not None:
        unannounced = [i for i in items if i not in plan]
        if unannounced:
            log.info(
                "%s in %s:%s was posted with another ranking: %d item(s) not added (%s); --repost edits"
                " the parent and adds them",
                key,
                poster.platform,
                channel,
                len(unannounced),
                ", ".join(unannounced),
            )
        items = [i for i in plan if _can_post(i, digest, by_sha)]
    for item in items:
        if item in done:
            result.skipped.append(item)
            if item == "parent":
                result.thread_id = done[item]["thread_id"]
            continue
        # Shielded: once the platform has the message, the record must follow even if we are
        # being cancelled (shutdown), or a restart would post it twice.
        parts = PartLog(
            store, poster.platform, channel, key, item, store.get_parts(poster.platform, channel, key, item)
        )
        token = _part_log.set(parts)  # the shielded task below starts with a copy of this context
        try:
            posted = await asyncio.shield(_post_item(poster, channel, result.thread_id, digest, item, by_sha))
        finally:
            _part_log.reset(token)
        if item == "parent":
            result.thread_id = posted.thread_id or posted.message_id
        store.record_post(poster.platform, channel, key, item, posted.message_id, result.thread_id)
        result.posted.append(item)
    log.info(
        "posted %s to %s:%s: %d new, %d already there",
        key,
        poster.platform,
        channel,
        len(result.posted),
        len(result.skipped),
    )
    return result


def _can_post(item: str, digest: Digest, by_sha: dict[str, Commit]) -> bool:
    """An announced item this digest can still post (a card's commit may have left the day)."""
    if item.startswith("card:"):
        return item.removeprefix("card:") in by_sha
    return item != "medium" or bool(digest.by_importance(Importance.MEDIUM))


async def _edit_parent(
    poster: Poster, store: Store, channel: str, digest: Digest, parent: dict[str, Any]
) -> None:
    """A re-post: the parent shows today's digest, keeping the radar banners it carries."""
    from bot.radar import banners_on

    if not hasattr(poster, "edit_parent"):
        raise ServiceError(f"re-posting is not supported on {poster.platform}")
    message_id = str(parent["message_id"])
    banners = banners_on(store, poster.platform, channel, message_id)
    await poster.edit_parent(channel, message_id, digest, banners)  # type: ignore[attr-defined]


async def _post_item(
    poster: Poster, channel: str, thread: str | None, digest: Digest, item: str, by_sha: dict[str, Commit]
) -> Posted:
    from analysis.render.markdown import render_report

    if item == "parent":
        return await poster.post_parent(channel, digest)
    assert thread is not None, "thread items come after the parent"
    if item.startswith("card:"):
        commit = by_sha[item.removeprefix("card:")]
        return await poster.post_card(channel, thread, digest, commit, digest.analysis_of(commit))
    if item == "medium":
        return await poster.post_medium_list(channel, thread, digest, digest.by_importance(Importance.MEDIUM))
    if item == "report":
        return await poster.post_report(
            channel, thread, digest, report_filename(digest), render_report([digest], digest.lang)
        )
    raise ValueError(f"unknown digest item {item!r}")
