"""A question in an old Discord digest thread after the database was wiped (or on another host): the store
has no record of the post, but the thread's starter message (the digest's parent, or a `/digest <sha>` card
someone started a thread from) carries the digest's key in its embed footer. The asker hears which day it
is and what to ask instead of silence; the starter is read once per thread, over real HTTP against
FakeDiscord. A key is taken only from our own message's footer, never from anyone's text."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import discord
import pytest

import adapters.discord.client
from adapters.discord.client import login
from adapters.discord.handlers import DigestBot
from adapters.discord.keys import card_key, key_in, keyed_messages
from adapters.discord.poster import DiscordPoster
from analysis.models import key_of
from analysis.render.discord_embeds import parent_embed
from bot.app import chat_service
from bot.delivery.posting import post_digest
from bot.digest.analyzers import HeuristicAnalyzer
from bot.ports.protocols import Question
from bot.store.db import Store
from tests.adapters.discord.test_discord_bot import CHANNEL, REPO, day_commits
from tests.adapters.discord.test_discord_events import answers, ask, invoke, no_traceback
from tests.fakes.digests import make_digest
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.sources import MemorySource

NOTICE = "This thread is the digest of acme/widgets for 2026-01-26, which my database no longer holds"
STARTER = "GET /channels/{channel_id}/messages/{message_id}"  # the thread's starter read
THREAD = "GET /channels/{channel_id}"  # the thread itself, when the gateway has not cached it


@pytest.fixture
async def wiped(fake: FakeDiscord, settings, tmp_path) -> AsyncIterator[DigestBot]:
    """The service started again on an empty database (the same bot token, the same server)."""
    fresh = settings.model_copy(update={"digest_db": tmp_path / "new.db"})
    store = Store(fresh.digest_db)
    service = chat_service(
        fresh,
        store,
        source_factory=lambda repo: MemorySource(repo, day_commits()),
        analyzer=HeuristicAnalyzer(),
    )
    with fake.routed():
        # with the message content intent: questions in our threads need no mention
        client = DigestBot(service, guild_id=fake.guild_id, message_content=True)
        await login(client, fake.token)
        client._connection.parse_guild_create(fake.guild_payload())  # the gateway's view, as on connect
        try:
            yield client
        finally:
            await client.close()
            store.close()


def footer(message: dict[str, Any]) -> str:
    return message["embeds"][-1]["footer"]["text"]


def question_in(thread: str, text: str = "what are the risks?") -> Question:
    """A question taken over after a restart: ids only, no gateway message at hand."""
    return Question(
        platform="discord",
        channel=thread,
        message_id="1",
        text=text,
        asker="42",
        mentioned=False,
        asked_at=discord.utils.utcnow(),
        thread=thread,
    )


async def test_a_question_in_a_forgotten_digest_thread_names_the_day(thread, wiped, fake, caplog):
    [parent] = [m for m in fake.messages_in(CHANNEL) if m["id"] == thread]
    assert footer(parent).splitlines() == ["Analysis: heuristic", key_of(make_digest(lang="en"))]
    fake.reset_counters()
    await wiped.on_message(ask(wiped, fake, thread, "what are the risks of the high cards?", mention=False))
    await wiped.on_message(ask(wiped, fake, thread, "and the scheduler?", mention=False))
    first, second = answers(fake, thread)
    for answer in (first, second):
        shown = answer["content"].replace("\\", "")  # as Discord renders its Markdown escapes
        assert shown.startswith(NOTICE)
        assert "/digest <sha>" in shown and "/digest 2026-01-26 acme/widgets" in shown
        assert answer["allowed_mentions"]["parse"] == []
    assert len(fake.calls_to(STARTER)) == 1  # read once for the thread, then remembered
    assert fake.calls_to(THREAD) == []  # the gateway's thread named its channel
    no_traceback(caplog)


async def test_a_question_taken_over_after_a_restart_reads_the_thread_over_rest(thread, wiped, fake):
    wiped._connection._guilds.clear()  # no gateway cache: only the ids the store kept
    fake.reset_counters()
    assert await wiped.answers.thread_key(question_in(thread)) == key_of(make_digest(lang="en"))
    assert len(fake.calls_to(THREAD)) == 1 and len(fake.calls_to(STARTER)) == 1


async def test_a_parent_posted_before_it_carried_the_key_is_found_then_keyed_by_a_repost(
    fake, settings, store, tmp_path
):
    """A digest posted by the previous version (no key in its footer) and the database wiped: posting
    the day again finds the old parent by its title and window (no second parent), and a re-post's edit
    gives it the key."""
    digest = make_digest(lang="en")
    for commit in digest.commits:
        store.save_commit(commit)
    with fake.routed():
        client = discord.Client(intents=discord.Intents.none())
        await login(client, fake.token)
        try:
            channel = client.get_partial_messageable(int(CHANNEL))
            old = await channel.send(embed=discord.Embed.from_dict(parent_embed(digest)))
            [shown] = fake.messages_in(CHANNEL)
            assert key_in(old, client.user.id) is None and "\n" not in footer(shown)
            poster = DiscordPoster(client)
            await post_digest(poster, store, CHANNEL, digest)
            [parent] = fake.messages_in(CHANNEL)  # the old parent, its thread started now
            assert parent["id"] == str(old.id) and [t["id"] for t in fake.threads()] == [parent["id"]]
            await post_digest(poster, store, CHANNEL, digest, repost=True)
            [parent] = fake.messages_in(CHANNEL)
            assert footer(parent).splitlines()[-1] == key_of(digest)
        finally:
            await client.close()


async def test_a_forgotten_card_thread_is_answered_from_the_commit_fetched_again(bot, wiped, fake):
    """A `/digest <sha>` card, a thread someone started from it, then the database wiped: the card's key
    names the commit, which is fetched again for the answer."""
    commit = day_commits()[1]
    data = fake.interaction({"ref": commit.short_sha})
    await invoke(bot, data)
    [card] = fake.interactions[data["id"]].followups
    assert footer(card).splitlines()[-1] == card_key(REPO, commit.sha, "en")
    shown = {**card, "channel_id": CHANNEL}  # the follow-up as the channel shows it
    fake.messages[CHANNEL].append(shown)
    fake.add_thread(CHANNEL, card["id"])
    wiped._connection.parse_guild_create(fake.guild_payload())
    await wiped.on_message(ask(wiped, fake, card["id"], "what does it change?"))
    [answer] = answers(fake, card["id"])
    assert commit.short_sha in answer["content"] and "Faster cache" in answer["content"]


@pytest.mark.parametrize("starter", ["another_author", "key_in_text", "our_text"])
async def test_a_thread_whose_starter_is_not_ours_is_not_taken_for_a_digest(wiped, fake, starter):
    """A key-looking text in a user's message, in another bot's footer, or in our message outside the
    footer's key line (a commit title in a card) names nothing."""
    key = key_of(make_digest(lang="en"))
    embed = {"title": key, "description": key, "footer": {"text": f"Analyzer: x\n{key}"}}
    message = fake.add_user_message(CHANNEL, key, author_id="77")
    if starter == "another_author":
        message["embeds"] = [{"type": "rich", **embed}]
    elif starter == "our_text":
        message["author"] = fake.user
        message["embeds"] = [{"type": "rich", **embed, "footer": {"text": f"{key} · heuristic"}}]
    fake.add_thread(CHANNEL, message["id"])
    wiped._connection.parse_guild_create(fake.guild_payload())
    assert await wiped.answers.thread_key(question_in(message["id"])) is None
    await wiped.on_message(ask(wiped, fake, message["id"], "what are the risks?", mention=False))
    assert answers(fake, message["id"]) == []  # not ours: silence
    await wiped.on_message(ask(wiped, fake, message["id"], "what are the risks?"))
    [reply] = answers(fake, message["id"])  # a mention is told we do not know the digest
    assert "digest" in reply["content"] and not reply["content"].startswith(NOTICE)


async def test_a_thread_started_from_no_message_is_not_ours(wiped, fake):
    fake.add_thread(CHANNEL, fake.snowflake())  # no such message in the channel: Discord answers 10008
    wiped._connection.parse_guild_create(fake.guild_payload())
    [lone] = [t for t in fake.threads() if t["owner_id"] == "42"]
    assert await wiped.answers.thread_key(question_in(lone["id"])) is None
    assert await wiped.answers.thread_key(question_in(lone["id"])) is None
    assert len(fake.calls_to(STARTER)) == 1  # remembered: not read for each message


@pytest.mark.parametrize("fault", ["forbidden", "rate_limited"])
async def test_the_starter_read_failing_is_one_line_and_tried_again(
    thread, wiped, fake, caplog, fault, monkeypatch
):
    if fault == "forbidden":
        fake.fail_next(403, {"message": "Missing Access", "code": 50001}, route=STARTER)
    else:  # past the bound on a request: not waited out for an hour
        monkeypatch.setattr(adapters.discord.client, "TIMEOUT", 0.3)
        fake.rate_limit(route=STARTER, retry_after=3600)
    caplog.clear()
    caplog.set_level(logging.INFO)
    await wiped.on_message(ask(wiped, fake, thread, "what are the risks?", mention=False))
    assert answers(fake, thread) == []  # nothing known of the thread: no answer, no crash
    [line] = [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name.startswith(("adapters", "bot"))
    ]
    assert line.startswith(f"Discord: cannot read the starter of thread {thread}:")
    no_traceback(caplog)
    await wiped.on_message(ask(wiped, fake, thread, "what are the risks?", mention=False))
    [answer] = answers(fake, thread)  # the failure was not remembered: read again, answered
    assert answer["content"].startswith(NOTICE)


def test_a_message_the_key_would_push_past_discords_limits_is_sent_without_it():
    key = card_key(REPO, "a" * 40, "en")
    room = {"title": "t", "description": "d" * 4096, "fields": [{"name": "n", "value": "v" * 1000}]}
    full = {"embeds": [{**room, "footer": {"text": "f" * (6000 - 4096 - 1002 - 1)}}]}  # 5999 of 6000
    short = {"embeds": [{"title": "t", "footer": {"text": f"{REPO} · heuristic"}}]}
    plain = {"content": "no embed"}
    kept, keyed, untouched = keyed_messages([full, short, plain], key)
    assert kept == full and untouched == plain
    assert footer(keyed).splitlines() == [f"{REPO} · heuristic", key]
    assert "\n" not in footer(short)  # the caller's message is not changed
    assert keyed_messages([short], "not a key") == [short]
