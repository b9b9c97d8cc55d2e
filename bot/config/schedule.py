"""When a subscription fires: its HH:MM or five-field cron schedule and its weekly time as APScheduler
triggers in the subscription's zone, and which day (or ISO week) a fire posts. The configuration file
checks schedules with these; the scheduler (bot/service/scheduler.py) runs them."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from apscheduler.triggers.cron import CronTrigger

from analysis.errors import InputError
from bot.config.settings import zone
from bot.config.subscriptions import HHMM, WEEKLY, Subscription


def sub_zone(sub: Subscription) -> ZoneInfo:
    """The subscription's zone, its name matched without regard to case (as `zone` does). Raises
    InputError for a name no zone has: a row stored before names were canonicalised, or a zone
    the system's tz database no longer has."""
    return zone(sub.timezone)


def schedule_problem(sub: Subscription) -> str | None:
    """Why this subscription cannot be scheduled (its zone, schedule or weekly time), in one line, or
    None. The scheduler skips such a subscription, `status` shows it as broken."""
    try:
        trigger_for(sub)
        if sub.weekly:
            weekly_trigger(sub)
    except (InputError, ValueError) as exc:
        return f"schedule: {exc}"
    return None


def trigger_for(sub: Subscription) -> CronTrigger:
    tz = sub_zone(sub)
    if m := HHMM.match(sub.schedule):
        return CronTrigger(hour=int(m.group(1)), minute=int(m.group(2)), timezone=tz)
    return cron_trigger(sub.schedule, tz)


_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def cron_trigger(expr: str, tz: ZoneInfo | None = None) -> CronTrigger:
    """A standard five-field crontab expression as a CronTrigger. APScheduler 3's own from_crontab
    numbers weekdays from Monday = 0 (apscheduler#286, unfixable in 3.x), so "1-5" would mean Tuesday
    to Saturday; numeric weekdays are rewritten as names, which it reads right."""
    fields = expr.split()
    if len(fields) != 5:
        raise ValueError(f"a cron expression has 5 fields (minute hour day month weekday), got {len(fields)}")
    minute, hour, day, month, weekday = fields
    return CronTrigger(
        minute=minute, hour=hour, day=day, month=month, day_of_week=_weekday_names(weekday), timezone=tz
    )


def _weekday_names(field: str) -> str:
    """Cron's numeric day-of-week field (0 or 7 = Sunday) as APScheduler weekday names."""
    if field == "*" or any(c.isalpha() for c in field):
        return field  # names (and "*") mean the same to both
    days: set[int] = set()
    for item in field.split(","):
        span, _, step = item.partition("/")
        first, _, last = span.partition("-")
        if span == "*":
            first, last = "0", "6"
        start, stop = int(first), int(last or (6 if step else first))
        if not (0 <= start <= 7 and 0 <= stop <= 7 and start <= stop) or (step and int(step) < 1):
            raise ValueError(f"bad day of week {item!r} (0-7, 0 and 7 are Sunday)")
        days.update(d % 7 for d in range(start, stop + 1, int(step or 1)))
    return "*" if len(days) == 7 else ",".join(_DAY_NAMES[d] for d in sorted(days))


def weekly_trigger(sub: Subscription) -> CronTrigger:
    """The subscription's `weekly = "mon 09:00"` as a trigger in its zone."""
    assert sub.weekly is not None
    m = WEEKLY.match(sub.weekly)
    if m is None:
        raise ValueError(f"bad weekly time {sub.weekly!r}")
    day, hour, minute = m.group(1).lower(), int(m.group(2)), int(m.group(3))
    return CronTrigger(day_of_week=day, hour=hour, minute=minute, timezone=sub_zone(sub))


def week_for_fire(sub: Subscription, fired_at: datetime) -> tuple[int, int]:
    """A weekly fire posts the last complete ISO week before the fire's day, in the subscription's zone."""
    year, week, _ = (fired_at.astimezone(sub_zone(sub)).date() - timedelta(days=7)).isocalendar()
    return year, week


def day_for_fire(sub: Subscription, fired_at: datetime) -> date:
    """A fire posts the previous calendar day of the subscription's zone."""
    return fired_at.astimezone(sub_zone(sub)).date() - timedelta(days=1)
