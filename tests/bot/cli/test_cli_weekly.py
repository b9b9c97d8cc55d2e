"""`digestbot weekly` makes weeks that have ended: the current one is refused (as `post` refuses a day still
running) with the last ended week offered, and that week is the default, on a Monday too."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import time_machine

from tests.bot.cli.test_cli import assert_one_line_error, repo, run  # noqa: F401  (the clone fixture)

SH = ZoneInfo("Asia/Shanghai")


def test_the_week_still_running_is_refused_offering_the_last_that_ended(repo, tmp_path):  # noqa: F811
    """It built rows for the days to come (0 commits) and said the clone was stale, "before" tomorrow,
    logging one stale warning per day not begun."""
    with time_machine.travel(datetime(2026, 2, 1, 23, 0, tzinfo=SH), tick=True):  # Sunday of 2026-W05
        result = run("weekly", "--git-dir", str(repo.path), "--week", "2026-W05", "--tz", "Asia/Shanghai",
                     db=tmp_path / "d.db")  # fmt: skip
    assert_one_line_error(
        result,
        "week 2026-W05 (2026-01-26 to 2026-02-01) has not ended yet in Asia/Shanghai: its roll-up can be made"
        " once the week is over, with every commit of it; the last week that has ended is 2026-W04, the"
        " default of --week",
    )
    assert not list(Path.cwd().glob("weekly-*.png"))  # refused before anything is written


def test_on_a_monday_the_default_is_the_week_that_just_ended(repo, tmp_path):  # noqa: F811
    """The scheduler's Monday roll-up posts the week that ended at midnight; the CLI's default was the
    week before it (the week before yesterday's)."""
    chart = tmp_path / "w.png"
    with time_machine.travel(datetime(2026, 2, 2, 0, 30, tzinfo=SH), tick=True):  # Monday of 2026-W06
        result = run("weekly", "--git-dir", str(repo.path), "--tz", "Asia/Shanghai", "--lang", "en",
                     "--format", "json", "--chart", str(chart), db=tmp_path / "d.db")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert '"week": "2026-W05"' in result.stdout and chart.is_file()
