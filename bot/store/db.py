"""The SQLite store (sqlite-utils): one connection shared by the event loop and worker threads, its
transactions and group commit, the HTTP cache, LLM calls and digests. The schema is built by numbered
migrations tracked in PRAGMA user_version; the database runs in WAL mode so the service and a CLI run can
share it. The other tables' reads and writes are mixins of Store, one module each: commits.py (commits,
analyses, surfaces), history.py (history, follow-ups, mined spans), threads.py (thread answers), posts.py
(posts, leases, banners, plans, pending work); rows.py reads rows into the domain and back.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import sqlite_utils

from analysis.errors import ConfigError
from bot.ports.secrets import scrub
from bot.store.commits import CommitTables
from bot.store.group import GroupCommit
from bot.store.health import check_schema, database_error, is_known
from bot.store.history import HistoryTables
from bot.store.migrations import MIGRATIONS
from bot.store.posts import PostTables
from bot.store.rows import insert_sql, iso, utcnow
from bot.store.threads import ThreadTables


class Store(CommitTables, HistoryTables, ThreadTables, PostTables):
    # How long a write waits for another process's transaction before giving up (SQLite busy timeout).
    BUSY_TIMEOUT = 30.0
    # How long work on the event loop that may do without the store (a thread's memory, the chat
    # subscriptions last read) waits for it: a busy database must not hold every ack.
    LOOP_WAIT = 0.25

    def __init__(self, path: Path | str, *, migrate: bool = True):
        """The database at `path`, migrated to this version's schema; migrate=False (status, logs,
        unsubscribe: the operator's verbs beside a running service) refuses a database of an older schema
        instead of migrating it: a newer digestbot run for `status` upgraded the file under an older service,
        which then refused it at its restart."""
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
        self.db = sqlite_utils.Database(conn, execute_plugins=False)
        try:
            if self.path is not None:
                self._enable_wal()
            self.db.execute("PRAGMA foreign_keys = ON")
            if migrate or self.path is None:
                self._migrate()
            elif (version := self._pending_version()) is not None:
                raise ConfigError(
                    f"database {path} has schema version {version}, older than this digestbot's"
                    f" ({len(MIGRATIONS)}): the service migrates it when it starts on this version (run"
                    " this command with the service's version until then)"
                )
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
    def _enable_wal(self) -> None:
        """Write-ahead logging, which a new file's first opener switches on. Processes opening a new file at
        once race for that switch, and SQLite answers the losers "database is locked" at once, without its
        busy wait (3 of 3,200 opens, eight at a time): they try again, within the busy timeout."""
        deadline = time.monotonic() + self.BUSY_TIMEOUT
        pause = 0.005
        while True:
            try:
                self.db.enable_wal()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(2 * pause, 0.25)

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
                    "fetched_at": iso(utcnow()),
                },
                pk="url",
            )

    # -- LLM calls ----------------------------------------------------------------------------
    keep_prompts = True  # LLM_LOG_PROMPTS=off: calls are logged without their prompt and reply

    def log_llm_call(self, **fields: Any) -> None:
        fields.setdefault("created_at", iso(utcnow()))
        with self._lock:
            self._insert_call(fields)

    def log_llm_call_soon(self, **fields: Any) -> Future[None]:
        """log_llm_call in the store's writer thread, committed with whatever else is handed over
        meanwhile (a day's answers arrive together); the time of the call is taken now."""
        fields.setdefault("created_at", iso(utcnow()))
        return self._group.submit(partial(self._insert_call, fields))

    def _insert_call(self, fields: dict[str, Any]) -> None:
        if not self.keep_prompts:
            fields.pop("prompt", None)
            fields.pop("reply", None)
        for name in ("error", "prompt", "reply"):  # a server may quote a key in any of them
            if isinstance(fields.get(name), str):
                fields[name] = scrub(fields[name])
        # One statement, as for an analysis (bot/store/commits.py): the keys are the call log's own.
        self.db.execute(insert_sql("llm_calls", list(fields)), list(fields.values()))

    def purge_prompts(self, before: datetime) -> int:
        """Forget the prompt and reply of every call made before `before` (the call itself stays)."""
        self.settle()
        with self.transaction():
            cursor = self.db.execute(
                "UPDATE llm_calls SET prompt = NULL, reply = NULL"
                " WHERE created_at < ? AND (prompt IS NOT NULL OR reply IS NOT NULL)",
                [iso(before.astimezone(UTC))],
            )
        return cursor.rowcount

    def llm_usage_since(self, since: datetime) -> dict[str, int]:
        self.settle()
        with self._lock:
            row = next(
                self.db.query(
                    "SELECT count(*) AS calls, coalesce(sum(tokens_in), 0) AS tokens_in,"
                    " coalesce(sum(tokens_out), 0) AS tokens_out FROM llm_calls WHERE created_at >= ?",
                    [iso(since)],
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

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        self.settle()
        with self._lock:
            return list(self.db.query(sql, list(params)))

    @contextmanager
    def impatient(self, wait: float | None = None) -> Iterator[None]:
        """For a write on the event loop that may be skipped (a thread's memory): wait at most `wait` seconds
        for the connection and for another process's write lock, not BUSY_TIMEOUT (a 30 s stall of every
        Slack ack); past it sqlite3.OperationalError "database is locked". Default: LOOP_WAIT."""
        wait = self.LOOP_WAIT if wait is None else wait
        if not self._lock.acquire(timeout=wait):
            raise sqlite3.OperationalError("database is locked")
        try:
            self.db.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
            try:
                yield
            finally:
                self.db.execute(f"PRAGMA busy_timeout = {int(self.BUSY_TIMEOUT * 1000)}")
        finally:
            self._lock.release()

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


def _open_hint(path: Path | None) -> str:
    """Why SQLite could not open the file, when the cause is plain: a directory we cannot write."""
    if path is None:
        return ""
    folder = path.parent
    if folder.is_dir() and not os.access(folder, os.W_OK):
        return f" (its directory {folder} is not writable: check its owner and permissions, or set DIGEST_DB)"
    return ""
