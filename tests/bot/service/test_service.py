"""The whole service against fake GitHub + fake LLM + fake Slack + fake Discord, over real HTTP:
each morning's digest appears exactly once per destination — on schedule, after downtime, and after a
restart in the middle of posting."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
import time_machine

from adapters.discord.runtime import DiscordRuntime
from adapters.slack.runtime import SlackRuntime
from bot.app import serve
from bot.config.settings import Settings
from bot.config.subscriptions import Destination, Subscription
from bot.delivery.posting import digest_items
from bot.digest.pipeline import load_digest
from bot.service.status import render_status
from bot.store.db import Store
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.github import FakeGitHub, make_commit, make_file
from tests.fakes.openai_server import FakeLLM
from tests.fakes.slack_api import FakeSlack

SH = ZoneInfo("Asia/Shanghai")
DISCORD_CHANNEL = "900000000000000001"
SLACK_CHANNEL = "C0DIGEST"


def day_commits():
    big = [make_file(f"src/widgets/engine/part{i}.py", status="added", additions=300) for i in range(4)]
    return [
        make_commit(
            "[Feature] New widget engine (#1001)", "2026-01-28T12:00:00+08:00", files=big, repo="acme/widgets"
        ),
        make_commit(
            "[Bugfix] Fix cache eviction (#1002)",
            "2026-01-28T10:00:00+08:00",
            files=[make_file("src/widgets/cache.py", additions=120, deletions=40)],
            repo="acme/widgets",
        ),
        make_commit(
            "[Doc] Typo (#1003)",
            "2026-01-28T09:00:00+08:00",
            files=[make_file("docs/README.md", additions=1, deletions=1)],
            repo="acme/widgets",
        ),
    ]


class RestDiscord(DiscordRuntime):
    """The Discord runtime without the gateway websocket (the fake speaks REST only)."""

    async def start(self) -> None:  # type: ignore[override]
        await super().start(gateway=False)


def runtimes(settings, service):
    return [SlackRuntime(settings, service, host="127.0.0.1", port=0), RestDiscord(settings, service)]


@pytest.fixture
def fakes():
    with (
        FakeGitHub("acme/widgets", day_commits()) as gh,
        FakeLLM() as llm,
        FakeSlack() as slack,
        FakeDiscord() as dc,
    ):
        dc.add_channel(DISCORD_CHANNEL)
        yield gh, llm, slack, dc
        for fake in (slack, dc, llm):
            fake.check()


@pytest.fixture
def settings(fakes, tmp_path):
    gh, llm, slack, dc = fakes
    return Settings(
        github_api_url=gh.base_url,
        openai_base_url=llm.base_url,
        openai_api_key="sk-test-not-a-real-key",
        digest_model=llm.model,
        slack_bot_token=slack.token,
        slack_signing_secret="signing-secret-for-tests",
        slack_api_url=slack.api_url,
        discord_bot_token=dc.token,
        discord_api_url=dc.base_url,
        digest_db=tmp_path / "digest.db",
    )


SUB = Subscription(
    name="widgets-daily",
    repo="acme/widgets",
    timezone="Asia/Shanghai",
    schedule="09:00",
    lang="zh",
    destinations=(Destination("slack", SLACK_CHANNEL), Destination("discord", DISCORD_CHANNEL)),
)


async def run_service(settings, until, *, seconds=None):
    """Run the service until `until()` is true (or for `seconds`), then stop it like SIGTERM does."""
    stop = asyncio.Event()
    task = asyncio.create_task(
        serve(settings, Store(settings.digest_db), [SUB], stop=stop, make_runtimes=runtimes)
    )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + (seconds or 20)
    while loop.time() < deadline and not (seconds is None and until()):
        await asyncio.sleep(0.05)
        if task.done():
            task.result()  # surface a crash
    stop.set()
    await asyncio.wait_for(task, 30)


def slack_posts(slack):
    parents = slack.channel_messages(SLACK_CHANNEL)
    replies = [m for p in parents for m in slack.thread(SLACK_CHANNEL, p.ts)]
    return parents, replies


def discord_posts(dc):
    parents = dc.messages_in(DISCORD_CHANNEL)
    threads = dc.threads()
    replies = [m for t in threads for m in dc.messages_in(t["id"])]
    return parents, threads, replies


def runs(settings):
    return {r["day"]: r for r in Store(settings.digest_db).query("SELECT * FROM runs")}


async def test_the_morning_digest_appears_once_per_destination_on_schedule(fakes, settings):
    _gh, llm, slack, dc = fakes
    with time_machine.travel(datetime(2026, 1, 29, 8, 59, 59, 400000, tzinfo=SH), tick=True):
        await run_service(settings, lambda: runs(settings).get("2026-01-28", {}).get("status") == "done")
    parents, replies = slack_posts(slack)
    assert len(parents) == 1
    assert "acme/widgets" in parents[0].text
    digest = load_digest(Store(settings.digest_db), "acme/widgets@main/2026-01-28/Asia/Shanghai/zh")
    assert {a.analyzer for a in digest.analyses.values()} == {"llm"}
    # one reply per item after the parent (an item may need several messages, never fewer than one)
    assert len(replies) >= len(digest_items(digest)) - 1
    uploads = [u for u in slack.uploads.values() if u.thread_ts == parents[0].ts]
    assert len(uploads) == 1 and "# 每日更新报告（2026-01-28）" in uploads[0].content.decode("utf-8")
    d_parents, threads, d_replies = discord_posts(dc)
    assert len(d_parents) == 1 and len(threads) == 1 and d_replies
    assert llm.calls > 0  # analysed by the (fake) LLM
    run = runs(settings)["2026-01-28"]
    assert run["status"] == "done" and run["commits"] == 3 and run["llm_calls"] > 0 and run["tokens"] > 0


async def test_downtime_is_caught_up_and_restarts_never_post_twice(fakes, settings):
    _gh, llm, slack, dc = fakes
    # first start the evening before: the subscription is seen, nothing is due yet
    with time_machine.travel(datetime(2026, 1, 28, 20, 0, tzinfo=SH), tick=True):
        await run_service(settings, None, seconds=0.5)
    assert slack.channel_messages(SLACK_CHANNEL) == []
    # down through 09:00; back at 11:00 — the missed morning is caught up
    with time_machine.travel(datetime(2026, 1, 29, 11, 0, tzinfo=SH), tick=True):
        await run_service(settings, lambda: runs(settings).get("2026-01-28", {}).get("status") == "done")
    first_slack, first_discord = slack_posts(slack), discord_posts(dc)
    assert len(first_slack[0]) == 1 and len(first_discord[0]) == 1
    llm_calls = llm.calls
    # another restart the same day: nothing new anywhere, and no new LLM call
    with time_machine.travel(datetime(2026, 1, 29, 11, 30, tzinfo=SH), tick=True):
        await run_service(settings, None, seconds=1.0)
    assert slack_posts(slack) == first_slack
    assert discord_posts(dc)[0] == first_discord[0] and discord_posts(dc)[2] == first_discord[2]
    assert llm.calls == llm_calls


async def test_restart_in_the_middle_of_posting_posts_only_what_is_missing(fakes, settings):
    _gh, _llm, slack, dc = fakes
    with time_machine.travel(datetime(2026, 1, 28, 20, 0, tzinfo=SH), tick=True):
        await run_service(settings, None, seconds=0.5)
    # Slack breaks after the parent and the first card: the run is left partial
    slack.fail("files.getUploadURLExternal", error="fatal_error", times=50)
    with time_machine.travel(datetime(2026, 1, 29, 9, 30, tzinfo=SH), tick=True):
        await run_service(
            settings, lambda: runs(settings).get("2026-01-28", {}).get("status") in ("partial", "failed")
        )
    assert runs(settings)["2026-01-28"]["status"] == "partial"
    assert "slack" in runs(settings)["2026-01-28"]["error"]
    assert len(discord_posts(dc)[0]) == 1  # the other destination was not held back
    slack_before = slack_posts(slack)
    slack.clear_faults()
    # restart: the sweep resumes Slack with only the missing report; Discord gets nothing new
    with time_machine.travel(datetime(2026, 1, 29, 10, 0, tzinfo=SH), tick=True):
        await run_service(settings, lambda: runs(settings).get("2026-01-28", {}).get("status") == "done")
    parents, replies = slack_posts(slack)
    assert len(parents) == 1 and parents == slack_before[0]
    assert replies[: len(slack_before[1])] == slack_before[1]  # nothing re-posted
    ts_counts = Counter(m.ts for m in replies)
    assert max(ts_counts.values()) == 1
    assert len([u for u in slack.uploads.values() if u.thread_ts == parents[0].ts]) == 1
    assert len(discord_posts(dc)[0]) == 1


async def test_status_reports_the_last_digest_and_the_next_run(fakes, settings):
    with time_machine.travel(datetime(2026, 1, 29, 8, 59, 59, 500000, tzinfo=SH), tick=True):
        await run_service(settings, lambda: runs(settings).get("2026-01-28", {}).get("status") == "done")
        text = render_status(settings, Store(settings.digest_db), [SUB])
    assert "widgets-daily" in text and "2026-01-28 · done · 3 commits" in text
    assert "next run  2026-01-30T09:00:00+08:00" in text
    assert "LLM, last 7 days:" in text and " 0 calls" not in text
