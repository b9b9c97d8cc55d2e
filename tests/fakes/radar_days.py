"""Two consecutive days in a throw-away git repository where the second follows up the first: for the
radar's banners and replies under faults, in tests and in bench/bench_chaos.py.

Day 1 has three large rewrites of existing modules (the heuristic ranks them high: each gets a card) and
a small one; day 2
reverts the first large commit, fixes the second and third forward ("after #N"), and adds a small
feature. So posting day 2 into a channel that holds day 1 banners three cards (one edit and one reply in
each card's thread per follow-up).
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from tests.fakes.gitrepo import GitRepo

REPO = "acme/widgets"
FOLLOW_UPS = 3  # banners (and replies) expected per channel when day 2 is posted after day 1


def _big(name: str, lines: int = 900, value: int | None = None) -> dict[str, str]:
    return {
        f"src/{name}/part{j}.py": "".join(
            f"{name}_{k} = {k if value is None else value}\n" for k in range(lines)
        )
        for j in range(2)
    }


def radar_repo(work: Path, day1: date, tz: str = "UTC") -> Path:
    """A bare clone of the two days (day1 and the day after) in zone `tz`."""
    zone = ZoneInfo(tz)

    def at(day: date, hour: int) -> datetime:
        return datetime.combine(day, time(hour), zone)

    day2 = day1 + timedelta(days=1)
    repo = GitRepo.init(work / "radar-src", remote=f"https://github.com/{REPO}.git")
    # The large commits rewrite modules that exist already: changes isolated in new files would not be high.
    layout = {
        "README.md": "widgets\n",
        **_big("fast", value=0),
        **_big("cache", value=0),
        **_big("export", value=0),
    }
    repo.commit("Initial layout (#1999)", files=layout, when=at(day1 - timedelta(days=3), 9))
    fast = repo.commit("[Core] Fast path for widgets (#2001)", files=_big("fast"), when=at(day1, 9))
    repo.commit("[Perf] Cache widget lookups (#2002)", files=_big("cache"), when=at(day1, 10))
    repo.commit("[Feature] Widget export (#2003)", files=_big("export"), when=at(day1, 11))
    repo.commit("[Docs] Typo (#2004)", files={"README.md": "widgets!\n"}, when=at(day1, 12))
    repo.commit(
        'Revert "[Core] Fast path for widgets (#2001)" (#2010)\n\nThis reverts commit ' + fast + ".",
        files={"src/fast/part0.py": "", "src/fast/part1.py": ""},
        when=at(day2, 9),
    )
    repo.commit(
        "[Bugfix] Fix stale cache after #2002 (#2011)",
        files={"src/cache/part0.py": "cache_0 = 0\n"},
        when=at(day2, 10),
    )
    repo.commit(
        "[Bugfix] Export fails on empty widgets after #2003 (#2012)",
        files={"src/export/part0.py": "export_0 = 0\n"},
        when=at(day2, 11),
    )
    repo.commit("[Feature] Widget colours (#2013)", files={"src/colours.py": "RED = 1\n"}, when=at(day2, 12))
    return repo.clone(work / "radar.git", bare=True)
