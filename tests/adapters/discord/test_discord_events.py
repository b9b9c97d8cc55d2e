"""Discord chat events as the gateway delivers them, against FakeDiscord on 127.0.0.1: `/digest`
interactions run through discord.py's CommandTree (callback and follow-ups through the interaction
webhook), and thread messages parsed from MESSAGE_CREATE payloads. Late, repeated, expired,
rate-limited and refused deliveries: one clear reply or a one-line log, never a traceback, a ping or a
second answer."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import discord
import pytest

import adapters.discord.client
import adapters.discord.handlers
from adapters.discord.handlers import DigestBot
from analysis.models import Importance
from bot.delivery.posting import post_digest
from tests.adapters.discord.test_discord_bot import (
    CHANNEL,
    DAY,
    LIVE_MENTION,
    REPO,
    day_commits,
    saved_digest,
)
from tests.fakes.digests import make_digest
from tests.fakes.discord_api import FakeDiscord


def no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


async def invoke(bot: DigestBot, data: dict[str, Any]) -> None:
    """What discord.py does with INTERACTION_CREATE, awaited: the tree runs the command (and its
    error handler, which logs a traceback for anything the command lets escape)."""
    interaction = discord.Interaction(data=data, state=bot._connection)
    await bot.tree._call(interaction)


# --- /digest ----------------------------------------------------------------------------------------


async def test_a_late_interaction_is_logged_in_one_line_and_nothing_is_done(bot, fake, events, caplog):
    data = fake.interaction({"ref": day_commits()[0].short_sha}, late=True)  # past Discord's 3 s
    await invoke(bot, data)
    [i] = fake.interactions.values()
    assert i.callbacks == [] and i.followups == []
    assert "analyse" not in events  # no work for an answer nobody can receive
    assert "too late" in caplog.text
    no_traceback(caplog)


async def test_the_same_interaction_delivered_twice_is_answered_once(bot, fake, events, caplog):
    data = fake.interaction({"ref": day_commits()[0].short_sha})
    await asyncio.gather(invoke(bot, data), invoke(bot, data))  # a gateway replay while the first works
    await invoke(bot, data)  # and once more after it finished
    [i] = fake.interactions.values()
    assert len(i.callbacks) == 1 and len(i.followups) == 1
    assert events.count("analyse") == 1
    no_traceback(caplog)


def expire_after_the_analysis(bot: DigestBot, fake: FakeDiscord, data: dict[str, Any]) -> None:
    real = bot.service.execute

    async def slow(*args: Any, **kw: Any) -> Any:
        result = await real(*args, **kw)
        fake.expire(data["id"])  # the 15 minutes ran out while it worked
        return result

    bot.service.execute = slow


async def test_an_expired_token_still_delivers_the_card_in_the_channel(bot, fake, store, caplog):
    """A long analysis outlived the 15-minute token: the follow-up is refused (10015), so the card goes
    into the channel the command came from as a bot message, without mentions, and is recorded (replies
    under it find the commit)."""
    caplog.set_level(logging.INFO, logger="adapters.discord.handlers")
    commit = day_commits()[0]
    data = fake.interaction({"ref": commit.short_sha})
    expire_after_the_analysis(bot, fake, data)
    await invoke(bot, data)
    [i] = fake.interactions.values()
    assert len(i.callbacks) == 1 and i.followups == []
    [card] = fake.messages_in(CHANNEL)
    assert card["embeds"] and card["embeds"][0]["url"] == commit.url
    assert fake.allowed_mentions() == [{"parse": []}]
    posts = store.get_posts("discord", CHANNEL, f"card:{REPO}@{commit.sha}/en")
    assert posts[f"card:{commit.sha}"]["message_id"] == card["id"]
    assert "10015" in caplog.text and "posting the card in the channel" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    no_traceback(caplog)


async def test_an_expired_token_and_a_refusing_channel_lose_the_card_in_one_line(bot, fake, store, caplog):
    commit = day_commits()[0]
    data = fake.interaction({"ref": commit.short_sha})
    expire_after_the_analysis(bot, fake, data)
    fake.fail_next(
        403, {"message": "Missing Permissions", "code": 50013}, route="POST /channels/{channel_id}/messages"
    )
    await invoke(bot, data)
    assert fake.messages_in(CHANNEL) == []
    [line] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert f"the card for {commit.short_sha} was not delivered" in line and "50013" in line
    assert store.get_posts("discord", CHANNEL, f"card:{REPO}@{commit.sha}/en") == {}
    no_traceback(caplog)


async def test_a_token_expiring_part_way_through_a_card_sends_the_rest_in_the_channel(
    bot, fake, store, caplog, monkeypatch
):
    real = adapters.discord.handlers.card_messages
    monkeypatch.setattr(
        adapters.discord.handlers, "card_messages", lambda *a: [*real(*a), {"content": "the rest"}]
    )
    commit = day_commits()[0]
    data = fake.interaction({"ref": commit.short_sha})
    expired = {"message": "Unknown Webhook", "code": 10015}
    fake.fail_next(404, expired, route="POST /webhooks/{webhook_id}/{token}", after=1)  # the second one
    await invoke(bot, data)
    [i] = fake.interactions.values()
    [first] = i.followups
    [rest] = fake.messages_in(CHANNEL)
    assert first["embeds"] and rest["content"] == "the rest"
    posts = store.get_posts("discord", CHANNEL, f"card:{REPO}@{commit.sha}/en")
    assert posts[f"card:{commit.sha}"]["message_id"] != rest["id"]  # the card starts with the follow-up
    no_traceback(caplog)


async def test_an_expired_token_after_a_days_post_leaves_the_post_and_one_line(bot, fake, caplog):
    data = fake.interaction({"date": DAY, "repo": REPO})
    real = bot.service.post_day

    async def post_then_expire(*args: Any, **kw: Any) -> Any:
        result = await real(*args, **kw)
        fake.expire(data["id"])
        return result

    bot.service.post_day = post_then_expire
    await invoke(bot, data)
    assert len(fake.threads()) == 1 and fake.messages_in(CHANNEL)  # the digest itself is posted
    no_traceback(caplog)


async def test_a_rate_limited_follow_up_is_waited_out_and_sent_once(bot, fake, caplog):
    data = fake.interaction({"ref": day_commits()[0].short_sha})
    fake.rate_limit(route="/webhooks/{webhook_id}/{token}", retry_after=0.01)
    await invoke(bot, data)
    [i] = fake.interactions.values()
    assert len(i.followups) == 1 and fake.rate_limited == 1
    no_traceback(caplog)


async def test_a_long_rate_limit_on_the_follow_up_is_bounded_and_one_line(bot, fake, caplog, monkeypatch):
    monkeypatch.setattr(adapters.discord.client, "TIMEOUT", 0.3)
    data = fake.interaction({"ref": day_commits()[0].short_sha})
    fake.rate_limit(route="/webhooks/{webhook_id}/{token}", retry_after=3600, count=5)
    await asyncio.wait_for(invoke(bot, data), 20)  # not an hour's sleep
    assert "could not report" in caplog.text and "rate-limited the bot for 3600 s" in caplog.text
    no_traceback(caplog)


async def test_an_answer_failing_part_way_keeps_what_was_delivered(bot, fake, caplog, monkeypatch):
    real = adapters.discord.handlers.card_messages
    monkeypatch.setattr(
        adapters.discord.handlers, "card_messages", lambda *a: [*real(*a), {"content": "the rest"}]
    )
    data = fake.interaction({"ref": day_commits()[0].short_sha})
    refused = {"message": "Invalid Form Body", "code": 50035}
    fake.fail_next(400, refused, route="POST /webhooks/{webhook_id}/{token}", after=1)  # the second one
    await invoke(bot, data)
    [i] = fake.interactions.values()
    assert not i.deleted_original  # the card the user already got stays
    [card, note] = i.followups
    assert card["embeds"] and note["content"].startswith("The rest of this answer could not be sent:")
    assert note["flags"] & 64  # only the user sees it
    no_traceback(caplog)


async def test_a_second_command_while_the_first_is_rate_limited_still_answers(bot, fake, caplog):
    """The process keeps serving: one interaction's trouble is not another's."""
    first = fake.interaction({"ref": "deadbeef"}, late=True)
    second = fake.interaction({"ref": "list"})
    await invoke(bot, first)
    await invoke(bot, second)
    replies = fake.interactions[second["id"]].replies
    assert replies and "No subscriptions" in replies[-1]["content"]
    no_traceback(caplog)


async def test_mentions_in_a_command_never_ping(bot, fake, caplog):
    data = fake.interaction({"ref": "@everyone <@&123> <@42>"})
    await invoke(bot, data)
    [i] = fake.interactions.values()
    [reply] = i.replies
    assert reply["allowed_mentions"] == {"parse": []}
    no_traceback(caplog)


# --- thread messages ---------------------------------------------------------------------------------


@pytest.fixture
async def thread(bot, fake, store) -> str:
    """A digest posted to the fake and the gateway's view of the guild (channels and threads)."""
    digest = saved_digest(store, make_digest(lang="en"))
    result = await post_digest(bot.poster, store, CHANNEL, digest)
    assert result.thread_id is not None
    bot._connection.parse_guild_create(fake.guild_payload())
    fake.mark = int(fake.snowflake())  # type: ignore[attr-defined]  # what came before is the digest
    return result.thread_id


def me(bot: DigestBot) -> dict[str, Any]:
    return {
        "id": str(bot.user.id),
        "username": "digestbot",
        "discriminator": "0",
        "avatar": None,
        "bot": True,
    }


def ask(
    bot: DigestBot,
    fake: FakeDiscord,
    where: str,
    text: str,
    *,
    mention: bool = True,
    is_bot: bool = False,
    **kw: Any,
):
    """A MESSAGE_CREATE as discord.py parses it."""
    content = f"<@{bot.user.id}> {text}" if mention else text
    data = fake.message_payload(where, content, mentions=(me(bot),) if mention else (), bot=is_bot, **kw)
    channel, _ = bot._connection._get_guild_channel(data)
    return discord.Message(state=bot._connection, channel=channel, data=data)


def answers(fake: FakeDiscord, where: str) -> list[dict[str, Any]]:
    """Our messages after the digest: the answers."""
    mark = getattr(fake, "mark", 0)
    return [
        m for m in fake.messages_in(where) if m["author"]["id"] == fake.user["id"] and int(m["id"]) > mark
    ]


async def test_a_question_is_answered_once_even_when_delivered_twice(bot, fake, thread, caplog):
    question = ask(bot, fake, thread, "what are the risks?")
    await asyncio.gather(bot.on_message(question), bot.on_message(question))  # a resumed gateway replays
    [answer] = answers(fake, thread)
    assert str(answer["message_reference"]["message_id"]) == str(question.id)
    assert answer["allowed_mentions"]["parse"] == []
    no_traceback(caplog)


async def test_two_services_on_one_bot_token_answer_a_question_once(bot, fake, thread, caplog):
    """Two `digestbot run` with the same bot token (a second by mistake, or the old and new one of a rolling
    restart) both receive every message from the gateway: each answered it, so every question got two
    answers. The answer's parts carry the question's nonce: Discord creates them once."""
    question = ask(bot, fake, thread, "what are the risks?")
    await bot.on_message(question)
    bot._seen_messages = adapters.discord.handlers._Seen()  # what the other process remembers: nothing
    await bot.on_message(question)
    [answer] = answers(fake, thread)
    assert str(answer["message_reference"]["message_id"]) == str(question.id)
    no_traceback(caplog)


async def test_our_own_answer_and_other_bots_are_never_answered(bot, fake, thread):
    await bot.on_message(ask(bot, fake, thread, "what are the risks?"))
    [answer] = answers(fake, thread)
    mine = discord.Message(state=bot._connection, channel=bot.get_channel(int(thread)), data=answer)
    await bot.on_message(mine)
    await bot.on_message(ask(bot, fake, thread, "what are the risks?", is_bot=True, author_id="77"))
    assert len(answers(fake, thread)) == 1


async def test_a_question_deleted_before_the_answer_still_gets_it(bot, fake, thread, caplog):
    question = ask(bot, fake, thread, "what are the risks?")
    fake.messages[thread] = [m for m in fake.messages[thread] if m["id"] != str(question.id)]
    await bot.on_message(question)
    assert len(answers(fake, thread)) == 1
    no_traceback(caplog)


@pytest.mark.parametrize("trouble", ["archived", "deleted", "forbidden", "no_history"])
async def test_a_thread_gone_or_refused_is_one_log_line(bot, fake, thread, caplog, trouble):
    question = ask(bot, fake, thread, "what are the risks?")
    if trouble == "archived":
        fake.archive(thread, locked=True)
    elif trouble == "deleted":
        fake.delete_channel(thread)
    elif trouble == "forbidden":
        body = {"message": "Missing Permissions", "code": 50013}
        fake.fail_next(403, body, route="/typing")
        fake.fail_next(403, body, route="/channels/{channel_id}/messages", count=5)
    else:
        fake.fail_next(
            403, {"message": "Missing Access", "code": 50001}, route="GET /channels/{channel_id}/messages"
        )
    caplog.clear()
    await bot.on_message(question)
    no_traceback(caplog)
    if trouble == "no_history":  # the answer goes out without the thread's earlier messages
        assert len(answers(fake, thread)) == 1
    else:
        assert "could not answer" in caplog.text
    # the bot keeps serving
    if trouble in ("forbidden", "no_history"):
        fake.clear_faults()
        await bot.on_message(ask(bot, fake, thread, "how many commits today?"))
        assert answers(fake, thread)[-1]["content"].startswith("7 commits today")


async def test_a_very_long_question_with_mentions_gets_a_short_safe_answer(bot, fake, thread, caplog):
    question = ask(bot, fake, thread, "what are the risks? @everyone <@&123> " + "why " * 1200)
    await bot.on_message(question)
    sent = answers(fake, thread)
    assert sent and all(len(m["content"]) <= 2000 for m in sent)
    assert all(m["allowed_mentions"]["parse"] == [] for m in sent)
    assert not any(LIVE_MENTION.search(m["content"]) for m in sent)
    assert fake.rejected == []
    no_traceback(caplog)


async def test_a_mention_in_a_thread_that_is_not_ours_says_where_to_ask(bot, fake, thread):
    fake.add_channel(123456789012345678, kind=11)
    foreign = fake.channels["123456789012345678"]
    foreign.update(
        parent_id=CHANNEL,
        guild_id=str(fake.guild_id),
        owner_id="42",
        message_count=0,
        member_count=1,
        thread_metadata={
            "archived": False,
            "auto_archive_duration": 1440,
            "archive_timestamp": "2026-01-27T00:00:00+00:00",
            "locked": False,
        },
    )
    bot._connection.parse_guild_create(fake.guild_payload())
    await bot.on_message(ask(bot, fake, foreign["id"], "risks?", mention=False))
    assert answers(fake, foreign["id"]) == []  # not to us, not our thread: silence
    await bot.on_message(ask(bot, fake, foreign["id"], "risks?"))
    [reply] = answers(fake, foreign["id"])
    assert "digest" in reply["content"]
    mine = discord.Message(state=bot._connection, channel=bot.get_channel(int(foreign["id"])), data=reply)
    await bot.on_message(mine)  # our own reply, delivered back: no reply to it
    assert len(answers(fake, foreign["id"])) == 1


async def test_a_mention_outside_a_thread_that_is_not_ours_is_not_answered(bot, fake, thread):
    await bot.on_message(ask(bot, fake, CHANNEL, "risks?"))  # a mention in a plain channel
    other = fake.add_user_message(CHANNEL, "hello", author_id="77")
    await bot.on_message(ask(bot, fake, CHANNEL, "thanks", reference=other["id"]))  # a reply-with-ping
    assert answers(fake, CHANNEL) == []


async def test_a_high_commit_is_named_in_the_answer(bot, fake, thread, store):
    await bot.on_message(ask(bot, fake, thread, "what are the risks?"))
    [answer] = answers(fake, thread)
    digest = make_digest(lang="en")
    assert all(c.short_sha in answer["content"] for c in digest.by_importance(Importance.HIGH))


async def test_a_read_only_database_still_answers_in_the_thread(bot, fake, thread, store, caplog):
    store.db.execute("PRAGMA query_only = 1")  # the file turned read-only under the running service
    high = make_digest(lang="en").by_importance(Importance.HIGH)[0]
    caplog.clear()
    await bot.on_message(ask(bot, fake, thread, f"what does {high.short_sha} change?"))  # sets the focus
    [answer] = answers(fake, thread)
    assert high.short_sha in answer["content"] and "Something went wrong" not in answer["content"]
    no_traceback(caplog)
    assert "the thread's focus is not remembered: database" in caplog.text and "is read-only" in caplog.text
