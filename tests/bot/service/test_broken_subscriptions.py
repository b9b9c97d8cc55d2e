"""A chat subscription whose stored zone the system does not know (typed in lower case before names were
canonicalised, or a zone gone from the tz database) never stops the scheduler, `status` or a restart:
it is named as broken and skipped, a lower-case zone is read canonically, and `digestbot unsubscribe`
removes it when chat cannot."""

import json
import logging
from datetime import UTC, date, datetime

from bot.cli.main import cli
from bot.config.subscriptions import Registry
from bot.service.scheduler import DigestScheduler
from bot.store.db import Store, utcnow
from tests.bot.cli.test_cli import run
from tests.bot.service.test_scheduler import Clock, Recorder

BAD = "chat:slack:C0MARS:acme/mars"


def stored(store, channel, repo, tz, schedule="09:00"):
    """A chat subscription row as an older version (or a hand edit) left it: the zone as typed."""
    with store.transaction():
        store.db["subscriptions"].insert(
            {
                "platform": "slack",
                "channel": channel,
                "repo": repo,
                "branch": None,
                "schedule": schedule,
                "timezone": tz,
                "lang": "en",
                "created_at": utcnow().isoformat(),
                "created_by": "U1",
            }
        )


def sub_jobs(sched):
    return sorted(j.id for j in sched.scheduler.get_jobs() if j.id.startswith("sub:"))


async def test_a_lower_case_zone_is_read_canonically_and_a_bad_one_is_skipped(store, caplog):
    stored(store, "C0BERLIN", "acme/tiny", "europe/berlin")
    stored(store, "C0MARS", "acme/mars", "Mars/Olympus")
    stored(store, "C0LATER", "acme/second", "UTC", schedule="04:00")
    registry = Registry(store)
    assert [s.timezone for s in registry.all()] == ["Europe/Berlin", "Mars/Olympus", "UTC"]
    clock = Clock(datetime(2026, 3, 11, 12, 0, tzinfo=UTC))
    runner = Recorder()
    sched = DigestScheduler(registry, store, runner, clock=clock)
    with caplog.at_level(logging.WARNING, logger="bot.service.scheduler"):
        await sched.start()  # a restarted `run`: starts, schedules the others
        await sched.idle()
        sched.sync_jobs()  # the periodic re-sync: no new warning
    assert sub_jobs(sched) == ["sub:chat:slack:C0BERLIN:acme/tiny", "sub:chat:slack:C0LATER:acme/second"]
    warnings = [r.getMessage() for r in caplog.records if BAD in r.getMessage()]
    assert len(warnings) == 1 and "Mars/Olympus" in warnings[0] and "digestbot unsubscribe" in warnings[0]
    health = sched.health()
    assert "cannot be scheduled" in health[BAD] and health["chat:slack:C0LATER:acme/second"] is None
    # An unsubscribe made in chat still takes effect, after the broken one as before it.
    registry.chat.remove("slack", "C0LATER", "acme/second")
    sched.sync_jobs()
    assert sub_jobs(sched) == ["sub:chat:slack:C0BERLIN:acme/tiny"]
    clock.now = datetime(2026, 3, 12, 9, 0, 1, tzinfo=UTC)
    await sched._fire_job(BAD)  # a job left from before it broke does nothing
    assert runner.calls == []
    await sched.stop()


async def test_a_broken_subscription_removed_is_not_said_to_be_schedulable_again(store, caplog):
    stored(store, "C0MARS", "acme/mars", "Mars/Olympus")
    stored(store, "C0VENUS", "acme/venus", "Venus/Maxwell")
    registry = Registry(store)
    sched = DigestScheduler(
        registry, store, Recorder(), clock=Clock(datetime(2026, 3, 11, 12, 0, tzinfo=UTC))
    )
    await sched.start()
    with caplog.at_level(logging.INFO, logger="bot.service.scheduler"):
        registry.chat.remove("slack", "C0MARS", "acme/mars")  # `digestbot unsubscribe`
        registry.chat.remove("slack", "C0VENUS", "acme/venus")
        stored(store, "C0VENUS", "acme/venus", "UTC")  # fixed: subscribed again with a real zone
        sched.sync_jobs()
    again = [r.getMessage() for r in caplog.records if "can be scheduled again" in r.getMessage()]
    assert again == ["subscription chat:slack:C0VENUS:acme/venus can be scheduled again"]
    await sched.stop()


def test_status_names_the_broken_one_and_unsubscribe_removes_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test-not-a-real-token")
    db = tmp_path / "digest.db"
    store = Store(db)
    stored(store, "C0MARS", "acme/mars", "Mars/Olympus")
    stored(store, "C0BERLIN", "acme/tiny", "europe/berlin")
    store.close()
    status = run("status", db=db)
    assert status.exit_code == 1, status.output  # broken: exit 1 for monitoring, not a crash
    assert "unexpected" not in status.output
    assert f"{BAD}  [chat]" in status.stdout
    assert "BROKEN    schedule: unknown time zone 'Mars/Olympus'" in status.stdout
    assert "09:00 Europe/Berlin" in status.stdout and "next run  never" in status.stdout
    data = json.loads(run("status", "--format", "json", db=db).stdout)
    berlin = next(s for s in data["subscriptions"] if s["repo"] == "acme/tiny")
    assert berlin["timezone"] == "Europe/Berlin" and berlin["next_run"] and berlin["problem"] is None

    for wrong, says in (
        ("widgets-daily", "not a chat subscription"),
        ("chat:slack:C0NONE:acme/mars", "no chat subscription named"),
    ):
        refused = run("unsubscribe", wrong, db=db)
        assert refused.exit_code == 2 and says in refused.stderr
    removed = run("unsubscribe", BAD, db=db)
    assert removed.exit_code == 0 and removed.stdout == f"removed {BAD}\n"
    after = run("status", db=db)
    assert after.exit_code == 0 and BAD not in after.stdout and "acme/tiny" in after.stdout


def test_unsubscribe_is_in_the_help():
    assert "unsubscribe" in run("--help").stdout
    assert cli.get_command(None, "unsubscribe") is not None  # type: ignore[arg-type]


async def test_the_scheduler_never_runs_a_day_that_has_not_ended(store):
    """A posted day is frozen in its channels: a run of an unfinished day (a clock or zone
    disagreement) is not started nor recorded, and the day is caught up once it is over."""
    stored(store, "C0BERLIN", "acme/tiny", "Europe/Berlin")
    [sub] = Registry(store).all()
    clock = Clock(datetime(2026, 3, 10, 20, 0, tzinfo=UTC))  # 21:00 in Berlin
    runner = Recorder()
    sched = DigestScheduler(Registry(store), store, runner, clock=clock)
    assert await sched.run_once(sub, date(2026, 3, 10)) is None
    assert runner.calls == [] and store.query("SELECT * FROM runs") == []
    clock.now = datetime(2026, 3, 10, 23, 0, 1, tzinfo=UTC)  # 00:00:01 on the 11th in Berlin
    outcome = await sched.run_once(sub, date(2026, 3, 10))
    assert outcome is not None and runner.calls == [(sub.name, date(2026, 3, 10))]


def test_status_says_a_digest_is_overdue_as_healthz_does(tmp_path, monkeypatch):
    """/healthz was 503 (yesterday's digest never came: the service down) while `status`, the documented
    check for cron, said "last run … done" and exited 0."""
    from datetime import timedelta

    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test-not-a-real-token")
    db = tmp_path / "digest.db"
    store = Store(db)
    stored(store, "C0BERLIN", "acme/tiny", "UTC")
    name = "chat:slack:C0BERLIN:acme/tiny"
    seen = datetime.now(UTC) - timedelta(days=10)
    store.db["subscription_seen"].insert({"name": name, "first_seen": seen.isoformat()})
    store.close()
    status = run("status", db=db)
    assert status.exit_code == 1, status.output
    assert "OVERDUE   the digest of " in status.stdout and "(is the service running?)" in status.stdout
    [sub] = json.loads(run("status", "--format", "json", db=db).stdout)["subscriptions"]
    assert sub["overdue"].startswith("the digest of ") and sub["problem"] is None


def test_status_of_a_subscription_no_service_has_run_is_not_overdue(tmp_path, monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test-not-a-real-token")
    db = tmp_path / "digest.db"
    store = Store(db)
    stored(store, "C0BERLIN", "acme/tiny", "UTC")
    store.close()
    status = run("status", db=db)
    assert status.exit_code == 0 and "OVERDUE" not in status.stdout, status.output


async def test_a_host_down_at_start_is_no_problem_a_refusal_is(caplog):
    """An outage at start must not stop `run` (the runs retry); a refusal (not found, token) is a setting."""
    import logging

    from analysis.errors import SourceError, SourceRefused
    from bot.config.subscriptions import Destination, Subscription
    from bot.service.status import check_remote_sources

    class Host:
        def __init__(self, repo: str):
            self.repo = repo

        async def default_branch(self) -> str:
            if self.repo == "acme/down":
                raise SourceError("cannot reach GitHub at https://api.github.com: connection refused")
            if self.repo == "acme/gone":
                raise SourceRefused("repository acme/gone not found on GitHub")
            return "main"

        async def branch_tip(self, branch: str) -> str:
            return "a" * 40

        async def aclose(self) -> None:
            return None

    def sub(name: str, repo: str) -> Subscription:
        return Subscription(name, repo, "UTC", "09:00", "en", (Destination("slack", "C1"),))

    subs = [sub("down", "acme/down"), sub("gone", "acme/gone"), sub("fine", "acme/fine")]
    with caplog.at_level(logging.INFO, logger="bot.service.status"):
        problems = await check_remote_sources(subs, Host)
    assert [(s.name, p) for s, p in problems] == [
        ("gone", "source: repository acme/gone not found on GitHub")
    ]
    assert "could not check acme/down at start (cannot reach GitHub" in caplog.text
