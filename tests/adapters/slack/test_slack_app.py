"""The Slack adapter against a fake Slack Web API on 127.0.0.1: posting digests (threading, limits,
idempotency across restarts, reconciliation, 429s), `/digest` and thread questions dispatched to the
Bolt app as signed requests, HTTP mode over real HTTP and Socket Mode over a local WebSocket."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from datetime import date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import aiohttp
import pytest
from aiohttp import web
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

from adapters.slack.client import make_client
from adapters.slack.poster import EVENT_TYPE, SlackPoster, open_slack_poster
from adapters.slack.runtime import DigestApp, SlackRuntime, build_app
from analysis.errors import ConfigError, ServiceError
from analysis.models import Commit, Digest, FileChange, Importance, key_of
from analysis.render.markdown import render_report
from bot.app import chat_service
from bot.chat.service import ChatService
from bot.config.settings import Settings
from bot.delivery.posting import post_digest, report_filename
from bot.digest.analyzers import HeuristicAnalyzer
from bot.ports.protocols import Posted
from bot.store.db import Store
from tests.fakes.digests import make_analysis, make_commit
from tests.fakes.slack_api import BOT_ID, BOT_USER, TEAM, FakeSlack, eventually
from tests.fakes.sources import MemorySource

REPO = "acme/widgets"
DAY = date(2026, 1, 26)
TZ = "Asia/Shanghai"
CHANNEL = "C0DIGEST"
SECRET = "test-signing-secret-0123456789"
HOSTILE_TITLE = "<!channel> <@U123> @everyone <https://evil.example|click> <!subteam^S1> fix (#102)"
MASS = re.compile(r"<!(channel|here|everyone|subteam)|<@U|<https://evil")


# -- fixtures -----------------------------------------------------------------------------------------
def _patch(lines: int) -> str:
    return f"@@ -1,1 +1,{lines} @@\n" + "\n".join(f"+x{i} = {i}" for i in range(lines))


def _commit(title: str, hour: int, path: str, lines: int) -> Commit:
    when = datetime(2026, 1, 26, hour, 0, tzinfo=ZoneInfo(TZ))
    return make_commit(
        title, repo=REPO, committed_at=when, files=[FileChange(path, "modified", lines, 0, _patch(lines))]
    )


def day_commits() -> list[Commit]:
    """Two high (one hostile), two medium, one low under the heuristic analyser."""
    return [
        _commit("[Core] Rewrite the scheduler (#101)", 9, "vllm/core/scheduler.py", 1000),
        _commit(HOSTILE_TITLE, 10, "vllm/engine/llm.py", 850),
        _commit("[Bugfix] Fix cache eviction (#103)", 11, "vllm/cache/evict.py", 300),
        _commit("[Perf] Faster sampler (#104)", 12, "vllm/sampling/sampler.py", 200),
        _commit("[Docs] typo (#105)", 13, "docs/index.md", 2),
    ]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    import os

    for name in list(os.environ):
        if name.startswith(("SLACK_", "DIGEST_", "OPENAI_", "GITHUB_")):
            monkeypatch.delenv(name)


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake
        fake.check()


def make_settings(tmp_path: Path, slack: FakeSlack, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "digest_db": tmp_path / "digest.db",
        "slack_bot_token": slack.token,
        "slack_signing_secret": SECRET,
        "slack_api_url": slack.api_url,
        "digest_repo": REPO,
        "digest_tz": TZ,
        "digest_lang": "en",
        **overrides,
    }
    return Settings(_env_file=None, **values)


class GatedAnalyzer(HeuristicAnalyzer):
    """The heuristic analyser, held until the test opens the gate: a slow LLM."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.calls = 0

    async def analyze(self, commits, lang, progress=None, **kw):
        self.calls += 1
        await self.gate.wait()
        return await super().analyze(commits, lang, progress, **kw)


class RecordingAnswerer:
    """An LLM answerer stand-in: remembers what it was given, answers with hostile text."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, str, str]] = []

    async def answer(self, ctx, question, lang):
        self.seen.append((ctx, question, lang))
        subject = ctx.commit.short_sha if ctx.commit else "the day"
        return f"About {subject}: <!channel> look at the risks @here"


def make_service(settings: Settings, store: Store | None = None, **kwargs: Any) -> ChatService:
    commits = day_commits()
    kwargs.setdefault("analyzer", HeuristicAnalyzer())
    return chat_service(
        settings,
        store or Store(settings.digest_db),
        source_factory=lambda repo: MemorySource(repo, commits),
        **kwargs,
    )


@pytest.fixture
def settings(tmp_path, slack) -> Settings:
    return make_settings(tmp_path, slack)


@pytest.fixture
def service(settings) -> ChatService:
    return make_service(settings)


@pytest.fixture
async def app(settings, service) -> DigestApp:
    bolt = build_app(settings, service)
    yield bolt
    await bolt.bot.tasks.close(5)


async def build_day(service: ChatService) -> Digest:
    digest = await service.day_digest(REPO, DAY, "en", TZ)
    assert digest.stats == {"high": 2, "medium": 2, "low": 1, "total": 5}
    return digest


# -- signed requests ------------------------------------------------------------------------------------
def signed_headers(
    body: str, content_type: str, secret: str = SECRET, ts: int | None = None
) -> dict[str, str]:
    stamp = str(int(time.time()) if ts is None else ts)
    return {
        "content-type": content_type,
        "x-slack-request-timestamp": stamp,
        "x-slack-signature": SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body),
    }


def command_body(slack: FakeSlack, text: str, channel: str = CHANNEL, user: str = "UASKER") -> str:
    return urlencode(
        {
            "token": "legacy",
            "team_id": TEAM,
            "team_domain": "fake",
            "channel_id": channel,
            "channel_name": "digests",
            "user_id": user,
            "user_name": "asker",
            "command": "/digest",
            "text": text,
            "api_app_id": "A0APP",
            "response_url": slack.response_url(),
            "trigger_id": "1.2.3",
        }
    )


_event_ids = iter(range(1, 10**6))


def event_body(event: dict[str, Any]) -> str:
    return json.dumps(
        {
            "token": "legacy",
            "team_id": TEAM,
            "api_app_id": "A0APP",
            "event": {"channel": CHANNEL, "event_ts": event.get("ts"), **event},
            "type": "event_callback",
            "event_id": f"Ev{next(_event_ids):06d}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
        }
    )


async def send_command(app: DigestApp, slack: FakeSlack, text: str, **kw: Any):
    body = command_body(slack, text, **kw)
    headers = signed_headers(body, "application/x-www-form-urlencoded")
    return await app.async_dispatch(AsyncBoltRequest(body=body, headers=headers))


async def send_event(app: DigestApp, event: dict[str, Any]):
    body = event_body(event)
    response = await app.async_dispatch(
        AsyncBoltRequest(body=body, headers=signed_headers(body, "application/json"))
    )
    assert response.status == 200
    return response


def _texts(value: Any) -> list[str]:
    """Every string under a "text" key, depth first: what Slack renders of blocks."""
    if isinstance(value, dict):
        return [
            t for k, v in value.items() for t in ([v] if k == "text" and isinstance(v, str) else _texts(v))
        ]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def all_texts(slack: FakeSlack) -> list[str]:
    """Everything we made Slack show: messages, their blocks, responses and ephemerals."""
    return [t for m in slack.messages for t in [m.text, *_texts(m.blocks)]] + _texts(
        [*slack.responses, *slack.ephemerals]
    )


def body_text(message: Any) -> str:
    return "\n".join([message.text, *_texts(message.blocks)])


# -- posting a digest -----------------------------------------------------------------------------------
async def test_digest_is_threaded_with_cards_list_and_full_report(settings, service, slack):
    digest = await build_day(service)
    async with open_slack_poster(settings) as poster:
        result = await post_digest(poster, service.store, CHANNEL, digest)
    assert result.posted == [
        "parent",
        *[f"card:{c.sha}" for c in digest.by_importance(Importance.HIGH)],
        "medium",
        "report",
    ]
    [parent] = slack.channel_messages(CHANNEL)
    assert result.thread_id == parent.ts
    replies = slack.thread(CHANNEL, parent.ts)
    assert [m.metadata["event_payload"]["item"] for m in replies if m.metadata] == result.posted[1:-1]
    assert all(m.thread_ts == parent.ts for m in replies)  # every card, the list and the report
    assert all(m.extra.get("unfurl_links") is False for m in [parent, *replies] if m.metadata)
    assert parent.metadata == {
        "event_type": EVENT_TYPE,
        "event_payload": {"key": result.key, "item": "parent", "part": 0, "parts": 1},
    }
    # The report: uploaded into the thread, UTF-8, every byte of the Markdown.
    [upload] = slack.uploads.values()
    assert (upload.channel, upload.thread_ts, upload.filename) == (
        CHANNEL,
        parent.ts,
        report_filename(digest),
    )
    assert upload.content.decode("utf-8") == render_report([digest], "en")
    assert replies[-1].files and replies[-1].files[0]["name"] == upload.filename
    # The parent has the counts and links its high commits.
    text = body_text(parent)
    assert "🔴 High 2" in text and "🟡 Medium 2" in text and "🟢 Low 1" in text
    assert "Rewrite the scheduler" in text


async def test_hostile_commit_cannot_mention_or_link(settings, service, slack):
    digest = await build_day(service)
    async with open_slack_poster(settings) as poster:
        await post_digest(poster, service.store, CHANNEL, digest)
    texts = all_texts(slack)
    assert any("&lt;\u200b!channel&gt;" in t for t in texts)  # the title is there, escaped
    for text in texts:
        assert not MASS.search(text), text
        assert not re.search(r"(?<!\u200b)@(everyone|here|channel)\b", text.replace("@\u200b", "")), text


async def test_posting_again_posts_nothing_even_after_a_restart(settings, service, slack):
    digest = await build_day(service)
    async with open_slack_poster(settings) as poster:
        await post_digest(poster, service.store, CHANNEL, digest)
        posted = len(slack.messages)
        again = await post_digest(poster, service.store, CHANNEL, digest)
    assert again.posted == [] and len(again.skipped) == 5
    restarted = Store(settings.digest_db)  # a new process on the same database
    async with open_slack_poster(settings) as poster:
        slack.reset_counters()
        third = await post_digest(poster, restarted, CHANNEL, digest)
    assert third.posted == [] and len(slack.messages) == posted and len(slack.uploads) == 1
    assert slack.calls["chat.postMessage"] == 0


class Crash(Exception):
    pass


class CrashingPoster:
    """Wraps a poster; dies at a chosen item, before Slack sees it or after (before the store records it)."""

    def __init__(self, inner: SlackPoster, at: int, after_slack: bool):
        self.inner, self.at, self.after_slack = inner, at, after_slack
        self.platform = inner.platform
        self.count = 0

    def __getattr__(self, name: str):
        method = getattr(self.inner, name)

        async def wrapped(*args: Any) -> Posted:
            self.count += 1
            if self.count == self.at and not self.after_slack:
                raise Crash(name)
            posted = await method(*args)
            if self.count == self.at:
                raise Crash(name)
            return posted

        return wrapped


@pytest.mark.parametrize("after_slack", [False, True], ids=["before-slack", "after-slack"])
@pytest.mark.parametrize("at", [1, 3, 5])
async def test_interrupted_post_resumes_with_only_the_rest(settings, service, slack, at, after_slack):
    """A crash at item `at` (1 parent … 5 report), before Slack got it or after Slack accepted it but
    before the store recorded it; then a restart (new process, new Store instance) posts again."""
    digest = await build_day(service)
    async with open_slack_poster(settings) as poster:
        with pytest.raises(Crash):
            await post_digest(CrashingPoster(poster, at, after_slack), service.store, CHANNEL, digest)
    assert len(service.store.get_posts("slack", CHANNEL, key_of(digest))) == at - 1
    in_slack = at if after_slack else at - 1
    slack.reset_counters()
    async with open_slack_poster(settings) as poster:
        result = await post_digest(poster, Store(settings.digest_db), CHANNEL, digest)
    assert len(result.posted) == 5 - (at - 1)
    assert slack.calls["chat.postMessage"] + slack.calls["files.completeUploadExternal"] == 5 - in_slack
    [parent] = slack.channel_messages(CHANNEL)  # never a second parent
    items = [m.metadata["event_payload"]["item"] for m in slack.thread(CHANNEL, parent.ts) if m.metadata]
    assert len(items) == len(set(items)) == 3  # two cards and the list, each exactly once
    assert len(slack.uploads) == 1
    assert len(Store(settings.digest_db).get_posts("slack", CHANNEL, result.key)) == 5


async def test_a_lost_store_is_rebuilt_from_slack_without_posting(settings, service, slack, tmp_path):
    digest = await build_day(service)
    async with open_slack_poster(settings) as poster:
        await post_digest(poster, service.store, CHANNEL, digest)
    posted = len(slack.messages)
    empty = Store(tmp_path / "empty.db")
    async with open_slack_poster(settings) as poster:  # another process, with no record of the post
        result = await post_digest(poster, empty, CHANNEL, digest)
    assert len(result.posted) == 5 and len(slack.messages) == posted and len(slack.uploads) == 1
    assert set(empty.get_posts("slack", CHANNEL, result.key)) == set(
        service.store.get_posts("slack", CHANNEL, result.key)
    )


async def test_huge_analysis_is_split_over_messages_in_the_thread(settings, service, slack):
    digest = await build_day(service)
    high = digest.by_importance(Importance.HIGH)[0]
    risks = [f"Risk {i}: " + " ".join(f"detail{i}-{j}" for j in range(350)) for i in range(40)]
    digest.analyses[high.sha] = make_analysis(high, "high", risks=risks, lang="en")
    async with open_slack_poster(settings) as poster:
        result = await post_digest(poster, service.store, CHANNEL, digest)
    parts = [
        m
        for m in slack.thread(CHANNEL, result.thread_id)
        if m.metadata and m.metadata["event_payload"]["item"] == f"card:{high.sha}"
    ]
    assert len(parts) > 2
    assert [m.metadata["event_payload"]["part"] for m in parts] == list(range(len(parts)))
    content = [m.blocks if i == 0 else m.blocks[1:] for i, m in enumerate(parts)]  # minus "continued" notes
    joined = re.sub(r"\s+", "", "".join(t for blocks in content for t in _texts(blocks)))
    assert all(re.sub(r"\s+", "", r) in joined for r in risks)  # split, never cut


async def test_rate_limited_calls_are_retried_after_retry_after(settings, service, slack):
    digest = await build_day(service)
    slack.rate_limit("chat.postMessage", times=2, retry_after=0)
    slack.rate_limit("files.completeUploadExternal", times=1, retry_after=0)
    async with open_slack_poster(settings) as poster:
        result = await post_digest(poster, service.store, CHANNEL, digest)
    assert len(result.posted) == 5
    assert slack.calls["chat.postMessage"] == 4 + 2  # parent, two cards, list, plus two 429s
    assert slack.calls["files.completeUploadExternal"] == 2


async def test_persistent_failure_is_one_clear_error(settings, service, slack):
    digest = await build_day(service)
    slack.not_in_channel.add(CHANNEL)
    async with open_slack_poster(settings) as poster:
        with pytest.raises(ServiceError, match="not in channel C0DIGEST: invite it"):
            await post_digest(poster, service.store, CHANNEL, digest)


async def test_open_slack_poster_checks_the_token(tmp_path, slack):
    with pytest.raises(ConfigError, match="SLACK_BOT_TOKEN is not set"):
        async with open_slack_poster(make_settings(tmp_path, slack, slack_bot_token=None)):
            pass
    with pytest.raises(ConfigError, match="app-level token"):
        async with open_slack_poster(make_settings(tmp_path, slack, slack_bot_token="xapp-1-abc")):
            pass
    with pytest.raises(
        ConfigError, match=r"user token \(xoxp-…\): digests would be posted in that person's name"
    ):
        async with open_slack_poster(make_settings(tmp_path, slack, slack_bot_token="xoxp-1-abc")):
            pass
    with pytest.raises(ConfigError, match=r"^Slack rejected SLACK_BOT_TOKEN \(invalid_auth\)"):
        async with open_slack_poster(make_settings(tmp_path, slack, slack_bot_token="xoxb-wrong")):
            pass


@pytest.mark.parametrize("pasted", ["Bearer {}", "bearer  {}", " {}\t"])
async def test_a_bot_token_pasted_with_its_scheme_or_spaces_is_the_token(tmp_path, slack, pasted):
    """As GITHUB_TOKEN and OPENAI_API_KEY: "Bearer xoxb-…" was sent as "Bearer Bearer xoxb-…" (invalid_auth),
    and "Bearer xoxp-…" slipped past the refusal of a user token."""
    async with open_slack_poster(make_settings(tmp_path, slack, slack_bot_token=pasted.format(slack.token))):
        pass
    assert slack.calls["auth.test"] == 1
    with pytest.raises(ConfigError, match=r"user token \(xoxp-…\)"):
        async with open_slack_poster(
            make_settings(tmp_path, slack, slack_bot_token=pasted.format("xoxp-1-abc"))
        ):
            pass


async def test_fake_slack_rejects_what_slack_rejects(settings, slack):
    from slack_sdk.errors import SlackApiError

    client = make_client(settings)
    too_long = [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}]
    with pytest.raises(SlackApiError, match="invalid_blocks"):
        await client.chat_postMessage(channel=CHANNEL, text="t", blocks=too_long)
    many = [{"type": "divider"}] * 51
    with pytest.raises(SlackApiError, match="invalid_blocks"):
        await client.chat_postMessage(channel=CHANNEL, text="t", blocks=many)
    with pytest.raises(SlackApiError, match="msg_too_long"):
        await client.chat_postMessage(channel=CHANNEL, text="x" * 40_001)


# -- /digest ---------------------------------------------------------------------------------------------
async def test_ack_comes_before_the_analysis_and_the_card_after(settings, slack):
    analyzer = GatedAnalyzer()
    service = make_service(settings, analyzer=analyzer)
    app = build_app(settings, service)
    sha = day_commits()[0].short_sha
    began = time.monotonic()
    response = await send_command(app, slack, sha)
    assert time.monotonic() - began < 1.0
    assert response.status == 200
    assert f"Analysing {sha}" in json.loads(response.body)["text"]  # ephemeral ack
    await eventually(lambda: analyzer.calls == 1)
    assert slack.channel_messages(CHANNEL) == []  # the analysis is still running
    analyzer.gate.set()
    assert await app.bot.tasks.drain(10)
    [card] = slack.channel_messages(CHANNEL)
    assert "Rewrite the scheduler" in body_text(card) and sha in body_text(card)
    assert "Technical insights" in body_text(card)  # a standalone card carries the detail
    ctx = service.thread_context("slack", card.ts)  # recorded: replies under it find the commit
    assert ctx is not None and ctx.commit is not None and ctx.commit.short_sha == sha


async def test_help_and_bad_input_are_answered_in_the_ack(app, slack):
    help_ = await send_command(app, slack, "help")
    assert "/digest" in json.loads(help_.body)["text"]
    bad = await send_command(app, slack, "what is this")
    body = json.loads(bad.body)
    assert body["response_type"] == "ephemeral" and "one reference at a time" in body["text"]
    assert slack.messages == [] and len(app.bot.tasks) == 0


async def test_unknown_ref_gets_an_ephemeral_error(app, slack):
    response = await send_command(app, slack, "deadbeef")
    assert response.status == 200
    await app.bot.tasks.drain(10)
    [reply] = slack.responses
    assert reply["response_type"] == "ephemeral" and "no commit deadbeef" in reply["text"]
    assert slack.messages == []


async def test_day_command_posts_the_digest_once(app, slack):
    await send_command(app, slack, "2026-01-26")
    await app.bot.tasks.drain(10)
    [parent] = slack.channel_messages(CHANNEL)
    assert len(slack.thread(CHANNEL, parent.ts)) == 4  # two cards, the list, the report
    await send_command(app, slack, "2026-01-26")
    await app.bot.tasks.drain(10)
    assert len(slack.channel_messages(CHANNEL)) == 1
    assert "already in this channel" in slack.responses[-1]["text"]


async def test_card_in_a_channel_without_the_bot_says_how_to_fix_it(app, slack):
    slack.not_in_channel.add(CHANNEL)
    await send_command(app, slack, day_commits()[0].short_sha)
    await app.bot.tasks.drain(10)
    assert (
        "invite me first" in slack.responses[-1]["text"] and "not_in_channel" in slack.responses[-1]["text"]
    )


async def test_bad_signature_is_refused(app, slack):
    body = command_body(slack, "help")
    forged = await app.async_dispatch(
        AsyncBoltRequest(
            body=body, headers=signed_headers(body, "application/x-www-form-urlencoded", "wrong")
        )
    )
    stale = await app.async_dispatch(
        AsyncBoltRequest(
            body=body, headers=signed_headers(body, "application/x-www-form-urlencoded", ts=1_000_000)
        )
    )
    assert forged.status == 401 and stale.status == 401
    assert slack.calls == {}


# -- thread questions ---------------------------------------------------------------------------------
async def posted_day(app: DigestApp, service: ChatService) -> tuple[Digest, str]:
    digest = await build_day(service)
    result = await post_digest(app.bot.poster, service.store, CHANNEL, digest)
    assert result.thread_id
    return digest, result.thread_id


async def test_thread_question_is_answered_in_the_thread(app, service, slack):
    _, thread = await posted_day(app, service)
    question = slack.add_user_message(CHANNEL, "Which commits are the riskiest?", thread_ts=thread)
    await send_event(
        app,
        {"type": "message", "user": "UHUMAN1", "text": question.text, "ts": question.ts, "thread_ts": thread},
    )
    await app.bot.tasks.drain(10)
    answer = slack.thread(CHANNEL, thread)[-1]
    assert answer.ts != question.ts and answer.thread_ts == thread
    assert "Commits carrying the most risk" in body_text(answer)
    assert "Rewrite the scheduler" in body_text(answer)


async def test_answers_use_the_thread_history_and_stay_inert(settings, slack):
    answerer = RecordingAnswerer()
    service = make_service(settings, answerer=answerer)
    app = build_app(settings, service)
    digest, thread = await posted_day(app, service)
    slack.add_user_message(CHANNEL, "first remark", thread_ts=thread)
    high = digest.by_importance(Importance.HIGH)[0]
    question = slack.add_user_message(CHANNEL, f"what about {high.short_sha}?", thread_ts=thread)
    await send_event(
        app,
        {"type": "message", "user": "UHUMAN1", "text": question.text, "ts": question.ts, "thread_ts": thread},
    )
    await app.bot.tasks.drain(10)
    [(ctx, asked, lang)] = answerer.seen
    assert asked == question.text and lang == "en"
    assert ctx.commit is not None and ctx.commit.sha == high.sha  # the question named the commit
    assert ("user", "first remark") in ctx.history and all(t != question.text for _, t in ctx.history)
    assert any(speaker == "assistant" for speaker, _ in ctx.history)  # our parent and cards
    answer = body_text(slack.thread(CHANNEL, thread)[-1])
    assert (
        f"About {high.short_sha}" in answer
        and "<!channel>" not in answer
        and "&lt;\u200b!channel&gt;" in answer
    )


async def test_own_and_other_bots_messages_are_ignored(app, service, slack):
    _, thread = await posted_day(app, service)
    before = len(slack.messages)
    await send_event(
        app,
        {
            "type": "message",
            "user": BOT_USER,
            "bot_id": BOT_ID,
            "text": "mine",
            "ts": "1.1",
            "thread_ts": thread,
        },
    )
    await send_event(
        app,
        {
            "type": "message",
            "user": "UOTHER",
            "bot_id": "BOTHER",
            "text": "bot",
            "ts": "1.2",
            "thread_ts": thread,
        },
    )
    await send_event(
        app,
        {"type": "message", "subtype": "message_changed", "ts": "1.3", "thread_ts": thread, "message": {}},
    )
    await send_event(app, {"type": "message", "user": "UHUMAN1", "text": "top level chatter", "ts": "1.4"})
    await app.bot.tasks.drain(10)
    assert len(slack.messages) == before


async def test_threads_that_are_not_ours_stay_silent_unless_mentioned(app, slack):
    foreign = slack.add_user_message(CHANNEL, "unrelated thread")
    await send_event(
        app, {"type": "message", "user": "UHUMAN1", "text": "risks?", "ts": "2.1", "thread_ts": foreign.ts}
    )
    await app.bot.tasks.drain(10)
    assert slack.thread(CHANNEL, foreign.ts) == []
    mention = {"user": "UHUMAN1", "text": f"<@{BOT_USER}> risks?", "ts": "2.2", "thread_ts": foreign.ts}
    await send_event(app, {"type": "message", **mention})
    await send_event(app, {"type": "app_mention", **mention})
    await app.bot.tasks.drain(10)
    [reply] = slack.thread(CHANNEL, foreign.ts)
    assert "don't know which digest" in body_text(reply)


async def test_a_mention_in_our_thread_is_answered_once(app, service, slack):
    _, thread = await posted_day(app, service)
    before = len(slack.thread(CHANNEL, thread))
    mention = {
        "user": "UHUMAN1",
        "text": f"<@{BOT_USER}> 哪些提交风险最大？",
        "ts": "3.1",
        "thread_ts": thread,
    }
    await send_event(app, {"type": "app_mention", **mention})
    await send_event(app, {"type": "message", **mention})
    await send_event(app, {"type": "app_mention", **mention})  # a redelivery
    await app.bot.tasks.drain(10)
    replies = slack.thread(CHANNEL, thread)
    assert len(replies) == before + 1
    assert "风险最高的提交" in body_text(replies[-1])  # answered in the asker's language


async def test_question_under_a_standalone_card_is_about_that_commit(app, slack):
    sha = day_commits()[2].short_sha
    await send_command(app, slack, sha)
    await app.bot.tasks.drain(10)
    [card] = slack.channel_messages(CHANNEL)
    await send_event(
        app, {"type": "message", "user": "UHUMAN1", "text": "risks?", "ts": "4.1", "thread_ts": card.ts}
    )
    await app.bot.tasks.drain(10)
    [answer] = slack.thread(CHANNEL, card.ts)
    assert "Fix cache eviction" in body_text(answer) and sha in body_text(answer)


async def ask_in_thread(app: DigestApp, slack: FakeSlack, thread: str, text: str) -> str:
    question = slack.add_user_message(CHANNEL, text, thread_ts=thread)
    await send_event(
        app,
        {"type": "message", "user": "UHUMAN1", "text": question.text, "ts": question.ts, "thread_ts": thread},
    )
    await app.bot.tasks.drain(10)
    return body_text(slack.thread(CHANNEL, thread)[-1])


async def test_answers_link_the_commits_they_name_and_keep_the_thread_focus(app, service, slack):
    digest, thread = await posted_day(app, service)
    hostile = next(c for c in digest.commits if c.pr_number == 102)
    answer = await ask_in_thread(app, slack, thread, "was #102 reverted?")
    assert f"<{hostile.url}|{hostile.short_sha}>" in answer  # our link
    assert not MASS.search(answer)  # its title's <!channel>, <@U123> and link stay inert
    assert "No revert or fix-forward of it is recorded" in answer
    scheduler = next(c for c in digest.commits if c.pr_number == 101)
    assert scheduler.short_sha in await ask_in_thread(app, slack, thread, "what does #101 change?")
    tests = await ask_in_thread(app, slack, thread, "and what about its tests?")
    assert f"<{scheduler.url}|{scheduler.short_sha}>" in tests and "It changes no test files" in tests
    touching = await ask_in_thread(app, slack, thread, "which commits touch vllm/cache?")
    cache = next(c for c in digest.commits if c.pr_number == 103)
    assert f"<{cache.url}|{cache.short_sha}>" in touching and "1 of 5 commits today match" in touching


class InventingAnswerer:
    """A model that names a SHA, a PR, a file and a figure the data does not hold."""

    async def answer(self, ctx, question, lang):
        return "Rewrite is risky. Reverted by 9f8e7d6c5b1a (#9999).\nIt edits vllm/other/thing.py and is 45% faster."


async def test_a_models_invented_facts_never_reach_the_channel(settings, slack):
    service = make_service(settings, answerer=InventingAnswerer())
    app = build_app(settings, service)
    _, thread = await posted_day(app, service)
    answer = await ask_in_thread(app, slack, thread, "thoughts on today?")
    for invented in ("9f8e7d6c5b1a", "#9999", "vllm/other/thing.py", "45%"):
        assert invented not in answer
    assert "Rewrite is risky." in answer and "2 statement(s)" in answer  # one sentence per line
    await app.bot.tasks.close(5)


# -- the runtime: HTTP mode over real HTTP, Socket Mode over a local WebSocket -----------------------------
async def test_http_mode_serves_signed_requests_and_refuses_forged_ones(settings, service, slack, caplog):
    caplog.set_level(logging.DEBUG)
    runtime = SlackRuntime(settings, service, host="127.0.0.1", port=0)
    await runtime.start()
    try:
        assert runtime.mode == "http" and runtime.poster is not None
        url = f"http://127.0.0.1:{runtime.http_port}/slack/events"
        body = command_body(slack, "help")
        async with aiohttp.ClientSession() as http:
            async with http.post(
                url, data=body, headers=signed_headers(body, "application/x-www-form-urlencoded")
            ) as ok:
                assert ok.status == 200 and "/digest" in (await ok.json())["text"]
            forged = signed_headers(body, "application/x-www-form-urlencoded", secret="nope")
            async with http.post(url, data=body, headers=forged) as bad:
                assert bad.status == 401
            async with http.get(f"http://127.0.0.1:{runtime.http_port}/healthz") as health:
                assert health.status == 200
        digest = await build_day(service)
        result = await post_digest(runtime.poster, service.store, CHANNEL, digest)  # the scheduler's path
        assert len(result.posted) == 5
    finally:
        await runtime.stop()
    for secret in (slack.token, SECRET):
        assert secret not in caplog.text


async def test_runtime_needs_a_mode(tmp_path, slack, service):
    settings = make_settings(tmp_path, slack, slack_signing_secret=None)
    with pytest.raises(ConfigError, match=r"SLACK_APP_TOKEN .* or SLACK_SIGNING_SECRET"):
        await SlackRuntime(settings, service).start()
    assert slack.calls == {}
    swapped = make_settings(tmp_path, slack, slack_signing_secret=None, slack_app_token="xoxb-1-abc")
    with pytest.raises(
        ConfigError, match=r"SLACK_APP_TOKEN holds a bot or user token .* goes in SLACK_BOT_TOKEN"
    ):
        await SlackRuntime(swapped, service).start()
    assert slack.calls == {}


async def test_socket_mode_acks_a_command_over_the_websocket(tmp_path, slack, caplog):
    caplog.set_level(logging.DEBUG)
    settings = make_settings(tmp_path, slack, slack_app_token=slack.app_token, slack_signing_secret=None)
    service = make_service(settings)
    acks: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def socket(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json({"type": "hello", "num_connections": 1})
        payload = dict(x.split("=", 1) for x in command_body(slack, "help").split("&"))
        payload["text"], payload["command"] = "help", "/digest"
        await ws.send_json(
            {
                "envelope_id": "env-1",
                "type": "slash_commands",
                "accepts_response_payload": True,
                "payload": payload,
            }
        )
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.TEXT:
                await acks.put(json.loads(msg.data))
        return ws

    server = web.Application()
    server.router.add_get("/link", socket)
    runner = web.AppRunner(server)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    slack.socket_url = f"ws://127.0.0.1:{runner.addresses[0][1]}/link"
    runtime = SlackRuntime(settings, service)
    try:
        await runtime.start()
        assert runtime.mode == "socket"
        ack = await asyncio.wait_for(acks.get(), 10)
        assert ack["envelope_id"] == "env-1" and "/digest" in ack["payload"]["text"]
        assert slack.calls["apps.connections.open"] == 1
    finally:
        await runtime.stop()
        await runner.cleanup()
    assert slack.app_token not in caplog.text and slack.token not in caplog.text


def test_manifest_declares_what_the_app_uses():
    manifest = (Path(__file__).resolve().parents[3] / "manifest.yml").read_text(encoding="utf-8")
    active = "\n".join(line.split("#", 1)[0] for line in manifest.splitlines())
    assert "command: /digest" in active and "usage_hint:" in active
    for scope in (
        "commands",
        "chat:write",
        "files:write",
        "app_mentions:read",
        "channels:history",
        "groups:history",
    ):
        assert f"- {scope}\n" in active
    for event in ("app_mention", "message.channels", "message.groups"):
        assert f"- {event}\n" in active
    assert "socket_mode_enabled: true" in active


async def test_subscriptions_are_managed_from_the_channel(app, service, slack):
    await send_command(app, slack, "subscribe acme/widgets 08:30 Europe/Berlin en")
    await app.bot.tasks.drain(10)
    assert "Subscribed to acme/widgets" in slack.responses[-1]["text"]
    assert slack.responses[-1]["response_type"] == "ephemeral"
    [sub] = service.subscriptions.for_channel("slack", CHANNEL)
    assert (sub.repo, sub.schedule, sub.timezone, sub.lang) == (
        "acme/widgets",
        "08:30",
        "Europe/Berlin",
        "en",
    )
    assert service.channel_repo("slack", CHANNEL) == "acme/widgets"  # bare SHAs now resolve against it
    await send_command(app, slack, "list")
    await app.bot.tasks.drain(10)
    assert (
        "acme/widgets" in slack.responses[-1]["text"] and "08:30 Europe/Berlin" in slack.responses[-1]["text"]
    )
    await send_command(app, slack, "unsubscribe acme/widgets")
    await app.bot.tasks.drain(10)
    assert "Unsubscribed" in slack.responses[-1]["text"]
    assert service.subscriptions.for_channel("slack", CHANNEL) == []
    assert slack.messages == []  # all of it private to the asker


async def test_a_thank_you_in_our_thread_gets_no_answer_but_a_mention_does(app, service, slack):
    _, thread = await posted_day(app, service)
    before = len(slack.thread(CHANNEL, thread))
    thanks = slack.add_user_message(CHANNEL, "thanks!", thread_ts=thread)
    await send_event(
        app, {"type": "message", "user": "UHUMAN1", "text": thanks.text, "ts": thanks.ts, "thread_ts": thread}
    )
    await app.bot.tasks.drain(10)
    assert len(slack.thread(CHANNEL, thread)) == before + 1  # only the thank-you itself
    mention = slack.add_user_message(CHANNEL, f"<@{BOT_USER}> thanks", thread_ts=thread)
    await send_event(
        app,
        {
            "type": "app_mention",
            "user": "UHUMAN1",
            "text": mention.text,
            "ts": mention.ts,
            "thread_ts": thread,
        },
    )
    await app.bot.tasks.drain(10)
    assert len(slack.thread(CHANNEL, thread)) == before + 3  # the mention is always answered


# -- never twice: answers lost after Slack accepted, busy channels, timeouts ----------------------------
def assert_posted_once(slack: FakeSlack, digest: Digest) -> None:
    [parent] = [m for m in slack.channel_messages(CHANNEL) if m.metadata]  # ours, among any chatter
    items = [
        (m.metadata["event_payload"]["item"], m.metadata["event_payload"]["part"])
        for m in slack.thread(CHANNEL, parent.ts)
        if m.metadata
    ]
    assert len(items) == len(set(items)) == 3  # two cards and the list, each exactly once
    assert len([m for m in slack.thread(CHANNEL, parent.ts) if m.files]) == 1  # one report


@pytest.mark.parametrize("fault", ["500", "drop"])
@pytest.mark.parametrize("method", ["chat.postMessage", "files.completeUploadExternal"])
async def test_a_lost_answer_after_slack_accepted_is_reconciled_not_retried(
    settings, service, slack, fault, method
):
    """Slack carries the call out, then answers 500 or drops the connection: slack_sdk must not retry
    the post blindly; the poster looks for it first and posts only what is really missing."""
    digest = await build_day(service)
    for _ in range(2):  # the parent (or the report) and then, for messages, the first card
        if fault == "500":
            slack.fail_after_accept(method)
        else:
            slack.drop_after_accept(method)
    async with open_slack_poster(settings) as poster:
        result = await post_digest(poster, service.store, CHANNEL, digest)
    assert len(result.posted) == 5
    assert_posted_once(slack, digest)
    assert len(service.store.get_posts("slack", CHANNEL, result.key)) == 5


async def test_parent_lookup_pages_back_to_the_digest_start(settings, service, slack, monkeypatch):
    """A crash right after Slack accepted the parent (before anything was recorded), then a busy
    channel (250 messages since): the restart still finds the parent, paging back through the
    history to the day's start, and posts no second one."""
    digest = await build_day(service)
    monkeypatch.setattr(Store, "record_part", lambda *args: None, raising=False)  # killed before it
    async with open_slack_poster(settings) as poster:
        with pytest.raises(Crash):
            await post_digest(CrashingPoster(poster, 1, True), service.store, CHANNEL, digest)
    for i in range(250):
        slack.add_user_message(CHANNEL, f"chatter {i}")
    async with open_slack_poster(settings) as poster:
        result = await post_digest(poster, Store(settings.digest_db), CHANNEL, digest)
    assert len(result.posted) == 5
    parents = [m for m in slack.channel_messages(CHANNEL) if m.metadata]
    assert len(parents) == 1
    assert_posted_once(slack, digest)
    assert slack.calls["conversations.history"] >= 2  # more than one page


async def test_a_timeout_says_what_timed_out(tmp_path, slack, monkeypatch):
    monkeypatch.setattr("adapters.slack.client.TIMEOUT", 0.2)
    slack.latency = 0.6
    with pytest.raises(ServiceError, match=r"^Slack did not answer auth.test within 0.2 s$"):
        async with open_slack_poster(make_settings(tmp_path, slack)):
            pass
