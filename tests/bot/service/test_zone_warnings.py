"""A zone accepted but seldom meant (EST: never daylight-saving) is said at start and in `status`, and the
subscription runs all the same."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime

from click.testing import CliRunner

from bot.cli.main import cli
from bot.config.settings import Settings
from bot.config.subscriptions import Destination, Registry, Subscription
from bot.service.scheduler import DigestScheduler, RunOutcome
from bot.service.status import render_status_text, status_data

EST_SAID = "EST is a fixed UTC-05:00 all year: for New York with daylight saving use America/New_York"
SUB = Subscription(
    name="widgets",
    repo="acme/widgets",
    timezone="EST",
    schedule="09:00",
    lang="en",
    destinations=(Destination("slack", "C1"),),
)


async def never(sub, day):  # the schedule's runs are not what is tested here
    return RunOutcome("done")


async def test_the_scheduler_says_it_when_it_schedules_the_subscription(store, caplog):
    registry = Registry(store, [SUB])
    sched = DigestScheduler(registry, store, never, clock=lambda: datetime(2026, 1, 27, 12, tzinfo=UTC))
    with caplog.at_level(logging.WARNING, logger="bot.service.scheduler"):
        await sched.start()
        sched.sync_jobs()  # the sync every 30 s: not said again
        registry.file_subscriptions = [replace(SUB, timezone="America/New_York")]
        sched.sync_jobs()  # rescheduled in a region's zone: nothing to say
    await sched.stop()
    said = [r.getMessage() for r in caplog.records if "fixed" in r.getMessage()]
    assert said == [f"subscription widgets: {EST_SAID}"]
    assert "widgets" in sched._jobs  # scheduled all the same


def test_status_says_it_beside_the_subscription_without_calling_it_broken(store, tmp_path):
    settings = Settings(_env_file=None, digest_db=tmp_path / "digest.db", slack_bot_token="xoxb-test")
    data = status_data(settings, store, [SUB, replace(SUB, name="ny", timezone="America/New_York")])
    est, ny = data["subscriptions"]
    assert (est["warning"], est["problem"], ny["warning"]) == (EST_SAID, None, None)
    assert f"  WARNING   {EST_SAID}\n" in render_status_text(data)


def test_run_says_it_of_digest_tz(tmp_path, monkeypatch):
    monkeypatch.setenv("DIGEST_TZ", "est")
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "d.db"), "run"], catch_exceptions=False)
    assert result.exit_code != 0  # no subscriptions: the start stops after saying it
    assert f"DIGEST_TZ: {EST_SAID}" in result.stderr
