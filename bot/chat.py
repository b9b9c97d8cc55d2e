"""Platform-neutral chat handling, shared by the Slack and Discord adapters: parsing `/digest …`,
finding a channel's repository, producing a commit card or a day's digest, and finding what a thread
question is about. Adapters only translate between their platform and these calls."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal

from analysis.errors import DigestError, InputError
from analysis.models import Analysis, Commit, Digest
from analysis.questions.answers import Answer
from bot.logs import scrub, secrets_of
from bot.refs import Ref, check_repo, parse_ref
from bot.settings import Settings, zone
from bot.store import Store
from bot.subscriptions import HHMM, Registry

log = logging.getLogger(__name__)

Action = Literal["help", "card", "day", "subscribe", "unsubscribe", "list"]

USAGE = {
    "en": (
        "*/digest* — commit digests\n"
        "• `/digest <sha>` · `/digest #12345` · `/digest <commit URL>` · `/digest owner/name@<sha>` — analyse one commit\n"
        "• `/digest YYYY-MM-DD [owner/name]` — post that day's digest here\n"
        "• `/digest subscribe owner/name [HH:MM] [Zone/Name] [zh|en]` · `/digest unsubscribe owner/name`"
        " · `/digest list` — daily digests in this channel\n"
        "• Reply in a digest thread (mention me) to ask about a commit's risks."
    ),
    "zh": (
        "*/digest* — 提交摘要\n"
        "• `/digest <sha>` · `/digest #12345` · `/digest <提交链接>` · `/digest owner/name@<sha>` — 分析单个提交\n"
        "• `/digest YYYY-MM-DD [owner/name]` — 在本频道发布当天的摘要\n"
        "• `/digest subscribe owner/name [HH:MM] [时区] [zh|en]` · `/digest unsubscribe owner/name`"
        " · `/digest list` — 本频道的每日摘要订阅\n"
        "• 在摘要的讨论串中回复（并提及我）即可询问某个提交的风险。"
    ),
}


@dataclass(frozen=True, slots=True)
class ChatCommand:
    action: Action
    ref: Ref | None = None
    repo: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


def parse_command(text: str, default_repo: str | None = None) -> ChatCommand:
    """`/digest` arguments → a command. Raises InputError with a usage hint on nonsense."""
    words = text.split()
    if not words or words[0].lower() in ("help", "-h", "--help", "?"):
        return ChatCommand("help")
    head = words[0].lower()
    if head == "list":
        return ChatCommand("list")
    if head == "unsubscribe":
        if len(words) != 2:
            raise InputError("usage: /digest unsubscribe owner/name")
        return ChatCommand("unsubscribe", repo=check_repo(words[1]))
    if head == "subscribe":
        return _parse_subscribe(words[1:])
    if len(words) == 2 and re.fullmatch(r"\d{4}-\d{2}-\d{2}", words[0]):
        # "/digest 2026-01-29 owner/name"
        repo = check_repo(words[1])
        return ChatCommand("day", ref=parse_ref(words[0], repo), repo=repo)
    if len(words) > 1:
        raise InputError(
            "one reference at a time: /digest <sha | #PR | commit URL | owner/name@sha | YYYY-MM-DD>"
        )
    ref = parse_ref(words[0], default_repo)
    return ChatCommand("day" if ref.kind == "date" else "card", ref=ref, repo=ref.repo)


def _parse_subscribe(args: list[str]) -> ChatCommand:
    if not args:
        raise InputError("usage: /digest subscribe owner/name [HH:MM] [Zone/Name] [zh|en]")
    options: dict[str, Any] = {}
    for word in args[1:]:
        if HHMM.match(word):
            options["time"] = word
        elif word in ("zh", "en"):
            options["lang"] = word
        elif "/" in word or word.upper() == "UTC":
            zone(word)  # raises a clear InputError for unknown zones
            options["tz"] = word
        else:
            raise InputError(f"subscribe: cannot read {word!r} (expected HH:MM, a time zone or zh|en)")
    return ChatCommand("subscribe", repo=check_repo(args[0]), options=options)


_QUESTION = re.compile(
    r"[?？]|\b(what|why|how|which|who|when|where|should|could|would|can|does|do|is|are|will|risk\w*)\b"
    r"|什么|为什么|为何|怎么|怎样|如何|哪|吗|呢|是否|有没有|风险|影响|多少|几个",
    re.IGNORECASE,
)


def is_question(text: str) -> bool:
    """A reply worth an answer when nobody mentioned the bot: a question, not "thanks!" or "+1"."""
    return bool(_QUESTION.search(text))


@dataclass(slots=True)
class CommandResult:
    """What a command produced, for the adapter to render: a text reply (help, subscriptions), an
    error (ephemeral), a commit card, or a day's digest to post."""

    kind: Literal["message", "error", "card", "digest"]
    lang: str
    text: str = ""
    commit: Commit | None = None
    analysis: Analysis | None = None
    digest: Digest | None = None


@dataclass(slots=True)
class ThreadContext:
    """What a thread question can be answered from."""

    digest: Digest | None = None
    commit: Commit | None = None
    analysis: Analysis | None = None
    history: list[tuple[str, str]] = field(default_factory=list)  # (speaker, text), oldest first
    platform: str = ""
    thread: str = ""  # the thread's id on its platform: the conversation's focus is kept per thread
    replied: bool = False  # the question replies to a card: that card's commit is named


class ChatService:
    """The operations behind every chat surface. One instance per process, shared by adapters."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        git_dirs: dict[str, Path] | None = None,
        source_factory: Any = None,
        analyzer: Any = None,
        answerer: Any = None,
    ):
        self.settings = settings
        self.store = store
        self.git_dirs = dict(git_dirs or {})  # repo → local clone, from subscriptions
        self._source_factory = source_factory
        self._analyzer = analyzer
        self._answerer = answerer
        self.subscriptions = Registry(store)  # the service replaces it with one that knows the config file
        from bot.qa import ThreadLimiter

        self.qa_limiter = ThreadLimiter(settings.qa_calls_per_minute)  # model calls per thread and minute
        _ = self.answerer  # made now, at start: the first question must not wait for the client's import

    # -- wiring ---------------------------------------------------------------------------------
    def source(self, repo: str):
        if self._source_factory is not None:
            return self._source_factory(repo)
        from bot.sources import open_source

        return open_source(self.settings, self.store, repo, self.git_dirs.get(repo))

    @property
    def analyzer(self):
        if self._analyzer is None:
            from bot.analyzers import make_analyzer

            self._analyzer = make_analyzer(self.settings, self.store, "auto")
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
        before acknowledging and answer bad input at once. Raises InputError."""
        return parse_command(text, self.channel_repo(platform, channel))

    async def execute(self, platform: str, channel: str, cmd: ChatCommand, user: str = "") -> CommandResult:
        """The slow part, after the acknowledgement. User errors come back as an "error" result."""
        lang = self.channel_lang(platform, channel)
        try:
            if cmd.action == "help":
                return CommandResult("message", lang, text=usage(lang))
            if cmd.action == "card":
                assert cmd.ref is not None
                commit, analysis = await self.card(cmd.ref, lang)
                return CommandResult("card", lang, commit=commit, analysis=analysis)
            if cmd.action == "day":
                assert cmd.ref is not None
                repo = cmd.repo or self.channel_repo(platform, channel)
                if not repo:
                    raise InputError("which repository? /digest YYYY-MM-DD owner/name")
                digest = await self.day_digest(
                    repo, cmd.ref.day, lang, self.channel_tz(platform, channel, repo)
                )
                return CommandResult("digest", lang, digest=digest)
            if cmd.action == "subscribe":
                assert cmd.repo is not None
                await self.check_repo(cmd.repo)  # now, not at tomorrow's run
            return CommandResult("message", lang, text=self.manage(platform, channel, cmd, user, lang))
        except DigestError as exc:  # a service's error may quote our request, token included
            return CommandResult("error", lang, text=scrub(str(exc), secrets_of(self.settings)))

    def channel_tz(self, platform: str, channel: str, repo: str | None = None) -> str:
        """The zone of the channel's subscription (to `repo` when given), else DIGEST_TZ."""
        for sub in self.subscriptions.for_channel(platform, channel):
            if repo is None or sub.repo == repo:
                return sub.timezone
        return self.settings.digest_tz

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
        sub = subs.chat.add(
            platform,
            channel,
            cmd.repo,
            time=cmd.options.get("time"),
            tz=cmd.options.get("tz", self.settings.digest_tz),
            lang=cmd.options.get("lang", lang),
            by=user,
        )
        if zh:
            return (
                f"已订阅 {sub.repo}：每天 {sub.schedule}（{sub.timezone}）发布前一天的摘要，语言 {sub.lang}。"
            )
        return f"Subscribed to {sub.repo}: yesterday's digest every day at {sub.schedule} ({sub.timezone}), in {sub.lang}."

    # -- operations -----------------------------------------------------------------------------
    async def card(self, ref: Ref, lang: str) -> tuple[Commit, Analysis]:
        """Analyse one commit (cache first)."""
        from bot.pipeline import analyse_ref

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
            )
        finally:
            await source.aclose()

    async def day_digest(self, repo: str, day: date, lang: str, tz_name: str | None = None) -> Digest:
        from bot.pipeline import build_digest

        source = self.source(repo)
        try:
            return await build_digest(
                source,
                self.store,
                self.analyzer,
                branch=await self._branch(source),
                day=day,
                tz=zone(tz_name or self.settings.digest_tz),
                lang=lang,
                history_days=self.settings.history_days,
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
        from bot.sources import pick_branch

        return await pick_branch(source, None, self.settings)

    def thread_context(
        self, platform: str, thread_id: str, message_id: str | None = None
    ) -> ThreadContext | None:
        """The digest or commit a thread (or a replied-to message) belongs to; None when it is not ours."""
        from bot.pipeline import load_digest

        post = (self.store.find_post(platform, message_id) if message_id else None) or self.store.find_post(
            platform, thread_id
        )
        if post is None:
            return None
        ctx = ThreadContext(platform=platform, thread=thread_id)
        key: str = post["digest_key"]
        if key.startswith("card:"):  # a standalone /digest <sha> card: "card:owner/name@sha/lang"
            repo, rest = key.removeprefix("card:").split("@", 1)
            sha, lang = rest.split("/", 1)
            ctx.commit = self.store.get_commit(repo, sha)
            ctx.analysis = self.store.latest_analysis(repo, sha, lang) or self.store.latest_analysis(
                repo, sha
            )
            return _with_followups(self.store, ctx) if ctx.commit else None
        ctx.digest = load_digest(self.store, key)
        if ctx.digest is None:
            return None
        item: str = post["item"]
        if item.startswith("card:") and message_id and post["message_id"] == message_id:
            sha = item.removeprefix("card:")
            ctx.commit = next((c for c in ctx.digest.commits if c.sha == sha), None)
            ctx.analysis = ctx.digest.analyses.get(sha)
            ctx.replied = ctx.commit is not None
        return _with_followups(self.store, ctx)

    @property
    def answerer(self):
        """The LLM answerer when a model is configured; None: questions the data cannot answer get a
        note saying what the bot can answer."""
        if self._answerer is None and self.settings.llm_configured:
            from bot.qa_llm import LLMAnswerer

            self._answerer = LLMAnswerer.from_settings(self.settings, self.store)
        return self._answerer

    async def answer(self, ctx: ThreadContext | None, question: str) -> Answer:
        """The answer to a thread question (bot/qa.py); ctx None: a thread that is not ours."""
        from bot.qa import answer_question

        return await answer_question(self, ctx, question)

    def record_card(self, platform: str, channel: str, commit: Commit, lang: str, posted: Any) -> None:
        """Remember a standalone card so replies in its thread find the commit."""
        key = f"card:{commit.repo}@{commit.sha}/{lang}"
        self.store.record_post(
            platform, channel, key, f"card:{commit.sha}", posted.message_id, posted.thread_id
        )


def _with_followups(store: Any, ctx: ThreadContext) -> ThreadContext:
    """Answers about a commit say when a later commit reverted or fixed it (bot/radar.py)."""
    from bot.radar import with_original_notes

    if ctx.digest is not None:
        d = ctx.digest
        d.analyses = {sha: with_original_notes(store, d.repo, a, d.lang) for sha, a in d.analyses.items()}
        if ctx.commit is not None:
            ctx.analysis = d.analyses.get(ctx.commit.sha, ctx.analysis)
    elif ctx.commit is not None and ctx.analysis is not None:
        ctx.analysis = with_original_notes(store, ctx.commit.repo, ctx.analysis, ctx.analysis.lang)
    return ctx


def usage(lang: str) -> str:
    return USAGE.get(lang, USAGE["en"])
