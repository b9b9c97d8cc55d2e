"""The Discord side of `digestbot run`: starts and stops the bot's gateway connection and exposes its
poster to the scheduler."""

from __future__ import annotations

import asyncio
import logging
from contextlib import ExitStack, suppress
from typing import Any

import discord

from adapters.discord.client import (
    PLATFORM,
    bot_token,
    login,
    routed_to,
)
from adapters.discord.handlers import DigestBot
from adapters.discord.poster import DiscordPoster
from bot.ports.protocols import ChatFacade

log = logging.getLogger(__name__)

GATEWAY_RETRY_FIRST = 5.0  # seconds before the gateway reconnects after an unexpected end
GATEWAY_RETRY_MAX = 300.0


class DiscordRuntime:
    """The bot inside the service: `start()` logs in (syncing commands) and connects the gateway in the
    background; `poster` posts digests for the scheduler; `stop()` closes everything."""

    platform = PLATFORM  # what `run` knows it by before it is up (bot/service/runner.platform_of)

    def __init__(self, settings: Any, service: ChatFacade, *, message_content: bool | None = None):
        self.settings = settings
        self.service = service
        # DISCORD_MESSAGE_CONTENT is not in bot/config/settings.py yet: read it when it appears.
        self.message_content = (
            message_content
            if message_content is not None
            else bool(getattr(settings, "discord_message_content", False))
        )
        self.bot: DigestBot | None = None
        self.poster: DiscordPoster | None = None
        self._task: asyncio.Task[None] | None = None
        self._pending: asyncio.Task[None] | None = None
        self._routing = ExitStack()

    async def start(self, *, gateway: bool = True) -> None:
        """gateway=False: REST only (posting, command sync), for tests and one-shot use."""
        token = bot_token(self.settings)
        self._routing.enter_context(routed_to(self.settings.discord_api_url))
        self.bot = DigestBot(
            self.service, guild_id=self.settings.discord_guild_id, message_content=self.message_content
        )
        try:
            await login(self.bot, token)
        except BaseException:
            await self.stop()
            raise
        self.poster = self.bot.poster
        if gateway:
            self._task = asyncio.create_task(self._gateway(self.bot), name="discord-gateway")
            self._task.add_done_callback(_gateway_ended)
            # questions taken by a process that died before answering: the gateway does not replay them
            self._pending = asyncio.create_task(
                self.service.answer_pending(self.bot.answers), name="Discord pending questions"
            )

    async def _gateway(self, bot: DigestBot) -> None:
        """discord.py's `connect(reconnect=True)` retries the network's failures and closes the client on
        a setting's (a bad token, intents); anything else that escapes it (a payload its parser did not
        expect) ended the gateway while posting went on: the bot stayed up, deaf to /digest and questions.
        Such an end reconnects after a pause that doubles up to GATEWAY_RETRY_MAX."""
        delay = GATEWAY_RETRY_FIRST
        while not bot.is_closed():
            try:
                await bot.connect(reconnect=True)
                return
            except discord.PrivilegedIntentsRequired:
                raise  # a setting: said by _gateway_ended
            except Exception as exc:
                if bot.is_closed():
                    raise
                log.error(
                    "Discord gateway stopped: %s: %s; reconnecting in %.0fs", type(exc).__name__, exc, delay
                )
                if bot.ws is not None:  # the session it left open, if any
                    with suppress(Exception):
                        await bot.ws.close(code=4000)
                await asyncio.sleep(delay)
                delay = min(delay * 2, GATEWAY_RETRY_MAX)

    async def stop(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            await asyncio.gather(self._pending, return_exceptions=True)
            self._pending = None
        if self.bot is not None:
            await self.bot.close()
        if self._task is not None:
            with suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._task, timeout=10)
            self._task = None
        self._routing.close()  # Route.BASE back to what it was
        self.bot = self.poster = None


def _gateway_ended(task: asyncio.Task[None]) -> None:
    if task.cancelled():
        return
    exc = task.exception()
    if isinstance(exc, discord.PrivilegedIntentsRequired):
        log.error(
            "Discord: the Message Content intent is not enabled for this bot; enable it in the Developer "
            "Portal (Bot → Privileged Gateway Intents) or turn DISCORD_MESSAGE_CONTENT off"
        )
    elif exc is not None:
        log.error("Discord gateway stopped: %s: %s", type(exc).__name__, exc)
