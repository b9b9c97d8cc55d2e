"""Which failed attempts are worth another, and how long to wait before it: the statuses (retryable,
congestion, fatal), exponential backoff with full jitter unless the server said how long."""

from __future__ import annotations

import random
from collections.abc import Callable

RETRYABLE_STATUS = frozenset({408, 409, 429})  # plus every 5xx
CONGESTION_STATUS = frozenset({429, 503})  # the server says "fewer at once"
FATAL_STATUS = frozenset({401, 403, 404})  # a bad key or an unknown model: no later call can succeed
BASE_DELAY = 1.0  # first backoff step, seconds
MAX_DELAY = 30.0  # cap of one exponential backoff step


MAX_QUEUED_RETRIES = 3  # resends of a call that timed out in a busy server's queue, beyond max_retries


class Retry(Exception):
    """One failed attempt worth retrying: its outcome and how long the server asked us to wait."""

    def __init__(self, outcome: str, error: str, retry_after: float | None = None):
        super().__init__(error)
        self.outcome = outcome
        self.error = error
        self.retry_after = retry_after
        self.queued = False  # a timeout while the server answered others: it was busy, not down


def backoff_delay(
    attempt: int, retry_after: float | None, *, rng: Callable[[], float] = random.random
) -> float:
    """Seconds to wait before attempt `attempt + 1`: the server's Retry-After when it gave one (it knows
    best), else exponential backoff with full jitter so parallel callers do not retry in lockstep."""
    if retry_after is not None:
        return retry_after
    ceiling = min(MAX_DELAY, BASE_DELAY * 2**attempt)
    return ceiling / 2 + rng() * ceiling / 2
