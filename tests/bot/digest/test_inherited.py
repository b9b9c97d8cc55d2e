"""The surface step's second read (bot/digest/inherited.py): a method dropped from a class whose base, in
another module of the repository, still defines it is no removal; one the base lacks still is."""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

import pytest

from adapters.local_git import LocalGitSource
from analysis.errors import SourceError
from analysis.models import SurfaceKind
from analysis.window import day_window
from bot.digest.surface import fill_surface
from bot.store.db import Store
from tests.fakes.gitrepo import GitRepo, isolate_git_env

PYPROJECT = '[build-system]\nbuild-backend = "hatchling.build"\n[project]\nname = "kit"\n'
BASE = "class LayerBase:\n    def load_weights(self, weights):\n        return weights\n"
HUB = "from .base import LayerBase as LayerBase\n"  # a package __init__ re-exporting the base
LINEAR = (
    "from kit.layers import LayerBase\n\n\nclass Linear(LayerBase):\n"
    "    def load_weights(self, weights):\n        return list(weights)\n\n"
    "    def fuse(self):\n        return self\n\n    def run(self, x):\n        return x\n"
)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "kit", remote="https://github.com/acme/kit.git")
    r.commit(
        "Initial import",
        {
            "pyproject.toml": PYPROJECT,
            "kit/__init__.py": "",
            "kit/layers/__init__.py": HUB,
            "kit/layers/base.py": BASE,
            "kit/layers/linear.py": LINEAR,
        },
        when="2026-01-25T09:00:00+08:00",
    )
    # the override goes (the base's method serves the class now), and a method the base does not have
    r.commit(
        "[Refactor] Use the shared weight loader (#31)",
        {"kit/layers/linear.py": LINEAR.replace(LINEAR[LINEAR.index("    def load_weights") :
                                                       LINEAR.index("    def fuse")], "")},
        when="2026-01-26T10:00:00+08:00",
    )  # fmt: skip
    r.commit(
        "[Cleanup] Drop fuse (#32)",
        {"kit/layers/linear.py": LINEAR.replace("    def fuse(self):\n        return self\n\n", "")},
        when="2026-01-26T11:00:00+08:00",
    )
    return r


async def day_commits(source):
    return await source.commits_in_window("main", *day_window(date(2026, 1, 26), ZoneInfo("Asia/Shanghai")))


def removals(commit):
    return [f.name for f in commit.surface if f.kind == SurfaceKind.REMOVED]


async def test_a_method_the_imported_base_still_defines_is_no_removal(repo, tmp_path, monkeypatch):
    source = LocalGitSource(repo.path)
    commits = await day_commits(source)
    reads = []
    original = LocalGitSource.read_files

    async def counting(self, wanted, *, max_bytes):
        reads.append(list(wanted))
        return await original(self, wanted, max_bytes=max_bytes)

    monkeypatch.setattr(LocalGitSource, "read_files", counting)
    filled = {
        c.message.split("\n")[0]: c for c in await fill_surface(source, Store(tmp_path / "d.db"), commits)
    }
    assert removals(filled["[Refactor] Use the shared weight loader (#31)"]) == []
    assert removals(filled["[Cleanup] Drop fuse (#32)"]) == ["kit.layers.linear.Linear.fuse"]
    # the batch's read, then one round per hop: the package __init__, then the module it re-exports from,
    # both at each commit that asked
    extra = [{p for _, p in r} for r in reads[1:]]
    assert extra == [{"kit/layers/__init__.py"}, {"kit/layers/base.py"}]
    assert all(len(r) <= 2 for r in reads[1:])


async def test_a_failed_second_read_leaves_the_removal(repo, tmp_path, monkeypatch):
    source = LocalGitSource(repo.path)
    commits = await day_commits(source)
    original = LocalGitSource.read_files
    calls = []

    async def first_only(self, wanted, *, max_bytes):
        calls.append(wanted)
        if len(calls) > 1:
            raise SourceError("rate limited")
        return await original(self, wanted, max_bytes=max_bytes)

    monkeypatch.setattr(LocalGitSource, "read_files", first_only)
    filled = await fill_surface(source, Store(tmp_path / "d.db"), commits)
    assert sorted(name for c in filled for name in removals(c)) == [
        "kit.layers.linear.Linear.fuse",
        "kit.layers.linear.Linear.load_weights",
    ]


async def test_a_source_with_little_request_budget_left_is_not_asked(repo, tmp_path, monkeypatch):
    # an API's budget serves the commits' own files first: the base modules go unread, the removal stays
    source = LocalGitSource(repo.path)
    commits = await day_commits(source)
    source.surface_reads_left = 50  # as the GitHub source counts them (never decremented here)
    calls = []
    original = LocalGitSource.read_files

    async def counting(self, wanted, *, max_bytes):
        calls.append(wanted)
        return await original(self, wanted, max_bytes=max_bytes)

    monkeypatch.setattr(LocalGitSource, "read_files", counting)
    filled = await fill_surface(source, Store(tmp_path / "d.db"), commits)
    assert len(calls) == 1
    assert "kit.layers.linear.Linear.load_weights" in [name for c in filled for name in removals(c)]
