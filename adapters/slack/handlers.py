"""The `/digest` command and thread questions as Bolt listeners. Slack wants an acknowledgement within
3 s, so a listener only parses and acks; the slow part (analysis, posting, answering) runs as a tracked
background task afterwards, through the chat facade (bot/ports)."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.client import (
    CHANNEL_ERRORS,
    PLATFORM,
    SlackError,
    _call,
)
from adapters.slack.poster import SlackPoster
from analysis.errors import DigestError
from analysis.labels import label, repeat_card_notice
from analysis.questions.parse import is_question, question_lang
from analysis.render.answer import slack_messages
from analysis.render.slack_blocks import (
    text_message,
    text_messages,
)
from bot.ports.protocols import (
    ChatCommand,
    ChatFacade,
    CommandResult,
    SlackSettings,
    ThreadContext,
)

log = logging.getLogger(__name__)


HISTORY_LIMIT = 20  # earlier thread messages handed to the answerer
WIND_DOWN = 5.0  # seconds of a shutdown's grace left to answers that stop waiting for the model


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

    async def close(
        self, grace: float, wind_down: Callable[[], None] | None = None, last: float = WIND_DOWN
    ) -> None:
        """Let the work finish within `grace`, then cancel what is left. `wind_down` is called `last` seconds
        before the end, so that work still waiting (a thread answer waiting for the model) ends its own way
        (the data's answer, posted) rather than cancelled unanswered."""
        if wind_down is not None and grace > 0:
            last = min(last, grace / 2)
            if await self.drain(grace - last):
                return
            wind_down()
            grace = last
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


# What posting to a response_url raises before Slack answers (slack_bolt's AsyncRespond, slack_sdk's
# AsyncWebhookClient on aiohttp: refused or reset connections, its 30 s timeout; ValueError without a URL).
_RESPOND_ERRORS = (aiohttp.ClientError, TimeoutError, OSError, ValueError)


@dataclass(frozen=True, slots=True)
class _Asker:
    """Who gave a /digest command and where: its private replies go to them."""

    channel: str
    user: str
    respond: Any  # Bolt's respond(), bound to the command's response_url


def _words(value: object) -> str:
    """An exception or a response body as one short line."""
    if isinstance(value, aiohttp.InvalidURL):
        return "InvalidURL"  # its text is the response_url, a credential for this command
    text = " ".join(str(value).split())[:200]
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {text}" if text else type(value).__name__
    return text


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
        asker = _Asker(channel, user, respond)
        try:
            result = await self.service.execute(PLATFORM, channel, cmd, user)
            lang = result.lang
            if result.kind == "card":
                await self._post_card(channel, result, asker)
            elif result.kind == "digest":
                await self._post_day(channel, result, asker)
            else:
                await self._respond(asker, result.text)
        except SlackError as exc:
            cannot = exc.code in CHANNEL_ERRORS
            await self._respond(
                asker, label(lang, "slack_cannot_post", error=exc.code) if cannot else str(exc)
            )
        except DigestError as exc:
            await self._respond(asker, label(lang, "slack_failed", error=str(exc)))
        except Exception as exc:  # a bug: logged with its traceback, reported in one line
            log.exception("Slack: /digest %s failed", cmd.action)
            await self._respond(asker, label(lang, "slack_failed", error=type(exc).__name__))

    async def _post_card(self, channel: str, result: CommandResult, asker: _Asker) -> None:
        commit, analysis, lang = result.commit, result.analysis, result.lang
        assert commit is not None and analysis is not None
        async with self.service.card_turn(PLATFORM, channel, commit, lang) as earlier:
            if earlier is not None:  # asked again within minutes: pointed at, not posted twice
                where = await self.poster.permalink(channel, earlier.message_id)
                await self._respond(
                    asker, repeat_card_notice(lang, commit.short_sha, earlier.minutes_ago, where)
                )
                return
            tz = self.service.channel_tz(PLATFORM, channel, commit.repo)
            posted = await self.poster.post_standalone_card(channel, commit, analysis, lang, tz)
            self.service.record_card(PLATFORM, channel, commit, lang, posted)

    async def _post_day(self, channel: str, result: CommandResult, asker: _Asker) -> None:
        assert result.digest is not None
        outcome = await self.service.post_day(self.poster, channel, result.digest)
        if not outcome.posted:
            await self._respond(asker, label(result.lang, "slack_already_posted"))

    async def _respond(self, asker: _Asker, text: str) -> None:
        """A reply only the person who gave the command sees, through its response_url. When that cannot
        be reached (refused, timed out, expired) the reply still matters (an error, a result they asked
        for): the rest goes through chat.postEphemeral; a warning line either way, never a traceback."""
        messages = text_messages(text)
        for number, message in enumerate(messages):
            try:
                reply = await asker.respond(**message, response_type="ephemeral", replace_original=False)
            except _RESPOND_ERRORS as exc:
                problem = _words(exc)
            else:
                status = getattr(reply, "status_code", 200)
                if status == 200:
                    continue
                problem = f"HTTP {status} {_words(getattr(reply, 'body', '') or '')}".strip()
            lost = await self._post_ephemeral(asker, messages[number:])
            if lost is None:
                log.warning(
                    "Slack: the /digest response_url failed (%s): replied with chat.postEphemeral", problem
                )
            else:
                log.warning(
                    "Slack: the /digest reply to %s in %s is lost: response_url failed (%s), then %s",
                    asker.user,
                    asker.channel,
                    problem,
                    lost,
                )
            return

    async def _post_ephemeral(self, asker: _Asker, messages: list[Any]) -> str | None:
        """The messages through chat.postEphemeral; None when sent, else why not (one line)."""
        try:
            for message in messages:
                await _call(
                    "chat.postEphemeral",
                    self.poster.client.chat_postEphemeral(channel=asker.channel, user=asker.user, **message),
                    asker.channel,
                )
        except DigestError as exc:
            return str(exc)
        return None

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
        if not self.seen.claim(event.get("channel", ""), ts):
            return  # a redelivery
        # whether the thread is ours is for the task to find: loading a digest of hundreds of commits here,
        # on the event loop, would hold every other ack back (40 questions at once: acks past 3 s)
        self.tasks.spawn(self.answer(event, me, mentioned=False), f"answer {ts}")

    async def on_mention(self, event: dict[str, Any], context: Any) -> None:
        if not _from_a_person(event) or not self.seen.claim(event.get("channel", ""), event.get("ts", "")):
            return
        self.tasks.spawn(
            self.answer(event, context.get("bot_user_id"), mentioned=True), f"answer {event.get('ts')}"
        )

    async def answer(self, event: dict[str, Any], me: str | None, mentioned: bool) -> None:
        """Answer in the thread, once: the store knows the questions answered before (a redelivery after a
        restart, another process), where `seen` knows only this process's. The thread's digest or card is
        loaded in a worker thread; a question in a thread not ours is left alone unless we are mentioned."""
        channel, ts, thread = event["channel"], event["ts"], event.get("thread_ts")
        ctx = await asyncio.to_thread(self.service.thread_context, PLATFORM, thread) if thread else None
        if ctx is None and not mentioned:
            return  # not one of our threads: stay silent
        if not await asyncio.to_thread(self.service.begin_answer, PLATFORM, channel, ts):
            log.info("Slack: question %s in %s is answered already: not again", ts, channel)
            return
        answered = False
        try:
            answered = await self._answer(event, ctx, me)
        finally:
            await asyncio.to_thread(self.service.end_answer, PLATFORM, channel, ts, answered)

    async def _answer(self, event: dict[str, Any], ctx: ThreadContext | None, me: str | None) -> bool:
        """Answer in the thread: grounded when it is one of ours, "I don't know which digest" when not.
        True when the answer is posted."""
        channel, thread = event["channel"], event.get("thread_ts") or event["ts"]
        question = event.get("text", "").replace(f"<@{me}>", " ").strip() if me else event.get("text", "")
        question = _unescape(question)
        if ctx is None and not event.get("thread_ts"):  # a mention outside any thread: how to use us
            messages = text_messages(self.service.help_text(question_lang(question)))
        else:
            try:
                if ctx is not None:
                    ctx.history = await self._history(channel, thread, event["ts"], me)
                messages = slack_messages(await self.service.answer(ctx, question))
            except Exception as exc:  # a bug or a broken store: the asker hears it failed, not silence
                log.exception("Slack: answering a thread question failed")
                lang = question_lang(question)
                messages = text_messages(label(lang, "slack_failed", error=type(exc).__name__))
        try:
            await self.poster.post_answer(channel, thread, event["ts"], messages)
        except DigestError as exc:  # archived, deleted, bot removed: nowhere left to answer
            log.warning("Slack: could not answer in %s: %s", channel, exc)
            return False
        return True

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
