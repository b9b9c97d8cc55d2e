"""Posting a digest into a Discord channel over REST only (a logged-in Client, no gateway): the parent
message with its embed, a public thread started from it, cards, the medium list and the report as a file,
a weekly roll-up with its chart, notices, the radar's banners and thread replies
(bot/ports' Poster, BannerEditor and WeeklyPoster). Each part is recorded as soon as Discord accepts it,
and with `reconcile` on, a part Discord may have created without confirming is looked for first.

Over 400 lines because it is one thing: the poster, whose every call goes through the same send,
confirm and reconcile path; login, reconciliation and the bot are modules of their own."""

from __future__ import annotations

import hashlib
import io
import logging
import re
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import discord
from discord.http import Route

from adapters.discord.client import (
    NO_MENTIONS,
    PLATFORM,
    bot_token,
    deadline,
    describe_error,
    login,
    reason_of,
    routed_to,
    send_kwargs,
    snowflake,
)
from adapters.discord.keys import keyed_messages
from adapters.discord.reconcile import SeenMessages, fingerprint, nonce_of, print_of
from analysis.errors import ServiceError, Undeliverable
from analysis.models import Analysis, Commit, Digest, key_of
from analysis.render.discord_embeds import (
    CONTENT_MAX,
    Message,
    card_messages,
    content_chunks,
    dc_text,
    high_list_messages,
    medium_list_messages,
    parent_embed,
    report_content,
    split_utf8,
    thread_name,
)
from analysis.render.markdown import safe_url
from analysis.weekly import weekly_key
from bot.ports.protocols import Posted, part_log

log = logging.getLogger(__name__)


REPORT_MAX_BYTES = 8 * 1024 * 1024  # below Discord's smallest upload limit (10 MiB without boosts)

THREAD_ARCHIVE_MINUTES = 10080  # a week: questions about a day's digest keep its thread in the list

THREAD_EXISTS = 160004  # "A thread has already been created for this message"

UNKNOWN_MESSAGE = 10008


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
    """The Poster of bot/ports/protocols.py over discord.py's REST client. Thread items are sent to the thread
    by id (a PartialMessageable), so a post resumed after a restart needs nothing but the stored id.

    Never twice: every message part carries a deterministic nonce with enforce_nonce (discord.py sets
    it with the nonce), so a retried send within minutes returns the first message; each part is
    recorded as soon as Discord accepts it (bot.ports.protocols.part_log); and with `reconcile` on, a part
    the store lacks is first looked for among our messages in the thread (the channel's, back to the
    digest's start, for the parent) — after a crash, or after a send whose answer was lost."""

    platform = PLATFORM
    MAX_THREADS = 256  # threads whose contents we keep in memory

    def __init__(self, client: discord.Client, *, reconcile: bool = True):
        self.client = client
        self.reconcile = reconcile
        self._seen: OrderedDict[str, SeenMessages] = OrderedDict()

    async def post_parent(self, channel: str, digest: Digest) -> Posted:
        target = await self._text_channel(channel)
        key = key_of(digest)
        expected = keyed_parent(digest)
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
                        "embed": discord.Embed.from_dict(keyed_parent(digest)),
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
            self._seen[str(thread_id)] = SeenMessages()
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

    async def post_high_list(
        self, channel: str, thread: str, digest: Digest, commits: list[Commit]
    ) -> Posted:
        messages = high_list_messages(digest, commits)
        return await self._send_all(channel, thread, key_of(digest), "high_list", messages)

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
        message = target.get_partial_message(snowflake(message_id))
        await self._call(
            channel,
            message.edit(embed=discord.Embed.from_dict(keyed_parent(digest)), allowed_mentions=NO_MENTIONS),
        )

    # -- internals ------------------------------------------------------------------------------------
    async def _send_all(
        self, channel: str, thread: str, key: str, item: str, messages: list[Message]
    ) -> Posted:
        if not messages:
            raise ValueError("nothing to send")

        def part_message(number: int) -> tuple[dict[str, Any], str]:
            kwargs = send_kwargs(messages[number])
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
        seen = await self._thread_seen(target) if self.reconcile else SeenMessages()
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
                    "Discord: no confirmation for a message to %s (%s): checking", where, describe_error(exc)
                )
                found = await find() if self.reconcile else None
                if found is not None:
                    return found
        assert last is not None
        self._seen.pop(str(where), None)  # what it holds is in doubt: read it afresh next time
        raise ServiceError(
            f"Discord did not confirm a message to channel {where}: {describe_error(last)}"
        ) from None

    async def _start_thread(
        self, channel: str, target: discord.TextChannel, message_id: int, digest: Digest
    ) -> tuple[int, bool]:
        """The parent's thread and whether it is new; a parent found after a crash may already have
        one (same id as the message), or not yet: either way it ends with its thread, never orphaned."""
        message = target.get_partial_message(message_id)
        try:
            async with deadline():
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
                f"cannot start a thread in Discord channel {channel}: {reason_of(exc)}"
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
            f"cannot start a thread in Discord channel {channel}: {describe_error(exc)}; the parent stays and "
            "the next post starts its thread"
        ) from None

    async def _thread_seen(self, target: discord.PartialMessageable, fresh: bool = False) -> SeenMessages:
        """Our messages in a thread: remembered, else read once (oldest first)."""
        cached = self._seen.get(str(target.id))
        if cached is not None and not fresh:
            self._seen.move_to_end(str(target.id))
            return cached
        seen = SeenMessages(claimed=cached.claimed if cached else set())
        try:
            async for message in self._history(str(target.id), target.history(limit=None, oldest_first=True)):
                if self._ours(message):
                    url = message.embeds[0].url if message.embeds else None
                    seen.add(message.id, print_of(message), url)
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
                if print_of(message) == print_:
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
                async with deadline():
                    message = await anext(iterator)
            except StopAsyncIteration:
                return
            except discord.Forbidden as exc:
                raise _CannotRead(f"{where}: {reason_of(exc)}") from None
            except (discord.HTTPException, *_AMBIGUOUS) as exc:
                detail = reason_of(exc) if isinstance(exc, discord.HTTPException) else describe_error(exc)
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
        partial = self._thread(where).get_partial_message(snowflake(message_id))
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
        return self.client.get_partial_messageable(snowflake(thread), type=discord.ChannelType.public_thread)

    async def _text_channel(self, channel: str) -> discord.TextChannel:
        channel_id = snowflake(channel)
        found = self.client.get_channel(channel_id)  # the gateway's cache when the bot is connected
        if found is None:
            found = await self._call(channel, self.client.fetch_channel(channel_id))
        if not isinstance(found, discord.TextChannel):
            kind = getattr(found, "type", type(found).__name__)
            # For good: pending work for it (a notice, a roll-up) is given up, not retried for ever.
            raise Undeliverable(
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
            async with deadline():
                return await call
        except discord.Forbidden as exc:
            raise Undeliverable(
                f"Discord refused access to channel {channel}: {reason_of(exc)}. Invite the bot with the "
                "permissions in docs/discord.md (View Channel, Send Messages, Embed Links, Attach Files, "
                "Create Public Threads, Send Messages in Threads)"
            ) from None
        except discord.NotFound as exc:
            if missing_ok:
                return None
            raise Undeliverable(f"Discord channel {channel} not found: {reason_of(exc)}") from None
        except discord.DiscordServerError as exc:
            if ambiguous_ok:
                raise
            raise ServiceError(f"Discord failed for channel {channel}: {reason_of(exc)}") from None
        except discord.HTTPException as exc:
            kind = Undeliverable if exc.code in UNEDITABLE_CODES else ServiceError
            raise kind(f"Discord rejected a message for channel {channel}: {reason_of(exc)}") from None
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            if ambiguous_ok:
                raise
            detail = describe_error(exc)
            if detail.startswith("Discord rate-limited"):  # an answer, not an outage
                raise ServiceError(f"Discord channel {channel}: {detail}; try again later") from None
            raise ServiceError(
                f"cannot reach Discord at {Route.BASE} for channel {channel}: {detail}"
            ) from None


def keyed_parent(digest: Digest) -> dict[str, Any]:
    """The parent's embed with the digest's key in its footer (adapters/discord/keys.py): a question in its
    thread is still answered when the store has no record of the post. A parent posted before it carried
    the key is found again by its title and window line (`_find_in_channel`), and a re-post's edit adds it."""
    [message] = keyed_messages([{"embeds": [parent_embed(digest)]}], key_of(digest))
    return message["embeds"][0]


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
