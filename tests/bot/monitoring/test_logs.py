"""Log lines people read at a terminal: one line per problem unless -vv asks for the traceback."""

from __future__ import annotations

import logging

import pytest

from bot.monitoring.logs import setup_logging


def _fail(secret: str) -> None:
    try:
        raise RecursionError(f"too deep near {secret}")
    except RecursionError:
        logging.getLogger("bot.digest.surface").error("surface facts of acme abc1234 failed", exc_info=True)


def test_a_traceback_is_one_masked_line_at_the_default_verbosity(capsys: pytest.CaptureFixture[str]) -> None:
    setup_logging(0, ["sk-secret-0123456789"])
    _fail("sk-secret-0123456789")
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].endswith(
        "surface facts of acme abc1234 failed (RecursionError: too deep near ***; run with -vv for the traceback)"
    )


@pytest.mark.parametrize(("verbosity", "fmt"), [(2, "text"), (0, "json")])
def test_minus_vv_and_json_logs_keep_the_whole_traceback(
    capsys: pytest.CaptureFixture[str], verbosity: int, fmt: str
) -> None:
    setup_logging(verbosity, ["sk-secret-0123456789"], fmt)
    _fail("sk-secret-0123456789")
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "_fail" in err
    assert "sk-secret-0123456789" not in err and "run with -vv" not in err
