"""What the application needs from outside, and what the chat adapters may call, as Protocols: the one
contract between bot/ and adapters/. The data types that cross it (a post's ids, an LLM reply, a chat
command and its result) live here too, so neither side imports the other.

Driven adapters (adapters/github/, adapters/local_git/, llm/, chart.py and the chat posters) implement
these; driving adapters (the Slack and Discord event handlers, the console) call the application only
through `ChatFacade`.

Over 400 lines because it is the whole contract in one place: every port beside the types that cross it,
so an adapter author reads one file to see what is asked of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, SecretStr

from analysis.errors import ServiceError
from analysis.models import Analysis, Commit, Digest
from analysis.refs import Ref

if TYPE_CHECKING:  # annotations only: a digest run does not load the thread questions' modules
    from analysis.questions.document import Answer
    from analysis.weekly import Week

Progress = Callable[[int, int], None]  # (done, total)


class CommitSource(Protocol):
    repo: str  # owner/name

    async def commits_in_window(
        self, branch: str, start: datetime, end: datetime, progress: Progress | None = None
    ) -> list[Commit]:
        """Every commit of the branch's first-parent history whose committer date is in [start, end),
        newest first, with files and patches. Raises SourceError / RateLimited / InputError."""
        ...

    async def get_commit(self, ref: str) -> Commit:
        """A commit by full or short SHA. Raises RefNotFound or AmbiguousRef."""
        ...

    async def commit_for_pr(self, number: int, branch: str) -> Commit:
        """The commit that landed pull request #number on branch. Raises RefNotFound."""
        ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Posted:
    message_id: str
    thread_id: str | None = None  # where replies go (Slack: the parent ts; Discord: the thread id)


class Poster(Protocol):
    """What a chat adapter implements; each call posts exactly one logical item (it may split it
    into several platform messages to respect limits, and returns the first one's id)."""

    platform: str

    async def post_parent(self, channel: str, digest: Digest) -> Posted: ...

    async def post_card(
        self, channel: str, thread: str, digest: Digest, commit: Commit, analysis: Analysis
    ) -> Posted: ...

    async def post_medium_list(
        self, channel: str, thread: str, digest: Digest, commits: list[Commit]
    ) -> Posted: ...

    async def post_high_list(
        self, channel: str, thread: str, digest: Digest, commits: list[Commit]
    ) -> Posted:
        """The high commits past the post's cap on cards, listed in one item (never dropped)."""
        ...

    async def post_report(
        self, channel: str, thread: str, digest: Digest, filename: str, markdown: str
    ) -> Posted: ...


class PartProgress(Protocol):
    """The parts of the item being posted that are already up (part → message id) and how to record
    one more the moment the platform accepts it: a card split over messages resumes where it stopped."""

    done: dict[int, str]

    def record(self, part: int, message_id: str) -> None: ...


# Set by bot/delivery/posting.py for the item it is posting in this task; read by the poster.
PART_LOG: ContextVar[PartProgress | None] = ContextVar("digestbot_part_log", default=None)


def part_log() -> PartProgress | None:
    """The item being posted by post_digest in this task, for adapters that post it in parts."""
    return PART_LOG.get()


class BannerEditor(Protocol):
    """What a chat adapter implements for the radar (beside bot.ports.protocols.Poster)."""

    platform: str

    async def add_banner(self, channel: str, where: str, message_id: str, text: str) -> bool:
        """Put `text` as the first line of the message (once: a message that has it is left alone).
        `where` is the channel or thread the message lives in. False when the message cannot be edited
        any more (deleted, too old, missing permission); other failures raise."""
        ...

    async def reply_in_thread(
        self, channel: str, thread: str, text: str, url: str | None = None, key: str | None = None
    ) -> str:
        """A plain reply in a thread, with a link to url when given; returns its id. With a key, a reply
        already in the thread under that key is found and not posted again."""
        ...


class WeeklyPoster(Protocol):
    """What a chat adapter implements to post a roll-up: the text, then the chart in its thread."""

    platform: str

    async def post_weekly(self, channel: str, week: Week, markdown: str) -> tuple[str, str]:
        """The roll-up message; returns (message id, thread id)."""
        ...

    async def post_chart(self, channel: str, thread: str, week: Week, filename: str, png: bytes) -> str: ...


Message = dict[str, Any]


class LLMError(ServiceError):
    """An LLM call failed for good. The message is one line, safe to show (never the API key)."""

    def __init__(self, message: str, *, outcome: str = "error"):
        super().__init__(message)
        self.outcome = outcome  # the llm_calls outcome of the last attempt: "http 429", "timeout", …


class LLMFatal(LLMError):
    """401/403/404: the key or the model is wrong, so every other call would fail the same way."""


@dataclass(frozen=True, slots=True)
class ChatReply:
    content: str
    finish_reason: str  # "stop", "length", "content_filter", … ("unknown" when the server sent none)
    tokens_in: int
    tokens_out: int
    latency_ms: float
    model: str
    tokens_cached: int = 0  # usage.prompt_tokens_details.cached_tokens, where the server reports it


@dataclass(frozen=True, slots=True)
class BatchRequest:
    custom_id: str
    messages: Sequence[Message]
    max_tokens: int
    purpose: str
    response_model: type[BaseModel] | None = None
    sha: str | None = None
    repo: str | None = None


Action = Literal["help", "card", "day", "subscribe", "unsubscribe", "list"]


@dataclass(frozen=True, slots=True)
class ChatCommand:
    action: Action
    ref: Ref | None = None
    repo: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


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


@dataclass(slots=True, frozen=True)
class LostCommits:
    """A thread of ours whose digest or card the store cannot rebuild any more (its commit rows deleted,
    or the digest's record): what is missing, to fetch again or to name in the answer."""

    key: str  # the post's digest key ("card:…" for a standalone card)
    repo: str
    day: str = ""  # the digest's day (YYYY-MM-DD); "" for a card
    shas: tuple[str, ...] = ()  # the commits the store lacks; () with the digest's record itself gone
    message_id: str | None = None  # the replied-to message the thread was looked up with
    # no record of the post at all (a wiped database, another host): the thread was known by what its parent
    # message carries on the platform (Slack: its metadata)
    forgotten: bool = False


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
    lost: LostCommits | None = None  # ours, but what it was about must be fetched again (bot/chat/recover.py)


@dataclass(frozen=True, slots=True)
class Question:
    """A thread question as it arrived: what a later process needs to answer it when the one that
    acknowledged it died before posting (the platform does not deliver an acknowledged event again)."""

    platform: str
    channel: str  # where the message is (Discord: the channel or thread it was sent in)
    message_id: str
    text: str  # as the person wrote it, mention included
    asker: str
    mentioned: bool  # we were mentioned: a thread not ours still hears how to ask
    asked_at: datetime  # UTC
    thread: str | None = None  # the thread it was asked in (Slack: thread_ts; Discord: the thread's id)
    replied_to: str | None = None  # the message it replies to (Discord), which may name a card


class ThreadAnswerer(Protocol):
    """What a chat adapter does for a thread question: read its thread and post there (the claim that
    answers each question once, and the recovery of questions a crash left unanswered, are bot/'s)."""

    platform: str

    async def answered(self, question: Question) -> bool:
        """Whether an answer to the question is in its thread already (read back from the platform).
        Raises DigestError when the thread cannot be read."""
        ...

    async def reply(self, question: Question, ctx: ThreadContext | None) -> bool:
        """Answer in the thread (ctx None: not one of ours); True once the answer is posted."""
        ...

    async def notify(self, question: Question, text: str) -> bool:
        """Post `text` (a notice, not an answer: the thread's answers are capped) in the question's thread;
        True once posted."""
        ...


class ThreadKeys(Protocol):
    """What a chat adapter may add to its ThreadAnswerer: the digest key a thread's parent message carries
    on the platform, for a thread the store has no record of (a wiped database, another host)."""

    async def thread_key(self, question: Question) -> str | None:
        """The key our parent message of the question's thread carries; None when it carries none (not
        ours) or the thread cannot be read."""
        ...


@dataclass(slots=True)
class PostResult:
    key: str
    posted: list[str]  # items posted by this call
    skipped: list[str]  # items found already posted
    thread_id: str | None
    edited: list[str] = field(default_factory=list)  # items edited in place (a re-post's parent)


# -- the store a source keeps commits in --------------------------------------------------------------


class CommitStore(Protocol):
    """What a network source may keep between runs: the commits it fetched (immutable, never fetched
    twice) and its HTTP cache (list pages and pull requests revalidated with ETags)."""

    def save_commit(self, commit: Commit) -> None: ...

    def get_commit(self, repo: str, sha: str) -> Commit | None: ...

    def find_shas(self, repo: str, prefix: str) -> list[str]: ...

    def cache_get(self, url: str) -> dict[str, Any] | None: ...

    def cache_put(self, url: str, etag: str | None, last_modified: str | None, body: str) -> None: ...


# -- the LLM ------------------------------------------------------------------------------------------


class LLM(Protocol):
    """An OpenAI-compatible chat-completions client: one call with retries and a structured reply, or a
    batch of them. Raises LLMError when every attempt failed (LLMFatal: the key or the model is wrong)."""

    model: str

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        response_model: type[BaseModel] | None = None,
        max_tokens: int,
        temperature: float = 0.2,
        purpose: str,
        sha: str | None = None,
        repo: str | None = None,
        prompt_version: str = "",
    ) -> ChatReply: ...

    async def batch(
        self,
        requests: Sequence[BatchRequest],
        *,
        deadline: float,
        poll: float = 10.0,
        prompt_version: str = "",
    ) -> dict[str, ChatReply]: ...

    async def aclose(self) -> None: ...


# -- the chart and the clock -------------------------------------------------------------------------


class ChartRenderer(Protocol):
    """The weekly roll-up's chart as one PNG."""

    def __call__(self, week: Week) -> bytes: ...


class Clock(Protocol):
    """The current moment, timezone-aware (tests and the scheduler's catch-up pass their own)."""

    def __call__(self) -> datetime: ...


# -- what the chat adapters may call ------------------------------------------------------------------


class ChatFacade(Protocol):
    """The application as the Slack and Discord event handlers see it (bot/chat/service.py implements
    it): parse and run `/digest`, post a day, answer a thread question, remember a card."""

    def channel_lang(self, platform: str, channel: str) -> str: ...

    def channel_tz(self, platform: str, channel: str, repo: str | None = None) -> str: ...

    def prepare(self, platform: str, channel: str, text: str) -> ChatCommand:
        """Parse `/digest …` for this channel, fast enough to answer before acknowledging. Raises
        InputError; Flooded (analysis/errors.py) for a card past the channel's rate, `public` when it is
        the channel's one notice this minute."""
        ...

    async def execute(self, platform: str, channel: str, cmd: ChatCommand, user: str = "") -> CommandResult:
        """The slow part, after the acknowledgement; user errors come back as an "error" result."""
        ...

    async def post_day(self, poster: Poster, channel: str, digest: Digest) -> PostResult: ...

    def record_card(self, platform: str, channel: str, commit: Commit, lang: str, posted: Posted) -> None: ...

    def thread_context(
        self, platform: str, thread_id: str, message_id: str | None = None
    ) -> ThreadContext | None: ...

    async def answer(self, ctx: ThreadContext | None, question: str) -> Answer: ...

    async def answer_once(self, answerer: ThreadAnswerer, question: Question) -> None:
        """Answer a thread question through `answerer`, once: claimed in the store with what it takes to
        answer it later, so a delivery again (a restart, another process) is not answered twice and a
        question whose answerer died is answered by the next start (bot/chat/pending.py)."""
        ...

    async def answer_pending(self, answerer: ThreadAnswerer) -> None:
        """Until cancelled: keep this process's claims alive, and answer the platform's questions whose
        claim a process that is gone left unanswered (started with the platform's runtime)."""
        ...

    def help_text(self, lang: str) -> str: ...

    def broken_subscriptions(self) -> int: ...

    def stop_waiting(self) -> None:
        """The service is stopping: answers still waiting for the model give it up and answer from the
        data now, within the shutdown's grace, instead of being cancelled unanswered."""
        ...


class SlackSettings(Protocol):
    """The settings the Slack adapter reads (bot/config/settings.py has them all)."""

    slack_bot_token: SecretStr | None
    slack_app_token: SecretStr | None
    slack_signing_secret: SecretStr | None
    slack_api_url: str
    slack_port: int
