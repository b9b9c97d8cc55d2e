"""Group commit: writes handed over by many tasks at once, committed together (issue 21).

An LLM day's answers arrive together: each brings a call-log row and, once checked, an analysis. One
transaction each is one sync of the write-ahead log each (`synchronous = FULL`), 88 in a row under the
store's lock. Here each write is queued and one writer thread commits whatever is queued when it gets
to it, in one transaction: a burst becomes a few commits, and a lone write is committed at once (nothing
is held back waiting for company). A write's future is resolved only after the COMMIT that holds it
returned: whoever awaits it knows the row is durable.

Each write runs in its own savepoint: one that fails (a bad row) fails alone, the others still commit.
Writes commit in the order they were queued (a grounding note updates the call-log row queued before it).
Readers of the tables written this way commit what is queued first (`settle`), so a read never misses a
row handed over before it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager

log = logging.getLogger(__name__)

Write = Callable[[], None]


class GroupCommit:
    """`transaction()` opens the store's write transaction (a savepoint when one is open); `lock` is the
    store's connection lock, held from taking a batch until its COMMIT so batches commit in order."""

    def __init__(self, transaction: Callable[[], AbstractContextManager[None]], lock: threading.RLock):
        self._transaction = transaction
        self._lock = lock
        self._queue: list[tuple[Write, Future[None]]] = []
        self._mutex = threading.Lock()  # guards the queue and the worker, never held while writing
        self._worker: ThreadPoolExecutor | None = None

    def submit(self, write: Write) -> Future[None]:
        """Queue `write`; the future is done once the transaction holding it is committed (or failed)."""
        future: Future[None] = Future()
        with self._mutex:
            self._queue.append((write, future))
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-writer")
            # One commit per wake-up at most: a wake-up that finds the queue emptied does nothing.
            self._worker.submit(self.settle)
        return future

    def pending(self) -> bool:
        with self._mutex:
            return bool(self._queue)

    def settle(self) -> None:
        """Commit everything queued now, in one transaction (the writer's work; also a reader's, first)."""
        with self._lock:
            with self._mutex:
                batch, self._queue = self._queue, []
            if batch:
                self._commit(batch)

    def close(self) -> None:
        """Commit what is queued and end the writer thread (the store is closing)."""
        self.settle()
        with self._mutex:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=True)
        self.settle()  # a write queued while the worker was stopping

    def _commit(self, batch: list[tuple[Write, Future[None]]]) -> None:
        failed: dict[int, BaseException] = {}
        try:
            with self._transaction():
                for i, (write, _) in enumerate(batch):
                    try:
                        with self._transaction():  # a savepoint: a failing write is undone alone
                            write()
                    except Exception as exc:
                        failed[i] = exc
        except BaseException as exc:  # the COMMIT (or BEGIN) failed: nothing of the batch is stored
            for _, future in batch:
                future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
            return
        for i, (_, future) in enumerate(batch):
            if i in failed:
                future.set_exception(failed[i])
            else:
                future.set_result(None)
