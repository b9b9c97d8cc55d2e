"""What a chat user types and what comes back, platform-neutral: `/digest …` parsed into a command, the
usage text, whether a thread reply is a question, and the shapes a command's result and a thread's
context take for the adapter to render."""

from __future__ import annotations

import re
from typing import Any

from analysis.errors import InputError
from analysis.refs import check_repo, parse_ref
from bot.config.settings import zone
from bot.config.subscriptions import HHMM
from bot.ports.protocols import ChatCommand

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
        elif "/" in word or word.upper().startswith(("UTC", "GMT")):
            options["tz"] = zone(word).key  # the canonical name; a clear InputError for unknown zones
        elif known := _zone_or_none(word):  # EST, EST5EDT, CET: accepted, and the reply warns about them
            options["tz"] = known
        else:
            raise InputError(f"subscribe: cannot read {word!r} (expected HH:MM, a time zone or zh|en)")
    return ChatCommand("subscribe", repo=check_repo(args[0]), options=options)


def _zone_or_none(word: str) -> str | None:
    try:
        return zone(word).key
    except InputError:
        return None


def usage(lang: str) -> str:
    return USAGE.get(lang, USAGE["en"])
