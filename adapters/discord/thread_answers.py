"""Thread questions on Discord (bot.ports.protocols.ThreadAnswerer): the answer made from the thread so far
and posted in it as a reply, and whether such a reply is there already. Everything goes through the REST
client by ids, so a question taken over after a restart (no gateway message at hand) is answered alike.
When to answer, and answering once across a crash, are bot/'s (bot/chat/pending.py)."""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import discord

from adapters.discord.client import (
    DELIVERY_ERRORS,
    NO_MENTIONS,
    PLATFORM,
    Lost,
    deadline,
    deliver,
    describe_error,
)
from adapters.discord.keys import key_in
from adapters.discord.reconcile import nonce_of
from analysis.errors import ServiceError
from analysis.labels import label
from analysis.render.answer import discord_chunks
from analysis.render.discord_embeds import content_chunks
from bot.ports.protocols import ChatFacade, Question, ThreadContext

log = logging.getLogger(__name__)

HISTORY_MESSAGES = 20  # thread messages given to the answerer as context
LOOK_AHEAD = 200  # messages after a question searched for our reply to it
STARTERS_KEPT = 1024  # threads whose starter's key (or its lack) is remembered: one read per thread, bounded


def question_of(message: discord.Message, mentioned: bool) -> Question:
    """A gateway message as a question."""
    reference = message.reference.message_id if message.reference else None
    return Question(
        platform=PLATFORM,
        channel=str(message.channel.id),
        message_id=str(message.id),
        text=message.content or "",
        asker=str(message.author.id),
        mentioned=mentioned,
        asked_at=message.created_at,
        thread=str(message.channel.id) if isinstance(message.channel, discord.Thread) else None,
        replied_to=str(reference) if reference else None,
    )


class ThreadAnswers:
    """Answers in Discord threads, through the bot's REST client."""

    platform = PLATFORM

    def __init__(self, client: discord.Client, service: ChatFacade):
        self.client = client
        self.service = service
        self._at_hand: dict[str, discord.Message] = {}  # the gateway's messages being answered
        # thread id → the digest key its starter message carries, None when it carries none: a busy
        # server's threads that are not ours cost one read each, not one per message
        self._starters: OrderedDict[str, str | None] = OrderedDict()

    @contextmanager
    def at_hand(self, message: discord.Message) -> Iterator[None]:
        """The gateway's message while its question is answered: its channel object and reference are
        used (a question taken over after a restart has only its ids)."""
        self._at_hand[str(message.id)] = message
        try:
            yield
        finally:
            self._at_hand.pop(str(message.id), None)

    async def thread_key(self, question: Question) -> str | None:
        """The digest key our starter message of the question's thread carries in its footer (set by the
        poster on every digest parent, by /digest on every card), for a thread the store has no record of
        (bot.ports.protocols.ThreadKeys). A thread started from a message shares its id, and the message
        is in the thread's parent channel. None: the starter is not ours (or there is none), or it cannot
        be read (not remembered then: the next question tries again)."""
        thread = question.thread
        if not thread:
            return None
        if thread in self._starters:
            self._starters.move_to_end(thread)
            return self._starters[thread]
        try:
            parent = await self._parent_of(question)
            if parent is None:
                key = None
            else:
                async with deadline():
                    starter = await self.client.get_partial_messageable(parent).fetch_message(int(thread))
                key = key_in(starter, self.client.user.id if self.client.user else None)
        except discord.NotFound:  # a thread started from no message, or its starter deleted: not ours
            key = None
        except (*DELIVERY_ERRORS, discord.DiscordException) as exc:
            log.warning("Discord: cannot read the starter of thread %s: %s", thread, describe_error(exc))
            return None
        self._starters[thread] = key
        while len(self._starters) > STARTERS_KEPT:
            self._starters.popitem(last=False)
        return key

    async def _parent_of(self, question: Question) -> int | None:
        """The id of the channel the question's thread was started in: the gateway's thread object when
        at hand (or cached), else read over REST (a question taken over after a restart)."""
        assert question.thread is not None
        message = self._at_hand.get(question.message_id)
        channel: Any = message.channel if message else self.client.get_channel(int(question.thread))
        if not isinstance(channel, discord.Thread):
            async with deadline():
                channel = await self.client.fetch_channel(int(question.thread))
        return channel.parent_id if isinstance(channel, discord.Thread) else None

    async def answered(self, question: Question) -> bool:
        """Whether our reply to the question is in its channel (the history does not return nonces:
        the reply names the question it answers)."""
        channel = self.client.get_partial_messageable(int(question.channel))
        try:
            async with deadline():
                async for message in channel.history(
                    limit=LOOK_AHEAD, after=discord.Object(id=int(question.message_id))
                ):
                    if self._mine(message) and _replies_to(message, question.message_id):
                        return True
        except DELIVERY_ERRORS as exc:
            raise ServiceError(f"cannot read channel {question.channel}: {describe_error(exc)}") from None
        return False

    async def reply(self, question: Question, ctx: ThreadContext | None) -> bool:
        """Answer in the thread; True once the answer is posted. A mention outside a thread, in a channel
        that is not ours, is no question to us: nothing is posted."""
        if ctx is None and not question.thread:
            return False
        where = question.channel
        message = self._at_hand.get(question.message_id)
        channel: Any = message.channel if message else self.client.get_partial_messageable(int(where))
        asked: Any = message or channel.get_partial_message(int(question.message_id))
        text = self._text(question.text)
        try:
            async with _typing(channel):
                if ctx is not None:
                    ctx.history = await self._history(channel, asked)
                chunks = discord_chunks(await self.service.answer(ctx, text))
        except Lost as exc:  # the thread is gone or closed to us: nowhere to answer
            log.warning("Discord: could not answer in %s: %s", where, exc)
            return False
        except Exception:  # a bug or a broken store: the asker hears it failed (not which class), not silence
            log.exception("Discord: answering a thread question failed")
            chunks = content_chunks(label(self.service.channel_lang(PLATFORM, where), "failed_inside"))
        try:
            for number, chunk in enumerate(chunks):
                await deliver(
                    channel.send(
                        chunk,
                        # Another service on the same token gets the same message from the gateway and
                        # answers it too: the same nonce (enforced) makes Discord create each part once.
                        nonce=nonce_of(where, question.message_id, "answer", number),
                        allowed_mentions=NO_MENTIONS,
                        # still answered when the question was deleted meanwhile
                        reference=asked.to_reference(fail_if_not_exists=False) if number == 0 else None,
                        mention_author=False,
                    )
                )
        except Lost as exc:  # e.g. the thread was archived and locked meanwhile
            log.warning("Discord: could not answer in %s: %s", where, exc)
            return False
        return True

    async def notify(self, question: Question, text: str) -> bool:
        """A notice in the question's thread, as a reply to it (the thread's answers are capped); True once
        posted. Its nonce is the question's own: delivered again, Discord creates it once."""
        where = question.channel
        message = self._at_hand.get(question.message_id)
        channel: Any = message.channel if message else self.client.get_partial_messageable(int(where))
        asked: Any = message or channel.get_partial_message(int(question.message_id))
        try:
            await deliver(
                channel.send(
                    content_chunks(text)[0],
                    nonce=nonce_of(where, question.message_id, "notice", 0),
                    allowed_mentions=NO_MENTIONS,
                    reference=asked.to_reference(fail_if_not_exists=False),
                    mention_author=False,
                )
            )
        except Lost as exc:
            log.warning("Discord: could not post a notice in %s: %s", where, exc)
            return False
        return True

    def _mine(self, message: discord.Message) -> bool:
        return self.client.user is not None and message.author.id == self.client.user.id

    def _text(self, text: str) -> str:
        if self.client.user is not None:
            text = re.sub(rf"<@!?{self.client.user.id}>", "", text)
        return " ".join(text.split())

    async def _history(self, channel: Any, before: Any) -> list[tuple[str, str]]:
        """The thread so far, oldest first, as (speaker, text); messages without readable text skipped."""
        history: list[tuple[str, str]] = []
        try:
            async with deadline():
                async for earlier in channel.history(limit=HISTORY_MESSAGES, before=before):
                    text = (earlier.content or "").strip()
                    if not text:
                        continue
                    history.append(("assistant" if self._mine(earlier) else "user", text))  # no names
        except DELIVERY_ERRORS as exc:  # e.g. no Read Message History: answer without it
            log.warning("Discord: cannot read thread %s for context: %s", channel.id, describe_error(exc))
            return []
        history.reverse()
        return history


def _replies_to(message: discord.Message, question: str) -> bool:
    reference = message.reference
    return reference is not None and str(reference.message_id) == question


@asynccontextmanager
async def _typing(channel: Any) -> AsyncIterator[None]:
    """ "digestbot is typing…" while the answer is made. A thread that is gone (404) or closed to us
    (403) is Lost; any other failure only costs the indicator."""
    typing = channel.typing()
    try:
        await deliver(typing.__aenter__())
    except Lost as exc:
        if exc.status in (403, 404) or exc.code == 50083:  # 50083: archived
            raise
        yield
        return
    try:
        yield
    finally:
        await typing.__aexit__(None, None, None)
