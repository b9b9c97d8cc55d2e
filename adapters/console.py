"""The console as a chat platform: `digestbot run --console` posts every digest to standard output, so
the service can be watched firing on its schedule with no chat token and no network (a local clone).

It implements the posters' protocol (bot/ports/protocols.py) and what the service asks of a chat poster besides
(notices, roll-ups, a re-post's `edit_parent`): the parent item prints a heading, the report item prints
the whole Markdown report (cards and the medium list are in it, so they print nothing of their own).
Items are recorded like any post, so a restart prints nothing twice. Radar banners need a message to
edit: the console has none, so it takes none.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from analysis.models import Analysis, Commit, Digest
from bot.ports.protocols import Posted

PLATFORM = "console"
CHANNEL = "stdout"


def _heading(digest: Digest) -> str:
    return f"──── {digest.repo} {digest.day.isoformat()} ({digest.timezone}): {digest.stats['total']} commits"


class ConsolePoster:
    platform = PLATFORM

    def __init__(self, write: Callable[[str], None]):
        self.write = write  # one block of text, written (and flushed) as a unit
        self._ids = itertools.count(1)

    def _posted(self, thread: str | None = None) -> Any:
        number = str(next(self._ids))
        return Posted(number, thread or number)

    async def post_parent(self, channel: str, digest: Digest) -> Any:
        self.write(_heading(digest))
        return self._posted()

    async def post_card(
        self, channel: str, thread: str, digest: Digest, commit: Commit, analysis: Analysis
    ) -> Any:
        return self._posted(thread)

    async def post_medium_list(self, channel: str, thread: str, digest: Digest, commits: list[Commit]) -> Any:
        return self._posted(thread)

    async def post_high_list(self, channel: str, thread: str, digest: Digest, commits: list[Commit]) -> Any:
        return self._posted(thread)

    async def post_report(
        self, channel: str, thread: str, digest: Digest, filename: str, markdown: str
    ) -> Any:
        self.write(markdown)
        return self._posted(thread)

    async def edit_parent(self, channel: str, message_id: str, digest: Digest, banners: list[str]) -> None:
        """A re-post: the console cannot change what it printed, so it prints the new heading."""
        self.write(_heading(digest) + " (re-posted)")

    async def post_notice(
        self, channel: str, text: str, key: str | None = None, since: float | None = None
    ) -> Any:
        """A notice (a failed run). Nothing to look in: the store's record of it keeps it to once."""
        self.write(text)
        return self._posted()

    async def post_weekly(self, channel: str, week: Any, markdown: str) -> tuple[str, str]:
        self.write(markdown)
        posted = self._posted()
        return posted.message_id, posted.thread_id

    async def post_chart(self, channel: str, thread: str, week: Any, filename: str, png: bytes) -> str:
        return self._posted(thread).message_id  # a terminal shows no PNG: the report links it by name


class ConsoleRuntime:
    """The console side of `digestbot run --console`: nothing to connect to."""

    platform = PLATFORM

    def __init__(self, write: Callable[[str], None]):
        self.poster = ConsolePoster(write)

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None
