"""The pipeline: the day window, the cache, subscription filters stated rather than hidden, reverts,
and a digest rebuilt from the store."""

import json
from datetime import date, datetime
from zoneinfo import ZoneInfo

from analysis.models import key_of
from analysis.render.markdown import render_report
from bot.config.subscriptions import Filters
from bot.digest.analyzers import HeuristicAnalyzer
from bot.digest.pipeline import RunStats, build_digest, load_digest
from bot.store.db import Store
from tests.analysis.reportcheck import check_report
from tests.fakes.digests import make_commit
from tests.fakes.sources import MemorySource

SH = ZoneInfo("Asia/Shanghai")


def at(hour: int, minute: int = 0, day: int = 26) -> datetime:
    return datetime(2026, 1, day, hour, minute, tzinfo=SH)


def commits():
    return [
        make_commit("[Feature] Export (#3)", committed_at=at(23, 59), author="Ada"),
        make_commit("[CI] Bump actions (#2)", committed_at=at(12), author="dependabot[bot]"),
        make_commit("[Bugfix] Fix crash (#1)", committed_at=at(0, 0)),
        make_commit("Yesterday", committed_at=at(23, 59, day=25)),
        make_commit("Tomorrow", committed_at=at(0, 0, day=27)),
    ]


async def day(store, source, **kw):
    return await build_digest(
        source, store, HeuristicAnalyzer(), branch="main", day=date(2026, 1, 26), tz=SH, lang="en", **kw
    )


async def test_window_cache_and_reload(tmp_path):
    store = Store(tmp_path / "d.db")
    source = MemorySource("acme/widgets", commits())
    first = await day(store, source)
    assert [c.title for c in first.commits] == [
        "[Feature] Export (#3)",
        "[CI] Bump actions (#2)",
        "[Bugfix] Fix crash (#1)",
    ]
    stats = RunStats()
    again = await day(store, source, stats=stats)
    assert stats.cached_analyses == 3 and stats.new_analyses == 0
    assert again.analyses == first.analyses
    reloaded = load_digest(store, key_of(first))
    assert [c.sha for c in reloaded.commits] == [c.sha for c in first.commits]
    assert reloaded.analyses == first.analyses


async def test_filtered_commits_are_counted_and_stated(tmp_path):
    store = Store(tmp_path / "d.db")
    keep = Filters(ignore_authors=("*[bot]",)).keep
    digest = await day(store, MemorySource("acme/widgets", commits()), keep=keep)
    assert [c.title for c in digest.commits] == ["[Feature] Export (#3)", "[Bugfix] Fix crash (#1)"]
    assert digest.filtered_out == 1
    report = render_report([digest], "en")
    assert "1 more commit(s) of the day left out by this subscription's filters" in report
    assert check_report(report, [digest], "en") == []
    assert load_digest(store, key_of(digest)).filtered_out == 1


async def test_a_commit_reverted_the_same_day_says_so(tmp_path):
    original = make_commit("[Feature] Fast path (#5)", committed_at=at(9))
    revert = make_commit(
        'Revert "[Feature] Fast path (#5)" (#6)',
        committed_at=at(18),
        body=f"This reverts commit {original.sha}.",
    )
    digest = await day(Store(tmp_path / "d.db"), MemorySource("acme/widgets", [revert, original]))
    assert digest.analyses[original.sha].notes[0].startswith(f"Reverted the same day by {revert.short_sha}")
    assert check_report(render_report([digest], "en"), [digest], "en") == []


class CutSource(MemorySource):
    """A source whose history of the branch starts at `begins` (a shallow clone's cut)."""

    def __init__(self, repo, commits, begins):
        super().__init__(repo, commits)
        self.begins = begins

    async def history_start(self, branch, start, end):
        return self.begins if start <= self.begins < end else None


async def test_a_history_starting_inside_the_day_is_kept_and_stated(tmp_path):
    store = Store(tmp_path / "d.db")
    begins = datetime(2026, 1, 26, 4, 0, tzinfo=ZoneInfo("UTC"))  # noon in Shanghai
    digest = await day(store, CutSource("acme/widgets", commits(), begins))
    assert digest.history_start == begins and digest.history_start.utcoffset().total_seconds() == 8 * 3600
    assert "starts at 2026-01-26 12:00 (UTC+08:00), inside the day" in render_report([digest], "en")
    assert load_digest(store, key_of(digest)).history_start == begins
    whole = await day(Store(tmp_path / "whole.db"), CutSource("acme/widgets", commits(), at(0, day=20)))
    assert whole.history_start is None


async def test_a_digest_stored_before_history_start_was_kept_loads_without_one(tmp_path):
    store = Store(tmp_path / "d.db")
    digest = await day(store, MemorySource("acme/widgets", commits()))
    row = store.get_digest(key_of(digest))
    old = {k: v for k, v in json.loads(row["stats"]).items() if k != "history_start"}
    store.db["digests"].update(row["id"], {"stats": json.dumps(old)})
    reloaded = load_digest(store, key_of(digest))
    assert reloaded.history_start is None and [c.sha for c in reloaded.commits] == [
        c.sha for c in digest.commits
    ]
    assert check_report(render_report([reloaded], "en"), [reloaded], "en") == []


class StaleSource(MemorySource):
    """A local clone's source whose newest commit on the branch is `newest`."""

    def __init__(self, repo, commits, newest):
        super().__init__(repo, commits)
        self.newest = newest

    async def newest_before(self, branch, start):
        return self.newest if self.newest < start else None


async def test_an_empty_day_after_the_clones_newest_commit_is_stated(tmp_path):
    store = Store(tmp_path / "d.db")
    newest = datetime(2026, 1, 24, 2, 0, tzinfo=ZoneInfo("UTC"))  # 10:00 in Shanghai
    digest = await day(store, StaleSource("acme/widgets", [], newest))
    assert digest.commits == [] and digest.clone_newest == newest
    assert digest.clone_newest.utcoffset().total_seconds() == 8 * 3600
    report = render_report([digest], "en")
    assert "newest commit on this branch is from 2026-01-24 10:00 (UTC+08:00), before this day" in report
    assert check_report(report, [digest], "en") == []
    assert load_digest(store, key_of(digest)).clone_newest == newest


async def test_a_day_with_commits_or_an_older_empty_day_states_no_stale_clone(tmp_path):
    newest = datetime(2026, 1, 24, 2, 0, tzinfo=ZoneInfo("UTC"))
    busy = await day(Store(tmp_path / "busy.db"), StaleSource("acme/widgets", commits(), newest))
    assert busy.clone_newest is None  # only an empty day asks
    quiet = await day(Store(tmp_path / "quiet.db"), StaleSource("acme/widgets", [], at(9, day=28)))
    assert quiet.clone_newest is None and "newest commit" not in render_report([quiet], "en")
