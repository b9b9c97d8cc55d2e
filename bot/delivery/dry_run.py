"""`digestbot post --dry-run`: every message a post would send, rendered by the same functions the
Slack and Discord posters call, with its size against the platform's limits. No network, no token.

Items already recorded as posted in this channel are listed as such: a real post would skip them.
"""

from __future__ import annotations

import json
from typing import Any

from analysis.labels import label
from analysis.models import Digest, Importance, key_of
from bot.delivery.posting import (
    DEFAULT_MAX_CARDS,
    HIGH_LIST,
    digest_items,
    listed_highs,
    report_filename,
)
from bot.store.db import Store

# Discord's upload cap as the poster uses it (adapters/discord/poster.py keeps the same figure).
DISCORD_REPORT_MAX_BYTES = 8 * 1024 * 1024


def preview(
    digest: Digest,
    platform: str,
    channel: str,
    store: Store | None = None,
    *,
    partial: bool = False,
    max_cards: int = DEFAULT_MAX_CARDS,
) -> dict[str, Any]:
    """The post as data: {"platform", "channel", "key", "cards", "messages": [...]} in posting order;
    `cards` the shas whose card it posts (past `max_cards` high commits, the rest are in one list)."""
    from analysis.render.markdown import render_report

    done = store.get_posts(platform, channel, key_of(digest)) if store is not None else {}
    by_sha = {c.sha: c for c in digest.commits}
    report = render_report([digest], digest.lang)
    messages: list[dict[str, Any]] = []
    up = [i.removeprefix("card:") for i in done if i.startswith("card:")]
    items = digest_items(digest, partial=partial, max_cards=max_cards, up=up)
    cards = [i.removeprefix("card:") for i in items if i.startswith("card:")]
    for item in items:
        if item == "parent":
            payloads = _parent(digest, platform)
        elif item.startswith("card:"):
            commit = by_sha[item.removeprefix("card:")]
            payloads = _card(digest, platform, commit)
        elif item == HIGH_LIST:
            payloads = _high_list(digest, platform, listed_highs(digest, [*cards, *up]))
        elif item == "medium":
            payloads = _medium(digest, platform)
        else:
            payloads = _report(digest, platform, report)
        for part, payload in enumerate(payloads, start=1):
            messages.append(
                {
                    "item": item,
                    "part": part,
                    "parts": len(payloads),
                    "already_posted": item in done,
                    "size": _size(platform, payload),
                    "payload": payload,
                }
            )
    return {
        "platform": platform,
        "channel": channel,
        "key": key_of(digest),
        "cards": cards,
        "messages": messages,
    }


def _parent(digest: Digest, platform: str) -> list[dict[str, Any]]:
    if platform == "slack":
        from analysis.render.slack_blocks import parent_message

        return [parent_message(digest)]
    from analysis.render.discord_embeds import parent_embed, thread_name

    return [{"embeds": [parent_embed(digest)], "thread_name": thread_name(digest)}]


def _card(digest: Digest, platform: str, commit: Any) -> list[dict[str, Any]]:
    analysis = digest.analysis_of(commit)
    if platform == "slack":
        from analysis.render.slack_blocks import card_messages

        return card_messages(commit, analysis, digest.lang, tz=digest.timezone)
    from analysis.render.discord_embeds import card_messages as discord_cards

    return discord_cards(commit, analysis, digest.lang)


def _medium(digest: Digest, platform: str) -> list[dict[str, Any]]:
    commits = digest.by_importance(Importance.MEDIUM)
    if platform == "slack":
        from analysis.render.slack_blocks import medium_list_messages

        return medium_list_messages(digest, commits)
    from analysis.render.discord_embeds import medium_list_messages as discord_medium

    return discord_medium(digest, commits)


def _high_list(digest: Digest, platform: str, commits: list[Any]) -> list[dict[str, Any]]:
    if platform == "slack":
        from analysis.render.slack_blocks import high_list_messages

        return high_list_messages(digest, commits)
    from analysis.render.discord_embeds import high_list_messages as discord_high_list

    return discord_high_list(digest, commits)


def _report(digest: Digest, platform: str, markdown: str) -> list[dict[str, Any]]:
    filename = report_filename(digest)
    if platform == "slack":
        return [
            {
                "file": filename,
                "initial_comment": f"📄 {label(digest.lang, 'full_report')}",
                "bytes": len(markdown.encode("utf-8")),
            }
        ]
    import re

    from analysis.render.discord_embeds import report_content, split_utf8

    parts = split_utf8(markdown, DISCORD_REPORT_MAX_BYTES)
    out = []
    for number, part in enumerate(parts, start=1):
        name = filename if len(parts) == 1 else re.sub(r"(\.md)?$", f".part{number}.md", filename, count=1)
        out.append(
            {
                "content": report_content(digest, name, number, len(parts)),
                "file": name,
                "bytes": len(part.encode("utf-8")),
            }
        )
    return out


def _size(platform: str, payload: dict[str, Any]) -> dict[str, int]:
    size: dict[str, int] = {"json_bytes": len(json.dumps(payload, ensure_ascii=False).encode("utf-8"))}
    if "bytes" in payload:
        size["file_bytes"] = payload["bytes"]
    if platform == "slack":
        from analysis.render.slack_blocks import block_text_len

        size["blocks"] = len(payload.get("blocks") or [])
        size["text_chars"] = len(payload.get("text") or "")
        size["block_text_chars"] = block_text_len(payload.get("blocks") or [])
    else:
        from analysis.render.discord_embeds import embed_chars

        embeds = payload.get("embeds") or []
        size["embeds"] = len(embeds)
        size["content_chars"] = len(payload.get("content") or "")
        size["embed_chars"] = sum(embed_chars(e) for e in embeds)
    return size


def render_text(plan: dict[str, Any]) -> str:
    """For people: one header line per message with its sizes, then the payload as posted."""
    lines = [
        f"dry run: {plan['key']} to {plan['platform']}:{plan['channel']}"
        f" — {len(plan['messages'])} message(s), {len(plan['cards'])} card(s), nothing sent",
        "",
    ]
    for m in plan["messages"]:
        sizes = ", ".join(f"{k} {v}" for k, v in m["size"].items())
        state = "  (already posted: skipped)" if m["already_posted"] else ""
        lines.append(f"── {m['item']} {m['part']}/{m['parts']}: {sizes}{state}")
        lines.append(json.dumps(m["payload"], ensure_ascii=False, indent=2))
        lines.append("")
    return "\n".join(lines)
