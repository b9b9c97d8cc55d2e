"""Reads of the scheduler's `runs` table (one row per subscription and day, written by
bot/service/scheduler.py) that others need: where a posted day's window ended."""

from __future__ import annotations

from datetime import date, datetime

from bot.store.db import Store


def posted_window(store: Store, name: str, day: date) -> tuple[datetime, str] | None:
    """Where the window of subscription `name`'s digest of `day` ended, and its zone, when that run posted
    it (done, or partial: in some channels, the rest retried with the same window). None otherwise, and for
    runs recorded before windows were: their next day is a plain one."""
    rows = store.query(
        "SELECT window_end, timezone FROM runs WHERE subscription = ? AND day = ?"
        " AND status IN ('done', 'partial')",
        [name, day.isoformat()],
    )
    if not rows or not rows[0]["window_end"]:
        return None
    return datetime.fromisoformat(rows[0]["window_end"]), rows[0]["timezone"]
