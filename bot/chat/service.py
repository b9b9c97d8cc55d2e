"""Platform-neutral chat handling, shared by the Slack and Discord adapters: finding a channel's
repository, producing a commit card or a day's digest, managing subscriptions, and finding what a thread
question is about (the commands themselves are parsed in bot/chat/commands.py). Adapters only translate
between their platform and these calls.

Over 400 lines because it is the one chat core both adapters call, each command a short method over the same
store, subscriptions and rates; the answers, cards, rates and recovery live in modules of their own."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from analysis.errors import ConfigError, DigestError, Flooded, InputError
from analysis.labels import label, zone_warning
from analysis.models import Analysis, Commit, Digest
from analysis.questions.document import Answer
from analysis.refs import Ref
from analysis.window import refuse_unfinished
from bot.chat import pending
from bot.chat.answers import answer_question
from bot.chat.card_turns import CardTurns, EarlierCard
from bot.chat.commands import parse_command, usage
from bot.chat.floods import AnswerFloods, CardFloods, ThreadLimiter, refusal_text
from bot.chat.rates import ChatRates
from bot.chat.recover import lost_digest
from bot.config.settings import Settings, zone
from bot.config.subscriptions import Registry, Subscription
from bot.delivery.posting import post_digest
from bot.digest.analyzers import Analyzer, HeuristicAnalyzer
from bot.digest.pipeline import analyse_ref, build_digest, load_digest, pick_branch
from bot.digest.radar import with_original_notes
from bot.monitoring import metrics
from bot.monitoring.logs import secrets_of
from bot.ports.protocols import (
    ChatCommand,
    Clock,
    CommandResult,
    CommitSource,
    LostCommits,
    Poster,
    PostResult,
    Question,
    ThreadAnswerer,
    ThreadContext,
)
from bot.ports.secrets import scrub
from bot.store.db import Store
from bot.store.health import database_error, is_known
from bot.store.runs import subscribed_window

log = logging.getLogger(__name__)


class ChatService:
    """The operations behind every chat surface. One instance per process, shared by adapters."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        git_dirs: dict[str, Path] | None = None,
        source_factory: Callable[[str], CommitSource] | None = None,
        analyzer: Analyzer | None = None,
        make_analyzer: Callable[[], Analyzer] | None = None,
        answerer: Any = None,
        make_answerer: Callable[[], Any] | None = None,
        clock: Clock = lambda: datetime.now(UTC),
    ):
        """Built by bot/app.py, which gives it its sources and how to make the analyser and the answerer
        (made on first use); without them a card or a day has no source and only the heuristic ranks."""
        self.settings = settings
        self.store = store
        self.clock = clock  # which day has ended, for /digest YYYY-MM-DD
        self.git_dirs = dict(git_dirs or {})  # repo → local clone, from subscriptions
        self._source_factory = source_factory
        self._analyzer = analyzer
        self._make_analyzer = make_analyzer or HeuristicAnalyzer
        self._answerer = answerer
        self._make_answerer = make_answerer
        self.subscriptions = Registry(store)  # the service replaces it with one that knows the config file
        self.qa_limiter = ThreadLimiter(settings.qa_calls_per_minute)  # model calls per thread and minute
        self.card_turns = CardTurns(store)  # one card per channel at a time, not ten copies of one
        self.rates = ChatRates(settings, store)  # new model analyses and new days one person may ask for
        self.card_floods = CardFloods(settings.chat_channel_cards_per_minute)  # card requests per channel
        self.answer_floods = AnswerFloods(  # thread answers per thread, per asker and in all
            settings.qa_answers_per_minute,
            settings.qa_asker_answers_per_minute,
            settings.qa_answers_per_minute_all,
        )
        _ = self.answerer  # made now, at start: the first question must not wait for the client's import
        self.stopping = asyncio.Event()  # set by the platforms' stop: model waits end, the data answers
        self.claimant = pending.Claimant()  # this process, as its claims on thread questions name it

    def stop_waiting(self) -> None:
        self.stopping.set()

    # -- wiring ---------------------------------------------------------------------------------
    def source(self, repo: str) -> CommitSource:
        if self._source_factory is None:
            raise ConfigError("no commit source configured for chat commands")
        return self._source_factory(repo)

    @property
    def analyzer(self) -> Analyzer:
        if self._analyzer is None:
            self._analyzer = self._make_analyzer()
        return self._analyzer

    def channel_repo(self, platform: str, channel: str) -> str | None:
        """The repository a bare SHA refers to in this channel: its subscription, else the repository
        of the latest digest posted here, else DIGEST_REPO."""
        repo = self.subscriptions.repo_for_channel(platform, channel)
        if repo:
            return repo
        rows = self.store.query(
            "SELECT digest_key FROM posts WHERE platform = ? AND channel = ? ORDER BY created_at DESC LIMIT 1",
            [platform, channel],
        )
        if rows:
            return rows[0]["digest_key"].removeprefix("card:").split("@", 1)[0]
        return self.settings.digest_repo

    def channel_lang(self, platform: str, channel: str) -> str:
        return self.subscriptions.lang_for_channel(platform, channel) or self.settings.digest_lang

    # -- commands ---------------------------------------------------------------------------------
    def prepare(self, platform: str, channel: str, text: str) -> ChatCommand:
        """Parse `/digest …` for this channel: fast (no I/O beyond SQLite), so adapters can call it
        before acknowledging and answer bad input at once. Raises InputError; Flooded for a card past the
        channel's CHAT_CHANNEL_CARDS_PER_MINUTE (counted here, before any work is started for it)."""
        cmd = parse_command(text, self.channel_repo(platform, channel))
        if cmd.action == "card" and (refused := self.card_floods.admit(f"{platform}:{channel}")):
            if refused.notice:  # once a minute a channel: a flood must not flood the log either
                log.info(
                    "/digest cards in %s:%s: past %d a minute, refused", platform, channel, refused.limit
                )
            raise Flooded(refusal_text(self.channel_lang(platform, channel), refused), public=refused.notice)
        return cmd

    async def execute(self, platform: str, channel: str, cmd: ChatCommand, user: str = "") -> CommandResult:
        """The slow part, after the acknowledgement. User errors come back as an "error" result."""
        lang = self.channel_lang(platform, channel)
        try:
            if cmd.action == "help":
                return CommandResult("message", lang, text=usage(lang))
            if cmd.action == "card":
                assert cmd.ref is not None
                tz = self.channel_tz(platform, channel, cmd.ref.repo)
                commit, analysis = await self.card(
                    cmd.ref, lang, tz, asker=f"{platform}:{user}" if user else ""
                )
                return CommandResult("card", lang, commit=commit, analysis=analysis)
            if cmd.action == "day":
                assert cmd.ref is not None
                repo = cmd.repo or self.channel_repo(platform, channel)
                if not repo:
                    raise InputError("which repository? /digest YYYY-MM-DD owner/name")
                tz_name = self.channel_tz(platform, channel, repo)
                # Only a day that has ended: posted, a day is frozen in the channel, and the scheduled
                # post of that day would then never add what landed after (bot/delivery/posting.py).
                refuse_unfinished(cmd.ref.day, zone(tz_name), self.clock())
                asker = f"{platform}:{user}" if user else ""
                # the channel's subscription's own digest of the day: its window after a zone change too
                after = subscribed_window(
                    self.store, self.posting(platform, channel, repo), tz_name, cmd.ref.day
                )
                digest = await self.day_digest(repo, cmd.ref.day, lang, tz_name, asker=asker, after=after)
                return CommandResult("digest", lang, digest=digest)
            if cmd.action == "subscribe":
                assert cmd.repo is not None
                self.check_room(platform, channel, cmd.repo)  # before any request to the repository's host
                await self.check_repo(cmd.repo)  # now, not at tomorrow's run
            return CommandResult("message", lang, text=self.manage(platform, channel, cmd, user, lang))
        except DigestError as exc:  # a service's error may quote our request, token included
            return CommandResult("error", lang, text=scrub(str(exc), secrets_of(self.settings)))
        except sqlite3.Error as exc:  # read-only, disk full, busy: the operator's to fix, named in the log
            if is_known(exc):
                log.warning(
                    "/digest %s: %s", cmd.action, database_error(exc, self.store.path, Store.BUSY_TIMEOUT)
                )
            else:
                log.exception("/digest %s: the database failed", cmd.action)
            return CommandResult("error", lang, text=label(lang, "store_failed"))

    def check_room(self, platform: str, channel: str, repo: str) -> None:
        """InputError when `repo` may not be subscribed here from chat: the config file posts it here already
        (a chat copy would post the day twice, and chat cannot remove the file's), or a cap is reached."""
        for sub in self.subscriptions.for_channel(platform, channel):
            if sub.origin == "file" and sub.repo.lower() == repo.lower():
                raise InputError(
                    f"{sub.repo} is posted here by the configuration file ({sub.schedule} {sub.timezone},"
                    f" {sub.lang}): change it there"
                )
        self.subscriptions.chat.check_room(
            platform,
            channel,
            repo,
            self.settings.chat_subscriptions_per_channel,
            self.settings.chat_subscriptions_max,
        )

    def channel_tz(self, platform: str, channel: str, repo: str | None = None) -> str:
        """The zone of the channel's subscription (to `repo` when given), else DIGEST_TZ."""
        sub = self.posting(platform, channel, repo)
        return sub.timezone if sub is not None else self.settings.digest_tz

    def posting(self, platform: str, channel: str, repo: str | None) -> Subscription | None:
        """The channel's (first) subscription, to `repo` when given."""
        return next(
            (s for s in self.subscriptions.for_channel(platform, channel) if repo in (None, s.repo)), None
        )

    def manage(self, platform: str, channel: str, cmd: ChatCommand, user: str, lang: str) -> str:
        """subscribe / unsubscribe / list, stored in SQLite and live at once."""
        zh = lang == "zh"
        subs = self.subscriptions
        if cmd.action == "list":
            mine = subs.for_channel(platform, channel)
            if not mine:
                return "本频道没有订阅。" if zh else "No subscriptions in this channel."
            lines = [
                f"• {s.repo}{'@' + s.branch if s.branch else ''} — {s.schedule} {s.timezone}, {s.lang}"
                + (" (config)" if s.origin == "file" else "")
                for s in mine
            ]
            return ("本频道的订阅：\n" if zh else "Subscriptions in this channel:\n") + "\n".join(lines)
        assert cmd.repo is not None
        if cmd.action == "unsubscribe":
            subs.check_removable(platform, channel, cmd.repo)
            if subs.chat.remove(platform, channel, cmd.repo):
                return f"已取消订阅 {cmd.repo}。" if zh else f"Unsubscribed from {cmd.repo}."
            return f"本频道没有订阅 {cmd.repo}。" if zh else f"This channel is not subscribed to {cmd.repo}."
        self.check_room(platform, channel, cmd.repo)  # again: another subscribe may have landed meanwhile
        sub = subs.chat.add(
            platform,
            channel,
            cmd.repo,
            time=cmd.options.get("time"),
            tz=cmd.options.get("tz", self.channel_tz(platform, channel)),  # the channel's digests' zone
            lang=cmd.options.get("lang", lang),
            by=user,
        )
        odd = zone_warning(sub.lang, sub.timezone)  # accepted (a fixed offset may be wanted), but said
        warning = f"\n⚠️ {odd}" if odd else ""
        if sub.lang == "zh":  # in the language asked for, which the channel's digests will use
            return f"已订阅 {sub.repo}：每天 {sub.schedule}（{sub.timezone}）发布前一天的摘要，语言 {sub.lang}。{warning}"
        return f"Subscribed to {sub.repo}: yesterday's digest every day at {sub.schedule} ({sub.timezone}), in {sub.lang}.{warning}"

    # -- operations -----------------------------------------------------------------------------
    async def card(
        self, ref: Ref, lang: str, tz_name: str | None = None, *, asker: str = ""
    ) -> tuple[Commit, Analysis]:
        """Analyse one commit (cache first), ranked from the history its day's digest in `tz_name` (the
        channel's zone; default DIGEST_TZ) ranks it from. `asker` ("platform:user"): a person whose new
        model analyses are counted against CHAT_CARDS_PER_MINUTE (a flood of different SHAs costs a call each)."""
        if not ref.repo:
            raise InputError("which repository? name it: /digest owner/name@<sha>, or subscribe this channel")
        source = self.source(ref.repo)
        try:
            branch = await self._branch(source)
            return await analyse_ref(
                source,
                self.store,
                self.analyzer,
                ref,
                branch=branch,
                lang=lang,
                history_days=self.settings.history_days,
                tz=zone(tz_name or self.settings.digest_tz),
                admit=self.rates.card_admission(asker, lang, self.analyzer),
            )
        finally:
            await source.aclose()

    async def day_digest(
        self,
        repo: str,
        day: date,
        lang: str,
        tz_name: str | None = None,
        *,
        asker: str = "",
        after: tuple[datetime, str] | None = None,
    ) -> Digest:
        """A day's digest, built (analyses cached first) in `tz_name` (default DIGEST_TZ). `asker`
        ("platform:user"): a person whose new days are counted against CHAT_DAYS_PER_HOUR (a flood of
        different days costs each day's fetch and model calls); a day built before is free. `after`: where
        the channel's subscription's posted day before ended (bot/digest/pipeline.py build_digest)."""
        source = self.source(repo)
        try:
            branch = await self._branch(source)
            tz = zone(tz_name or self.settings.digest_tz)
            await self.rates.admit_day(asker, self.analyzer, repo, branch, day, tz, lang)
            return await build_digest(
                source,
                self.store,
                self.analyzer,
                branch=branch,
                day=day,
                tz=tz,
                lang=lang,
                history_days=self.settings.history_days,
                after=after,
            )
        finally:
            await source.aclose()

    async def check_repo(self, repo: str) -> None:
        """Raises SourceError when the repository cannot be read (unknown, private without a token)."""
        source = self.source(repo)
        try:
            await self._branch(source)
        finally:
            await source.aclose()

    async def _branch(self, source: Any) -> str:
        return await pick_branch(source, None, self.settings)

    def thread_context(
        self, platform: str, thread_id: str, message_id: str | None = None
    ) -> ThreadContext | None:
        """The digest or commit a thread (or a replied-to message) belongs to; None when it is not ours."""
        post = (self.store.find_post(platform, message_id) if message_id else None) or self.store.find_post(
            platform, thread_id
        )
        if post is None:
            return None
        card = post["item"] if message_id and post["message_id"] == message_id else None
        return self.context_of_key(platform, thread_id, post["digest_key"], message_id, card)

    def context_of_key(
        self,
        platform: str,
        thread_id: str,
        key: str,
        message_id: str | None = None,
        item: str | None = None,
        forgotten: bool = False,
    ) -> ThreadContext | None:
        """The thread of the post of digest `key` (`item`: the post replied to); None when the key is none
        of ours. `forgotten`: the store has no record of the post, the platform's message named the key."""
        ctx = ThreadContext(platform=platform, thread=thread_id)
        if key.startswith("card:"):  # a standalone /digest <sha> card: "card:owner/name@sha/lang"
            repo, _, rest = key.removeprefix("card:").partition("@")
            sha, _, lang = rest.partition("/")
            if not (repo and sha and lang):  # a key the platform's message carried, not one we wrote
                return None
            ctx.commit = self.store.get_commit(repo, sha)
            ctx.analysis = self.store.latest_analysis(repo, sha, lang) or self.store.latest_analysis(
                repo, sha
            )
            if ctx.commit is None:  # its row deleted: fetched again for the question (bot/chat/recover.py)
                ctx.lost = LostCommits(key, repo, shas=(sha,), message_id=message_id, forgotten=forgotten)
                return ctx
            return _with_followups(self.store, ctx)
        ctx.digest = load_digest(self.store, key)
        if ctx.digest is None:  # its commits or its record deleted: ours still, said so (bot/chat/recover.py)
            ctx.lost = lost_digest(self.store, key, message_id, forgotten)
            return ctx if ctx.lost is not None else None
        if item is not None and item.startswith("card:"):
            sha = item.removeprefix("card:")
            ctx.commit = next((c for c in ctx.digest.commits if c.sha == sha), None)
            ctx.analysis = ctx.digest.analyses.get(sha)
            ctx.replied = ctx.commit is not None
        return _with_followups(self.store, ctx)

    @property
    def answerer(self):
        """The LLM answerer when a model is configured; None: questions the data cannot answer get a
        note saying what the bot can answer."""
        if self._answerer is None and self._make_answerer is not None:
            self._answerer = self._make_answerer()
        return self._answerer

    async def answer(self, ctx: ThreadContext | None, question: str) -> Answer:
        """The answer to a thread question (bot/chat/answers.py); ctx None: a thread that is not ours."""
        return await answer_question(self, ctx, question)

    async def answer_once(self, answerer: ThreadAnswerer, question: Question) -> None:
        """Answer a thread question once, and after a crash all the same (bot/chat/pending.py)."""
        await pending.answer_once(self, answerer, question)

    async def answer_pending(self, answerer: ThreadAnswerer) -> None:
        """Until cancelled: the questions a process that is gone left unanswered (bot/chat/pending.py)."""
        await pending.keep_answering(self, answerer)

    async def post_day(self, poster: Poster, channel: str, digest: Digest) -> PostResult:
        """Post a day's digest into a channel (/digest YYYY-MM-DD): only what is missing, each item
        recorded as it is accepted (bot/delivery/posting.py)."""
        return await post_digest(
            poster, self.store, channel, digest, max_cards=self.settings.digest_max_cards
        )

    def broken_subscriptions(self) -> int:
        """How many subscriptions' last digest failed or is overdue: what a public /healthz may say (a
        count, never which: their names hold repositories and channel ids)."""
        return sum(1 for reason in metrics.health().values() if reason)

    def help_text(self, lang: str) -> str:
        """What /digest can do, in the channel's language."""
        return usage(lang)

    def record_card(self, platform: str, channel: str, commit: Commit, lang: str, posted: Any) -> None:
        """Remember a standalone card so replies in its thread find the commit."""
        self.store.record_post(
            platform,
            channel,
            _card_key(commit, lang),
            f"card:{commit.sha}",
            posted.message_id,
            posted.thread_id,
        )

    def card_turn(
        self, platform: str, channel: str, commit: Commit, lang: str
    ) -> AbstractAsyncContextManager[EarlierCard | None]:
        """Held while a standalone card is posted and recorded (bot/chat/card_turns.py): yields the same card
        when this channel got it within the last minutes, which is then pointed at instead of posted again."""
        return self.card_turns.turn(platform, channel, _card_key(commit, lang), f"card:{commit.sha}")


def _card_key(commit: Commit, lang: str) -> str:
    return f"card:{commit.repo}@{commit.sha}/{lang}"


def _with_followups(store: Any, ctx: ThreadContext) -> ThreadContext:
    """Answers about a commit say when a later commit reverted or fixed it (bot/digest/radar.py)."""
    if ctx.digest is not None:
        d = ctx.digest
        d.analyses = {sha: with_original_notes(store, d.repo, a, d.lang) for sha, a in d.analyses.items()}
        if ctx.commit is not None:
            ctx.analysis = d.analyses.get(ctx.commit.sha, ctx.analysis)
    elif ctx.commit is not None and ctx.analysis is not None:
        ctx.analysis = with_original_notes(store, ctx.commit.repo, ctx.analysis, ctx.analysis.lang)
    return ctx
