from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from analysis.errors import InputError
from analysis.window import day_window, in_window, parse_day, window_after, yesterday


def test_shanghai_day_is_utc_shifted():
    start, end = day_window(date(2026, 1, 26), ZoneInfo("Asia/Shanghai"))
    assert start.astimezone(UTC) == datetime(2026, 1, 25, 16, tzinfo=UTC)
    assert end - start == timedelta(hours=24)


def test_dst_days_are_23_and_25_hours():
    ny = ZoneInfo("America/New_York")
    spring = day_window(date(2026, 3, 8), ny)
    autumn = day_window(date(2026, 11, 1), ny)
    assert spring[1].astimezone(UTC) - spring[0].astimezone(UTC) == timedelta(hours=23)
    assert autumn[1].astimezone(UTC) - autumn[0].astimezone(UTC) == timedelta(hours=25)


def test_skipped_midnight_starts_at_first_existing_instant():
    start, _ = day_window(date(2024, 9, 8), ZoneInfo("America/Santiago"))  # 00:00 → 01:00
    assert (start.hour, start.minute) == (1, 0)


def test_edges_inclusive_exclusive():
    start, end = day_window(date(2026, 1, 26), ZoneInfo("UTC"))
    assert in_window(start, start, end)
    assert not in_window(end, start, end)
    assert not in_window(start - timedelta(seconds=1), start, end)


@pytest.mark.parametrize("bad", ["2026-13-01", "26-01-01", "2026/01/01", "yesterday", "", "2026-01-01T00:00"])
def test_bad_dates(bad):
    with pytest.raises(InputError, match="YYYY-MM-DD"):
        parse_day(bad)


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("2026-11-31", "November 2026 has 30 days"),
        ("2026-02-29", "February 2026 has 28 days"),
        ("2024-02-30", "February 2024 has 29 days"),
    ],
)
def test_a_day_not_on_the_calendar_says_how_many_days_its_month_has(typed, said):
    with pytest.raises(InputError, match=f"no such day '{typed}': {said}"):
        parse_day(typed)


@pytest.mark.parametrize("early", ["0001-01-02", "1000-06-15", "1969-12-30"])
def test_days_before_any_commit_are_out_of_range(early):
    # no commit predates 1970 (UTC): an earlier day would only overflow the history read before it
    with pytest.raises(
        InputError, match=f"date {early} is out of range: use a day from 1969-12-31 to 9999-12-30"
    ):
        parse_day(early)


def test_the_first_and_last_days_are_in_range():
    # 1969-12-31: 1970-01-01 00:00 UTC is still that day west of UTC
    assert parse_day("1969-12-31") == date(1969, 12, 31)
    assert parse_day("9999-12-30") == date(9999, 12, 30)
    with pytest.raises(InputError, match="out of range"):
        parse_day("9999-12-31")


def test_yesterday_in_zone():
    now = datetime(2026, 1, 27, 1, 0, tzinfo=ZoneInfo("Asia/Shanghai"))  # still the 26th in UTC
    assert yesterday(ZoneInfo("Asia/Shanghai"), now) == date(2026, 1, 26)
    assert yesterday(ZoneInfo("UTC"), now) == date(2026, 1, 25)


def test_a_day_after_a_posted_day_of_the_same_zone_is_the_plain_day():
    ny = ZoneInfo("America/New_York")
    for day in (date(2026, 3, 8), date(2026, 3, 9), date(2026, 11, 2)):  # across daylight saving too
        previous_end = day_window(day - timedelta(days=1), ny)[1]
        assert window_after(day, ny, previous_end) == day_window(day, ny)
    assert window_after(date(2026, 1, 27), ny, None) == day_window(date(2026, 1, 27), ny)


def test_east_to_west_the_day_after_the_change_covers_the_hours_between_once():
    previous_end = day_window(date(2026, 1, 26), ZoneInfo("Asia/Shanghai"))[1]  # 2026-01-26 16:00 UTC
    start, end = window_after(date(2026, 1, 27), ZoneInfo("UTC"), previous_end)
    assert (start, end) == (datetime(2026, 1, 26, 16, tzinfo=UTC), datetime(2026, 1, 28, tzinfo=UTC))
    assert start.tzinfo == ZoneInfo("UTC")  # shown in the day's own zone


def test_west_to_east_the_day_after_the_change_leaves_out_what_was_posted():
    previous_end = day_window(date(2026, 1, 26), ZoneInfo("UTC"))[1]  # 2026-01-27 00:00 UTC
    start, end = window_after(date(2026, 1, 27), ZoneInfo("Asia/Shanghai"), previous_end)
    assert (start, end) == (datetime(2026, 1, 27, tzinfo=UTC), datetime(2026, 1, 27, 16, tzinfo=UTC))


def test_a_change_by_more_than_a_day_leaves_an_empty_window_that_keeps_the_end():
    """UTC-12 to UTC+14: the whole next day was posted already; the day after starts where that post ended."""
    previous_end = day_window(date(2026, 1, 26), ZoneInfo("Etc/GMT+12"))[1]  # 2026-01-27 12:00 UTC
    start, end = window_after(date(2026, 1, 27), ZoneInfo("Etc/GMT-14"), previous_end)
    assert start == end == datetime(2026, 1, 27, 12, tzinfo=UTC)
    assert window_after(date(2026, 1, 28), ZoneInfo("Etc/GMT-14"), end)[0] == end
