"""The radar's banner on an earlier card (bot/delivery/banners.py decides where): chat.update puts the
one-line banner on top of the message's blocks, once, and a message Slack will not let us edit is
reported as such, never retried."""

from __future__ import annotations

import logging
from typing import Any

from adapters.slack.client import (
    SlackError,
    _call,
)
from analysis.render.slack_blocks import (
    escape,
)

log = logging.getLogger(__name__)


# Slack's answers for a message we may not (or no longer) edit: skipped, never retried.
UNEDITABLE = {
    "message_not_found",
    "cant_update_message",
    "edit_window_closed",
    "thread_not_found",
    "not_in_channel",
    "channel_not_found",
    "is_archived",
    "missing_scope",
    "restricted_action",
}

BLOCKS_MAX = 50


async def add_banner(poster: Any, channel: str, message_id: str, text: str) -> bool:
    """chat.update the message with `text` as its first block (once: a message starting with it is left
    as it is). False when Slack says the message cannot be edited."""
    try:
        current = await _find_message(poster, channel, message_id)
        if current is None:
            return False
        blocks = list(current.get("blocks") or [])
        if _has_banner(current, text):
            return True
        if len(blocks) >= BLOCKS_MAX:
            log.info(
                "Slack message %s in %s has %d blocks: no room for a banner", message_id, channel, len(blocks)
            )
            return False
        banner = banner_block(text)
        fallback = f"{text}\n{current.get('text') or ''}".strip()
        await _call(
            "chat.update",
            poster.client.chat_update(
                channel=channel, ts=message_id, text=fallback, blocks=[banner, *blocks]
            ),
            channel,
        )
        return True
    except SlackError as exc:
        if exc.code in UNEDITABLE:
            return False
        raise


def banner_block(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": escape(text)}}


async def _find_message(poster: Any, channel: str, ts: str) -> dict[str, Any] | None:
    """The message with this ts (a parent or a reply), as conversations.replies shows it."""
    async for message in poster._replies(channel, ts):
        if str(message.get("ts")) == ts:
            return message
    return None


def _has_banner(message: dict[str, Any], text: str) -> bool:
    """Banners are the message's leading section blocks (a later one goes on top of an earlier one)."""
    texts = [b.get("text", {}).get("text") for b in message.get("blocks") or [] if isinstance(b, dict)]
    return escape(text) in texts or text in str(message.get("text") or "").split("\n")
