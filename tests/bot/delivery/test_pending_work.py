"""Issue 17 item 1: work that must happen after a post — radar banners, their replies, failure notices —
is recorded as pending before it is tried, and the running service retries it with backoff until it is
done or the platform says it never can; `status` lists it; a restart resumes it.

The days come from a throw-away git repository (tests/fakes/radar_days.py): day 2 reverts or fixes
forward the three high commits of day 1, so posting day 2 banners three cards per channel."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
import time_machine

from adapters.discord.poster import open_discord_poster
from adapters.discord.runtime import DiscordRuntime
from adapters.slack.client import make_client
from adapters.slack.poster import SlackPoster
from adapters.slack.runtime import SlackRuntime
from bot.app import make_analyzer, open_source, serve
from bot.config.settings import Settings, zone
from bot.config.subscriptions import Destination, Subscription
from bot.delivery import outbox
from bot.delivery.posting import post_digest
from bot.digest.pipeline import build_digest
from bot.service.status import render_status, status_data
from bot.store.db import Store
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.radar_days import FOLLOW_UPS, REPO, radar_repo
from tests.fakes.slack_api import FakeSlack

DAY1, DAY2 = date(2026, 1, 26), date(2026, 1, 27)
SLACK, DISCORD = "C0RADAR", "900000000000000777"
PATCH = "PATCH /channels/{channel_id}/messages/{message_id}"
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def git(tmp_path):
    return radar_repo(tmp_path, DAY1)


@pytest.fixture
def fakes():
    with FakeSlack() as slack, FakeDiscord() as dc:
        dc.add_channel(DISCORD)
        yield slack, dc
        slack.check()
        dc.check()


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    monkeypatch.setattr(outbox, "RETRY_BASE", 0.2)


def settings_for(slack: FakeSlack, dc: FakeDiscord, tmp_path: Path) -> Settings:
    return Settings(
        _env_file=None,
        slack_bot_token=slack.token,
        slack_signing_secret="signing-secret-for-tests",
        slack_api_url=slack.api_url,
        discord_bot_token=dc.token,
        discord_api_url=dc.base_url,
        digest_db=tmp_path / "digest.db",
    )


async def digest_of(settings: Settings, store: Store, git: Path, day: date):
    source = open_source(settings, store, REPO, git)
    try:
        return await build_digest(
            source,
            store,
            make_analyzer(settings, store, "heuristic"),
            branch="main",
            day=day,
            tz=zone("UTC"),
            lang="en",
        )
    finally:
        await source.aclose()


def is_banner(text: str) -> bool:
    return text.startswith(("⚠️", "🔧"))


def slack_banners(slack: FakeSlack, channel: str = SLACK) -> tuple[int, int]:
    """(edits, banner replies) in the channel; a message edited twice counts 2."""
    edits = sum(slack.edits.values())
    replies = sum(
        1
        for m in slack.messages
        if m.channel == channel and (m.metadata or {}).get("event_payload", {}).get("item") == "reply"
    )
    return edits, replies


def discord_banners(dc: FakeDiscord) -> tuple[int, int]:
    edits = sum(dc.edits.values())
    threads = [t["id"] for t in dc.threads() if t["parent_id"] == DISCORD]
    replies = sum(
        1 for t in threads for m in dc.messages_in(t) if not m["embeds"] and is_banner(m["content"])
    )
    return edits, replies


async def slack_after_day1(slack: FakeSlack, dc: FakeDiscord, tmp_path: Path, git: Path):
    """Settings, a store and a Slack poster, with day 1 posted in the channel."""
    settings = settings_for(slack, dc, tmp_path)
    store = Store(settings.digest_db)
    poster = SlackPoster(make_client(settings))
    await post_digest(poster, store, SLACK, await digest_of(settings, store, git, DAY1))
    return settings, store, poster


class RestDiscord(DiscordRuntime):
    async def start(self) -> None:  # type: ignore[override]
        await super().start(gateway=False)


# --- during a real service run ------------------------------------------------------------------------


async def test_faulty_edits_and_replies_during_the_service_all_land_without_a_rerun(
    fakes, git, tmp_path, caplog
):
    slack, dc = fakes
    settings = settings_for(slack, dc, tmp_path)
    sub = Subscription(
        name="radar",
        repo=REPO,
        timezone="UTC",
        schedule="09:00",
        lang="en",
        git_dir=git,
        destinations=(Destination("slack", SLACK), Destination("discord", DISCORD)),
    )
    store = Store(settings.digest_db)
    store.db["subscription_seen"].insert({"name": "radar", "first_seen": "2026-01-20T00:00:00+00:00"})
    # Slack: 500 on the first edits (slack_sdk retries an edit twice itself) and on two radar replies;
    # Discord: the answer to the first edit is lost after Discord applied it.
    slack.fail("chat.update", times=4, status=500)
    slack.fail(
        "chat.postMessage",
        times=4,
        status=500,
        when=lambda args: (args.get("metadata") or {}).get("event_payload", {}).get("item") == "reply",
    )
    dc.drop_after_accept(route=PATCH)
    stop = asyncio.Event()

    def runtimes(s, service):
        return [SlackRuntime(s, service, host="127.0.0.1", port=0), RestDiscord(s, service)]

    with (
        caplog.at_level(logging.INFO, logger="bot.delivery.outbox"),
        time_machine.travel(datetime(2026, 1, 28, 9, 30, tzinfo=UTC), tick=True),
    ):
        task = asyncio.create_task(serve(settings, store, [sub], stop=stop, make_runtimes=runtimes))
        for _ in range(400):  # no re-run, no restart: the service itself finishes the work
            await asyncio.sleep(0.05)
            if task.done():
                task.result()
            # landed, and recorded as landed: a banner can show before its retry marks it done
            if (
                slack_banners(slack) == discord_banners(dc) == (FOLLOW_UPS, FOLLOW_UPS)
                and not store.pending_work()
            ):
                break
        stop.set()
        await asyncio.wait_for(task, 30)
    assert slack_banners(slack) == (FOLLOW_UPS, FOLLOW_UPS)
    assert discord_banners(dc) == (FOLLOW_UPS, FOLLOW_UPS)
    assert store.pending_work() == []
    runs = {r["day"]: r["status"] for r in store.query("SELECT day, status FROM runs")}
    assert runs["2026-01-26"] == runs["2026-01-27"] == "done"
    log = caplog.text
    assert "could not banner message" in log and "HTTP 500" in log  # the edit's failure, as it was
    assert "could not reply in the thread of message" in log  # a failed reply is not called a banner
    assert "done on try" in log
    store.close()


# --- restarts, kill -9, giving up, status --------------------------------------------------------------


async def test_pending_work_is_listed_by_status_and_a_restart_resumes_it(fakes, git, tmp_path):
    slack, dc = fakes
    settings, store, poster = await slack_after_day1(slack, dc, tmp_path, git)
    slack.fail("chat.update", times=30, status=500)  # Slack edits fail for a while
    result = await post_digest(poster, store, SLACK, await digest_of(settings, store, git, DAY2))
    assert result.posted[0] == "parent"  # the day went out whatever the radar met
    assert slack_banners(slack) == (0, 0)
    pending = status_data(settings, store, [])["pending"]
    assert len(pending) == FOLLOW_UPS
    assert {p["kind"] for p in pending} == {"radar"} and all(p["attempts"] == 1 for p in pending)
    assert all("HTTP 500" in p["last_error"] for p in pending)
    text = render_status(settings, store, [])
    assert f"pending work: {FOLLOW_UPS} (the running service retries it)" in text
    assert "banner and reply on message" in text and "1 try" in text
    store.close()

    slack.clear_faults()
    restarted = Store(settings.digest_db)  # a new process: nothing in memory
    worker = outbox.Worker(restarted, {"slack": SlackPoster(make_client(settings))}, clock=lambda: 2e9)
    assert await worker.run_due() == FOLLOW_UPS
    assert slack_banners(slack) == (FOLLOW_UPS, FOLLOW_UPS)
    assert restarted.pending_work() == [] and await worker.run_due() == 0
    assert "pending work" not in render_status(settings, restarted, [])
    restarted.close()


async def test_a_message_that_can_never_be_edited_is_given_up_not_retried(fakes, git, tmp_path):
    slack, dc = fakes
    settings = settings_for(slack, dc, tmp_path)
    store = Store(settings.digest_db)
    async with open_discord_poster(settings) as poster:
        await post_digest(poster, store, DISCORD, await digest_of(settings, store, git, DAY1))
        # Missing Access on every card edit, and on replies: Discord says this will never work
        dc.fail_next(
            403, {"message": "Missing Access", "code": 50001}, route="/messages/{message_id}", count=99
        )
        await post_digest(poster, store, DISCORD, await digest_of(settings, store, git, DAY2))
    assert dc.edits == {}
    states = {r["state"] for r in store.query("SELECT state FROM pending_work")}
    assert states == {"gave_up"} and store.pending_work() == []
    assert {r["state"] for r in store.query("SELECT state FROM radar_banners")} == {"skipped"}
    store.close()


async def test_a_reply_refused_for_good_is_given_up_after_its_banner(fakes, git, tmp_path):
    slack, dc = fakes
    settings, store, poster = await slack_after_day1(slack, dc, tmp_path, git)
    slack.fail(
        "chat.postMessage", "is_archived", times=99, when=lambda a: "metadata" in a and "reply" in str(a)
    )
    await post_digest(poster, store, SLACK, await digest_of(settings, store, git, DAY2))
    assert sum(slack.edits.values()) == FOLLOW_UPS  # the banners are up
    assert store.pending_work() == []
    assert {r["state"] for r in store.query("SELECT state FROM pending_work")} == {"gave_up"}
    store.close()


def test_kill_9_between_recording_and_sending_leaves_nothing_missing_and_nothing_twice(tmp_path):
    """`digestbot post` of day 2 killed the moment Slack receives the first banner edit (recorded as
    pending on our side, the edit carried out on Slack's, its answer never read), then run again."""
    git = radar_repo(tmp_path, DAY1)
    with FakeSlack() as slack:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path),
            "PYTHONPATH": str(ROOT),
            "SLACK_BOT_TOKEN": slack.token,
            "SLACK_API_URL": slack.api_url,
        }

        def post(day: date) -> subprocess.Popen[str]:
            args = ["--db", str(tmp_path / "d.db"), "post", "--platform", "slack", "--channel", SLACK]
            args += ["--git-dir", str(git), "--date", day.isoformat(), "--tz", "UTC", "--lang", "en"]
            return subprocess.Popen(
                [sys.executable, "-m", "bot.cli", *args, "--analyzer", "heuristic"],
                cwd=tmp_path,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )

        assert post(DAY1).wait(60) == 0
        child: list[subprocess.Popen[str]] = []

        def kill_at_edit(method: str, args: dict) -> None:
            if method == "chat.update" and child:
                os.kill(child[0].pid, signal.SIGKILL)
                slack.on_call = None

        slack.on_call = kill_at_edit
        child.append(post(DAY2))
        assert child[0].wait(60) == -signal.SIGKILL
        store = Store(tmp_path / "d.db")
        [pending] = [w for w in store.pending_work() if w["attempts"] == 0]  # recorded before it was sent
        store.close()
        assert post(DAY2).wait(60) == 0  # the restart
        edits, replies = slack_banners(slack)
        assert replies == FOLLOW_UPS and set(slack.edits.values()) == {1} and edits == FOLLOW_UPS
        store = Store(tmp_path / "d.db")
        assert store.pending_work() == [] and store.get_work(pending["key"])["state"] == "done"
        store.close()


# --- failure notices --------------------------------------------------------------------------------------


@time_machine.travel(datetime(2026, 1, 26, 3, 0, tzinfo=UTC), tick=True)  # the fake's ts are of that day
async def test_a_failure_notice_lost_after_slack_took_it_is_posted_once(fakes, tmp_path):
    """The notice is pending work too: a 500 after Slack accepted it is found, not posted again; one
    refused outright is retried by the worker."""
    from bot.app import digest_runner
    from bot.service.scheduler import RunOutcome

    slack, dc = fakes
    settings = settings_for(slack, dc, tmp_path)
    store = Store(settings.digest_db)
    poster = SlackPoster(make_client(settings))
    sub = Subscription(
        name="widgets", repo=REPO, timezone="UTC", schedule="09:00", lang="en",
        destinations=(Destination("slack", SLACK), Destination("slack", "C0OTHER")),
    )  # fmt: skip
    runner = digest_runner(settings, store, {"slack": poster})
    slack.fail_after_accept("chat.postMessage")  # C0RADAR: accepted, answer lost
    slack.fail(
        "chat.postMessage",
        "internal_error",
        times=2,
        status=503,
        when=lambda a: a.get("channel") == "C0OTHER",
    )
    await runner.report_failure(sub, DAY1, RunOutcome("failed", error="GitHub is down"))
    here = [m for m in slack.channel_messages(SLACK) if "failed" in m.text]
    assert len(here) == 1
    [other] = store.pending_work()
    assert other["channel"] == "C0OTHER"
    await outbox.Worker(store, {"slack": poster}, clock=lambda: 2e9).run_due()
    assert len([m for m in slack.channel_messages("C0OTHER") if "failed" in m.text]) == 1
    await runner.report_failure(sub, DAY1, RunOutcome("failed", error="GitHub is down again"))
    assert len([m for m in slack.messages if "failed" in m.text]) == 2  # said once per channel
    store.close()
