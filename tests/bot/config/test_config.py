from pathlib import Path

import pytest

from analysis.errors import ConfigError, InputError
from bot.config.file import load_config

EXAMPLE = Path(__file__).resolve().parents[3] / "digest.example.toml"


def load(tmp_path, text):
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    return load_config(path, default_tz="UTC", default_lang="zh")


def test_the_shipped_example_is_valid():
    subs = load_config(EXAMPLE, default_tz="UTC", default_lang="zh")
    assert [s.name for s in subs] == ["vllm-daily", "local-clone"]
    assert subs[0].timezone == "Asia/Shanghai" and subs[0].schedule == "09:00"  # from [defaults]
    assert {d.platform for d in subs[0].destinations} == {"slack", "discord"}
    assert subs[1].git_dir == Path("/srv/git/widgets.git") and subs[1].lang == "en"


def test_defaults_and_numeric_discord_ids(tmp_path):
    (sub,) = load(tmp_path, '[[subscription]]\nrepo = "o/n"\ndiscord_channels = [123456789012345678]\n')
    assert sub.schedule == "09:00" and sub.timezone == "UTC" and sub.lang == "zh" and sub.name == "o/n#1"
    assert sub.destinations[0].channel == "123456789012345678"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('[[subscription]]\nrepo = "nope"\nslack_channels = ["C1"]', "subscription[0].repo"),
        (
            '[[subscription]]\nrepo = "o/n"\nslack_channels = ["C1"]\ntimezone = "Mars/X"',
            "subscription[0].timezone",
        ),
        (
            '[[subscription]]\nrepo = "o/n"\nslack_channels = ["C1"]\nschedule = "25:99"',
            "subscription[0].schedule",
        ),
        ('[[subscription]]\nrepo = "o/n"\nslack_channels = ["C1"]\nlang = "fr"', "subscription[0].lang"),
        ('[[subscription]]\nrepo = "o/n"', "slack_channels / discord_channels"),
        (
            '[[subscription]]\nrepo = "o/n"\nslack_channels = ["C1"]\ncolour = "red"',
            "subscription[0].colour: unknown field",
        ),
        (
            '[[subscription]]\nrepo = "o/n"\nslack_channels = ["C1"]\n[subscription.filters]\nignore_titles = ["(["]',
            "subscription[0].filters.ignore_titles",
        ),
        (
            '[[subscription]]\nrepo = "o/n"\ndiscord_channels = ["general"]',
            "subscription[0].discord_channels",
        ),
        (
            '[[subscription]]\nrepo = "o/n"\nslack_channels = ["#general"]',
            "subscription[0].slack_channels: Slack channel ids look like C0123ABCD, got '#general' (a channel name?",
        ),
        (
            '[[subscription]]\nrepo = "o/n"\nslack_channels = ["C0123", "general"]',
            "got 'general' (a channel name?",
        ),
        (
            '[[subscription]]\nrepo = "o/n"\nslack_channels = ["900000000000000555"]',
            "subscription[0].slack_channels: Slack channel ids look like C0123ABCD, got '900000000000000555'",
        ),
        (
            '[[subscription]]\nrepo = "o/n"\nslack_channels = ["C1"]\nschedule = "0 9 30 2 *"',
            "subscription[0].schedule: cron expression '0 9 30 2 *' never fires",
        ),
        ("[defaults]\ntimezone = 'Nowhere/Else'", "defaults.timezone"),
        (
            "[defaults]\ntimezone = 'Asia/Beijing'",
            "defaults.timezone: unknown time zone 'Asia/Beijing': did you mean Asia/Shanghai?",
        ),
        # a time of day that is not one is said as such, not as a cron expression with one field
        (
            "[defaults]\nschedule = '99:99'\nlang = 'fr'",
            "defaults.schedule: not a time of day: HH:MM on the 24-hour",
        ),
        ("[defaults]\nschedule = '9am'", "defaults.schedule: not a time of day: HH:MM on the 24-hour clock"),
        ("[defaults]\nschedule = '09:00:00'", "defaults.schedule: not a time of day"),
        (
            "[defaults]\nschedule = 'daily'",
            "defaults.schedule: not HH:MM or a cron expression (a cron expression has 5",
        ),
        ("this is = = not toml", "not valid TOML"),
        (
            '[[subscription]]\nname="a"\nrepo="o/n"\nslack_channels=["C"]\n[[subscription]]\nname="a"\nrepo="o/m"\n'
            'slack_channels=["C"]',
            "unique: a",
        ),
    ],
)
def test_errors_name_the_field(tmp_path, body, expected):
    with pytest.raises(ConfigError) as err:
        load(tmp_path, body)
    assert expected in str(err.value)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('time = "09:00"', "subscription[0].time: unknown field (did you mean schedule?)"),
        ('timezon = "UTC"', "subscription[0].timezon: unknown field (did you mean timezone?)"),
        (
            'Slack-Channels = ["C2"]',
            "subscription[0].Slack-Channels: unknown field (did you mean slack_channels?)",
        ),
        (
            'channel = "C2"',
            "subscription[0].channel: unknown field (did you mean slack_channels or discord_channels?)",
        ),
        (
            '[subscription.filters]\nexclude_path = ["docs/"]',
            "filters.exclude_path: unknown field (did you mean exclude_paths?)",
        ),
        ('colour = "red"', "subscription[0].colour: unknown field;"),  # nothing close: no guess
    ],
)
def test_an_unknown_field_names_the_one_meant(tmp_path, body, expected):
    with pytest.raises(ConfigError) as err:
        load(
            tmp_path,
            f'[defaults]\nlanguage = "en"\n[[subscription]]\nrepo = "o/n"\nslack_channels = ["C1"]\n{body}',
        )
    message = str(err.value) + ";"
    assert "defaults.language: unknown field (did you mean lang?)" in message
    assert expected in message


def test_a_file_saved_with_a_byte_order_mark_and_crlf_lines_reads(tmp_path):
    """Windows editors save UTF-8 with a byte-order mark and CRLF line ends: it read as "not valid TOML:
    Invalid statement (at line 1, column 1)". A channel id written with spaces around it is the id."""
    path = tmp_path / "c.toml"
    path.write_bytes('\ufeff[[subscription]]\r\nrepo = "o/n"\r\nslack_channels = [" C0123 "]\r\n'.encode())
    (sub,) = load_config(path, default_tz="UTC", default_lang="zh")
    assert sub.repo == "o/n" and sub.destinations[0].channel == "C0123"


def test_a_relative_git_dir_is_beside_the_file_whatever_the_working_directory(tmp_path, monkeypatch):
    """`run` under systemd (WorkingDirectory=/var/lib/digestbot) and `status` in the operator's shell read
    the same file: a relative git_dir resolved against each one's working directory named two clones."""
    (tmp_path / "etc").mkdir()
    path = tmp_path / "etc" / "c.toml"
    path.write_text('[[subscription]]\nrepo = "o/n"\ngit_dir = "clones/n.git"\nslack_channels = ["C1"]\n')
    for cwd in (tmp_path, tmp_path / "etc"):
        monkeypatch.chdir(cwd)
        (sub,) = load_config(path, default_tz="UTC", default_lang="zh")
        assert sub.git_dir == tmp_path / "etc" / "clones" / "n.git"
    absolute = tmp_path / "srv" / "x.git"
    path.write_text(f'[[subscription]]\nrepo = "o/n"\ngit_dir = "{absolute}"\nslack_channels = ["C1"]\n')
    assert load_config(path, default_tz="UTC", default_lang="zh")[0].git_dir == absolute


def test_a_file_not_in_utf8_says_where_as_an_editor_counts(tmp_path):
    """The decoder's "position 31" is a byte offset into the whole file; a person looks for a line and a
    column (characters: "é" before it is one)."""
    path = tmp_path / "c.toml"
    path.write_bytes(b'[[subscription]]\nrepo = "o/\xc3\xa9\xe9"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path, default_tz="UTC", default_lang="zh")
    assert str(caught.value) == (
        f"cannot read {path}: line 2, column 12 is byte 0xe9, not UTF-8: save the file as UTF-8"
    )


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml", default_tz="UTC", default_lang="zh")


def test_cron_schedule_accepted(tmp_path):
    (sub,) = load(
        tmp_path, '[[subscription]]\nrepo = "o/n"\nslack_channels = ["C1"]\nschedule = "30 8 * * 1-5"'
    )
    assert sub.schedule == "30 8 * * 1-5"


def test_a_zone_is_found_by_its_own_folders_under_its_canonical_name():
    """`zone` lists only the folders on the typed name's path (the whole zone list costs every command
    about 20 ms at its start): the same canonical names as the list, whatever the case typed."""
    from zoneinfo import available_timezones

    from bot.config.settings import _zone_names, _zone_on_disk, zone

    for name in ("UTC", "Asia/Shanghai", "America/Argentina/Buenos_Aires", "Etc/GMT+8", "Europe/Kyiv"):
        if name not in available_timezones():
            continue
        for typed in (name, name.lower(), name.upper(), f"  {name.lower()} "):
            assert zone(typed).key == name == _zone_names()[typed.strip().lower()]
            assert _zone_on_disk(typed.strip()) in (name, None)  # None: not on disk (the tzdata package)
    for odd in ("../../etc/passwd", "Asia", "zone.tab", "", "/"):
        assert _zone_on_disk(odd) is None
    with pytest.raises(InputError, match="unknown time zone"):
        zone("Mars/Olympus_Mons")


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("Asia/Beijing", "Asia/Shanghai"),  # a city the database files under another of its zone
        ("Europe/Frankfurt", "Europe/Berlin"),
        ("America/San Francisco", "America/Los_Angeles"),
        ("Asia/Shangai", "Asia/Shanghai"),  # a misspelt zone
        ("Kolkatta", "Asia/Kolkata"),  # a misspelt city without its region
        ("Berlin", "Europe/Berlin"),
    ],
)
def test_an_unknown_zone_says_what_was_probably_meant(typed, meant):
    from zoneinfo import available_timezones

    from bot.config.settings import zone

    if meant not in available_timezones():
        pytest.skip(f"{meant} not in this system's zone database")
    with pytest.raises(InputError) as err:
        zone(typed)
    assert str(err.value) == f"unknown time zone {typed!r}: did you mean {meant}?"


@pytest.mark.parametrize(
    ("typed", "key"),
    [("posix/UTC", "UTC"), ("right/UTC", "UTC"), ("POSIX/asia/shanghai", "Asia/Shanghai"),
     ("right/Europe/Berlin", "Europe/Berlin"), ("posix/UTC+8", "Etc/GMT-8")],
)  # fmt: skip
def test_the_posix_and_right_copies_of_a_zone_are_that_zone(typed, key):
    """posix/X is a copy of X, right/X is X counting leap seconds, which zoneinfo does not (git's and the
    chats' clocks neither): they were accepted under their own names, a second key for the same days."""
    from bot.config.settings import zone

    assert zone(typed).key == key


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("Factory", "the zone database's placeholder for a zone not set yet"),
        ("posix/factory", "the zone database's placeholder"),
        ("posixrules", "the rules this system gives POSIX TZ strings"),
    ],
)
def test_zone_files_that_name_no_place_are_refused(typed, why):
    """Accepted before: Factory's days were UTC's under the name "-00", posixrules's whatever zone the
    host's copy was (America/New_York on Debian)."""
    from bot.config.settings import zone

    with pytest.raises(InputError) as caught:
        zone(typed)
    assert str(caught.value).startswith(f"unknown time zone {typed!r}: {why}")


def test_an_unknown_zone_nothing_is_near_asks_for_an_iana_name():
    from bot.config.settings import zone

    with pytest.raises(InputError) as err:
        zone("Mars/Olympus")
    assert str(err.value) == "unknown time zone 'Mars/Olympus': use an IANA name such as Asia/Shanghai or UTC"


@pytest.mark.parametrize(
    ("typed", "key", "shown"),
    [
        ("UTC+8", "Etc/GMT-8", "UTC+08:00"),
        ("utc+08:00", "Etc/GMT-8", "UTC+08:00"),
        ("GMT-5", "Etc/GMT+5", "UTC-05:00"),
        ("UTC+0", "UTC", "UTC"),
        ("UTC+14", "Etc/GMT-14", "UTC+14:00"),
    ],
)
def test_a_whole_hour_offset_is_its_etc_zone_and_shown_as_the_offset(typed, key, shown):
    """The product's own words are "calendar day in UTC+8": DIGEST_TZ=UTC+8 was refused as no zone."""
    from datetime import datetime

    from analysis.labels import zone_name
    from bot.config.settings import zone

    tz = zone(typed)
    assert tz.key == key and zone_name(tz.key) == shown
    if key != "UTC":
        offset = datetime(2026, 1, 1, tzinfo=tz).utcoffset().total_seconds() / 3600
        assert offset == int(shown[3:6])


@pytest.mark.parametrize("typed", ["UTC+05:30", "UTC+15", "GMT-13"])
def test_an_offset_no_etc_zone_has_asks_for_the_region(typed):
    from analysis.errors import InputError
    from bot.config.settings import zone

    with pytest.raises(InputError, match=r"use the region's zone, e\.g\. Asia/Kolkata"):
        zone(typed)
