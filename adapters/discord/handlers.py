"""The Client of the running service: the `/digest` slash command (deferred, then followed up) and
answers to questions asked in our threads, through the chat facade (bot/ports) and the thread answers
(adapters/discord/thread_answers.py). Every way Discord refuses or loses a delivery (late or repeated
interactions, expired tokens, rate limits, gone threads, a partly delivered answer) ends here in one line,
not a traceback."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable
from contextlib import suppress
from typing import Any

import discord
from discord import app_commands

from adapters.discord.client import (
    NO_MENTIONS,
    PLATFORM,
    Lost,
    deliver,
    send_kwargs,
)
from adapters.discord.keys import card_key, keyed_messages
from adapters.discord.poster import DiscordPoster
from adapters.discord.thread_answers import ThreadAnswers, question_of
from analysis.errors import DigestError, Flooded, InputError
from analysis.labels import label, repeat_card_notice
from analysis.models import Digest
from analysis.questions.parse import is_question
from analysis.render.discord_embeds import (
    Message,
    card_messages,
    content_chunks,
    help_text,
)
from bot.ports.protocols import ChatFacade, CommandResult, Posted

log = logging.getLogger(__name__)


_COMMAND_WORDS = ("help", "list", "subscribe", "unsubscribe")

_TOKEN_GONE = {10015, 10062, 50027}  # unknown webhook / interaction, invalid token (past 15 minutes)
_SENT = "digestbot_sent"  # Interaction.extras key: a follow-up of this interaction was delivered


class _Seen:
    """Ids already handled: a resumed gateway may deliver an event again."""

    def __init__(self, size: int = 4096):
        self._ids: OrderedDict[int, None] = OrderedDict()
        self._size = size

    def claim(self, item: int) -> bool:
        if item in self._ids:
            return False
        self._ids[item] = None
        if len(self._ids) > self._size:
            self._ids.popitem(last=False)
        return True


def command_text(ref: str | None, date: str | None, repo: str | None) -> str:
    """Discord's `/digest` options as the argument text every chat surface shares (bot/chat/service.py)."""
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

    def __init__(self, service: ChatFacade, *, guild_id: int | None = None, message_content: bool = False):
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
        self.answers = ThreadAnswers(self, service)
        # One day's post at a time per channel: two `/digest date:` at once would both find nothing
        # recorded yet and both post (post_digest checks, then posts).
        self._posting: dict[str, asyncio.Lock] = {}
        self._seen_interactions = _Seen()
        self._seen_messages = _Seen()

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
        if not self._seen_interactions.claim(interaction.id):
            log.info("Discord: interaction %s delivered again, already handled", interaction.id)
            return
        channel = _home_channel(interaction)
        lang = self.service.channel_lang(PLATFORM, channel)
        try:
            cmd = self.service.prepare(PLATFORM, channel, command_text(ref, date, repo))
            if cmd.action == "day" and not _can_post_digest(interaction):
                raise InputError(label(lang, "discord_not_here"))
        except DigestError as exc:  # bad input, or past the channel's cards a minute: said in the response
            public = isinstance(exc, Flooded) and exc.public  # the channel's one notice a minute of a flood
            await self._acknowledge(
                interaction.response.send_message(
                    _one_message(str(exc)), ephemeral=not public, allowed_mentions=NO_MENTIONS
                )
            )
            return
        if cmd.action == "help":
            await self._acknowledge(
                interaction.response.send_message(
                    help_text(lang), ephemeral=True, allowed_mentions=NO_MENTIONS
                )
            )
            return
        private = cmd.action == "list"
        if not await self._acknowledge(interaction.response.defer(thinking=True, ephemeral=private)):
            return  # nobody could receive the answer: no work for it
        try:
            result = await self.service.execute(PLATFORM, channel, cmd, user=str(interaction.user.id))
            await self._follow_up(interaction, channel, result, private)
        except Lost as exc:
            if exc.code in _TOKEN_GONE:
                log.warning("Discord: could not deliver the /digest answer: %s", exc)
            else:  # e.g. a message Discord refused: the user hears why, if the token still works
                await self._fail(interaction, label(lang, "discord_failed", error=str(exc)), private)
        except DigestError as exc:
            await self._fail(interaction, str(exc), private)
        except Exception:  # a bug: its traceback in the log, a line without its class name to the user
            log.exception("Discord /digest failed")
            await self._fail(interaction, label(lang, "failed_inside"), private)

    @staticmethod
    async def _acknowledge(response: Awaitable[Any]) -> bool:
        """The first answer, due within Discord's 3 s. False when Discord did not take it: too late
        (10062), or already acknowledged elsewhere (40060)."""
        try:
            await deliver(response)
            return True
        except Lost as exc:
            late = " (it arrived too late: Discord allows 3 s)" if exc.code == 10062 else ""
            log.warning("Discord: could not acknowledge /digest%s: %s", late, exc)
            return False

    async def _follow_up(
        self, interaction: discord.Interaction, channel: str, result: CommandResult, private: bool
    ) -> None:
        if result.kind == "error":
            await self._fail(interaction, result.text, private)
        elif result.kind == "card":
            commit, analysis, lang = result.commit, result.analysis, result.lang
            assert commit is not None and analysis is not None
            async with self.service.card_turn(PLATFORM, channel, commit, lang) as earlier:
                if earlier is not None:  # asked again within minutes: pointed at, not posted twice
                    where = _message_link(interaction, earlier.message_id)
                    notice = repeat_card_notice(lang, commit.short_sha, earlier.minutes_ago, where)
                    await self._send_followups(interaction, [{"content": notice}])
                    return
                # keyed: a thread someone starts from the card is answered after a wiped database too
                messages = keyed_messages(
                    card_messages(commit, analysis, lang), card_key(commit.repo, commit.sha, lang)
                )
                first = await self._send_card(interaction, messages, commit.short_sha)
                if first is not None:
                    self.service.record_card(PLATFORM, channel, commit, lang, Posted(str(first.id)))
        elif result.kind == "digest":
            assert result.digest is not None
            text = await self._post_day(channel, result.digest, result.lang)
            await deliver(interaction.followup.send(text, allowed_mentions=NO_MENTIONS))
        else:
            await self._send_followups(interaction, [{"content": c} for c in content_chunks(result.text)])

    async def _send_followups(self, interaction: discord.Interaction, messages: list[Message]) -> Any:
        """The first follow-up replaces the "thinking…" message; the rest follow it."""
        first = None
        for message in messages:
            sent = await deliver(interaction.followup.send(wait=True, **send_kwargs(message)))
            interaction.extras[_SENT] = True  # part of the answer is the user's now: _fail keeps it
            first = first or sent
        return first

    async def _send_card(self, interaction: discord.Interaction, messages: list[Message], sha: str) -> Any:
        """A card as follow-ups; when the interaction's token is gone (an analysis that outlived its
        15 minutes), what is left of it goes into the channel the command came from as a bot message,
        so it still arrives. The first message sent, or None when even that was refused (one line)."""
        first = None
        for number, message in enumerate(messages):
            try:
                sent = await deliver(interaction.followup.send(wait=True, **send_kwargs(message)))
            except Lost as exc:
                if exc.code not in _TOKEN_GONE:
                    raise
                log.info("Discord: the /digest token expired (%s); posting the card in the channel", exc)
                rest = await self._send_in_channel(interaction, messages[number:], sha)
                return first or rest
            interaction.extras[_SENT] = True
            first = first or sent
        return first

    async def _send_in_channel(
        self, interaction: discord.Interaction, messages: list[Message], sha: str
    ) -> Any:
        """Messages through the bot token into the channel (or thread) the command was given in, no
        mentions; the first one sent, or None when Discord refused (logged in one line)."""
        channel_id = interaction.channel_id
        if channel_id is None:
            log.warning(
                "Discord: the card for %s was not delivered: its token expired, no channel known", sha
            )
            return None
        target = self.get_partial_messageable(channel_id)
        first = None
        try:
            for message in messages:
                sent = await deliver(target.send(**send_kwargs(message)))
                first = first or sent
        except Lost as exc:
            log.warning(
                "Discord: the card for %s was %s: its token expired and channel %s refused it: %s",
                sha,
                "only partly delivered" if first is not None else "not delivered",
                channel_id,
                exc,
            )
        return first

    async def _post_day(self, channel: str, digest: Digest, lang: str) -> str:
        async with self._posting.setdefault(channel, asyncio.Lock()):
            result = await self.service.post_day(self.poster, channel, digest)
        link = f"<#{result.thread_id}>" if result.thread_id else ""
        key = "discord_posted" if result.posted else "discord_already_posted"
        return label(lang, key, repo=digest.repo, day=digest.day.isoformat(), link=link)

    async def _fail(self, interaction: discord.Interaction, text: str, private: bool) -> None:
        """An error only the user sees. After a public defer the first follow-up would inherit the public
        "thinking…" message, so that message is deleted first and the error sent as a new ephemeral one
        (unless part of the answer was delivered: it stays, and the error says the rest failed)."""
        try:
            if interaction.extras.get(_SENT) is True:
                lang = self.service.channel_lang(PLATFORM, _home_channel(interaction))
                text = label(lang, "discord_partial", error=text)
            elif not private:
                with suppress(Lost):
                    await deliver(interaction.delete_original_response())
            await deliver(
                interaction.followup.send(_one_message(text), ephemeral=True, allowed_mentions=NO_MENTIONS)
            )
        except Lost as exc:  # e.g. the 15-minute interaction token expired
            log.warning("Discord: could not report an error to the user: %s", exc)

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
        if not self._seen_messages.claim(message.id):
            return  # delivered again (a resumed gateway): answered already
        # whether the thread is ours, the claim that answers it once (also after a crash), are bot/'s
        with self.answers.at_hand(message):
            await self.service.answer_once(self.answers, question_of(message, self._mentioned(message)))

    def _wants(self, message: discord.Message) -> bool:
        """Only people in servers: never ourselves, other bots or webhooks (no loops, no DMs)."""
        author = message.author
        if author.bot or message.webhook_id is not None or message.guild is None:
            return False
        return self.user is None or author.id != self.user.id

    def _mentioned(self, message: discord.Message) -> bool:
        return self.user is not None and any(u.id == self.user.id for u in message.mentions)


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


def _message_link(interaction: discord.Interaction, message_id: str) -> str | None:
    """A message's web link in the channel the command came from (None when Discord named no channel)."""
    if interaction.channel_id is None:
        return None
    return (
        f"https://discord.com/channels/{interaction.guild_id or '@me'}/{interaction.channel_id}/{message_id}"
    )
