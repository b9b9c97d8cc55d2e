"""`digestbot run`: one asyncio process with the scheduler and whichever chat adapters have tokens.

Each morning every subscription's digest is built once and posted to each of its destinations; a
destination that fails (or has no adapter running) leaves the run unfinished, so the next sweep
resumes it, posting only what is missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Callable, Iterable
from datetime import date, timedelta
from typing import Any

from analysis.errors import ConfigError, DigestError, Undeliverable
from analysis.weekly import weekly_key
from bot.config.settings import Settings, zone
from bot.config.subscriptions import Destination, Subscription
from bot.delivery import outbox
from bot.delivery.posting import post_digest
from bot.delivery.weekly_post import post_weekly
from bot.digest.analyzers import Analyzer, HeuristicAnalyzer
from bot.digest.pipeline import RunStats, build_digest, pick_branch
from bot.digest.usage import tracking
from bot.digest.weekly import build_week
from bot.monitoring import metrics
from bot.ports.protocols import ChartRenderer, CommitSource, Poster
from bot.ports.secrets import clip
from bot.service.scheduler import RunOutcome
from bot.store.db import Store
from bot.store.runs import posted_window

log = logging.getLogger(__name__)


class DigestRunner:
    """Builds a subscription's digest for a day and posts it to every destination."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        posters: dict[str, Poster],
        *,
        source_factory: Callable[[Subscription], CommitSource],
        chart: ChartRenderer,
        analyzer: Analyzer | None = None,
        make_analyzer: Callable[[], Analyzer] | None = None,
        startup: Startup | None = None,
    ):
        """Built by bot/app.py, which gives it its sources, the chart renderer and the analyser (made
        on first use: a run that finds nothing to do loads no model client). `startup`: the platforms
        still connecting, whose posts wait for them rather than fail for being seconds late."""
        self.settings = settings
        self.store = store
        self.posters = posters
        self.startup = startup
        self.chart = chart
        self._analyzer = analyzer
        self._make_analyzer = make_analyzer or HeuristicAnalyzer
        self._source_factory = source_factory

    @property
    def analyzer(self) -> Analyzer:
        if self._analyzer is None:
            self._analyzer = self._make_analyzer()
        return self._analyzer

    def source(self, sub: Subscription) -> CommitSource:
        return self._source_factory(sub)

    async def __call__(self, sub: Subscription, day: date) -> RunOutcome:
        with tracking() as usage:
            try:  # a source that cannot open (git_dir gone) fails the run in one line, no traceback
                source = self.source(sub)
            except DigestError as exc:
                return RunOutcome("failed", error=str(exc))
            stats = RunStats()
            try:
                digest = await build_digest(
                    source,
                    self.store,
                    self.analyzer,
                    branch=await pick_branch(source, sub.branch, self.settings),
                    day=day,
                    tz=zone(sub.timezone),
                    lang=sub.lang,
                    keep=sub.filters.keep if sub.filters.active else None,
                    history_days=self.settings.history_days,
                    stats=stats,
                    after=posted_window(self.store, sub.name, day - timedelta(days=1)),
                )
            except DigestError as exc:
                return RunOutcome("failed", error=str(exc), llm_calls=usage.calls, tokens=usage.tokens)
            finally:
                await source.aclose()
            window = (digest.window_start, digest.window_end)
            label = metrics.subscription_label(sub.name)
            metrics.DIGESTS_BUILT.labels(label).inc()
            metrics.FALLBACKS.labels(label).inc(stats.fallbacks)
            if not digest.commits and not sub.post_empty:
                log.info("digest %s %s: no commits, nothing posted (post_empty = false)", sub.name, day)
                return RunOutcome(
                    "done",
                    llm_calls=usage.calls,
                    tokens=usage.tokens,
                    window=window,
                    timezone=digest.timezone,
                )
            errors: list[str] = []
            for dest in self.up_first(sub.destinations):
                poster = await self.poster_for(dest.platform)
                if poster is None:
                    errors.append(
                        f"{dest.platform}:{dest.channel}: no {dest.platform} adapter running"
                        " (token not set, or the platform is down and being retried)"
                    )
                    continue
                try:
                    await post_digest(
                        poster, self.store, dest.channel, digest, max_cards=self.settings.digest_max_cards
                    )
                    metrics.DIGESTS_POSTED.labels(label, dest.platform).inc()
                except Exception as exc:  # one destination failing must not stop the others
                    log.warning("posting %s to %s:%s failed: %s", sub.name, dest.platform, dest.channel, exc)
                    errors.append(f"{dest.platform}:{dest.channel}: {exc}")
        status = "done" if not errors else ("failed" if len(errors) == len(sub.destinations) else "partial")
        return RunOutcome(
            status,
            commits=len(digest.commits),
            stats=digest.stats,
            llm_calls=usage.calls,
            tokens=usage.tokens,
            error="; ".join(errors) or None,
            window=window,
            timezone=digest.timezone,
        )

    async def weekly(self, sub: Subscription, year: int, week: int) -> RunOutcome:
        """The subscription's roll-up of an ISO week, handed to every destination that can take it as
        pending work (bot/delivery/outbox.py): tried now with the week just built, and when that fails, retried
        by the service (the week built again from the store) until it is up. The run is done once every
        destination has it or has it pending; `status` lists what is pending."""
        with tracking() as usage:
            try:
                rollup = await self.build_week(sub, year, week)
            except DigestError as exc:
                return RunOutcome("failed", error=str(exc), llm_calls=usage.calls, tokens=usage.tokens)
            errors: list[str] = []
            pending: list[str] = []
            handler = self.weekly_handler(lambda: [sub], built=rollup)
            for dest in self.up_first(sub.destinations):
                poster = await self.poster_for(dest.platform)
                where = f"{dest.platform}:{dest.channel}"
                if poster is None or not hasattr(poster, "post_weekly"):
                    errors.append(f"{where}: no {dest.platform} adapter running")
                    continue
                job = {"subscription": sub.name, "year": year, "week": week}
                key = f"weekly:{where}:{weekly_key(rollup)}"
                state = await outbox.submit(poster, self.store, "weekly", dest.channel, key, job, handler)
                if state == "gave_up":
                    errors.append(f"{where}: {(self.store.get_work(key) or {}).get('last_error')}")
                elif state != "done":
                    pending.append(f"{where}: pending, retried by the service")
        status = "done" if not errors else ("failed" if len(errors) == len(sub.destinations) else "partial")
        totals = rollup.totals
        return RunOutcome(
            status,
            commits=totals["total"],
            stats=totals,
            llm_calls=usage.calls,
            tokens=usage.tokens,
            error="; ".join(errors + pending) or None,
        )

    def up_first(self, destinations: Iterable[Destination]) -> list[Destination]:
        """The destinations whose platform is up, then those still connecting (each in its order): a
        platform slow to connect delays only its own posts."""
        return sorted(destinations, key=lambda d: d.platform not in self.posters)

    async def poster_for(self, platform: str) -> Poster | None:
        """The platform's poster; one still connecting at start-up is waited for (its first attempt,
        bounded); None when it is not running."""
        if platform not in self.posters and self.startup is not None:
            await self.startup.settled(platform)
        return self.posters.get(platform)

    async def build_week(self, sub: Subscription, year: int, week: int) -> Any:
        source = self.source(sub)
        try:
            return await build_week(
                source,
                self.store,
                self.analyzer,
                branch=await pick_branch(source, sub.branch, self.settings),
                year=year,
                week=week,
                tz=zone(sub.timezone),
                lang=sub.lang,
                keep=sub.filters.keep if sub.filters.active else None,
            )
        finally:
            await source.aclose()

    def weekly_handler(
        self, subscriptions: Callable[[], list[Subscription]], built: Any = None
    ) -> outbox.Handler:
        """Who posts a "weekly" piece of work: the roll-up just built, or the week built again from the
        store (analyses are cached) for a retry; a subscription that is gone gives the work up."""

        async def post(poster: Any, store: Store, row: dict[str, Any], job: dict[str, Any]) -> None:
            rollup = built
            if rollup is None:
                sub = next((s for s in subscriptions() if s.name == job["subscription"]), None)
                if sub is None:
                    raise Undeliverable(f"subscription {job['subscription']} no longer exists")
                rollup = await self.build_week(sub, int(job["year"]), int(job["week"]))
            await post_weekly(poster, store, str(row["channel"]), rollup, chart=self.chart)

        return post

    async def report_failure(self, sub: Subscription, day: date, outcome: RunOutcome) -> None:
        """Say once per (subscription, day) in each channel that the digest failed: the people who
        wait for it learn why it is missing without reading the service's log. Each notice is pending
        work (bot/delivery/outbox.py): tried now, retried by the service until it is up."""
        if outcome.status != "failed" or not sub.notify_failures:
            return
        key, text = f"failure:{sub.name}:{day.isoformat()}", failure_notice(sub, day, outcome)
        since = time.time() - NOTICE_CLOCK_SKEW
        for dest in sub.destinations:
            poster = self.posters.get(dest.platform)
            if poster is None or not hasattr(poster, "post_notice"):
                continue
            job = {"key": key, "text": text, "since": since}
            work = f"notice:{dest.platform}:{dest.channel}:{key}"
            await outbox.submit(poster, self.store, "notice", dest.channel, work, job)


NOTICE_CLOCK_SKEW = 300  # seconds: a notice is looked for from a little before it was first recorded


NOTICE_ERROR_MAX = 500  # characters of the error shown in a channel; the log has all of it


def failure_notice(sub: Subscription, day: date, outcome: RunOutcome) -> str:
    error = clip(" ".join((outcome.error or "unknown error").split()), NOTICE_ERROR_MAX)
    if sub.lang == "zh":
        return (
            f"⚠️ {sub.repo} {day.isoformat()} 的摘要生成失败：{error}\n"
            "服务会在下一轮自动重试；持续失败请查看 `digestbot status`。"
        )
    return (
        f"⚠️ The digest of {sub.repo} for {day.isoformat()} failed: {error}\n"
        "The service retries it on its next sweep; if it keeps failing, see `digestbot status`."
    )


STARTUP_RETRY_FIRST = 5.0  # seconds before the first new attempt to start an unavailable platform
STARTUP_RETRY_MAX = 300.0  # the longest wait between attempts
# The longest a post waits for its platform's first start: Slack's Socket Mode gives up after 30 s
# (adapters/slack/runtime.SOCKET_CONNECT_TIMEOUT), its token check and Discord's login have their own bounds.
STARTUP_WAIT = 120.0


def runtime_name(runtime: Any) -> str:
    """SlackRuntime → "Slack": the platform a runtime serves, for log lines."""
    return type(runtime).__name__.removesuffix("Runtime")


def platform_of(runtime: Any) -> str:
    """The platform a runtime posts to ("slack"), known before it is up (its poster may not be yet)."""
    poster = getattr(runtime, "poster", None)
    return (
        getattr(runtime, "platform", None)
        or getattr(poster, "platform", None)
        or runtime_name(runtime).lower()
    )


async def start_runtime(runtime: Any, posters: dict[str, Poster], started: list[Any]) -> None:
    await runtime.start()
    started.append(runtime)
    posters[runtime.poster.platform] = runtime.poster


class Startup:
    """The chat platforms `run` is connecting, each on its own: none waits for another's connection, and
    the scheduler starts at once. A post for a platform still connecting waits for its first attempt to
    end (`settled`) instead of failing for being seconds late; a configuration error any of them meets
    (`failed`) ends the service, as it did when the platforms were started one after the other."""

    def __init__(self) -> None:
        self._connecting: dict[str, asyncio.Event] = {}
        self.failed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.tasks: list[asyncio.Task[None]] = []
        self.retrying: list[asyncio.Task[None]] = []

    async def start(self, runtimes: Iterable[Any], posters: dict[str, Poster], started: list[Any]) -> None:
        """Start every runtime in the background; one that is down is retried with backoff (keep_starting).
        Each start runs up to its first wait before this returns, so a setting missing or wrong on its
        face (found before any network) ends the start-up here, before the schedule starts."""
        for runtime in runtimes:
            self._connecting[platform_of(runtime)] = asyncio.Event()
            self.tasks.append(
                asyncio.create_task(
                    self._first(runtime, posters, started), name=f"start {runtime_name(runtime)}"
                )
            )
        await asyncio.sleep(0)
        if self.failed.done():
            self.failed.result()

    async def _first(self, runtime: Any, posters: dict[str, Poster], started: list[Any]) -> None:
        try:
            await start_runtime(runtime, posters, started)
        except ConfigError as exc:  # a bad token or setting: retrying cannot fix it
            if not self.failed.done():
                self.failed.set_exception(exc)
        except Exception as exc:  # an outage: the others serve, this one is retried with backoff
            self.retrying.append(asyncio.create_task(keep_starting(runtime, posters, started, exc)))
        finally:
            self._connecting[platform_of(runtime)].set()

    async def serve_until(self, stop: asyncio.Event) -> None:
        """Until `stop` is set; raises the configuration error a platform met at start meanwhile."""
        waiting = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({waiting, self.failed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
        if self.failed.done():
            self.failed.result()

    async def settled(self, platform: str, timeout: float | None = None) -> None:
        """Until `platform`'s first start attempt has ended (at most `timeout`, default STARTUP_WAIT)."""
        connecting = self._connecting.get(platform)
        if connecting is None:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(STARTUP_WAIT if timeout is None else timeout):
                await connecting.wait()

    async def close(self) -> None:
        """Cancel the starts still connecting and the retries (a start cancelled stops what it opened)."""
        tasks = [*self.tasks, *self.retrying]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.failed.done():
            self.failed.exception()  # seen: raised by serve, or moot once it is stopping


async def keep_starting(
    runtime: Any, posters: dict[str, Poster], started: list[Any], error: Exception
) -> None:
    """Start a chat platform that was down at start-up, waiting twice as long after each failure (up to
    STARTUP_RETRY_MAX); its subscriptions' posts meanwhile fail for it alone and are resumed by the
    sweeps once it is up. A configuration error ends the retries with one line."""
    name = runtime_name(runtime)
    delay = STARTUP_RETRY_FIRST
    while True:
        log.warning("%s is unavailable at start-up (%s); retrying in %.0fs", name, error, delay)
        await asyncio.sleep(delay)
        try:
            await start_runtime(runtime, posters, started)
        except ConfigError as exc:
            log.error("%s cannot start: %s", name, exc)
            return
        except Exception as exc:
            error, delay = exc, min(delay * 2, STARTUP_RETRY_MAX)
            continue
        log.info("%s started after retrying", name)
        return


def install_signal_handlers(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on the main thread
            loop.add_signal_handler(sig, stop.set)
