"""Many rows read in one step (bot/store/bulk.py): the same rows as a plain query, text of any kind intact,
and a plain query where SQLite has no JSON functions."""

from __future__ import annotations

import sqlite3

import pytest
import sqlite_utils

from bot.store.bulk import rows_at_once

ROWS = [
    ("b" * 40, "2026-01-02T00:00:00+00:00", 'Fix "quotes", \\ backslashes\nand 中文 ✨ (#2)', 0),
    ("a" * 40, "2026-01-01T00:00:00+00:00", None, 1),
    ("c" * 40, "2026-01-03T00:00:00+00:00", "\x00 a NUL, \t a tab", 12345678901234),
]


@pytest.fixture
def db() -> sqlite_utils.Database:
    db = sqlite_utils.Database(memory=True)
    db["history"].insert_all(
        [{"sha": s, "committed_at": at, "message": m, "automated": n} for s, at, m, n in ROWS]
    )
    return db


def test_the_rows_come_back_as_a_plain_query_reads_them(db):
    select = "SELECT sha, committed_at, message, automated FROM history WHERE committed_at >= ?"
    got = rows_at_once(db, ["sha", "committed_at", "message", "automated"], select, ["2026-01-02"])
    assert sorted(map(tuple, got)) == sorted(r for r in ROWS if r[1] >= "2026-01-02")
    assert rows_at_once(db, ["sha"], "SELECT sha FROM history WHERE sha = ?", ["none"]) == []


@pytest.mark.parametrize(
    "refusal",
    [
        sqlite3.OperationalError("no such function: json_group_array"),  # built without its JSON functions
        sqlite3.DataError("string or blob too big"),  # rows beyond its longest string
    ],
)
def test_an_sqlite_that_cannot_make_the_one_value_gets_a_plain_query(db, refusal):
    class Refusing:
        def execute(self, sql: str, params: list) -> sqlite3.Cursor:
            if "json_" in sql:
                raise refusal
            return db.execute(sql, params)

    got = rows_at_once(Refusing(), ["sha", "automated"], "SELECT sha, automated FROM history", [])  # type: ignore[arg-type]
    assert sorted(map(tuple, got)) == sorted((s, n) for s, _, _, n in ROWS)


def test_another_error_is_not_taken_for_missing_json_functions(db):
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        rows_at_once(db, ["sha"], "SELECT sha FROM nowhere", [])
