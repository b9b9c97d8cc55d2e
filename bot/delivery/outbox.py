"""Work that must happen — a radar banner and its reply, a failure notice, a weekly roll-up in one
channel — done at least once, never twice, whatever the platform or the process meets on the way.

Each piece of work is a row of `pending_work`, written before it is first tried. It is tried at once,
under a lease of its own (so two processes never try it together), and when it fails it stays pending
and the running service tries it again with exponential backoff (RETRY_BASE doubling to RETRY_MAX), a
restart included, until it is done or the platform says it can never succeed (`Undeliverable`: the
message is gone, too old to edit, no permission). A try that dies between the platform accepting and
the store recording is safe because every handler looks before it acts (a banner already on the message,
a reply or notice already in the channel under its key). `digestbot status` lists what is pending.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from analysis.errors import DigestError, ServiceError, Undeliverable
from bot.delivery.leases import Busy, posting_lock
from bot.ports.secrets import clip
from bot.store.db import Store

log = logging.getLogger(__name__)

RETRY_BASE = 2.0  # seconds before the first retry; doubled after each failure
RETRY_MAX = 300.0  # the longest wait between two tries
POLL_MAX = 30.0  # how often the worker looks for work another process recorded
ERROR_MAX = 500  # characters of the last error kept with the work (masked first)

# (poster, store, row, payload) → None when done; raises Undeliverable to give up, anything else to retry
Handler = Callable[[Any, Store, dict[str, Any], dict[str, Any]], Awaitable[None]]


def handlers() -> dict[str, Handler]:
    """The kinds of work and who does them."""
    return {"radar": apply_banner, "notice": post_notice}


def backoff(attempts: int, rng: Callable[[], float] = random.random) -> float:
    """Seconds before the next try after `attempts` failed ones, with ±25 % jitter so two services
    sharing a database do not retry in step."""
    return min(RETRY_MAX, RETRY_BASE * 2 ** max(0, attempts - 1)) * (0.75 + rng() / 2)


async def submit(
    poster: Any,
    store: Store,
    kind: str,
    channel: str,
    key: str,
    payload: dict[str, Any],
    handler: Handler | None = None,
) -> str:
    """Record the work (once: a key already known keeps its record) and try it now unless it is done;
    returns its state afterwards: done, pending, gave_up, or busy (another process is on it).
    `handler`: who does this kind of work, when it is not one of `handlers()`."""
    row = store.add_work(key, kind, poster.platform, channel, payload)
    if row["state"] != "pending":
        return str(row["state"])
    return await attempt(poster, store, row, handler)


async def attempt(poster: Any, store: Store, row: dict[str, Any], handler: Handler | None = None) -> str:
    """One try of a pending piece of work, under its lease; the state it is left in."""
    key = str(row["key"])
    try:
        async with posting_lock(store, poster.platform, row["channel"], f"work:{key}", wait=0):
            current = store.get_work(key)  # another process may have done it meanwhile
            if current is None or current["state"] != "pending":
                return str(current["state"]) if current else "gone"
            return await _run(poster, store, current, handler or handlers()[str(row["kind"])])
    except Busy:
        return "busy"


async def _run(poster: Any, store: Store, row: dict[str, Any], handler: Handler) -> str:
    key, attempts = str(row["key"]), int(row["attempts"] or 0) + 1
    try:
        await handler(poster, store, row, json.loads(row["payload"]))
    except Undeliverable as exc:
        error = _error_text(exc)
        store.update_work(key, state="gave_up", attempts=attempts, last_error=error)
        log.info("%s: given up, the platform says it can never succeed: %s", key, error)
        return "gave_up"
    except Exception as exc:  # transient, or unknown: tried again later
        error = _error_text(exc)
        delay = backoff(attempts)
        store.update_work(key, attempts=attempts, next_at=time.time() + delay, last_error=error)
        log.warning("%s: try %d failed (%s); next try in %.0f s", key, attempts, error, delay)
        for worker in _workers:  # a worker asleep until later must not miss this one's next try
            worker.wake()
        return "pending"
    store.update_work(key, state="done", attempts=attempts, last_error=None)
    if attempts > 1:
        log.info("%s: done on try %d", key, attempts)
    return "done"


def describe(exc: BaseException) -> str:
    """An error in one line: our own errors are sentences; anything else is named by its type."""
    text = " ".join(str(exc).split())
    if not isinstance(exc, DigestError):
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text


def _error_text(exc: BaseException) -> str:
    return clip(describe(exc), ERROR_MAX)


_workers: weakref.WeakSet[Worker] = weakref.WeakSet()


class Worker:
    """The running service's loop over due work: each piece is tried with the poster of its platform;
    work for a platform with no adapter running waits (it is listed by `digestbot status`)."""

    def __init__(
        self,
        store: Store,
        posters: dict[str, Any],
        clock: Callable[[], float] = time.time,
        extra: dict[str, Handler] | None = None,
    ):
        self.store = store
        self.posters = posters
        self.clock = clock
        self.handlers = {**handlers(), **(extra or {})}  # extra: kinds the service does (weekly)
        self._wake = asyncio.Event()
        _workers.add(self)

    def wake(self) -> None:
        self._wake.set()

    async def run_due(self) -> int:
        """Try every piece of work that is due now; returns how many were tried."""
        rows = self.store.due_work(self.posters, self.handlers, self.clock())
        for row in rows:
            await attempt(self.posters[row["platform"]], self.store, row, self.handlers[str(row["kind"])])
        return len(rows)

    async def run(self) -> None:
        """Until cancelled: due work, then sleep until the next is due (at most POLL_MAX)."""
        while True:
            self._wake.clear()
            try:
                await self.run_due()
                nxt = self.store.next_work_at(self.posters, self.handlers)
            except Exception:  # the store failing (disk full, say) must not end the loop
                log.exception("pending work: cannot read or update the store")
                nxt = None
            with contextlib.suppress(TimeoutError):
                delay = POLL_MAX if nxt is None else min(POLL_MAX, max(0.2, nxt - self.clock()))
                await asyncio.wait_for(self._wake.wait(), delay)


# --- failure notices ------------------------------------------------------------------------------------


async def post_notice(poster: Any, store: Store, row: dict[str, Any], job: dict[str, Any]) -> None:
    """A notice once per key and channel: recorded in `posts` when it is up; the poster looks in the
    channel (since `since`) for one already there under the key before it sends."""
    channel, key = str(row["channel"]), str(job["key"])
    if store.get_posts(poster.platform, channel, key):
        return
    posted = await poster.post_notice(channel, job["text"], key=key, since=job.get("since"))
    store.record_post(poster.platform, channel, key, "notice", posted.message_id, None)


async def apply_banner(editor: Any, store: Store, row: dict[str, Any], job: dict[str, Any]) -> None:
    """One banner: the edit (once: the message is checked first), then the reply in the card's thread
    (once: found by its key when it is already there), each recorded in `radar_banners` when done. A
    message that can no longer be edited is recorded as skipped and the work given up."""
    platform, channel = editor.platform, str(row["channel"])
    message_id, follow_up, original = job["message_id"], job["follow_up"], job["original"]
    done = store.banner_record(platform, channel, message_id, follow_up)
    if done is not None and done["state"] in ("replied", "skipped"):
        return
    if done is None:
        try:
            editable = await editor.add_banner(channel, job["where"], message_id, job["banner"])
        except Undeliverable:
            editable = False
        except Exception as exc:
            raise ServiceError(f"could not banner message {message_id} ({describe(exc)})") from exc
        if not editable:
            store.record_banner(platform, channel, message_id, follow_up, original, "skipped")
            raise Undeliverable(
                f"message {message_id} can no longer be edited: banner for {original[:7]} skipped"
            )
        store.record_banner(platform, channel, message_id, follow_up, original, "edited")
    try:
        reply_id = await editor.reply_in_thread(
            channel, job["thread"], job["reply"], job["url"], f"radar:{message_id}:{follow_up}"
        )
    except Undeliverable:
        raise
    except Exception as exc:
        raise ServiceError(
            f"could not reply in the thread of message {message_id} ({describe(exc)})"
        ) from exc
    store.record_banner(platform, channel, message_id, follow_up, original, "replied", reply_id)
