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
import hashlib
import io
import logging
import re
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import discord
from discord import app_commands
from discord.http import Route

from analysis.errors import ConfigError, DigestError, InputError, ServiceError, Undeliverable
from analysis.labels import label
from analysis.models import Analysis, Commit, Digest, key_of
from analysis.questions.parse import is_question
from analysis.render.answer import discord_chunks
from analysis.render.discord_embeds import (
    CONTENT_MAX,
    Message,
    card_messages,
    content_chunks,
    dc_text,
    help_text,
    medium_list_messages,
    parent_embed,
    report_content,
    split_utf8,
    thread_name,
)
from analysis.render.markdown import safe_url
from bot.ports.protocols import ChatFacade, CommandResult, Posted, part_log
from bot.ports.secrets import clip

log = logging.getLogger(__name__)

PLATFORM = "discord"
NO_MENTIONS = discord.AllowedMentions.none()
REPORT_MAX_BYTES = 8 * 1024 * 1024  # below Discord's smallest upload limit (10 MiB without boosts)
THREAD_ARCHIVE_MINUTES = 10080  # a week: questions about a day's digest keep its thread in the list
HISTORY_MESSAGES = 20  # thread messages given to the answerer as context
_COMMAND_WORDS = ("help", "list", "subscribe", "unsubscribe")
TIMEOUT = 30  # seconds per Discord request (aiohttp's default would wait 300)
NONCE_MAX = 25  # Discord's limit on a nonce's length
THREAD_EXISTS = 160004  # "A thread has already been created for this message"
UNKNOWN_MESSAGE = 10008

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
        async with asyncio.timeout(TIMEOUT):
            await client.login(token)
    except discord.LoginFailure:
        raise ConfigError(
            "Discord rejected DISCORD_BOT_TOKEN (401): copy the bot token again from the Developer Portal"
        ) from None
    except discord.HTTPException as exc:
        raise ServiceError(f"Discord login failed: {_reason(exc)}") from None
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise ServiceError(f"cannot reach Discord at {Route.BASE}: {_describe(exc)}") from None


def _reason(exc: discord.HTTPException) -> str:
    text = clip(" ".join(str(exc.text or "").split()), 200)  # masked before it is cut
    return f"HTTP {exc.status}" + (f" (code {exc.code}: {text})" if text else "")


# --- posting ----------------------------------------------------------------------------------------


def nonce_of(channel: str, key: str, item: str, part: int) -> str:
    """A message part's nonce: the same part of the same digest in the same channel always gets the
    same one, so Discord (enforce_nonce) returns the first message instead of creating a second."""
    return hashlib.sha256(f"{channel}\n{key}\n{item}\n{part}".encode()).hexdigest()[:NONCE_MAX]


def _norm(text: Any) -> str:
    return " ".join(str(text or "").split())


def fingerprint(content: str | None, embeds: list[dict[str, Any]], filenames: list[str]) -> str:
    """What a message shows (text, embeds, file names; not timestamps or colours): how a restart
    recognises a part it already sent, since Discord does not return nonces in the history."""
    parts = [_norm(content)]
    for embed in embeds:
        parts += [_norm(embed.get(k)) for k in ("title", "description", "url")]
        parts += [
            _norm((embed.get("footer") or {}).get("text")),
            _norm((embed.get("author") or {}).get("name")),
        ]
        parts += [f"{_norm(f.get('name'))}={_norm(f.get('value'))}" for f in embed.get("fields") or []]
    parts += filenames
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def _print_of(message: discord.Message) -> str:
    return fingerprint(
        message.content, [e.to_dict() for e in message.embeds], [a.filename for a in message.attachments]
    )


@dataclass
class _Seen:
    """Our messages in a thread (or channel), oldest first, by fingerprint and by first embed URL."""

    by_print: dict[str, list[int]] = field(default_factory=dict)
    by_url: dict[str, int] = field(default_factory=dict)
    claimed: set[int] = field(default_factory=set)  # ids already matched to a part in this process

    def add(self, message_id: int, print_: str, url: str | None) -> None:
        self.by_print.setdefault(print_, []).append(message_id)
        if url:
            self.by_url.setdefault(url, message_id)

    def take(self, print_: str) -> int | None:
        for message_id in self.by_print.get(print_, []):
            if message_id not in self.claimed:
                self.claimed.add(message_id)
                return message_id
        return None


class _CannotRead(Exception):
    """No Read Message History here: a post goes on without looking for what is already there."""


class _ParentGone(Exception):
    """The parent we found or were given no longer exists (deleted): post a new one."""


# A send that failed after the request left: Discord may or may not have created the message.
_AMBIGUOUS = (discord.DiscordServerError, aiohttp.ClientError, OSError, TimeoutError)


# Discord's codes for a message the radar may not edit any more: archived or locked thread, not ours.
UNEDITABLE_CODES = {50083, 50005, 50001, 50013, 10008, 10003}
NOTICE_LOOKBACK = timedelta(days=7)  # how far back a keyed notice is looked for when no start is given


class DiscordPoster:
    """The Poster of bot/delivery/posting.py over discord.py's REST client. Thread items are sent to the thread
    by id (a PartialMessageable), so a post resumed after a restart needs nothing but the stored id.

    Never twice: every message part carries a deterministic nonce with enforce_nonce (discord.py sets
    it with the nonce), so a retried send within minutes returns the first message; each part is
    recorded as soon as Discord accepts it (bot.delivery.posting.part_log); and with `reconcile` on, a part
    the store lacks is first looked for among our messages in the thread (the channel's, back to the
    digest's start, for the parent) — after a crash, or after a send whose answer was lost."""

    platform = PLATFORM
    MAX_THREADS = 256  # threads whose contents we keep in memory

    def __init__(self, client: discord.Client, *, reconcile: bool = True):
        self.client = client
        self.reconcile = reconcile
        self._seen: OrderedDict[str, _Seen] = OrderedDict()

    async def post_parent(self, channel: str, digest: Digest) -> Posted:
        target = await self._text_channel(channel)
        key = key_of(digest)
        expected = parent_embed(digest)
        print_ = fingerprint(None, [discord.Embed.from_dict(expected).to_dict()], [])
        window = next((line for line in expected["description"].splitlines() if digest.timezone in line), "")
        same = (expected["title"], window) if window else None
        progress = part_log()
        message_id = int(progress.done[0]) if progress and 0 in progress.done else None
        if message_id is None and self.reconcile:
            message_id = await self._find_in_channel(target, print_, digest.window_start, same)
            if message_id is not None:
                log.info("parent of %s already in %s (%s): not posted again", key, channel, message_id)
        for attempt in range(2):
            if message_id is None:
                message_id = await self._send(
                    channel,
                    target,
                    lambda: {
                        "embed": discord.Embed.from_dict(parent_embed(digest)),
                        "allowed_mentions": NO_MENTIONS,
                    },
                    # A parent deleted for want of a thread is gone: its replacement needs a fresh nonce.
                    nonce_of(channel, key, "parent", attempt),
                    lambda: self._find_in_channel(target, print_, digest.window_start),
                )
            try:
                thread_id, new = await self._start_thread(channel, target, message_id, digest)
                break
            except _ParentGone:
                message_id = None
        else:
            raise ServiceError(f"Discord lost the digest's parent message in channel {channel}: try again")
        if progress:  # only with its thread: a parent whose thread failed is deleted (no orphan)
            progress.record(0, str(message_id))
        if new:  # a brand-new thread holds nothing yet: no need to read it
            self._seen[str(thread_id)] = _Seen()
        return Posted(str(message_id), str(thread_id))

    async def post_card(
        self, channel: str, thread: str, digest: Digest, commit: Commit, analysis: Analysis
    ) -> Posted:
        messages = card_messages(commit, analysis, digest.lang)
        return await self._send_all(channel, thread, key_of(digest), f"card:{commit.sha}", messages)

    async def post_medium_list(
        self, channel: str, thread: str, digest: Digest, commits: list[Commit]
    ) -> Posted:
        messages = medium_list_messages(digest, commits)
        return await self._send_all(channel, thread, key_of(digest), "medium", messages)

    async def post_report(
        self, channel: str, thread: str, digest: Digest, filename: str, markdown: str
    ) -> Posted:
        """The full report as UTF-8 Markdown attachment(s); split in parts only past the upload limit."""
        pieces = split_utf8(markdown, REPORT_MAX_BYTES)

        def part_message(number: int) -> tuple[dict[str, Any], str]:
            name = (
                filename
                if len(pieces) == 1
                else re.sub(r"(\.md)?$", f".part{number + 1}.md", filename, count=1)
            )
            content = report_content(digest, name, number + 1, len(pieces))
            file = discord.File(io.BytesIO(pieces[number].encode("utf-8")), filename=name)
            return {"content": content, "file": file, "allowed_mentions": NO_MENTIONS}, fingerprint(
                content, [], [name]
            )

        return await self._send_parts(channel, thread, key_of(digest), "report", len(pieces), part_message)

    async def post_notice(
        self, channel: str, text: str, key: str | None = None, since: float | None = None
    ) -> Posted:
        """A notice from the service (a failed run) in the channel: plain content, no mentions, sent like
        every part (a nonce; with a key, one already in the channel since `since` is not sent again)."""
        target = await self._text_channel(channel)
        after = (
            datetime.fromtimestamp(since, UTC) if since is not None else datetime.now(UTC) - NOTICE_LOOKBACK
        )
        first: int | None = None
        for number, chunk in enumerate(content_chunks(text)):
            print_ = fingerprint(chunk, [], [])

            async def find(p: str = print_) -> int | None:
                return await self._find_in_channel(target, p, after)

            message_id = await find() if key is not None and self.reconcile else None
            if message_id is None:
                message_id = await self._send(
                    channel,
                    target,
                    lambda c=chunk: {"content": c, "allowed_mentions": NO_MENTIONS},
                    nonce_of(channel, key or text, "notice", number),
                    find,
                )
            first = first or message_id
        assert first is not None  # content_chunks never returns an empty list
        return Posted(str(first))

    async def edit_parent(self, channel: str, message_id: str, digest: Digest, banners: list[str]) -> None:
        """A re-post: the parent's embed shows this digest now; its content (the radar banners) stays."""
        target = await self._text_channel(channel)
        message = target.get_partial_message(_snowflake(message_id))
        await self._call(
            channel,
            message.edit(embed=discord.Embed.from_dict(parent_embed(digest)), allowed_mentions=NO_MENTIONS),
        )

    # -- internals ------------------------------------------------------------------------------------
    async def _send_all(
        self, channel: str, thread: str, key: str, item: str, messages: list[Message]
    ) -> Posted:
        if not messages:
            raise ValueError("nothing to send")

        def part_message(number: int) -> tuple[dict[str, Any], str]:
            kwargs = _send_kwargs(messages[number])
            embeds = [e.to_dict() for e in kwargs.get("embeds", [])]
            return kwargs, fingerprint(kwargs.get("content"), embeds, [])

        first_url = (messages[0].get("embeds") or [{}])[0].get("url") if item.startswith("card:") else None
        return await self._send_parts(channel, thread, key, item, len(messages), part_message, first_url)

    async def _send_parts(
        self,
        channel: str,
        thread: str,
        key: str,
        item: str,
        count: int,
        part_message: Callable[[int], tuple[dict[str, Any], str]],
        first_url: str | None = None,
    ) -> Posted:
        """Send an item's parts in order, skipping those already up (recorded, or found in the thread)."""
        target = self._thread(thread)
        progress = part_log()
        seen = await self._thread_seen(target) if self.reconcile else _Seen()
        ids: list[int] = []
        for number in range(count):
            _, print_ = part_message(number)
            message_id: int | None = None
            if progress and number in progress.done:
                message_id = int(progress.done[number])
                seen.claimed.add(message_id)
            if message_id is None:
                message_id = seen.take(print_)
            if message_id is None and number == 0 and first_url and first_url in seen.by_url:
                # The card is there in another shape (re-analysed since): never post it twice.
                found = seen.by_url[first_url]
                log.info("%s of %s already in thread %s in another shape: kept as it is", item, key, thread)
                return Posted(str(found), thread)
            if message_id is None:
                message_id = await self._send(
                    thread,
                    target,
                    lambda n=number: part_message(n)[0],
                    nonce_of(channel, key, item, number),
                    lambda p=print_: self._find_in_thread(target, p),
                )
                seen.claimed.add(message_id)
            if progress:
                progress.record(number, str(message_id))
            ids.append(message_id)
        return Posted(str(ids[0]), thread)

    async def _send(
        self,
        where: str,
        target: discord.abc.Messageable,
        kwargs: Callable[[], dict[str, Any]],
        nonce: str,
        find: Callable[[], Awaitable[int | None]],
    ) -> int:
        """Send one message part. discord.py retries a 5xx itself, safely: the nonce is enforced. When
        the answer is lost anyway (dropped connection, timeout, 5xx to the end), look for the message
        before sending it again, once: what Discord accepted is never sent twice."""
        last: BaseException | None = None
        for _attempt in range(2):
            try:
                sent = await self._call(where, target.send(nonce=nonce, **kwargs()), ambiguous_ok=True)
                return int(sent.id)
            except _AMBIGUOUS as exc:
                last = exc
                log.warning(
                    "Discord: no confirmation for a message to %s (%s): checking", where, _describe(exc)
                )
                found = await find() if self.reconcile else None
                if found is not None:
                    return found
        assert last is not None
        self._seen.pop(str(where), None)  # what it holds is in doubt: read it afresh next time
        raise ServiceError(
            f"Discord did not confirm a message to channel {where}: {_describe(last)}"
        ) from None

    async def _start_thread(
        self, channel: str, target: discord.TextChannel, message_id: int, digest: Digest
    ) -> tuple[int, bool]:
        """The parent's thread and whether it is new; a parent found after a crash may already have
        one (same id as the message), or not yet: either way it ends with its thread, never orphaned."""
        message = target.get_partial_message(message_id)
        try:
            async with asyncio.timeout(TIMEOUT):
                thread = await message.create_thread(
                    name=thread_name(digest), auto_archive_duration=THREAD_ARCHIVE_MINUTES
                )
            return thread.id, True
        except discord.HTTPException as exc:
            if exc.code == THREAD_EXISTS:
                return message_id, False  # a thread started from a message shares its id
            if exc.code == UNKNOWN_MESSAGE:
                raise _ParentGone from None
            if isinstance(exc, discord.DiscordServerError):
                return await self._thread_after_doubt(channel, message_id, exc), False
            # No orphan parent: without its record a retry posts the parent again, so remove this one.
            with suppress(discord.HTTPException, *_AMBIGUOUS):
                await message.delete()
            raise ServiceError(
                f"cannot start a thread in Discord channel {channel}: {_reason(exc)}"
                " (the bot needs Create Public Threads and Send Messages in Threads)"
            ) from None
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            return await self._thread_after_doubt(channel, message_id, exc), False

    async def _thread_after_doubt(self, channel: str, message_id: int, exc: BaseException) -> int:
        """The thread request's answer was lost: the thread exists if Discord made it."""
        found = await self._call(channel, self.client.fetch_channel(message_id), missing_ok=True)
        if found is not None:
            return message_id
        raise ServiceError(
            f"cannot start a thread in Discord channel {channel}: {_describe(exc)}; the parent stays and "
            "the next post starts its thread"
        ) from None

    async def _thread_seen(self, target: discord.PartialMessageable, fresh: bool = False) -> _Seen:
        """Our messages in a thread: remembered, else read once (oldest first)."""
        cached = self._seen.get(str(target.id))
        if cached is not None and not fresh:
            self._seen.move_to_end(str(target.id))
            return cached
        seen = _Seen(claimed=cached.claimed if cached else set())
        try:
            async for message in self._history(str(target.id), target.history(limit=None, oldest_first=True)):
                if self._ours(message):
                    url = message.embeds[0].url if message.embeds else None
                    seen.add(message.id, _print_of(message), url)
        except _CannotRead as exc:
            log.warning(
                "cannot read Discord thread %s to resume (%s): posting what the store lacks", target.id, exc
            )
            return seen
        self._seen[str(target.id)] = seen
        while len(self._seen) > self.MAX_THREADS:
            self._seen.popitem(last=False)
        return seen

    async def _find_in_thread(self, target: discord.PartialMessageable, print_: str) -> int | None:
        seen = await self._thread_seen(target, fresh=True)
        return seen.take(print_)

    async def _find_in_channel(
        self, target: discord.TextChannel, print_: str, since: datetime, same: tuple[str, str] | None = None
    ) -> int | None:
        """Our message with this fingerprint in the channel, paging back to `since` (bounded by time).
        Failing that, one whose first embed has the `same` (title, window line): the parent of this
        digest posted before the digest changed (re-analysed between the crash and the restart)."""
        alike: int | None = None
        try:
            async for message in self._history(target.id, target.history(limit=None)):
                if message.created_at < since:
                    break
                if not self._ours(message):
                    continue
                if _print_of(message) == print_:
                    return message.id
                if same and alike is None and message.embeds:
                    embed = message.embeds[0]
                    if embed.title == same[0] and same[1] in (embed.description or "").splitlines():
                        alike = message.id
        except _CannotRead as exc:
            log.warning("cannot read Discord channel to resume (%s): posting what the store lacks", exc)
        return alike

    async def _history(
        self, where: Any, messages: AsyncIterator[discord.Message]
    ) -> AsyncIterator[discord.Message]:
        """A history iterator whose every page is bounded by TIMEOUT and whose errors are one line."""
        iterator = aiter(messages)
        while True:
            try:
                async with asyncio.timeout(TIMEOUT):
                    message = await anext(iterator)
            except StopAsyncIteration:
                return
            except discord.Forbidden as exc:
                raise _CannotRead(f"{where}: {_reason(exc)}") from None
            except (discord.HTTPException, *_AMBIGUOUS) as exc:
                detail = _reason(exc) if isinstance(exc, discord.HTTPException) else _describe(exc)
                raise ServiceError(
                    f"cannot read Discord channel {where} to resume a post: {detail}"
                ) from None
            yield message

    def _ours(self, message: discord.Message) -> bool:
        me = self.client.user
        return me is not None and message.author.id == me.id

    # -- the weekly roll-up (bot.ports.protocols.WeeklyPoster) -------------------------------------------------
    async def post_weekly(self, channel: str, week: Any, markdown: str) -> tuple[str, str]:
        """The roll-up's summary as an embed in the channel (sent like every digest part: a restart
        finds it instead of posting it again); the chart follows in the same channel."""
        from analysis.render.discord_embeds import shorten
        from analysis.render.weekly import weekly_summary
        from analysis.weekly import weekly_key

        await self._text_channel(channel)  # a clear error for a channel that cannot hold it
        title, *lines = weekly_summary(week)
        embed = {
            "title": shorten(title, 256),
            "description": "\n".join(dc_text(line) for line in lines)[:4096],
        }

        def part_message(number: int) -> tuple[dict[str, Any], str]:
            kwargs = {"embeds": [discord.Embed.from_dict(embed)], "allowed_mentions": NO_MENTIONS}
            return kwargs, fingerprint(None, [embed], [])

        posted = await self._send_parts(channel, channel, weekly_key(week), "parent", 1, part_message)
        return posted.message_id, channel

    async def post_chart(self, channel: str, thread: str, week: Any, filename: str, png: bytes) -> str:
        """The chart attached and shown as the embed's image."""
        from analysis.weekly import weekly_key

        embed = {"title": week.label, "image": {"url": f"attachment://{filename}"}}

        def part_message(number: int) -> tuple[dict[str, Any], str]:
            file = discord.File(io.BytesIO(png), filename=filename)
            kwargs = {
                "embeds": [discord.Embed.from_dict(embed)],
                "file": file,
                "allowed_mentions": NO_MENTIONS,
            }
            return kwargs, fingerprint(None, [embed], [filename])

        posted = await self._send_parts(channel, thread, weekly_key(week), "chart", 1, part_message)
        return posted.message_id

    async def add_banner(self, channel: str, where: str, message_id: str, text: str) -> bool:
        """Our message with `text` as its first line (once). False when Discord says the message is gone,
        not ours to edit, or in an archived thread."""
        partial = self._thread(where).get_partial_message(_snowflake(message_id))
        try:
            message = await partial.fetch()
            if text in message.content.split("\n"):  # banners are its leading lines
                return True
            content = f"{text}\n{message.content}" if message.content else text
            if len(content) > CONTENT_MAX:
                log.info("Discord message %s: no room for a banner in its content", message_id)
                return False
            await partial.edit(content=content, allowed_mentions=NO_MENTIONS)
            return True
        except (discord.NotFound, discord.Forbidden):
            return False
        except discord.HTTPException as exc:
            if exc.code in UNEDITABLE_CODES:
                return False
            raise

    async def reply_in_thread(
        self, channel: str, thread: str, text: str, url: str | None = None, key: str | None = None
    ) -> str:
        """A reply in a thread, sent like every digest part (nonce and thread reading): with the same
        key it is found, not posted again, after a crash between Discord accepting it and the store
        recording it."""
        link = safe_url(url)
        content = (dc_text(text) + (f" <{link}>" if link else ""))[:CONTENT_MAX]
        key = key or "reply:" + hashlib.sha256(content.encode()).hexdigest()[:16]
        posted = await self._send_all(channel, thread, key, "reply", [{"content": content}])
        return posted.message_id

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

    async def _call(
        self, channel: str, call: Any, *, ambiguous_ok: bool = False, missing_ok: bool = False
    ) -> Any:
        """Await a discord.py call within TIMEOUT; its errors become one ServiceError line naming the
        channel. (discord.py itself waits out 429s, per bucket and globally.) With `ambiguous_ok`,
        failures that leave the outcome unknown are re-raised for the caller to reconcile."""
        try:
            async with asyncio.timeout(TIMEOUT):
                return await call
        except discord.Forbidden as exc:
            raise Undeliverable(
                f"Discord refused access to channel {channel}: {_reason(exc)}. Invite the bot with the "
                "permissions in docs/discord.md (View Channel, Send Messages, Embed Links, Attach Files, "
                "Create Public Threads, Send Messages in Threads)"
            ) from None
        except discord.NotFound as exc:
            if missing_ok:
                return None
            raise Undeliverable(f"Discord channel {channel} not found: {_reason(exc)}") from None
        except discord.DiscordServerError as exc:
            if ambiguous_ok:
                raise
            raise ServiceError(f"Discord failed for channel {channel}: {_reason(exc)}") from None
        except discord.HTTPException as exc:
            kind = Undeliverable if exc.code in UNEDITABLE_CODES else ServiceError
            raise kind(f"Discord rejected a message for channel {channel}: {_reason(exc)}") from None
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            if ambiguous_ok:
                raise
            raise ServiceError(
                f"cannot reach Discord at {Route.BASE} for channel {channel}: {_describe(exc)}"
            ) from None


def _describe(exc: BaseException) -> str:
    """A network failure in words (TimeoutError has no message of its own)."""
    if isinstance(exc, discord.HTTPException):
        return _reason(exc)
    if isinstance(exc, TimeoutError) and not isinstance(exc, aiohttp.ClientError):
        return f"no answer within {TIMEOUT} s"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the connection was closed before Discord answered"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


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
            result = await self.service.post_day(self.poster, channel, digest)
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
                chunks = discord_chunks(await self.service.answer(ctx, question))
        except Exception as exc:
            log.exception("Discord: answering a thread question failed")
            chunks = content_chunks(
                label(
                    self.service.channel_lang(PLATFORM, str(message.channel.id)),
                    "discord_failed",
                    error=type(exc).__name__,
                )
            )
        try:
            for number, chunk in enumerate(chunks):
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
