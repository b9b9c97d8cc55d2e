"""Is an opened database usable? Busy, damaged or tampered files are named as such with what to do,
instead of surfacing mid-run as an `OperationalError` or a `KeyError`.

The expected schema is not written down twice: it is whatever the migrations build, found by running
them on an in-memory database, so a table added by a new migration is checked without more code."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from functools import cache

import sqlite_utils

from analysis.errors import ConfigError

Migration = Callable[[sqlite_utils.Database], None]
Schema = dict[str, tuple[str, ...]]  # table -> column names, in order

# What a user can do about a damaged file. The posts table is what stops a digest being posted twice,
# so a fresh database is the last resort, not the first.
DAMAGED_ADVICE = (
    "restore it from a backup, or move it aside and digestbot will build a new one"
    " (commits and analyses are fetched again; chat posts it recorded may be posted again)"
)


def schema_of(db: sqlite_utils.Database) -> Schema:
    """Tables and columns of a database, without SQLite's own tables."""
    return {
        table.name: tuple(column.name for column in table.columns)
        for table in db.tables
        if not table.name.startswith("sqlite_")
    }


def expected_schema(migrations: Sequence[Migration]) -> Schema:
    return _expected(tuple(migrations))


@cache
def _expected(migrations: tuple[Migration, ...]) -> Schema:
    db = sqlite_utils.Database(memory=True, execute_plugins=False)
    try:
        for migration in migrations:
            migration(db)
        return schema_of(db)
    finally:
        db.close()


def schema_problems(actual: Schema, expected: Schema) -> list[str]:
    """What is missing or renamed, one short phrase each. Extra tables and columns are allowed."""
    problems = []
    for table, columns in expected.items():
        if table not in actual:
            problems.append(f"table {table} is missing")
            continue
        missing = [c for c in columns if c not in actual[table]]
        if missing:
            problems.append(f"table {table} lacks column(s) {', '.join(missing)}")
    return problems


def check_schema(db: sqlite_utils.Database, migrations: Sequence[Migration], path: object) -> None:
    problems = schema_problems(schema_of(db), expected_schema(migrations))
    if problems:
        raise ConfigError(f"database {path} is damaged ({'; '.join(problems)}): {DAMAGED_ADVICE}")


def is_busy(exc: BaseException) -> bool:
    """SQLITE_BUSY / SQLITE_LOCKED: another process holds the file, nothing is wrong with it."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def is_damaged(exc: BaseException) -> bool:
    """SQLITE_CORRUPT / SQLITE_NOTADB, or a query failing on a table or column the schema lacks."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return True
    text = str(exc)
    return any(s in text for s in ("malformed", "not a database", "no such table", "no such column"))


def _code(exc: BaseException) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if code is not None else None


def is_readonly(exc: BaseException) -> bool:
    """SQLITE_READONLY: the file (or its directory, where the -wal and -shm files go) cannot be written."""
    return _code(exc) == sqlite3.SQLITE_READONLY or "readonly database" in str(exc)


def is_full(exc: BaseException) -> bool:
    """SQLITE_FULL: no space left for the database (or its journal) on its disk."""
    return _code(exc) == sqlite3.SQLITE_FULL or "database or disk is full" in str(exc)


def is_cantopen(exc: BaseException) -> bool:
    """SQLITE_CANTOPEN on a file that opened: write-ahead logging could not create its -wal or -shm file
    beside it (a read-only file system or mount, a directory not writable)."""
    return _code(exc) == sqlite3.SQLITE_CANTOPEN or "unable to open database file" in str(exc)


def is_io_error(exc: BaseException) -> bool:
    return _code(exc) == sqlite3.SQLITE_IOERR or "disk I/O error" in str(exc)


def is_known(exc: BaseException) -> bool:
    """A failure database_error names precisely (anything else is reported as it is)."""
    return any(check(exc) for check in (is_busy, is_damaged, is_readonly, is_full, is_io_error, is_cantopen))


def database_error(exc: sqlite3.Error, path: object, busy_timeout: float) -> ConfigError:
    """One actionable line for a database failure, whenever it happens."""
    if is_readonly(exc):
        return ConfigError(
            f"database {path} is read-only ({exc}): digestbot must be able to write the file and its"
            " directory (the -wal and -shm files go there); check their owner and permissions, or set"
            " DIGEST_DB to a writable place"
        )
    if is_cantopen(exc):
        return ConfigError(
            f"cannot open database {path} for writing ({exc}): digestbot must be able to create the -wal and"
            " -shm files beside it; check that its directory is writable and not on a read-only file system"
            " or mount, or set DIGEST_DB to a writable place"
        )
    if is_full(exc):
        return ConfigError(
            f"cannot write database {path}: the disk is full ({exc}); free space on its file system"
            " and run again (nothing recorded so far is lost)"
        )
    if is_io_error(exc):
        return ConfigError(
            f"database {path}: the disk failed a read or write ({exc}); check the disk holding it"
            " (full? failing? a network file system that went away?)"
        )
    if is_busy(exc):
        return ConfigError(
            f"database {path} is busy: another digestbot process held it for over {busy_timeout:g} s;"
            " try again when it finishes"
        )
    if is_damaged(exc):
        return ConfigError(f"database {path} is damaged ({exc}): {DAMAGED_ADVICE}")
    return ConfigError(f"database {path} failed: {exc}")
