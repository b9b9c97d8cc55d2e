"""A `/digest <sha>` card asked for again in the same channel soon after it was posted: a pointer to the card
already there, not a second copy.

Ten people typing `/digest abc1234` within a minute (a link shared in the channel) would otherwise put ten
identical cards in it; the model is asked once either way (bot/digest/in_flight.py). The first request
posts; the others wait their turn (one lock per channel and card, in this process), then hear privately
where the card is. After REPEAT_WINDOW the card is posted again: it may have scrolled far up, and whoever
asks wants it in view. Another process (a second `digestbot run`) sees the card once it is recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.store.db import Store, utcnow

REPEAT_WINDOW = timedelta(minutes=10)


@dataclass(frozen=True, slots=True)
class EarlierCard:
    """The same card, posted in this channel within REPEAT_WINDOW."""

    message_id: str
    thread_id: str | None
    minutes_ago: int


class CardTurns:
    """Whose turn it is to post a card in a channel, and whether it is up there already."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._locks: dict[tuple[str, str, str], tuple[asyncio.Lock, list[int]]] = {}

    @contextlib.asynccontextmanager
    async def turn(
        self, platform: str, channel: str, key: str, item: str
    ) -> AsyncIterator[EarlierCard | None]:
        """Held while the card is posted and recorded; yields the card posted earlier, if one is recent."""
        name = (platform, channel, key)
        if name not in self._locks:  # not setdefault: that would build a spare lock on every call
            self._locks[name] = (asyncio.Lock(), [0])
        lock, users = self._locks[name]
        users[0] += 1
        try:
            async with lock:
                yield await asyncio.to_thread(self._earlier, platform, channel, key, item)
        finally:
            users[0] -= 1
            if not users[0]:  # nobody waits: the lock goes (a long-running service sees many cards)
                self._locks.pop(name, None)

    def _earlier(self, platform: str, channel: str, key: str, item: str) -> EarlierCard | None:
        try:
            row = self.store.get_posts(platform, channel, key).get(item)
        except Exception:  # an unreadable store must not cost the card: it is posted again
            return None
        if not row or not row.get("message_id") or not row.get("created_at"):
            return None
        try:
            posted = datetime.fromisoformat(str(row["created_at"]))
        except ValueError:
            return None
        age = utcnow() - posted  # the clock the store stamps posts with
        if not timedelta(0) <= age < REPEAT_WINDOW:
            return None
        return EarlierCard(str(row["message_id"]), row.get("thread_id"), int(age.total_seconds() // 60))
