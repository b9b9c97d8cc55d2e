"""Fixtures of the GitHub source's tests: an injected clock and sleep, and sources built on a fake server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from adapters.github import GitHubSource
from bot.store.db import Store
from tests.fakes.github import FakeGitHub

NOW = 1_800_000_000.0  # the injected clock, epoch seconds


class Sleeps:
    """Injected sleep: records what the source asked for, waits for nothing."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
async def source_for(store: Store, sleeps: Sleeps) -> AsyncIterator[Callable[..., GitHubSource]]:
    made: list[GitHubSource] = []

    def make(gh: FakeGitHub, **kw: Any) -> GitHubSource:
        kw.setdefault("base_url", gh.base_url)
        kw.setdefault("sleep", sleeps)
        kw.setdefault("clock", lambda: NOW)
        src = GitHubSource(kw.pop("repo", gh.repo), store=store, **kw)
        made.append(src)
        return src

    yield make
    for src in made:
        await src.aclose()
