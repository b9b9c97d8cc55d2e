"""The surface step reads the release notes a commit adds an item to, and places the item under the heading
the file's text gives it (far out of the patch's context); the ranking reads it from there, the facts
listed as the code's changes never show it."""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

import pytest

from adapters.local_git import LocalGitSource
from analysis.heuristic import rank
from analysis.models import Importance, SurfaceKind
from analysis.window import day_window
from bot.digest.surface import fill_surface, with_stored_surface
from bot.store.db import Store
from tests.bot.digest.test_surface_step import PYPROJECT, digest_json
from tests.fakes.gitrepo import GitRepo, isolate_git_env

OLD_ITEMS = "".join(f"- Older removal number {n} (#{n})\n" for n in range(1, 11))
CHANGELOG = (
    f"# Changelog\n\n## [Unreleased]\n\n### Removed\n\n{OLD_ITEMS}\n## [1.0.0] - 2026-01-05\n\n- First.\n"
)
ITEM = "- `engine.core.legacy_step`; use `engine.core.step` (#31)\n"
CORE = "def step(x):\n    return x + 1\n\n\ndef helper(x):\n    return x\n"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "engine", remote="https://github.com/acme/engine.git")
    r.commit(
        "Initial import",
        {
            "pyproject.toml": PYPROJECT,
            "engine/__init__.py": "",
            "engine/core.py": CORE,
            "CHANGELOG.md": CHANGELOG,
        },
        when="2026-01-25T09:00:00+08:00",
    )
    r.commit(
        "Tidy the stepping loop (#31)",
        {
            "engine/core.py": CORE.replace("x + 1", "x + 2"),
            "CHANGELOG.md": CHANGELOG.replace(OLD_ITEMS, OLD_ITEMS + ITEM),
        },
        when="2026-01-26T10:00:00+08:00",
    )
    return r


async def test_the_item_is_placed_by_the_files_text_and_ranked_from_there(repo, tmp_path):
    source = LocalGitSource(repo.path)
    commits = await source.commits_in_window(
        "main", *day_window(date(2026, 1, 26), ZoneInfo("Asia/Shanghai"))
    )
    [commit] = commits
    assert "### Removed" not in next(f.patch for f in commit.files if f.path == "CHANGELOG.md")
    assert rank(commit, "en")[0] != Importance.HIGH  # the patch alone: an item under no visible heading
    store = Store(tmp_path / "d.db")
    [filled] = await fill_surface(source, store, commits)
    assert filled.surface is not None and not any(c.kind == SurfaceKind.RELEASE_ENTRY for c in filled.surface)
    [entry] = filled.release_entries
    assert (entry.name, entry.path, entry.line) == ("breaking", "CHANGELOG.md", 17)
    importance, reason = rank(filled, "en")
    assert importance == Importance.HIGH
    assert "its release-notes entry: `breaking: 'engine.core.legacy_step'" in reason
    [stored] = with_stored_surface(store, commits)  # stored with the other facts, kept apart when read back
    assert stored.release_entries == filled.release_entries and stored.surface == filled.surface


def test_the_digest_ranks_it_high_and_lists_no_entry_as_a_surface_fact(repo, tmp_path):
    [commit] = digest_json(repo, tmp_path / "d.db", "--lang", "en")["commits"]
    assert commit["importance"] == "high"
    assert "release-notes entry" in commit["importance_reason"]
    assert all(f["kind"] != "release_entry" for f in commit["surface"])
