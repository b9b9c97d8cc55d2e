"""A CommitSource over a fixed list of commits: no git, no network. For tests of whatever sits
above the sources (pipeline, analysers, chat, adapters)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from analysis.errors import AmbiguousRef, RefNotFound
from analysis.models import Commit


class MemorySource:
    """`delay` slows every call (to test acknowledgements and timeouts); `events` records "fetch" on
    every read (to test call order)."""

    def __init__(
        self, repo: str, commits: Iterable[Commit], *, delay: float = 0.0, events: list[Any] | None = None
    ):
        self.repo = repo
        self.commits = sorted(commits, key=lambda c: c.committed_at, reverse=True)
        self.delay = delay
        self.events = events if events is not None else []

    async def _read(self) -> None:
        self.events.append("fetch")
        if self.delay:
            await asyncio.sleep(self.delay)

    async def commits_in_window(
        self, branch: str, start: datetime, end: datetime, progress: Callable[[int, int], None] | None = None
    ) -> list[Commit]:
        await self._read()
        return [c for c in self.commits if start <= c.committed_at < end]

    async def get_commit(self, ref: str) -> Commit:
        await self._read()
        found = [c for c in self.commits if c.sha.startswith(ref.lower())]
        if not found:
            raise RefNotFound(f"no commit {ref} in {self.repo}")
        if len(found) > 1:
            raise AmbiguousRef(f"{ref} matches {len(found)} commits in {self.repo}: give more of the SHA")
        return found[0]

    async def commit_for_pr(self, number: int, branch: str) -> Commit:
        await self._read()
        for commit in self.commits:
            if commit.pr_number == number:
                return commit
        raise RefNotFound(f"no commit on {branch} of {self.repo} merged pull request #{number}")

    async def aclose(self) -> None:
        return None
