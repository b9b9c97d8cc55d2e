"""Discord delivery and chat (discord.py 2.x): the digest poster, `/digest`, and thread questions.

- `DiscordPoster` posts a digest over REST only (a logged-in Client; no gateway): the parent message
  with its embed, a public thread started from it, cards, the medium list and the report as a file.
- `open_discord_poster(settings)` logs in for a one-off post (`digestbot post --platform discord`).
- `DigestBot` is the Client of the running service: the `/digest` slash command and answers to
  questions asked in our threads.
- `DiscordRuntime` starts and stops the bot inside the service and exposes its poster.

Everything Discord-independent (parsing, analysis, idempotency records, answers) lives in bot/; this
module only translates. Every message goes out with AllowedMentions.none(): commit text never pings.
"""

from __future__ import annotations

import asyncio
import io
import logging
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager, suppress
from typing import Any

import aiohttp
import discord
from discord import app_commands
from discord.http import Route

from analysis.errors import ConfigError, DigestError, InputError, ServiceError
from analysis.labels import label
from analysis.models import Analysis, Commit, Digest
from analysis.render_discord import (
    Message,
    card_messages,
    content_chunks,
    help_text,
    medium_list_messages,
    parent_embed,
    report_content,
    split_utf8,
    thread_name,
)
from bot.chat import ChatService, CommandResult, is_question
from bot.posting import Posted, post_digest

log = logging.getLogger(__name__)

PLATFORM = "discord"
NO_MENTIONS = discord.AllowedMentions.none()
REPORT_MAX_BYTES = 8 * 1024 * 1024  # below Discord's smallest upload limit (10 MiB without boosts)
THREAD_ARCHIVE_MINUTES = 10080  # a week: questions about a day's digest keep its thread in the list
HISTORY_MESSAGES = 20  # thread messages given to the answerer as context
_COMMAND_WORDS = ("help", "list", "subscribe", "unsubscribe")

# digestbot never joins voice: without this, every Client logs "PyNaCl / davey is not installed".
discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False


# --- settings and login -----------------------------------------------------------------------------


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
    try:
        await client.login(token)
    except discord.LoginFailure:
        raise ConfigError(
            "Discord rejected DISCORD_BOT_TOKEN (401): copy the bot token again from the Developer Portal"
        ) from None
    except discord.HTTPException as exc:
        raise ServiceError(f"Discord login failed: {_reason(exc)}") from None
    except (aiohttp.ClientError, OSError) as exc:
        raise ServiceError(f"cannot reach Discord at {Route.BASE}: {type(exc).__name__}: {exc}") from None


def _reason(exc: discord.HTTPException) -> str:
    text = " ".join(str(exc.text or "").split())[:200]
    return f"HTTP {exc.status}" + (f" (code {exc.code}: {text})" if text else "")


# --- posting ----------------------------------------------------------------------------------------


class DiscordPoster:
    """The Poster of bot/posting.py over discord.py's REST client. Thread items are sent to the thread
    by id (a PartialMessageable), so a post resumed after a restart needs nothing but the stored id."""

    platform = PLATFORM

    def __init__(self, client: discord.Client):
        self.client = client

    async def post_parent(self, channel: str, digest: Digest) -> Posted:
        target = await self._text_channel(channel)
        embed = discord.Embed.from_dict(parent_embed(digest))
        message = await self._call(channel, target.send(embed=embed, allowed_mentions=NO_MENTIONS))
        try:
            thread = await message.create_thread(
                name=thread_name(digest), auto_archive_duration=THREAD_ARCHIVE_MINUTES
            )
        except discord.HTTPException as exc:
            # No orphan parent: without its record a retry posts the parent again, so remove this one.
            with suppress(discord.HTTPException):
                await message.delete()
            raise ServiceError(
                f"cannot start a thread in Discord channel {channel}: {_reason(exc)}"
                " (the bot needs Create Public Threads and Send Messages in Threads)"
            ) from None
        return Posted(str(message.id), str(thread.id))

    async def post_card(
        self, channel: str, thread: str, digest: Digest, commit: Commit, analysis: Analysis
    ) -> Posted:
        return await self._send_all(thread, card_messages(commit, analysis, digest.lang))

    async def post_medium_list(
        self, channel: str, thread: str, digest: Digest, commits: list[Commit]
    ) -> Posted:
        return await self._send_all(thread, medium_list_messages(digest, commits))

    async def post_report(
        self, channel: str, thread: str, digest: Digest, filename: str, markdown: str
    ) -> Posted:
        """The full report as UTF-8 Markdown attachment(s); split in parts only past the upload limit."""
        parts = split_utf8(markdown, REPORT_MAX_BYTES)
        target = self._thread(thread)
        first: str | None = None
        for number, part in enumerate(parts, start=1):
            name = (
                filename if len(parts) == 1 else re.sub(r"(\.md)?$", f".part{number}.md", filename, count=1)
            )
            file = discord.File(io.BytesIO(part.encode("utf-8")), filename=name)
            content = report_content(digest, name, number, len(parts))
            sent = await self._call(
                thread, target.send(content=content, file=file, allowed_mentions=NO_MENTIONS)
            )
            first = first or str(sent.id)
        assert first is not None
        return Posted(first, thread)

    async def post_notice(self, channel: str, text: str) -> Posted:
        """A notice from the service (a failed run) in the channel: plain content, no mentions."""
        target = await self._text_channel(channel)
        first: str | None = None
        for chunk in content_chunks(text):
            sent = await self._call(channel, target.send(content=chunk, allowed_mentions=NO_MENTIONS))
            first = first or str(sent.id)
        assert first is not None  # content_chunks never returns an empty list
        return Posted(first)

    async def _send_all(self, thread: str, messages: list[Message]) -> Posted:
        target = self._thread(thread)
        first: str | None = None
        for message in messages:
            sent = await self._call(thread, target.send(**_send_kwargs(message)))
            first = first or str(sent.id)
        if first is None:
            raise ValueError("nothing to send")
        return Posted(first, thread)

    def _thread(self, thread: str) -> discord.PartialMessageable:
        return self.client.get_partial_messageable(_snowflake(thread), type=discord.ChannelType.public_thread)

    async def _text_channel(self, channel: str) -> discord.TextChannel:
        channel_id = _snowflake(channel)
        found = self.client.get_channel(channel_id)  # the gateway's cache when the bot is connected
        if found is None:
            found = await self._call(channel, self.client.fetch_channel(channel_id))
        if not isinstance(found, discord.TextChannel):
            kind = getattr(found, "type", type(found).__name__)
            raise ServiceError(
                f"Discord channel {channel} is a {kind} channel: digests need a text or announcement channel"
            )
        return found

    async def _call(self, channel: str, call: Any) -> Any:
        """Await a discord.py call; its HTTP errors become one ServiceError line naming the channel.
        (discord.py itself waits out 429s, per bucket and globally.)"""
        try:
            return await call
        except discord.Forbidden as exc:
            raise ServiceError(
                f"Discord refused access to channel {channel}: {_reason(exc)}. Invite the bot with the "
                "permissions in docs/discord.md (View Channel, Send Messages, Embed Links, Attach Files, "
                "Create Public Threads, Send Messages in Threads)"
            ) from None
        except discord.NotFound as exc:
            raise ServiceError(f"Discord channel {channel} not found: {_reason(exc)}") from None
        except discord.HTTPException as exc:
            raise ServiceError(f"Discord rejected a message for channel {channel}: {_reason(exc)}") from None


def _snowflake(value: str) -> int:
    if not str(value).strip().isdigit():
        raise InputError(
            f"{value!r} is not a Discord channel id: enable Developer Mode, right-click the channel, Copy ID"
        )
    return int(value)


def _send_kwargs(message: Message) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"allowed_mentions": NO_MENTIONS}
    if message.get("content"):
        kwargs["content"] = message["content"]
    if message.get("embeds"):
        kwargs["embeds"] = [discord.Embed.from_dict(e) for e in message["embeds"]]
    return kwargs


@asynccontextmanager
async def open_discord_poster(settings: Any) -> AsyncIterator[DiscordPoster]:
    """A poster for a one-off post: logs in over REST (no gateway, no intents), closes on exit."""
    token = bot_token(settings)
    with routed_to(settings.discord_api_url):
        # No gateway, so intents do not matter; guilds only to keep discord.py from warning.
        client = discord.Client(intents=discord.Intents(guilds=True), allowed_mentions=NO_MENTIONS)
        try:
            await login(client, token)
            yield DiscordPoster(client)
        finally:
            await client.close()


# --- the bot: /digest and thread questions ----------------------------------------------------------


def command_text(ref: str | None, date: str | None, repo: str | None) -> str:
    """Discord's `/digest` options as the argument text every chat surface shares (bot/chat.py)."""
    ref, date, repo = (v.strip() if v else "" for v in (ref, date, repo))
    if ref and date:
        raise InputError("give either ref: or date:, not both")
    if date:
        return f"{date} {repo}".strip()
    if not ref:
        if repo:
            raise InputError("repo: goes with ref: (a commit) or date: (a day)")
        return "help"
    words = ref.split()
    if not repo:
        return ref
    if words[0].lower() in ("subscribe", "unsubscribe"):
        return " ".join([words[0], repo, *words[1:]])
    if len(words) > 1 or "://" in ref or "@" in ref or words[0].lower() in _COMMAND_WORDS:
        return ref  # a URL or owner/name@sha names its own repository
    return f"{repo}@{ref}"


def make_digest_command(bot: DigestBot) -> app_commands.Command[Any, ..., None]:
    @app_commands.command(name="digest", description="Analyse a commit, or post a day's digest here")
    @app_commands.describe(
        ref="sha, #PR, commit URL or owner/name@sha (also: help, list, subscribe owner/name, unsubscribe …)",
        date="YYYY-MM-DD: post that day's digest in this channel",
        repo="owner/name, when the channel has no subscription",
    )
    @app_commands.guild_only()
    async def digest(
        interaction: discord.Interaction,
        ref: str | None = None,
        date: str | None = None,
        repo: str | None = None,
    ) -> None:
        await bot.on_digest(interaction, ref=ref, date=date, repo=repo)

    return digest


class DigestBot(discord.Client):
    """The service's Discord client. Intents: guilds (channel and thread cache), guild messages (thread
    questions; mentions carry their text without the privileged intent), message content optional."""

    def __init__(self, service: ChatService, *, guild_id: int | None = None, message_content: bool = False):
        intents = discord.Intents.none()
        intents.guilds = True
        intents.guild_messages = True
        intents.message_content = message_content
        super().__init__(intents=intents, allowed_mentions=NO_MENTIONS)
        self.service = service
        self.guild_id = guild_id
        self.message_content = message_content
        self.tree = app_commands.CommandTree(self)
        self.tree.add_command(make_digest_command(self))
        self.poster = DiscordPoster(self)
        # One day's post at a time per channel: two `/digest date:` at once would both find nothing
        # recorded yet and both post (post_digest checks, then posts).
        self._posting: dict[str, asyncio.Lock] = {}

    async def setup_hook(self) -> None:
        # Runs once, right after login and before the gateway: the place to sync (on_ready repeats).
        await self.sync_commands()

    async def sync_commands(self) -> list[app_commands.AppCommand]:
        """To DISCORD_GUILD_ID when set (instant), else globally (Discord may take up to an hour)."""
        if self.guild_id:
            guild = discord.Object(id=self.guild_id)
            self.tree.copy_global_to(guild=guild)
            synced = await self.tree.sync(guild=guild)
        else:
            synced = await self.tree.sync()
        log.info(
            "Discord: %d slash command(s) synced %s",
            len(synced),
            f"to guild {self.guild_id}" if self.guild_id else "globally",
        )
        return synced

    async def on_ready(self) -> None:
        guilds = len(self.guilds)
        log.info("Discord: connected as %s in %d server(s)", self.user, guilds)
        if not guilds:
            log.warning("Discord: the bot is in no server yet; invite it with the URL in docs/discord.md")

    # -- /digest ----------------------------------------------------------------------------------
    async def on_digest(
        self, interaction: discord.Interaction, *, ref: str | None, date: str | None, repo: str | None
    ) -> None:
        """Validate fast and answer bad input ephemerally at once; otherwise defer (thinking…) before
        any slow work, then follow up. The defer decides visibility: help and list are private."""
        channel = _home_channel(interaction)
        lang = self.service.channel_lang(PLATFORM, channel)
        try:
            cmd = self.service.prepare(PLATFORM, channel, command_text(ref, date, repo))
            if cmd.action == "day" and not _can_post_digest(interaction):
                raise InputError(label(lang, "discord_not_here"))
        except DigestError as exc:
            await interaction.response.send_message(
                _one_message(str(exc)), ephemeral=True, allowed_mentions=NO_MENTIONS
            )
            return
        if cmd.action == "help":
            await interaction.response.send_message(
                help_text(lang), ephemeral=True, allowed_mentions=NO_MENTIONS
            )
            return
        private = cmd.action == "list"
        await interaction.response.defer(thinking=True, ephemeral=private)
        try:
            result = await self.service.execute(PLATFORM, channel, cmd, user=str(interaction.user.id))
            await self._follow_up(interaction, channel, result, private)
        except DigestError as exc:
            await self._fail(interaction, str(exc), private)
        except Exception as exc:
            log.exception("Discord /digest failed")
            await self._fail(interaction, label(lang, "discord_failed", error=type(exc).__name__), private)

    async def _follow_up(
        self, interaction: discord.Interaction, channel: str, result: CommandResult, private: bool
    ) -> None:
        if result.kind == "error":
            await self._fail(interaction, result.text, private)
        elif result.kind == "card":
            assert result.commit is not None and result.analysis is not None
            messages = card_messages(result.commit, result.analysis, result.lang)
            first = await self._send_followups(interaction, messages)
            self.service.record_card(PLATFORM, channel, result.commit, result.lang, Posted(str(first.id)))
        elif result.kind == "digest":
            assert result.digest is not None
            text = await self._post_day(channel, result.digest, result.lang)
            await interaction.followup.send(text, allowed_mentions=NO_MENTIONS)
        else:
            await self._send_followups(interaction, [{"content": c} for c in content_chunks(result.text)])

    async def _send_followups(self, interaction: discord.Interaction, messages: list[Message]) -> Any:
        """The first follow-up replaces the "thinking…" message; the rest follow it."""
        first = None
        for message in messages:
            sent = await interaction.followup.send(wait=True, **_send_kwargs(message))
            first = first or sent
        return first

    async def _post_day(self, channel: str, digest: Digest, lang: str) -> str:
        async with self._posting.setdefault(channel, asyncio.Lock()):
            result = await post_digest(self.poster, self.service.store, channel, digest)
        link = f"<#{result.thread_id}>" if result.thread_id else ""
        key = "discord_posted" if result.posted else "discord_already_posted"
        return label(lang, key, repo=digest.repo, day=digest.day.isoformat(), link=link)

    async def _fail(self, interaction: discord.Interaction, text: str, private: bool) -> None:
        """An error only the user sees. After a public defer the first follow-up would inherit the public
        "thinking…" message, so that message is deleted first and the error sent as a new ephemeral one."""
        try:
            if not private:
                with suppress(discord.HTTPException):
                    await interaction.delete_original_response()
            await interaction.followup.send(_one_message(text), ephemeral=True, allowed_mentions=NO_MENTIONS)
        except discord.HTTPException as exc:  # e.g. the 15-minute interaction token expired
            log.warning("Discord: could not report an error to the user: %s", _reason(exc))

    # -- thread questions -------------------------------------------------------------------------
    async def on_message(self, message: discord.Message) -> None:
        # Cheap checks first: with the guild-messages intent every message in the server arrives here.
        if not self._wants(message):
            return
        if not self._mentioned(message) and not (
            self.message_content
            and isinstance(message.channel, discord.Thread)
            and is_question(message.content or "")
        ):
            # Without a mention: only a question in one of our threads, and only with the content
            # intent (no text otherwise); "thanks!" is not a question.
            return
        reference = message.reference.message_id if message.reference else None
        ctx = self.service.thread_context(
            PLATFORM, str(message.channel.id), str(reference) if reference else None
        )
        if ctx is None:
            return  # not one of our threads, nor a reply to one of our cards
        question = self._question(message)
        try:
            async with message.channel.typing():
                ctx.history = await self._history(message)
                answer = await self.service.answer(ctx, question)
        except Exception as exc:
            log.exception("Discord: answering a thread question failed")
            answer = label(
                self.service.channel_lang(PLATFORM, str(message.channel.id)),
                "discord_failed",
                error=type(exc).__name__,
            )
        try:
            for number, chunk in enumerate(content_chunks(answer)):
                await message.channel.send(
                    chunk,
                    allowed_mentions=NO_MENTIONS,
                    reference=message if number == 0 else None,
                    mention_author=False,
                )
        except discord.HTTPException as exc:  # e.g. the thread was archived and locked meanwhile
            log.warning("Discord: could not answer in %s: %s", message.channel.id, _reason(exc))

    def _wants(self, message: discord.Message) -> bool:
        """Only people in servers: never ourselves, other bots or webhooks (no loops, no DMs)."""
        author = message.author
        if author.bot or message.webhook_id is not None or message.guild is None:
            return False
        return self.user is None or author.id != self.user.id

    def _mentioned(self, message: discord.Message) -> bool:
        return self.user is not None and any(u.id == self.user.id for u in message.mentions)

    def _question(self, message: discord.Message) -> str:
        text = message.content or ""
        if self.user is not None:
            text = re.sub(rf"<@!?{self.user.id}>", "", text)
        return " ".join(text.split())

    async def _history(self, message: discord.Message) -> list[tuple[str, str]]:
        """The thread so far, oldest first, as (speaker, text); messages without readable text skipped."""
        history: list[tuple[str, str]] = []
        async for earlier in message.channel.history(limit=HISTORY_MESSAGES, before=message):
            text = (earlier.content or "").strip()
            if not text:
                continue
            mine = self.user is not None and earlier.author.id == self.user.id
            history.append(("assistant" if mine else "user", text))  # as Slack does; no names to the LLM
        history.reverse()
        return history


def _home_channel(interaction: discord.Interaction) -> str:
    """The channel a command belongs to: a thread's parent, so a bare SHA in a digest thread still finds
    the channel's repository and a card's record names the channel."""
    channel = interaction.channel
    if isinstance(channel, discord.Thread) and channel.parent_id:
        return str(channel.parent_id)
    return str(interaction.channel_id)


def _can_post_digest(interaction: discord.Interaction) -> bool:
    """A day's digest needs a server text channel to start its thread from."""
    channel = interaction.channel
    return interaction.guild_id is not None and not isinstance(
        channel, discord.Thread | discord.DMChannel | discord.GroupChannel
    )


def _one_message(text: str) -> str:
    chunks = content_chunks(text)
    return chunks[0] if len(chunks) == 1 else chunks[0][:1990].rstrip() + " …"


# --- the runtime inside `digestbot run` -------------------------------------------------------------


class DiscordRuntime:
    """The bot inside the service: `start()` logs in (syncing commands) and connects the gateway in the
    background; `poster` posts digests for the scheduler; `stop()` closes everything."""

    def __init__(self, settings: Any, service: ChatService, *, message_content: bool | None = None):
        self.settings = settings
        self.service = service
        # DISCORD_MESSAGE_CONTENT is not in bot/settings.py yet: read it when it appears.
        self.message_content = (
            message_content
            if message_content is not None
            else bool(getattr(settings, "discord_message_content", False))
        )
        self.bot: DigestBot | None = None
        self.poster: DiscordPoster | None = None
        self._task: asyncio.Task[None] | None = None
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
            self._task = asyncio.create_task(self.bot.connect(reconnect=True), name="discord-gateway")
            self._task.add_done_callback(_gateway_ended)

    async def stop(self) -> None:
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
