"""Thread questions on Slack (bot.ports.protocols.ThreadAnswerer): the answer made from the thread so far
and posted in it, and whether an answer is there already (read back by its metadata). When to answer, and
answering once across a crash, are bot/'s (bot/chat/pending.py)."""

from __future__ import annotations

import logging
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

from adapters.slack.client import PLATFORM, _call
from adapters.slack.poster import EVENT_TYPE, SlackPoster
from analysis.errors import DigestError
from analysis.labels import label
from analysis.questions.parse import question_lang
from analysis.render.answer import slack_messages
from analysis.render.slack_blocks import text_messages
from bot.ports.protocols import ChatFacade, Question, ThreadContext

log = logging.getLogger(__name__)

HISTORY_LIMIT = 20  # earlier thread messages handed to the answerer
PARENTS_KEPT = 1024  # threads whose parent's key (or its lack) is remembered: one read per thread, bounded


def question_of(event: dict[str, Any], mentioned: bool) -> Question:
    """A message or app_mention event as a question."""
    return Question(
        platform=PLATFORM,
        channel=event["channel"],
        message_id=event["ts"],
        text=event.get("text", ""),
        asker=event.get("user", ""),
        mentioned=mentioned,
        asked_at=datetime.fromtimestamp(float(event["ts"]), UTC),
        thread=event.get("thread_ts"),
    )


def unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


class ThreadAnswers:
    """Answers in Slack threads, through the poster's client."""

    platform = PLATFORM

    def __init__(self, poster: SlackPoster, service: ChatFacade, me: str | None = None):
        self.poster = poster
        self.service = service
        self.me = me  # our bot user: its mention is not part of a question, its messages are ours
        # (channel, thread) → the digest key its parent carries, None when it carries none: a busy channel's
        # threads that are not ours cost one read each, not one per message
        self._parents: OrderedDict[tuple[str, str], str | None] = OrderedDict()

    async def thread_key(self, question: Question) -> str | None:
        """The digest key our parent message of the question's thread carries in its metadata (set by the
        poster on every digest parent and card), for a thread the store has no record of (bot.ports.protocols
        .ThreadKeys). None: the parent is not ours, or the thread cannot be read (not remembered then)."""
        if not question.thread:
            return None
        where = (question.channel, question.thread)
        if where in self._parents:
            self._parents.move_to_end(where)
            return self._parents[where]
        try:
            response = await _call(
                "conversations.replies",
                self.poster.client.conversations_replies(
                    channel=question.channel, ts=question.thread, limit=1, include_all_metadata=True
                ),
                question.channel,
            )
        except DigestError as exc:
            log.warning(
                "Slack: cannot read the parent of thread %s in %s: %s", question.thread, question.channel, exc
            )
            return None
        parent = next(iter(response.get("messages") or []), {})
        key = self._key_of(parent) if parent.get("ts") == question.thread else None
        self._parents[where] = key
        while len(self._parents) > PARENTS_KEPT:
            self._parents.popitem(last=False)
        return key

    def _key_of(self, message: dict[str, Any]) -> str | None:
        """The key of a digest parent or a standalone card that we posted; None for anything else."""
        if self.me and message.get("user") != self.me:
            return None  # metadata another app wrote names nothing of ours
        meta = message.get("metadata") or {}
        payload = meta.get("event_payload") if meta.get("event_type") == EVENT_TYPE else None
        if not isinstance(payload, dict) or payload.get("item") not in ("parent", "card"):
            return None
        key = payload.get("key")
        return key if isinstance(key, str) and key else None

    async def answered(self, question: Question) -> bool:
        """Whether a part of the question's answer is in the thread (its metadata names the question)."""
        thread = question.thread or question.message_id
        return await self.poster.answer_posted(question.channel, thread, question.message_id)

    async def reply(self, question: Question, ctx: ThreadContext | None) -> bool:
        """Answer in the thread: grounded when it is one of ours, "I don't know which digest" when not,
        how to use us when mentioned outside any thread. True when the answer is posted."""
        channel, me = question.channel, self.me
        thread = question.thread or question.message_id
        text = question.text.replace(f"<@{me}>", " ").strip() if me else question.text
        text = unescape(text)
        if ctx is None and not question.thread:  # a mention outside any thread: how to use us
            messages = text_messages(self.service.help_text(question_lang(text)))
        else:
            try:
                if ctx is not None:
                    ctx.history = await self._history(channel, thread, question.message_id)
                messages = slack_messages(await self.service.answer(ctx, text))
            except (
                Exception
            ):  # a bug or a broken store: the asker hears it failed (not which class), not silence
                log.exception("Slack: answering a thread question failed")
                messages = text_messages(label(question_lang(text), "failed_inside"))
        try:
            await self.poster.post_answer(channel, thread, question.message_id, messages)
        except DigestError as exc:  # archived, deleted, bot removed: nowhere left to answer
            log.warning("Slack: could not answer in %s: %s", channel, exc)
            return False
        return True

    async def notify(self, question: Question, text: str) -> bool:
        """A notice in the question's thread (the thread's answers are capped); True once posted."""
        thread = question.thread or question.message_id
        try:
            await self.poster.post_answer(question.channel, thread, question.message_id, text_messages(text))
        except DigestError as exc:
            log.warning("Slack: could not post a notice in %s: %s", question.channel, exc)
            return False
        return True

    async def _history(self, channel: str, thread: str, current: str) -> list[tuple[str, str]]:
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
            ours = message.get("user") == self.me or (
                message.get("bot_id") and message.get("bot_id") == self.poster.bot_id
            )
            history.append(("assistant" if ours else "user", unescape(message["text"])))
        return history[-HISTORY_LIMIT:]
