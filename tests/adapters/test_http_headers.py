"""The one Retry-After reader every adapter shares (GitHub, the LLM endpoint, Slack)."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import httpx
import pytest

from adapters.http_headers import finite_number, header_value, retry_after

NOW = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("value", "expected"),
    [("3", 3.0), (" 30 ", 30.0), ("1.5", 1.5), ("0", 0.0), ("99999999999999999999", 1e20)],
)
def test_delay_seconds_are_read_as_given_and_never_capped(value: str, expected: float) -> None:
    assert retry_after(value) == expected  # what is absurd is each caller's call


def test_an_http_date_is_the_time_left_until_it() -> None:
    assert retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=NOW) == 10.0
    later = format_datetime(datetime.fromtimestamp(NOW + 90, UTC), usegmt=True)
    assert retry_after(later, now=NOW) == 90.0


def test_an_http_date_already_past_means_now() -> None:
    assert retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now=NOW) == 0.0


def test_an_http_date_is_measured_from_the_clock_by_default() -> None:
    soon = format_datetime(datetime.fromtimestamp(datetime.now(UTC).timestamp() + 3600, UTC), usegmt=True)
    wait = retry_after(soon)
    assert wait is not None and 3590 < wait <= 3600


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "   ",
        "soon",
        "-5",
        "nan",
        "inf",
        "-inf",
        "1e400",
        "Wed, 99 Foo 2015",
        "Sat, 01 Jan 99999 00:00:00 GMT",
    ],
)
def test_an_unusable_value_is_none_so_the_caller_backs_off_its_own_way(value: str | None) -> None:
    assert retry_after(value, now=NOW) is None


@pytest.mark.parametrize(
    "headers",
    [
        {"Retry-After": "7"},
        {"retry-after": "7"},
        {"RETRY-AFTER": ["7", "8"]},  # slack_sdk: a dict of lists
        httpx.Headers({"Retry-After": "7"}),
    ],
)
def test_header_value_reads_any_client_s_headers_case_insensitively(headers: object) -> None:
    assert header_value(headers, "retry-after") == "7"
    assert retry_after(header_value(headers, "Retry-After")) == 7.0


@pytest.mark.parametrize("headers", [None, {}, {"x-other": "1"}, {"retry-after": []}])
def test_header_value_is_none_when_the_header_is_absent(headers: object) -> None:
    assert header_value(headers, "retry-after") is None


@pytest.mark.parametrize(
    ("value", "expected"), [("30", 30.0), (" -2.5 ", -2.5), ("x", None), ("inf", None), (None, None)]
)
def test_finite_number(value: str | None, expected: float | None) -> None:
    assert finite_number(value) == expected
