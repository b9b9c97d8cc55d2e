"""Posting a digest into a chat channel, idempotently, whatever the platform.

A digest becomes an ordered list of items: the parent message, then in its thread one card per
high commit (up to `max_cards`, DIGEST_MAX_CARDS: past it the day's top ones by rank, and one list of the
rest, so none is dropped), the compact list of medium commits, and the full report as a file. Every item posted
is recorded (platform, channel, digest key, item) the moment the platform accepts it, so posting the
same digest again posts nothing and an interrupted post resumes with only the missing items.

A day posted in a channel is what it was: the items its parent announced are recorded with it (its
plan), and a later post of the day — after the ranking changed, say — adds none that the parent does
not announce, unless a re-post (`repost=True`, `digestbot post --repost`) first edits the parent.
A day posted before it ended (`partial=True`, `digestbot post --partial`) is not frozen: its next post
— the scheduled one once the day is over — edits the parent to the whole day and adds the rest.

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
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from analysis.errors import ServiceError
from analysis.models import Commit, Digest, Importance, key_of
from analysis.render.markdown import render_report, report_name
from bot.delivery.banners import banners_on, correct_originals
from bot.delivery.leases import LEASE_WAIT, posting_lock
from bot.ports.protocols import PART_LOG, Posted, Poster, PostResult
from bot.store.db import Store

log = logging.getLogger(__name__)


DEFAULT_MAX_CARDS = 20  # DIGEST_MAX_CARDS (bot/config/settings.py)
HIGH_LIST = "high_list"  # the item listing the high commits past the cap on cards


def card_commits(digest: Digest, max_cards: int = DEFAULT_MAX_CARDS, up: Iterable[str] = ()) -> list[Commit]:
    """The high commits posted as cards, in the digest's order: those whose card is `up` already (it stays
    one), then the top of the day's rank (analysis/heuristic/bands.py) until there are `max_cards`."""
    highs = digest.by_importance(Importance.HIGH)
    if len(highs) <= max_cards:
        return highs
    from analysis.heuristic.bands import day_order  # the ranking's package, only for a day past the cap

    already = set(up)
    chosen = {c.sha for c in highs if c.sha in already}
    for commit in day_order(highs, digest.analyses):
        if len(chosen) >= max_cards:
            break
        chosen.add(commit.sha)
    return [c for c in highs if c.sha in chosen]


def digest_items(
    digest: Digest, *, partial: bool = False, max_cards: int = DEFAULT_MAX_CARDS, up: Iterable[str] = ()
) -> list[str]:
    """The ordered item names of a digest's post. Stable: they are the idempotency keys. A partial day
    posts its parent and cards only: the list of high commits past the cap, the medium list and the report
    come with the whole day. `up`: the shas whose card is posted already."""
    cards = card_commits(digest, max_cards, up)
    items = ["parent", *(f"card:{c.sha}" for c in cards)]
    if partial:
        return items
    if len(cards) < len(digest.by_importance(Importance.HIGH)):
        items.append(HIGH_LIST)
    if digest.by_importance(Importance.MEDIUM):
        items.append("medium")
    items.append("report")
    return items


def listed_highs(digest: Digest, carded: Iterable[str]) -> list[Commit]:
    """The high commits with no card among `carded` (the shas of card items): what the high list holds."""
    have = set(carded)
    return [c for c in digest.by_importance(Importance.HIGH) if c.sha not in have]


def _carded(items: Iterable[str]) -> set[str]:
    return {i.removeprefix("card:") for i in items if i.startswith("card:")}


def report_filename(digest: Digest) -> str:
    return report_name(digest.repo, digest.day.isoformat(), digest.lang)


@dataclass(slots=True)
class PartLog:
    """The parts of one item already up (part → message id, from the store) and how to record more:
    the PartProgress (bot/ports/protocols.py) an adapter finds with part_log() while it posts the item."""

    store: Store
    platform: str
    channel: str
    key: str
    item: str
    done: dict[int, str] = field(default_factory=dict)

    def record(self, part: int, message_id: str) -> None:
        self.done[part] = message_id
        self.store.record_part(self.platform, self.channel, self.key, self.item, part, message_id)


async def post_digest(
    poster: Poster,
    store: Store,
    channel: str,
    digest: Digest,
    *,
    wait: float = LEASE_WAIT,
    repost: bool = False,
    partial: bool = False,
    max_cards: int = DEFAULT_MAX_CARDS,
) -> PostResult:
    """Post what is missing of this digest in this channel; record each item as soon as it is up.
    A day already posted here keeps what its parent announced; `repost` edits the parent to today's
    digest first and then adds what that announces. `partial`: the day has not ended, so this post
    does not freeze it (its next post re-posts). `max_cards`: past it, the day's top high commits are
    cards and the rest one list (DIGEST_MAX_CARDS)."""
    key = key_of(digest)
    async with posting_lock(store, poster.platform, channel, key, wait=wait):
        result = await _post_missing(poster, store, channel, digest, key, repost, partial, max_cards)
        await _correct_originals(poster, store, channel, digest)
        return result


async def _correct_originals(poster: Poster, store: Store, channel: str, digest: Digest) -> None:
    """The radar: banner the cards of earlier commits this digest reverts or fixes (bot/digest/radar.py)."""
    await correct_originals(poster, store, channel, digest)


def announced(store: Store, platform: str, channel: str, key: str, done: dict[str, Any]) -> list[str] | None:
    """The items the parent posted in this channel announced (its plan); for a post recorded before
    plans were, what it holds when it was finished (its report is up); None when unknown."""
    plan = store.get_plan(platform, channel, key)
    if plan is not None:
        return plan
    return list(done) if "report" in done else None


async def _post_missing(
    poster: Poster,
    store: Store,
    channel: str,
    digest: Digest,
    key: str,
    repost: bool = False,
    partial: bool = False,
    max_cards: int = DEFAULT_MAX_CARDS,
) -> PostResult:
    done = store.get_posts(poster.platform, channel, key)
    result = PostResult(key=key, posted=[], skipped=[], thread_id=None)
    by_sha = {c.sha: c for c in digest.commits}
    # a card already up stays a card (a partial day's, a re-post's): the cap fills around it
    items = digest_items(digest, partial=partial, max_cards=max_cards, up=_carded(done))
    if "parent" not in done:
        store.record_plan(poster.platform, channel, key, items, partial=partial)
    elif repost or store.plan_is_partial(poster.platform, channel, key):
        await _edit_parent(poster, store, channel, digest, done["parent"])
        store.record_plan(poster.platform, channel, key, items, partial=partial)
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
        items = [i for i in plan if _can_post(i, digest, by_sha, _carded([*plan, *done]))]
    # the high list holds every high commit that is no card here: none is dropped, whatever the cap was
    listed = listed_highs(digest, _carded([*items, *done]))
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
        token = PART_LOG.set(parts)  # the shielded task below starts with a copy of this context
        try:
            posted = await asyncio.shield(
                _post_item(poster, channel, result.thread_id, digest, item, by_sha, listed)
            )
        finally:
            PART_LOG.reset(token)
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


def _can_post(item: str, digest: Digest, by_sha: dict[str, Commit], carded: set[str]) -> bool:
    """An announced item this digest can still post (a card's commit may have left the day)."""
    if item.startswith("card:"):
        return item.removeprefix("card:") in by_sha
    if item == HIGH_LIST:
        return bool(listed_highs(digest, carded))
    return item != "medium" or bool(digest.by_importance(Importance.MEDIUM))


async def _edit_parent(
    poster: Poster, store: Store, channel: str, digest: Digest, parent: dict[str, Any]
) -> None:
    """A re-post: the parent shows today's digest, keeping the radar banners it carries."""
    if not hasattr(poster, "edit_parent"):
        raise ServiceError(f"re-posting is not supported on {poster.platform}")
    message_id = str(parent["message_id"])
    banners = banners_on(store, poster.platform, channel, message_id)
    await poster.edit_parent(channel, message_id, digest, banners)  # type: ignore[attr-defined]


async def _post_item(
    poster: Poster,
    channel: str,
    thread: str | None,
    digest: Digest,
    item: str,
    by_sha: dict[str, Commit],
    listed: list[Commit],
) -> Posted:
    if item == "parent":
        return await poster.post_parent(channel, digest)
    assert thread is not None, "thread items come after the parent"
    if item.startswith("card:"):
        commit = by_sha[item.removeprefix("card:")]
        return await poster.post_card(channel, thread, digest, commit, digest.analysis_of(commit))
    if item == HIGH_LIST:
        return await poster.post_high_list(channel, thread, digest, listed)
    if item == "medium":
        return await poster.post_medium_list(channel, thread, digest, digest.by_importance(Importance.MEDIUM))
    if item == "report":
        return await poster.post_report(
            channel, thread, digest, report_filename(digest), render_report([digest], digest.lang)
        )
    raise ValueError(f"unknown digest item {item!r}")
