"""Issue 13 item 7: a failed run is said once in its channels (unless turned off), `status` exits 1
while a subscription's last run failed, and `post_empty = false` keeps quiet days quiet."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
import time_machine

from adapters.discord.runtime import DiscordRuntime
from adapters.slack.runtime import SlackRuntime
from bot.app import serve
from bot.config.file import load_config
from bot.config.settings import Settings
from bot.config.subscriptions import Destination, Subscription
from bot.store.db import Store
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.github import FakeGitHub
from tests.fakes.slack_api import FakeSlack

SH = ZoneInfo("Asia/Shanghai")
DISCORD_CHANNEL = "900000000000000001"
SLACK_CHANNEL = "C0DIGEST"


class RestDiscord(DiscordRuntime):
    async def start(self) -> None:  # type: ignore[override]
        await super().start(gateway=False)


def runtimes(settings, service):
    return [SlackRuntime(settings, service, host="127.0.0.1", port=0), RestDiscord(settings, service)]


@pytest.fixture
def fakes():
    with FakeGitHub("acme/widgets", []) as gh, FakeSlack() as slack, FakeDiscord() as dc:
        dc.add_channel(DISCORD_CHANNEL)
        yield gh, slack, dc


@pytest.fixture
def settings(fakes, tmp_path):
    gh, slack, dc = fakes
    return Settings(
        github_api_url=gh.base_url,
        slack_bot_token=slack.token,
        slack_signing_secret="signing-secret-for-tests",
        slack_api_url=slack.api_url,
        discord_bot_token=dc.token,
        discord_api_url=dc.base_url,
        digest_db=tmp_path / "digest.db",
    )


def sub(repo: str = "acme/widgets", **kw) -> Subscription:
    return Subscription(
        name="widgets-daily",
        repo=repo,
        timezone="Asia/Shanghai",
        schedule="09:00",
        lang="en",
        destinations=(Destination("slack", SLACK_CHANNEL), Destination("discord", DISCORD_CHANNEL)),
        **kw,
    )


def runs(settings):
    return {r["day"]: r for r in Store(settings.digest_db).query("SELECT * FROM runs")}


async def run_service(settings, subscription, until):
    stop = asyncio.Event()
    task = asyncio.create_task(
        serve(settings, Store(settings.digest_db), [subscription], stop=stop, make_runtimes=runtimes)
    )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60  # generous: a loaded 2-core machine starts the service slowly
    while loop.time() < deadline and not until():
        await asyncio.sleep(0.05)
        if task.done():
            task.result()
    stop.set()
    await asyncio.wait_for(task, 30)


def finished(settings):
    return lambda: runs(settings).get("2026-01-28", {}).get("status") in ("done", "failed", "partial")


async def test_a_failed_run_is_said_once_in_each_channel(fakes, settings):
    _gh, slack, dc = fakes
    broken = sub("acme/gone")  # the fake GitHub does not know it: 404, the run fails
    # on schedule; then a restart retries the day, fails again, and stays quiet
    for start in (
        datetime(2026, 1, 29, 8, 59, 59, 500000, tzinfo=SH),
        datetime(2026, 1, 29, 9, 30, tzinfo=SH),
    ):
        with time_machine.travel(start, tick=True):
            await run_service(settings, broken, finished(settings))
        assert runs(settings)["2026-01-28"]["status"] == "failed"
        Store(settings.digest_db).db.execute("DELETE FROM runs")  # let the next start retry it
    notices = slack.channel_messages(SLACK_CHANNEL)
    assert len(notices) == 1
    assert "The digest of acme/gone for 2026-01-28 failed" in notices[0].text
    assert "not found" in notices[0].text.lower()
    d_notices = dc.messages_in(DISCORD_CHANNEL)
    assert len(d_notices) == 1 and "failed" in d_notices[0]["content"]


async def test_failure_notices_can_be_turned_off(fakes, settings):
    _gh, slack, dc = fakes
    with time_machine.travel(datetime(2026, 1, 29, 8, 59, 59, 500000, tzinfo=SH), tick=True):
        await run_service(settings, sub("acme/gone", notify_failures=False), finished(settings))
    assert runs(settings)["2026-01-28"]["status"] == "failed"
    assert slack.channel_messages(SLACK_CHANNEL) == [] and dc.messages_in(DISCORD_CHANNEL) == []


@pytest.mark.parametrize("post_empty", [True, False])
async def test_post_empty_false_skips_a_day_without_commits(fakes, settings, post_empty):
    _gh, slack, dc = fakes
    with time_machine.travel(datetime(2026, 1, 29, 8, 59, 59, 500000, tzinfo=SH), tick=True):
        await run_service(settings, sub(post_empty=post_empty), finished(settings))
    run = runs(settings)["2026-01-28"]
    assert run["status"] == "done" and run["commits"] == 0
    posted = len(slack.channel_messages(SLACK_CHANNEL)) + len(dc.messages_in(DISCORD_CHANNEL))
    assert posted == (2 if post_empty else 0)


def test_config_file_options_and_their_defaults(tmp_path):
    path = tmp_path / "digest.toml"
    path.write_text(
        "[defaults]\npost_empty = false\n"
        '[[subscription]]\nname = "a"\nrepo = "o/a"\nslack_channels = ["C1"]\nnotify_failures = false\n'
        '[[subscription]]\nname = "b"\nrepo = "o/b"\nslack_channels = ["C1"]\npost_empty = true\n',
        encoding="utf-8",
    )
    a, b = load_config(path, default_tz="UTC", default_lang="en")
    assert (a.post_empty, a.notify_failures) == (False, False)
    assert (b.post_empty, b.notify_failures) == (True, True)


def digestbot_status(db, config):
    env = {
        **os.environ,
        "DIGEST_DB": str(db),
        "DIGEST_CONFIG": str(config),
        "SLACK_BOT_TOKEN": "xoxb-test-token",
    }
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "status"], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.mark.parametrize(("last", "code"), [("done", 0), ("failed", 1), ("partial", 1)])
def test_status_exits_1_while_a_last_run_failed(tmp_path, last, code):
    config = tmp_path / "digest.toml"
    config.write_text(
        '[[subscription]]\nname = "a"\nrepo = "o/a"\nslack_channels = ["C1"]\n', encoding="utf-8"
    )
    db = tmp_path / "d.db"
    store = Store(db)
    for day, status in ((date(2026, 1, 27), "failed"), (date(2026, 1, 28), last)):
        store.db["runs"].upsert(
            {"subscription": "a", "day": day.isoformat(), "status": status, "stats": json.dumps({})},
            pk=("subscription", "day"),
        )
    store.close()
    result = digestbot_status(db, config)
    assert result.returncode == code, result.stderr
    assert "2026-01-28" in result.stdout
    assert ("last run failed: a" in result.stdout) == (code == 1)


async def test_a_notice_the_channel_refused_is_tried_again_and_still_said_once(fakes, settings):
    _gh, slack, dc = fakes
    broken = sub("acme/gone")
    slack.fail("chat.postMessage", error="fatal_error", times=50)
    with time_machine.travel(datetime(2026, 1, 29, 8, 59, 59, 500000, tzinfo=SH), tick=True):
        await run_service(settings, broken, finished(settings))
    assert slack.channel_messages(SLACK_CHANNEL) == []  # Slack refused it
    assert len(dc.messages_in(DISCORD_CHANNEL)) == 1  # the other channel was not held back
    slack.clear_faults()
    Store(settings.digest_db).db.execute("DELETE FROM runs")
    with time_machine.travel(datetime(2026, 1, 29, 9, 30, tzinfo=SH), tick=True):
        await run_service(settings, broken, finished(settings))
    assert len(slack.channel_messages(SLACK_CHANNEL)) == 1
    assert len(dc.messages_in(DISCORD_CHANNEL)) == 1
