"""A local clone is read as it is: a local branch a fetch left behind its remote-tracking branch is not
what is read, and a day after the clone's newest commit says the clone may not be kept up to date."""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from adapters.local_git import LocalGitSource
from analysis.window import day_window
from tests.fakes.gitrepo import GitRepo, isolate_git_env

SHANGHAI = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 1, 26)


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git_env(monkeypatch, tmp_path / "home")


@pytest.fixture
def upstream(tmp_path: Path) -> GitRepo:
    repo = GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")
    repo.commit("base", files={"a": "0"}, when="2026-01-25T10:00:00+08:00")
    return repo


async def test_a_local_branch_behind_its_remote_tracking_one_is_not_read(
    upstream: GitRepo, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clone = GitRepo(upstream.clone(tmp_path / "checkout"))
    one = upstream.commit("one", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")
    two = upstream.commit("two", files={"a": "2"}, when="2026-01-26T11:00:00+08:00")
    clone.git("fetch", "--quiet", "origin")  # moves origin/main only: main stays at "base"
    source = LocalGitSource(clone.path)

    with caplog.at_level(logging.WARNING, logger="adapters.local_git"):
        commits = await source.commits_in_window("main", *day_window(DAY, SHANGHAI))
        assert await source.branch_tip("main") == two  # remembered: said once
        assert await source.on_branch(one, "main")

    assert [c.sha for c in commits] == [two, one]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1
    assert "local branch 'main' is 2 commit(s) behind 'origin/main'" in warned[0]
    assert warned[0].endswith("reading origin/main")


async def test_a_local_branch_level_with_or_ahead_of_its_remote_tracking_one_is_read_quietly(
    upstream: GitRepo, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clone = GitRepo(upstream.clone(tmp_path / "checkout"))
    level = LocalGitSource(clone.path)
    assert await level.branch_tip("main") == upstream.head()
    mine = clone.commit("local work", files={"b": "1"}, when="2026-01-26T10:00:00+08:00")

    with caplog.at_level(logging.WARNING, logger="adapters.local_git"):
        assert await LocalGitSource(clone.path).branch_tip("main") == mine

    assert caplog.records == []


async def test_a_local_branch_diverged_from_its_remote_tracking_one_is_kept_with_a_warning(
    upstream: GitRepo, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clone = GitRepo(upstream.clone(tmp_path / "checkout"))
    mine = clone.commit("local work", files={"b": "1"}, when="2026-01-26T10:00:00+08:00")
    upstream.commit("theirs", files={"a": "1"}, when="2026-01-26T11:00:00+08:00")
    clone.git("fetch", "--quiet", "origin")

    with caplog.at_level(logging.WARNING, logger="adapters.local_git"):
        commits = await LocalGitSource(clone.path).commits_in_window("main", *day_window(DAY, SHANGHAI))

    assert [c.sha for c in commits] == [mine]
    assert "local branch 'main' and 'origin/main' have diverged (1 and 1 commit(s)" in caplog.text
    assert "reading the local branch" in caplog.text


async def test_a_day_after_the_clones_newest_commit_warns_that_it_may_be_stale(
    upstream: GitRepo, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bare = upstream.clone(tmp_path / "widgets.git", bare=True)
    upstream.commit("never fetched", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")
    source = LocalGitSource(bare)
    start, end = day_window(DAY, SHANGHAI)

    newest = datetime(2026, 1, 25, 2, 0, tzinfo=UTC)
    with caplog.at_level(logging.WARNING, logger="adapters.local_git"):
        assert await source.commits_in_window("main", start, end) == []
        assert await source.newest_before("main", start) == newest
    assert (
        f"the clone's newest commit on main is from 2026-01-25 02:00 UTC, before the day starting "
        f"2026-01-26 00:00 CST: is {source.git_dir} kept up to date (git fetch / a mirror)?"
    ) in caplog.text


async def test_an_empty_day_before_the_clones_newest_commit_is_a_quiet_day(
    upstream: GitRepo, caplog: pytest.LogCaptureFixture
) -> None:
    upstream.commit("later", files={"a": "1"}, when="2026-01-28T10:00:00+08:00")
    source = LocalGitSource(upstream.path)
    start, end = day_window(DAY, SHANGHAI)

    with caplog.at_level(logging.WARNING, logger="adapters.local_git"):
        assert await source.commits_in_window("main", start, end) == []
        assert await source.newest_before("main", start) is None
    assert caplog.records == []
