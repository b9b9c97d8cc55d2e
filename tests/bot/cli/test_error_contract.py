"""Issue 18 item 4: the README's promise — every error is one line on stderr and exit code 2 — kept for
click's own usage errors, a full disk on stdout, the future, typos in filters; help into a closed pipe
is no failure; zones match without regard to case; read-only verbs create nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from bot.store.db import Store
from tests.bot.cli.test_cli import DAY, repo  # noqa: F401  (the throw-away clone fixture)
from tests.bot.cli.test_cli_process import child_env, digest_args, digestbot, one_line_error


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def assert_one_line(result, fragment: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert fragment in lines[0], result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["digest", "--lang", "fr"], "Invalid value for '--lang': 'fr'"),
        (["eval", "--since", "2025-01-01"], "Missing option '--until'"),
        (["digest", "--no-such-option"], "No such option '--no-such-option'"),
        (["no-such-verb"], "No such command 'no-such-verb'"),
        (["--no-such-option", "digest"], "No such option '--no-such-option'"),
        (["logs", "-n", "-3"], "Invalid value for '-n'"),
        (["post", "--channel", "C1"], "Missing option '--platform'"),
    ],
)
def test_click_usage_errors_are_one_line_and_exit_2(args, fragment, tmp_path):
    result = invoke("--db", str(tmp_path / "d.db"), *args)
    assert_one_line(result, fragment)
    assert "--help" in result.stderr  # where to look next, on the same line


def test_a_usage_error_in_a_real_process_is_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", "digest", "--lang", "fr"],
        capture_output=True,
        env=child_env(),
        timeout=120,
    )
    one_line_error(proc, "'fr' is not one of")


@pytest.mark.parametrize("args", [["--help"], ["digest", "--help"], ["--version"]])
def test_help_into_a_closed_pipe_exits_0(args):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written: `digestbot --help | true`
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "bot.cli", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            env=child_env(),
            timeout=120,
        )
    finally:
        os.close(write)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""


def test_stdout_on_a_full_disk_is_one_line(repo, tmp_path):  # noqa: F811
    with open("/dev/full", "wb") as full:
        proc = digestbot(*digest_args(repo.path, "--lang", "en"), db=tmp_path / "d.db", stdout=full)
    one_line_error(proc, "cannot write to standard output: No space left on device")


@pytest.mark.parametrize("spelling", ["utc", "UTC", "Utc", "gmt", "etc/utc"])
def test_tz_is_case_insensitive_and_canonical(repo, tmp_path, spelling):  # noqa: F811
    db = tmp_path / "d.db"
    result = invoke("--db", str(db), *digest_args(repo.path, "--tz", spelling, "--format", "json"))
    assert result.exit_code == 0, result.output
    canonical = {"utc": "UTC", "gmt": "GMT", "etc/utc": "Etc/UTC"}[spelling.lower()]
    assert json.loads(result.stdout)["timezone"] == canonical
    keys = [r["key"] for r in Store(db).query("SELECT key FROM digests")]
    assert keys == [f"acme/widgets@main/{DAY}/{canonical}/zh"]


ZONED_VERBS = {
    "digest": ["digest", "--date", DAY],
    "post": ["post", "--platform", "slack", "--channel", "C1", "--dry-run", "--date", DAY],
    "weekly": ["weekly", "--week", "2026-W05", "--chart", "w.png"],
    "analyze": ["analyze", "HEAD"],
    "eval": ["eval", "--since", DAY, "--until", DAY, "--sample", "1"],
    "logs": ["logs"],
}
EST_SAID = "EST is a fixed UTC-05:00 all year: for New York with daylight saving use America/New_York"


@pytest.mark.parametrize("verb", ZONED_VERBS)
def test_every_verb_with_a_zone_says_once_a_zone_seldom_meant(repo, tmp_path, monkeypatch, verb):  # noqa: F811
    """README's "The day": EST "is accepted with a warning"; only `run`, `status` and `/digest subscribe`
    said it, and `digest`, `post`, `weekly` made the day of a New York team an hour off half the year
    without a word. Said on stderr, once; the report is as before."""
    source = ["--git-dir", str(repo.path)] if verb != "logs" else []
    Store(tmp_path / "d.db").close()  # `logs` reads an existing database
    args = ["--db", str(tmp_path / "d.db"), *ZONED_VERBS[verb], *source]
    given = invoke(*args, "--tz", "EST")
    assert given.exit_code == 0, given.output
    assert given.stderr.count(EST_SAID) == 1 and f"--tz: {EST_SAID}" in given.stderr
    assert "EST is a fixed" not in given.stdout
    monkeypatch.setenv("DIGEST_TZ", "EST")
    configured = invoke(*args)
    assert configured.exit_code == 0, configured.output
    assert configured.stderr.count(EST_SAID) == 1 and f"DIGEST_TZ: {EST_SAID}" in configured.stderr


@pytest.mark.parametrize("verb", ZONED_VERBS)
def test_an_empty_tz_is_refused_not_read_as_digest_tz(repo, tmp_path, verb):  # noqa: F811
    """`--tz "$ZONE"` with ZONE unset made the day DIGEST_TZ's without a word."""
    source = ["--git-dir", str(repo.path)] if verb != "logs" else []
    result = invoke("--db", str(tmp_path / "d.db"), *ZONED_VERBS[verb], *source, "--tz", " ")
    assert_one_line(
        result, "Invalid value for '--tz': empty: name a zone (Asia/Shanghai, UTC, UTC+8) or leave"
    )


def test_an_unknown_zone_is_still_refused(repo, tmp_path):  # noqa: F811
    assert_one_line(
        invoke("--db", str(tmp_path / "d.db"), *digest_args(repo.path, "--tz", "Mars/Olympus")),
        "unknown time zone 'Mars/Olympus'",
    )


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["digest", "--date", "2999-01-01"], "date 2999-01-01 is in the future"),
        (["post", "--platform", "slack", "--channel", "C1", "--dry-run", "--date", "2999-01-01"], "future"),
        (["weekly", "--week", "2999-W01"], "week 2999-W01 (from 2998-12-31) is in the future"),
        (["logs", "--date", "2999-01-01"], "--date 2999-01-01 is in the future"),
        (["logs", "--until", "2999-01-01"], "--until 2999-01-01 is in the future"),
        (["eval", "--since", "2026-01-01", "--until", "2999-01-01"], "--until 2999-01-01 is in the future"),
    ],
)
def test_future_days_are_refused(repo, tmp_path, args, fragment):  # noqa: F811
    db = tmp_path / "d.db"
    source = ["--git-dir", str(repo.path)] if args[0] not in ("logs",) else []
    assert_one_line(invoke("--db", str(db), *args, *source, "--tz", "UTC"), fragment)


EARLY = "is out of range: use a day from 1969-12-31 to 9999-12-30"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["digest", "--date", "0001-01-01"], f"date 0001-01-01 {EARLY}"),
        (["digest", "--date", "1969-12-30"], f"date 1969-12-30 {EARLY}"),
        (["post", "--platform", "slack", "--channel", "C1", "--dry-run", "--date", "0001-01-02"], EARLY),
        (["eval", "--since", "0001-01-02", "--until", "0001-01-03"], f"date 0001-01-02 {EARLY}"),
        (["eval", "--since", "2026-01-01", "--until", "0001-01-03"], f"date 0001-01-03 {EARLY}"),
        (
            ["weekly", "--week", "0001-W01"],
            "week 0001-W01 is out of range: use a week from 1970-W01 to 9999-W51",
        ),
        (["weekly", "--week", "0001-W02"], "week 0001-W02 is out of range"),
        (["logs", "--date", "0001-01-02"], f"date 0001-01-02 {EARLY}"),
        (["logs", "--since", "0001-01-02"], f"date 0001-01-02 {EARLY}"),
    ],
)
def test_days_before_any_commit_are_refused_by_every_verb(repo, tmp_path, args, fragment):  # noqa: F811
    # they used to end in "unexpected OverflowError" (exit 1) where the history before them was read
    db = tmp_path / "d.db"
    source = ["--git-dir", str(repo.path)] if args[0] not in ("logs",) else []
    assert_one_line(invoke("--db", str(db), *args, *source, "--tz", "UTC"), fragment)


def test_the_first_days_a_commit_can_have_are_read(repo, tmp_path):  # noqa: F811
    for args in (
        ["eval", "--since", "1969-12-31", "--until", "1970-01-02"],
        ["weekly", "--week", "1970-W01"],
    ):
        extra = ["--chart", str(tmp_path / "w.png")] if args[0] == "weekly" else []
        result = invoke(
            "--db", str(tmp_path / "d.db"), *args, *extra, "--git-dir", str(repo.path), "--tz", "UTC"
        )
        assert result.exit_code == 0, result.output


def test_today_is_not_the_future(repo, tmp_path):  # noqa: F811
    from datetime import UTC, datetime

    today = datetime.now(UTC).date().isoformat()
    result = invoke(
        "--db", str(tmp_path / "d.db"), "digest", "--git-dir", str(repo.path), "--date", today, "--tz", "UTC"
    )
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--outcome", "bogus"], "unknown --outcome 'bogus'"),
        (["--purpose", "bogus"], "unknown --purpose 'bogus'"),
        (["--since", "2026-02-01", "--until", "2026-01-01"], "--since 2026-02-01 is after --until"),
    ],
)
def test_logs_refuses_filters_that_cannot_match(tmp_path, args, fragment):
    db = tmp_path / "d.db"
    Store(db).close()
    assert_one_line(invoke("--db", str(db), "logs", *args), fragment)


@pytest.mark.parametrize("outcome", ["ok", "timeout", "http 429", "length"])
def test_logs_accepts_every_real_outcome(tmp_path, outcome):
    db = tmp_path / "d.db"
    Store(db).close()
    result = invoke("--db", str(db), "logs", "--outcome", outcome)
    assert result.exit_code == 0, result.output
    assert "no LLM calls recorded" in result.stdout


@pytest.mark.parametrize("verb", [["status"], ["logs"], ["status", "--format", "json"], ["logs", "-u"]])
def test_read_only_verbs_create_no_file_or_folder(tmp_path, verb):
    db = tmp_path / "no" / "such" / "dir" / "x.db"
    result = invoke("--db", str(db), *verb)
    assert result.exit_code == 1, result.output  # no database: said, and nothing created
    assert not (tmp_path / "no").exists()
    assert list(tmp_path.iterdir()) == []


def test_status_says_the_database_does_not_exist_yet(tmp_path):
    db = tmp_path / "x.db"
    result = invoke("status", "--db", str(db))
    # exit 1: status run outside the service's environment (another DIGEST_DB) read as all well
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[0] == f"database: {db} (does not exist yet: nothing has run on it)"
    assert f"no database at {db}: nothing has run on it. The service's is the DIGEST_DB" in result.stderr
    assert not db.exists()


def test_read_only_verbs_do_not_create_the_default_database(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert invoke("status").exit_code == 1  # no database: said, and nothing created
    assert invoke("logs").exit_code == 1
    assert not (tmp_path / "xdg").exists()


def test_weekly_takes_global_options_after_the_verb(repo, tmp_path):  # noqa: F811
    db = tmp_path / "after.db"
    out = tmp_path / "week.md"
    result = invoke(
        "weekly", "--git-dir", str(repo.path), "--week", "2026-W05", "--tz", "Asia/Shanghai",
        "--out", str(out), "-v", "--db", str(db),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert db.exists() and out.exists()
    assert Store(db).query("SELECT count(*) AS n FROM digests")[0]["n"] == 7
