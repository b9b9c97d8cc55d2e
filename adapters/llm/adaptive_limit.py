"""Calls in flight that find their own level (AIMD): start high, halve on congestion or queueing, grow on
success, never above a provider's remaining requests."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable

# The package's one logger: its lines are named "adapters.llm", as they were before the client was split.
log = logging.getLogger(__package__)

START_CONCURRENCY = 64  # adaptive start: a 45-commit day goes out in one wave
MAX_CONCURRENCY = 256
QUEUEING_FACTOR = 4.0  # a call this many times slower (per output token) than the fastest: queueing


class AdaptiveLimit:
    """Calls in flight that find their own level (AIMD). Starts high; halves on congestion (429/503,
    Retry-After, a timeout, a call much slower per output token than the fastest seen: a server that
    queues); grows by one per success while nothing was cut yet, then by 1/limit (about one per round
    trip). A cut counts once per round trip: only calls started after the last cut can cut again.
    `ceiling` is the hard cap (LLM_CONCURRENCY)."""

    def __init__(self, start: int, ceiling: int, *, clock: Callable[[], float] = time.monotonic):
        self.ceiling = max(1, ceiling)
        self.limit = float(max(1, min(start, self.ceiling)))
        self.in_flight = 0
        self.cuts = 0
        self.provider_cap: int | None = None  # x-ratelimit-remaining-requests, as last reported
        self._clock = clock
        self._last_cut = -math.inf
        self._fastest: float | None = None  # seconds per output token of the fastest call
        self._quickest: float | None = None  # seconds of the quickest call
        self._cond = asyncio.Condition()

    @property
    def slots(self) -> int:
        cap = self.provider_cap if self.provider_cap is not None else self.ceiling
        return max(1, min(int(self.limit), cap))

    async def acquire(self) -> float:
        """Wait for a slot; returns the start time (to tell which calls a later cut already covers)."""
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.slots)
            self.in_flight += 1
        return self._clock()

    async def release(self) -> None:
        async with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    def cap(self, remaining: int) -> None:
        """A provider's remaining-requests header: never more in flight than it has left. A ceiling
        that follows the header (it rises again after the provider's reset), not a cut; none left
        means a pause until the reset (the client's), after which the whole budget is back."""
        self.provider_cap = remaining if remaining > 0 else None

    def congestion(self, started: float) -> None:
        if started < self._last_cut:
            return  # this call was sent before the last cut: the cut already answered it
        self.limit = max(1.0, self.limit / 2)
        self._last_cut = self._clock()
        self.cuts += 1
        log.info("LLM concurrency cut to %d", self.slots)

    def success(self, started: float, latency: float, tokens_out: int) -> None:
        per_token = latency / (tokens_out + 100)  # +100: prefill and overhead of a short reply
        if self._fastest is None or per_token < self._fastest:
            self._fastest = per_token
        if self._quickest is None or latency < self._quickest:
            self._quickest = latency
        # Queueing: slower than the fastest call both in seconds and per output token (a long reply
        # alone is slow in seconds only; a fixed-latency server is never slower at all).
        if latency > QUEUEING_FACTOR * self._quickest and per_token > QUEUEING_FACTOR * self._fastest:
            self.congestion(started)
            return
        step = 1.0 if self.cuts == 0 else 1.0 / self.limit
        self.limit = min(float(self.ceiling), self.limit + step)
