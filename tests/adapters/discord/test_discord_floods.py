"""Floods against FakeDiscord on 127.0.0.1 (bot/chat/floods.py), as the gateway delivers them: 500 `/digest
<sha>` interactions in one channel a minute, 1,000 questions in one digest thread. The channel gets 20 cards
and one public notice (every other refused command hears it privately in the response Discord requires
anyway); the thread gets 10 answers and one notice, and nothing else is sent."""

from __future__ import annotations

import pytest

from bot.app import chat_service
from bot.chat.floods import AnswerFloods, CardFloods
from bot.chat.service import ChatService
from bot.config.settings import Settings
from bot.digest.analyzers import HeuristicAnalyzer
from bot.store.db import Store
from tests.adapters.discord.test_discord_events import answers, ask, invoke, no_traceback
from tests.fakes.clock import ManualClock
from tests.fakes.digests import many_commits
from tests.fakes.sources import MemorySource

EPHEMERAL = 64  # the message flag of a reply only its user sees


@pytest.fixture
def service(settings: Settings, store: Store) -> ChatService:
    """The conftest's service over 40 commits: 20 different cards a minute can be asked for."""
    commits = many_commits(40)
    made = chat_service(
        settings, store, source_factory=lambda repo: MemorySource(repo, commits), analyzer=HeuristicAnalyzer()
    )
    made.commits = commits  # type: ignore[attr-defined]
    return made


async def test_500_card_commands_in_a_minute_give_20_cards_and_one_public_notice(bot, fake, caplog):
    bot.service.card_floods = CardFloods(20, clock=ManualClock())
    for i in range(500):
        sha = bot.service.commits[i % 40].sha
        await invoke(bot, fake.interaction({"ref": sha[:10]}, user_id=str(100 + i % 9)))
    done = list(fake.interactions.values())
    cards = [i for i in done if any(f.get("embeds") for f in i.followups)]
    refused = [i for i in done if i.callbacks and i.callbacks[0]["type"] == 4]
    assert len(cards) == 20 and len(refused) == 480
    public = [i for i in refused if not (i.callbacks[0]["data"].get("flags") or 0) & EPHEMERAL]
    assert len(public) == 1
    text = public[0].callbacks[0]["data"]["content"]
    assert "Card requests are paused in this channel: 20 were asked for" in text and "Ask again in" in text
    assert all(i.followups == [] and len(i.callbacks) == 1 for i in refused)  # one reply each, no more
    assert all(r.callbacks[0]["data"]["content"] == text for r in refused)
    no_traceback(caplog)


async def test_1000_questions_in_one_thread_give_10_answers_and_one_notice(bot, fake, thread, caplog):
    clock = ManualClock()
    bot.service.answer_floods = AnswerFloods(10, 6, 60, clock=clock)
    for i in range(1000):
        await bot.on_message(ask(bot, fake, thread, "what are the risks?", author_id=str(1000 + i)))
    replies = [m["content"] for m in answers(fake, thread)]
    told = "I've answered 10 questions in this thread in the last minute"
    assert len(replies) == 11 and sum(told in r for r in replies) == 1
    clock.now += 61
    await bot.on_message(ask(bot, fake, thread, "what are the risks?", author_id="7"))
    assert len(answers(fake, thread)) == 12  # a minute later, answered again
    no_traceback(caplog)


async def test_an_answer_that_fails_names_no_class_in_the_thread(bot, fake, thread, caplog):
    async def broken(ctx, question):
        raise KeyError("digest_key")

    bot.service.answer = broken
    await bot.on_message(ask(bot, fake, thread, "what are the risks?"))
    [reply] = answers(fake, thread)
    assert reply["content"].startswith("Something failed on my side") and "KeyError" not in reply["content"]
    assert "KeyError" in caplog.text
