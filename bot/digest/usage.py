"""LLM usage of the current digest run. The LLM client reports every call; a run opens a Usage in a
context variable, and asyncio tasks started inside the run inherit it, so concurrent runs (several
subscriptions at 09:00) each count only their own calls."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Usage:
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def add(self, call: dict[str, Any]) -> None:
        self.calls += 1
        self.tokens_in += int(call.get("tokens_in") or 0)
        self.tokens_out += int(call.get("tokens_out") or 0)


_current: ContextVar[Usage | None] = ContextVar("digest_usage", default=None)


@contextmanager
def tracking() -> Iterator[Usage]:
    usage = Usage()
    token = _current.set(usage)
    try:
        yield usage
    finally:
        _current.reset(token)


def record(call: dict[str, Any]) -> None:
    """Called for every LLM call; counts it against the run in progress, if any."""
    from bot.monitoring import metrics  # prometheus_client: paid only by a run that calls the LLM

    metrics.record_llm_call(call)
    usage = _current.get()
    if usage is not None:
        usage.add(call)
