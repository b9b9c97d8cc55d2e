"""The surface step's docs read (bot/digest/documented.py): a code name removed without an alias is marked with
whether the repository's docs mentioned it before the commit; the rubric then tells a name users call (still
"breaks users") from one only the package's own code calls. Local clones and GitHub alike; what cannot be read
whole leaves the names unmarked."""

from __future__ import annotations

import time
from datetime import date
from zoneinfo import ZoneInfo

import pytest

from adapters.local_git import LocalGitSource
from analysis.errors import SourceError
from analysis.heuristic import rank
from analysis.models import SurfaceKind
from analysis.surface.doc_mentions import MIN_DOC_CHARS
from analysis.window import day_window
from bot.digest.surface import fill_surface
from bot.store.db import Store
from tests.fakes.gitrepo import GitRepo, isolate_git_env

PYPROJECT = '[build-system]\nbuild-backend = "hatchling.build"\n[project]\nname = "kit"\n'
ENGINE = "def load_model(path):\n    return path\n\n\ndef pad_batch(batch):\n    return batch\n"
# A reference manual: long enough to be one, naming the API users call, never the helper.
GUIDE = "# Loading\n\nCall `kit.engine.core.load_model(path)` to load a model.\n\n" + (
    "The engine reads weights lazily and keeps them on the device.\n" * (MIN_DOC_CHARS // 60 + 10)
)


def _repo(tmp_path, monkeypatch, guide: str = GUIDE) -> GitRepo:
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "kit", remote="https://github.com/acme/kit.git")
    r.commit(
        "Initial import",
        {
            "pyproject.toml": PYPROJECT,
            "kit/__init__.py": "",
            "kit/engine/__init__.py": "",
            "kit/engine/core.py": ENGINE,
            "docs/guide.md": guide,
            "CHANGELOG.md": "- Added `pad_batch` (#1)\n",  # release notes name it: not docs
        },
        when="2026-01-25T09:00:00+08:00",
    )
    r.commit(
        "[Engine] Drop load_model and pad_batch (#40)",
        {"kit/engine/core.py": "def run(x):\n    return x\n"},
        when="2026-01-26T10:00:00+08:00",
    )
    return r


async def _filled(source, store):
    commits = await source.commits_in_window(
        "main", *day_window(date(2026, 1, 26), ZoneInfo("Asia/Shanghai"))
    )
    [commit] = await fill_surface(source, store, commits)
    return commit


def _marks(commit) -> dict[str, bool | None]:
    return {c.name: c.documented for c in commit.surface if c.kind == SurfaceKind.REMOVED}


async def test_a_removed_name_the_docs_never_mention_breaks_only_the_packages_own_callers(
    tmp_path, monkeypatch
):
    repo = _repo(tmp_path, monkeypatch)
    store = Store(tmp_path / "d.db")
    commit = await _filled(LocalGitSource(repo.path), store)
    assert _marks(commit) == {"kit.engine.core.load_model": True, "kit.engine.core.pad_batch": False}
    importance, reason = rank(commit, "en")
    assert "breaks users: removes `load_model` (no alias)" in reason
    assert "breaks callers of names its docs never mention: removes `pad_batch` (no alias)" in reason
    assert importance.value == "high"  # the documented one still breaks users
    # What each docs file mentions is kept by its blob id: the next run reads no docs text again.
    assert store.query("SELECT count(*) AS n FROM doc_mentions")[0]["n"] == 1


async def test_docs_too_short_to_be_a_reference_mark_nothing(tmp_path, monkeypatch):
    repo = _repo(tmp_path, monkeypatch, guide="# Kit\n\nSee `load_model`.\n")
    commit = await _filled(LocalGitSource(repo.path), Store(tmp_path / "d.db"))
    assert set(_marks(commit).values()) == {None}
    assert (
        "breaks users: removes `load_model` (no alias), removes `pad_batch` (no alias)"
        in rank(commit, "en")[1]
    )


async def test_docs_that_cannot_be_read_leave_the_names_unmarked(tmp_path, monkeypatch):
    repo = _repo(tmp_path, monkeypatch)

    async def failing(self, ids, *, max_bytes):
        raise SourceError("git cat-file failed")

    monkeypatch.setattr(LocalGitSource, "read_blobs", failing)
    commit = await _filled(LocalGitSource(repo.path), Store(tmp_path / "d.db"))
    assert set(_marks(commit).values()) == {None}
    assert commit.surface  # the facts themselves stand


async def test_a_docs_read_beyond_the_request_budget_is_not_made(tmp_path, monkeypatch):
    repo = _repo(tmp_path, monkeypatch)
    source = LocalGitSource(repo.path)
    source.surface_reads_left = 50  # as the GitHub source counts them: the commits' own files come first
    commit = await _filled(source, Store(tmp_path / "d.db"))
    assert set(_marks(commit).values()) == {None}


@pytest.mark.parametrize("fault", [None, "blob 404", "rate limited"])
async def test_the_docs_read_through_the_github_source(tmp_path, fault):
    from adapters.github import GitHubSource
    from tests.fakes.github import FakeGitHub, make_commit, make_file

    base = "f" * 40
    commit = make_commit(
        "[Engine] Drop load_model and pad_batch (#40)",
        "2026-01-26T02:00:00Z",
        parents=[base],
        files=[make_file("kit/engine/core.py", additions=2, deletions=5)],
        repo="acme/kit",
    )
    store = Store(tmp_path / "d.db")
    with FakeGitHub("acme/kit", [commit]) as gh:
        for sha, text in ((base, ENGINE), (commit["sha"], "def run(x):\n    return x\n")):
            gh.set_file(sha, "kit/engine/core.py", text)
            gh.set_file(sha, "kit/__init__.py", "")
            gh.set_file(sha, "kit/engine/__init__.py", "")
            gh.set_file(sha, "pyproject.toml", PYPROJECT)
        gh.set_file(base, "docs/guide.md", GUIDE)
        if fault == "blob 404":  # the blob read fails: the docs are known only in part
            gh.fail_next(404, path_contains="git/blobs", count=10)
        elif fault == "rate limited":  # and no more reads this run
            gh.rate_limit(status=403, reset_at=time.time() + 3600, path_contains="git/blobs", count=10)
        async with GitHubSource("acme/kit", store=store, base_url=gh.base_url, token="t") as source:
            [read] = await fill_surface(source, store, [await source.get_commit(commit["sha"])])
            left = source.surface_reads_left
    marks = _marks(read)
    assert read.surface  # the facts themselves stand
    if fault:
        assert set(marks.values()) == {None}
        assert (left < 0) is (fault == "rate limited")
    else:
        assert marks == {"kit.engine.core.load_model": True, "kit.engine.core.pad_batch": False}


async def test_a_long_runs_words_in_memory_are_bounded_and_the_docs_still_read_whole(tmp_path, monkeypatch):
    import bot.digest.documented as documented

    monkeypatch.setattr(documented, "KEPT_BLOBS", 0)  # every file not of the revision at hand is let go
    repo = _repo(tmp_path, monkeypatch)
    commit = await _filled(LocalGitSource(repo.path), Store(tmp_path / "d.db"))
    assert _marks(commit) == {"kit.engine.core.load_model": True, "kit.engine.core.pad_batch": False}
