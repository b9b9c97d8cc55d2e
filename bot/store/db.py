"""The SQLite store (sqlite-utils): commits and their files, analyses, digests, the HTTP cache,
LLM calls and chat posts. The schema is built by numbered migrations tracked in PRAGMA user_version;
the database runs in WAL mode so the service and a CLI run can share it.

Over 400 lines because it is one thing: the store's API over one schema, where every table's reads and writes
share the same connection and transaction rules; migrations, health and the LLM call log are modules of their
own.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import sys
import threading
import time
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import sqlite_utils

from analysis.errors import ConfigError
from analysis.history.followups import FollowUpKind, FollowUpLink, Mined, PastCommit
from analysis.history.index import BranchCommit, automated
from analysis.models import PR_IN_TITLE, Analysis, Commit, FileChange, SurfaceChange, SurfaceKind
from analysis.titles import merge_pr, message_title
from bot.ports.secrets import scrub
from bot.store.group import GroupCommit
from bot.store.health import check_schema, database_error, is_known
from bot.store.migrations import MIGRATIONS


def utcnow() -> datetime:
    return datetime.now(UTC)


def _iso(dt: datetime) -> str:
    return dt.isoformat()


class Store:
    # How long a write waits for another process's transaction before giving up (SQLite busy timeout).
    BUSY_TIMEOUT = 30.0

    def __init__(self, path: Path | str):
        self.path = Path(path) if str(path) != ":memory:" else None
        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(path), check_same_thread=False, timeout=self.BUSY_TIMEOUT)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open database {path}: {exc}{_open_hint(self.path)}") from None
        # One connection, shared by the event loop and worker threads: serialise access.
        self._lock = threading.RLock()
        # Call-log rows and analyses handed over during a run: committed together (bot/store/group.py).
        self._group = GroupCommit(self.transaction, self._lock)
        self.db = sqlite_utils.Database(conn)
        try:
            if self.path is not None:
                self.db.enable_wal()
            self.db.execute("PRAGMA foreign_keys = ON")
            self._migrate()
            check_schema(self.db, MIGRATIONS, path)
        except sqlite3.DatabaseError as exc:
            conn.close()
            if is_known(exc):
                raise database_error(exc, path, self.BUSY_TIMEOUT) from None
            raise ConfigError(f"{path} is not a usable digestbot database: {exc}") from None
        except ConfigError:
            conn.close()
            raise

    # -- schema -------------------------------------------------------------------------------
    def _migrate(self) -> None:
        """Each migration in its own write transaction that re-reads the version first, so two
        processes opening a new file at once take turns instead of both creating the tables. An
        up-to-date file needs no write lock at all."""
        while True:
            with self._lock:
                if self._pending_version() is None:
                    return
            with self.transaction():
                version = self._pending_version()  # another process may have migrated meanwhile
                if version is not None:
                    MIGRATIONS[version](self.db)
                    self.db.execute(f"PRAGMA user_version = {version + 1}")

    def _pending_version(self) -> int | None:
        """The schema version whose migration is next, or None when the file is up to date."""
        version = self.schema_version
        if version > len(MIGRATIONS):
            raise ConfigError(
                f"database schema version {version} is newer than this digestbot ({len(MIGRATIONS)})"
            )
        return version if version < len(MIGRATIONS) else None

    @property
    def schema_version(self) -> int:
        return self.db.execute("PRAGMA user_version").fetchone()[0]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction. The outermost one is BEGIN IMMEDIATE: it takes the write lock up
        front (waiting up to the busy timeout), where a deferred one that read first fails at once
        with "database is locked" when another process wrote in between. Inner ones are savepoints."""
        with self._lock:
            if self.db.conn.in_transaction:
                with self.db.atomic():
                    yield
                return
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                if self.db.conn.in_transaction:
                    self.db.execute("ROLLBACK")
                raise
            try:
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.conn.in_transaction:
                    self.db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        self._group.close()  # every write handed over is committed before the connection closes
        self.db.close()

    def settle(self) -> None:
        """Commit the writes handed over so far (save_analysis_soon, log_llm_call_soon): done by every
        read of the tables they write, so a read never misses what was handed over before it."""
        if not self._group.pending():
            return
        with self._lock:
            # Holding the lock, an open transaction can only be this thread's own: its writes come first
            # (the writer commits the queue once it is done), a batch inside it would not be durable.
            if not self.db.conn.in_transaction:
                self._group.settle()

    # -- commits ------------------------------------------------------------------------------
    def save_commits(self, commits: Iterable[Commit]) -> None:
        """Several commits in one transaction (a day's, a replayed chunk's): one commit to disk, not one each."""
        with self.transaction():
            for commit in commits:
                self.save_commit(commit)

    def save_commit(self, commit: Commit) -> None:
        with self.transaction():
            self.db["commits"].upsert(
                {
                    "repo": commit.repo,
                    "sha": commit.sha,
                    "message": commit.message,
                    "author": commit.author,
                    "author_login": commit.author_login,
                    "committed_at": _iso(commit.committed_at),
                    "parents": json.dumps(list(commit.parents)),
                    "url": commit.url,
                    "additions": commit.additions,
                    "deletions": commit.deletions,
                    "files_total": commit.files_total,
                    "fetched_at": _iso(utcnow()),
                },
                pk=("repo", "sha"),
            )
            self.db.execute("DELETE FROM files WHERE repo = ? AND sha = ?", [commit.repo, commit.sha])
            self.db["files"].insert_all(
                (
                    {
                        "repo": commit.repo,
                        "sha": commit.sha,
                        "idx": i,
                        "path": f.path,
                        "status": f.status,
                        "additions": f.additions,
                        "deletions": f.deletions,
                        "patch": f.patch,
                        "previous_path": f.previous_path,
                    }
                    for i, f in enumerate(commit.files)
                ),
                pk=("repo", "sha", "idx"),
            )

    def get_commit(self, repo: str, sha: str) -> Commit | None:
        with self._lock:
            rows = list(self.db.query("SELECT * FROM commits WHERE repo = ? AND sha = ?", [repo, sha]))
            if not rows:
                return None
            files = self.db.query("SELECT * FROM files WHERE repo = ? AND sha = ? ORDER BY idx", [repo, sha])
            return _commit_from_row(rows[0], files)

    def get_commits(self, repo: str, shas: Iterable[str]) -> dict[str, Commit]:
        """The stored commits among `shas`, by sha: two queries however many (eval reads months)."""
        wanted = json.dumps(list(shas))
        with self._lock:
            rows = list(
                self.db.query(
                    "SELECT * FROM commits WHERE repo = ? AND sha IN (SELECT value FROM json_each(?))",
                    [repo, wanted],
                )
            )
            files: dict[str, list[dict[str, Any]]] = {}
            for f in self.db.query(
                "SELECT * FROM files WHERE repo = ? AND sha IN (SELECT value FROM json_each(?))"
                " ORDER BY sha, idx",
                [repo, wanted],
            ):
                files.setdefault(f["sha"], []).append(f)
        return {r["sha"]: _commit_from_row(r, files.get(r["sha"], ())) for r in rows}

    def stored_shas(self, repo: str, shas: Iterable[str]) -> set[str]:
        wanted = list(shas)
        with self._lock:
            return {
                r["sha"]
                for r in self.db.query(
                    "SELECT sha FROM commits WHERE repo = ? AND sha IN (SELECT value FROM json_each(?))",
                    [repo, json.dumps(wanted)],
                )
            }

    def find_shas(self, repo: str, prefix: str) -> list[str]:
        """Stored SHAs of repo starting with prefix (for short-SHA lookups)."""
        with self._lock:
            return [
                r["sha"]
                for r in self.db.query(
                    "SELECT sha FROM commits WHERE repo = ? AND sha LIKE ? ORDER BY sha",
                    [repo, prefix.lower() + "%"],
                )
            ]

    # -- HTTP cache ---------------------------------------------------------------------------
    def cache_get(self, url: str) -> dict[str, Any] | None:
        with self._lock:
            rows = list(self.db.query("SELECT * FROM http_cache WHERE url = ?", [url]))
        return rows[0] if rows else None

    def cache_put(self, url: str, etag: str | None, last_modified: str | None, body: str) -> None:
        with self._lock:
            self.db["http_cache"].upsert(
                {
                    "url": url,
                    "etag": etag,
                    "last_modified": last_modified,
                    "body": body,
                    "fetched_at": _iso(utcnow()),
                },
                pk="url",
            )

    # -- analyses -----------------------------------------------------------------------------
    def get_analysis(
        self, repo: str, sha: str, model: str, prompt_version: str, lang: str
    ) -> Analysis | None:
        self.settle()
        with self._lock:
            rows = list(
                self.db.query(
                    "SELECT data FROM analyses WHERE repo = ? AND sha = ? AND model = ? AND prompt_version = ?"
                    " AND lang = ?",
                    [repo, sha, model, prompt_version, lang],
                )
            )
        return Analysis.model_validate_json(rows[0]["data"]) if rows else None

    def latest_analysis(self, repo: str, sha: str, lang: str | None = None) -> Analysis | None:
        """The newest stored analysis of a commit, whatever produced it (for thread questions)."""
        sql = "SELECT data FROM analyses WHERE repo = ? AND sha = ?"
        params: list[Any] = [repo, sha]
        if lang:
            sql += " AND lang = ?"
            params.append(lang)
        self.settle()
        with self._lock:
            rows = list(
                self.db.query(sql + " ORDER BY analyzer = 'llm' DESC, created_at DESC LIMIT 1", params)
            )
        return Analysis.model_validate_json(rows[0]["data"]) if rows else None

    def save_analysis(self, repo: str, analysis: Analysis, model: str, prompt_version: str) -> None:
        self.save_analyses(repo, [analysis], model, prompt_version)

    def save_analysis_soon(
        self, repo: str, analysis: Analysis, model: str, prompt_version: str
    ) -> Future[None]:
        """save_analysis in the store's writer thread, in one transaction with whatever else is handed
        over meanwhile (group commit); the future is done once it is committed."""
        return self._group.submit(partial(self._upsert_analysis, repo, analysis, model, prompt_version))

    def save_analyses(self, repo: str, analyses: Iterable[Analysis], model: str, prompt_version: str) -> None:
        """Several analyses in one transaction (a replayed day's: one commit to disk, not one each)."""
        with self.transaction():
            for analysis in analyses:
                self._upsert_analysis(repo, analysis, model, prompt_version)

    def _upsert_analysis(self, repo: str, analysis: Analysis, model: str, prompt_version: str) -> None:
        if analysis.grounding_removed:
            self._note_grounding(repo, analysis, prompt_version)
        self.db["analyses"].upsert(
            {
                "repo": repo,
                "sha": analysis.sha,
                "model": model,
                "prompt_version": prompt_version,
                "lang": analysis.lang,
                "importance": analysis.importance.value,
                "change_type": analysis.change_type.value,
                "analyzer": analysis.analyzer,
                "data": analysis.model_dump_json(),
                "created_at": _iso(utcnow()),
            },
            pk=("repo", "sha", "model", "prompt_version", "lang"),
        )

    def _note_grounding(self, repo: str, analysis: Analysis, prompt_version: str) -> None:
        """What the fact-check removed goes on the commit's newest LLM call (its `error` column): kept
        for whoever audits the model, never shown to readers."""
        note = "grounding removed: " + ", ".join(analysis.grounding_removed)
        self.db.execute(
            "UPDATE llm_calls SET error = CASE WHEN coalesce(error, '') = '' THEN ? ELSE error || '; ' || ? END"
            " WHERE id = (SELECT max(id) FROM llm_calls WHERE repo = ? AND sha = ? AND prompt_version = ?)",
            [note, note, repo, analysis.sha, prompt_version],
        )

    # -- LLM calls ----------------------------------------------------------------------------
    keep_prompts = True  # LLM_LOG_PROMPTS=off: calls are logged without their prompt and reply

    def log_llm_call(self, **fields: Any) -> None:
        fields.setdefault("created_at", _iso(utcnow()))
        with self._lock:
            self._insert_call(fields)

    def log_llm_call_soon(self, **fields: Any) -> Future[None]:
        """log_llm_call in the store's writer thread, committed with whatever else is handed over
        meanwhile (a day's answers arrive together); the time of the call is taken now."""
        fields.setdefault("created_at", _iso(utcnow()))
        return self._group.submit(partial(self._insert_call, fields))

    def _insert_call(self, fields: dict[str, Any]) -> None:
        if not self.keep_prompts:
            fields.pop("prompt", None)
            fields.pop("reply", None)
        for name in ("error", "prompt", "reply"):  # a server may quote a key in any of them
            if isinstance(fields.get(name), str):
                fields[name] = scrub(fields[name])
        self.db["llm_calls"].insert(fields)

    def purge_prompts(self, before: datetime) -> int:
        """Forget the prompt and reply of every call made before `before` (the call itself stays)."""
        self.settle()
        with self.transaction():
            cursor = self.db.execute(
                "UPDATE llm_calls SET prompt = NULL, reply = NULL"
                " WHERE created_at < ? AND (prompt IS NOT NULL OR reply IS NOT NULL)",
                [_iso(before.astimezone(UTC))],
            )
        return cursor.rowcount

    def llm_usage_since(self, since: datetime) -> dict[str, int]:
        self.settle()
        with self._lock:
            row = next(
                self.db.query(
                    "SELECT count(*) AS calls, coalesce(sum(tokens_in), 0) AS tokens_in,"
                    " coalesce(sum(tokens_out), 0) AS tokens_out FROM llm_calls WHERE created_at >= ?",
                    [_iso(since)],
                )
            )
        return dict(row)

    # -- digests ------------------------------------------------------------------------------
    def save_digest(self, key: str, record: dict[str, Any]) -> int:
        with self.transaction():  # read-then-write: two runs of one day must not both insert
            existing = list(self.db.query("SELECT id FROM digests WHERE key = ?", [key]))
            if existing:
                self.db["digests"].update(existing[0]["id"], {"key": key, **record})
                return int(existing[0]["id"])
            return int(self.db["digests"].insert({"key": key, **record}).last_pk)

    def get_digest(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            rows = list(self.db.query("SELECT * FROM digests WHERE key = ?", [key]))
        return rows[0] if rows else None

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
                    "created_at": _iso(utcnow()),
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
                    "created_at": _iso(utcnow()),
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
                    if not mine and current["expires_at"] > now and _alive(current["host"], current["pid"]):
                        conn.execute("ROLLBACK")
                        return current
                acquired = _iso(utcnow()) if row is None or row[0] != holder else row[3]
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

    # -- history and follow-ups ---------------------------------------------------------------
    def save_history(self, repo: str, branch: str, commits: Iterable[PastCommit]) -> int:
        rows = [
            {
                "repo": repo,
                "branch": branch,
                "sha": c.sha,
                "committed_at": _iso(c.committed_at.astimezone(UTC)),
                "message": c.message,
                "files": json.dumps(c.files),
                "automated": int(automated(c)),
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
        with self._lock:
            cursor = self.db.execute(
                f"SELECT sha, committed_at, message, automated{', files' if files else ''} FROM history"
                " WHERE repo = ? AND branch = ? AND committed_at >= ? AND committed_at < ?"
                " ORDER BY committed_at, sha",
                [repo, branch, _iso(since.astimezone(UTC)), _iso(until.astimezone(UTC))],
            )
            return [
                BranchCommit(
                    r[0],
                    datetime.fromisoformat(r[1]),
                    r[2],
                    tuple((p, n) for p, n in json.loads(r[4] or "[]")) if files else (),
                    automated=bool(r[3]),
                )
                for r in cursor.fetchall()
            ]

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
                    "oldest": _iso(oldest.astimezone(UTC)),
                    "newest": _iso(newest.astimezone(UTC)),
                    "synced_at": _iso(utcnow()),
                },
                pk=("repo", "branch"),
            )

    def save_followups(self, repo: str, links: Iterable[FollowUpLink]) -> None:
        rows = [{"repo": repo, **_link_row(link)} for link in links]
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
            [repo, branch, _iso(since.astimezone(UTC)), _iso(until.astimezone(UTC))],
        )
        if not rows or rows[0]["fingerprint"] != fingerprint:
            return None
        links = tuple(_link_from_row(r) for r in json.loads(rows[0]["links"]))
        return Mined(links, tuple((a, b) for a, b in json.loads(rows[0]["reverts"])))

    def save_mined_span(
        self, repo: str, branch: str, since: datetime, until: datetime, fingerprint: str, mined: Mined
    ) -> None:
        """Keep what mining [since, until) found; the oldest spans of the branch beyond MINED_SPANS_KEPT go."""
        links = [_link_row(link) for link in mined.links]
        with self.transaction():
            self.db["mined_spans"].upsert(
                {
                    "repo": repo,
                    "branch": branch,
                    "since": _iso(since.astimezone(UTC)),
                    "until": _iso(until.astimezone(UTC)),
                    "fingerprint": fingerprint,
                    "links": json.dumps(links),
                    "reverts": json.dumps([list(pair) for pair in mined.reverts]),
                    "mined_at": _iso(utcnow()),
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
            [repo, branch, _iso(since.astimezone(UTC)), _iso(until.astimezone(UTC))],
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
                    _iso(since.astimezone(UTC)),
                    _iso(until.astimezone(UTC)),
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
            [repo, _iso(since.astimezone(UTC)), _iso(until.astimezone(UTC))],
        )

    def _followups(self, where: str, params: list[Any]) -> list[FollowUpLink]:
        with self._lock:
            rows = self.db.query(
                f"SELECT * FROM followups WHERE repo = ? AND {where} ORDER BY follow_up_at, original", params
            )
            return [_link_from_row(r) for r in rows]

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
                    "updated_at": _iso(utcnow()),
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
                    "updated_at": _iso(utcnow()),
                },
                pk=("platform", "thread_id"),
            )

    def shas_for_pr(self, repo: str, number: int) -> list[str]:
        """The stored commits (commits and history) whose title ends in "(#number)"."""
        like = f"%(#{int(number)})%"
        rows = self.query(
            "SELECT sha, message FROM commits WHERE repo = ? AND message LIKE ?"
            " UNION SELECT sha, message FROM history WHERE repo = ? AND message LIKE ?",
            [repo, like, repo, like],
        )
        return sorted({r["sha"] for r in rows if _title_pr(r["message"]) == int(number)})

    def known_sha(self, repo: str, prefix: str) -> bool:
        """Whether a commit of repo starting with prefix is stored (commits or history)."""
        like = prefix.lower().replace("%", "").replace("_", "") + "%"
        rows = self.query(
            "SELECT 1 FROM commits WHERE repo = ? AND sha LIKE ? UNION ALL"
            " SELECT 1 FROM history WHERE repo = ? AND sha LIKE ? LIMIT 1",
            [repo, like, repo, like],
        )
        return bool(rows)

    # -- surface facts ------------------------------------------------------------------------------
    def save_surfaces(
        self,
        repo: str,
        version: str,
        found: Mapping[str, tuple[tuple[SurfaceChange, ...], frozenset[str] | None, frozenset[str] | None]],
    ) -> None:
        rows = [
            {
                "repo": repo,
                "sha": sha,
                "version": version,
                "surface": json.dumps([_surface_row(c) for c in surface], ensure_ascii=False),
                "shipped": _json_paths(shipped),
                "prose": _json_paths(prose),
                "created_at": _iso(utcnow()),
            }
            for sha, (surface, shipped, prose) in found.items()
        ]
        if rows:
            with self.transaction():
                self.db["surfaces"].upsert_all(rows, pk=("repo", "sha", "version"))

    def surfaces(
        self, repo: str, shas: Iterable[str], version: str
    ) -> dict[str, tuple[tuple[SurfaceChange, ...], frozenset[str] | None, frozenset[str] | None]]:
        """The stored facts of these commits by this parser version (commits never read are absent):
        (surface, shipped paths, prose files)."""
        with self._lock:
            rows = list(
                self.db.query(
                    "SELECT sha, surface, shipped, prose FROM surfaces WHERE repo = ? AND version = ?"
                    " AND sha IN (SELECT value FROM json_each(?))",
                    [repo, version, json.dumps(list(shas))],
                )
            )
        out = {}
        for r in rows:
            try:
                surface = tuple(
                    SurfaceChange(**{**c, "kind": SurfaceKind(c["kind"])}) for c in json.loads(r["surface"])
                )
            except (TypeError, ValueError, KeyError):
                continue  # damaged or from another version of the shape: read again
            out[r["sha"]] = (surface, _paths(r["shipped"]), _paths(r["prose"]))
        return out

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
                    "updated_at": _iso(utcnow()),
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
                    "created_at": _iso(utcnow()),
                },
                pk=("platform", "channel", "digest_key"),
            )

    # -- pending work (bot/delivery/outbox.py) ---------------------------------------------------------------
    def add_work(self, key: str, kind: str, platform: str, channel: str, payload: dict[str, Any]) -> dict:
        """Record work as pending unless it is known already; returns its row."""
        now = _iso(utcnow())
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
            self.db["pending_work"].update(key, {**fields, "updated_at": _iso(utcnow())})

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        self.settle()
        with self._lock:
            return list(self.db.query(sql, list(params)))

    def query_unless_busy(self, sql: str, params: Iterable[Any], wait: float) -> list[dict[str, Any]] | None:
        """A read of a table the group commit never writes, for code on the event loop that must answer at
        once (a Slack ack): None when the connection is not free within `wait` seconds — the writer holds it
        while another process holds SQLite's write lock, up to the busy timeout — instead of waiting."""
        if not self._lock.acquire(timeout=wait):
            return None
        try:
            return list(self.db.query(sql, list(params)))
        finally:
            self._lock.release()


def _link_row(link: FollowUpLink) -> dict[str, Any]:
    return {
        "original": link.original,
        "follow_up": link.follow_up,
        "kind": link.kind.value,
        "evidence": link.evidence,
        "original_at": _iso(link.original_at.astimezone(UTC)),
        "follow_up_at": _iso(link.follow_up_at.astimezone(UTC)),
    }


def _link_from_row(r: dict[str, Any]) -> FollowUpLink:
    return FollowUpLink(
        original=r["original"],
        follow_up=r["follow_up"],
        kind=FollowUpKind(r["kind"]),
        evidence=r["evidence"],
        original_at=datetime.fromisoformat(r["original_at"]),
        follow_up_at=datetime.fromisoformat(r["follow_up_at"]),
    )


def _title_pr(message: str | None) -> int | None:
    title = message_title(message or "")[0]
    m = PR_IN_TITLE.search(title)
    return int(m.group(1)) if m else merge_pr(title)


def _json_paths(paths: frozenset[str] | None) -> str | None:
    return json.dumps(sorted(paths), ensure_ascii=False) if paths is not None else None


def _paths(stored: str | None) -> frozenset[str] | None:
    return frozenset(json.loads(stored)) if stored is not None else None


def _surface_row(change: SurfaceChange) -> dict[str, Any]:
    return {
        "kind": change.kind.value,
        "name": change.name,
        "path": change.path,
        "line": change.line,
        "old": change.old,
        "new": change.new,
        "aliased": change.aliased,
    }


def _commit_from_row(row: dict[str, Any], files: Iterable[dict[str, Any]]) -> Commit:
    return Commit(
        repo=row["repo"],
        sha=row["sha"],
        message=row["message"],
        author=row["author"],
        author_login=row["author_login"],
        committed_at=datetime.fromisoformat(row["committed_at"]),
        parents=tuple(json.loads(row["parents"] or "[]")),
        url=row["url"],
        additions=row["additions"],
        deletions=row["deletions"],
        files_total=row["files_total"],
        files=tuple(
            FileChange(
                path=f["path"],
                status=f["status"],
                additions=f["additions"],
                deletions=f["deletions"],
                patch=f["patch"],
                previous_path=f["previous_path"],
            )
            for f in files
        ),
    )


def _open_hint(path: Path | None) -> str:
    """Why SQLite could not open the file, when the cause is plain: a directory we cannot write."""
    if path is None:
        return ""
    folder = path.parent
    if folder.is_dir() and not os.access(folder, os.W_OK):
        return f" (its directory {folder} is not writable: check its owner and permissions, or set DIGEST_DB)"
    return ""


def _alive(host: str, pid: int) -> bool:
    """Whether a lease holder may still be running: a process on this host can be checked; one on
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
