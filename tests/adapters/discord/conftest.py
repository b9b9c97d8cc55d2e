"""The Discord adapter's fixtures (FakeDiscord, settings, a real ChatService, a logged-in DigestBot, a
digest's thread), shared by its test modules."""

from tests.adapters.discord.test_discord_bot import bot, events, fake, service, settings  # noqa: F401
from tests.adapters.discord.test_discord_events import thread  # noqa: F401
