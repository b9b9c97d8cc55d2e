"""The CLI as a user runs it: a real `digestbot` process, its exit code and stderr. Every error is one
line with exit code 2; a closed pipe ends it quietly; `--out` never loses a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.store.db import Store
from tests.bot.cli.test_cli import DAY, repo  # noqa: F401  (the throw-away clone fixture)

ROOT = Path(__file__).resolve().parents[3]  # run this tree's code, whatever is installed


def child_env(**more: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **more}


def digestbot(*args: str, db: Path, stdout=subprocess.PIPE, env: dict | None = None):

    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "--db", str(db), *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=child_env(**(env or {})),
        timeout=120,
    )


def one_line_error(proc, fragment: str) -> None:
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 2, (proc.returncode, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert fragment in lines[0], err
    assert "Traceback" not in err and "unexpected" not in err


def digest_args(repo_path: Path, *more: str) -> list[str]:
    return ["digest", "--git-dir", str(repo_path), "--date", DAY, "--tz", "Asia/Shanghai", *more]


@pytest.mark.parametrize(("out", "fragment"), [("/", "is a directory"), ("", "--out is empty")])
def test_bad_out_paths_are_one_line(repo, tmp_path, out, fragment):  # noqa: F811
    one_line_error(digestbot(*digest_args(repo.path, "--out", out), db=tmp_path / "d.db"), fragment)


def test_out_never_overwrites_the_database(repo, tmp_path):  # noqa: F811
    db = tmp_path / "d.db"
    Store(db).close()
    before = db.read_bytes()
    one_line_error(digestbot(*digest_args(repo.path, "--out", str(db)), db=db), "digestbot's database")
    assert db.read_bytes()[:16] == before[:16] == b"SQLite format 3\x00"
    assert Store(db).schema_version >= 1


def test_out_dash_is_stdout(repo, tmp_path):  # noqa: F811
    proc = digestbot(*digest_args(repo.path, "--out", "-", "--format", "json"), db=tmp_path / "d.db")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["stats"]["total"] == 3
    assert not Path("-").exists()


def test_a_day_past_the_calendar_is_one_line(tmp_path):
    proc = digestbot(
        "digest", "--git-dir", str(tmp_path), "--date", "9999-12-31", "--tz", "Pacific/Kiritimati",
        db=tmp_path / "d.db",
    )  # fmt: skip
    one_line_error(proc, "out of range")


def test_a_closed_pipe_ends_quietly(repo, tmp_path):  # noqa: F811
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "--db", str(tmp_path / "d.db"), *digest_args(repo.path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    proc.stdout.close()  # like `| head` that has read what it wanted
    err = proc.stderr.read().decode("utf-8")
    assert proc.wait(timeout=120) == 141
    assert err == ""


CONFIG = """
[[subscription]]
name = "gone"
repo = "acme/gone"
git_dir = "{missing}"
slack_channels = ["C1"]

[[subscription]]
name = "fine"
repo = "acme/widgets"
git_dir = "{ok}"
slack_channels = ["C2"]
"""


def test_status_and_run_name_the_broken_subscription(repo, tmp_path):  # noqa: F811
    config = tmp_path / "digest.toml"
    config.write_text(CONFIG.format(missing=tmp_path / "nowhere", ok=repo.path), encoding="utf-8")
    env = {"SLACK_BOT_TOKEN": "xoxb-not-used", "SLACK_APP_TOKEN": "xapp-not-used"}
    status = digestbot("status", "--config", str(config), db=tmp_path / "d.db", env=env)
    assert status.returncode == 1, status.stderr
    text = status.stdout.decode("utf-8")
    gone, fine = text.split("\ngone  [file]\n")[1].split("\nfine  [file]\n")
    assert "BROKEN    source:" in gone and "nowhere" in gone and "not a git repository" in gone
    assert "BROKEN" not in fine
    as_json = digestbot("status", "--config", str(config), "--format", "json", db=tmp_path / "d.db", env=env)
    problems = {s["name"]: s["problem"] for s in json.loads(as_json.stdout)["subscriptions"]}
    assert problems["fine"] is None and "not a git repository" in problems["gone"]

    run = digestbot("run", "--config", str(config), db=tmp_path / "d.db", env=env)
    assert run.returncode == 2
    err = run.stderr.decode("utf-8")
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("error: 1 subscription(s) broken — gone: source:")


def test_a_branch_the_clone_does_not_have_is_broken_before_the_first_run(repo, tmp_path):  # noqa: F811
    """A misspelt branch failed only when the day's run fired, hours after `run` started."""
    config = tmp_path / "digest.toml"
    text = CONFIG.format(missing=repo.path, ok=repo.path).replace(
        'name = "gone"\n', 'name = "gone"\nbranch = "mian"\n'
    )
    config.write_text(text.replace('name = "fine"\n', 'name = "fine"\nbranch = "main"\n'), encoding="utf-8")
    env = {"SLACK_BOT_TOKEN": "xoxb-not-used", "SLACK_APP_TOKEN": "xapp-not-used"}
    as_json = digestbot("status", "--config", str(config), "--format", "json", db=tmp_path / "d.db", env=env)
    assert as_json.returncode == 1
    problems = {s["name"]: s["problem"] for s in json.loads(as_json.stdout)["subscriptions"]}
    assert problems["fine"] is None
    assert (
        problems["gone"].startswith("source: unknown branch 'mian'")
        and "known branches: main" in problems["gone"]
    )
    run = digestbot("run", "--config", str(config), db=tmp_path / "d.db", env=env)
    assert run.returncode == 2
    assert "gone: source: unknown branch 'mian'" in run.stderr.decode("utf-8").strip().splitlines()[-1]


def test_status_flags_a_channel_without_its_token(repo, tmp_path):  # noqa: F811
    config = tmp_path / "digest.toml"
    config.write_text(CONFIG.format(missing=repo.path, ok=repo.path), encoding="utf-8")
    status = digestbot("status", "--config", str(config), "--format", "json", db=tmp_path / "d.db")
    assert status.returncode == 1
    problems = [s["problem"] for s in json.loads(status.stdout)["subscriptions"]]
    assert problems == ["channels: posts to slack but SLACK_BOT_TOKEN is not set"] * 2


def test_a_terminal_gets_the_report_rendered_a_pipe_plain_markdown(repo, tmp_path):  # noqa: F811
    import pty

    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "--db", str(tmp_path / "d.db"), *digest_args(repo.path, "--lang", "en")],
        stdout=secondary,
        stderr=subprocess.PIPE,
        env=child_env(COLUMNS="100", TERM="xterm-256color"),
    )  # fmt: skip
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    shown = b"".join(chunks).decode("utf-8")
    assert "\x1b[" in shown and "Daily Update Report (2026-01-26)" in shown
    assert "\n# " not in shown and "\n## " not in shown  # headings rendered, not raw Markdown
    piped = digestbot(*digest_args(repo.path, "--lang", "en"), db=tmp_path / "d.db").stdout.decode("utf-8")
    assert piped.startswith("# ") and "\x1b[" not in piped


HOSTED = """
[[subscription]]
name = "{name}"
repo = "{repo}"
{branch}slack_channels = ["C1"]
"""


@pytest.mark.parametrize(
    ("hosted", "branch", "token", "said"),
    [
        ("octo/demoo", "", None, "repository octo/demoo not found on GitHub"),
        ("octo/demo", 'branch = "mian"\n', None, "branch 'mian' not found in octo/demo on GitHub (404)"),
        ("octo/demo", "", "ghp_revoked", "GitHub rejected the token (401): check GITHUB_TOKEN"),
    ],
)
def test_run_refuses_a_hosted_repository_branch_or_token_the_host_refuses(
    tmp_path, hosted, branch, token, said
):
    """A misspelt repository or branch, or a revoked token, failed only at the first run, hours after the
    start, with a notice a day in the channel."""
    from tests.fakes.github import FakeGitHub

    config = tmp_path / "digest.toml"
    config.write_text(HOSTED.format(name="hosted", repo=hosted, branch=branch), encoding="utf-8")
    with FakeGitHub("octo/demo", token="ghp_good" if token else None) as gh:
        env = {
            "SLACK_BOT_TOKEN": "xoxb-not-used",
            "SLACK_APP_TOKEN": "xapp-not-used",
            "GITHUB_API_URL": gh.base_url,
        }
        if token:
            env["GITHUB_TOKEN"] = token
        run = digestbot("run", "--config", str(config), db=tmp_path / "d.db", env=env)
    assert run.returncode == 2
    last = run.stderr.decode("utf-8").strip().splitlines()[-1]
    assert last.startswith("error: 1 subscription(s) broken — hosted: source: ") and said in last
