"""The Discord adapter: posting through discord.py's REST client to FakeDiscord (127.0.0.1), `/digest`
callbacks with spec'd Interaction mocks, thread questions with spec'd Message mocks, and the runtime.
A real ChatService runs underneath, over a temporary Store, an in-memory commit source and the
heuristic analyser."""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta
from typing import Any
from unittest.mock import MagicMock
from zoneinfo import ZoneInfo

import discord
import pytest
from discord.http import Route

from adapters.discord.client import NO_MENTIONS, login
from adapters.discord.handlers import DigestBot, command_text
from adapters.discord.poster import open_discord_poster
from adapters.discord.runtime import DiscordRuntime
from analysis.errors import ConfigError, InputError, ServiceError
from analysis.models import Commit, Digest, FileChange, Importance
from analysis.render.markdown import render_report
from bot.app import chat_service
from bot.chat.service import ChatService
from bot.config.settings import Settings
from bot.delivery.posting import post_digest, report_filename
from bot.digest.analyzers import HeuristicAnalyzer
from bot.digest.pipeline import save_digest
from bot.ports.protocols import ThreadContext
from bot.store.db import Store
from tests.fakes.digests import LONG_TEXT, make_analysis, make_commit, make_digest
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.sources import MemorySource

CHANNEL = "900000000000000100"
REPO = "acme/widgets"
DAY = "2026-01-26"
SENDS = "POST /channels/{channel_id}/messages"
LIVE_MENTION = re.compile(r"@(everyone|here)\b|<@!?\d+>|<@&\d+>")
ORIGINAL_BASE = Route.BASE


# --- fixtures ---------------------------------------------------------------------------------------


class SlowAnalyzer(HeuristicAnalyzer):
    """The heuristic analyser behind a delay, recording when it runs."""

    def __init__(self, events: list[Any], delay: float = 0.05):
        self.events = events
        self.delay = delay

    async def analyze(self, commits, lang, progress=None, **kw):
        self.events.append("analyse")
        await asyncio.sleep(self.delay)
        return await super().analyze(commits, lang, progress, **kw)


class RecordingAnswerer:
    def __init__(self) -> None:
        self.asked: list[tuple[ThreadContext, str, str]] = []

    async def answer(self, ctx: ThreadContext, question: str, lang: str) -> str:
        self.asked.append((ctx, question, lang))
        return "It may break @everyone's cache <@123>; see [docs](https://evil.example)."


def day_commits() -> list[Commit]:
    """One day of acme/widgets: a large rework (high), a mid-sized change (medium), a typo (low)."""
    noon = datetime(2026, 1, 26, 12, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
    big = [FileChange(f"src/widgets/engine/part{i}.py", "modified", 400, 0, "@@ +1 @@\n+x") for i in range(4)]
    mid = [FileChange("src/widgets/cache.py", "modified", 150, 60, "@@ -1 +1 @@\n-a\n+b")]
    low = [FileChange("docs/README.md", "modified", 1, 1, "@@ -1 +1 @@\n-a\n+b")]
    return [
        make_commit("[Feature] New widget engine @everyone (#1001)", files=big, committed_at=noon),
        make_commit("[Perf] Faster cache <@123> (#1002)", files=mid, committed_at=noon - timedelta(hours=1)),
        make_commit("[Doc] Fix a typo (#1003)", files=low, committed_at=noon - timedelta(hours=2)),
    ]


@pytest.fixture
def fake() -> Iterator[FakeDiscord]:
    with FakeDiscord() as server:
        yield server
        server.check()
    assert Route.BASE == ORIGINAL_BASE  # nothing leaked the fake's URL into other tests


@pytest.fixture
def settings(fake: FakeDiscord, tmp_path) -> Settings:
    return Settings(
        discord_bot_token=fake.token,
        discord_api_url=fake.base_url,
        discord_guild_id=fake.guild_id,
        digest_repo=REPO,
        digest_lang="en",
        digest_db=tmp_path / "digest.db",
    )


@pytest.fixture
def events() -> list[Any]:
    return []


@pytest.fixture
def answerer() -> RecordingAnswerer:
    return RecordingAnswerer()


@pytest.fixture
def service(settings: Settings, store: Store, events: list[Any]) -> ChatService:
    commits = day_commits()
    return chat_service(
        settings,
        store,
        source_factory=lambda repo: MemorySource(repo, commits, events=events),
        analyzer=SlowAnalyzer(events),
    )


@pytest.fixture
async def bot(fake: FakeDiscord, service: ChatService) -> AsyncIterator[DigestBot]:
    with fake.routed():
        client = DigestBot(service, guild_id=fake.guild_id)
        await login(client, fake.token)  # REST only: setup_hook syncs the commands, no gateway
        try:
            yield client
        finally:
            await client.close()


def saved_digest(store: Store, digest: Digest) -> Digest:
    """A digest as the pipeline leaves it: commits and digest recorded (thread questions read them)."""
    for commit in digest.commits:
        store.save_commit(commit)
    save_digest(store, digest)
    return digest


def thread_messages(fake: FakeDiscord) -> list[dict[str, Any]]:
    [thread] = fake.threads()
    return fake.messages_in(thread["id"])


def all_texts(message: dict[str, Any]) -> list[str]:
    out = [message.get("content") or ""]
    for e in message.get("embeds", []):
        out += [e.get("title", ""), e.get("description", ""), e.get("footer", {}).get("text", "")]
        out += [e.get("author", {}).get("name", "")]
        out += [t for f in e.get("fields", []) for t in (f["name"], f["value"])]
    return out


# --- posting ----------------------------------------------------------------------------------------


async def test_posts_parent_thread_cards_medium_list_and_report(fake, store, settings):
    digest = saved_digest(store, make_digest(lang="en"))  # 2 high, 2 medium, 3 low
    async with open_discord_poster(settings) as poster:
        result = await post_digest(poster, store, CHANNEL, digest)

    [parent] = fake.messages_in(CHANNEL)
    [embed] = parent["embeds"]
    assert "acme/widgets" in embed["title"] and "2026-01-26" in embed["title"]
    [thread] = fake.threads()
    assert thread["id"] == parent["id"] == result.thread_id  # a thread started from the parent
    assert thread["parent_id"] == CHANNEL and thread["name"] == "2026-01-26 · acme/widgets"
    cards, medium, report = (lambda m: (m[:2], m[2], m[3]))(thread_messages(fake))
    highs = digest.by_importance(Importance.HIGH)
    assert [c["embeds"][0]["url"] for c in cards] == [c.url for c in highs]
    assert medium["embeds"][0]["title"] == "🟡 Medium importance (2)"
    [(name, data)] = fake.attachments(thread["id"])
    assert name == report_filename(digest) == "digest-acme-widgets-2026-01-26.en.md"
    assert data.decode("utf-8") == render_report([digest], "en")  # the full report, UTF-8
    assert report["attachments"][0]["filename"] == name
    assert fake.allowed_mentions() == [{"parse": []}] * 5  # every message: no mentions at all
    assert fake.rejected == []
    posts = store.get_posts("discord", CHANNEL, result.key)
    assert set(posts) == {"parent", *(f"card:{c.sha}" for c in highs), "medium", "report"}
    assert posts["report"]["message_id"] == report["id"]


async def test_huge_hostile_analysis_is_split_never_cut_and_never_pings(fake, store, settings):
    commit = make_commit("@everyone ping <@123> and <@&456> in <#789> **now**", body="@here too")
    risks = [f"risk-{i} @everyone <@123> <@&456> {LONG_TEXT}" for i in range(25)]
    analysis = make_analysis(commit, "high", risks=risks, summary="<@&456> " + LONG_TEXT * 3)
    digest = saved_digest(store, make_digest(commits=[commit], analyses=[analysis], lang="en"))
    async with open_discord_poster(settings) as poster:
        await post_digest(poster, store, CHANNEL, digest)

    assert fake.rejected == []  # Discord's limits held (the fake answers 400 otherwise)
    messages = [*fake.messages_in(CHANNEL), *thread_messages(fake)]
    card = [m for m in thread_messages(fake) if m["embeds"]]  # one high commit: every embed is its card
    assert len(card) > 1  # split across messages
    values = " ".join(
        " ".join([e.get("description", ""), *(f["value"] for f in e.get("fields", []))])
        for m in card
        for e in m["embeds"]
    )
    squashed = "".join(values.split())
    for i in range(25):  # every risk, whole
        assert re.search(rf"risk-{i}@\u200beveryone.*?THE-END", squashed)
    assert squashed.count("THE-END") == 25 + 3
    for message in messages:
        for text in all_texts(message):
            assert not LIVE_MENTION.search(text), text
    assert all(am == {"parse": []} for am in fake.allowed_mentions())


async def test_repost_adds_nothing_even_after_a_restart(fake, store, settings, tmp_path):
    digest = saved_digest(store, make_digest(lang="en"))
    async with open_discord_poster(settings) as poster:
        first = await post_digest(poster, store, CHANNEL, digest)
        sends = fake.by_route[SENDS]
        again = await post_digest(poster, store, CHANNEL, digest)
    assert again.posted == [] and again.skipped == first.posted
    restarted = Store(tmp_path / "digest.db")  # a new process on the same database
    try:
        async with open_discord_poster(settings) as poster:
            after_restart = await post_digest(poster, restarted, CHANNEL, digest)
    finally:
        restarted.close()
    assert after_restart.posted == [] and after_restart.thread_id == first.thread_id
    assert fake.by_route[SENDS] == sends
    assert len(fake.threads()) == 1


async def test_interrupted_post_resumes_with_only_the_missing_items(fake, store, settings):
    digest = saved_digest(store, make_digest(lang="en"))
    # Parent and first card go through, then Discord refuses the second card.
    fake.fail_next(403, {"message": "Missing Permissions", "code": 50013}, route=SENDS, after=2)
    async with open_discord_poster(settings) as poster:
        with pytest.raises(ServiceError, match="Missing Permissions"):
            await post_digest(poster, store, CHANNEL, digest)
        assert len(thread_messages(fake)) == 1
        resumed = await post_digest(poster, store, CHANNEL, digest)
    highs = digest.by_importance(Importance.HIGH)
    assert resumed.skipped == ["parent", f"card:{highs[0].sha}"]
    assert resumed.posted == [f"card:{highs[1].sha}", "medium", "report"]
    messages = thread_messages(fake)
    assert len(messages) == 4 and len(fake.messages_in(CHANNEL)) == 1  # each item exactly once
    assert [m["embeds"][0]["url"] for m in messages[:2]] == [c.url for c in highs]


@pytest.mark.parametrize("global_", [False, True])
async def test_a_429_is_waited_out_and_retried(fake, store, settings, global_):
    digest = saved_digest(store, make_digest(lang="en"))
    fake.rate_limit(route=SENDS, retry_after=0.2, count=2, global_=global_)
    async with open_discord_poster(settings) as poster:
        began = asyncio.get_running_loop().time()
        await post_digest(poster, store, CHANNEL, digest)
        waited = asyncio.get_running_loop().time() - began
    assert fake.rate_limited == 2 and waited >= 0.4  # retry_after from the JSON body, honoured
    assert len(fake.messages_in(CHANNEL)) == 1 and len(thread_messages(fake)) == 4  # nothing doubled


@pytest.mark.parametrize("global_", [False, True])
async def test_a_rate_limit_longer_than_the_wait_is_said_as_one(fake, store, settings, monkeypatch, global_):
    """discord.py sleeps out a 429 itself; cut off by our bound, the error says it was rate-limited
    (and for how long), not that Discord did not answer, which reads as an outage."""
    import adapters.discord.client

    digest = saved_digest(store, make_digest(lang="en"))
    async with open_discord_poster(settings) as poster:
        monkeypatch.setattr(adapters.discord.client, "TIMEOUT", 0.3)
        fake.rate_limit(retry_after=3600, count=1, global_=global_)
        with pytest.raises(ServiceError) as err:
            await post_digest(poster, store, CHANNEL, digest)
    scope = " (global)" if global_ else ""
    assert f"Discord rate-limited the bot{scope} for 3600 s, longer than the 0.3 s we wait" in str(err.value)
    assert "no answer" not in str(err.value) and fake.messages_in(CHANNEL) == []


async def test_bucket_headers_are_respected_without_hitting_429(store, tmp_path):
    with FakeDiscord(bucket_limit=2, bucket_per=0.2) as fake:
        settings = Settings(discord_bot_token=fake.token, discord_api_url=fake.base_url)
        digest = saved_digest(store, make_digest(["high"] * 5, lang="en"))
        async with open_discord_poster(settings) as poster:
            await post_digest(poster, store, CHANNEL, digest)
        assert len(thread_messages(fake)) == 6
        assert fake.rate_limited == 0  # discord.py paced itself from X-RateLimit-* per route bucket


async def test_thread_failure_removes_the_parent_so_a_retry_is_clean(fake, store, settings):
    digest = saved_digest(store, make_digest(lang="en"))
    fake.fail_next(403, {"message": "Missing Permissions", "code": 50013}, route="/threads")
    async with open_discord_poster(settings) as poster:
        with pytest.raises(ServiceError, match="Create Public Threads"):
            await post_digest(poster, store, CHANNEL, digest)
        assert fake.messages_in(CHANNEL) == []  # no orphan parent left behind
        await post_digest(poster, store, CHANNEL, digest)
    assert len(fake.messages_in(CHANNEL)) == 1 and len(fake.threads()) == 1


async def test_channels_that_cannot_hold_a_digest_are_refused_clearly(fake, store, settings):
    fake.add_channel(900_000_000_000_000_200, kind=15, name="forum")
    digest = saved_digest(store, make_digest(lang="en"))
    async with open_discord_poster(settings) as poster:
        with pytest.raises(ServiceError, match="text or announcement channel"):
            await post_digest(poster, store, "900000000000000200", digest)
        with pytest.raises(ServiceError, match="not found"):
            await post_digest(poster, store, "900000000000000999", digest)
        with pytest.raises(InputError, match="Copy ID"):
            await post_digest(poster, store, "#general", digest)


@pytest.mark.parametrize(("kind", "name"), [(15, "forum"), (4, "category"), (2, "voice")])
async def test_work_for_a_channel_that_cannot_hold_it_is_given_up_not_retried_for_ever(
    fake, store, settings, kind, name
):
    """A forum, category or voice channel id in discord_channels never takes a notice or a roll-up: the
    pending work was retried every 5 minutes for ever (and listed by `status` as pending)."""
    from bot.delivery import outbox

    fake.add_channel(900_000_000_000_000_300, kind=kind, name=name)
    async with open_discord_poster(settings) as poster:
        job = {"key": "failure:x:2026-01-27", "text": "The digest failed", "since": None}
        state = await outbox.submit(poster, store, "notice", "900000000000000300", "notice:k", job)
    assert state == "gave_up"
    assert "text or announcement channel" in store.get_work("notice:k")["last_error"]
    assert store.pending_work() == []


@pytest.mark.parametrize("scheme", ["Bot ", "bot\t", "BOT   "])
async def test_a_token_pasted_with_its_bot_scheme_still_logs_in(fake, settings, caplog, scheme):
    token = settings.discord_bot_token.get_secret_value()
    pasted = settings.model_copy(update={"discord_bot_token": discord_secret(f"{scheme}{token}")})
    async with open_discord_poster(pasted):
        pass
    assert "starts with 'Bot '" in caplog.text and token not in caplog.text


async def test_login_errors_are_one_clear_line(fake, settings):
    bad = settings.model_copy(update={"discord_bot_token": discord_secret("wrong-token-XYZ")})
    with pytest.raises(ConfigError, match="rejected DISCORD_BOT_TOKEN") as err:
        async with open_discord_poster(bad):
            pass
    assert "wrong-token-XYZ" not in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ConfigError, match="DISCORD_BOT_TOKEN is not set"):
        async with open_discord_poster(settings.model_copy(update={"discord_bot_token": None})):
            pass
    with pytest.raises(ConfigError, match="DISCORD_API_URL"):
        async with open_discord_poster(settings.model_copy(update={"discord_api_url": "ftp://x"})):
            pass
    assert Route.BASE == ORIGINAL_BASE


def discord_secret(value: str):
    from pydantic import SecretStr

    return SecretStr(value)


# --- /digest ----------------------------------------------------------------------------------------


def interaction(events: list[Any], *, channel: Any = None, guild_id: int | None = 1) -> Any:
    """A spec'd Interaction whose response and follow-ups record themselves into events."""
    ids = itertools.count(5000)
    i = MagicMock(spec=discord.Interaction)
    i.response = MagicMock(spec=discord.InteractionResponse)
    i.followup = MagicMock(spec=discord.Webhook)
    i.channel = channel if channel is not None else MagicMock(spec=discord.TextChannel, id=int(CHANNEL))
    i.channel_id = int(CHANNEL)
    i.guild_id = guild_id
    i.user = MagicMock(spec=discord.Member, id=7)
    i.response.defer.side_effect = lambda **kw: events.append(("defer", kw))
    i.response.send_message.side_effect = lambda *a, **kw: events.append(("send_message", a, kw))
    i.delete_original_response.side_effect = lambda: events.append(("delete_original",))

    def followup(*args: Any, **kw: Any) -> Any:
        events.append(("followup", args, kw))
        return MagicMock(spec=discord.WebhookMessage, id=next(ids))

    i.followup.send.side_effect = followup
    return i


def kinds(events: list[Any]) -> list[str]:
    return [e if isinstance(e, str) else e[0] for e in events]


async def run_digest(bot: DigestBot, i: Any, **options: str) -> None:
    command = bot.tree.get_command("digest")
    assert command is not None
    await command.callback(i, **options)


async def test_card_defers_before_the_slow_analysis_then_follows_up(bot, events, store):
    sha = day_commits()[0].short_sha
    i = interaction(events)
    await run_digest(bot, i, ref=sha)
    assert kinds(events) == ["defer", "fetch", "analyse", "followup"]
    assert events[0][1] == {"thinking": True, "ephemeral": False}
    kw = events[-1][2]
    assert kw["allowed_mentions"] is NO_MENTIONS and kw["wait"] is True
    [embed] = kw["embeds"]
    assert embed.title.startswith("🔴 \\[Feature\\] New widget engine @\u200beveryone")
    assert embed.url == day_commits()[0].url
    # The card is recorded: a reply to it is about this commit.
    ctx = bot.service.thread_context("discord", CHANNEL, "5000")
    assert ctx is not None and ctx.commit is not None and ctx.commit.short_sha == sha


async def test_a_card_asked_for_again_at_once_points_at_the_first(bot, events):
    sha = day_commits()[0].short_sha
    asked: list[list[Any]] = [[], []]
    await asyncio.gather(*(run_digest(bot, interaction(e), ref=sha) for e in asked))
    replies = sorted((e[-1][2] for e in asked), key=lambda kw: "embeds" in kw)
    notice, card = replies
    assert card["embeds"] and "content" not in card  # one card; the other asker is pointed at it
    assert "embeds" not in notice and notice["allowed_mentions"] is NO_MENTIONS
    assert f"The card for {sha} was just posted" in notice["content"]
    assert f"https://discord.com/channels/1/{CHANNEL}/5000" in notice["content"]


async def test_bad_input_is_ephemeral_at_once_without_a_defer(bot, events):
    i = interaction(events)
    await run_digest(bot, i, ref="what is this")
    assert kinds(events) == ["send_message"]
    _, args, kw = events[0]
    assert kw["ephemeral"] is True and "one reference at a time" in args[0]
    events.clear()
    await run_digest(bot, interaction(events), ref="abc1234", date=DAY)
    assert kinds(events) == ["send_message"] and "not both" in events[0][1][0]


async def test_unknown_commit_error_is_ephemeral_after_the_public_defer(bot, events):
    i = interaction(events)
    await run_digest(bot, i, ref="deadbeef")
    assert kinds(events) == ["defer", "fetch", "delete_original", "followup"]
    _, args, kw = events[-1]
    assert kw["ephemeral"] is True and "no commit deadbeef" in args[0]


async def test_help_and_list_are_private(bot, events):
    await run_digest(bot, interaction(events))
    assert kinds(events) == ["send_message"] and events[0][2]["ephemeral"] is True
    assert "/digest ref:" in events[0][1][0]
    events.clear()
    await run_digest(bot, interaction(events), ref="list")
    assert events[0] == ("defer", {"thinking": True, "ephemeral": True})
    assert events[-1][2]["content"] == "No subscriptions in this channel."


async def test_date_posts_the_digest_into_the_channel(bot, events, fake):
    i = interaction(events)
    await run_digest(bot, i, date=DAY, repo=REPO)
    assert kinds(events) == ["defer", "fetch", "analyse", "followup"]
    [parent] = fake.messages_in(CHANNEL)
    [thread] = fake.threads()
    text = events[-1][1][0]
    assert text == f"Posted the {DAY} digest of {REPO}: <#{thread['id']}>"
    assert len(thread_messages(fake)) >= 2 and parent["embeds"]
    sends = fake.by_route[SENDS]
    events.clear()
    await run_digest(bot, interaction(events), date=DAY)  # the channel's repository: DIGEST_REPO
    assert "already in this channel" in events[-1][1][0]
    assert fake.by_route[SENDS] == sends


async def test_a_day_cannot_be_posted_from_inside_a_thread(bot, events):
    thread = MagicMock(spec=discord.Thread, id=123, parent_id=int(CHANNEL))
    await run_digest(bot, interaction(events, channel=thread), date=DAY)
    assert kinds(events) == ["send_message"] and events[0][2]["ephemeral"] is True
    assert "text channel" in events[0][1][0]


@pytest.mark.parametrize(
    ("ref", "date", "repo", "text"),
    [
        (None, None, None, "help"),
        ("abc1234", None, None, "abc1234"),
        ("abc1234", None, "o/n", "o/n@abc1234"),
        ("#12", None, "o/n", "o/n@#12"),
        ("https://github.com/a/b/commit/abc1234", None, "o/n", "https://github.com/a/b/commit/abc1234"),
        (None, DAY, None, DAY),
        (None, DAY, "o/n", f"{DAY} o/n"),
        ("subscribe", None, "o/n", "subscribe o/n"),
        ("subscribe 08:30 en", None, "o/n", "subscribe o/n 08:30 en"),
        ("list", None, "o/n", "list"),
    ],
)
def test_command_text(ref, date, repo, text):
    assert command_text(ref, date, repo) == text


def test_command_text_rejects_contradictions():
    with pytest.raises(InputError):
        command_text("abc1234", DAY, None)
    with pytest.raises(InputError):
        command_text(None, None, "o/n")


async def test_commands_synced_to_the_guild(bot, fake):
    [command] = fake.commands[str(fake.guild_id)]
    assert command["name"] == "digest"
    assert [o["name"] for o in command["options"]] == ["ref", "date", "repo"]
    assert all(not o.get("required") for o in command["options"])
    assert "global" not in fake.commands


# --- thread questions -------------------------------------------------------------------------------


def thread_channel(thread_id: str, history: list[Any] = ()) -> Any:
    channel = MagicMock(spec=discord.Thread, id=int(thread_id))

    async def earlier(**kw: Any) -> AsyncIterator[Any]:
        for message in history:  # newest first, as Discord gives them
            yield message

    channel.history.side_effect = earlier
    return channel


def message(bot: DigestBot, channel: Any, text: str, *, mention: bool = True, **kw: Any) -> Any:
    m = MagicMock(spec=discord.Message)
    m.author = MagicMock(spec=discord.Member, id=kw.get("author_id", 42), bot=kw.get("is_bot", False))
    m.author.display_name = "alice"
    m.webhook_id = None
    m.guild = MagicMock(spec=discord.Guild)
    m.channel = channel
    m.mentions = [bot.user] if mention else []
    m.content = f"<@{bot.user.id}> {text}" if mention else text
    reference = kw.get("reference")
    m.reference = MagicMock(spec=discord.MessageReference, message_id=int(reference)) if reference else None
    return m


@pytest.fixture
async def posted(bot: DigestBot, store: Store) -> tuple[Digest, str]:
    """A digest posted to the fake: (digest, thread id)."""
    digest = saved_digest(store, make_digest(lang="en"))
    result = await post_digest(bot.poster, store, CHANNEL, digest)
    assert result.thread_id is not None
    return digest, result.thread_id


async def test_a_mention_in_our_thread_is_answered_in_the_thread(bot, posted):
    digest, thread_id = posted
    channel = thread_channel(thread_id)
    question = message(bot, channel, "what are the risks?")
    await bot.on_message(question)
    channel.send.assert_awaited_once()
    args, kw = channel.send.call_args
    # a reply to the question, still sent if the question is deleted meanwhile
    question.to_reference.assert_called_once_with(fail_if_not_exists=False)
    assert (
        kw["reference"] is question.to_reference.return_value
        and kw["allowed_mentions"] is NO_MENTIONS
        and kw["mention_author"] is False
    )
    for commit in digest.by_importance(Importance.HIGH):
        assert f"risk of {commit.short_sha}" in args[0]  # from the stored analyses


async def test_a_reply_to_a_card_is_about_that_commit(bot, posted, fake):
    digest, thread_id = posted
    high = digest.by_importance(Importance.HIGH)[1]
    card_id = next(m["id"] for m in fake.messages_in(thread_id) if m["embeds"][0].get("url") == high.url)
    channel = thread_channel(thread_id)
    await bot.on_message(message(bot, channel, "is this safe?", reference=card_id))
    args, _ = channel.send.call_args
    assert high.short_sha in args[0] and f"risk of {high.short_sha}" in args[0]
    other = digest.by_importance(Importance.HIGH)[0]
    assert f"risk of {other.short_sha}" not in args[0]


async def test_the_answerer_gets_the_question_the_history_and_its_answer_is_defused(
    fake, settings, store, events, answerer
):
    service = chat_service(settings, store, analyzer=SlowAnalyzer(events), answerer=answerer)
    with fake.routed():
        client = DigestBot(service, guild_id=fake.guild_id)
        await login(client, fake.token)
        try:
            digest = saved_digest(store, make_digest(lang="en"))
            thread_id = (await post_digest(client.poster, store, CHANNEL, digest)).thread_id
            mine = MagicMock(spec=discord.Message, content="earlier answer")
            mine.author = MagicMock(spec=discord.ClientUser, id=client.user.id, display_name="digestbot")
            theirs = MagicMock(spec=discord.Message, content="first question")
            theirs.author = MagicMock(spec=discord.Member, id=42, display_name="alice")
            channel = thread_channel(thread_id, history=[mine, theirs])
            await client.on_message(message(client, channel, "  and the cache?  "))
        finally:
            await client.close()
    [(ctx, question, lang)] = answerer.asked
    assert question == "and the cache?" and lang == "en"
    assert ctx.history == [("user", "first question"), ("assistant", "earlier answer")]
    sent = channel.send.call_args.args[0]
    assert not LIVE_MENTION.search(sent) and "see docs." in sent  # no ping; the outside link's label only
    assert "evil.example" not in sent and "](" not in sent


async def test_not_our_thread_is_silent_unless_we_are_mentioned(bot, posted):
    channel = thread_channel("123456789012345678")
    bot.message_content = True
    await bot.on_message(message(bot, channel, "risks?", mention=False))
    channel.send.assert_not_called()
    await bot.on_message(message(bot, channel, "risks?"))  # asked by name: told where to ask
    channel.send.assert_awaited_once()
    assert "digest" in channel.send.call_args.args[0]


async def test_own_and_other_bots_messages_are_ignored(bot, posted):
    _, thread_id = posted
    channel = thread_channel(thread_id)
    await bot.on_message(message(bot, channel, "risks?", author_id=bot.user.id))
    await bot.on_message(message(bot, channel, "risks?", is_bot=True))
    channel.send.assert_not_called()


async def test_without_a_mention_only_the_content_intent_gets_an_answer(bot, posted):
    _, thread_id = posted
    channel = thread_channel(thread_id)
    await bot.on_message(message(bot, channel, "risks?", mention=False))
    channel.send.assert_not_called()  # the default: no privileged intent, no text to read
    bot.message_content = True
    await bot.on_message(message(bot, channel, "risks?", mention=False))
    channel.send.assert_awaited_once()


async def test_answers_link_their_commits_and_a_replied_card_stays_the_focus(bot, posted, fake):
    digest, thread_id = posted
    high = digest.by_importance(Importance.HIGH)[1]
    card_id = next(m["id"] for m in fake.messages_in(thread_id) if m["embeds"][0].get("url") == high.url)
    channel = thread_channel(thread_id)
    await bot.on_message(message(bot, channel, "who wrote this?", reference=card_id))
    sent = channel.send.call_args.args[0]
    assert f"[`{high.short_sha}`](<{high.url}>)" in sent and "Author: " in sent
    await bot.on_message(message(bot, channel, "and its risks?"))  # no reference: the thread's focus
    sent = channel.send.call_args.args[0]
    assert f"risk of {high.short_sha}" in sent and not LIVE_MENTION.search(sent)
    await bot.on_message(message(bot, channel, "how many commits today?"))
    assert channel.send.call_args.args[0].startswith("7 commits today: 2 high, 2 medium, 3 low.")


async def test_a_models_invented_facts_never_reach_a_discord_thread(fake, settings, store, events):
    class Inventing:
        async def answer(self, ctx, question, lang):
            return "Mostly fine. It was reverted by 9f8e7d6c5b1a (#9999) and is 45% faster."

    service = chat_service(settings, store, analyzer=SlowAnalyzer(events), answerer=Inventing())
    with fake.routed():
        client = DigestBot(service, guild_id=fake.guild_id)
        await login(client, fake.token)
        try:
            digest = saved_digest(store, make_digest(lang="en"))
            thread_id = (await post_digest(client.poster, store, CHANNEL, digest)).thread_id
            channel = thread_channel(thread_id)
            await client.on_message(message(client, channel, "thoughts?"))
        finally:
            await client.close()
    sent = channel.send.call_args.args[0]
    assert "Mostly fine." in sent and "9f8e7d6c5b1a" not in sent and "#9999" not in sent and "45%" not in sent
    assert "1 statement(s)" in sent


# --- the runtime ------------------------------------------------------------------------------------


async def test_runtime_logs_in_syncs_commands_and_posts(fake, settings, service, store):
    runtime = DiscordRuntime(settings, service)
    await runtime.start(gateway=False)
    try:
        assert fake.base_url == Route.BASE
        assert runtime.poster is not None and runtime.poster.platform == "discord"
        assert [c["name"] for c in fake.commands[str(fake.guild_id)]] == ["digest"]
        digest = saved_digest(store, make_digest(lang="en"))
        result = await post_digest(runtime.poster, store, CHANNEL, digest)
        assert result.posted[0] == "parent"
    finally:
        await runtime.stop()
    assert Route.BASE == ORIGINAL_BASE and runtime.poster is None


async def test_a_gateway_ended_by_an_unexpected_error_reconnects(
    fake, settings, service, monkeypatch, caplog
):
    """discord.py's connect retries network failures itself; an error it does not expect (its parser on
    an unknown payload) ended the gateway task for good while posting went on: the bot stayed deaf."""
    import adapters.discord.runtime as runtime_module
    from adapters.discord.handlers import DigestBot

    monkeypatch.setattr(runtime_module, "GATEWAY_RETRY_FIRST", 0.01)
    calls: list[int] = []
    connected = asyncio.Event()

    async def connect(self, *, reconnect: bool = True) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise AttributeError("'NoneType' object has no attribute 'get'")
        connected.set()
        while not self.is_closed():  # serving until the runtime stops
            await asyncio.sleep(0.01)

    monkeypatch.setattr(DigestBot, "connect", connect)
    runtime = DiscordRuntime(settings, service)
    with caplog.at_level(logging.ERROR, logger="adapters.discord.runtime"):
        await runtime.start()
        try:
            await asyncio.wait_for(connected.wait(), 5)
            assert runtime._task is not None and not runtime._task.done()
        finally:
            await runtime.stop()
    assert len(calls) == 2
    [said] = [r.getMessage() for r in caplog.records]
    assert said.startswith("Discord gateway stopped: AttributeError:") and "reconnecting in 0s" in said


async def test_a_gateway_closed_by_a_setting_is_not_retried(fake, settings, service, monkeypatch):
    from adapters.discord.handlers import DigestBot

    calls: list[int] = []

    async def connect(self, *, reconnect: bool = True) -> None:
        calls.append(1)
        await self.close()  # what discord.py does on a bad token's close code, before raising
        raise RuntimeError("closed: 4004")

    monkeypatch.setattr(DigestBot, "connect", connect)
    runtime = DiscordRuntime(settings, service)
    await runtime.start()
    try:
        assert runtime._task is not None
        await asyncio.wait({runtime._task}, timeout=5)
        assert runtime._task.done() and calls == [1]
    finally:
        await runtime.stop()


async def test_runtime_syncs_globally_without_a_guild(fake, settings, service):
    runtime = DiscordRuntime(settings.model_copy(update={"discord_guild_id": None}), service)
    await runtime.start(gateway=False)
    await runtime.stop()
    assert [c["name"] for c in fake.commands["global"]] == ["digest"]


async def test_runtime_with_a_bad_token_fails_clearly_and_cleans_up(fake, settings, service):
    runtime = DiscordRuntime(
        settings.model_copy(update={"discord_bot_token": discord_secret("nope")}), service
    )
    with pytest.raises(ConfigError, match="rejected DISCORD_BOT_TOKEN"):
        await runtime.start(gateway=False)
    assert Route.BASE == ORIGINAL_BASE


# --- the CLI ----------------------------------------------------------------------------------------


def test_cli_post_of_a_one_commit_day_says_commit_not_commits(fake, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from bot.cli.main import cli
    from tests.fakes.github import FakeGitHub, make_file
    from tests.fakes.github import make_commit as api_commit

    one = api_commit("[CI] Tweak (#8)", "2026-01-26T05:00:00Z", files=[make_file("ci.yml")], repo="octo/demo")
    with FakeGitHub("octo/demo", [one]) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        monkeypatch.setenv("DISCORD_API_URL", fake.base_url)
        monkeypatch.setenv("DISCORD_BOT_TOKEN", fake.token)
        args = ["--db", str(tmp_path / "d.db"), "post", "--platform", "discord", "--channel", CHANNEL]
        result = CliRunner().invoke(cli, [*args, "--repo", "octo/demo", "--date", DAY, "--tz", "UTC"])
    assert f"octo/demo {DAY}: 1 commit; posted " in result.stderr, result.output


def test_cli_posts_a_threaded_digest_and_reposts_nothing(fake, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from bot.cli.main import cli
    from tests.fakes.github import FakeGitHub, make_file
    from tests.fakes.github import make_commit as api_commit

    commits = [
        api_commit(
            "[Feature] Big engine @everyone (#7)",
            "2026-01-26T03:00:00Z",
            files=[make_file(f"src/engine/m{i}.py", status="modified", additions=300) for i in range(4)],
            repo="octo/demo",
        ),
        api_commit(
            "[CI] Tweak (#8)", "2026-01-26T05:00:00Z", files=[make_file(".github/ci.yml")], repo="octo/demo"
        ),
    ]
    args = ["--db", str(tmp_path / "d.db"), "post", "--platform", "discord", "--channel", CHANNEL]
    args += ["--repo", "octo/demo", "--date", DAY, "--tz", "UTC"]
    with FakeGitHub("octo/demo", commits) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        monkeypatch.setenv("DISCORD_API_URL", fake.base_url)
        monkeypatch.setenv("DISCORD_BOT_TOKEN", fake.token)
        first = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert first.exit_code == 0, first.output
        again = CliRunner().invoke(cli, args, catch_exceptions=False)
        monkeypatch.setenv("DISCORD_BOT_TOKEN", "wrong")
        bad = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert first.stderr.strip().splitlines() == [  # one line: nothing else (no discord.py noise)
        f"octo/demo {DAY}: 2 commits; posted 3 item(s) to discord:{CHANNEL}, 0 already there"
    ]
    assert "posted 0 item(s)" in again.stderr and "already there" in again.stderr
    [parent] = fake.messages_in(CHANNEL)
    assert "octo/demo" in parent["embeds"][0]["title"]
    [thread] = fake.threads()
    card, report = fake.messages_in(thread["id"])  # the high commit's card, then the report (no medium)
    assert card["embeds"][0]["title"].startswith("🔴 \\[Feature\\] Big engine @\u200beveryone")
    assert report["attachments"][0]["filename"] == "digest-octo-demo-2026-01-26.zh.md"
    assert bad.exit_code == 2 and "rejected DISCORD_BOT_TOKEN" in bad.stderr and "wrong" not in bad.stderr


async def test_with_the_content_intent_a_thank_you_is_not_answered(bot, posted):
    _, thread_id = posted
    channel = thread_channel(thread_id)
    bot.message_content = True
    await bot.on_message(message(bot, channel, "thanks!", mention=False))
    channel.send.assert_not_called()
    await bot.on_message(message(bot, channel, "what could break?", mention=False))
    channel.send.assert_awaited_once()


# --- never twice: crashes, lost answers, network errors -------------------------------------------


class Crash(Exception):
    """The process dying (kill -9) at a chosen point: nothing after it runs, nothing is recorded."""


class CrashAfterAccept:
    """Wraps a poster: the `at`-th item is posted (Discord has it) and then the process dies before
    the store records it."""

    def __init__(self, inner: Any, at: int):
        self.inner, self.at, self.count = inner, at, 0
        self.platform = inner.platform

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        async def wrapped(*args: Any) -> Any:
            posted = await method(*args)
            self.count += 1
            if self.count == self.at:
                raise Crash(name)
            return posted

        return wrapped


def every_message(fake: FakeDiscord) -> list[dict[str, Any]]:
    return [m for channel in list(fake.messages) for m in fake.messages_in(channel)]


def assert_posted_once(fake: FakeDiscord, digest: Digest) -> None:
    """One parent with one thread holding each card, the list and the report exactly once."""
    [parent] = fake.messages_in(CHANNEL)
    [thread] = fake.threads()
    assert thread["id"] == parent["id"]
    messages = fake.messages_in(thread["id"])
    urls = [m["embeds"][0].get("url") for m in messages if m["embeds"]]
    highs = digest.by_importance(Importance.HIGH)
    assert urls[: len(highs)] == [c.url for c in highs]
    assert len(messages) == len(highs) + 2  # cards, the medium list, the report
    assert len(fake.attachments(thread["id"])) == 1


@pytest.mark.parametrize("restart", ["at-once", "much-later"])
@pytest.mark.parametrize("at", [1, 2, 3, 4, 5])
async def test_a_crash_after_discord_accepted_an_item_posts_nothing_twice(
    fake, store, settings, at, restart, tmp_path, monkeypatch
):
    """kill -9 right after Discord accepted item `at` (1 parent … 5 report), then the same post again
    in a new process (new Store, new client): only what is missing is posted. "much-later": the kill
    came before even the part was recorded, and Discord has forgotten the nonces by the restart, so
    only reading the channel and thread can tell what is there."""
    digest = saved_digest(store, make_digest(lang="en"))
    if restart == "much-later":
        monkeypatch.setattr(Store, "record_part", lambda *args: None, raising=False)
        fake.nonce_window = 0
    async with open_discord_poster(settings) as poster:
        with pytest.raises(Crash):
            await post_digest(CrashAfterAccept(poster, at), store, CHANNEL, digest)
    restarted = Store(tmp_path / "digest.db")
    async with open_discord_poster(settings) as poster:
        result = await post_digest(poster, restarted, CHANNEL, digest)
    assert len(result.posted) == 5 - (at - 1)
    assert_posted_once(fake, digest)
    assert len(restarted.get_posts("discord", CHANNEL, result.key)) == 5


async def test_a_crash_between_the_parent_and_its_thread_leaves_no_orphan(fake, store, settings, monkeypatch):
    digest = saved_digest(store, make_digest(lang="en"))

    async def die(*args: Any, **kwargs: Any) -> Any:
        raise Crash("killed before the thread")

    with monkeypatch.context() as patch:
        patch.setattr(discord.PartialMessage, "create_thread", die)
        patch.setattr(discord.Message, "create_thread", die)
        async with open_discord_poster(settings) as poster:
            with pytest.raises(Crash):
                await post_digest(poster, store, CHANNEL, digest)
    assert len(fake.messages_in(CHANNEL)) == 1 and fake.threads() == []  # the parent is up, alone
    async with open_discord_poster(settings) as poster:
        await post_digest(poster, store, CHANNEL, digest)
    assert_posted_once(fake, digest)  # the same parent, now with its thread


async def test_a_lost_store_is_rebuilt_from_discord_without_posting(fake, store, settings, tmp_path):
    digest = saved_digest(store, make_digest(lang="en"))
    async with open_discord_poster(settings) as poster:
        first = await post_digest(poster, store, CHANNEL, digest)
    sends = fake.by_route[SENDS]
    empty = Store(tmp_path / "empty.db")
    async with open_discord_poster(settings) as poster:
        result = await post_digest(poster, empty, CHANNEL, digest)
    assert fake.by_route[SENDS] == sends and result.thread_id == first.thread_id
    assert_posted_once(fake, digest)


async def test_a_card_cut_half_way_resumes_at_the_missing_part(fake, store, settings):
    commit = make_commit("[Feature] A big one (#1)")
    analysis = make_analysis(commit, "high", risks=[f"risk-{i} {LONG_TEXT}" for i in range(25)])
    digest = saved_digest(store, make_digest(commits=[commit], analyses=[analysis], lang="en"))
    # The parent and two parts of the card get through; the answer to the second is lost; then the
    # network is gone for good (every further send fails).
    fake.drop_after_accept(after=2)
    fake.fail_next(403, {"message": "Missing Permissions", "code": 50013}, route=SENDS, after=3, count=99)
    async with open_discord_poster(settings) as poster:
        with pytest.raises(ServiceError):
            await post_digest(poster, store, CHANNEL, digest)
    fake.clear_faults()
    async with open_discord_poster(settings) as poster:
        await post_digest(poster, store, CHANNEL, digest)
    [thread] = fake.threads()
    card = [m for m in fake.messages_in(thread["id"]) if m["embeds"]]
    assert len(card) > 2  # a card in several messages …
    prints = [(m["content"], str(m["embeds"])) for m in card]
    assert len(prints) == len(set(prints))  # … each part exactly once, in order
    squashed = "".join(" ".join(all_texts(m)) for m in card).replace(" ", "")
    assert all(len(re.findall(rf"risk-{i}(?!\d)", squashed)) == 1 for i in range(25))


async def test_a_500_after_discord_accepted_a_message_is_not_sent_twice(fake, store, settings, monkeypatch):
    """Discord stores the first card, then answers 500 to it and to every retry discord.py makes: the
    poster looks in the thread, finds the card and goes on; nothing is sent twice, nothing is missing."""
    real_sleep = asyncio.sleep
    monkeypatch.setattr(discord.http.asyncio, "sleep", lambda delay, *a: real_sleep(min(delay, 0.01), *a))
    digest = saved_digest(store, make_digest(lang="en"))
    fake.fail_after_accept(500, after=1, count=5)  # discord.py tries 5 times, then gives up
    async with open_discord_poster(settings) as poster:
        await post_digest(poster, store, CHANNEL, digest)
    assert_posted_once(fake, digest)
    sends = fake.calls_to(SENDS)
    assert all(c.payload.get("nonce") and c.payload.get("enforce_nonce") for c in sends)
    assert len({c.payload["nonce"] for c in sends}) == 5  # parent, 2 cards, list, report: 1 nonce each


async def test_a_dropped_connection_after_acceptance_is_reconciled_not_resent(fake, store, settings):
    digest = saved_digest(store, make_digest(lang="en"))
    fake.drop_after_accept(after=2)  # the second card is stored, its answer lost
    fake.drop_after_accept(route="/threads")  # and the thread's
    async with open_discord_poster(settings) as poster:
        await post_digest(poster, store, CHANNEL, digest)
    assert_posted_once(fake, digest)


async def test_network_failures_are_one_line_errors(fake, store, settings, monkeypatch):
    import socket

    digest = saved_digest(store, make_digest(lang="en"))
    with socket.socket() as closed:  # a port nobody listens on: connection refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    refused = settings.model_copy(update={"discord_api_url": f"http://127.0.0.1:{port}/api/v10"})
    with pytest.raises(ServiceError, match=r"cannot reach Discord at http://127.0.0.1:\d+/api/v10: ") as err:
        async with open_discord_poster(refused):
            pass
    assert "\n" not in str(err.value)
    fake.drop_after_accept(route="/channels/{channel_id}", count=3)  # the channel lookup: no answer
    async with open_discord_poster(settings) as poster:
        with pytest.raises(ServiceError, match="closed before Discord answered") as err:
            await post_digest(poster, store, CHANNEL, digest)
    assert "\n" not in str(err.value)
    monkeypatch.setattr("adapters.discord.client.TIMEOUT", 0.2)
    fake.latency = 0.5  # a server that answers too late
    with pytest.raises(ServiceError, match=r"no answer within 0.2 s"):
        async with open_discord_poster(settings):
            pass


def test_cli_a_dropped_connection_is_exit_2_in_one_line(fake, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from bot.cli.main import cli
    from tests.fakes.github import FakeGitHub
    from tests.fakes.github import make_commit as api_commit

    commits = [api_commit("[CI] Tweak (#8)", "2026-01-26T05:00:00Z", repo="octo/demo")]
    args = ["--db", str(tmp_path / "d.db"), "post", "--platform", "discord", "--channel", CHANNEL]
    args += ["--repo", "octo/demo", "--date", DAY, "--tz", "UTC"]
    fake.drop_after_accept(route="/channels/{channel_id}", count=5)
    with FakeGitHub("octo/demo", commits) as github:
        monkeypatch.setenv("GITHUB_API_URL", github.base_url)
        monkeypatch.setenv("DISCORD_API_URL", fake.base_url)
        monkeypatch.setenv("DISCORD_BOT_TOKEN", fake.token)
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and "closed before Discord answered" in line


async def test_a_parent_changed_since_the_crash_is_found_not_posted_again(fake, store, settings, monkeypatch):
    """kill -9 right after the parent, then the restart builds the digest anew with other analyses
    (say --refresh with an LLM): the parent in the channel is still this digest's, not a second one."""
    monkeypatch.setattr(Store, "record_part", lambda *args: None, raising=False)
    digest = saved_digest(store, make_digest(lang="en"))
    async with open_discord_poster(settings) as poster:
        with pytest.raises(Crash):
            await post_digest(CrashAfterAccept(poster, 1), store, CHANNEL, digest)
    fake.nonce_window = 0
    for sha, analysis in digest.analyses.items():
        digest.analyses[sha] = analysis.model_copy(update={"analyzer": "llm"})
    async with open_discord_poster(settings) as poster:
        await post_digest(poster, Store(settings.digest_db), CHANNEL, digest)
    assert len(fake.messages_in(CHANNEL)) == 1 and len(fake.threads()) == 1


async def test_without_read_message_history_a_post_still_goes_through(fake, store, settings, caplog):
    digest = saved_digest(store, make_digest(lang="en"))
    fake.fail_next(
        403,
        {"message": "Missing Access", "code": 50001},
        route="GET /channels/{channel_id}/messages",
        count=99,
    )
    async with open_discord_poster(settings) as poster:
        result = await post_digest(poster, store, CHANNEL, digest)
    assert len(result.posted) == 5
    assert_posted_once(fake, digest)
    assert "posting what the store lacks" in caplog.text
