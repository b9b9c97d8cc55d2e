"""The Slack Web API client (slack_sdk's AsyncWebClient at SLACK_API_URL) with the retries slack_sdk
leaves off by default — 429 with Retry-After, connection errors and 5xx, none of them for a write that
may have landed — and Slack's error codes mapped to our errors: a refusal no retry can change is
Undeliverable, an auth error names the token to fix."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

import aiohttp
from pydantic import SecretStr
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

from adapters.http_headers import header_value, retry_after
from analysis.errors import ConfigError, DigestError, ServiceError, Undeliverable
from bot.ports.protocols import (
    SlackSettings,
)
from bot.ports.secrets import without_scheme

log = logging.getLogger(__name__)


PLATFORM = "slack"

TIMEOUT = 30  # seconds per Web API call
# The longest a call waits out Slack's 429s in all (each wait is Retry-After). Beyond it the call fails
# with one line and is retried later by what made it (the schedule's sweep, the pending work), as GitHub
# (GITHUB_MAX_WAIT), the LLM (120 s) and Discord (30 s) give up on a longer wait.
MAX_RATE_LIMIT_WAIT = 120.0
LOUD_WAIT = 5.0  # a wait longer than this is logged: a post that seems stuck says why

AUTH_ERRORS = {"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"}

# Errors that mean "the bot cannot post here" rather than a fault: told to the user as such.
CHANNEL_ERRORS = {"not_in_channel", "channel_not_found", "is_archived", "restricted_action"}

# Methods that create something: a blind retry after Slack accepted one would post it twice.
WRITES = frozenset({"chat.postMessage", "files.completeUploadExternal"})


def _secret(value: SecretStr | None) -> str | None:
    """A token as configured, without an Authorization scheme pasted with it ("Bearer xoxb-…", which
    slack_sdk would send as "Bearer Bearer xoxb-…" and Slack refuse as invalid_auth) or spaces."""
    return without_scheme(value.get_secret_value(), "bearer") if value is not None else None


def _method_of(request: HttpRequest) -> str:
    return request.url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]


class _RateLimitRetry(AsyncRateLimitErrorRetryHandler):
    """429s waited out after Retry-After (slack_sdk's handler), but never more than
    MAX_RATE_LIMIT_WAIT per call in all: a longer pause fails the call at once (a 429 was not carried
    out, so nothing is lost or doubled), and a wait worth noticing is logged before it starts."""

    def __init__(self, max_retry_count: int = 5, max_wait: float | None = None):
        super().__init__(max_retry_count=max_retry_count)
        self.max_wait = MAX_RATE_LIMIT_WAIT if max_wait is None else max_wait

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if not await super()._can_retry_async(state=state, request=request, response=response, error=error):
            return False
        assert response is not None
        asked = retry_after(header_value(response.headers, "retry-after"))
        wait = max(1.0, asked or 0.0)  # slack_sdk sleeps Retry-After plus up to a second
        waited = float((state.custom_values or {}).get("rate_limit_waited", 0.0))
        if waited + wait > self.max_wait:
            return False  # the 429 goes to _call, which says how long Slack asked for
        state.custom_values = {**(state.custom_values or {}), "rate_limit_waited": waited + wait}
        if (asked or 0.0) > LOUD_WAIT:
            log.warning(
                "Slack rate-limited %s: waiting %.0f s as it asks (at most %.0f s per call)",
                _method_of(request),
                asked,
                self.max_wait,
            )
        return True


class _ConnectionErrorRetry(AsyncConnectionErrorRetryHandler):
    """Connection errors retried, except a write whose request may have reached Slack: only a
    refused connection proves it did not."""

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if _method_of(request) in WRITES and not isinstance(error, aiohttp.ClientConnectorError):
            return False
        return await super()._can_retry_async(state=state, request=request, response=response, error=error)


class _ServerErrorRetry(AsyncServerErrorRetryHandler):
    """500/503 retried, except for writes: Slack may have posted before failing (SlackPoster then
    looks for the message before posting it again)."""

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if _method_of(request) in WRITES:
            return False
        return await super()._can_retry_async(state=state, request=request, response=response, error=error)


def new_session() -> aiohttp.ClientSession:
    """The HTTP session of a poster or a runtime: every Web API call bounded by TIMEOUT."""
    return aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT))


def make_client(settings: SlackSettings, session: aiohttp.ClientSession | None = None) -> AsyncWebClient:
    """A Web API client on SLACK_API_URL that retries what is safe to retry: 429 after Retry-After
    (slack_sdk leaves this off by default), dropped connections and 500/503 — but never a post whose
    request may have reached Slack (WRITES): that one is reconciled, not retried blindly."""
    base_url = (
        settings.slack_api_url if settings.slack_api_url.endswith("/") else settings.slack_api_url + "/"
    )
    return AsyncWebClient(
        token=_secret(settings.slack_bot_token),
        base_url=base_url,
        session=session,
        timeout=TIMEOUT,
        retry_handlers=[
            _RateLimitRetry(max_retry_count=5),
            _ConnectionErrorRetry(max_retry_count=2),
            _ServerErrorRetry(max_retry_count=2),
        ],
    )


def require_bot_token(settings: SlackSettings) -> str:
    token = _secret(settings.slack_bot_token)
    if not token:
        raise ConfigError(
            "SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-…) from your Slack app's"
            " OAuth & Permissions page into .env (see docs/slack.md)"
        )
    if token.startswith("xapp-"):
        raise ConfigError(
            "SLACK_BOT_TOKEN holds an app-level token (xapp-…): that one goes in SLACK_APP_TOKEN;"
            " SLACK_BOT_TOKEN is the Bot User OAuth Token (xoxb-…)"
        )
    if token.startswith("xoxp-"):
        # Slack accepts it, and every digest would be posted as the person who installed the app.
        raise ConfigError(
            "SLACK_BOT_TOKEN holds a user token (xoxp-…): digests would be posted in that person's name;"
            " SLACK_BOT_TOKEN is the Bot User OAuth Token (xoxb-…)"
        )
    return token


class SlackError(ServiceError):
    """A Web API call failed after retries; `code` is Slack's error string."""

    def __init__(self, method: str, code: str, message: str, *, ambiguous: bool = False):
        super().__init__(message)
        self.method = method
        self.code = code
        self.ambiguous = ambiguous  # the request may have been carried out: look before doing it again


class SlackRefused(SlackError, Undeliverable):
    """Slack says this can never succeed here (message or channel gone, not editable, no access)."""


# Answers that no retry can change: work meeting one is given up (bot/delivery/outbox.py).
PERMANENT = CHANNEL_ERRORS | {
    "message_not_found",
    "cant_update_message",
    "edit_window_closed",
    "thread_not_found",
    "missing_scope",
}


def _slack_error(method: str, code: str, channel: str | None = None) -> DigestError:
    where = f" {channel}" if channel else ""
    if code in AUTH_ERRORS:
        return ConfigError(f"Slack rejected SLACK_BOT_TOKEN ({code}): check the xoxb-… token in .env")
    hints = {
        "not_in_channel": f"the bot is not in channel{where}: invite it there (/invite @digestbot)",
        "channel_not_found": f"channel{where} not found: use the channel ID (C…), and invite the bot to"
        " private channels",
        "missing_scope": "the Slack app lacks a scope: update it from manifest.yml and reinstall it",
        "ratelimited": "Slack kept rate-limiting us after several retries: try again later",
    }
    kind = SlackRefused if code in PERMANENT else SlackError
    return kind(method, code, f"Slack {method} failed: {hints.get(code, code)}")


async def _call(method: str, call: Awaitable[Any], channel: str | None = None) -> Any:
    """Await a Web API call, turning its failures into one clear DigestError."""
    try:
        return await call
    except SlackApiError as exc:
        status = exc.response.status_code
        code = str(exc.response.get("error") or status)
        if status == 429:  # not carried out: a later try posts it once
            wait = retry_after(header_value(exc.response.headers, "retry-after"))
            why = (
                f"Slack rate-limited {method} for {wait:.0f} s, longer than the"
                f" {MAX_RATE_LIMIT_WAIT:.0f} s a call waits"
                if wait is not None and wait > MAX_RATE_LIMIT_WAIT
                else f"Slack kept rate-limiting {method} after several waits"
            )
            raise SlackError(method, "ratelimited", f"{why}: try again later") from None
        if status >= 500:
            raise SlackError(
                method, code, f"Slack {method} failed: HTTP {status} ({code})", ambiguous=True
            ) from None
        raise _slack_error(method, code, channel) from None
    except aiohttp.ClientConnectorError as exc:  # never connected: nothing was carried out
        raise SlackError(method, "unreachable", f"cannot reach Slack for {method}: {_words(exc)}") from None
    except TimeoutError:
        raise SlackError(
            method, "timeout", f"Slack did not answer {method} within {TIMEOUT} s", ambiguous=True
        ) from None
    except aiohttp.ServerDisconnectedError:
        raise SlackError(
            method,
            "disconnected",
            f"Slack closed the connection during {method} without answering",
            ambiguous=True,
        ) from None
    except (aiohttp.ClientError, OSError, SlackClientError) as exc:
        raise SlackError(
            method, "unreachable", f"cannot reach Slack for {method}: {_words(exc)}", ambiguous=True
        ) from None


def _words(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def verify_token(client: AsyncWebClient) -> dict[str, Any]:
    """auth.test: who we are (user_id, bot_id), or one clear line on a bad token."""
    response = await _call("auth.test", client.auth_test())
    return dict(response.data)
