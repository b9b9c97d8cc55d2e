"""The digest key our Discord messages carry, so a thread the store has no record of (a wiped database,
another host) can still be traced to its digest (bot.ports.protocols.ThreadKeys). Discord messages have no
metadata (Slack's way): the key is the last line of the footer of a message's last embed, small grey
text. It is read back only from a message our bot user wrote, only from that line, and only when the line
has a key's shape: commit text never reaches a footer, and a user's message is never ours."""

from __future__ import annotations

import copy
import re
from typing import Any

from analysis.render.discord_embeds import Embed, Message, message_problems

# "owner/name@branch/YYYY-MM-DD/zone/lang" (bot/chat/service.py context_of_key reads it; a moved window
# adds "/since:…"), or a standalone card's "card:owner/name@sha/lang". No spaces: a footer line with
# words in it (the analyser's name, a card's "repo · analyser") is never taken for a key.
KEY_LINE = re.compile(
    r"card:[^\s@/]+/[^\s@/]+@[0-9a-fA-F]{7,64}/[^\s/]+"
    r"|[^\s@/]+/[^\s@/]+@\S+/\d{4}-\d{2}-\d{2}/\S+"
)
KEY_MAX = 512  # longer is no key we wrote (repository and branch names are short); keeps the footer small


def card_key(repo: str, sha: str, lang: str) -> str:
    """A standalone card's key, as the service records it (bot/chat/service.py)."""
    return f"card:{repo}@{sha}/{lang}"


def keyed_embed(embed: Embed, key: str) -> Embed:
    """A copy of the embed whose footer ends with the key on a line of its own."""
    keyed = copy.deepcopy(embed)
    footer = (keyed.get("footer") or {}).get("text") or ""
    keyed["footer"] = {**(keyed.get("footer") or {}), "text": f"{footer}\n{key}" if footer else key}
    return keyed


def keyed_messages(messages: list[Message], key: str) -> list[Message]:
    """Each message with the key on its last embed (any of them may start a thread); a message the key
    would push past Discord's limits is sent as it is (a thread started from it is then not traced)."""
    if not _is_key(key):
        return messages
    out: list[Message] = []
    for message in messages:
        embeds = message.get("embeds") or []
        keyed = {**message, "embeds": [*embeds[:-1], keyed_embed(embeds[-1], key)]} if embeds else message
        out.append(keyed if embeds and not message_problems(keyed) else message)
    return out


def key_in(message: Any, me: int | None) -> str | None:
    """The key a message carries: None unless our bot user (`me`) wrote it and the last line of its last
    embed's footer is a key."""
    if me is None or message.author.id != me or not message.embeds:
        return None
    text = message.embeds[-1].footer.text or ""
    line = text.rsplit("\n", 1)[-1].strip()
    return line if _is_key(line) else None


def _is_key(text: str) -> bool:
    return len(text) <= KEY_MAX and KEY_LINE.fullmatch(text) is not None
