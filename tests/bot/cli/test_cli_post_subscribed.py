"""`digestbot post` to a channel a subscription posts to: the day is the subscription's digest (its zone,
language, branch and filters), so the scheduled post finds it there and posts nothing twice; an option
that differs says the channel will have the day twice."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from analysis.models import digest_key
from bot.cli.main import cli
from bot.digest.pipeline import load_digest
from bot.store.db import Store
from tests.fakes.gitrepo import GitRepo, isolate_git_env
from tests.fakes.slack_api import FakeSlack

CHANNEL = "C0SUBBED"
DAY = "2026-01-26"
CONFIG = """
[[subscription]]
name = "widgets-ny"
repo = "acme/widgets"
git_dir = "{git_dir}"
timezone = "America/New_York"
lang = "en"
slack_channels = ["{channel}"]

[subscription.filters]
ignore_titles = ["^\\\\[Doc\\\\]"]
"""


@pytest.fixture
def repo(tmp_path, monkeypatch):
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")
    r.commit("Initial import", {"src/app.py": "print('hi')\n"}, when="2026-01-20T09:00:00+00:00")
    r.commit("[Bugfix] Fix crash on empty input (#12)", {"src/app.py": "print('hi!')\n"},
             when=f"{DAY}T15:00:00+00:00")  # fmt: skip
    r.commit("[Doc] Explain flags (#13)", {"README.md": "flags\n"}, when=f"{DAY}T16:00:00+00:00")
    return r


@pytest.fixture
def slack(monkeypatch, tmp_path, repo):
    config = tmp_path / "digest.toml"
    config.write_text(CONFIG.format(git_dir=repo.path, channel=CHANNEL), encoding="utf-8")
    for name in ("DIGEST_TZ", "DIGEST_LANG", "DIGEST_REPO"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DIGEST_CONFIG", str(config))
    with FakeSlack() as fake:
        monkeypatch.setenv("SLACK_BOT_TOKEN", fake.token)
        monkeypatch.setenv("SLACK_API_URL", fake.api_url)
        yield fake


def post(tmp_path, repo, *extra, channel=CHANNEL):
    args = ["--db", str(tmp_path / "d.db"), "post", "--platform", "slack", "--channel", channel,
            "--git-dir", str(repo.path), "--date", DAY, "--format", "json", *extra]  # fmt: skip
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def posted_key(result) -> str:
    import json

    return json.loads(result.stdout)["key"]


def test_a_post_by_hand_is_the_subscriptions_digest(tmp_path, repo, slack):
    result = post(tmp_path, repo)
    assert result.exit_code == 0, result.output
    assert posted_key(result) == digest_key("acme/widgets", "main", DAY, "America/New_York", "en")
    digest = load_digest(Store(tmp_path / "d.db"), posted_key(result))
    # the subscription's filter: the [Doc] commit is not in its digest
    assert [c.title for c in digest.commits] == ["[Bugfix] Fix crash on empty input (#12)"]
    # the scheduled post of the same day finds it there: nothing is posted twice
    again = post(tmp_path, repo)
    assert again.exit_code == 0 and '"posted": []' in again.stdout


def test_an_option_that_differs_says_the_day_will_be_there_twice(tmp_path, repo, slack):
    result = post(tmp_path, repo, "--tz", "UTC")
    assert result.exit_code == 0, result.output
    assert posted_key(result) == digest_key("acme/widgets", "main", DAY, "UTC", "en")
    assert "widgets-ny posts acme/widgets here; --tz 'UTC' (the subscription's: 'America/New_York')" in (
        result.stderr
    )
    assert "the channel will have this day twice" in result.stderr


def test_the_subscriptions_zone_given_by_another_name_is_the_same_digest(tmp_path, repo, slack):
    result = post(tmp_path, repo, "--tz", "america/new_york")
    assert result.exit_code == 0, result.output
    assert posted_key(result) == digest_key("acme/widgets", "main", DAY, "America/New_York", "en")
    assert "twice" not in result.stderr


def test_a_channel_no_subscription_posts_to_keeps_the_defaults(tmp_path, repo, slack):
    result = post(tmp_path, repo, channel="C0OTHER")
    assert result.exit_code == 0, result.output
    assert posted_key(result) == digest_key("acme/widgets", "main", DAY, "Asia/Shanghai", "zh")


def test_after_a_zone_change_a_post_by_hand_is_the_scheduled_digest_not_a_second_one(tmp_path, repo, slack):
    """The subscription posted the day before in Asia/Shanghai and now runs in New York: the day's window
    starts where that post ended (its scheduled post's does), and a post by hand is that same digest."""
    gap = repo.commit("Land between the zones", {"src/gap.py": "g = 1\n"}, when="2026-01-25T20:00:00+00:00")
    store = Store(tmp_path / "d.db")
    store.db["runs"].insert(
        {
            "subscription": "widgets-ny",
            "day": "2026-01-25",
            "status": "done",
            "window_start": "2026-01-24T16:00:00+00:00",
            "window_end": "2026-01-25T16:00:00+00:00",
            "timezone": "Asia/Shanghai",
        }
    )
    result = post(tmp_path, repo)
    assert result.exit_code == 0, result.output
    plain = digest_key("acme/widgets", "main", DAY, "America/New_York", "en")
    assert posted_key(result) == f"{plain}/since:2026-01-25T16:00Z"
    digest = load_digest(store, posted_key(result))
    assert [c.sha for c in digest.commits][-1] == gap  # before New York's midnight, after Shanghai's
    assert digest.previous_zone == "Asia/Shanghai"
    [parent] = slack.channel_messages(CHANNEL)
    assert "Time zone changed from Asia/Shanghai to America/New_York" in str(parent.blocks)
    store.close()
