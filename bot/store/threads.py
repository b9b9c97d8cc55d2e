"""The store's thread tables: the commit a chat thread is about and what its last answer listed, and the
stored commits a question names by pull request or short SHA (a mixin of bot/store/db.Store)."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from bot.store.posts import alive
from bot.store.rows import iso, title_pr, utcnow

if TYPE_CHECKING:
    import sqlite_utils


class ThreadTables:
    """Reads and writes of thread_focus, thread_listing and answered_questions, lookups in commits and history."""

    db: sqlite_utils.Database
    _lock: threading.RLock

    # -- thread answers ------------------------------------------------------------------------------
    def thread_focus(self, platform: str, thread_id: str) -> tuple[str, str] | None:
        """(repo, sha) of the commit a thread's questions are about, once one was named."""
        rows = self.query(
            "SELECT repo, sha FROM thread_focus WHERE platform = ? AND thread_id = ?", [platform, thread_id]
        )
        return (rows[0]["repo"], rows[0]["sha"]) if rows else None

    def set_thread_focus(self, platform: str, thread_id: str, repo: str, sha: str) -> None:
        with self._lock:
            self.db["thread_focus"].upsert(
                {
                    "platform": platform,
                    "thread_id": thread_id,
                    "repo": repo,
                    "sha": sha,
                    "updated_at": iso(utcnow()),
                },
                pk=("platform", "thread_id"),
            )

    def thread_listing(self, platform: str, thread_id: str) -> tuple[str, list[str]]:
        """(repo, SHAs) a thread's last answer listed, in order; ("", []) before any."""
        rows = self.query(
            "SELECT repo, shas FROM thread_listing WHERE platform = ? AND thread_id = ?",
            [platform, thread_id],
        )
        return (rows[0]["repo"], json.loads(rows[0]["shas"])) if rows else ("", [])

    def set_thread_listing(self, platform: str, thread_id: str, repo: str, shas: Sequence[str]) -> None:
        with self._lock:
            self.db["thread_listing"].upsert(
                {
                    "platform": platform,
                    "thread_id": thread_id,
                    "repo": repo,
                    "shas": json.dumps(list(shas)),
                    "updated_at": iso(utcnow()),
                },
                pk=("platform", "thread_id"),
            )

    # -- questions answered once ------------------------------------------------------------------------
    def begin_answer(
        self,
        platform: str,
        channel: str,
        message_id: str,
        stale_after: float = 900.0,
        wait: float | None = None,
        record: Mapping[str, Any] | None = None,
    ) -> bool:
        """Claim the answer to a question (a message): False when it was answered (or dropped) already, or
        when another process (or a run that stopped) began answering it less than `stale_after` seconds
        ago. `record`: the question and its claimant (the columns of _m_pending_questions), kept so that
        the claim can be answered later when its claimant dies. Waits at most `wait` (Store.LOOP_WAIT)
        seconds for the connection and the write lock (OperationalError past it): the connection held
        through another process's long write would stall the event loop's reads too."""
        now = utcnow()
        with self.impatient(wait), self.transaction():
            rows = list(
                self.db.query(
                    "SELECT state, updated_at FROM answered_questions"
                    " WHERE platform = ? AND channel = ? AND message_id = ?",
                    [platform, channel, message_id],
                )
            )
            if rows and (
                rows[0]["state"] != "answering"
                or now - datetime.fromisoformat(rows[0]["updated_at"]) < timedelta(seconds=stale_after)
            ):
                return False
            self.db.execute(  # a platform redelivers within minutes: a week of rows is plenty
                "DELETE FROM answered_questions WHERE updated_at < ?", [iso(now - timedelta(days=7))]
            )
            self.db["answered_questions"].upsert(
                {
                    **(record or {}),
                    "platform": platform,
                    "channel": channel,
                    "message_id": message_id,
                    "state": "answering",
                    "updated_at": iso(now),
                },
                pk=("platform", "channel", "message_id"),
                alter=False,
            )
        return True

    def end_answer(
        self, platform: str, channel: str, message_id: str, answered: bool, wait: float | None = None
    ) -> None:
        """The answer is posted (never again), or it failed: a later delivery may try again. Waits like
        begin_answer; a claim left unmarked lapses after its `stale_after`."""
        with self.impatient(wait), self.transaction():
            if answered:
                self.db.execute(
                    # the person's words are kept only while the answer may be owed
                    "UPDATE answered_questions SET state = 'answered', updated_at = ?, question = NULL"
                    " WHERE platform = ? AND channel = ? AND message_id = ?",
                    [iso(utcnow()), platform, channel, message_id],
                )
            else:
                self.db.execute(
                    "DELETE FROM answered_questions WHERE platform = ? AND channel = ? AND message_id = ?",
                    [platform, channel, message_id],
                )

    def renew_answers(self, platform: str, owner: str) -> int:
        """Keep `owner`'s claims on the platform's questions alive (its heartbeat): how many it holds."""
        with self.transaction():
            cursor = self.db.execute(
                "UPDATE answered_questions SET updated_at = ?"
                " WHERE platform = ? AND owner = ? AND state = 'answering'",
                [iso(utcnow()), platform, owner],
            )
        return cursor.rowcount

    def take_over_answers(
        self, platform: str, claimant: Mapping[str, Any], ttl: float, asked_since: datetime
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The platform's questions whose claim was left by a process that is gone, made `claimant`'s
        (owner, host, pid) in one write transaction, so that of two processes looking at once only one
        gets each; and those asked before `asked_since`, marked dropped instead. A claimant is gone when
        its claim was not renewed for `ttl` seconds (its heartbeat stopped), or at once when it ran on
        this host and its pid is not running or is the caller's (a restart that was given the same pid,
        as a container's first process is). Returns (taken, dropped)."""
        now = utcnow()
        taken: list[dict[str, Any]] = []
        dropped: list[dict[str, Any]] = []
        with self.transaction():
            rows = self.db.query(
                "SELECT * FROM answered_questions WHERE platform = ? AND state = 'answering'"
                " AND question IS NOT NULL AND owner IS NOT NULL AND owner != ?",
                [platform, claimant["owner"]],
            )
            for row in list(rows):
                renewed = datetime.fromisoformat(row["updated_at"])
                restarted = (row["host"], row["pid"]) == (claimant["host"], claimant["pid"])
                gone = (
                    now - renewed >= timedelta(seconds=ttl)
                    or restarted
                    or not alive(row["host"], row["pid"])  # checks a process on this host only
                )
                if not gone:
                    continue
                key = [platform, row["channel"], row["message_id"]]
                if datetime.fromisoformat(row["asked_at"]) < asked_since:
                    self.db.execute(
                        "UPDATE answered_questions SET state = 'dropped', updated_at = ?, question = NULL"
                        " WHERE platform = ? AND channel = ? AND message_id = ?",
                        [iso(now), *key],
                    )
                    dropped.append(row)
                    continue
                self.db.execute(
                    "UPDATE answered_questions SET owner = ?, host = ?, pid = ?, updated_at = ?"
                    " WHERE platform = ? AND channel = ? AND message_id = ?",
                    [claimant["owner"], claimant["host"], claimant["pid"], iso(now), *key],
                )
                taken.append(row)
        return taken, dropped

    def shas_for_pr(self, repo: str, number: int) -> list[str]:
        """The stored commits (commits and history) whose title ends in "(#number)"."""
        like = f"%(#{int(number)})%"
        rows = self.query(
            "SELECT sha, message FROM commits WHERE repo = ? AND message LIKE ?"
            " UNION SELECT sha, message FROM history WHERE repo = ? AND message LIKE ?",
            [repo, like, repo, like],
        )
        return sorted({r["sha"] for r in rows if title_pr(r["message"]) == int(number)})

    def shas_starting(self, repo: str, prefix: str, limit: int = 10) -> list[str]:
        """The stored SHAs of repo (commits and history) starting with prefix, at most `limit`, sorted."""
        like = prefix.lower().replace("%", "").replace("_", "") + "%"
        rows = self.query(
            "SELECT sha FROM commits WHERE repo = ? AND sha LIKE ? UNION"
            " SELECT sha FROM history WHERE repo = ? AND sha LIKE ? ORDER BY sha LIMIT ?",
            [repo, like, repo, like, int(limit)],
        )
        return [r["sha"] for r in rows]

    def known_sha(self, repo: str, prefix: str) -> bool:
        """Whether a commit of repo starting with prefix is stored (commits or history)."""
        like = prefix.lower().replace("%", "").replace("_", "") + "%"
        rows = self.query(
            "SELECT 1 FROM commits WHERE repo = ? AND sha LIKE ? UNION ALL"
            " SELECT 1 FROM history WHERE repo = ? AND sha LIKE ? LIMIT 1",
            [repo, like, repo, like],
        )
        return bool(rows)
