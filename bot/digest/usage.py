"""LLM usage of the current digest run. The LLM client reports every call; a run opens a Usage in a
context variable, and asyncio tasks started inside the run inherit it, so concurrent runs (several
subscriptions at 09:00) each count only their own calls."""

from __future__ import annotations

import sys
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
    """Called for every LLM call; counts it against the run in progress, if any, and in the Prometheus
    counters of a process that serves them (`digestbot run` loads bot.monitoring.metrics when it
    starts). A CLI verb serves no /metrics: it does not import prometheus_client and aiohttp's web
    server (about 0.1 s of CPU, just as a day's answers arrive) to count calls nobody can read."""
    count = getattr(sys.modules.get("bot.monitoring.metrics"), "record_llm_call", None)
    if count is not None:
        count(call)
    usage = _current.get()
    if usage is not None:
        usage.add(call)
