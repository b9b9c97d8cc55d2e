"""The Slack side of `digestbot run`: the Bolt app over Socket Mode (SLACK_APP_TOKEN) or HTTP
(SLACK_SIGNING_SECRET, on SLACK_PORT behind the front door, with a public /healthz), and the poster the
scheduler uses (same client, same reconciliation state)."""

from __future__ import annotations

import asyncio
import logging

import aiohttp
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.client import (
    PLATFORM,
    _secret,
    make_client,
    new_session,
    require_bot_token,
    verify_token,
)
from adapters.slack.front_door import front_door_app, http_runner
from adapters.slack.handlers import SlackBot
from adapters.slack.poster import SlackPoster
from analysis.errors import ConfigError, ServiceError
from bot.ports.listener import GuardedSite
from bot.ports.protocols import (
    ChatFacade,
    SlackSettings,
)

log = logging.getLogger(__name__)


EVENTS_PATH = "/slack/events"

# How long Socket Mode may take to connect at start. slack_sdk's connect() retries for as long as the
# client is open (each try up to aiohttp's 5 minutes), so a WebSocket endpoint that never answers or
# refuses (a proxy or firewall that blocks WebSockets) held `run` for ever: no schedule, no Discord.
SOCKET_CONNECT_TIMEOUT = 30.0


class DigestApp(AsyncApp):
    """The Bolt app, with its listeners' state at hand (`bot`) for the runtime and tests."""

    bot: SlackBot


class _OurClientWins(logging.Filter):
    """Bolt reads SLACK_BOT_TOKEN from the environment by itself and, given our client too (the one with
    SLACK_API_URL and the safe retry handlers), warns on every start that the token is unused. That is
    the intended outcome, not a problem: only this one message is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


_BOLT_LOG = logging.getLogger("slack_bolt.AsyncApp")  # the logger AsyncApp warns on (get_bolt_logger)
_BOLT_LOG.addFilter(_OurClientWins())


def build_app(
    settings: SlackSettings, service: ChatFacade, client: AsyncWebClient | None = None
) -> DigestApp:
    """The Bolt app: `/digest`, thread replies and mentions. HTTP requests must carry a valid
    signature (SLACK_SIGNING_SECRET; Bolt answers 401 otherwise); Socket Mode needs none."""
    client = client or make_client(settings)
    app = DigestApp(
        name="digestbot",
        client=client,
        signing_secret=_secret(settings.slack_signing_secret) or "",
        ignoring_self_events_enabled=True,
        # Our listeners only parse, ack and spawn a task, so running them before the response costs
        # nothing; it keeps Bolt from running them in unreferenced futures of its own.
        process_before_response=True,
    )
    app.bot = SlackBot(settings, service, client)
    app.bot.register(app)
    return app


def web_app(app: AsyncApp, signing_secret: str, service: ChatFacade) -> web.Application:
    """The aiohttp application of HTTP mode: Slack's request URL is /slack/events, behind a front door
    that authenticates before parsing (adapters/slack/front_door.py); /healthz for probes (its status only,
    no subscription named). /metrics is not here: this port faces the internet, metrics are served on
    METRICS_HOST:METRICS_PORT only."""
    application = front_door_app(app, signing_secret, EVENTS_PATH)

    async def healthz(request: web.Request) -> web.Response:
        # The same status as the metrics port's, but neither which subscriptions are broken nor why.
        broken = service.broken_subscriptions()
        if broken:
            return web.Response(
                status=503, text=f"unhealthy: {broken} subscription(s); see digestbot status\n"
            )
        return web.Response(text="ok")

    application.router.add_get("/healthz", healthz)
    return application


def slack_mode(settings: SlackSettings) -> str:
    """ "socket" when SLACK_APP_TOKEN is set, else "http" when SLACK_SIGNING_SECRET is, else ConfigError."""
    app_token = _secret(settings.slack_app_token)
    if app_token and app_token.startswith(("xoxb-", "xoxp-")):
        raise ConfigError(
            "SLACK_APP_TOKEN holds a bot or user token (xox…): it is the app-level token (xapp-…, Basic"
            " Information → App-Level Tokens, scope connections:write); the xoxb-… token goes in SLACK_BOT_TOKEN"
        )
    if app_token:
        return "socket"
    if _secret(settings.slack_signing_secret):
        return "http"
    raise ConfigError(
        "Slack needs SLACK_APP_TOKEN (Socket Mode, xapp-…) or SLACK_SIGNING_SECRET (HTTP mode, on SLACK_PORT)"
    )


class SlackRuntime:
    """The Slack side of `digestbot run`: the Bolt app over Socket Mode or HTTP, and `poster` for the
    scheduler (same client, same reconciliation state)."""

    platform = PLATFORM  # what `run` knows it by before it is up (bot/service/runner.platform_of)

    def __init__(
        self,
        settings: SlackSettings,
        service: ChatFacade,
        *,
        host: str = "0.0.0.0",
        port: int | None = None,
        grace: float = 30.0,
        connect_timeout: float = SOCKET_CONNECT_TIMEOUT,
    ):
        self.settings = settings
        self.service = service
        self.host = host  # HTTP mode: Slack must reach it (behind a reverse proxy with TLS)
        self.port = settings.slack_port if port is None else port  # 0: any free port (tests)
        self.grace = grace  # seconds in-flight work may take to finish on stop()
        self.connect_timeout = connect_timeout  # seconds Socket Mode may take to connect at start
        self.mode: str | None = None
        self.app: DigestApp | None = None
        self.poster: SlackPoster | None = None
        self._session: aiohttp.ClientSession | None = None
        self._socket: AsyncSocketModeHandler | None = None
        self._runner: web.AppRunner | None = None
        self._pending: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.mode = slack_mode(self.settings)
        require_bot_token(self.settings)
        self._session = new_session()
        try:
            client = make_client(self.settings, self._session)
            identity = await verify_token(client)
            self.app = build_app(self.settings, self.service, client)
            self.poster = self.app.bot.poster
            self.poster.bot_id = identity.get("bot_id")
            self.app.bot.answers.me = identity.get("user_id")
            await (self._start_socket() if self.mode == "socket" else self._start_http())
            # questions acknowledged by a process that died before answering: Slack will not send them again
            self._pending = asyncio.create_task(
                self.service.answer_pending(self.app.bot.answers), name="Slack pending questions"
            )
        except BaseException:
            await self.stop()
            raise
        log.info("Slack adapter running as %s (%s mode)", identity.get("user"), self.mode)

    async def _start_socket(self) -> None:
        assert self.app is not None
        self._socket = AsyncSocketModeHandler(self.app, _secret(self.settings.slack_app_token))
        try:
            async with asyncio.timeout(self.connect_timeout):
                # slack_sdk's connect retries every failure for ever, a revoked or wrong app token
                # included: ask for the WebSocket URL ourselves first so a refusal is a setting, not
                # an outage. The client connects to the URL it was handed.
                self._socket.client.wss_uri = await self._socket.client.issue_new_wss_url()
                await self._socket.connect_async()
        except SlackApiError as exc:
            code = str(exc.response.get("error"))
            raise ConfigError(
                f"Slack refused Socket Mode ({code}): check SLACK_APP_TOKEN (xapp-…, connections:write)"
            ) from None
        except TimeoutError:
            # An outage, not a setting: `run` serves the rest and retries Slack's start with backoff.
            raise ServiceError(
                f"Slack's Socket Mode WebSocket did not connect within {self.connect_timeout:g} s"
                " (a proxy or firewall that blocks WebSockets?); retried in the background"
            ) from None

    async def _start_http(self) -> None:
        assert self.app is not None
        self._runner = http_runner(
            web_app(self.app, _secret(self.settings.slack_signing_secret) or "", self.service)
        )
        await self._runner.setup()
        try:
            await GuardedSite(self._runner, self.host, self.port).start()
        except OSError as exc:
            raise ConfigError(
                f"cannot listen on {self.host}:{self.port} (SLACK_PORT): {exc.strerror}"
            ) from None

    @property
    def http_port(self) -> int | None:
        """The port HTTP mode listens on (SLACK_PORT; the real one when it was 0)."""
        if self._runner is None or not self._runner.addresses:
            return None
        return int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        """Stop taking requests, let in-flight work finish (up to `grace`), then close the session."""
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.app is not None:
            await self.app.bot.tasks.close(self.grace, getattr(self.service, "stop_waiting", None))
        if self._pending is not None:  # after the answers in flight: it renews their claims meanwhile
            self._pending.cancel()
            await asyncio.gather(self._pending, return_exceptions=True)
            self._pending = None
        if self._session is not None:
            await self._session.close()
            self._session = None
