"""What a chat user types and what comes back, platform-neutral: `/digest …` parsed into a command, the
usage text, whether a thread reply is a question, and the shapes a command's result and a thread's
context take for the adapter to render."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from analysis.errors import InputError
from analysis.models import Analysis, Commit, Digest
from analysis.refs import Ref, check_repo, parse_ref
from bot.config.settings import zone
from bot.config.subscriptions import HHMM

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


def usage(lang: str) -> str:
    return USAGE.get(lang, USAGE["en"])
