"""Slack: posting digests (SlackPoster), the `/digest` command and thread questions (a Bolt AsyncApp),
and the runtime that serves them over Socket Mode or HTTP.

Everything Slack-specific lives here; what to say comes from the application through bot/ports (the chat facade, the
posters' protocols) and how it looks
from analysis.render.slack_blocks. Slack wants an acknowledgement within 3 s, so listeners only parse and
ack; the slow part (analysis, posting) runs as a tracked background task afterwards.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, time
from typing import Any
from zoneinfo import ZoneInfo

import aiohttp
from aiohttp import web
from pydantic import SecretStr
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
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

from adapters.slack_http import front_door_app, http_runner
from analysis.errors import ConfigError, DigestError, ServiceError, Undeliverable
from analysis.labels import label
from analysis.models import Analysis, Commit, Digest, key_of
from analysis.questions.parse import is_question, question_lang
from analysis.render.answer import slack_messages
from analysis.render.markdown import safe_url
from analysis.render.slack_blocks import (
    Message,
    card_messages,
    escape,
    link,
    medium_list_messages,
    parent_message,
    text_message,
    text_messages,
)
from bot.ports.listener import GuardedSite
from bot.ports.protocols import (
    ChatCommand,
    ChatFacade,
    CommandResult,
    Posted,
    SlackSettings,
    ThreadContext,
    part_log,
)

log = logging.getLogger(__name__)

PLATFORM = "slack"
EVENT_TYPE = "digestbot_item"  # message metadata marking our digest items, for reconciliation
EVENTS_PATH = "/slack/events"
TIMEOUT = 30  # seconds per Web API call
AUTH_ERRORS = {"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired"}
# Errors that mean "the bot cannot post here" rather than a fault: told to the user as such.
CHANNEL_ERRORS = {"not_in_channel", "channel_not_found", "is_archived", "restricted_action"}
HISTORY_LIMIT = 20  # earlier thread messages handed to the answerer
NOTICE_LOOKBACK = 7 * 86400  # seconds back a keyed notice is looked for when no start is given
# Methods that create something: a blind retry after Slack accepted one would post it twice.
WRITES = frozenset({"chat.postMessage", "files.completeUploadExternal"})


# --- the Web API client ----------------------------------------------------------------------------


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


def _method_of(request: HttpRequest) -> str:
    return request.url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]


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
            AsyncRateLimitErrorRetryHandler(max_retry_count=5),
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


# --- posting ---------------------------------------------------------------------------------------


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
        blocks = [_banner_block(b) for b in reversed(banners)] + list(message.get("blocks") or [])
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

    async def post_messages(
        self, channel: str, messages: list[Message], thread: str | None = None
    ) -> list[str]:
        """Plain messages (answers, notices) in order; returns their ts."""
        return [await self._post(channel, m, thread=thread) for m in messages]

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
        from analysis.weekly import weekly_key

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


# --- the radar: banners on earlier cards (bot/digest/radar.py) ------------------------------------------------

# Slack's answers for a message we may not (or no longer) edit: skipped, never retried.
UNEDITABLE = {
    "message_not_found",
    "cant_update_message",
    "edit_window_closed",
    "thread_not_found",
    "not_in_channel",
    "channel_not_found",
    "is_archived",
    "missing_scope",
    "restricted_action",
}
BLOCKS_MAX = 50


async def add_banner(poster: SlackPoster, channel: str, message_id: str, text: str) -> bool:
    """chat.update the message with `text` as its first block (once: a message starting with it is left
    as it is). False when Slack says the message cannot be edited."""
    try:
        current = await _find_message(poster, channel, message_id)
        if current is None:
            return False
        blocks = list(current.get("blocks") or [])
        if _has_banner(current, text):
            return True
        if len(blocks) >= BLOCKS_MAX:
            log.info(
                "Slack message %s in %s has %d blocks: no room for a banner", message_id, channel, len(blocks)
            )
            return False
        banner = _banner_block(text)
        fallback = f"{text}\n{current.get('text') or ''}".strip()
        await _call(
            "chat.update",
            poster.client.chat_update(
                channel=channel, ts=message_id, text=fallback, blocks=[banner, *blocks]
            ),
            channel,
        )
        return True
    except SlackError as exc:
        if exc.code in UNEDITABLE:
            return False
        raise


def _banner_block(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": escape(text)}}


async def _find_message(poster: SlackPoster, channel: str, ts: str) -> dict[str, Any] | None:
    """The message with this ts (a parent or a reply), as conversations.replies shows it."""
    async for message in poster._replies(channel, ts):
        if str(message.get("ts")) == ts:
            return message
    return None


def _has_banner(message: dict[str, Any], text: str) -> bool:
    """Banners are the message's leading section blocks (a later one goes on top of an earlier one)."""
    texts = [b.get("text", {}).get("text") for b in message.get("blocks") or [] if isinstance(b, dict)]
    return escape(text) in texts or text in str(message.get("text") or "").split("\n")


@asynccontextmanager
async def open_slack_poster(settings: SlackSettings) -> AsyncIterator[SlackPoster]:
    """A ready SlackPoster: the token checked with auth.test first, one HTTP session for all calls."""
    require_bot_token(settings)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as session:
        client = make_client(settings, session)
        identity = await verify_token(client)
        log.info("Slack: posting as %s (team %s)", identity.get("user"), identity.get("team"))
        yield SlackPoster(client, bot_id=identity.get("bot_id"))


# --- the Bolt app ----------------------------------------------------------------------------------


class BackgroundTasks:
    """The work started after an ack: referenced (so it is not garbage-collected mid-flight), logged
    when it fails, and drained or cancelled on shutdown."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(self._guard(work, name), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _guard(work: Coroutine[Any, Any, None], name: str) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("Slack: %s failed", name)

    async def drain(self, timeout: float | None = None) -> bool:
        """Wait for every task, including ones started meanwhile; False if time ran out."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while self._tasks:
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                return False
            await asyncio.wait(set(self._tasks), timeout=left)
        return True

    async def close(self, grace: float) -> None:
        if not await self.drain(grace):
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def __len__(self) -> int:
        return len(self._tasks)


class _Seen:
    """Messages already handled: a mention arrives as both `message` and `app_mention`, and Slack
    redelivers events it thinks were lost."""

    def __init__(self, size: int = 4096):
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._size = size

    def claim(self, channel: str, ts: str) -> bool:
        if (channel, ts) in self._seen:
            return False
        self._seen[(channel, ts)] = None
        while len(self._seen) > self._size:
            self._seen.popitem(last=False)
        return True


def _ephemeral(text: str) -> dict[str, Any]:
    return {**text_message(text), "response_type": "ephemeral"}


def _from_a_person(event: dict[str, Any]) -> bool:
    """Not a bot (ourselves included), not an edit or deletion: someone wrote this."""
    return (
        bool(event.get("user"))
        and not event.get("bot_id")
        and event.get("subtype") in (None, "thread_broadcast", "file_share")
    )


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


class SlackBot:
    """The listeners and their state. Listeners are small: parse, ack, hand the rest to a task."""

    def __init__(self, settings: SlackSettings, service: ChatFacade, client: AsyncWebClient):
        self.settings = settings
        self.service = service
        self.poster = SlackPoster(client)
        self.tasks = BackgroundTasks()
        self.seen = _Seen()

    def register(self, app: AsyncApp) -> None:
        app.command("/digest")(self.on_digest)
        app.event("message")(self.on_message)
        app.event("app_mention")(self.on_mention)

    # -- /digest --------------------------------------------------------------------------------------
    async def on_digest(self, ack: Any, command: dict[str, Any], respond: Any) -> None:
        channel, text = command.get("channel_id", ""), command.get("text", "")
        lang = self.service.channel_lang(PLATFORM, channel)
        try:
            cmd = self.service.prepare(PLATFORM, channel, text)
        except DigestError as exc:  # bad input: answered at once, privately
            await ack(**_ephemeral(str(exc)))
            return
        if cmd.action == "help":
            await ack(**_ephemeral(self.service.help_text(lang)))
            return
        await ack(**self._working(cmd, lang))  # ack first: the analysis may take minutes
        self.tasks.spawn(
            self.run_command(channel, cmd, command.get("user_id", ""), respond), f"/digest {text}"
        )

    @staticmethod
    def _working(cmd: ChatCommand, lang: str) -> dict[str, Any]:
        if cmd.action == "card" and cmd.ref is not None:
            return _ephemeral(label(lang, "slack_working_card", ref=cmd.ref.value))
        if cmd.action == "day" and cmd.ref is not None:
            return _ephemeral(label(lang, "slack_working_day", day=cmd.ref.value))
        return {}

    async def run_command(self, channel: str, cmd: ChatCommand, user: str, respond: Any) -> None:
        """After the ack: execute, then post the card or digest in the channel, or answer privately.
        Whatever goes wrong, the user hears about it (privately) rather than from silence."""
        lang = self.service.channel_lang(PLATFORM, channel)
        try:
            result = await self.service.execute(PLATFORM, channel, cmd, user)
            lang = result.lang
            if result.kind == "card":
                await self._post_card(channel, result)
            elif result.kind == "digest":
                await self._post_day(channel, result, respond)
            else:
                await self._respond(respond, result.text)
        except SlackError as exc:
            cannot = exc.code in CHANNEL_ERRORS
            await self._respond(
                respond, label(lang, "slack_cannot_post", error=exc.code) if cannot else str(exc)
            )
        except DigestError as exc:
            await self._respond(respond, label(lang, "slack_failed", error=str(exc)))
        except Exception as exc:  # a bug: logged with its traceback, reported in one line
            log.exception("Slack: /digest %s failed", cmd.action)
            await self._respond(respond, label(lang, "slack_failed", error=type(exc).__name__))

    async def _post_card(self, channel: str, result: CommandResult) -> None:
        assert result.commit is not None and result.analysis is not None
        posted = await self.poster.post_standalone_card(
            channel,
            result.commit,
            result.analysis,
            result.lang,
            self.service.channel_tz(PLATFORM, channel, result.commit.repo),
        )
        self.service.record_card(PLATFORM, channel, result.commit, result.lang, posted)

    async def _post_day(self, channel: str, result: CommandResult, respond: Any) -> None:
        assert result.digest is not None
        outcome = await self.service.post_day(self.poster, channel, result.digest)
        if not outcome.posted:
            await self._respond(respond, label(result.lang, "slack_already_posted"))

    @staticmethod
    async def _respond(respond: Any, text: str) -> None:
        for message in text_messages(text):
            reply = await respond(**message, response_type="ephemeral", replace_original=False)
            if getattr(reply, "status_code", 200) != 200:
                log.warning("Slack: response_url answered %s", reply.status_code)

    # -- thread questions -------------------------------------------------------------------------------
    async def on_message(self, event: dict[str, Any], context: Any) -> None:
        thread, ts = event.get("thread_ts"), event.get("ts", "")
        if not _from_a_person(event) or not thread or thread == ts:
            return  # bots, edits and top-level chatter are not questions to us
        me = context.get("bot_user_id")
        if me and f"<@{me}>" in event.get("text", ""):
            return  # a mention: the app_mention event answers it
        if not is_question(event.get("text", "")):
            return  # "thanks!" in our thread is not a question: only mentions always get an answer
        ctx = self.service.thread_context(PLATFORM, thread)
        if ctx is None or not self.seen.claim(event.get("channel", ""), ts):
            return  # not one of our threads: stay silent
        self.tasks.spawn(self.answer(event, ctx, me), f"answer {ts}")

    async def on_mention(self, event: dict[str, Any], context: Any) -> None:
        if not _from_a_person(event) or not self.seen.claim(event.get("channel", ""), event.get("ts", "")):
            return
        thread = event.get("thread_ts")
        ctx = self.service.thread_context(PLATFORM, thread) if thread else None
        self.tasks.spawn(self.answer(event, ctx, context.get("bot_user_id")), f"answer {event.get('ts')}")

    async def answer(self, event: dict[str, Any], ctx: ThreadContext | None, me: str | None) -> None:
        """Answer in the thread: grounded when it is one of ours, "I don't know which digest" when not."""
        channel, thread = event["channel"], event.get("thread_ts") or event["ts"]
        question = event.get("text", "").replace(f"<@{me}>", " ").strip() if me else event.get("text", "")
        question = _unescape(question)
        if ctx is None and not event.get("thread_ts"):  # a mention outside any thread: how to use us
            messages = text_messages(self.service.help_text(question_lang(question)))
        else:
            if ctx is not None:
                ctx.history = await self._history(channel, thread, event["ts"], me)
            messages = slack_messages(await self.service.answer(ctx, question))
        await self.poster.post_messages(channel, messages, thread=thread)

    async def _history(
        self, channel: str, thread: str, current: str, me: str | None
    ) -> list[tuple[str, str]]:
        """The thread's earlier messages, oldest first: (assistant|user, text)."""
        try:
            response = await _call(
                "conversations.replies",
                self.poster.client.conversations_replies(channel=channel, ts=thread, limit=200),
                channel,
            )
        except DigestError as exc:
            log.warning("cannot read the thread for context: %s", exc)
            return []
        history = []
        for message in response.get("messages") or []:
            if message.get("ts") == current or not message.get("text"):
                continue
            ours = message.get("user") == me or (
                message.get("bot_id") and message.get("bot_id") == self.poster.bot_id
            )
            history.append(("assistant" if ours else "user", _unescape(message["text"])))
        return history[-HISTORY_LIMIT:]


class DigestApp(AsyncApp):
    """The Bolt app, with its listeners' state at hand (`bot`) for the runtime and tests."""

    bot: SlackBot


class _OurClientWins(logging.Filter):
    """Bolt reads SLACK_BOT_TOKEN from the environment by itself and, given our client too (the one with
    SLACK_API_URL and the safe retry handlers), warns on every start that the token is unused. That is
    the intended outcome, not a problem: only this one message is dropped."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != warning_client_prioritized_and_token_skipped()


_BOLT_LOG = logging.getLogger("slack_bolt.AsyncApp")  # the logger AsyncApp warns on (get_bolt_logger)
_BOLT_LOG.addFilter(_OurClientWins())


def build_app(
    settings: SlackSettings, service: ChatFacade, client: AsyncWebClient | None = None
) -> DigestApp:
    """The Bolt app: `/digest`, thread replies and mentions. HTTP requests must carry a valid
    signature (SLACK_SIGNING_SECRET; Bolt answers 401 otherwise); Socket Mode needs none."""
    client = client or make_client(settings)
    app = DigestApp(
        name="digestbot",
        client=client,
        signing_secret=_secret(settings.slack_signing_secret) or "",
        ignoring_self_events_enabled=True,
        # Our listeners only parse, ack and spawn a task, so running them before the response costs
        # nothing; it keeps Bolt from running them in unreferenced futures of its own.
        process_before_response=True,
    )
    app.bot = SlackBot(settings, service, client)
    app.bot.register(app)
    return app


def web_app(app: AsyncApp, signing_secret: str, service: ChatFacade) -> web.Application:
    """The aiohttp application of HTTP mode: Slack's request URL is /slack/events, behind a front door
    that authenticates before parsing (adapters/slack_http.py); /healthz for probes (its status only,
    no subscription named). /metrics is not here: this port faces the internet, metrics are served on
    METRICS_HOST:METRICS_PORT only."""
    application = front_door_app(app, signing_secret, EVENTS_PATH)

    async def healthz(request: web.Request) -> web.Response:
        # The same status as the metrics port's, but neither which subscriptions are broken nor why.
        broken = service.broken_subscriptions()
        if broken:
            return web.Response(
                status=503, text=f"unhealthy: {broken} subscription(s); see digestbot status\n"
            )
        return web.Response(text="ok")

    application.router.add_get("/healthz", healthz)
    return application


# --- the runtime -----------------------------------------------------------------------------------


def slack_mode(settings: SlackSettings) -> str:
    """ "socket" when SLACK_APP_TOKEN is set, else "http" when SLACK_SIGNING_SECRET is, else ConfigError."""
    if _secret(settings.slack_app_token):
        return "socket"
    if _secret(settings.slack_signing_secret):
        return "http"
    raise ConfigError(
        "Slack needs SLACK_APP_TOKEN (Socket Mode, xapp-…) or SLACK_SIGNING_SECRET (HTTP mode, on SLACK_PORT)"
    )


class SlackRuntime:
    """The Slack side of `digestbot run`: the Bolt app over Socket Mode or HTTP, and `poster` for the
    scheduler (same client, same reconciliation state)."""

    def __init__(
        self,
        settings: SlackSettings,
        service: ChatFacade,
        *,
        host: str = "0.0.0.0",
        port: int | None = None,
        grace: float = 30.0,
    ):
        self.settings = settings
        self.service = service
        self.host = host  # HTTP mode: Slack must reach it (behind a reverse proxy with TLS)
        self.port = settings.slack_port if port is None else port  # 0: any free port (tests)
        self.grace = grace  # seconds in-flight work may take to finish on stop()
        self.mode: str | None = None
        self.app: DigestApp | None = None
        self.poster: SlackPoster | None = None
        self._session: aiohttp.ClientSession | None = None
        self._socket: AsyncSocketModeHandler | None = None
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        self.mode = slack_mode(self.settings)
        require_bot_token(self.settings)
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT))
        try:
            client = make_client(self.settings, self._session)
            identity = await verify_token(client)
            self.app = build_app(self.settings, self.service, client)
            self.poster = self.app.bot.poster
            self.poster.bot_id = identity.get("bot_id")
            await (self._start_socket() if self.mode == "socket" else self._start_http())
        except BaseException:
            await self.stop()
            raise
        log.info("Slack adapter running as %s (%s mode)", identity.get("user"), self.mode)

    async def _start_socket(self) -> None:
        assert self.app is not None
        self._socket = AsyncSocketModeHandler(self.app, _secret(self.settings.slack_app_token))
        try:
            await self._socket.connect_async()
        except SlackApiError as exc:
            code = str(exc.response.get("error"))
            raise ConfigError(
                f"Slack refused Socket Mode ({code}): check SLACK_APP_TOKEN (xapp-…, connections:write)"
            ) from None

    async def _start_http(self) -> None:
        assert self.app is not None
        self._runner = http_runner(
            web_app(self.app, _secret(self.settings.slack_signing_secret) or "", self.service)
        )
        await self._runner.setup()
        try:
            await GuardedSite(self._runner, self.host, self.port).start()
        except OSError as exc:
            raise ConfigError(
                f"cannot listen on {self.host}:{self.port} (SLACK_PORT): {exc.strerror}"
            ) from None

    @property
    def http_port(self) -> int | None:
        """The port HTTP mode listens on (SLACK_PORT; the real one when it was 0)."""
        if self._runner is None or not self._runner.addresses:
            return None
        return int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        """Stop taking requests, let in-flight work finish (up to `grace`), then close the session."""
        if self._socket is not None:
            await self._socket.close_async()
            self._socket = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.app is not None:
            await self.app.bot.tasks.close(self.grace)
        if self._session is not None:
            await self._session.close()
            self._session = None


__all__ = [
    "BackgroundTasks",
    "DigestApp",
    "SlackBot",
    "SlackError",
    "SlackPoster",
    "SlackRuntime",
    "build_app",
    "make_client",
    "open_slack_poster",
    "require_bot_token",
    "slack_mode",
    "verify_token",
    "web_app",
]
