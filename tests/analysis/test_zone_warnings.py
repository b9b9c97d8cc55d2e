"""Zones the tz database accepts but people seldom mean: said (English and Chinese), never refused."""

import pytest

from analysis.labels import zone_warning


def test_est_is_said_to_be_fixed_all_year_with_the_zone_meant():
    assert zone_warning("en", "EST") == (
        "EST is a fixed UTC-05:00 all year: for New York with daylight saving use America/New_York"
    )
    assert zone_warning("zh", "EST") == (
        "EST 全年固定为 UTC-05:00，不实行夏令时：若指实行夏令时的纽约，请用 America/New_York。"
    )


def test_the_other_fixed_abbreviation():
    said = zone_warning("en", "MST")
    assert said.startswith("MST is a fixed UTC-07:00 all year") and said.endswith("America/Denver")
    assert zone_warning("en", "HST") is None  # Hawaii keeps no daylight saving: HST is what it means


@pytest.mark.parametrize(
    ("name", "region"),
    [("EST5EDT", "America/New_York"), ("PST8PDT", "America/Los_Angeles"), ("CET", "Europe/Berlin")],
)
def test_posix_style_rules_are_said_to_name_no_place(name, region):
    assert zone_warning("en", name).startswith(f"{name} is a POSIX-style rule, not a place")
    assert region in zone_warning("en", name) and region in zone_warning("zh", name)


def test_localtime_is_said_to_be_this_hosts_zone_to_name():
    assert zone_warning("en", "localtime") == (
        "localtime is the zone this machine is set to (its /etc/localtime), which another machine or container"
        " may not share: name the zone, e.g. Asia/Shanghai"
    )
    assert "/etc/localtime" in zone_warning("zh", "localtime")


@pytest.mark.parametrize("name", ["America/New_York", "Asia/Shanghai", "UTC", "Etc/GMT+5", "America/Phoenix"])
def test_a_region_or_an_offset_chosen_as_such_says_nothing(name):
    assert zone_warning("en", name) is None and zone_warning("zh", name) is None
