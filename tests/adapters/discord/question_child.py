"""A service process answering one Discord thread question, to be killed while at it
(tests/adapters/discord/test_discord_pending.py): the bot logged in over REST to the fake Discord, the
guild as the gateway announced it, then the question's MESSAGE_CREATE handed to its listener. Run as
`python -m tests.adapters.discord.question_child SPEC.json`."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import discord

from adapters.discord.client import login, routed_to
from adapters.discord.handlers import DigestBot
from bot.app import chat_service
from bot.config.settings import Settings
from bot.store.db import Store


async def answer(spec: dict[str, Any]) -> None:
    settings = Settings(
        _env_file=None,
        discord_bot_token=spec["token"],
        discord_api_url=spec["api"],
        discord_guild_id=spec["guild_id"],
        digest_repo=spec["repo"],
        digest_lang="en",
        digest_db=spec["db"],
    )
    service = chat_service(settings, Store(settings.digest_db))
    with routed_to(settings.discord_api_url):
        bot = DigestBot(service, guild_id=settings.discord_guild_id)
        await login(bot, spec["token"])
        try:
            bot._connection.parse_guild_create(spec["guild"])
            data = spec["message"]
            channel, _ = bot._connection._get_guild_channel(data)
            await bot.on_message(discord.Message(state=bot._connection, channel=channel, data=data))
        finally:
            await bot.close()


if __name__ == "__main__":
    asyncio.run(answer(json.loads(Path(sys.argv[1]).read_text())))
