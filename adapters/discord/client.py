"""Talking to Discord: the bot token and DISCORD_API_URL (discord.py's Route.BASE), the REST login, the
bound on every request (TIMEOUT) and failures said in one line."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import aiohttp
import discord
from discord.http import Route

from analysis.errors import ConfigError, InputError, ServiceError
from analysis.render.discord_embeds import (
    Message,
)
from bot.ports.secrets import clip, without_scheme

log = logging.getLogger(__name__)


PLATFORM = "discord"

NO_MENTIONS = discord.AllowedMentions.none()

TIMEOUT = 30  # seconds per Discord request (aiohttp's default would wait 300)

# digestbot never joins voice: without this, every Client logs "PyNaCl / davey is not installed".
discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False


# The last 429 wait discord.py announced in this task (its requests run in the caller's task), so a
# request cut off by TIMEOUT during one says "rate-limited", not "no answer", which reads as an outage.
_WAIT: ContextVar[tuple[float, float, bool] | None] = ContextVar("discord_rate_limit_wait", default=None)


class _RateLimitWaits(logging.Filter):
    """discord.py waits out a 429 itself and says so only in its log: note each wait it announces."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.msg if isinstance(record.msg, str) else ""
        announced = ("We are being rate limited.", "Global rate limit has been hit.", "Webhook ID %s is rate")
        if text.startswith(announced) and record.args:
            try:
                seconds = float(record.args[-1])  # type: ignore[index]
            except (TypeError, ValueError, IndexError, KeyError):
                return True
            # discord.py announces every 429, then a global one again: the second says it is global
            _WAIT.set((time.monotonic(), seconds, text.startswith("Global")))
        return True


logging.getLogger("discord.http").addFilter(_RateLimitWaits())
logging.getLogger("discord.webhook.async_").addFilter(_RateLimitWaits())  # interaction follow-ups


def rate_limit_wait() -> str | None:
    """The rate-limit wait this task is in the middle of, in words, or None."""
    wait = _WAIT.get()
    if wait is None or time.monotonic() - wait[0] >= wait[1]:
        return None
    scope = " (global)" if wait[2] else ""
    return f"Discord rate-limited the bot{scope} for {wait[1]:.0f} s, longer than the {TIMEOUT} s we wait"


def deadline() -> asyncio.Timeout:
    """The bound on one Discord request (TIMEOUT, read when the request starts)."""
    return asyncio.timeout(TIMEOUT)


def bot_token(settings: Any) -> str:
    secret = getattr(settings, "discord_bot_token", None)
    token = secret.get_secret_value().strip() if secret is not None else ""
    if not token:
        raise ConfigError("DISCORD_BOT_TOKEN is not set: create a bot in the Discord Developer Portal")
    return token


def api_base(url: str | None) -> str | None:
    """DISCORD_API_URL as discord.py's Route.BASE (scheme, host and /api/vN), or None for Discord's."""
    if not url:
        return None
    base = url.strip().rstrip("/")
    if not re.match(r"^https?://[^/\s]+", base):
        raise ConfigError(
            f"DISCORD_API_URL must be an http(s) URL such as https://discord.com/api/v10, not {url!r}"
        )
    return base


@contextmanager
def routed_to(url: str | None) -> Iterator[None]:
    """Route.BASE is a class attribute shared by every client: set it for the block, then restore it."""
    base = api_base(url)
    previous = Route.BASE
    if base:
        Route.BASE = base
    try:
        yield
    finally:
        Route.BASE = previous


async def login(client: discord.Client, token: str) -> None:
    """Log the client in over REST; failures become one clear line (never the token)."""
    bare = without_scheme(token, "bot")  # pasted from an Authorization header: discord.py adds the scheme
    if bare != token.strip():
        log.warning(
            "DISCORD_BOT_TOKEN starts with 'Bot ': that is the header's scheme, not the token; ignored"
        )
    token = bare
    try:
        async with deadline():
            await client.login(token)
    except discord.LoginFailure:
        raise ConfigError(
            "Discord rejected DISCORD_BOT_TOKEN (401): copy the bot token again from the Developer Portal"
        ) from None
    except discord.HTTPException as exc:
        raise ServiceError(f"Discord login failed: {reason_of(exc)}") from None
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise ServiceError(f"cannot reach Discord at {Route.BASE}: {describe_error(exc)}") from None


def reason_of(exc: discord.HTTPException) -> str:
    text = clip(" ".join(str(exc.text or "").split()), 200)  # masked before it is cut
    return f"HTTP {exc.status}" + (f" (code {exc.code}: {text})" if text else "")


def describe_error(exc: BaseException) -> str:
    """A network failure in words (TimeoutError has no message of its own)."""
    if isinstance(exc, discord.HTTPException):
        return reason_of(exc)
    if isinstance(exc, TimeoutError) and not isinstance(exc, aiohttp.ClientError):
        return rate_limit_wait() or f"no answer within {TIMEOUT} s"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the connection was closed before Discord answered"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def snowflake(value: str) -> int:
    if not str(value).strip().isdigit():
        raise InputError(
            f"{value!r} is not a Discord channel id: enable Developer Mode, right-click the channel, Copy ID"
        )
    return int(value)


def send_kwargs(message: Message) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"allowed_mentions": NO_MENTIONS}
    if message.get("content"):
        kwargs["content"] = message["content"]
    if message.get("embeds"):
        kwargs["embeds"] = [discord.Embed.from_dict(e) for e in message["embeds"]]
    return kwargs


# What a request to Discord can fail with once our code is right: said in one line, never a traceback.
DELIVERY_ERRORS = (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError)


class Lost(Exception):
    """A reply Discord did not take (token expired, thread gone, no permission, rate limit past
    TIMEOUT): the user cannot be told, so it is logged in one line."""

    def __init__(self, exc: BaseException):
        super().__init__(describe_error(exc))
        self.code = getattr(exc, "code", None)
        self.status = getattr(exc, "status", None)


async def deliver(call: Awaitable[Any]) -> Any:
    """One request to Discord within TIMEOUT (discord.py's interaction webhook would otherwise sleep out
    any 429, an hour if told so); its failures become Lost."""
    try:
        async with deadline():
            return await call
    except DELIVERY_ERRORS as exc:
        raise Lost(exc) from None
