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
from adapters.slack.thread_answers import ThreadAnswers, question_of
from analysis.errors import DigestError, Flooded
from analysis.labels import label, repeat_card_notice
from analysis.questions.parse import is_question
from analysis.render.slack_blocks import (
    text_message,
    text_messages,
)
from bot.ports.protocols import (
    ChatCommand,
    ChatFacade,
    CommandResult,
    SlackSettings,
)

log = logging.getLogger(__name__)


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


def _in_channel(text: str) -> dict[str, Any]:
    """An acknowledgement the whole channel sees (the channel's one notice a minute of a flood)."""
    return {**text_message(text), "response_type": "in_channel"}


def _from_a_person(event: dict[str, Any]) -> bool:
    """Not a bot (ourselves included), not an edit or deletion: someone wrote this."""
    return (
        bool(event.get("user"))
        and not event.get("bot_id")
        and event.get("subtype") in (None, "thread_broadcast", "file_share")
    )


class SlackBot:
    """The listeners and their state. Listeners are small: parse, ack, hand the rest to a task."""

    def __init__(self, settings: SlackSettings, service: ChatFacade, client: AsyncWebClient):
        self.settings = settings
        self.service = service
        self.poster = SlackPoster(client)
        self.answers = ThreadAnswers(self.poster, service)
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
        except Flooded as exc:  # past the channel's cards a minute: said in the ack, which costs no call
            await ack(**(_in_channel(str(exc)) if exc.public else _ephemeral(str(exc))))
            return
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
        except Exception:  # a bug: logged with its traceback, reported in one line (no class name)
            log.exception("Slack: /digest %s failed", cmd.action)
            await self._respond(asker, label(lang, "failed_inside"))

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
        self.answer(event, me, mentioned=False)

    async def on_mention(self, event: dict[str, Any], context: Any) -> None:
        if not _from_a_person(event) or not self.seen.claim(event.get("channel", ""), event.get("ts", "")):
            return
        self.answer(event, context.get("bot_user_id"), mentioned=True)

    def answer(self, event: dict[str, Any], me: str | None, mentioned: bool) -> None:
        """Answer in the thread, once, in a task: the store knows the questions answered before (a
        redelivery after a restart, another process) and answers those a crash left (bot/ports)."""
        self.answers.me = me or self.answers.me
        question = question_of(event, mentioned)
        self.tasks.spawn(self.service.answer_once(self.answers, question), f"answer {question.message_id}")
