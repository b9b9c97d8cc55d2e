"""The store under pressure: several processes on one file, and files that are damaged or tampered
with. Concurrency is shown with real processes and threads on a temporary database."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from analysis.errors import ConfigError
from bot.cli.main import cli
from bot.store.db import Store
from bot.store.health import expected_schema, schema_of, schema_problems
from bot.store.migrations import MIGRATIONS
from tests.fakes.gitrepo import GitRepo, git_env, isolate_git_env

DAY = "2026-01-26"
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")
    for i in range(8):
        r.commit(
            f"[Bugfix] Fix case {i} (#{i + 10})",
            {f"src/m{i}.py": "x = 1\n" * (i * 30 + 1)},
            when=f"2026-01-26T{i + 8:02d}:00:00+08:00",
        )
    return r


def test_first_opens_of_a_new_database_at_once(tmp_path):
    path = tmp_path / "new.db"
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def open_it() -> None:
        barrier.wait()
        try:
            Store(path).close()
        except BaseException as exc:  # collected, asserted below
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    store = Store(path)
    assert store.schema_version == len(MIGRATIONS)
    store.close()


def test_an_opener_that_loses_the_race_to_switch_on_wal_tries_again(tmp_path, monkeypatch):
    # eight threads opening a new file at once: SQLite told 3 of 3,200 "database is locked" at once, without
    # its busy wait, when they asked for write-ahead logging (the first opener's switch)
    import sqlite_utils

    real = sqlite_utils.Database.enable_wal
    answers = ["database is locked", "database is locked"]

    def racing(self: sqlite_utils.Database) -> None:
        if answers:
            raise sqlite3.OperationalError(answers.pop(0))
        real(self)

    monkeypatch.setattr(sqlite_utils.Database, "enable_wal", racing)
    store = Store(tmp_path / "new.db")
    assert answers == [] and store.db.journal_mode == "wal"
    store.close()
    answers.append("disk I/O error")  # any other failure is not a race: said at once, as before
    with pytest.raises(ConfigError):
        Store(tmp_path / "other.db")


def test_concurrent_digest_processes_all_succeed(repo, tmp_path):
    db = tmp_path / "shared.db"
    env = {**os.environ, **git_env(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    args = [
        sys.executable, "-m", "bot.cli", "--db", str(db), "digest", "--git-dir", str(repo.path),
        "--date", DAY, "--tz", "Asia/Shanghai", "--refresh", "--format", "json",
    ]  # fmt: skip
    procs = [
        subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
        for _ in range(5)
    ]
    results = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read().decode()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert [(code, err) for code, _, err in results] == [(0, "")] * 5
    assert all(b'"sha"' in out for _, out, _ in results)
    store = Store(db)
    assert len(store.query("SELECT key FROM digests")) == 1
    assert len(store.query("SELECT sha FROM analyses")) == 8
    store.close()


def test_a_busy_new_database_is_named_busy_not_unusable(tmp_path, monkeypatch):
    path = tmp_path / "busy.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process creating the file, for longer than we wait
    holder.execute("CREATE TABLE t (x)")
    monkeypatch.setattr(Store, "BUSY_TIMEOUT", 0.2)
    try:
        with pytest.raises(ConfigError) as caught:
            Store(path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    message = str(caught.value)
    assert "busy" in message and "another digestbot" in message
    assert "not a usable" not in message


def test_a_write_that_waits_too_long_is_one_line_and_exit_2(repo, tmp_path, monkeypatch):
    db = tmp_path / "d.db"
    Store(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # a writer that never lets go
    monkeypatch.setattr(Store, "BUSY_TIMEOUT", 0.2)
    try:
        result = CliRunner().invoke(
            cli, ["--db", str(db), "digest", "--git-dir", str(repo.path), "--date", DAY, "--tz", "UTC"]
        )
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: database {db} is busy")


def test_expected_schema_comes_from_the_migrations():
    expected = expected_schema(MIGRATIONS)
    assert {"commits", "analyses", "digests", "posts", "runs"} <= set(expected)
    assert "message" in expected["commits"]
    assert schema_problems(expected, expected) == []
    damaged = {**expected, "analyses": tuple(c for c in expected["analyses"] if c != "data")}
    del damaged["posts"]
    assert schema_problems(damaged, expected) == [
        "table analyses lacks column(s) data",
        "table posts is missing",
    ]


@pytest.mark.parametrize("version", range(len(MIGRATIONS)))
def test_a_database_of_any_earlier_version_upgrades(tmp_path, monkeypatch, version):
    """Every schema version an earlier digestbot left (the merged branches' migrations in their final
    order: the surface cache, the thread focus, then pending work and post plans) opens and migrates to
    the current one."""
    import bot.store.db

    path = tmp_path / "old.db"
    with monkeypatch.context() as older:
        older.setattr(bot.store.db, "MIGRATIONS", MIGRATIONS[:version])
        Store(path).close()
    store = Store(path)
    assert store.schema_version == len(MIGRATIONS)
    assert {"surfaces", "thread_focus", "pending_work", "post_plans"} <= set(store.db.table_names())
    store.close()


def test_the_merged_branches_migrations_can_run_twice():
    """The migrations added by branches merged in either order check before they create: a database
    numbered by one order still migrates under the other."""
    import sqlite_utils

    db = sqlite_utils.Database(memory=True)
    for migration in MIGRATIONS:
        migration(db)
    for migration in MIGRATIONS[4:]:  # _m7_ops onwards
        migration(db)
    assert schema_problems(schema_of(db), expected_schema(MIGRATIONS)) == []


@pytest.mark.parametrize(
    ("damage", "fragment"),
    [
        ("DROP TABLE posts", "table posts is missing"),
        ("ALTER TABLE analyses RENAME COLUMN data TO payload", "table analyses lacks column(s) data"),
    ],
)
def test_a_damaged_schema_is_refused_at_open(tmp_path, damage, fragment):
    path = tmp_path / "d.db"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute(damage)
    conn.commit()
    conn.close()
    with pytest.raises(ConfigError) as caught:
        Store(path)
    message = str(caught.value)
    assert fragment in message and "damaged" in message and "backup" in message


def _corrupt_pages(path: Path) -> None:
    """Overwrite everything after the first page (the schema) with noise."""
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page:] = (b"\xde\xad\xbe\xef" * (len(data) // 4 + 1))[: len(data) - page]
    path.write_bytes(bytes(data))


def test_corrupt_pages_are_one_line_and_exit_2(repo, tmp_path):
    db = tmp_path / "d.db"
    runner = CliRunner()
    args = ["--db", str(db), "digest", "--git-dir", str(repo.path), "--date", DAY, "--tz", "Asia/Shanghai"]
    assert runner.invoke(cli, args).exit_code == 0
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    _corrupt_pages(db)
    result = runner.invoke(cli, [*args, "--refresh"])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "damaged" in lines[0] and "backup" in lines[0] and "unexpected" not in lines[0]


def test_a_column_dropped_mid_run_is_one_line_and_exit_2(repo, tmp_path, monkeypatch):
    db = tmp_path / "d.db"
    runner = CliRunner()
    args = ["--db", str(db), "digest", "--git-dir", str(repo.path), "--date", DAY, "--tz", "Asia/Shanghai"]
    # The check at open passes; the table disappears afterwards (another process, a hand edit).
    real_init = Store.__init__

    def init_then_damage(self, path):
        real_init(self, path)
        self.db.execute("DROP TABLE digests")

    monkeypatch.setattr(Store, "__init__", init_then_damage)
    result = runner.invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "damaged" in result.stderr and "no such table: digests" in result.stderr
