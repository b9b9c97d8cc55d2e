"""How a restart recognises what it already sent to Discord: a nonce per message part (Discord returns
the first message for a repeated nonce) and a fingerprint of what a message shows, since the history does
not return nonces."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from typing import Any

import discord

log = logging.getLogger(__name__)


NONCE_MAX = 25  # Discord's limit on a nonce's length


def nonce_of(channel: str, key: str, item: str, part: int) -> str:
    """A message part's nonce: the same part of the same digest in the same channel always gets the
    same one, so Discord (enforce_nonce) returns the first message instead of creating a second."""
    return hashlib.sha256(f"{channel}\n{key}\n{item}\n{part}".encode()).hexdigest()[:NONCE_MAX]


def _norm(text: Any) -> str:
    return " ".join(str(text or "").split())


def fingerprint(content: str | None, embeds: list[dict[str, Any]], filenames: list[str]) -> str:
    """What a message shows (text, embeds, file names; not timestamps or colours): how a restart
    recognises a part it already sent, since Discord does not return nonces in the history."""
    parts = [_norm(content)]
    for embed in embeds:
        parts += [_norm(embed.get(k)) for k in ("title", "description", "url")]
        parts += [
            _norm((embed.get("footer") or {}).get("text")),
            _norm((embed.get("author") or {}).get("name")),
        ]
        parts += [f"{_norm(f.get('name'))}={_norm(f.get('value'))}" for f in embed.get("fields") or []]
    parts += filenames
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def print_of(message: discord.Message) -> str:
    return fingerprint(
        message.content, [e.to_dict() for e in message.embeds], [a.filename for a in message.attachments]
    )


@dataclass
class SeenMessages:
    """Our messages in a thread (or channel), oldest first, by fingerprint and by first embed URL."""

    by_print: dict[str, list[int]] = field(default_factory=dict)
    by_url: dict[str, int] = field(default_factory=dict)
    claimed: set[int] = field(default_factory=set)  # ids already matched to a part in this process

    def add(self, message_id: int, print_: str, url: str | None) -> None:
        self.by_print.setdefault(print_, []).append(message_id)
        if url:
            self.by_url.setdefault(url, message_id)

    def take(self, print_: str) -> int | None:
        for message_id in self.by_print.get(print_, []):
            if message_id not in self.claimed:
                self.claimed.add(message_id)
                return message_id
        return None
