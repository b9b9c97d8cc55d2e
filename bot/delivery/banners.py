"""The radar's banners on the original's card (bot/digest/radar.py finds the follow-ups): where the original
shows in a channel, each (message, follow-up) recorded as pending work (bot/delivery/outbox.py does it, at least
once, never twice), and the banners already on a message, for an edit that must keep them."""

from __future__ import annotations

import json
import logging
from typing import Any
from zoneinfo import ZoneInfo

from analysis.models import Digest
from analysis.render.followups import banner, word
from bot.delivery import outbox
from bot.digest.radar import day_followups
from bot.store.db import Store

log = logging.getLogger(__name__)


def banner_targets(store: Store, platform: str, channel: str, repo: str, sha: str) -> list[dict[str, Any]]:
    """Where the original shows in this channel: its card (a digest's or a standalone one), else the
    parent message of each digest that listed it (medium and low commits have no card of their own)."""
    cards = store.query(
        "SELECT * FROM posts WHERE platform = ? AND channel = ? AND item = ?"
        " AND (digest_key LIKE ? OR digest_key LIKE ?)",
        [platform, channel, f"card:{sha}", f"{repo}@%", f"card:{repo}@%"],
    )
    if cards:
        return cards
    keys = [
        r["key"]
        for r in store.query(
            "SELECT key FROM digests WHERE repo = ? AND EXISTS"
            " (SELECT 1 FROM json_each(digests.shas) WHERE value = ?)",
            [repo, sha],
        )
    ]
    if not keys:
        return []
    return store.query(
        "SELECT * FROM posts WHERE platform = ? AND channel = ? AND item = 'parent'"
        " AND digest_key IN (SELECT value FROM json_each(?))",
        [platform, channel, json.dumps(keys)],
    )


async def correct_originals(editor: Any, store: Store, channel: str, digest: Digest) -> int:
    """Banner every original of this digest's follow-ups that was posted in this channel: each (message,
    follow-up) is pending work (bot/delivery/outbox.py), recorded, tried now, and retried by the running service
    until done or the message can no longer be edited. Returns how many are done now. Never raises: the
    digest is posted whatever happens here."""
    if not hasattr(editor, "add_banner") or not hasattr(editor, "reply_in_thread"):
        return 0
    try:
        entries = digest.followups or day_followups(store, digest)
    except Exception:  # a broken store row must not fail a post
        log.exception("radar: cannot read the follow-ups of %s %s", digest.repo, digest.day)
        return 0
    tz = ZoneInfo(digest.timezone)
    done = 0
    for entry in entries:
        text = banner(digest.lang, entry.kind, entry.follow_up_ref, entry.follow_up.committed_at, tz)
        for target in banner_targets(store, editor.platform, channel, digest.repo, entry.original_sha):
            message_id = str(target["message_id"])
            job = {
                "message_id": message_id,
                "where": channel if target["item"] == "parent" else str(target["thread_id"] or channel),
                "thread": str(target["thread_id"] or message_id),
                "banner": text,
                "reply": word(digest.lang, "reply", banner=text, title=entry.follow_up.title),
                "url": entry.follow_up.url,
                "follow_up": entry.follow_up.sha,
                "original": entry.original_sha,
            }
            key = f"radar:{editor.platform}:{channel}:{message_id}:{entry.follow_up.sha}"
            try:
                done += await outbox.submit(editor, store, "radar", channel, key, job) == "done"
            except Exception:  # the store itself failing: the digest still stands
                log.exception("radar: cannot record the banner of %s", entry.original_sha[:7])
    return done


def banners_on(store: Store, platform: str, channel: str, message_id: str) -> list[str]:
    """The banners put on a message (oldest first), for an edit that must keep them."""
    rows = store.query(
        "SELECT w.payload FROM pending_work w JOIN radar_banners b ON b.platform = w.platform"
        " AND b.channel = w.channel AND b.message_id = json_extract(w.payload, '$.message_id')"
        " AND b.follow_up = json_extract(w.payload, '$.follow_up')"
        " WHERE w.kind = 'radar' AND w.platform = ? AND w.channel = ? AND b.message_id = ?"
        " AND b.state IN ('edited', 'replied') ORDER BY w.created_at",
        [platform, channel, message_id],
    )
    return [json.loads(r["payload"])["banner"] for r in rows]
