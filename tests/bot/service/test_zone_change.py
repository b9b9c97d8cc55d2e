"""A subscription's zone changed after days were posted: the next day starts where the last posted window
ended, so commits between the two windows are posted once (east → west) and commits already posted are not
posted again (west → east); later days are plain calendar days again. Through the scheduler, the real
runner, a local git repository and the fake Slack over HTTP."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest

from adapters.local_git.source import LocalGitSource
from adapters.slack.client import make_client
from adapters.slack.poster import SlackPoster
from analysis.models import key_of
from analysis.window import day_window
from bot.app import chat_service, digest_runner
from bot.chat.commands import parse_command
from bot.config.settings import Settings, zone
from bot.config.subscriptions import Destination, Registry, Subscription
from bot.digest.analyzers import HeuristicAnalyzer
from bot.digest.pipeline import build_digest, load_digest
from bot.service.scheduler import DigestScheduler
from tests.fakes.gitrepo import GitRepo, isolate_git_env
from tests.fakes.slack_api import FakeSlack

CHANNEL = "C0ZONES"
D = date(2026, 1, 26)


def sub(repo: GitRepo, tz: str) -> Subscription:
    return Subscription(
        name="widgets",
        repo="acme/widgets",
        timezone=tz,
        schedule="09:00",
        lang="en",
        destinations=(Destination("slack", CHANNEL),),
        git_dir=repo.path,
    )


@pytest.fixture
def widgets(tmp_path, monkeypatch) -> dict[str, str]:
    """Commits on both sides of 2026-01-26 16:00 UTC (midnight in UTC+8) and 2026-01-27 00:00 UTC: one
    commit in each stretch the two zones' days cut the time into. Title → sha."""
    isolate_git_env(monkeypatch, tmp_path / "home")
    repo = GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")
    times = {
        "early": "2026-01-26T02:00:00+00:00",  # day D in both zones
        "between": "2026-01-26T20:00:00+00:00",  # D in UTC, D+1 in UTC+8
        "next": "2026-01-27T12:00:00+00:00",  # D+1 in both zones
        "late": "2026-01-27T20:00:00+00:00",  # D+1 in UTC, D+2 in UTC+8
        "after": "2026-01-28T12:00:00+00:00",  # D+2 in both zones
    }
    shas = {
        title: repo.commit(f"Change {title}", {f"src/{title}.py": f"{title} = 1\n"}, when=when)
        for title, when in times.items()
    }
    return {"repo": repo, **shas}  # type: ignore[dict-item]


class Clock:
    def __init__(self, at: datetime):
        self.now = at

    def __call__(self) -> datetime:
        return self.now


def slack_poster(slack: FakeSlack) -> SlackPoster:
    return SlackPoster(
        make_client(Settings(_env_file=None, slack_bot_token=slack.token, slack_api_url=slack.api_url))
    )


def service(store, subscription: Subscription, slack: FakeSlack, clock: Clock) -> DigestScheduler:
    settings = Settings(_env_file=None, digest_db=store.path, history_days=0)
    runner = digest_runner(settings, store, {"slack": slack_poster(slack)})
    return DigestScheduler(Registry(store, [subscription]), store, runner, clock=clock)


def posted_commits(store) -> Counter[str]:
    """How many times each commit was posted in the channel, over every digest posted there."""
    keys = [
        r["digest_key"]
        for r in store.query("SELECT DISTINCT digest_key FROM posts WHERE channel = ?", [CHANNEL])
    ]
    counts: Counter[str] = Counter()
    for key in keys:
        digest = load_digest(store, key)
        assert digest is not None
        counts.update(c.sha for c in digest.commits)
    return counts


async def run_days(store, widgets, zones: list[tuple[str, date]], lang: str = "en") -> list[tuple[str, str]]:
    """Each (zone, day) run by a service configured with that zone (a restart after the config changed).
    Each day's parent message and report, as posted."""
    posted = []
    with FakeSlack() as slack:
        for tz, day in zones:
            s = replace(sub(widgets["repo"], tz), lang=lang)
            clock = Clock(day_window(day, zone(tz))[1] + timedelta(hours=1))
            sched = service(store, s, slack, clock)
            outcome = await sched.run_once(s, day)
            assert outcome is not None and outcome.status == "done", outcome
            parent = slack.channel_messages(CHANNEL)[-1]
            [report] = [u for u in slack.uploads.values() if u.thread_ts == parent.ts]
            posted.append(
                (parent.text + json.dumps(parent.blocks, ensure_ascii=False), report.content.decode())
            )
        slack.check()
    return posted


EVERY = ("early", "between", "next", "late", "after")


async def test_east_to_west_posts_the_commits_between_the_windows_once(store, widgets):
    days = [("Asia/Shanghai", D), ("UTC", date(2026, 1, 27)), ("UTC", date(2026, 1, 28))]
    posted = await run_days(store, widgets, days)
    counts = posted_commits(store)
    assert [counts[widgets[t]] for t in EVERY] == [1, 1, 1, 1, 1]  # "between" was never posted before the fix
    said = "Time zone changed from Asia/Shanghai to UTC: this digest starts at 2026-01-26 16:00 (UTC+00:00)"
    assert [said in parent for parent, _ in posted] == [False, True, False]  # later days are plain again
    assert [report.count(said) for _, report in posted] == [0, 1, 0]


async def test_west_to_east_does_not_post_commits_again(store, widgets):
    days = [("UTC", D), ("Asia/Shanghai", date(2026, 1, 27)), ("Asia/Shanghai", date(2026, 1, 28))]
    posted = await run_days(store, widgets, days, lang="zh")
    counts = posted_commits(store)
    assert [counts[widgets[t]] for t in EVERY] == [1, 1, 1, 1, 1]  # "between" was posted twice before the fix
    said = "时区已由 UTC 改为 Asia/Shanghai：本期从 2026-01-27 08:00 (UTC+08:00) 开始"
    assert [said in parent for parent, _ in posted] == [False, True, False]
    assert [report.count(said) for _, report in posted] == [0, 1, 0]


async def test_catch_up_of_several_days_across_a_change_covers_the_gap_once(store, widgets):
    """Down for three mornings while the zone changed: the first day caught up starts where the last posted
    one ended, the others are plain days of the new zone."""
    with FakeSlack() as slack:
        east = sub(widgets["repo"], "Asia/Shanghai")
        clock = Clock(datetime(2026, 1, 27, 10, tzinfo=UTC))
        assert (await service(store, east, slack, clock).run_once(east, D)).status == "done"
        store.db["subscription_seen"].insert({"name": "widgets", "first_seen": "2026-01-20T00:00:00+00:00"})
        clock.now = datetime(2026, 1, 30, 10, tzinfo=UTC)
        west = sub(widgets["repo"], "UTC")
        sched = service(store, west, slack, clock)
        await sched.catch_up()
        await sched.idle()
        slack.check()
    runs = store.query("SELECT day, window_start, window_end, timezone FROM runs ORDER BY day")
    assert [(r["day"], r["window_start"][:16], r["window_end"][:16], r["timezone"]) for r in runs] == [
        ("2026-01-26", "2026-01-25T16:00", "2026-01-26T16:00", "Asia/Shanghai"),
        ("2026-01-27", "2026-01-26T16:00", "2026-01-28T00:00", "UTC"),
        ("2026-01-28", "2026-01-28T00:00", "2026-01-29T00:00", "UTC"),
        ("2026-01-29", "2026-01-29T00:00", "2026-01-30T00:00", "UTC"),
    ]
    counts = posted_commits(store)
    assert [counts[widgets[t]] for t in EVERY] == [1, 1, 1, 1, 1]


async def test_a_plain_build_of_the_day_leaves_the_posted_digest_alone(store, widgets):
    """`digestbot digest --date` and the weekly roll-up build the plain calendar day: a digest of its own,
    stored beside the posted one (whose thread questions still see what was posted), not over it."""
    await run_days(store, widgets, [("Asia/Shanghai", D), ("UTC", date(2026, 1, 27))])
    [moved] = [k for (k,) in store.db.execute("SELECT DISTINCT digest_key FROM posts") if "/since:" in k]
    assert moved == "acme/widgets@main/2026-01-27/UTC/en/since:2026-01-26T16:00Z"
    source = LocalGitSource(widgets["repo"].path, repo="acme/widgets")
    try:
        plain = await build_digest(
            source,
            store,
            HeuristicAnalyzer(),
            branch="main",
            day=date(2026, 1, 27),
            tz=zone("UTC"),
            lang="en",
        )
    finally:
        await source.aclose()
    assert plain.previous_zone is None and key_of(plain) == "acme/widgets@main/2026-01-27/UTC/en"
    assert {c.sha for c in plain.commits} == {widgets["next"], widgets["late"]}
    posted = load_digest(store, moved)
    assert {c.sha for c in posted.commits} == {widgets["between"], widgets["next"], widgets["late"]}
    assert posted.previous_zone == "Asia/Shanghai"


async def test_the_day_asked_for_in_the_channel_is_the_posted_digest_not_a_second_one(store, widgets):
    """`/digest 2026-01-27` in the subscription's channel after the change: the same digest its scheduled
    post put there (nothing new to post), not the plain day with other commits."""
    await run_days(store, widgets, [("Asia/Shanghai", D), ("UTC", date(2026, 1, 27))])
    settings = Settings(_env_file=None, digest_db=store.path, history_days=0, digest_lang="en")
    service = chat_service(settings, store, git_dirs={"acme/widgets": widgets["repo"].path})
    service.subscriptions = Registry(store, [sub(widgets["repo"], "UTC")])
    result = await service.execute("slack", CHANNEL, parse_command("2026-01-27"))
    assert result.kind == "digest", result.text
    assert key_of(result.digest) == "acme/widgets@main/2026-01-27/UTC/en/since:2026-01-26T16:00Z"
    with FakeSlack() as slack:
        posted = await service.post_day(slack_poster(slack), CHANNEL, result.digest)
    assert posted.posted == []  # all of it is up already


async def test_a_run_cut_short_after_posting_the_moved_day_posts_nothing_twice(store, widgets):
    """Killed between the post and its record (the run row still 'running', no window): the sweep's rerun
    builds the same moved window from the day before's record, finds it posted, and records it."""
    await run_days(store, widgets, [("Asia/Shanghai", D), ("UTC", date(2026, 1, 27))])
    store.db.execute(
        "UPDATE runs SET status = 'running', window_start = NULL, window_end = NULL, timezone = NULL"
        " WHERE day = '2026-01-27'"
    )
    store.db.conn.commit()
    with FakeSlack() as slack:
        s = sub(widgets["repo"], "UTC")
        sched = service(store, s, slack, Clock(datetime(2026, 1, 29, 10, tzinfo=UTC)))
        assert (await sched.run_once(s, date(2026, 1, 27))).status == "done"
        assert slack.channel_messages(CHANNEL) == []  # nothing posted again
        assert (await sched.run_once(s, date(2026, 1, 28))).status == "done"
    counts = posted_commits(store)
    assert [counts[widgets[t]] for t in EVERY] == [1, 1, 1, 1, 1]
