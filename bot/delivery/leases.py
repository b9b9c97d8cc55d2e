"""One posting job at a time per (platform, channel, job), in this process and across the processes
sharing the database: a day, a week, a notice or a banner. A second poster of the same job waits for the
first (bounded), then finds it all posted; a crashed holder's lease expires, and one whose process is
gone on this host is free at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import weakref
from collections.abc import AsyncIterator

from analysis.errors import ServiceError
from bot.store.db import Store

log = logging.getLogger(__name__)


LEASE_TTL = 60.0  # seconds a post's lease lasts without renewal (renewed every LEASE_TTL / 3)
LEASE_WAIT = 120.0  # seconds a second poster of the same digest waits for the first to finish


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
            log.warning("lost the lease %s to another process while holding it", name)
            return


@contextlib.asynccontextmanager
async def claimed(store: Store, name: str) -> AsyncIterator[dict[str, object] | None]:
    """Claim the job `name` for the block unless another live process holds it: yields None when the
    job is ours (the lease renewed while the block runs, released after), else at once the holder's
    row, and the block leaves the job to that process. A crashed holder's claim is free as a
    lease's is (expired, or its process gone on this host)."""
    holder = lease_holder()
    if (current := store.take_lease(name, holder, LEASE_TTL)) is not None:
        yield current
        return
    renew = asyncio.create_task(_renew(store, name, holder), name=f"renew {name}")
    try:
        yield None
    finally:
        renew.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renew
        store.release_lease(name, holder)
