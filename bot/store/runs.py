"""Reads of the scheduler's `runs` table (one row per subscription and day, written by
bot/service/scheduler.py) that others need: where a posted day's window ended."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from bot.store.db import Store


def subscribed_window(store: Store, sub: Any, zone_key: str, day: date) -> tuple[datetime, str] | None:
    """For a day built by hand (`digestbot post`, `/digest YYYY-MM-DD`) where subscription `sub` posts: where
    its digest of the day before ended, when posted, so that the day's window starts there as its scheduled
    post's does (bot/service/runner.py), and the day is that same digest after a zone change, not a second
    one with other commits. None without a subscription, or for a digest in another zone than its."""
    if sub is None or zone_key != sub.timezone:
        return None
    return posted_window(store, sub.name, day - timedelta(days=1))


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
