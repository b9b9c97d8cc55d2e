"""`digestbot post` of a day that has not ended: refused as chat and the scheduler refuse it (a post
freezes a day in its channel), unless --partial says so; then the output says the day is partial and
the day stays open for the scheduled post (tests/bot/delivery/test_partial_day.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from analysis.models import digest_key
from bot.cli.main import cli
from bot.store.db import Store
from tests.fakes.gitrepo import GitRepo, isolate_git_env
from tests.fakes.slack_api import FakeSlack

CHANNEL = "C0TODAY"


@pytest.fixture
def today() -> str:
    return datetime.now(UTC).date().isoformat()


@pytest.fixture
def repo(tmp_path, monkeypatch, today):
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")
    r.commit("Initial import", {"src/app.py": "print('hi')\n"}, when="2026-01-25T09:00:00+00:00")
    r.commit(
        "[Feature] Add the export command (#14)",
        {f"src/export/m{i}.py": "def f():\n    return 1\n" * 60 for i in range(8)},
        when=f"{today}T00:00:00+00:00",  # the day's first instant: in the window whatever the time now
    )
    return r


@pytest.fixture
def slack(monkeypatch):
    with FakeSlack() as fake:
        monkeypatch.setenv("SLACK_BOT_TOKEN", fake.token)
        monkeypatch.setenv("SLACK_API_URL", fake.api_url)
        yield fake


def post_today(tmp_path, repo, today, *extra):
    args = ["--db", str(tmp_path / "d.db"), "post", "--platform", "slack", "--channel", CHANNEL,
            "--git-dir", str(repo.path), "--date", today, "--tz", "UTC", *extra]  # fmt: skip
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_today_is_refused_in_one_line_and_nothing_is_posted(tmp_path, repo, today, slack):
    result = post_today(tmp_path, repo, today)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and f"{today} has not ended yet in UTC" in line and "--partial" in line
    assert "Traceback" not in result.output
    assert slack.channel_messages(CHANNEL) == [] and slack.calls["chat.postMessage"] == 0


def test_the_dry_run_of_today_is_refused_too(tmp_path, repo, today, slack):
    result = post_today(tmp_path, repo, today, "--dry-run")
    assert result.exit_code == 2 and "has not ended yet" in result.stderr


def test_partial_posts_the_day_so_far_says_so_and_leaves_it_open(tmp_path, repo, today, slack):
    result = post_today(tmp_path, repo, today, "--partial")
    assert result.exit_code == 0, result.output
    assert f"acme/widgets {today} is a partial day (until " in result.stderr
    assert "the day stays open" in result.stderr
    [parent] = slack.channel_messages(CHANNEL)
    assert slack.uploads == {}  # the report comes with the whole day
    key = digest_key("acme/widgets", "main", today, "UTC", "zh")
    store = Store(tmp_path / "d.db")
    try:
        assert store.plan_is_partial("slack", CHANNEL, key)
        assert "report" not in store.get_posts("slack", CHANNEL, key)
    finally:
        store.close()

    again = post_today(tmp_path, repo, today, "--partial", "--format", "json")
    assert again.exit_code == 0, again.output
    out = json.loads(again.stdout)
    assert out["partial"] is True and out["edited"] == ["parent"] and out["posted"] == []
    assert [m.ts for m in slack.channel_messages(CHANNEL)] == [parent.ts]  # updated, not posted again


def test_partial_on_a_finished_day_posts_it_whole(tmp_path, repo, slack):
    result = post_today(tmp_path, repo, "2026-01-25", "--partial", "--format", "json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["partial"] is False and "report" in out["posted"]


@pytest.mark.parametrize("dry_run", [(), ("--dry-run",)])
def test_a_slack_channel_name_is_refused_before_any_work(tmp_path, repo, slack, dry_run):
    """`--channel '#general'`: Slack would post there, but the post would be recorded under the name, and
    the service, posting the day by the channel's id, would post it a second time."""
    args = ["--db", str(tmp_path / "d.db"), "post", "--platform", "slack", "--channel", "#general",
            "--git-dir", str(repo.path), "--date", "2026-01-25", "--tz", "UTC", *dry_run]  # fmt: skip
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 2, result.output
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: --channel: Slack channel ids look like C0123ABCD, got '#general'")
    assert sum(slack.calls.values()) == 0
