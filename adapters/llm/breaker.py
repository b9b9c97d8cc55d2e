"""The circuit breaker: after `breaker_after` consecutive timeouts or server errors (of calls sent after the
last success) the client stops calling for BREAKER_COOLDOWN; a 401/403/404 is remembered as long."""

from __future__ import annotations

import logging
import time

from bot.ports.protocols import LLMError, LLMFatal

# The package's one logger: its lines are named "adapters.llm", as they were before the client was split.
log = logging.getLogger(__package__)

BREAKER_COOLDOWN = 300.0  # seconds an open breaker stays open before one probe call is let through


class CircuitBreaker:
    """LLMClient's circuit breaker (its state is set up in LLMClient.__init__)."""

    model: str
    where: str
    breaker_after: int
    breaker_opened: int
    _failures: int
    _last_success: float
    _open_until: float
    _fatal: LLMFatal | None
    _fatal_until: float

    def _check_breaker(self) -> None:
        if self._fatal is not None and time.monotonic() < self._fatal_until:
            raise self._fatal  # the key or the model is wrong: every call would get the same answer
        if time.monotonic() < self._open_until:
            raise LLMError(
                f"LLM {self.model} at {self.where}: stopped calling after {self._failures} consecutive"
                " timeouts or server errors",
                outcome=f"circuit open after {self._failures} consecutive failures",
            )

    def _count_failure(self, started: float) -> None:
        """A failure counts only when no call succeeded since it was sent: a call that waited in a busy
        server's queue and timed out while others got answers says nothing about the server being down."""
        if started < self._last_success:
            return
        self._failures += 1
        if self._failures >= self.breaker_after:
            if time.monotonic() >= self._open_until:
                self.breaker_opened += 1
                log.warning(
                    "LLM %s at %s: %d consecutive timeouts or server errors; not calling it for %.0fs",
                    self.model,
                    self.where,
                    self._failures,
                    BREAKER_COOLDOWN,
                )
            self._open_until = time.monotonic() + BREAKER_COOLDOWN
