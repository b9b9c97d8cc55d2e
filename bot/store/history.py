"""The store's history tables: a branch's past commits and the span they cover, follow-up links, mined
spans and their kept index (a mixin of bot/store/db.Store)."""

from __future__ import annotations

import json
import sys
import threading
from array import array
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from analysis.history.followups import FollowUpLink, Mined, PastCommit
from analysis.history.index import BranchCommit, automated
from bot.store.bulk import rows_at_once
from bot.store.rows import iso, link_from_row, link_row, utcnow

if TYPE_CHECKING:
    import sqlite_utils


class HistoryTables:
    """Reads and writes of history, history_range, followups and mined_spans, over Store's connection."""

    db: sqlite_utils.Database
    _lock: threading.RLock

    # -- history and follow-ups ---------------------------------------------------------------
    def save_history(
        self, repo: str, branch: str, commits: Iterable[PastCommit], *, counted: bool = True
    ) -> int:
        """counted=False: the commits' files are their paths alone, their counts to be filled (count_history)
        before a read that needs them (bot/digest/history.sync_history)."""
        rows = [
            {
                "repo": repo,
                "branch": branch,
                "sha": c.sha,
                "committed_at": iso(c.committed_at.astimezone(UTC)),
                "message": c.message,
                "files": json.dumps(c.files),
                "automated": int(automated(c)),
                "counted": int(counted),
            }
            for c in commits
        ]
        with self.transaction():
            self.db["history"].upsert_all(rows, pk=("repo", "branch", "sha"))
        return len(rows)

    def history(
        self, repo: str, branch: str, since: datetime, until: datetime, *, files: bool = True
    ) -> list[PastCommit]:
        """The stored history with committer dates in [since, until), oldest first. files=False: without
        their files (empty), for what reads only the messages (mining links, a span's fingerprint):
        decoding months of file lists is most of the read."""
        columns = ["sha", "committed_at", "message", "automated", *(["files"] if files else [])]
        with self._lock:
            rows = rows_at_once(
                self.db,
                columns,
                f"SELECT {', '.join(columns)} FROM history"
                " WHERE repo = ? AND branch = ? AND committed_at >= ? AND committed_at < ?",
                [repo, branch, iso(since.astimezone(UTC)), iso(until.astimezone(UTC))],
            )
        rows.sort(key=lambda r: (r[1], r[0]))  # committed_at, sha: stored in one format, they sort as text
        return [
            BranchCommit(
                r[0],
                datetime.fromisoformat(r[1]),
                r[2],
                tuple((p, n) for p, n in json.loads(r[4] or "[]")) if files else (),
                automated=bool(r[3]),
            )
            for r in rows
        ]

    def uncounted_history(self, repo: str, branch: str, since: datetime, until: datetime) -> list[str]:
        """The stored commits with committer dates in [since, until) whose files lack their counts, oldest
        first."""
        rows = self.query(
            "SELECT sha FROM history WHERE repo = ? AND branch = ? AND committed_at >= ? AND committed_at < ?"
            " AND counted = 0 ORDER BY committed_at, sha",
            [repo, branch, iso(since.astimezone(UTC)), iso(until.astimezone(UTC))],
        )
        return [r["sha"] for r in rows]

    def count_history(self, repo: str, branch: str, files: dict[str, tuple[tuple[str, int], ...]]) -> None:
        """The stored commits' files with their counts ({sha: files}), in place of their paths alone."""
        rows = [(json.dumps(f), repo, branch, sha) for sha, f in files.items()]
        with self.transaction():
            self.db.conn.executemany(
                "UPDATE history SET files = ?, counted = 1 WHERE repo = ? AND branch = ? AND sha = ?", rows
            )

    def history_range(self, repo: str, branch: str) -> tuple[datetime, datetime] | None:
        """The span [oldest, newest) the stored history is complete for, when any."""
        with self._lock:
            rows = list(
                self.db.query(
                    "SELECT oldest, newest FROM history_range WHERE repo = ? AND branch = ?", [repo, branch]
                )
            )
        if not rows:
            return None
        return datetime.fromisoformat(rows[0]["oldest"]), datetime.fromisoformat(rows[0]["newest"])

    def set_history_range(self, repo: str, branch: str, oldest: datetime, newest: datetime) -> None:
        with self._lock:
            self.db["history_range"].upsert(
                {
                    "repo": repo,
                    "branch": branch,
                    "oldest": iso(oldest.astimezone(UTC)),
                    "newest": iso(newest.astimezone(UTC)),
                    "synced_at": iso(utcnow()),
                },
                pk=("repo", "branch"),
            )

    def newest_history_sha(self, repo: str, branch: str) -> str | None:
        """The newest stored commit of the branch's history, when any."""
        rows = self.query(
            "SELECT sha FROM history WHERE repo = ? AND branch = ? ORDER BY committed_at DESC, sha LIMIT 1",
            [repo, branch],
        )
        return rows[0]["sha"] if rows else None

    def forget_history(self, repo: str, branch: str) -> None:
        """Drop the branch's stored history, the span it covered, what was mined from it and the follow-up
        links its commits made: all is read and mined again when next needed."""
        with self.transaction():
            self.db.execute(
                "DELETE FROM followups WHERE repo = ? AND follow_up IN"
                " (SELECT sha FROM history WHERE repo = ? AND branch = ?)",
                [repo, repo, branch],
            )
            self.db.execute("DELETE FROM mined_spans WHERE repo = ? AND branch = ?", [repo, branch])
            self.db.execute("DELETE FROM history WHERE repo = ? AND branch = ?", [repo, branch])
            self.db.execute("DELETE FROM history_range WHERE repo = ? AND branch = ?", [repo, branch])

    def save_followups(self, repo: str, links: Iterable[FollowUpLink]) -> None:
        rows = [{"repo": repo, **link_row(link)} for link in links]
        with self.transaction():
            self.db["followups"].upsert_all(rows, pk=("repo", "original", "follow_up"))

    MINED_SPANS_KEPT = 8  # per branch: the days digested, weeks and evals each mine their own span

    def mined_span(
        self, repo: str, branch: str, since: datetime, until: datetime, fingerprint: str
    ) -> Mined | None:
        """What mining the history of [since, until) found, when it was mined from the same commits."""
        rows = self.query(
            "SELECT fingerprint, links, reverts FROM mined_spans WHERE repo = ? AND branch = ? AND since = ?"
            " AND until = ?",
            [repo, branch, iso(since.astimezone(UTC)), iso(until.astimezone(UTC))],
        )
        if not rows or rows[0]["fingerprint"] != fingerprint:
            return None
        links = tuple(link_from_row(r) for r in json.loads(rows[0]["links"]))
        return Mined(links, tuple((a, b) for a, b in json.loads(rows[0]["reverts"])))

    def save_mined_span(
        self, repo: str, branch: str, since: datetime, until: datetime, fingerprint: str, mined: Mined
    ) -> None:
        """Keep what mining [since, until) found; the oldest spans of the branch beyond MINED_SPANS_KEPT go."""
        links = [link_row(link) for link in mined.links]
        with self.transaction():
            self.db["mined_spans"].upsert(
                {
                    "repo": repo,
                    "branch": branch,
                    "since": iso(since.astimezone(UTC)),
                    "until": iso(until.astimezone(UTC)),
                    "fingerprint": fingerprint,
                    "links": json.dumps(links),
                    "reverts": json.dumps([list(pair) for pair in mined.reverts]),
                    "mined_at": iso(utcnow()),
                    "scores": None,  # counted and scored again for these commits (`save_span_index`)
                    "index_state": None,
                    "scores_version": None,
                },
                pk=("repo", "branch", "since", "until"),
            )
            self.db.execute(
                "DELETE FROM mined_spans WHERE repo = ? AND branch = ? AND rowid NOT IN (SELECT rowid FROM"
                " mined_spans WHERE repo = ? AND branch = ? ORDER BY mined_at DESC LIMIT ?)",
                [repo, branch, repo, branch, self.MINED_SPANS_KEPT],
            )

    def span_index(
        self, repo: str, branch: str, since: datetime, until: datetime, fingerprint: str, version: str
    ) -> tuple[list[float] | None, dict[str, Any]] | None:
        """(sorted past risk scores or None, HistoryIndex.state) kept for a mined span, when its commits
        and the rules that counted and scored them (`version`) are still the same."""
        rows = self.query(
            "SELECT fingerprint, scores, index_state, scores_version FROM mined_spans WHERE repo = ?"
            " AND branch = ? AND since = ? AND until = ?",
            [repo, branch, iso(since.astimezone(UTC)), iso(until.astimezone(UTC))],
        )
        if not rows or rows[0]["index_state"] is None:
            return None
        if rows[0]["fingerprint"] != fingerprint or rows[0]["scores_version"] != version:
            return None
        scores = None
        if rows[0]["scores"] is not None:
            packed = array("d")
            packed.frombytes(rows[0]["scores"])
            if sys.byteorder == "big":  # kept little-endian: a database file may move between machines
                packed.byteswap()
            scores = packed.tolist()
        try:
            state = json.loads(rows[0]["index_state"])
        except ValueError:  # a damaged row costs its reuse, nothing else
            return None
        return scores, state

    def save_span_index(
        self,
        repo: str,
        branch: str,
        since: datetime,
        until: datetime,
        fingerprint: str,
        version: str,
        scores: Sequence[float] | None,
        state: dict[str, Any],
    ) -> None:
        """Keep a mined span's history counts and sorted past scores beside it (nothing when the span
        itself is not kept)."""
        packed = None
        if scores is not None:
            numbers = array("d", scores)
            if sys.byteorder == "big":
                numbers.byteswap()
            packed = numbers.tobytes()
        with self.transaction():
            self.db.execute(
                "UPDATE mined_spans SET scores = ?, index_state = ?, scores_version = ? WHERE repo = ?"
                " AND branch = ? AND since = ? AND until = ? AND fingerprint = ?",
                [
                    packed,
                    json.dumps(state, separators=(",", ":")),
                    version,
                    repo,
                    branch,
                    iso(since.astimezone(UTC)),
                    iso(until.astimezone(UTC)),
                    fingerprint,
                ],
            )

    def followups_of(self, repo: str, sha: str) -> list[FollowUpLink]:
        """The later commits that reverted or fixed `sha`, in landing order."""
        return self._followups("original = ?", [repo, sha])

    def followed_up_by(self, repo: str, sha: str) -> list[FollowUpLink]:
        """The earlier commits that `sha` itself reverts or fixes."""
        return self._followups("follow_up = ?", [repo, sha])

    def followups_landed(self, repo: str, since: datetime, until: datetime) -> list[FollowUpLink]:
        """Links whose follow-up landed in [since, until)."""
        return self._followups(
            "follow_up_at >= ? AND follow_up_at < ?",
            [repo, iso(since.astimezone(UTC)), iso(until.astimezone(UTC))],
        )

    def _followups(self, where: str, params: list[Any]) -> list[FollowUpLink]:
        with self._lock:
            rows = self.db.query(
                f"SELECT * FROM followups WHERE repo = ? AND {where} ORDER BY follow_up_at, original", params
            )
            return [link_from_row(r) for r in rows]
