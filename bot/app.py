"""The composition root: the one module that builds concrete adapters and wires them into the
application (the `digestbot` CLI and `digestbot run` get everything from here).

Everything else in bot/ states what it needs as a Protocol (bot/ports/protocols.py) or takes a factory,
and never names an adapter: a new source, LLM client or chat platform is added here and nowhere else in
bot/. Adapters are imported inside the functions that build them, so a command that needs no chat
platform (or no network) never imports its SDK; so are the service's own parts (chat, scheduler, metrics),
so `digestbot digest` loads neither aiohttp, prometheus_client nor APScheduler.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib
import logging
import sys
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analysis.errors import ConfigError, InputError
from bot.digest import usage
from bot.digest.analyzers import Analyzer, HeuristicAnalyzer
from bot.digest.choices import ANALYZER_CHOICES
from bot.digest.collector import collector_paused

if (
    TYPE_CHECKING
):  # the service's parts (chat, scheduler, metrics) are imported by the functions that wire them
    from analysis.weekly import Week
    from bot.chat.llm_answers import LLMAnswerer
    from bot.chat.service import ChatService
    from bot.config.settings import Settings
    from bot.config.subscriptions import Subscription
    from bot.digest.llm_analyzer import LLMAnalyzer
    from bot.ports.protocols import LLM, BatchRequest, ChatReply, Clock, CommitSource, Message, Poster
    from bot.service.runner import DigestRunner, Startup
    from bot.store.db import Store

log = logging.getLogger(__name__)

# -- sources ------------------------------------------------------------------------------------------


def open_source(settings: Settings, store: Store, repo: str | None, git_dir: Path | None) -> CommitSource:
    """A local clone when git_dir is given (no network, no token), GitHub otherwise."""
    if git_dir is not None:
        return local_clone(git_dir, repo)
    if not repo:
        raise InputError("no repository: pass --repo OWNER/NAME or --git-dir PATH (or set DIGEST_REPO)")
    from adapters.github import GitHubSource

    return GitHubSource(
        repo,
        store=store,
        base_url=settings.github_api_url,
        token=settings.github_token.get_secret_value() if settings.github_token else None,
        concurrency=settings.github_concurrency,
        max_wait=settings.github_max_wait,
        timeout=settings.github_timeout,
    )


def local_clone(git_dir: Path, repo: str | None = None) -> CommitSource:
    """A local clone as a source; raises InputError when the folder is not a git repository."""
    from adapters.local_git import LocalGitSource

    return LocalGitSource(git_dir, repo=repo)


# -- the LLM and the analysers ---------------------------------------------------------------------


def llm_client(settings: Settings, store: Store) -> LLM:
    """The OpenAI-compatible client of DIGEST_MODEL, every call logged in the store and counted in the
    current run's usage (the store's writer commits each row). Its SDK is imported in a worker thread
    from now on and the client built there after it (adapters/llm/ imports openai, a large package):
    a run reads its commits and works out their history facts meanwhile, instead of after the import."""
    if not settings.digest_model:
        raise ConfigError("DIGEST_MODEL is not set")
    return DeferredLLM(settings.digest_model, lambda: _llm_client(settings, store), preload="adapters.llm")


def _llm_client(settings: Settings, store: Store) -> LLM:
    from adapters.llm import LLMClient

    return LLMClient(
        model=settings.digest_model,
        base_url=settings.openai_base_url,
        api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
        timeout=settings.llm_timeout,
        max_retries=settings.llm_max_retries,
        concurrency=settings.llm_concurrency,
        rpm=settings.llm_rpm,
        tpm=settings.llm_tpm,
        breaker_after=settings.llm_breaker_after,
        price_in=settings.llm_price_in,
        price_out=settings.llm_price_out,
        on_call=lambda fields: (_log_call(store, fields), usage.record(fields)),
    )


def _log_call(store: Store, fields: dict[str, Any]) -> None:
    """The call's row, written by the store's writer thread (not on the event loop, where a day's 44
    answers arrive at once) and committed with the rows and analyses waiting beside it."""
    store.log_llm_call_soon(**fields).add_done_callback(_call_logged)


def _call_logged(done: concurrent.futures.Future[None]) -> None:
    if done.exception() is not None:  # bookkeeping must never fail an analysis
        log.warning("could not record an LLM call", exc_info=done.exception())


class DeferredLLM:
    """The LLM protocol on a client built in a daemon thread from the start: `preload` (the module that
    builds it) imported, then the client built there too, so neither is on the event loop's path to the
    first call (building it imports and sets up the SDK's HTTP transport: 0.04-0.13 s of a day's start,
    issue 21). A build that fails in the thread is done again at the first call, which raises."""

    def __init__(self, model: str, build: Callable[[], LLM], *, preload: str):
        self.model = model
        self._build = build
        self._client: LLM | None = None
        self._closed = False
        self._loaded: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._imported = threading.Thread(
            target=self._preload, args=(preload,), name="llm-import", daemon=True
        )
        self._imported.start()

    def _preload(self, module: str) -> None:
        try:
            _import_quietly(module)
            if not self._closed:
                with contextlib.suppress(Exception):  # the first call builds it again and says why
                    self._client = self._build()
        finally:
            self._loaded.set_result(None)

    async def ready(self) -> None:
        """Until the SDK is imported and the client built: a call can then go out at once. Cancelling
        the wait leaves the thread's work as it is."""
        await asyncio.shield(asyncio.wrap_future(self._loaded))

    async def _ready(self) -> LLM:
        if self._client is None:
            # Awaited on the loop, not joined in a worker thread: a day's calls would hold all the default
            # executor's threads, which preparing its commits needs meanwhile (and chat, in `digestbot run`).
            await self.ready()
            if self._client is None:
                self._client = self._build()  # an import or build that failed in the thread raises here
        return self._client

    async def complete(self, messages: Sequence[Message], **options: Any) -> ChatReply:
        return await (await self._ready()).complete(messages, **options)

    async def batch(self, requests: Sequence[BatchRequest], **options: Any) -> dict[str, ChatReply]:
        return await (await self._ready()).batch(requests, **options)

    async def aclose(self) -> None:
        # A run that never called (every analysis cached) does not wait for the thread: a client it
        # builds after this is never connected, and the thread builds none once it sees this flag.
        self._closed = True
        if self._client is not None:
            await self._client.aclose()


def _import_quietly(module: str) -> None:
    if module in sys.modules:  # a later run of the service: nothing to import, nothing to pause
        return
    # its modules live as long as the process: collected as usual they cost an LLM day 0.17-0.21 s of CPU
    # (two full collections before its calls); paused and frozen 0.03 s and none (issue 21)
    with contextlib.suppress(Exception), collector_paused(freeze=True):  # the build imports it again
        importlib.import_module(module)


def llm_analyzer(settings: Settings, store: Store, *, strict: bool = False) -> LLMAnalyzer:
    client = llm_client(settings, store)  # its SDK's import starts now, beside the analyser's own
    from bot.digest.llm_analyzer import LLMAnalyzer

    return LLMAnalyzer.from_settings(settings, client, strict=strict)


def make_analyzer(settings: Settings, store: Store, choice: str = "auto") -> Analyzer:
    """`--analyzer heuristic|llm|auto`: auto is the LLM when one is configured, else the heuristic."""
    if choice not in ANALYZER_CHOICES:
        raise InputError(f"unknown analyzer {choice!r}: use one of {', '.join(ANALYZER_CHOICES)}")
    if choice == "heuristic" or (choice == "auto" and not settings.llm_configured):
        return HeuristicAnalyzer()
    if not settings.llm_configured:
        raise ConfigError(
            "--analyzer llm needs DIGEST_MODEL and OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)"
        )
    # --analyzer llm: a bad key or model stops the run; auto: one warning, then the heuristic.
    return llm_analyzer(settings, store, strict=choice == "llm")


def llm_answerer(settings: Settings, store: Store) -> LLMAnswerer | None:
    """The model that answers thread questions the data cannot, when one is configured."""
    if not settings.llm_configured:
        return None
    from bot.chat.llm_answers import LLMAnswerer

    return LLMAnswerer.from_settings(settings, llm_client(settings, store))


# -- the chart -------------------------------------------------------------------------------------------


def render_chart(week: Week) -> bytes:
    """The weekly roll-up's chart (matplotlib, imported only when a chart is drawn)."""
    from adapters.chart import render_week_chart

    return render_week_chart(week)


# -- the application's services, wired ---------------------------------------------------------------


def chat_service(
    settings: Settings,
    store: Store,
    *,
    git_dirs: dict[str, Path] | None = None,
    source_factory: Callable[[str], CommitSource] | None = None,
    analyzer: Analyzer | None = None,
    answerer: Any = None,
) -> ChatService:
    """The chat facade every platform's handlers call; what is not given is built from the settings."""
    from bot.chat.service import ChatService

    dirs = dict(git_dirs or {})
    return ChatService(
        settings,
        store,
        git_dirs=dirs,
        source_factory=source_factory or (lambda repo: open_source(settings, store, repo, dirs.get(repo))),
        analyzer=analyzer,
        make_analyzer=lambda: make_analyzer(settings, store, "auto"),
        answerer=answerer,
        make_answerer=lambda: llm_answerer(settings, store),
    )


def digest_runner(
    settings: Settings,
    store: Store,
    posters: dict[str, Poster],
    *,
    analyzer: Analyzer | None = None,
    source_factory: Callable[[Subscription], CommitSource] | None = None,
    startup: Startup | None = None,
) -> DigestRunner:
    """The scheduler's runner: each subscription's day built and posted, its week rolled up; `startup`:
    the platforms `run` is still connecting, whose posts wait for them."""
    from bot.service.runner import DigestRunner

    return DigestRunner(
        settings,
        store,
        posters,
        analyzer=analyzer,
        make_analyzer=lambda: make_analyzer(settings, store, "auto"),
        source_factory=source_factory or (lambda sub: open_source(settings, store, sub.repo, sub.git_dir)),
        chart=render_chart,
        startup=startup,
    )


# -- chat platforms --------------------------------------------------------------------------------------


def chat_runtimes(settings: Settings, service: ChatService) -> list[Any]:
    """The chat adapters whose tokens are set."""
    runtimes: list[Any] = []
    if settings.slack_bot_token:
        from adapters.slack.runtime import SlackRuntime

        runtimes.append(SlackRuntime(settings, service))
    if settings.discord_bot_token:
        from adapters.discord.runtime import DiscordRuntime

        runtimes.append(DiscordRuntime(settings, service))
    return runtimes


def console_runtimes(write: Callable[..., Any]) -> Callable[..., list[Any]]:
    """`run --console`: every digest printed instead of posted."""
    from adapters.console import ConsoleRuntime

    return lambda *_: [ConsoleRuntime(write)]


def open_poster(platform: str, settings: Any) -> contextlib.AbstractAsyncContextManager[Any]:
    """`digestbot post`: a poster logged in for one post (a bad token fails before any work)."""
    if platform == "slack":
        from adapters.slack.poster import open_slack_poster

        return open_slack_poster(settings)
    from adapters.discord.poster import open_discord_poster

    return open_discord_poster(settings)


# -- the service -----------------------------------------------------------------------------------------


async def serve(
    settings: Settings,
    store: Store,
    subscriptions: list[Subscription],
    *,
    stop: asyncio.Event | None = None,
    make_runtimes: Callable[[Settings, ChatService], list[Any]] | None = None,
    runner: DigestRunner | None = None,
    clock: Clock = lambda: datetime.now(UTC),
) -> None:
    """`digestbot run` until `stop` is set (SIGINT / SIGTERM set it when running from the CLI): the chat
    runtimes whose tokens are set (or `make_runtimes`), the scheduler with the digest runner, the pending
    work's worker, the daily purge and /metrics, each wired here and stopped in reverse order."""
    from bot.config.subscriptions import Registry
    from bot.delivery import outbox
    from bot.monitoring import metrics
    from bot.service.retention import purge_daily
    from bot.service.runner import Startup, platform_of
    from bot.service.scheduler import DigestScheduler

    registry = Registry(store, subscriptions)
    service = chat_service(settings, store, git_dirs=registry.git_dirs())
    service.subscriptions, service.clock = registry, clock  # one "now" for the schedule and /digest <day>
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
    startup = Startup()
    metrics.label_names(settings.metrics_label_names)  # before any series is labelled
    try:
        if settings.metrics_port is not None:
            health, _ = await metrics.start_metrics_server(settings.metrics_host, settings.metrics_port)
        # Each platform connects on its own (Slack's Socket Mode may take its 30 s): none waits for
        # another, nor does the schedule; a post for a platform still connecting waits for it alone.
        await startup.start(runtimes, posters, started)
        for missing in sorted(platforms - {platform_of(r) for r in runtimes}):
            log.warning(
                "subscriptions post to %s but no %s adapter is running (token not set)", missing, missing
            )
        runner = runner or digest_runner(settings, store, posters, startup=startup)
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
            ", ".join(sorted(platform_of(r) for r in runtimes)),
        )
        await startup.serve_until(stop or asyncio.Event())
    finally:
        if scheduler is not None:  # started: there may be posts in flight
            log.info("shutting down: finishing in-flight posts")
        if housekeeping is not None:
            housekeeping.cancel()
        await startup.close()  # a post waiting for a platform still connecting goes on without it
        if scheduler is not None:
            # after a configuration error, runs are cut short sooner: each resumes with what is missing
            await scheduler.stop(5.0 if startup.failed.done() else 60.0)
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
