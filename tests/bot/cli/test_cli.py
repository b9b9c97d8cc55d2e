"""The `digestbot` command line end to end: a throw-away git clone or a fake GitHub in, a complete
report out; every user error one line on stderr with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from analysis.render.markdown import render_report
from bot.cli.main import cli
from bot.digest.pipeline import load_digest
from bot.store.db import Store
from tests.analysis.reportcheck import check_report
from tests.fakes.github import FakeGitHub, make_commit, make_file
from tests.fakes.gitrepo import GitRepo, isolate_git_env

DAY = "2026-01-26"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")
    r.commit("Initial import", {"src/app.py": "print('hi')\n"}, when="2026-01-25T09:00:00+08:00")
    r.commit(
        "[Bugfix] Fix crash on empty input (#12)\n\nDetails.\n\nSigned-off-by: Ada <ada@example.com>",
        {"src/app.py": "print('hi')\nif not x:\n    pass\n"},
        when="2026-01-26T00:00:00+08:00",  # exactly on the window's start: included
    )
    r.commit(
        "[Doc] Explain flags (#13)",
        {"docs/flags.md": "# Flags\n" + "text\n" * 80},
        when="2026-01-26T12:30:00+08:00",
    )
    r.commit(
        "[Feature] Add the export command @everyone <!channel> (#14)",
        {f"src/export/m{i}.py": "def f():\n    return 1\n" * 60 for i in range(8)},
        when="2026-01-26T23:59:59+08:00",
    )
    r.commit("Next day", {"src/app.py": "print('bye')\n"}, when="2026-01-27T00:00:00+08:00")  # excluded
    return r


def run(*args, db=None):
    runner = CliRunner()
    base = ["--db", str(db)] if db else []
    return runner.invoke(cli, [*base, *args], catch_exceptions=False)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_markdown_report_from_a_local_clone(repo, tmp_path, lang):
    db = tmp_path / "d.db"
    result = run(
        "digest", "--git-dir", str(repo.path), "--date", DAY, "--tz", "Asia/Shanghai", "--lang", lang, db=db
    )
    assert result.exit_code == 0, result.output
    report = result.stdout
    digest = load_digest(Store(db), f"acme/widgets@main/{DAY}/Asia/Shanghai/{lang}")
    assert [c.title for c in digest.commits] == [
        "[Feature] Add the export command @everyone <!channel> (#14)",
        "[Doc] Explain flags (#13)",
        "[Bugfix] Fix crash on empty input (#12)",
    ]
    assert check_report(report, [digest], lang) == []
    assert report == render_report([digest], lang)
    assert "Signed-off-by" not in report and "ada@example.com" not in report
    assert "https://github.com/acme/widgets/commit/" in report


def test_json_report_and_out_file(repo, tmp_path):
    out = tmp_path / "reports" / "day.json"
    result = run(
        "digest",
        "--git-dir",
        str(repo.path),
        "--date",
        DAY,
        "--tz",
        "Asia/Shanghai",
        "--format",
        "json",
        "--out",
        str(out),
        db=tmp_path / "d.db",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["repo"] == "acme/widgets" and data["date"] == DAY and data["timezone"] == "Asia/Shanghai"
    assert data["stats"]["total"] == 3 == len(data["commits"])
    assert data["window"]["start"] == "2026-01-26T00:00:00+08:00"
    times = [c["committed_at"] for c in data["commits"]]
    assert times == sorted(times, reverse=True) and all(t.endswith("+08:00") for t in times)
    assert {c["analyzer"] for c in data["commits"]} == {"heuristic"}


def test_rerun_reuses_stored_analyses(repo, tmp_path):
    db = tmp_path / "d.db"
    args = ("digest", "--git-dir", str(repo.path), "--date", DAY, "--tz", "Asia/Shanghai")
    first = run(*args, db=db)
    rows_before = Store(db).query("SELECT count(*) AS n FROM analyses")[0]["n"]
    second = run(*args, db=db)
    assert first.stdout.split("生成时间")[0] == second.stdout.split("生成时间")[0]
    assert Store(db).query("SELECT count(*) AS n FROM analyses")[0]["n"] == rows_before == 3


def test_analyze_one_commit(repo, tmp_path):
    sha = repo.rev_parse("HEAD~1")
    result = run("analyze", sha[:8], "--git-dir", str(repo.path), "--lang", "en", db=tmp_path / "d.db")
    assert result.exit_code == 0, result.output
    assert "Add the export command" in result.stdout and "🎯 Change type" in result.stdout
    by_pr = run("analyze", "#13", "--git-dir", str(repo.path), "--format", "json", db=tmp_path / "d.db")
    assert json.loads(by_pr.stdout)["pr_number"] == 13


def test_github_source_through_the_cli(tmp_path, monkeypatch):
    commits = [
        make_commit(
            "[Perf] Faster path (#7)",
            "2026-01-26T03:00:00Z",
            files=[make_file("src/a.py", additions=30, deletions=2)],
        ),
        make_commit(
            "[CI] Tweak (#8)",
            "2026-01-26T05:00:00Z",
            files=[make_file(".github/workflows/ci.yml", additions=1, deletions=1)],
        ),
    ]
    with FakeGitHub("octo/demo", commits) as fake:
        monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
        result = run(
            "digest",
            "--repo",
            "octo/demo",
            "--date",
            DAY,
            "--tz",
            "UTC",
            "--format",
            "json",
            db=tmp_path / "d.db",
        )
        assert result.exit_code == 0, result.output
        assert [c["title"] for c in json.loads(result.stdout)["commits"]] == [
            "[CI] Tweak (#8)",
            "[Perf] Faster path (#7)",
        ]


def assert_one_line_error(result, fragment):
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert fragment in lines[0]
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--date", "2026-02-30"], "no such day '2026-02-30': February 2026 has 28 days"),
        (["--date", "yesterday"], "YYYY-MM-DD"),
        (["--tz", "Mars/Olympus"], "unknown time zone"),
        (["--branch", "nope"], "unknown branch 'nope'"),
    ],
)
def test_input_errors(repo, tmp_path, args, fragment):
    base = ["digest", "--git-dir", str(repo.path), "--date", DAY, "--tz", "UTC"]
    result = run(*base, *args, db=tmp_path / "d.db")
    assert_one_line_error(result, fragment)


def test_not_a_git_repository(tmp_path):
    assert_one_line_error(
        run("digest", "--git-dir", str(tmp_path), "--date", DAY, db=tmp_path / "d.db"), "not a git repository"
    )


def test_no_repository_given(tmp_path):
    assert_one_line_error(run("digest", "--date", DAY, db=tmp_path / "d.db"), "no repository")


def test_unknown_and_ambiguous_refs(repo, tmp_path):
    assert_one_line_error(
        run("analyze", "deadbeef", "--git-dir", str(repo.path), db=tmp_path / "d.db"), "deadbeef"
    )
    assert_one_line_error(
        run("analyze", "zzz", "--git-dir", str(repo.path), db=tmp_path / "d.db"), "cannot read"
    )
    assert_one_line_error(run("analyze", "#999", "--git-dir", str(repo.path), db=tmp_path / "d.db"), "#999")


def test_github_errors_are_one_line(tmp_path, monkeypatch):
    with FakeGitHub("octo/demo", [], token="right") as fake:
        monkeypatch.setenv("GITHUB_API_URL", fake.base_url)
        monkeypatch.setenv("GITHUB_TOKEN", "wrong-token-value")
        result = run("digest", "--repo", "octo/demo", "--date", DAY, "--branch", "main", db=tmp_path / "d.db")
        assert_one_line_error(result, "401")
        assert "wrong-token-value" not in result.output
        monkeypatch.setenv("GITHUB_TOKEN", "right")
        assert_one_line_error(
            run("digest", "--repo", "octo/other", "--date", DAY, db=tmp_path / "d.db"), "octo/other not found"
        )
        fake.rate_limit(count=5, status=403, reset_at=time.time() + 7200)
        monkeypatch.setenv("GITHUB_MAX_WAIT", "5")
        result = run("digest", "--repo", "octo/demo", "--date", DAY, "--branch", "main", db=tmp_path / "d.db")
        assert_one_line_error(result, "rate")


def test_bad_settings_are_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_CONCURRENCY", "lots")
    assert_one_line_error(run("digest", "--git-dir", str(tmp_path), db=tmp_path / "d.db"), "LLM_CONCURRENCY")


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("OPENAI_BASE_URL", "not a url", "it must start with http:// or https://"),
        ("GITHUB_API_URL", "api.github.com", "it must start with http:// or https://"),
        ("SLACK_API_URL", "https://", "no host after the scheme"),
        ("DISCORD_API_URL", "http://127.0.0.1:port/api", "port could not be cast to integer value as 'port'"),
        ("OPENAI_BASE_URL", "http://my host:8000/v1", "a space in it"),
    ],
)
def test_a_base_url_that_is_not_one_is_refused_at_load(repo, tmp_path, monkeypatch, name, value, why):
    """OPENAI_BASE_URL=not a url sent four model calls to "://None", each a "timeout", and the digest fell
    back to the heuristic with exit 0; the other services' URLs failed as far from the cause."""
    monkeypatch.setenv(name, value)
    monkeypatch.setenv("DIGEST_MODEL", "m")
    result = run("digest", "--git-dir", str(repo.path), "--date", DAY, db=tmp_path / "d.db")
    assert_one_line_error(result, f"invalid settings: {name}: not an http(s) URL ({why}), got {value!r}")


def test_a_base_url_with_a_password_in_it_is_not_echoed(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "https://me:secret555@llm.example:eighty/v1")
    result = run("status", db=tmp_path / "d.db")
    assert_one_line_error(result, "OPENAI_BASE_URL: not an http(s) URL (port could not be cast")
    assert "secret555" not in result.stderr


@pytest.mark.parametrize("verb", [["digest", "--git-dir", "X"], ["status"], ["weekly", "--git-dir", "X"]])
def test_a_dotenv_that_is_not_utf8_is_one_line_naming_it_and_the_byte(tmp_path, verb):
    """A .env saved in Latin-1 ("café") crashed every verb with "unexpected UnicodeDecodeError … position
    13", exit 1: not which file, nor where in it."""
    dotenv = Path(".env").absolute()  # the test's own working directory (tests/conftest.py)
    dotenv.write_bytes(b"DIGEST_LANG=en\nDIGEST_TZ=caf\xe9\n")
    assert_one_line_error(
        run(*verb, db=tmp_path / "d.db"),
        f"cannot read {dotenv}: line 2, column 14 is byte 0xe9, not UTF-8: save the file as UTF-8",
    )


def test_llm_analyzer_needs_configuration(repo, tmp_path):
    result = run(
        "digest", "--git-dir", str(repo.path), "--date", DAY, "--analyzer", "llm", db=tmp_path / "d.db"
    )
    assert_one_line_error(result, "DIGEST_MODEL")


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"OPENAI_API_KEY": "sk-half"}, "OPENAI_API_KEY is set but DIGEST_MODEL is not"),
        ({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, "OPENAI_BASE_URL is set but DIGEST_MODEL is not"),
        (
            {"DIGEST_MODEL": "gpt-4o-mini"},
            "DIGEST_MODEL is set but neither OPENAI_API_KEY nor OPENAI_BASE_URL",
        ),
    ],
)
def test_a_half_configured_model_is_said_before_the_heuristic_runs(repo, tmp_path, monkeypatch, env, said):
    """A key without DIGEST_MODEL fell back to the heuristic without a word; the report is still made."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "DIGEST_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = run("digest", "--git-dir", str(repo.path), "--date", DAY, "--lang", "en", db=tmp_path / "d.db")
    assert result.exit_code == 0, result.output
    assert said in result.stderr and "the heuristic analyser ranks the commits" in result.stderr
    assert "Analysis heuristic" in result.stdout
    assert "sk-half" not in result.stderr


def test_a_configured_model_or_none_at_all_says_nothing(repo, tmp_path, monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "DIGEST_MODEL"):
        monkeypatch.delenv(name, raising=False)
    result = run("digest", "--git-dir", str(repo.path), "--date", DAY, "--lang", "en", db=tmp_path / "d.db")
    assert result.exit_code == 0 and "DIGEST_MODEL" not in result.stderr


@pytest.mark.parametrize("verb", [[], ["digest"], ["analyze"], ["post"], ["run"], ["status"]])
def test_help(verb):
    result = run(*verb, "--help")
    assert result.exit_code == 0 and "Usage: " in result.output and len(result.output) > 200


def test_stdout_is_utf8_whatever_the_locale(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("LC_ALL", "C")
    monkeypatch.setenv("PYTHONIOENCODING", "ascii")
    result = run(
        "digest", "--git-dir", str(repo.path), "--date", DAY, "--tz", "Asia/Shanghai", db=tmp_path / "d.db"
    )
    assert result.exit_code == 0
    assert "每日更新报告" in result.stdout_bytes.decode("utf-8")


def test_post_to_slack_from_the_cli_then_nothing_twice(repo, tmp_path, monkeypatch):
    from tests.fakes.slack_api import FakeSlack

    with FakeSlack() as slack:
        monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
        monkeypatch.setenv("SLACK_API_URL", slack.api_url)
        args = ("post", "--platform", "slack", "--channel", "C0DIGEST", "--git-dir", str(repo.path),
                "--date", DAY, "--tz", "Asia/Shanghai")  # fmt: skip
        first = run(*args, db=tmp_path / "d.db")
        assert first.exit_code == 0, first.output
        assert "acme/widgets 2026-01-26: 3 commits" in first.stderr and "already there" in first.stderr
        [parent] = slack.channel_messages("C0DIGEST")
        replies = slack.thread("C0DIGEST", parent.ts)
        again = run(*args, db=tmp_path / "d.db")
        assert again.exit_code == 0 and "posted 0 item(s)" in again.stderr
        assert (
            slack.channel_messages("C0DIGEST") == [parent] and slack.thread("C0DIGEST", parent.ts) == replies
        )
        assert slack.token not in first.output + again.output


def test_post_without_a_token_is_one_line(repo, tmp_path):
    result = run(
        "post", "--platform", "slack", "--channel", "C1", "--git-dir", str(repo.path), db=tmp_path / "d.db"
    )
    assert_one_line_error(result, "SLACK_BOT_TOKEN")


ROOT = Path(__file__).resolve().parents[3]


def _console_script(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`digestbot ARGS` as its console script runs it (bot.cli.main:script ends the process), after `code`."""
    script = f"import sys\n{code}\nfrom bot.cli.main import script\nsys.argv = ['digestbot', *{list(args)!r}]\nscript()\n"
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60
    )


def test_the_console_script_prints_everything_and_keeps_its_exit_status():
    done = _console_script("", "--help")
    assert done.returncode == 0 and "Usage: digestbot" in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].split()[0] == "weekly"  # the help text to its last line
    bad = _console_script("", "digest", "--date", "nope")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "error: bad date 'nope': use YYYY-MM-DD, e.g. 2026-01-29"
    ]
    # An unexpected error takes the interpreter's own way out: traceback and status 1.
    broken = _console_script("import bot.cli.main\nbot.cli.main.cli = lambda **_: 1 / 0\n")
    assert broken.returncode == 1 and "ZeroDivisionError" in broken.stderr
