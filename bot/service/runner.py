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
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from analysis.errors import ConfigError, DigestError, Undeliverable
from bot.chat.service import ChatService
from bot.config.settings import Settings, zone
from bot.config.subscriptions import Registry, Subscription
from bot.delivery import outbox
from bot.delivery.posting import Poster, post_digest
from bot.delivery.weekly_post import weekly_key
from bot.digest.analyzers import Analyzer, make_analyzer
from bot.digest.pipeline import RunStats, build_digest
from bot.digest.sources import CommitSource, open_source, pick_branch
from bot.digest.usage import tracking
from bot.monitoring import metrics
from bot.monitoring.logs import clip
from bot.service.retention import purge_daily
from bot.service.scheduler import DigestScheduler, RunOutcome
from bot.store.db import Store

log = logging.getLogger(__name__)


class DigestRunner:
    """Builds a subscription's digest for a day and posts it to every destination."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        posters: dict[str, Poster],
        *,
        analyzer: Analyzer | None = None,
        source_factory: Callable[[Subscription], CommitSource] | None = None,
    ):
        self.settings = settings
        self.store = store
        self.posters = posters
        self._analyzer = analyzer
        self._source_factory = source_factory

    @property
    def analyzer(self) -> Analyzer:
        if self._analyzer is None:
            self._analyzer = make_analyzer(self.settings, self.store, "auto")
        return self._analyzer

    def source(self, sub: Subscription) -> CommitSource:
        if self._source_factory is not None:
            return self._source_factory(sub)
        return open_source(self.settings, self.store, sub.repo, sub.git_dir)

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
                )
            except DigestError as exc:
                return RunOutcome("failed", error=str(exc), llm_calls=usage.calls, tokens=usage.tokens)
            finally:
                await source.aclose()
            label = metrics.subscription_label(sub.name)
            metrics.DIGESTS_BUILT.labels(label).inc()
            metrics.FALLBACKS.labels(label).inc(stats.fallbacks)
            if not digest.commits and not sub.post_empty:
                log.info("digest %s %s: no commits, nothing posted (post_empty = false)", sub.name, day)
                return RunOutcome("done", llm_calls=usage.calls, tokens=usage.tokens)
            errors: list[str] = []
            for dest in sub.destinations:
                poster = self.posters.get(dest.platform)
                if poster is None:
                    errors.append(
                        f"{dest.platform}:{dest.channel}: no {dest.platform} adapter running"
                        " (token not set, or the platform is down and being retried)"
                    )
                    continue
                try:
                    await post_digest(poster, self.store, dest.channel, digest)
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
            for dest in sub.destinations:
                poster = self.posters.get(dest.platform)
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

    async def build_week(self, sub: Subscription, year: int, week: int) -> Any:
        from bot.digest.weekly import build_week

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
        from bot.delivery.weekly_post import post_weekly

        async def post(poster: Any, store: Store, row: dict[str, Any], job: dict[str, Any]) -> None:
            rollup = built
            if rollup is None:
                sub = next((s for s in subscriptions() if s.name == job["subscription"]), None)
                if sub is None:
                    raise Undeliverable(f"subscription {job['subscription']} no longer exists")
                rollup = await self.build_week(sub, int(job["year"]), int(job["week"]))
            await post_weekly(poster, store, str(row["channel"]), rollup)

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


def load_subscriptions(settings: Settings, config: Path | None) -> list[Subscription]:
    from bot.config.file import load_config

    path = config or settings.digest_config
    if path is None:
        return []
    return load_config(Path(path), default_tz=settings.digest_tz, default_lang=settings.digest_lang)


def chat_runtimes(settings: Settings, service: ChatService) -> list[Any]:
    """The chat adapters whose tokens are set."""
    runtimes: list[Any] = []
    if settings.slack_bot_token:
        from adapters.slack_app import SlackRuntime

        runtimes.append(SlackRuntime(settings, service))
    if settings.discord_bot_token:
        from adapters.discord_bot import DiscordRuntime

        runtimes.append(DiscordRuntime(settings, service))
    return runtimes


async def serve(
    settings: Settings,
    store: Store,
    subscriptions: list[Subscription],
    *,
    stop: asyncio.Event | None = None,
    make_runtimes: Callable[[Settings, ChatService], list[Any]] | None = None,
    runner: DigestRunner | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> None:
    """Run until `stop` is set (SIGINT / SIGTERM set it when running from the CLI)."""
    registry = Registry(store, subscriptions)
    service = ChatService(settings, store, git_dirs=registry.git_dirs())
    service.subscriptions = registry
    runtimes = (make_runtimes or chat_runtimes)(settings, service)
    platforms = {d.platform for s in registry.all() for d in s.destinations}
    if not runtimes:
        raise ConfigError(
            "no chat adapter to run: set SLACK_BOT_TOKEN (+ SLACK_APP_TOKEN or SLACK_SIGNING_SECRET)"
            " and/or DISCORD_BOT_TOKEN"
        )
    started: list[Any] = []
    scheduler: DigestScheduler | None = None
    health: Any = None
    housekeeping: asyncio.Task[None] | None = None
    worker: asyncio.Task[None] | None = None
    posters: dict[str, Poster] = {}  # the runner's own dict: a platform that starts late joins it
    retrying: list[asyncio.Task[None]] = []
    metrics.label_names(settings.metrics_label_names)  # before any series is labelled
    try:
        if settings.metrics_port is not None:
            health, _ = await metrics.start_metrics_server(settings.metrics_host, settings.metrics_port)
        for runtime in runtimes:
            try:
                await start_runtime(runtime, posters, started)
            except ConfigError:
                raise  # a bad token or setting: retrying cannot fix it
            except Exception as exc:  # an outage: serve the others, retry this one with backoff
                retrying.append(asyncio.create_task(keep_starting(runtime, posters, started, exc)))
                platforms.discard(runtime_name(runtime).lower())  # not missing: on its way
        for missing in sorted(platforms - set(posters)):
            log.warning(
                "subscriptions post to %s but no %s adapter is running (token not set)", missing, missing
            )
        runner = runner or DigestRunner(settings, store, posters)
        scheduler = DigestScheduler(
            registry,
            store,
            runner,
            catchup_days=settings.digest_catchup_days,
            clock=clock,
            on_failure=getattr(runner, "report_failure", None),
            weekly_runner=getattr(runner, "weekly", None),
        )
        await scheduler.start()
        # Banners, replies, notices and roll-ups left pending by this or an earlier run, retried.
        extra = {"weekly": runner.weekly_handler(registry.all)} if hasattr(runner, "weekly_handler") else {}
        worker = asyncio.create_task(outbox.Worker(store, posters, extra=extra).run(), name="pending work")
        housekeeping = asyncio.create_task(purge_daily(store, settings), name="purge-prompts")
        log.info(
            "digestbot running: %d subscription(s), adapters: %s",
            len(registry.all()),
            ", ".join(sorted(posters)) or "none",
        )
        await (stop or asyncio.Event()).wait()
    finally:
        if scheduler is not None:  # started: there may be posts in flight
            log.info("shutting down: finishing in-flight posts")
        for task in [*retrying, housekeeping]:
            if task is not None:
                task.cancel()
        if scheduler is not None:
            await scheduler.stop()
        if worker is not None:
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await worker
        for runtime in reversed(started):
            try:
                await runtime.stop()
            except Exception as exc:
                log.warning("stopping %s failed: %s", type(runtime).__name__, exc)
        if health is not None:
            await health.cleanup()


STARTUP_RETRY_FIRST = 5.0  # seconds before the first new attempt to start an unavailable platform
STARTUP_RETRY_MAX = 300.0  # the longest wait between attempts


def runtime_name(runtime: Any) -> str:
    """SlackRuntime → "Slack": the platform a runtime serves, for log lines."""
    return type(runtime).__name__.removesuffix("Runtime")


async def start_runtime(runtime: Any, posters: dict[str, Poster], started: list[Any]) -> None:
    await runtime.start()
    started.append(runtime)
    posters[runtime.poster.platform] = runtime.poster


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
