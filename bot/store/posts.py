"""The store's posting tables: chat posts and their parts, leases, radar banners, post plans, pending work
(a mixin of bot/store/db.Store)."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from bot.store.rows import iso, utcnow

if TYPE_CHECKING:
    import sqlite_utils


class PostTables:
    """Reads and writes of posts, post_parts, leases, radar_banners, post_plans and pending_work, over Store's
    connection."""

    db: sqlite_utils.Database
    _lock: threading.RLock

    # -- chat posts (idempotency) -------------------------------------------------------------
    def get_posts(self, platform: str, channel: str, key: str) -> dict[str, dict[str, Any]]:
        with self._lock:
            rows = self.db.query(
                "SELECT * FROM posts WHERE platform = ? AND channel = ? AND digest_key = ?",
                [platform, channel, key],
            )
            return {r["item"]: r for r in rows}

    def record_post(
        self, platform: str, channel: str, key: str, item: str, message_id: str, thread_id: str | None
    ) -> None:
        with self._lock:
            self.db["posts"].upsert(
                {
                    "platform": platform,
                    "channel": channel,
                    "digest_key": key,
                    "item": item,
                    "message_id": message_id,
                    "thread_id": thread_id,
                    "created_at": iso(utcnow()),
                },
                pk=("platform", "channel", "digest_key", "item"),
            )

    def get_parts(self, platform: str, channel: str, key: str, item: str) -> dict[int, str]:
        """The parts of an item already up: part number → message id."""
        with self._lock:
            rows = self.db.query(
                "SELECT part, message_id FROM post_parts WHERE platform = ? AND channel = ?"
                " AND digest_key = ? AND item = ?",
                [platform, channel, key, item],
            )
            return {int(r["part"]): str(r["message_id"]) for r in rows}

    def record_part(
        self, platform: str, channel: str, key: str, item: str, part: int, message_id: str
    ) -> None:
        with self._lock:
            self.db["post_parts"].upsert(
                {
                    "platform": platform,
                    "channel": channel,
                    "digest_key": key,
                    "item": item,
                    "part": part,
                    "message_id": message_id,
                    "created_at": iso(utcnow()),
                },
                pk=("platform", "channel", "digest_key", "item", "part"),
            )

    # -- leases (one poster per digest and channel, across processes) ---------------------------
    def take_lease(self, name: str, holder: str, ttl: float) -> dict[str, Any] | None:
        """Claim `name` for `ttl` seconds. None when it is ours now; else the row of whoever holds it.
        BEGIN IMMEDIATE takes SQLite's write lock before reading, so two processes cannot both see
        the lease free. A lease past its expiry, or held by a dead process on this host, is free."""
        now = time.time()
        host, pid = socket.gethostname(), os.getpid()
        with self._lock:
            conn = self.db.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute(
                    "SELECT holder, host, pid, acquired_at, expires_at FROM leases WHERE name = ?", [name]
                ).fetchone()
                if row is not None:
                    current = dict(
                        zip(("holder", "host", "pid", "acquired_at", "expires_at"), row, strict=True)
                    )
                    mine = current["holder"] == holder
                    if not mine and current["expires_at"] > now and alive(current["host"], current["pid"]):
                        conn.execute("ROLLBACK")
                        return current
                acquired = iso(utcnow()) if row is None or row[0] != holder else row[3]
                conn.execute(
                    "INSERT OR REPLACE INTO leases (name, holder, host, pid, acquired_at, expires_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    [name, holder, host, pid, acquired, now + ttl],
                )
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return None

    def release_lease(self, name: str, holder: str) -> None:
        with self._lock:
            self.db.execute("DELETE FROM leases WHERE name = ? AND holder = ?", [name, holder])

    def find_post(self, platform: str, message_or_thread_id: str) -> dict[str, Any] | None:
        """The post whose message, or whose thread, has this id: how a reply finds its digest."""
        with self._lock:
            rows = list(
                self.db.query(
                    "SELECT * FROM posts WHERE platform = ? AND (message_id = ? OR thread_id = ?)"
                    " ORDER BY item = 'parent' DESC LIMIT 1",
                    [platform, message_or_thread_id, message_or_thread_id],
                )
            )
        return rows[0] if rows else None

    # -- radar banners ------------------------------------------------------------------------------
    def banner_record(
        self, platform: str, channel: str, message_id: str, follow_up: str
    ) -> dict[str, Any] | None:
        rows = self.query(
            "SELECT * FROM radar_banners WHERE platform = ? AND channel = ? AND message_id = ? AND follow_up = ?",
            [platform, channel, message_id, follow_up],
        )
        return rows[0] if rows else None

    def record_banner(
        self,
        platform: str,
        channel: str,
        message_id: str,
        follow_up: str,
        original: str,
        state: str,
        reply_id: str | None = None,
    ) -> None:
        with self._lock:
            self.db["radar_banners"].upsert(
                {
                    "platform": platform,
                    "channel": channel,
                    "message_id": message_id,
                    "follow_up": follow_up,
                    "original": original,
                    "state": state,
                    "reply_id": reply_id,
                    "updated_at": iso(utcnow()),
                },
                pk=("platform", "channel", "message_id", "follow_up"),
            )

    # -- post plans (what a posted parent announced) -------------------------------------------------
    def get_plan(self, platform: str, channel: str, key: str) -> list[str] | None:
        rows = self.query(
            "SELECT items FROM post_plans WHERE platform = ? AND channel = ? AND digest_key = ?",
            [platform, channel, key],
        )
        return list(json.loads(rows[0]["items"])) if rows else None

    def plan_is_partial(self, platform: str, channel: str, key: str) -> bool:
        """The day was posted here before it ended (`post --partial`): its plan is not final yet."""
        rows = self.query(
            "SELECT partial FROM post_plans WHERE platform = ? AND channel = ? AND digest_key = ?",
            [platform, channel, key],
        )
        return bool(rows and rows[0]["partial"])

    def record_plan(
        self, platform: str, channel: str, key: str, items: list[str], *, partial: bool = False
    ) -> None:
        with self._lock:
            self.db["post_plans"].upsert(
                {
                    "platform": platform,
                    "channel": channel,
                    "digest_key": key,
                    "items": json.dumps(items),
                    "partial": int(partial),
                    "created_at": iso(utcnow()),
                },
                pk=("platform", "channel", "digest_key"),
            )

    # -- pending work (bot/delivery/outbox.py) ---------------------------------------------------------------
    def add_work(self, key: str, kind: str, platform: str, channel: str, payload: dict[str, Any]) -> dict:
        """Record work as pending unless it is known already; returns its row."""
        now = iso(utcnow())
        with self.transaction():
            self.db["pending_work"].insert(
                {
                    "key": key,
                    "kind": kind,
                    "platform": platform,
                    "channel": channel,
                    "payload": json.dumps(payload, ensure_ascii=False),
                    "state": "pending",
                    "attempts": 0,
                    "next_at": time.time(),
                    "last_error": None,
                    "created_at": now,
                    "updated_at": now,
                },
                pk="key",
                ignore=True,
            )
        return self.get_work(key)  # type: ignore[return-value]

    def get_work(self, key: str) -> dict[str, Any] | None:
        rows = self.query("SELECT * FROM pending_work WHERE key = ?", [key])
        return rows[0] if rows else None

    def due_work(
        self, platforms: Iterable[str], kinds: Iterable[str], now: float, limit: int = 50
    ) -> list[dict[str, Any]]:
        """Pending work of these kinds for these platforms whose next try is due, oldest first."""
        return self.query(
            "SELECT * FROM pending_work WHERE state = 'pending' AND next_at <= ?"
            " AND platform IN (SELECT value FROM json_each(?)) AND kind IN (SELECT value FROM json_each(?))"
            " ORDER BY next_at, created_at LIMIT ?",
            [now, json.dumps(sorted(platforms)), json.dumps(sorted(kinds)), limit],
        )

    def pending_work(self) -> list[dict[str, Any]]:
        return self.query("SELECT * FROM pending_work WHERE state = 'pending' ORDER BY created_at, key")

    def next_work_at(self, platforms: Iterable[str], kinds: Iterable[str]) -> float | None:
        rows = self.query(
            "SELECT min(next_at) AS at FROM pending_work WHERE state = 'pending'"
            " AND platform IN (SELECT value FROM json_each(?)) AND kind IN (SELECT value FROM json_each(?))",
            [json.dumps(sorted(platforms)), json.dumps(sorted(kinds))],
        )
        return rows[0]["at"] if rows and rows[0]["at"] is not None else None

    def update_work(self, key: str, **fields: Any) -> None:
        with self._lock:
            self.db["pending_work"].update(key, {**fields, "updated_at": iso(utcnow())})


def alive(host: str, pid: int) -> bool:
    """Whether a lease holder (or a question's claimant) may still be running: a process on this host can be checked; one on
    another host is trusted until its lease expires."""
    if host != socket.gethostname() or not pid:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process: it exists
        return True
    return True
