"""The weekly roll-up of a throw-away repository with known counts: per day by tier, the week's
follow-ups with how we had ranked each original, the areas, LLM usage; the CLI writes the Markdown and
its chart beside it with a relative link; the chart is a valid PNG of the expected size whose Chinese
labels are drawn with a CJK font."""

from __future__ import annotations

import dataclasses
import json
import struct
import warnings
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from adapters.chart import (
    HEIGHT_PX,
    WIDTH_PX,
    chart_characters,
    cjk_family,
    render_week_chart,
    shipped_cjk_font,
)
from adapters.local_git import LocalGitSource
from analysis.errors import InputError
from analysis.models import Analysis, Commit, Importance
from analysis.render.weekly import render_weekly_json, render_weekly_markdown, weekly_summary
from analysis.text import ZWSP
from analysis.weekly import Area, parse_week
from bot.cli.main import cli
from bot.digest.weekly import build_week
from bot.json_schema import WeeklyJSON
from tests.fakes.digests import make_analysis
from tests.fakes.gitrepo import GitRepo, isolate_git_env

TZ = ZoneInfo("Asia/Shanghai")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
RANKS = {"#10": "high", "#11": "high", "#12": "low", "#13": "medium", "#14": "medium", "#15": "low"}


@pytest.fixture
def repo(tmp_path, monkeypatch) -> GitRepo:
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")
    r.commit("[Core] Fast path (#10)", {"src/core/fast.py": "x = 1\n"}, when="2026-01-20T10:00:00+08:00")
    # ISO week 2026-W05: Monday 2026-01-26 … Sunday 2026-02-01
    r.commit("[Feature] Widgets (#11)", {"src/widgets/a.py": "a = 1\n"}, when="2026-01-26T10:00:00+08:00")
    r.commit("[Docs] Readme (#12)", {"README.md": "hi\n"}, when="2026-01-26T11:00:00+08:00")
    r.commit('Revert "[Core] Fast path (#10)" (#13)', {"src/core/fast.py": "x = 0\n"},
             when="2026-01-27T09:00:00+08:00")  # fmt: skip
    r.commit("[Perf] Cache (#14)", {"src/core/cache.py": "c = {}\n"}, when="2026-01-28T09:00:00+08:00")
    r.commit("[Bugfix] Fix stale entries after #14 (#15)", {"src/core/cache.py": "c = dict()\n"},
             when="2026-01-29T09:00:00+08:00")  # fmt: skip
    r.commit(
        "[Feature] More widgets (#16)", {"src/widgets/b.py": "b = 1\n"}, when="2026-01-31T23:59:59+08:00"
    )
    r.commit(
        'Revert "[Feature] Widgets (#11)" (#17)', {"src/widgets/a.py": ""}, when="2026-02-02T00:00:00+08:00"
    )
    return r


class FixedAnalyzer:
    """Known tiers by pull request: the roll-up's counts are then known too."""

    model = "fixed"
    prompt_version = "1"

    async def analyze(self, commits: list[Commit], lang: str, progress=None, **_) -> dict[str, Analysis]:
        return {c.sha: make_analysis(c, RANKS.get(f"#{c.pr_number}", "medium"), lang=lang) for c in commits}

    async def aclose(self) -> None:
        return None


async def week_of(repo: GitRepo, store, lang: str = "en"):
    source = LocalGitSource(repo.path)
    try:
        return await build_week(
            source, store, FixedAnalyzer(), branch="main", year=2026, week=5, tz=TZ, lang=lang
        )
    finally:
        await source.aclose()


async def test_week_counts_followups_areas_and_usage(repo, store):
    # What analysing two of the week's commits cost earlier, and a call for a commit of another week.
    fast, widgets = repo.rev_parse("HEAD~7"), repo.rev_parse("HEAD~6")
    store.log_llm_call(repo="acme/widgets", sha=widgets, tokens_in=1000, tokens_out=200, cost_usd=0.01)
    store.log_llm_call(repo="acme/widgets", sha=repo.rev_parse("HEAD~4"), tokens_in=500, tokens_out=50)
    store.log_llm_call(repo="acme/widgets", sha=fast, tokens_in=9999, tokens_out=9999, cost_usd=9.0)

    week = await week_of(repo, store)

    assert [(d.isoformat(), c["total"]) for d, c in week.days] == [
        ("2026-01-26", 2), ("2026-01-27", 1), ("2026-01-28", 1), ("2026-01-29", 1),
        ("2026-01-30", 0), ("2026-01-31", 1), ("2026-02-01", 0),
    ]  # fmt: skip
    assert week.totals == {"high": 1, "medium": 3, "low": 2, "total": 6}
    assert [
        (f.follow_up_ref, f.link.kind.value, f.original_ref, f.original_rank) for f in week.followups
    ] == [
        ("#13", "revert", "#10", Importance.HIGH),  # an original from before the week, ranked now
        ("#15", "fix", "#14", Importance.MEDIUM),
    ]
    assert week.followups[0].original_title == "[Core] Fast path (#10)"
    assert week.scored(week.followups[0].link.kind) == (1, 1, 1)
    # #11 was reverted by #17 the Monday after the week: within the 30 days counted
    assert week.areas == [Area("src/widgets/", 2, 1, 1), Area("src/core/", 3, 0, 1)]
    assert (week.usage.calls, week.usage.tokens_in, week.usage.tokens_out) == (2, 1500, 250)
    assert week.usage.cost_usd == pytest.approx(0.01)

    text = render_weekly_markdown(week, "weekly.png")
    assert "![2026-W05: commits per day by importance, and follow-ups](weekly.png)" in text
    hostile = render_weekly_markdown(dataclasses.replace(week, branch="rel`@here`<!channel>"))
    assert f"Branch `rel'@{ZWSP}here'<{ZWSP}!channel>`" in hostile  # a ref may hold backticks and mentions
    assert "| 2026-01-26 Mon | 1 | 0 | 1 | 2 | 0 |" in text
    assert "| **Total** | 1 | 3 | 2 | 6 | 2 |" in text
    assert "> 1 reverted this week; we had ranked 1 of them medium or high (1 high)." in text
    assert "> 1 fixed forward this week; we had ranked 1 of them medium or high (0 high)." in text
    assert "took 2 LLM call(s), 1500 tokens in / 250 out, $0.0100." in text
    data = render_weekly_json(week, "weekly.png")
    WeeklyJSON.model_validate(data)  # the documented shape (docs/json.md)
    assert data["totals"]["total"] == 6 and data["chart"] == "weekly.png"
    assert data["scores"] == {
        "revert": {"count": 1, "ranked_medium_or_high": 1, "ranked_high": 1},
        "fix": {"count": 1, "ranked_medium_or_high": 1, "ranked_high": 0},
    }
    assert weekly_summary(week)[2] == "1 reverted this week; we had ranked 1 of them medium or high (1 high)."


async def test_the_week_reads_the_same_on_a_fresh_and_a_working_database(repo, tmp_path):
    """Issue 18 item 3: a database that digested the days after the week (and so knows #17 reverted
    #11) and a fresh one give the same roll-up: the history the figures cite is read first."""
    from datetime import date

    from bot.digest.pipeline import build_digest
    from bot.store.db import Store

    working, fresh = Store(tmp_path / "working.db"), Store(tmp_path / "fresh.db")
    source = LocalGitSource(repo.path)
    try:
        for day in ("2026-02-02", "2026-02-03"):  # the service went on digesting after the week
            await build_digest(
                source, working, FixedAnalyzer(), branch="main", day=date.fromisoformat(day), tz=TZ, lang="en"
            )
    finally:
        await source.aclose()
    weeks = [await week_of(repo, db) for db in (working, fresh)]
    assert weeks[0].areas == weeks[1].areas == [Area("src/widgets/", 2, 1, 1), Area("src/core/", 3, 0, 1)]
    assert [(f.link.follow_up, f.original_rank) for f in weeks[0].followups] == [
        (f.link.follow_up, f.original_rank) for f in weeks[1].followups
    ]
    texts = [render_weekly_markdown(w, "c.png").split("\n", 2)[2] for w in weeks]
    assert "“Reverted or fixed” counts the follow-ups landed up to 2026-03-04 00:00." in texts[1]
    assert "| src/widgets/ | 2 | 1 | 1 |" in texts[0]
    assert [line for line in texts[0].splitlines() if "|" in line] == [
        line for line in texts[1].splitlines() if "|" in line
    ]


async def test_chinese_week_and_the_chart(repo, store):
    week = await week_of(repo, store, "zh")
    text = render_weekly_markdown(week)
    assert "# 每周回顾 · acme/widgets · 2026-W05（2026-01-26 – 2026-02-01）" in text
    assert "本周 1 个回滚；其中 1 个原提交我们曾评为中或高（1 个为高）。" in text
    assert "| 2026-01-26 周一 |" in text
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = render_week_chart(week)
    assert not [w for w in caught if "missing from font" in str(w.message)]  # no box for any label
    assert png_size(png) == (WIDTH_PX, HEIGHT_PX)


def test_chinese_labels_render_as_glyphs_not_boxes():
    from matplotlib.ft2font import FT2Font

    assert shipped_cjk_font() is not None  # shipped in the package, not the system's
    assert shipped_cjk_font().stat().st_size < 100_000  # the chart's glyphs, not a 20 MB font bundle
    assert cjk_family() == "Noto Sans SC"
    font = FT2Font(str(shipped_cjk_font()))
    # Every character the chart can draw in Chinese has its glyph (change the words: run tools/cjk_subset.py)
    missing = sorted(c for c in chart_characters() if not c.isascii() and not font.get_char_index(ord(c)))
    assert missing == [], f"run: python tools/cjk_subset.py <Noto Sans SC>; missing {missing}"

    def bitmap(char: str) -> bytes:
        font.set_size(32, 72)
        font.set_text(char)
        font.draw_glyphs_to_bitmap()
        return bytes(font.get_image())

    labels = "每日提交回滚修复跟进落地日高中低周一二三四五六"
    assert all(font.get_char_index(ord(c)) for c in labels)  # a glyph for each, not .notdef
    drawn = {c: bitmap(c) for c in "高中低回"}
    assert all(any(b) for b in drawn.values())  # ink on the page
    assert len(set(drawn.values())) == 4  # four different shapes: tofu boxes would all be the same


def test_cli_writes_the_rollup_and_its_chart_beside_it(repo, tmp_path):
    out = tmp_path / "reports" / "week.md"
    args = ["--db", str(tmp_path / "d.db"), "weekly", "--git-dir", str(repo.path), "--week", "2026-W05",
            "--tz", "Asia/Shanghai", "--lang", "en", "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    chart = tmp_path / "reports" / "weekly-acme-widgets-2026-W05.en.png"
    text = out.read_text(encoding="utf-8")
    assert f"]({chart.name})" in text  # a relative link that resolves beside the Markdown
    assert png_size(chart.read_bytes()) == (WIDTH_PX, HEIGHT_PX)
    assert "| **Total** | " in text and "| 6 | 2 |" in text

    result = CliRunner().invoke(cli, [*args[:-2], "--format", "json", "--out", str(tmp_path / "w.json")])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "w.json").read_text(encoding="utf-8"))
    assert data["chart"] == chart.name and (tmp_path / chart.name).is_file()
    assert [f["kind"] for f in data["followups"]] == ["revert", "fix"]


def test_a_week_whose_shallow_clone_starts_inside_a_day_says_so(repo, tmp_path):
    # Six commits deep: the clone's history starts at #12, Monday 11:00, after Monday's #11.
    shallow = tmp_path / "shallow"
    repo.git("clone", "--quiet", "--depth=6", f"file://{repo.path}", str(shallow))
    args = ["--db", str(tmp_path / "d.db"), "weekly", "--git-dir", str(shallow), "--week", "2026-W05",
            "--tz", "Asia/Shanghai", "--lang", "en"]  # fmt: skip
    text = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "w.md")], catch_exceptions=False)
    assert text.exit_code == 0, text.output
    assert "This report may be incomplete" in (tmp_path / "w.md").read_text(encoding="utf-8")
    data = CliRunner().invoke(cli, [*args, "--format", "json", "--out", str(tmp_path / "w.json")])
    assert data.exit_code == 0, data.output
    week = json.loads((tmp_path / "w.json").read_text(encoding="utf-8"))
    assert week["history_start"] == "2026-01-26T11:00:00+08:00"
    full = json.loads(
        CliRunner().invoke(cli, [*args[:4], str(repo.path), *args[5:], "--format", "json"]).stdout
    )
    assert full["history_start"] is None


def test_a_week_after_the_clones_newest_commit_says_the_clone_may_be_stale(tmp_path, monkeypatch):
    # Each empty day's digest said its clone might not be kept up to date; the roll-up said nothing, so a
    # week the clone never saw read as a quiet week.
    isolate_git_env(monkeypatch, tmp_path / "home")
    stale = GitRepo.init(tmp_path / "stale", remote="https://github.com/acme/widgets.git")
    stale.commit("[Feature] Widgets (#11)", {"src/a.py": "a = 1\n"}, when="2026-01-26T10:00:00+08:00")
    args = ["--db", str(tmp_path / "d.db"), "weekly", "--git-dir", str(stale.path), "--week", "2026-W05",
            "--tz", "Asia/Shanghai"]  # fmt: skip
    result = CliRunner().invoke(cli, [*args, "--lang", "en", "--out", str(tmp_path / "w.md")])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "w.md").read_text(encoding="utf-8")
    assert "newest commit on this branch is from 2026-01-26 10:00 (UTC+08:00), before 2026-01-27" in text
    assert "digestbot weekly --week 2026-W05 --refresh" in text
    data = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert json.loads(data.stdout)["clone_newest"] == "2026-01-26T10:00:00+08:00"
    zh = CliRunner().invoke(cli, [*args, "--lang", "zh", "--out", str(tmp_path / "w.zh.md")])
    assert zh.exit_code == 0 and "早于 2026-01-27" in (tmp_path / "w.zh.md").read_text(encoding="utf-8")
    stale.commit("[Core] Late (#12)", {"src/b.py": "b = 1\n"}, when="2026-02-01T10:00:00+08:00")
    fresh = CliRunner().invoke(cli, [*args, "--refresh", "--format", "json"])
    assert json.loads(fresh.stdout)["clone_newest"] is None  # the clone reaches the week's end: nothing said


def test_bad_week_is_one_line_and_exit_2(tmp_path):
    result = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "d.db"), "weekly", "--git-dir", ".", "--week", "2025-W54"]
    )
    assert result.exit_code == 2 and "2025 has no ISO week 54" in result.output
    with pytest.raises(InputError, match="ISO form"):
        parse_week("45")
    assert parse_week("2020-W53") == (2020, 53)


@pytest.mark.parametrize("week", ["0001-W01", "0001-W02", "1969-W52", "9999-W52"])
def test_weeks_outside_the_commits_calendar_are_refused(week):
    with pytest.raises(
        InputError, match=f"week {week} is out of range: use a week from 1970-W01 to 9999-W51"
    ):
        parse_week(week)


def test_the_week_of_1970_01_01_is_the_first():
    assert parse_week("1970-W01") == (1970, 1)  # Monday 1969-12-29: the week holds 1970's first days
    assert parse_week("9999-W51") == (9999, 51)


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk, after checking the signature and the chunk type."""
    assert data[:8] == PNG_MAGIC and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


# --- posting, the subscription option and its schedule -------------------------------------------------


async def test_posted_once_to_slack_and_discord_with_the_chart(repo, store, tmp_path):
    from adapters.discord.poster import open_discord_poster
    from adapters.slack.client import make_client
    from adapters.slack.poster import SlackPoster
    from bot.app import render_chart
    from bot.config.settings import Settings
    from bot.delivery.weekly_post import post_weekly
    from tests.fakes.discord_api import FakeDiscord
    from tests.fakes.slack_api import FakeSlack

    week = await week_of(repo, store)
    name = "weekly-acme-widgets-2026-W05.en.png"
    with FakeSlack() as slack:
        settings = Settings(_env_file=None, slack_bot_token=slack.token, slack_api_url=slack.api_url)
        first = await post_weekly(
            SlackPoster(make_client(settings)), store, "C0WEEK", week, chart=render_chart
        )
        again = await post_weekly(
            SlackPoster(make_client(settings)), store, "C0WEEK", week, chart=render_chart
        )
        store.db.execute("DELETE FROM posts")  # a crash before anything was recorded: Slack is asked
        after_crash = await post_weekly(
            SlackPoster(make_client(settings)), store, "C0WEEK", week, chart=render_chart
        )
        slack.check()
        [parent] = slack.channel_messages("C0WEEK")
        [upload] = slack.uploads.values()
    assert (
        first.posted == ["parent", "chart"]
        and again.posted == []
        and after_crash.posted == ["parent", "chart"]
    )
    assert "1 reverted this week; we had ranked 1 of them medium or high" in parent.text + str(parent.blocks)
    assert (
        upload.filename == name and upload.thread_ts == parent.ts and png_size(upload.content) == (1200, 600)
    )

    with FakeDiscord() as discord_fake:
        settings = Settings(
            _env_file=None, discord_bot_token=discord_fake.token, discord_api_url=discord_fake.base_url
        )
        channel = str(next(iter(discord_fake.channels)))
        async with open_discord_poster(settings) as poster:
            await post_weekly(poster, store, channel, week, chart=render_chart)
            await post_weekly(poster, store, channel, week, chart=render_chart)
        store.db.execute("DELETE FROM posts")  # a crash before anything was recorded: Discord is read
        async with open_discord_poster(settings) as poster:
            assert (await post_weekly(poster, store, channel, week, chart=render_chart)).posted == [
                "parent",
                "chart",
            ]
        discord_fake.check()
        summary, chart = discord_fake.messages_in(channel)
    assert summary["embeds"][0]["title"].startswith("Weekly roll-up · acme/widgets · 2026-W05")
    assert chart["embeds"][0]["image"]["url"] == f"attachment://{name}"
    [(filename, data)] = discord_fake.attachments(channel)
    assert filename == name and png_size(data) == (1200, 600)
    assert discord_fake.rejected == []


def test_weekly_option_in_the_config_file(tmp_path):
    from analysis.errors import ConfigError
    from bot.config.file import load_config

    path = tmp_path / "digest.toml"
    path.write_text(
        '[defaults]\ntimezone = "Asia/Shanghai"\n\n[[subscription]]\nrepo = "acme/widgets"\n'
        'slack_channels = ["C1"]\nweekly = "Mon  09:30"\n\n[[subscription]]\nrepo = "acme/other"\n'
        'slack_channels = ["C2"]\n',
        encoding="utf-8",
    )
    first, second = load_config(path, default_tz="UTC", default_lang="en")
    assert first.weekly == "mon 09:30" and second.weekly is None
    path.write_text(
        '[[subscription]]\nrepo = "a/b"\nslack_channels = ["C1"]\nweekly = "monday"\n', encoding="utf-8"
    )
    with pytest.raises(ConfigError, match=r"subscription\[0\]\.weekly: weekly must be a weekday and HH:MM"):
        load_config(path, default_tz="UTC", default_lang="en")


async def test_weekly_fires_in_the_zone_and_runs_each_week_once(store):
    import asyncio
    from datetime import UTC, datetime

    from bot.config.schedule import week_for_fire, weekly_trigger
    from bot.config.subscriptions import Destination, Registry, Subscription
    from bot.service.scheduler import DigestScheduler, RunOutcome

    sub = Subscription("w", "acme/widgets", "Asia/Shanghai", "09:00", "en", (Destination("slack", "C1"),),
                       weekly="mon 09:30")  # fmt: skip
    after = datetime(2026, 1, 28, tzinfo=UTC)
    assert weekly_trigger(sub).get_next_fire_time(None, after) == datetime(2026, 2, 2, 9, 30, tzinfo=TZ)
    assert week_for_fire(sub, datetime(2026, 2, 2, 1, 30, tzinfo=UTC)) == (2026, 5)

    calls: list[tuple[int, int]] = []

    async def weekly(s, year, week):
        calls.append((year, week))
        await asyncio.sleep(0.01)
        return RunOutcome("done", commits=6)

    async def daily(s, day):
        return RunOutcome("done")

    sched = DigestScheduler(Registry(store, [sub]), store, daily, weekly_runner=weekly)
    results = await asyncio.gather(*(sched.run_weekly_once(sub, 2026, 5) for _ in range(3)))
    restarted = DigestScheduler(Registry(store, [sub]), store, daily, weekly_runner=weekly)
    assert await restarted.run_weekly_once(sub, 2026, 5) is None
    assert calls == [(2026, 5)] and sum(r is not None for r in results) == 1
    assert store.query("SELECT subscription, day, status FROM runs") == [
        {"subscription": "w:weekly", "day": "2026-W05", "status": "done"}
    ]


async def test_a_weekly_roll_up_missed_while_down_is_caught_up_once(store):
    from datetime import UTC, datetime

    from bot.config.subscriptions import Destination, Registry, Subscription
    from bot.service.scheduler import DigestScheduler, RunOutcome

    sub = Subscription("w", "acme/widgets", "Asia/Shanghai", "09:00", "en", (Destination("slack", "C1"),),
                       weekly="mon 09:30")  # fmt: skip
    calls: list[tuple[int, int]] = []

    async def weekly(s, year, week):
        calls.append((year, week))
        return RunOutcome("done")

    async def daily(s, day):
        return RunOutcome("done")

    now = datetime(2026, 2, 4, 3, 0, tzinfo=UTC)  # Wednesday: Monday 09:30's fire was missed
    sched = DigestScheduler(Registry(store, [sub]), store, daily, clock=lambda: now, weekly_runner=weekly)
    sched._mark_seen("w", datetime(2026, 1, 30, tzinfo=UTC))
    await sched.catch_up()
    await sched.catch_up()
    assert calls == [(2026, 5)]

    monday_early = datetime(2026, 2, 9, 1, 0, tzinfo=UTC)  # 09:00 in Shanghai: W06 not due until 09:30
    sched.clock = lambda: monday_early
    assert sched.missed_weeks(sub) == []
    late_seen = DigestScheduler(Registry(store, [sub]), store, daily, clock=lambda: now, weekly_runner=weekly)
    store.db.execute("DELETE FROM runs")
    store.db.execute(
        "UPDATE subscription_seen SET first_seen = ?", [datetime(2026, 2, 3, tzinfo=UTC).isoformat()]
    )
    assert late_seen.missed_weeks(sub) == []  # not due after the service first saw the subscription


def test_analyze_of_an_old_commit_finds_its_revert_in_a_fresh_database(repo, tmp_path):
    args = ["--db", str(tmp_path / "fresh.db"), "analyze", "#10", "--git-dir", str(repo.path), "--lang", "en"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert 'Reverted on 2026-01-27 by #13 “Revert "\\[Core\\] Fast path (#10)" (#13)”' in result.stdout
    args[4] = "#12"
    assert "Reverted" not in CliRunner().invoke(cli, args, catch_exceptions=False).stdout


async def test_the_service_runner_posts_a_subscriptions_week(repo, store, tmp_path):
    from adapters.slack.client import make_client
    from adapters.slack.poster import SlackPoster
    from bot.app import digest_runner
    from bot.config.settings import Settings
    from bot.config.subscriptions import Destination, Subscription
    from tests.fakes.slack_api import FakeSlack

    sub = Subscription("w", "acme/widgets", "Asia/Shanghai", "09:00", "zh",
                       (Destination("slack", "C0WEEK"), Destination("discord", "1")), weekly="mon 09:00")  # fmt: skip
    with FakeSlack() as slack:
        settings = Settings(_env_file=None, slack_bot_token=slack.token, slack_api_url=slack.api_url)
        runner = digest_runner(settings, store, {"slack": SlackPoster(make_client(settings))},
                              analyzer=FixedAnalyzer(), source_factory=lambda s: LocalGitSource(repo.path))  # fmt: skip
        outcome = await runner.weekly(sub, 2026, 5)
        slack.check()
        [parent] = slack.channel_messages("C0WEEK")
        [upload] = slack.uploads.values()
    assert outcome.status == "partial" and "discord:1: no discord adapter running" in outcome.error
    assert outcome.commits == 6 and outcome.stats["high"] == 1
    assert "每周回顾 · acme/widgets · 2026-W05" in parent.text + str(parent.blocks)
    assert upload.filename == "weekly-acme-widgets-2026-W05.zh.png" and upload.thread_ts == parent.ts


async def test_a_second_roll_up_reuses_the_analyses_unless_refreshed(repo, store):
    class Counting(FixedAnalyzer):
        analysed = 0

        async def analyze(self, commits, lang, progress=None, **kwargs):
            Counting.analysed += len(commits)
            return await super().analyze(commits, lang, progress, **kwargs)

    source = LocalGitSource(repo.path)
    for refresh, expected in ((False, 7), (False, 7), (True, 13)):  # 6 of the week + #10 ranked late
        await build_week(source, store, Counting(), branch="main", year=2026, week=5, tz=TZ, lang="en",
                         refresh=refresh)  # fmt: skip
        assert Counting.analysed == expected
    await source.aclose()


async def test_a_week_reads_its_history_in_one_pass(repo, store):
    """Every day's ranking window and the follow-ups after the week are read in one history read (a
    read per gap cost a first weekly run a second `git log` over months)."""
    reads: list[tuple[object, object]] = []

    class Counting(LocalGitSource):
        async def history(self, branch, since, until, progress=None):
            reads.append((since, until))
            return await super().history(branch, since, until, progress)

    source = Counting(repo.path)
    try:
        week = await build_week(
            source, store, FixedAnalyzer(), branch="main", year=2026, week=5, tz=TZ, lang="en"
        )
    finally:
        await source.aclose()
    assert len(reads) == 1 and week.totals["total"] == 6


async def test_a_first_run_reads_the_weeks_files_in_one_pass_and_each_commit_once(
    repo, store, tmp_path, monkeypatch
):
    """The week's surface facts are filled together before its days' digests (in worker processes when
    there are enough), each day batched as its digest batches it: the digests then parse nothing again,
    and the facts are those the days' digests find on their own."""
    import bot.digest.surface as surface
    import bot.digest.weekly as weekly
    from bot.store.db import Store

    parsed: list[str] = []
    real = surface.parse_batch
    monkeypatch.setattr(
        surface, "parse_batch", lambda batch: parsed.extend(c.sha for c in batch.commits) or real(batch)
    )
    fills: list[int] = []  # the groups (days) each fill of the weekly step was given
    real_fill = weekly.fill_surfaces
    monkeypatch.setattr(
        weekly,
        "fill_surfaces",
        lambda src, st, groups, *a: fills.append(len(groups)) or real_fill(src, st, groups, *a),
    )
    week = await week_of(repo, store)
    assert fills == [5]  # the five days with commits in one fill (the stored history shows two empty)
    # the week's six commits and the earlier original its revert names (ranked for the roll-up), each once
    assert len(parsed) == len(set(parsed)) == 7
    again = await week_of(repo, store)
    assert len(parsed) == 7 and again.days == week.days  # a second run reads them from the store
    assert fills == [5, 0]  # and lists no day for its facts again

    async def day_by_day(*_args) -> None:
        return None

    monkeypatch.setattr(weekly, "_fill_week", day_by_day)  # as before: each day's digest parses its own
    alone = Store(tmp_path / "alone.db")
    try:
        await week_of(repo, alone)
        version = surface.PARSER_VERSION
        assert alone.surfaces("acme/widgets", parsed, version) == store.surfaces(
            "acme/widgets", parsed, version
        )
    finally:
        alone.close()
