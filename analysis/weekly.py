"""The weekly roll-up's data: a branch's ISO week from its seven daily digests and the week's follow-ups.

Pure: bot/digest/weekly.py gathers the digests, links and usage; this module counts, and the renderers
(analysis/render/weekly.py, adapters/chart.py) only lay the counts out.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from analysis.errors import InputError
from analysis.history.followups import FollowUpKind, FollowUpLink
from analysis.models import Digest, Importance
from analysis.window import FIRST_DAY, LAST_DAY, day_window, refuse_future

TIERS = (Importance.HIGH, Importance.MEDIUM, Importance.LOW)
AREA_DEPTH = 2  # "src/widgets/" groups a change; deeper folders are too thin for a week
AREAS_SHOWN = 10
_WEEK = re.compile(r"^(\d{4})-?W(\d{2})$", re.IGNORECASE)


def parse_week(text: str) -> tuple[int, int]:
    """`2025-W45` → (2025, 45); a week that does not exist is a one-line InputError."""
    m = _WEEK.match(text.strip())
    if not m:
        raise InputError(f"bad week {text!r}: use the ISO form YYYY-Www, e.g. 2025-W45")
    year, week = int(m.group(1)), int(m.group(2))
    try:
        monday = date.fromisocalendar(year, week, 1)
    except ValueError:
        raise InputError(f"{text} does not exist: {year} has no ISO week {week}") from None
    # a week that ends before the first day a commit can have, or runs past the calendar's last
    if not FIRST_DAY - timedelta(days=6) <= monday <= LAST_DAY - timedelta(days=7):
        first, last = (week_label(*d.isocalendar()[:2]) for d in (FIRST_DAY, LAST_DAY - timedelta(days=7)))
        raise InputError(f"week {week_label(year, week)} is out of range: use a week from {first} to {last}")
    return year, week


def week_label(year: int, week: int) -> str:
    return f"{year:04d}-W{week:02d}"


def week_days(year: int, week: int) -> list[date]:
    monday = date.fromisocalendar(year, week, 1)
    return [monday + timedelta(days=i) for i in range(7)]


def week_window(year: int, week: int, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """[Monday 00:00, next Monday 00:00) in tz."""
    monday = date.fromisocalendar(year, week, 1)
    start = datetime.combine(monday, time(), tz)
    return start, datetime.combine(monday + timedelta(days=7), time(), tz)


def last_full_week(today: date) -> tuple[int, int]:
    """The ISO week before the one `today` is in: the last one that has ended (on a Monday, the week that
    ended at midnight, as the scheduler's roll-up posts it)."""
    year, week, _ = (today - timedelta(days=7)).isocalendar()
    return year, week


def refuse_unfinished_week(year: int, week: int, tz: ZoneInfo, now: datetime | None = None) -> None:
    """Unless the week has ended in tz, an InputError offering the last one that has: the roll-up of a week
    still running had rows for its days to come (0 commits) and called the clone stale for not having
    their commits. A week in the future is refused as a day is (`refuse_future`)."""
    now = (now or datetime.now(tz)).astimezone(tz)
    monday = date.fromisocalendar(year, week, 1)
    label = week_label(year, week)
    refuse_future(monday, tz, now, what=f"week {label} (from {monday})")
    sunday = monday + timedelta(days=6)
    if day_window(sunday, tz)[1] > now:
        last = week_label(*last_full_week(now.date()))
        raise InputError(
            f"week {label} ({monday} to {sunday}) has not ended yet in {tz.key}: its roll-up can be made"
            f" once the week is over, with every commit of it; the last week that has ended is {last}"
            ", the default of --week"
        )


def area_of(path: str) -> str:
    """The folder a change counts under: its first AREA_DEPTH folders ("." for top-level files)."""
    folders = path.split("/")[:-1][:AREA_DEPTH]
    return "/".join(folders) + "/" if folders else "./"


@dataclass(frozen=True, slots=True)
class WeekFollowUp:
    link: FollowUpLink
    follow_up_title: str
    follow_up_ref: str
    original_title: str
    original_ref: str
    original_rank: Importance | None  # the tier we gave the original, when we analysed it
    original_url: str | None = None
    follow_up_url: str | None = None


@dataclass(frozen=True, slots=True)
class Area:
    path: str
    commits: int
    high: int
    followed_up: int  # changes of the week here reverted or fixed by Week.followed_up_until


@dataclass(slots=True)
class Usage:
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None  # None when no call was priced


@dataclass(slots=True)
class Week:
    repo: str
    branch: str
    year: int
    week: int
    timezone: str
    lang: str
    generated_at: datetime
    days: list[tuple[date, dict[str, int]]]  # each day's counts by tier and "total"
    followups: list[WeekFollowUp] = field(default_factory=list)  # landed this week, in landing order
    areas: list[Area] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    analyzers: list[str] = field(default_factory=list)
    filtered_out: int = 0
    history_start: datetime | None = None  # a shallow clone's history starts inside one of the days (stated)
    # The local clone's newest commit, older than the first empty day it left behind (stated: a quiet day?).
    clone_newest: datetime | None = None
    clone_newest_day: date | None = None
    # Areas' "reverted or fixed" counts the follow-ups landed before this moment (the history read).
    followed_up_until: datetime | None = None

    @property
    def label(self) -> str:
        return week_label(self.year, self.week)

    @property
    def totals(self) -> dict[str, int]:
        keys = [t.value for t in TIERS] + ["total"]
        return {k: sum(counts[k] for _, counts in self.days) for k in keys}

    def landed_on(self, day: date) -> list[WeekFollowUp]:
        tz = ZoneInfo(self.timezone)
        return [f for f in self.followups if f.link.follow_up_at.astimezone(tz).date() == day]

    def scored(self, kind: FollowUpKind) -> tuple[int, int, int]:
        """(follow-ups of this kind, originals we had ranked medium or high, originals we had ranked high)."""
        mine = [f for f in self.followups if f.link.kind == kind]
        flagged = sum(1 for f in mine if f.original_rank in (Importance.HIGH, Importance.MEDIUM))
        return len(mine), flagged, sum(1 for f in mine if f.original_rank == Importance.HIGH)


def summarize(
    digests: list[Digest],
    followups: list[WeekFollowUp],
    followed_up: set[str],
    *,
    year: int,
    week: int,
    usage: Usage,
    generated_at: datetime,
    followed_up_until: datetime | None = None,
) -> Week:
    """The week from its seven digests (Monday first). `followed_up`: shas of the week's commits that
    a later commit landed before `followed_up_until` reverted or fixed."""
    if len(digests) != 7:
        raise ValueError(f"a week has 7 digests, got {len(digests)}")
    first = digests[0]
    stale = next((d for d in digests if d.clone_newest is not None), None)
    areas: dict[str, Counter[str]] = {}
    for digest in digests:
        for commit in digest.commits:
            analysis = digest.analyses[commit.sha]
            for area in sorted({area_of(f.path) for f in commit.files}):
                counts = areas.setdefault(area, Counter())
                counts["commits"] += 1
                counts["high"] += analysis.importance == Importance.HIGH
                counts["followed_up"] += commit.sha in followed_up
    ranked = sorted(
        (Area(path, c["commits"], c["high"], c["followed_up"]) for path, c in areas.items()),
        key=lambda a: (-(a.high + a.followed_up), -a.commits, a.path),
    )
    return Week(
        repo=first.repo,
        branch=first.branch,
        year=year,
        week=week,
        timezone=first.timezone,
        lang=first.lang,
        generated_at=generated_at,
        days=[(d.day, d.stats) for d in digests],
        followups=followups,
        areas=[a for a in ranked if a.high or a.followed_up][:AREAS_SHOWN],
        usage=usage,
        analyzers=sorted({a for d in digests for a in d.analyzers}),
        filtered_out=sum(d.filtered_out for d in digests),
        history_start=next((d.history_start for d in digests if d.history_start is not None), None),
        clone_newest=stale.clone_newest if stale else None,
        clone_newest_day=stale.day if stale else None,
        followed_up_until=followed_up_until,
    )


def weekly_key(week: Week) -> str:
    return f"weekly:{week.repo}@{week.branch}/{week_label(week.year, week.week)}/{week.timezone}/{week.lang}"
