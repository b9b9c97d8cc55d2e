"""Issue 17 item 8: a read-only database and a full disk say exactly that — at open and mid-run — instead
of "not a usable digestbot database" (which reads as corruption). SQLite is made read-only (mode=ro)
or full (max_page_count at the current size) through the connection digestbot opens."""

from __future__ import annotations

import sqlite3

import pytest
from click.testing import CliRunner

from analysis.errors import ConfigError
from bot.cli.main import cli
from bot.store.db import Store

DAY = "2026-01-26"
_connect = sqlite3.connect


def digest_line(db, repo) -> tuple[int, str]:
    """`digestbot digest` of the day on this database: exit code and its one stderr line."""
    result = CliRunner().invoke(
        cli, ["--db", str(db), "digest", "--git-dir", str(repo.path), "--date", DAY, "--tz", "Asia/Shanghai"]
    )
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.output
    return result.exit_code, lines[0]


def read_only(monkeypatch) -> None:
    def connect(path, *args, **kwargs):
        return _connect(f"file:{path}?mode=ro", *args, uri=True, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)


def full_disk(monkeypatch) -> None:
    def connect(path, *args, **kwargs):
        conn = _connect(path, *args, **kwargs)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {max(pages, 1)}")  # not one page more
        return conn

    monkeypatch.setattr(sqlite3, "connect", connect)


def test_a_read_only_database_is_named_read_only_at_open(tmp_path, monkeypatch):
    import bot.store.db

    path = tmp_path / "old.db"
    with monkeypatch.context() as older:  # a database of an older digestbot: opening it migrates it
        older.setattr(bot.store.db, "MIGRATIONS", bot.store.db.MIGRATIONS[:-1])
        Store(path).close()
    read_only(monkeypatch)
    with pytest.raises(ConfigError) as caught:
        Store(path)
    message = str(caught.value)
    assert "is read-only" in message and "not a usable" not in message and "damaged" not in message
    assert "permissions" in message


def test_a_database_on_a_read_only_mount_is_named_so_at_open(tmp_path, monkeypatch):
    """On a file system mounted read-only, SQLite opens the file and then cannot create the -shm file
    write-ahead logging needs: "unable to open database file" (SQLITE_CANTOPEN, seen on a tmpfs remounted
    ro), which read as "not a usable digestbot database". The error is raised here as SQLite raised it."""
    path = tmp_path / "d.db"
    Store(path).close()

    class ReadOnlyMount(sqlite3.Connection):
        def execute(self, sql, *args):
            if "journal_mode" in sql.lower():
                exc = sqlite3.OperationalError("unable to open database file")
                exc.sqlite_errorcode = sqlite3.SQLITE_CANTOPEN
                raise exc
            return super().execute(sql, *args)

    monkeypatch.setattr(sqlite3, "connect", lambda p, *a, **k: _connect(p, *a, factory=ReadOnlyMount, **k))
    with pytest.raises(ConfigError) as caught:
        Store(path)
    message = str(caught.value)
    assert message.startswith(f"cannot open database {path} for writing (unable to open database file)")
    assert "read-only file system or mount" in message and "not a usable" not in message


def test_a_read_only_database_mid_run_is_one_line_and_exit_2(repo, tmp_path, monkeypatch):
    db = tmp_path / "d.db"
    Store(db).close()
    read_only(monkeypatch)
    code, line = digest_line(db, repo)
    assert code == 2 and line.startswith(f"error: database {db} is read-only")


def test_a_full_disk_at_open_says_the_disk_is_full(tmp_path, monkeypatch):
    full_disk(monkeypatch)
    with pytest.raises(ConfigError, match="the disk is full") as caught:
        Store(tmp_path / "new.db")
    assert "not a usable" not in str(caught.value)


def test_a_full_disk_mid_run_is_one_line_and_exit_2(repo, tmp_path, monkeypatch):
    repo.commit(
        "[Feature] A big file (#13)", {"src/big.py": "x = 1\n" * 20_000}, when="2026-01-26T11:00:00+08:00"
    )
    db = tmp_path / "d.db"
    Store(db).close()
    full_disk(monkeypatch)
    code, line = digest_line(db, repo)
    assert code == 2 and line.startswith(f"error: cannot write database {db}: the disk is full")
    assert "free space" in line


def test_a_new_database_in_a_directory_that_cannot_be_written_names_the_directory(tmp_path, monkeypatch):
    import os

    locked = tmp_path / "locked"
    locked.mkdir()

    def connect(path, *args, **kwargs):  # what SQLite answers there (root would be let in)
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(sqlite3, "connect", connect)
    monkeypatch.setattr(os, "access", lambda path, mode: str(path) != str(locked))
    with pytest.raises(ConfigError, match=f"its directory {locked} is not writable"):
        Store(locked / "new.db")


@pytest.mark.parametrize("verb", [["status"], ["logs"]])
def test_a_verb_that_reads_leaves_an_older_schema_as_it_is(tmp_path, monkeypatch, verb):
    """`status` of a newer digestbot migrated the database under an older running service, which then
    refused it at its restart ("schema version … is newer than this digestbot")."""
    import bot.store.db

    path = tmp_path / "old.db"
    with monkeypatch.context() as older:
        older.setattr(bot.store.db, "MIGRATIONS", bot.store.db.MIGRATIONS[:-1])
        Store(path).close()
    before = sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0]
    result = CliRunner().invoke(cli, ["--db", str(path), *verb])
    assert result.exit_code == 2, result.output
    assert f"has schema version {before}, older than this digestbot's" in result.stderr
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == before
    Store(path).close()  # the service's open migrates it
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == before + 1
