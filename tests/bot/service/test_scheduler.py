"""The schedule through a day boundary, a restart after downtime, daylight-saving days and
coinciding triggers — with an injected clock, so nothing waits for real time."""

import asyncio
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.config.schedule import day_for_fire, trigger_for
from bot.config.subscriptions import Destination, Registry, Subscription
from bot.service.scheduler import DigestScheduler, RunOutcome

SH = ZoneInfo("Asia/Shanghai")


def sub(name="vllm", schedule="09:00", tz="Asia/Shanghai"):
    return Subscription(
        name=name,
        repo="o/n",
        timezone=tz,
        schedule=schedule,
        lang="zh",
        destinations=(Destination("slack", "C1"),),
    )


class Clock:
    def __init__(self, at: datetime):
        self.now = at

    def __call__(self) -> datetime:
        return self.now


class Recorder:
    def __init__(self, fail: set[str] = frozenset(), delay: float = 0):
        self.calls: list[tuple[str, date]] = []
        self.fail = fail
        self.delay = delay

    async def __call__(self, s, day):
        self.calls.append((s.name, day))
        await asyncio.sleep(self.delay)
        if s.name in self.fail:
            raise RuntimeError("GitHub is down")
        return RunOutcome("done", commits=3, stats={"high": 1, "medium": 1, "low": 1, "total": 3})


def make(store, subs, clock, runner, catchup=3):
    return DigestScheduler(Registry(store, subs), store, runner, catchup_days=catchup, clock=clock)


async def first_seen(store, subs, clock):
    """A service run that only registers the subscriptions (first seen at clock.now) and stops."""
    sched = make(store, subs, clock, Recorder())
    await sched.start()
    await sched.idle()
    await sched.stop()


async def test_first_start_does_not_backfill_then_fires_across_the_day_boundary(store):
    clock = Clock(datetime(2026, 1, 29, 8, 0, tzinfo=SH))
    runner = Recorder()
    sched = make(store, [sub()], clock, runner)
    await sched.start()
    await sched.idle()
    assert runner.calls == []  # nothing was due since the subscription was first seen
    assert sched.next_run(sub()) == datetime(2026, 1, 29, 9, 0, tzinfo=SH)
    clock.now = datetime(2026, 1, 29, 9, 0, 1, tzinfo=SH)
    await sched._fire_job("vllm")
    assert runner.calls == [("vllm", date(2026, 1, 28))]
    await sched.catch_up()  # the sweep finds nothing more to do
    assert runner.calls == [("vllm", date(2026, 1, 28))]
    await sched.stop()


async def test_restart_after_two_missed_days_catches_up_oldest_first_once(store):
    clock = Clock(datetime(2026, 1, 27, 8, 0, tzinfo=SH))
    first = make(store, [sub()], clock, Recorder())
    await first.start()
    clock.now = datetime(2026, 1, 27, 9, 0, 5, tzinfo=SH)
    await first._fire_job("vllm")  # posts the 26th
    await first.stop()
    # down through the mornings of the 28th and 29th; back at noon on the 29th
    clock.now = datetime(2026, 1, 29, 12, 0, tzinfo=SH)
    runner = Recorder()
    second = make(store, [sub()], clock, runner)
    await second.start()
    await second.idle()
    assert runner.calls == [("vllm", date(2026, 1, 27)), ("vllm", date(2026, 1, 28))]
    third = make(store, [sub()], clock, runner)  # another restart: never twice
    await third.start()
    await third.idle()
    assert len(runner.calls) == 2
    for s in (second, third):
        await s.stop()


async def test_catch_up_is_bounded(store):
    clock = Clock(datetime(2026, 1, 1, 8, 0, tzinfo=SH))
    await first_seen(store, [sub()], clock)
    clock.now = datetime(2026, 1, 20, 12, 0, tzinfo=SH)
    runner = Recorder()
    sched = make(store, [sub()], clock, runner, catchup=3)
    await sched.catch_up()
    assert [d for _, d in runner.calls] == [date(2026, 1, 17), date(2026, 1, 18), date(2026, 1, 19)]


async def test_days_past_the_catch_up_window_are_named_once_a_start(store, caplog):
    """A downtime longer than DIGEST_CATCHUP_DAYS left its older days unposted without a word."""
    import logging

    clock = Clock(datetime(2026, 1, 1, 8, 0, tzinfo=SH))
    await first_seen(store, [sub()], clock)
    clock.now = datetime(2026, 1, 20, 12, 0, tzinfo=SH)
    sched = make(store, [sub()], clock, Recorder(), catchup=3)
    with caplog.at_level(logging.WARNING, logger="bot.service.scheduler"):
        await sched.catch_up()
        await sched.catch_up()  # the sweep: not said again
    said = [r.getMessage() for r in caplog.records if "before the catch-up window" in r.getMessage()]
    assert said == [
        "vllm: 17 day(s) before the catch-up window (DIGEST_CATCHUP_DAYS=3) are not posted: 2025-12-31 to"
        " 2026-01-16; `digestbot post --date YYYY-MM-DD` posts one"
    ]


async def test_no_catch_up_still_runs_and_retries_yesterday(store):
    """DIGEST_CATCHUP_DAYS=0 means no backfill after a downtime; it also stopped every retry of yesterday's
    failed digest and the run of a fire missed by a restart."""
    clock = Clock(datetime(2026, 1, 27, 8, 0, tzinfo=SH))
    await first_seen(store, [sub()], clock)
    clock.now = datetime(2026, 1, 29, 12, 0, tzinfo=SH)  # restarted after the 29th's fire
    runner = Recorder(fail={"vllm"})
    sched = make(store, [sub()], clock, runner, catchup=0)
    await sched.catch_up()
    sched.runner = Recorder()
    await sched.catch_up()  # the sweep retries it
    assert runner.calls == [("vllm", date(2026, 1, 28))] and sched.runner.calls == [
        ("vllm", date(2026, 1, 28))
    ]


async def test_coinciding_triggers_run_once(store):
    clock = Clock(datetime(2026, 1, 29, 9, 0, tzinfo=SH))
    runner = Recorder(delay=0.05)
    sched = make(store, [sub()], clock, runner)
    results = await asyncio.gather(*(sched.run_once(sub(), date(2026, 1, 28)) for _ in range(3)))
    assert runner.calls == [("vllm", date(2026, 1, 28))]
    assert sum(r is not None for r in results) == 1


async def test_a_failing_subscription_does_not_stop_the_others(store):
    clock = Clock(datetime(2026, 1, 28, 8, 0, tzinfo=SH))
    subs = [sub("bad"), sub("good")]
    await first_seen(store, subs, clock)
    clock.now = datetime(2026, 1, 29, 12, 0, tzinfo=SH)
    runner = Recorder(fail={"bad"})
    sched = make(store, subs, clock, runner)
    await sched.catch_up()
    assert ("good", date(2026, 1, 28)) in runner.calls
    rows = {r["subscription"]: r for r in store.query("SELECT * FROM runs WHERE day = '2026-01-28'")}
    assert rows["good"]["status"] == "done"
    assert rows["bad"]["status"] == "failed" and "GitHub is down" in rows["bad"]["error"]
    await sched.catch_up()  # a failed day is retried by the next sweep, a done one is not
    assert runner.calls.count(("bad", date(2026, 1, 28))) == 2
    assert runner.calls.count(("good", date(2026, 1, 28))) == 1


def test_daylight_saving_days():
    ny = sub(schedule="02:30", tz="America/New_York")
    trig = trigger_for(ny)
    # spring forward: 02:30 does not exist on 2026-03-08; the fire still happens that morning
    spring = trig.get_next_fire_time(None, datetime(2026, 3, 8, 0, 0, tzinfo=ZoneInfo("America/New_York")))
    assert spring.astimezone(UTC).date() == date(2026, 3, 8)
    assert day_for_fire(ny, spring) == date(2026, 3, 7)
    # fall back: 01:30 happens twice on 2026-11-01; both fires are for the same day, so it runs once
    fall = sub(schedule="01:30", tz="America/New_York")
    t = trigger_for(fall)
    first = t.get_next_fire_time(None, datetime(2026, 11, 1, 0, 0, tzinfo=ZoneInfo("America/New_York")))
    second = t.get_next_fire_time(first, first + timedelta(microseconds=1))
    if second.date() == first.date():
        assert day_for_fire(fall, first) == day_for_fire(fall, second) == date(2026, 10, 31)


async def test_daylight_saving_day_is_caught_up(store):
    ny = sub(schedule="02:30", tz="America/New_York")
    clock = Clock(datetime(2026, 3, 6, 12, 0, tzinfo=ZoneInfo("America/New_York")))
    await first_seen(store, [ny], clock)
    clock.now = datetime(2026, 3, 9, 12, 0, tzinfo=ZoneInfo("America/New_York"))
    runner = Recorder()
    await make(store, [ny], clock, runner).catch_up()
    assert [d for _, d in runner.calls] == [date(2026, 3, 6), date(2026, 3, 7), date(2026, 3, 8)]


async def test_chat_subscriptions_get_jobs_without_restart(store):
    clock = Clock(datetime(2026, 1, 29, 8, 0, tzinfo=SH))
    registry = Registry(store, [])
    sched = DigestScheduler(registry, store, Recorder(), clock=clock)
    await sched.start()
    assert not [j for j in sched.scheduler.get_jobs() if j.id.startswith("sub:")]
    registry.chat.add("slack", "C9", "o/n", time="10:15", tz="Asia/Shanghai", lang="en")
    sched.sync_jobs()
    (job,) = [j for j in sched.scheduler.get_jobs() if j.id.startswith("sub:")]
    assert job.id == "sub:chat:slack:C9:o/n"
    registry.chat.remove("slack", "C9", "o/n")
    sched.sync_jobs()
    assert not [j for j in sched.scheduler.get_jobs() if j.id.startswith("sub:")]
    await sched.stop()


@pytest.mark.parametrize(
    ("cron", "weekdays"),
    [
        ("0 18 * * 1-5", {0, 1, 2, 3, 4}),  # Monday to Friday (Python: Monday = 0)
        ("0 18 * * 0", {6}),  # Sunday
        ("0 18 * * 7", {6}),  # Sunday too
        ("0 18 * * 6,0", {5, 6}),  # the weekend
        ("0 18 * * */2", {6, 1, 3, 5}),  # Sun, Tue, Thu, Sat
        ("0 18 * * mon-fri", {0, 1, 2, 3, 4}),  # names pass through
        ("0 18 * * *", set(range(7))),
    ],
)
def test_cron_weekdays_follow_the_crontab_standard(cron, weekdays):
    s = sub(schedule=cron, tz="UTC")
    trig = trigger_for(s)
    fire, seen = datetime(2026, 11, 1, tzinfo=UTC), set()
    for _ in range(14):
        fire = trig.get_next_fire_time(None, fire + timedelta(minutes=1))
        seen.add(fire.weekday())
        assert (fire.hour, fire.minute) == (18, 0)
    assert seen == weekdays


def test_bad_cron_weekday_is_refused():
    from bot.config.schedule import cron_trigger

    for bad in ("0 18 * * 8", "0 18 * * 5-1", "0 18 * *"):
        with pytest.raises(ValueError):
            cron_trigger(bad)


@pytest.mark.parametrize("tz", ["Asia/Shanghai", "America/Santiago", "Europe/Berlin", "Pacific/Kiritimati"])
@pytest.mark.parametrize("schedule", ["00:00", "09:00", "23:59", "*/20 * * * *", "0 0 * * 1-5"])
def test_every_fire_posts_a_day_that_has_ended(tz, schedule):
    """A fire posts the previous day of the subscription's zone, its trigger runs in that zone: however
    the schedule sits against midnight or a daylight-saving change, the day posted is over (a posted day
    is frozen in its channels, bot/delivery/posting.py)."""
    from analysis.window import day_window

    s = sub(schedule=schedule, tz=tz)
    trigger, fire = trigger_for(s), datetime(2026, 3, 1, tzinfo=UTC)
    for _ in range(400):  # daily schedules: a year, every daylight-saving change of these zones
        fire = trigger.get_next_fire_time(None, fire + timedelta(seconds=1))
        assert day_window(day_for_fire(s, fire), ZoneInfo(tz))[1] <= fire


@pytest.mark.parametrize("weekly", ["sun 18:00", "sat 18:00", "mon 09:30"])
async def test_a_weekly_roll_up_missed_at_the_end_of_the_week_is_caught_up_in_the_next(store, weekly):
    """A weekly fire posts the week before the fire's week: a Sunday (or Saturday) roll-up missed while
    the service was down is still that week's after Monday begins, and a restart posts it, once; a
    roll-up due more than `catchup_days` ago is not posted that late."""
    s = Subscription(
        name="w",
        repo="o/n",
        timezone="Asia/Shanghai",
        schedule="09:00",
        lang="en",
        destinations=(Destination("slack", "C1"),),
        weekly=weekly,
    )
    weeks: list[tuple[int, int]] = []

    async def weekly_runner(_, year, week):
        weeks.append((year, week))
        return RunOutcome("done")

    clock = Clock(datetime(2026, 1, 20, 12, 0, tzinfo=SH))
    sched = DigestScheduler(
        Registry(store, [s]), store, Recorder(), catchup_days=3, clock=clock, weekly_runner=weekly_runner
    )
    sched._mark_seen("w", clock.now)
    # down from Saturday 2026-02-07 morning; back on Monday 2026-02-09 (W07) at 10:00: the Saturday and
    # Sunday fires were W05's roll-up (the week before theirs), the Monday one of 09:30 is W06's
    monday = weekly.startswith("mon")
    clock.now = datetime(2026, 2, 9, 10, 0, tzinfo=SH)
    await sched.catch_up()
    await sched.catch_up()
    assert weeks == ([(2026, 6)] if monday else [(2026, 5)])
    # a roll-up due more than three days before the restart is left out
    store.db.execute("DELETE FROM runs")
    weeks.clear()
    clock.now = datetime(2026, 2, 12, 10, 0, tzinfo=SH)  # Thursday
    await sched.catch_up()
    assert weeks == ([(2026, 6)] if monday else [])


def _held_by(store, name: str, pid: int) -> None:
    """`name` claimed by the process `pid` on this host (another `digestbot run` on the same database)."""
    import socket
    import time

    host = socket.gethostname()
    store.db["leases"].insert(
        {
            "name": name,
            "holder": f"digestbot pid {pid} on {host}",
            "host": host,
            "pid": pid,
            "acquired_at": "2026-01-29T01:00:00+00:00",
            "expires_at": time.time() + 60,
        },
        replace=True,
    )


async def test_a_day_another_service_is_running_is_left_to_it_and_taken_over_if_it_dies(store, caplog):
    """Two `digestbot run` on one database: the day the other is running is neither built a second time
    (every model call twice) nor recorded failed here; when that process dies before it is done, the
    next sweep runs the day, once."""
    import logging
    import os
    import subprocess
    import sys

    clock = Clock(datetime(2026, 1, 28, 10, 0, tzinfo=SH))  # after the 27th's digest was due
    await first_seen(store, [sub()], clock)
    clock.now = datetime(2026, 1, 29, 12, 0, tzinfo=SH)
    store.db["runs"].insert(
        {"subscription": "vllm", "day": "2026-01-28", "status": "running", "started_at": "2026-01-29T01:00"}
    )
    _held_by(store, "run:vllm:2026-01-28", os.getppid())  # a live process on this host
    runner = Recorder()
    sched = make(store, [sub()], clock, runner)
    with caplog.at_level(logging.INFO, logger="bot.service.scheduler"):
        await sched.catch_up()
    assert runner.calls == []
    assert store.query("SELECT status FROM runs") == [{"status": "running"}]
    assert f"2026-01-28 is being run by digestbot pid {os.getppid()}" in caplog.text
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    _held_by(store, "run:vllm:2026-01-28", int(gone.stdout))  # kill -9'd while running the day
    await sched.catch_up()
    await sched.catch_up()
    assert runner.calls == [("vllm", date(2026, 1, 28))]
    assert store.query("SELECT status FROM runs") == [{"status": "done"}]
    assert store.query("SELECT * FROM leases") == []  # released when done


async def test_a_week_another_service_is_running_is_left_to_it(store):
    s = Subscription(
        "w", "o/n", "Asia/Shanghai", "09:00", "en", (Destination("slack", "C1"),), weekly="mon 09:30"
    )
    weeks = []

    async def weekly_runner(_, year, week):
        weeks.append((year, week))
        return RunOutcome("done")

    import os

    sched = DigestScheduler(Registry(store, [s]), store, Recorder(), weekly_runner=weekly_runner)
    _held_by(store, "run:w:weekly:2026-W05", os.getppid())
    assert await sched.run_weekly_once(s, 2026, 5) is None and weeks == []
    store.db.execute("DELETE FROM leases")
    await sched.run_weekly_once(s, 2026, 5)
    assert weeks == [(2026, 5)]


async def test_a_weekday_schedule_posts_the_weekend_in_order_on_monday(store):
    """ "0 9 * * 1-5": no fire on Saturday or Sunday, so Friday's and Saturday's digests fall due on Monday
    with Sunday's. The Monday fire posts them oldest first; they came after Sunday's, at the next sweep."""
    weekdays = sub(schedule="0 9 * * 1-5")
    clock = Clock(datetime(2026, 1, 29, 12, 0, tzinfo=SH))  # Thursday
    await first_seen(store, [weekdays], clock)
    runner = Recorder()
    sched = make(store, [weekdays], clock, runner)
    clock.now = datetime(2026, 1, 30, 9, 0, 1, tzinfo=SH)  # Friday's fire: Thursday
    await sched._fire_job("vllm")
    clock.now = datetime(2026, 2, 2, 9, 0, 1, tzinfo=SH)  # Monday's fire
    await sched._fire_job("vllm")
    await sched.catch_up()
    days = [d.isoformat() for _, d in runner.calls]
    assert days == ["2026-01-29", "2026-01-30", "2026-01-31", "2026-02-01"]
