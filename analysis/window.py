"""The day window (DESIGN.md §2): calendar day D in zone TZ, [D 00:00, D+1 00:00) by committer date."""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from analysis.errors import InputError

# No commit is older than 1970-01-01 00:00 UTC (git's dates are unsigned Unix seconds), which is still
# 1969-12-31 west of UTC: an earlier day can hold no commit, and refusing it keeps every verb's reach into
# the history before its days (HISTORY_DAYS, at most ten years, and the follow-up look-back) inside the
# calendar. A day's window reaches a day past it: keep one day clear of the calendar's end.
FIRST_DAY, LAST_DAY = date(1969, 12, 31), date.max - timedelta(days=1)


def parse_day(text: str) -> date:
    try:
        day = date.fromisoformat(text.strip()) if len(text.strip()) == 10 else _bad_day(text)
    except ValueError:
        return _bad_day(text)
    if not FIRST_DAY <= day <= LAST_DAY:
        raise InputError(
            f"date {day.isoformat()} is out of range: use a day from {FIRST_DAY} to {LAST_DAY}"
            " (commit dates begin in 1970)"
        )
    return day


def _bad_day(text: str) -> date:
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", text.strip())
    if m and 1 <= int(m.group(2)) <= 12:  # the shape is right, the day is not on the calendar
        year, month = int(m.group(1)), int(m.group(2))
        days = calendar.monthrange(year, month)[1] if year >= 1 else 31
        raise InputError(f"no such day {text.strip()!r}: {calendar.month_name[month]} {year} has {days} days")
    raise InputError(f"bad date {text!r}: use YYYY-MM-DD, e.g. 2026-01-29")


def day_window(day: date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """Aware datetimes [start, end) in tz. A day with a daylight-saving change is 23 or 25 hours long;
    where midnight itself is skipped, the day starts at the first instant that exists."""
    start = _first_instant(day, tz)
    end = _first_instant(day + timedelta(days=1), tz)
    return start, end


def window_after(day: date, tz: ZoneInfo, previous_end: datetime | None) -> tuple[datetime, datetime]:
    """A subscription's window of `day` in tz when the window of the day before it was posted and ended at
    previous_end: it starts there, not at the day's own start. The same thing while the zone stays (a day
    ends where the next begins); after a zone change, it covers once the hours between the two zones'
    days (east to west), or leaves out those already posted (west to east). It ends at the day's end, or
    at previous_end when that is later (a change by more than a day: the day was posted already)."""
    start, end = day_window(day, tz)
    if previous_end is None:
        return start, end
    return previous_end.astimezone(tz), max(end, previous_end).astimezone(tz)


def _first_instant(day: date, tz: ZoneInfo) -> datetime:
    naive = datetime.combine(day, time(0))
    local = naive.replace(tzinfo=tz)
    # A skipped midnight (e.g. America/Santiago) does not survive a round trip through UTC:
    # the round trip lands on the first instant that exists, which is where the day starts.
    return local.astimezone(ZoneInfo("UTC")).astimezone(tz)


def refuse_future(day: date, tz: ZoneInfo, now: datetime | None = None, what: str | None = None) -> date:
    """day, unless it has not begun yet in tz: a digest of the future would be an empty report that
    looks like a quiet day. what: how the message names it (default "date YYYY-MM-DD")."""
    today = (now or datetime.now(tz)).astimezone(tz).date()
    if day > today:
        raise InputError(
            f"{what or 'date ' + day.isoformat()} is in the future (today in {tz.key} is {today.isoformat()})"
        )
    return day


def refuse_unfinished(day: date, tz: ZoneInfo, now: datetime | None = None) -> date:
    """day, unless it has not ended yet in tz. A day posted in a channel is frozen there (its parent
    announces what it holds), so a day still running would never announce the commits that land later;
    a future day is refused as `refuse_future` does."""
    now = now or datetime.now(tz)
    refuse_future(day, tz, now)
    if day_window(day, tz)[1] > now:
        raise InputError(
            f"{day.isoformat()} has not ended yet in {tz.key}: its digest can be posted once the day is"
            " over, with every commit of it (a digest posted here is not extended later)"
        )
    return day


def yesterday(tz: ZoneInfo, now: datetime | None = None) -> date:
    current = (now or datetime.now(tz)).astimezone(tz)
    return current.date() - timedelta(days=1)


def in_window(moment: datetime, start: datetime, end: datetime) -> bool:
    return start <= moment < end


def shallow_fetch_since(start: datetime) -> date:
    """The date to give `git fetch --shallow-since=` for a shallow clone to hold a window beginning at
    start: the day before start's UTC date (git reads a bare date at the clock's time of day, in its zone)."""
    return (start.astimezone(ZoneInfo("UTC")) - timedelta(days=1)).date()
