"""Posting a digest into a Slack channel (bot/ports' Poster, BannerEditor and WeeklyPoster): the parent
in the channel, cards, the medium list and the report as a file in its thread, a weekly roll-up with its
chart, notices and thread replies.

Every item carries message metadata (digest key, item, part), so a restart or a second process finds
what is already up (conversations.history / replies) and posts only what is missing.

Over 400 lines because it is one thing: the poster and the reconciliation every one of its posts goes
through; the client, banners and handlers are modules of their own."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.banners import add_banner, banner_block
from adapters.slack.client import (
    PLATFORM,
    SlackError,
    _call,
    make_client,
    new_session,
    require_bot_token,
    verify_token,
)
from analysis.errors import DigestError
from analysis.labels import label
from analysis.models import Analysis, Commit, Digest, key_of
from analysis.render.markdown import safe_url
from analysis.render.slack_blocks import (
    Message,
    card_messages,
    escape,
    high_list_messages,
    link,
    medium_list_messages,
    parent_message,
    text_messages,
)
from analysis.weekly import weekly_key
from bot.ports.protocols import (
    Posted,
    SlackSettings,
    part_log,
)

log = logging.getLogger(__name__)


EVENT_TYPE = "digestbot_item"  # message metadata marking our digest items, for reconciliation

NOTICE_LOOKBACK = 7 * 86400  # seconds back a keyed notice is looked for when no start is given


@dataclass
class _Item:
    parts: int
    ts: dict[int, str] = field(default_factory=dict)  # part → message ts


@dataclass
class _Thread:
    """Our items already in a thread: what a resumed post must not post again."""

    items: dict[tuple[str, str], _Item] = field(default_factory=dict)  # (digest key, item)
    files: dict[str, str] = field(default_factory=dict)  # file name → file id


def _metadata(key: str, item: str, part: int, parts: int) -> dict[str, Any]:
    return {
        "event_type": EVENT_TYPE,
        "event_payload": {"key": key, "item": item, "part": part, "parts": parts},
    }


class SlackPoster:
    """bot.ports.protocols.Poster for Slack. Each item is one or more messages carrying metadata (digest key,
    item, part). With `reconcile` on, an item the store does not know is first looked up in Slack —
    the channel for a parent, the thread's replies for the rest — and, when found, its ts is returned
    instead of posting again: a crash between Slack accepting a message and the store recording it
    then costs no duplicate."""

    platform = PLATFORM
    MAX_THREADS = 256  # threads whose contents we keep in memory

    def __init__(self, client: AsyncWebClient, *, bot_id: str | None = None, reconcile: bool = True):
        self.client = client
        self.bot_id = bot_id  # when known, only messages of this bot count as ours
        self.reconcile = reconcile
        self._threads: OrderedDict[tuple[str, str], _Thread] = OrderedDict()

    # -- Poster ---------------------------------------------------------------------------------------
    async def post_parent(self, channel: str, digest: Digest) -> Posted:
        key = key_of(digest)
        oldest = digest.window_start.timestamp()  # a digest's parent is never older than its day
        progress = part_log()
        found = progress.done.get(0) if progress else None
        if not found and self.reconcile:
            found = await self._find_top(channel, key, "parent", oldest)
        if found:
            log.info("parent of %s already in %s (ts %s): not posted again", key, channel, found)
            return Posted(found, found)
        ts = await self._post(
            channel,
            parent_message(digest),
            metadata=_metadata(key, "parent", 0, 1),
            find=lambda: self._find_top(channel, key, "parent", oldest, strict=True),
        )
        if progress:
            progress.record(0, ts)
        self._remember(channel, ts, _Thread())  # a brand-new thread holds nothing yet
        return Posted(ts, ts)

    async def post_card(
        self, channel: str, thread: str, digest: Digest, commit: Commit, analysis: Analysis
    ) -> Posted:
        messages = card_messages(commit, analysis, digest.lang, tz=digest.timezone)
        return await self._post_item(channel, thread, key_of(digest), f"card:{commit.sha}", messages)

    async def post_medium_list(
        self, channel: str, thread: str, digest: Digest, commits: list[Commit]
    ) -> Posted:
        return await self._post_item(
            channel, thread, key_of(digest), "medium", medium_list_messages(digest, commits)
        )

    async def post_high_list(
        self, channel: str, thread: str, digest: Digest, commits: list[Commit]
    ) -> Posted:
        return await self._post_item(
            channel, thread, key_of(digest), "high_list", high_list_messages(digest, commits)
        )

    async def post_report(
        self, channel: str, thread: str, digest: Digest, filename: str, markdown: str
    ) -> Posted:
        file_id = await self._upload(
            channel,
            thread,
            filename,
            markdown.encode("utf-8"),  # bytes: UTF-8 whatever the locale
            initial_comment=f"📄 {label(digest.lang, 'full_report')}",
        )
        return Posted(file_id, thread)

    async def edit_parent(self, channel: str, message_id: str, digest: Digest, banners: list[str]) -> None:
        """A re-post: the parent shows this digest now, under the radar banners it carried."""
        message = parent_message(digest)
        blocks = [banner_block(b) for b in reversed(banners)] + list(message.get("blocks") or [])
        text = "\n".join([*reversed(banners), str(message.get("text") or "")])
        await _call(
            "chat.update",
            self.client.chat_update(
                channel=channel,
                ts=message_id,
                text=text,
                blocks=blocks,
                metadata=_metadata(key_of(digest), "parent", 0, 1),  # still found by a later post
            ),
            channel,
        )

    # -- beyond the protocol --------------------------------------------------------------------------
    async def post_standalone_card(
        self, channel: str, commit: Commit, analysis: Analysis, lang: str, tz: str | None
    ) -> Posted:
        """A `/digest <ref>` card in the channel; parts past the first go in its own thread, so
        every reply under the card lands in one thread that leads back to the commit."""
        messages = card_messages(commit, analysis, lang, tz=tz, detail=True)
        key = f"card:{commit.repo}@{commit.sha}/{lang}"
        first = await self._post(channel, messages[0], metadata=_metadata(key, "card", 0, len(messages)))
        for part, message in enumerate(messages[1:], start=1):
            await self._post(
                channel, message, thread=first, metadata=_metadata(key, "card", part, len(messages))
            )
        return Posted(first, first)

    async def permalink(self, channel: str, ts: str) -> str | None:
        """A message's link (chat.getPermalink); None when Slack cannot give one: a pointer to the message
        then goes without it."""
        try:
            reply = await _call(
                "chat.getPermalink", self.client.chat_getPermalink(channel=channel, message_ts=ts)
            )
        except SlackError as exc:
            log.info("Slack: no link to %s in %s: %s", ts, channel, exc)
            return None
        found = reply.get("permalink") if reply is not None else None
        return found if isinstance(found, str) and safe_url(found) else None

    async def post_messages(
        self, channel: str, messages: list[Message], thread: str | None = None
    ) -> list[str]:
        """Plain messages (answers, notices) in order; returns their ts."""
        return [await self._post(channel, m, thread=thread) for m in messages]

    async def post_answer(
        self, channel: str, thread: str, question: str, messages: list[Message]
    ) -> list[str]:
        """A thread question's answer, part after part, each carrying metadata (the question's ts, the
        part): a part Slack may have taken without our hearing so (5xx, dropped connection, timeout) is
        looked for in the thread before it is posted again, and the parts after it follow, once each."""
        key = f"answer:{question}"
        return [
            await self._post(
                channel,
                message,
                thread=thread,
                metadata=_metadata(key, "answer", part, len(messages)),
                find=lambda p=part: self._find_part(channel, thread, key, "answer", p),
            )
            for part, message in enumerate(messages)
        ]

    async def answer_posted(self, channel: str, thread: str, question: str) -> bool:
        """Whether a part of the question's answer is in the thread, read afresh (a process that died
        after posting it never recorded it). Raises DigestError when the thread cannot be read."""
        known = await self._thread(channel, thread, fresh=True, strict=True)
        return (f"answer:{question}", "answer") in known.items

    # -- the radar (bot.ports.protocols.BannerEditor) ----------------------------------------------------------
    async def add_banner(self, channel: str, where: str, message_id: str, text: str) -> bool:
        return await add_banner(self, channel, message_id, text)

    async def reply_in_thread(
        self, channel: str, thread: str, text: str, url: str | None = None, key: str | None = None
    ) -> str:
        """A reply in a thread; with a key, a reply already there under that key (metadata) is not
        posted again, so a crash between Slack accepting it and the store recording it costs nothing."""
        if key:
            known = await self._thread(channel, thread) if self.reconcile else _Thread()
            found = known.items.get((key, "reply"))
            if found and found.ts:
                return found.ts[min(found.ts)]
        body = escape(text) + (f" {link(url, '🔗')}" if safe_url(url) else "")
        message = {
            "text": escape(text),
            "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": body}}],
        }
        ts = await self._post(
            channel,
            message,
            thread=thread,
            metadata=_metadata(key, "reply", 0, 1) if key else None,
            find=(lambda: self._find_part(channel, thread, key, "reply", 0)) if key else None,
        )
        if key:
            known.items.setdefault((key, "reply"), _Item(1)).ts[0] = ts
        return ts

    # -- the weekly roll-up (bot.ports.protocols.WeeklyPoster) -------------------------------------------------
    async def post_weekly(self, channel: str, week: Any, markdown: str) -> tuple[str, str]:
        """The roll-up's summary as the parent (found again by its metadata after a crash)."""
        from analysis.render.weekly import weekly_summary

        key = weekly_key(week)
        monday = week.days[0][0]  # the roll-up is posted after its week began: never older
        oldest = datetime.combine(monday, time(), ZoneInfo(week.timezone)).timestamp()
        found = await self._find_top(channel, key, "parent", oldest) if self.reconcile else None
        if found:
            return found, found
        messages = text_messages("\n".join(weekly_summary(week)))
        first = await self._post(channel, messages[0], metadata=_metadata(key, "parent", 0, len(messages)))
        for part, message in enumerate(messages[1:], start=1):
            await self._post(
                channel, message, thread=first, metadata=_metadata(key, "parent", part, len(messages))
            )
        self._remember(channel, first, _Thread())
        return first, first

    async def post_chart(self, channel: str, thread: str, week: Any, filename: str, png: bytes) -> str:
        """The chart PNG into the roll-up's thread (files upload v2), once per file name."""
        return await self._upload(channel, thread, filename, png)

    async def post_notice(
        self, channel: str, text: str, key: str | None = None, since: float | None = None
    ) -> Posted:
        """A notice from the service (a failed run) in the channel, escaped like any text. With a key it
        carries it (metadata), and one already in the channel since `since` is not posted again."""
        messages = text_messages(text)
        if key is None:
            return Posted((await self.post_messages(channel, messages))[0])
        oldest = since if since is not None else datetime.now(UTC).timestamp() - NOTICE_LOOKBACK

        async def find(strict: bool = True) -> str | None:
            return await self._find_top(channel, key, "notice", oldest, strict=strict)

        found = await find(strict=False) if self.reconcile else None
        if found:
            return Posted(found)
        first = await self._post(
            channel, messages[0], metadata=_metadata(key, "notice", 0, len(messages)), find=find
        )
        for part, message in enumerate(messages[1:], start=1):
            await self._post(channel, message, metadata=_metadata(key, "notice", part, len(messages)))
        return Posted(first)

    # -- internals ------------------------------------------------------------------------------------
    async def _upload(self, channel: str, thread: str, filename: str, content: bytes, **extra: Any) -> str:
        """A file into a thread once per name: the thread is looked at before the upload, and again
        when Slack's answer is lost (it may have taken the file); a thread whose state is in doubt
        after a failure is read afresh next time, not taken from memory."""
        known = await self._thread(channel, thread) if self.reconcile else _Thread()
        if filename in known.files:
            return known.files[filename]
        for attempt in range(2):
            try:
                response = await _call(
                    "files.completeUploadExternal",
                    self.client.files_upload_v2(
                        channel=channel,
                        thread_ts=thread,
                        filename=filename,
                        title=filename,
                        content=content,
                        **extra,
                    ),
                    channel,
                )
                break
            except SlackError as exc:
                if exc.ambiguous:
                    self._threads.pop((channel, thread), None)
                if not (exc.ambiguous and self.reconcile) or attempt:
                    raise
                log.warning(
                    "Slack: no confirmation for %s in %s (%s): checking the thread", filename, channel, exc
                )
                try:
                    known = await self._thread(channel, thread, fresh=True, strict=True)
                except DigestError:  # cannot look: uploading again could give a second file
                    raise exc from None
                if filename in known.files:
                    return known.files[filename]
        file_id = str(response["files"][0]["id"])
        known.files[filename] = file_id
        return file_id

    async def _post_item(
        self, channel: str, thread: str, key: str, item: str, messages: list[Message]
    ) -> Posted:
        known = await self._thread(channel, thread) if self.reconcile else _Thread()
        found = known.items.get((key, item))
        if found and found.parts != len(messages):  # there in another shape: never post it twice
            return Posted(found.ts[min(found.ts)], thread)
        progress = part_log()
        done = {**(found.ts if found else {}), **(progress.done if progress else {})}
        if done:
            log.info("%s of %s: %d of %d part(s) already in the thread", item, key, len(done), len(messages))
        stamps = []
        for part, message in enumerate(messages):
            ts = done.get(part) or await self._post(
                channel,
                message,
                thread=thread,
                metadata=_metadata(key, item, part, len(messages)),
                find=lambda p=part: self._find_part(channel, thread, key, item, p),
            )
            known.items.setdefault((key, item), _Item(len(messages))).ts[part] = ts
            if progress and part not in progress.done:
                progress.record(part, ts)
            stamps.append(ts)
        return Posted(stamps[0], thread)

    async def _find_part(self, channel: str, thread: str, key: str, item: str, part: int) -> str | None:
        known = await self._thread(channel, thread, fresh=True, strict=True)
        found = known.items.get((key, item))
        return found.ts.get(part) if found else None

    async def _post(
        self,
        channel: str,
        message: Message,
        *,
        thread: str | None = None,
        metadata: dict[str, Any] | None = None,
        find: Callable[[], Awaitable[str | None]] | None = None,
    ) -> str:
        """Post one message. When Slack may have accepted it without our hearing so (5xx, dropped
        connection, timeout), `find` looks for it before it is posted again, once."""
        args: dict[str, Any] = {"channel": channel, "unfurl_links": False, "unfurl_media": False, **message}
        if thread:
            args["thread_ts"] = thread
        if metadata:
            args["metadata"] = metadata
        for attempt in range(2):
            try:
                response = await _call("chat.postMessage", self.client.chat_postMessage(**args), channel)
                return str(response["ts"])
            except SlackError as exc:
                if exc.ambiguous and thread:  # what the thread holds is in doubt: read it afresh next time
                    self._threads.pop((channel, thread), None)
                if not exc.ambiguous or find is None or not self.reconcile or attempt:
                    raise
                log.warning("Slack: no confirmation for a message in %s (%s): checking", channel, exc)
                try:
                    found = await find()
                except DigestError:  # cannot look: posting again could post it twice
                    raise exc from None
                if found:
                    return found
        raise AssertionError("unreachable")

    async def _find_top(
        self, channel: str, key: str, item: str, oldest: float, *, strict: bool = False
    ) -> str | None:
        """Our top-level message of this item (a digest's or a week's parent, a notice) in the channel,
        paging back to `oldest` (bounded by time, not by count: a busy channel may hold thousands of
        messages since). strict: a channel that cannot be read raises instead of answering "none"."""
        cursor: str | None = None
        while True:
            try:
                response = await _call(
                    "conversations.history",
                    self.client.conversations_history(
                        channel=channel,
                        limit=200,
                        oldest=f"{oldest:.6f}",
                        cursor=cursor,
                        include_all_metadata=True,
                    ),
                    channel,
                )
            except DigestError as exc:
                if strict:
                    raise
                log.warning("cannot look for an earlier parent in %s: %s", channel, exc)
                return None
            for message in response.get("messages") or []:
                payload = self._payload(message)
                if payload and payload.get("key") == key and payload.get("item") == item:
                    return str(message["ts"])
            cursor = (response.get("response_metadata") or {}).get("next_cursor")
            if not response.get("has_more") or not cursor:
                return None

    async def _thread(self, channel: str, thread: str, fresh: bool = False, strict: bool = False) -> _Thread:
        """Our items in a thread: remembered, else read once from conversations.replies. strict: a
        thread that cannot be read raises instead of looking empty."""
        cached = self._threads.get((channel, thread))
        if cached is not None and not fresh:
            self._threads.move_to_end((channel, thread))
            return cached
        known = _Thread()
        try:
            async for message in self._replies(channel, thread):
                self._learn(known, message)
        except DigestError as exc:  # no history scope, say: post without reconciling, don't remember
            if strict:
                raise
            log.warning(
                "cannot read thread %s in %s to resume (%s): posting what the store lacks",
                thread,
                channel,
                exc,
            )
            return known
        self._remember(channel, thread, known)
        return known

    async def _replies(self, channel: str, thread: str) -> AsyncIterator[dict[str, Any]]:
        cursor: str | None = None
        while True:
            response = await _call(
                "conversations.replies",
                self.client.conversations_replies(
                    channel=channel, ts=thread, limit=200, cursor=cursor, include_all_metadata=True
                ),
                channel,
            )
            for message in response.get("messages") or []:
                yield message
            cursor = (response.get("response_metadata") or {}).get("next_cursor")
            if not response.get("has_more") or not cursor:
                return

    def _learn(self, known: _Thread, message: dict[str, Any]) -> None:
        if self.bot_id and message.get("bot_id") != self.bot_id:
            return
        for shared in message.get("files") or []:
            if shared.get("name") and shared.get("id"):
                known.files[str(shared["name"])] = str(shared["id"])
        payload = self._payload(message)
        if not payload or "key" not in payload or "item" not in payload:
            return
        try:
            part, parts = int(payload.get("part", 0)), int(payload.get("parts", 1))
        except (TypeError, ValueError):  # not a payload we wrote
            return
        entry = known.items.setdefault((str(payload["key"]), str(payload["item"])), _Item(parts))
        entry.ts[part] = str(message["ts"])

    def _payload(self, message: dict[str, Any]) -> dict[str, Any] | None:
        meta = message.get("metadata") or {}
        if meta.get("event_type") != EVENT_TYPE:
            return None
        if self.bot_id and message.get("bot_id") != self.bot_id:
            return None
        return meta.get("event_payload") or {}

    def _remember(self, channel: str, thread: str, known: _Thread) -> None:
        self._threads[(channel, thread)] = known
        while len(self._threads) > self.MAX_THREADS:
            self._threads.popitem(last=False)


@asynccontextmanager
async def open_slack_poster(settings: SlackSettings) -> AsyncIterator[SlackPoster]:
    """A ready SlackPoster: the token checked with auth.test first, one HTTP session for all calls."""
    require_bot_token(settings)
    async with new_session() as session:
        client = make_client(settings, session)
        identity = await verify_token(client)
        log.info("Slack: posting as %s (team %s)", identity.get("user"), identity.get("team"))
        yield SlackPoster(client, bot_id=identity.get("bot_id"))
