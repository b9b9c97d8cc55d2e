"""One card per channel at a time (bot/chat/card_turns.py): a card asked for again within the window is
pointed at, one asked for later is posted again, and the turns leave nothing behind."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from analysis.labels import repeat_card_notice
from bot.chat.card_turns import REPEAT_WINDOW, CardTurns
from bot.store.db import utcnow

KEY, ITEM = "card:o/r@abc/en", "card:abc"


async def test_the_second_asker_waits_for_the_first_post_then_sees_it(store):
    turns = CardTurns(store)
    seen = []

    async def ask(message_id: str) -> None:
        async with turns.turn("slack", "C1", KEY, ITEM) as earlier:
            seen.append(earlier)
            if earlier is None:
                await asyncio.sleep(0.05)  # posting takes a while: the other asker must wait for it
                store.record_post("slack", "C1", KEY, ITEM, message_id, message_id)

    await asyncio.gather(ask("1.1"), ask("2.2"))
    assert seen[0] is None and seen[1] is not None
    assert seen[1].message_id == "1.1" and seen[1].minutes_ago == 0
    assert turns._locks == {}  # nobody waits: no lock kept per card


async def test_other_channels_languages_and_old_cards_are_posted(store):
    turns = CardTurns(store)
    store.record_post("slack", "C1", KEY, ITEM, "1.1", "1.1")
    async with turns.turn("slack", "C2", KEY, ITEM) as earlier:
        assert earlier is None
    async with turns.turn("slack", "C1", "card:o/r@abc/zh", ITEM) as earlier:
        assert earlier is None
    store.db.execute("UPDATE posts SET created_at = ?", [(utcnow() - REPEAT_WINDOW).isoformat()])
    async with turns.turn("slack", "C1", KEY, ITEM) as earlier:
        assert earlier is None
    store.db.execute(
        "UPDATE posts SET created_at = ?", [(utcnow() - timedelta(minutes=3, seconds=5)).isoformat()]
    )
    async with turns.turn("slack", "C1", KEY, ITEM) as earlier:
        assert earlier is not None and earlier.minutes_ago == 3


async def test_an_unreadable_store_costs_the_pointer_not_the_card(store):
    turns = CardTurns(store)
    store.record_post("slack", "C1", KEY, ITEM, "1.1", "1.1")
    store.db.execute("UPDATE posts SET created_at = 'yesterday-ish'")
    async with turns.turn("slack", "C1", KEY, ITEM) as earlier:
        assert earlier is None
    store.db.execute("DROP TABLE posts")
    async with turns.turn("slack", "C1", KEY, ITEM) as earlier:
        assert earlier is None


def test_the_notice_names_the_card_and_where_it_is():
    assert repeat_card_notice("en", "abc1234", 0, None) == (
        "The card for abc1234 was just posted in this channel, so it was not posted again: see above"
    )
    assert "4 min ago" in repeat_card_notice("en", "abc1234", 4, "https://x.test/p1")
    assert repeat_card_notice("zh", "abc1234", 4, None).endswith("见上方")
