"""Many rows read in one step of SQLite.

The sqlite3 module gives the GIL up around every row it steps to. Beside a thread that holds it (the SDK
imported at a card's or an LLM day's start), each row then waits for that thread's switch interval: the
history step's 4,908 messages took 2.1-2.7 s beside a pure-Python loop instead of 8-10 ms alone (bench_cli).
Read as one JSON value, they are one step: 25-47 ms beside the same loop.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlite_utils


def rows_at_once(
    db: sqlite_utils.Database, columns: Sequence[str], select: str, params: Iterable[Any]
) -> list[list[Any]]:
    """The rows of `select` (a SELECT of at least `columns`), each as a list of those columns' values, in no
    particular order (an aggregate's order is not SQL's promise: the caller sorts). TEXT, INTEGER and NULL
    columns only: a REAL would come back as JSON prints it."""
    names = ", ".join(columns)
    params = list(params)
    try:
        value = db.execute(f"SELECT json_group_array(json_array({names})) FROM ({select})", params).fetchone()[0]
    except (sqlite3.OperationalError, sqlite3.DataError) as exc:
        # an SQLite without its JSON functions, or rows beyond its longest string (1 GB by default)
        if "no such function" not in str(exc) and "too big" not in str(exc):
            raise
        return [list(row) for row in db.execute(f"SELECT {names} FROM ({select})", params).fetchall()]
    return json.loads(value)
