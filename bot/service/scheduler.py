"""The daily schedule: one APScheduler CronTrigger per subscription, in the subscription's zone.

Each fire posts the digest of the previous calendar day (in that zone). A run is idempotent per
(subscription, day): the `runs` table says what is done, a lock per pair makes coinciding triggers run
once, and posting itself only adds what is missing. Missed fires (downtime, a skipped daylight-saving
hour) are caught up oldest first, at start-up and by a periodic sweep, never reaching back more than
`catchup_days` nor before the service first saw the subscription.

Over 400 lines because it is one class: the schedule, catch-up and health of the same jobs, sharing their
recorded state.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler

from analysis.labels import zone_warning
from analysis.window import day_window
from bot.config.schedule import (
    day_for_fire,
    schedule_problem,
    sub_zone,
    trigger_for,
    week_for_fire,
    weekly_trigger,
)
from bot.config.subscriptions import Registry, Subscription
from bot.delivery.leases import claimed
from bot.digest.pipeline import counts_text
from bot.monitoring import metrics
from bot.ports.protocols import Clock
from bot.ports.secrets import scrub
from bot.store.db import Store

log = logging.getLogger(__name__)

SWEEP_SECONDS = 600  # how often missed runs are looked for while running
SYNC_SECONDS = 30  # how soon a subscription made in chat gets its job
BEHIND_REACH = 60  # days back the start looks for days a long downtime left unposted
# How long after its scheduled time a digest may still be in the works before /healthz says it is
# overdue: a day's analysis stops at LLM_DAY_DEADLINE (30 min) and failed posts retry every sweep.
HEALTH_GRACE = timedelta(hours=1)


@dataclass(slots=True)
class RunOutcome:
    status: str  # done | failed | partial
    commits: int = 0
    stats: dict[str, int] = field(default_factory=dict)
    llm_calls: int = 0
    tokens: int = 0
    error: str | None = None
    # The day's window [start, end) and its zone, recorded with the run: the next day's window starts where
    # this one ended (analysis/window.py window_after), so a changed zone neither drops nor repeats commits.
    window: tuple[datetime, datetime] | None = None
    timezone: str | None = None


Runner = Callable[[Subscription, date], Awaitable[RunOutcome]]
FailureHook = Callable[[Subscription, date, RunOutcome], Awaitable[None]]
WeeklyRunner = Callable[[Subscription, int, int], Awaitable[RunOutcome]]  # (subscription, ISO year, week)


class DigestScheduler:
    def __init__(
        self,
        registry: Registry,
        store: Store,
        runner: Runner,
        *,
        catchup_days: int = 3,
        clock: Clock = lambda: datetime.now(UTC),
        on_failure: FailureHook | None = None,
        weekly_runner: WeeklyRunner | None = None,
    ):
        self.weekly_runner = weekly_runner
        self._weekly_jobs: dict[str, str] = {}
        self._weekly_locks: dict[tuple[str, str], asyncio.Lock] = {}
        self.registry = registry
        self.on_failure = on_failure
        self.store = store
        self.runner = runner
        self.catchup_days = catchup_days
        self._told_behind: set[str] = set()  # subscriptions whose days past the window were named
        self.clock = clock
        self._locks: dict[tuple[str, date], asyncio.Lock] = {}
        self._tasks: set[asyncio.Task] = set()
        self._jobs: dict[str, str] = {}  # subscription name → its trigger's description (to spot changes)
        self._broken: dict[str, str] = {}  # subscription name → why it cannot be scheduled (logged once)
        self.scheduler: AsyncIOScheduler | None = None
        self.stopping = False

    # -- lifecycle --------------------------------------------------------------------------------
    async def start(self) -> None:
        self.scheduler = AsyncIOScheduler(timezone=UTC)
        self.scheduler.start()
        metrics.watch_queue(self.queue_depth)
        metrics.watch_health(self.health)
        for sub in self.registry.all():
            self._restore_last_success(sub.name)
        self.sync_jobs()
        self.scheduler.add_job(self.sync_jobs, "interval", seconds=SYNC_SECONDS, id="sync", coalesce=True)
        self.scheduler.add_job(self._sweep_job, "interval", seconds=SWEEP_SECONDS, id="sweep", coalesce=True)
        self._track(asyncio.create_task(self.catch_up()))

    async def idle(self) -> None:
        """Wait until no run or catch-up is in flight (tests, shutdown)."""
        while pending := [t for t in self._tasks if not t.done()]:
            await asyncio.gather(*pending, return_exceptions=True)

    def queue_depth(self) -> int:
        """Runs waiting for their turn or in progress (the /metrics queue depth)."""
        return sum(not t.done() for t in self._tasks)

    def _track(self, task: asyncio.Task) -> asyncio.Task:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def stop(self, timeout: float = 60.0) -> None:
        """No new runs; let in-flight ones finish (posts are recorded as they go, so a run cut short
        resumes with only the missing items next time)."""
        self.stopping = True
        metrics.watch_health(None)
        if self.scheduler is not None:
            self.scheduler.shutdown(wait=False)
        pending = [t for t in self._tasks if not t.done()]
        if pending:
            _, still = await asyncio.wait(pending, timeout=timeout)
            for task in still:
                task.cancel()
            await asyncio.gather(*still, return_exceptions=True)

    # -- jobs ---------------------------------------------------------------------------------------
    def schedulable(self) -> list[Subscription]:
        """The subscriptions that can be scheduled. One that cannot (a zone the system does not know,
        a bad schedule) is skipped with a warning naming it, logged once, and never stops the others."""
        good, broken, names = [], {}, set()
        for sub in self.registry.all():
            names.add(sub.name)
            if problem := schedule_problem(sub):
                broken[sub.name] = problem
                if self._broken.get(sub.name) != problem:
                    log.warning(
                        "subscription %s cannot be scheduled and is skipped: %s (fix it, or remove a chat"
                        " subscription with `digestbot unsubscribe %s`)",
                        sub.name,
                        problem,
                        sub.name,
                    )
            else:
                good.append(sub)
        for name in (self._broken.keys() - broken.keys()) & names:  # a removed one is not "again"
            log.info("subscription %s can be scheduled again", name)
        self._broken = broken
        return good

    def sync_jobs(self) -> None:
        """Make the scheduler's jobs match the subscriptions (file + chat) now."""
        assert self.scheduler is not None
        current = {s.name: s for s in self.schedulable()}
        now = self.clock()
        for name, sub in current.items():
            self._mark_seen(name, now)
            metrics.known_subscription(name, {d.platform for d in sub.destinations})
        self._sync("sub", current, self._jobs, lambda s: s.schedule, trigger_for, self._fire_job)
        # The weekly roll-up: one job per subscription with `weekly` set, posting the previous ISO week.
        weekly = {n: s for n, s in current.items() if s.weekly} if self.weekly_runner else {}
        self._sync("weekly", weekly, self._weekly_jobs, lambda s: s.weekly, weekly_trigger, self._fire_weekly)

    def _sync(
        self,
        kind: str,
        wanted: dict[str, Subscription],
        jobs: dict[str, str],
        when: Callable[[Subscription], str | None],
        trigger: Callable[[Subscription], Any],
        fire: Callable[[str], Any],
    ) -> None:
        """Add or replace the `kind` job of every wanted subscription whose schedule changed, and
        remove the jobs of those no longer wanted. `jobs` remembers each job's schedule."""
        assert self.scheduler is not None
        for name, sub in wanted.items():
            signature = f"{when(sub)}|{sub.timezone}"
            if jobs.get(name) == signature:
                continue
            try:
                self.scheduler.add_job(
                    fire,
                    trigger(sub),
                    args=[name],
                    id=f"{kind}:{name}",
                    replace_existing=True,
                    coalesce=True,
                    max_instances=1,
                    misfire_grace_time=3600,
                )
            except Exception:  # one subscription must never keep the others from their jobs
                log.exception("scheduling %s %s failed; the others are scheduled", kind, name)
                continue
            jobs[name] = signature
            log.info("scheduled %s %s: %s %s", kind, name, when(sub), sub.timezone)
            if kind == "sub" and (odd := zone_warning("en", sub.timezone)):  # at start, and when it changes
                log.warning("subscription %s: %s", name, odd)
        for name in list(jobs):
            if name not in wanted:
                self.scheduler.remove_job(f"{kind}:{name}")
                del jobs[name]
                log.info("unscheduled %s %s", kind, name)

    def missed_weeks(self, sub: Subscription) -> list[tuple[int, int]]:
        """The complete weeks whose roll-up was due (after the service first saw the subscription) and
        is not done, oldest first: the last complete week, and the one before it when its roll-up was
        due within `catchup_days`. A fire posts the week before the fire's week, so a roll-up due on a
        Sunday (or any day but Monday) and missed while the service was down is still the week before
        once the new week has begun: a restart on Monday posts it."""
        if not sub.weekly or self.weekly_runner is None:
            return []
        now = self.clock()
        last = week_for_fire(sub, now)
        before = (date.fromisocalendar(*last, 1) - timedelta(days=7)).isocalendar()[:2]
        seen, done = self.first_seen(sub.name), self._done_days(f"{sub.name}:weekly")
        weeks = []
        for (year, week), window in ((before, timedelta(days=self.catchup_days)), (last, None)):
            monday_after = date.fromisocalendar(year, week, 1) + timedelta(days=7)
            due = weekly_trigger(sub).get_next_fire_time(None, day_window(monday_after, sub_zone(sub))[0])
            if due is None or due > now or (seen is not None and due < seen):
                continue
            if (window is not None and due < now - window) or f"{year}-W{week:02d}" in done:
                continue
            weeks.append((year, week))
        return weeks

    async def _fire_weekly(self, name: str) -> None:
        sub = next((s for s in self.registry.all() if s.name == name), None)
        if sub is None or self.stopping or schedule_problem(sub):  # broken since the last sync
            return
        year, week = week_for_fire(sub, self.clock())
        self._track(asyncio.create_task(self.run_weekly_once(sub, year, week)))

    async def run_weekly_once(self, sub: Subscription, year: int, week: int) -> RunOutcome | None:
        """The roll-up of (subscription, week) unless done: recorded in `runs` as "<name>:weekly" and
        the week's label, so a restart or a second fire posts nothing twice."""
        assert self.weekly_runner is not None
        name, label = f"{sub.name}:weekly", f"{year}-W{week:02d}"
        lock = self._weekly_locks.setdefault((name, label), asyncio.Lock())
        async with lock, self._claimed(name, label) as ours:
            if not ours or label in self._done_days(name):
                return None
            self._record_key(name, label, {"status": "running", "started_at": self.clock().isoformat()})
            began = time.monotonic()
            try:
                outcome = await self.weekly_runner(sub, year, week)
            except Exception as exc:
                log.exception("weekly roll-up %s %s failed", sub.name, label)
                outcome = RunOutcome("failed", error=f"{type(exc).__name__}: {exc}")
            seconds = time.monotonic() - began
            metrics.RUN_SECONDS.labels(metrics.subscription_label(sub.name), "weekly").observe(seconds)
            self._record_key(
                name,
                label,
                {
                    "status": outcome.status,
                    "finished_at": self.clock().isoformat(),
                    "commits": outcome.commits,
                    "stats": json.dumps(outcome.stats),
                    "llm_calls": outcome.llm_calls,
                    "tokens": outcome.tokens,
                    "error": outcome.error,
                },
            )
            log.info("weekly roll-up %s %s: %s", sub.name, label, outcome.status)
            return outcome

    def _record_key(self, name: str, key: str, fields: dict) -> None:
        if fields.get("error"):  # shown by `status`: no secret a service echoed
            fields = {**fields, "error": scrub(fields["error"])}
        with self.store.transaction():
            self.store.db["runs"].upsert(
                {"subscription": name, "day": key, **fields}, pk=("subscription", "day")
            )

    async def _fire_job(self, name: str) -> None:
        """A fire posts the previous day; days before it that are due and not done go first, oldest
        first: a weekday schedule's Monday fire posts Friday's and Saturday's digests before Sunday's,
        not after it at the next sweep."""
        async with self._quiet_on_stop():
            await self._fire(name)

    @contextlib.asynccontextmanager
    async def _quiet_on_stop(self) -> AsyncIterator[None]:
        """APScheduler's shutdown cancels the jobs in progress; their runs are tracked and finished by
        stop() (a run may be waiting for a chat platform still connecting), so that is no error to log."""
        try:
            yield
        except asyncio.CancelledError:
            if not self.stopping:
                raise

    async def _fire(self, name: str) -> None:
        sub = next((s for s in self.registry.all() if s.name == name), None)
        if sub is None or self.stopping or schedule_problem(sub):  # broken since the last sync
            return
        day = day_for_fire(sub, self.clock())
        for earlier in self.missed(sub):
            if earlier < day and not self.stopping:
                await self._spawn(sub, earlier)
        await self._spawn(sub, day)

    async def _sweep_job(self) -> None:
        if not self.stopping:
            async with self._quiet_on_stop():
                await self.catch_up()

    def next_run(self, sub: Subscription) -> datetime | None:
        return trigger_for(sub).get_next_fire_time(None, self.clock())

    # -- runs ---------------------------------------------------------------------------------------
    def missed(self, sub: Subscription) -> list[date]:
        """Days of the last `catchup_days` whose digest is due (its first fire after the day ended has
        passed) but not done, oldest first. Day-based rather than fire-based, so a fire lost to a
        daylight-saving jump or a weekday-only cron still gets its day posted."""
        # Yesterday is the day's own digest, not a catch-up: DIGEST_CATCHUP_DAYS=0 stopped its retries too
        # (a failed or missed run of it was never run again).
        return [day for day, _ in self._undone(sub, range(max(self.catchup_days, 1), 0, -1), self.clock())]

    def left_behind(self, sub: Subscription, reach: int = BEHIND_REACH) -> list[date]:
        """Days before the catch-up window (at most `reach` days back) whose digest was due after the service
        first saw the subscription and never done: a downtime longer than the window leaves them, and they
        went without a word."""
        if self.first_seen(sub.name) is None:
            return []
        backs = range(reach, max(self.catchup_days, 1), -1)
        return [day for day, _ in self._undone(sub, backs, self.clock())]

    def _undone(self, sub: Subscription, backs: range, due_by: datetime) -> Iterator[tuple[date, datetime]]:
        """(day, when its digest was due) for the days `backs` days before today, in that order, whose digest
        was due by `due_by`, not before the service first saw the subscription, and is not done."""
        tz = sub_zone(sub)
        today = self.clock().astimezone(tz).date()
        seen, done, trigger = self.first_seen(sub.name), self._done_days(sub.name), trigger_for(sub)
        for back in backs:
            day = today - timedelta(days=back)
            due = trigger.get_next_fire_time(None, day_window(day + timedelta(days=1), tz)[0])
            if due is None or due > due_by or (seen is not None and due < seen) or day.isoformat() in done:
                continue
            yield day, due

    def health(self, grace: timedelta = HEALTH_GRACE) -> dict[str, str | None]:
        """Every subscription → why it is broken (its last finished run failed or reached only some
        channels, or a digest is overdue by more than `grace`), or None: /healthz and the
        broken-subscription gauge."""
        report: dict[str, str | None] = {}
        for sub in self.registry.all():
            if problem := schedule_problem(sub):
                report[sub.name] = f"cannot be scheduled: {problem}"
                continue
            rows = self.store.query(
                "SELECT day, status, error FROM runs WHERE subscription = ? AND status != 'running'"
                " ORDER BY day DESC LIMIT 1",
                [sub.name],
            )
            late = self.overdue(sub, grace)
            if rows and rows[0]["status"] in ("failed", "partial"):
                last = rows[0]
                report[sub.name] = (
                    f"last run ({last['day']}) {last['status']}: {last['error'] or 'no error recorded'}"
                )
            elif late is not None:
                day, due = late
                report[sub.name] = f"the digest of {day} was due at {due.isoformat()} and has not succeeded"
            else:
                report[sub.name] = None
        return report

    def overdue(self, sub: Subscription, grace: timedelta) -> tuple[date, datetime] | None:
        """The oldest day of the last `catchup_days` (at least one) whose digest was due more than
        `grace` ago, after the service first saw the subscription, and is not done: (day, when due)."""
        backs = range(max(self.catchup_days, 1), 0, -1)
        return next(self._undone(sub, backs, self.clock() - grace), None)

    async def catch_up(self) -> None:
        """Run every missed (subscription, day), each subscription's days oldest first; subscriptions
        run side by side and one failing does not stop the others."""
        subs = self.schedulable()
        await asyncio.gather(*(self._catch_up_one(s) for s in subs))

    async def _catch_up_one(self, sub: Subscription) -> None:
        for missed_week in self.missed_weeks(sub):
            if self.stopping:
                return
            log.info("catching up the weekly roll-up of %s for %d-W%02d", sub.name, *missed_week)
            await self.run_weekly_once(sub, *missed_week)
        if sub.name not in self._told_behind and (behind := self.left_behind(sub)):
            self._told_behind.add(sub.name)  # once a start: the sweeps ask again every few minutes
            log.warning(
                "%s: %d day(s) before the catch-up window (DIGEST_CATCHUP_DAYS=%d) are not posted: %s to %s;"
                " `digestbot post --date YYYY-MM-DD` posts one",
                sub.name,
                len(behind),
                self.catchup_days,
                behind[0],
                behind[-1],
            )
        for day in self.missed(sub):
            if self.stopping:
                return
            log.info("catching up %s for %s", sub.name, day)
            await self._spawn(sub, day)

    async def _spawn(self, sub: Subscription, day: date) -> RunOutcome | None:
        task = self._track(asyncio.create_task(self.run_once(sub, day)))
        return await asyncio.shield(task)

    async def run_once(self, sub: Subscription, day: date) -> RunOutcome | None:
        """Run (subscription, day) unless it is done already; None when skipped."""
        if not self.day_over(sub, day):
            # Posted, a day is frozen in its channels (bot/delivery/posting.py): an unfinished one would
            # never announce the commits that land after. Fires and catch-up only ask for ended days;
            # this guards the rest (a clock or zone disagreement), and the day is caught up once over.
            log.warning("digest %s %s not run: the day has not ended in %s", sub.name, day, sub.timezone)
            return None
        lock = self._locks.setdefault((sub.name, day), asyncio.Lock())
        async with lock, self._claimed(sub.name, day.isoformat()) as ours:
            if not ours or day.isoformat() in self._done_days(sub.name):
                return None
            started = self.clock()
            self._record(sub.name, day, {"status": "running", "started_at": started.isoformat()})
            try:
                outcome = await self.runner(sub, day)
            except Exception as exc:  # a failing subscription must not stop the others
                log.exception("digest %s %s failed", sub.name, day)
                outcome = RunOutcome("failed", error=f"{type(exc).__name__}: {exc}")
            self._record(
                sub.name,
                day,
                {
                    "status": outcome.status,
                    "finished_at": self.clock().isoformat(),
                    "commits": outcome.commits,
                    "stats": json.dumps(outcome.stats),
                    "llm_calls": outcome.llm_calls,
                    "tokens": outcome.tokens,
                    "error": outcome.error,
                    **_window_fields(outcome),
                },
            )
            metrics.record_run(sub.name, outcome.status, self.clock().timestamp())
            seconds = (self.clock() - started).total_seconds()
            metrics.RUN_SECONDS.labels(metrics.subscription_label(sub.name), "daily").observe(seconds)
            # a failed day is a warning: at INFO it hid among the routine lines of a service run without -v
            log.log(
                logging.INFO if outcome.status == "done" else logging.WARNING,
                "digest %s %s: %s, %d commits (%s), %d LLM calls, %d tokens, %.1fs%s",
                sub.name,
                day,
                outcome.status,
                outcome.commits,
                counts_text(outcome.stats),
                outcome.llm_calls,
                outcome.tokens,
                seconds,
                f" ({outcome.error})" if outcome.error else "",
                extra={  # the same facts as fields, for JSON logs (LOG_FORMAT=json)
                    "subscription": sub.name,
                    "day": day.isoformat(),
                    "status": outcome.status,
                    "commits": outcome.commits,
                    "counts": outcome.stats,
                    "llm_calls": outcome.llm_calls,
                    "tokens": outcome.tokens,
                    "seconds": round(seconds, 3),
                    "error": outcome.error,
                },
            )
            if outcome.status == "failed" and self.on_failure is not None:
                try:
                    await self.on_failure(sub, day, outcome)
                except Exception:  # reporting a failure must not become one
                    log.exception("reporting the failure of %s %s failed", sub.name, day)
            return outcome

    @contextlib.asynccontextmanager
    async def _claimed(self, name: str, key: str) -> AsyncIterator[bool]:
        """Whether this process runs (name, key): False while another `digestbot run` on the same
        database runs it (it records the outcome; if it dies, a later sweep here runs it). Two services
        would otherwise both build the day (every model call twice), and the second, waiting past
        LEASE_WAIT for the first's post, would record the day failed and tell the channels so."""
        async with claimed(self.store, f"run:{name}:{key}") as other:
            if other is not None:
                log.info(
                    "%s %s is being run by %s (since %s UTC); left to it",
                    name,
                    key,
                    other["holder"],
                    str(other["acquired_at"])[:19].replace("T", " "),
                )
            yield other is None

    def day_over(self, sub: Subscription, day: date) -> bool:
        """Whether `day` has ended in the subscription's zone."""
        return day_window(day, sub_zone(sub))[1] <= self.clock()

    # -- bookkeeping --------------------------------------------------------------------------------
    def _record(self, name: str, day: date, fields: dict) -> None:
        self._record_key(name, day.isoformat(), fields)

    def _done_days(self, name: str) -> set[str]:
        rows = self.store.query("SELECT day FROM runs WHERE subscription = ? AND status = 'done'", [name])
        return {r["day"] for r in rows}

    def _restore_last_success(self, name: str) -> None:
        rows = self.store.query(
            "SELECT max(finished_at) AS at FROM runs WHERE subscription = ? AND status = 'done'", [name]
        )
        if rows and rows[0]["at"]:
            metrics.LAST_SUCCESS.labels(metrics.subscription_label(name)).set(
                datetime.fromisoformat(rows[0]["at"]).timestamp()
            )

    def _mark_seen(self, name: str, now: datetime) -> None:
        if self.first_seen(name) is None:
            with self.store.transaction():
                self.store.db["subscription_seen"].insert(
                    {"name": name, "first_seen": now.isoformat()}, ignore=True
                )

    def first_seen(self, name: str) -> datetime | None:
        rows = self.store.query("SELECT first_seen FROM subscription_seen WHERE name = ?", [name])
        return datetime.fromisoformat(rows[0]["first_seen"]) if rows else None


def _window_fields(outcome: RunOutcome) -> dict[str, str]:
    """The run's window as recorded (UTC), when the runner built a day; none for a run that built nothing."""
    if outcome.window is None:
        return {}
    start, end = (moment.astimezone(UTC).isoformat() for moment in outcome.window)
    return {"window_start": start, "window_end": end, "timezone": outcome.timezone or ""}
