"""The history's files counted from the patches a read commit carries (adapters/local_git/history_reads.py)
against `git log --numstat --no-renames`, the read they stand for: the same files and line counts for every
kind of file change, git asked again only where the patches cannot say."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from adapters.local_git import LocalGitSource
from adapters.local_git.history_reads import no_rename_files
from analysis.models import FileChange
from tests.fakes.gitrepo import GitRepo, isolate_git_env

SPAN = ("main", datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 2, 1, tzinfo=UTC))


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git_env(monkeypatch, tmp_path / "home")


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """Each kind of file change, a path git quotes, a merge and an empty commit."""
    repo = GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")
    text = "".join(f"line {n}\n" for n in range(40))
    repo.commit(
        "root", files={"a.py": text, "keep.txt": "k\n", "old.py": text}, when="2026-01-26T09:00:00+08:00"
    )
    repo.commit(
        "plain",
        files={"a.py": text.replace("line 7\n", "seven\n"), "b.py": "b\n"},
        when="2026-01-26T09:30:00+08:00",
    )
    repo.commit(
        "kinds",
        files={
            "img.bin": b"\x00\x01\x02binary\x00",
            "empty.txt": "",
            "new.py": text.replace("line 3", "three"),
        },
        rename={"old.py": "moved/old.py"},
        delete=["keep.txt"],
        when="2026-01-26T10:00:00+08:00",
    )
    os.chmod(repo.path / "a.py", 0o755)
    repo.commit("mode only", when="2026-01-26T10:30:00+08:00")
    (repo.path / "empty.txt").unlink()
    os.symlink("a.py", repo.path / "empty.txt")
    (repo.path / "vendor" / "sub").mkdir(parents=True)  # as a submodule not checked out looks
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{repo.head()},vendor/sub")
    repo.commit("type change and submodule", when="2026-01-26T10:35:00+08:00")
    repo.commit(
        "quoted", files={'say "hi"\t.txt': "hi\n", "ünï.txt": "u\n"}, when="2026-01-26T10:38:00+08:00"
    )
    repo.commit("nothing changed", when="2026-01-26T10:40:00+08:00")
    repo.branch("side")
    repo.checkout("side")
    repo.commit("side", files={"s.txt": "side\nside\n"}, when="2026-01-26T11:00:00+08:00")
    repo.checkout("main")
    repo.commit("main moves on", files={"m.txt": "main\n"}, when="2026-01-26T11:30:00+08:00")
    repo.merge("side", when="2026-01-26T12:00:00+08:00")
    return repo


async def test_files_counted_from_the_patches_are_the_numstat_history(repo: GitRepo, monkeypatch) -> None:
    source = LocalGitSource(repo.path)
    history = await source.history(*SPAN)
    commits = await source.read_commits([c.sha for c in history])
    real = source.history_counts
    asked: list[str] = []

    async def counts(shas):
        asked.extend(shas)
        return await real(shas)

    monkeypatch.setattr(source, "history_counts", counts)

    assert await source.past_files(commits) == {c.sha: c.files for c in history}
    titles = {c.sha: c.title for c in history}
    assert sorted(titles[sha] for sha in asked) == ["kinds", "quoted", "type change and submodule"]
    await source.aclose()


async def test_the_history_read_without_counts_lists_the_same_commits_and_paths(repo: GitRepo) -> None:
    source = LocalGitSource(repo.path)
    counted = await source.history(*SPAN)
    paths_only = await source.history(*SPAN, counted=False)

    assert [(c.sha, c.message, c.committed_at) for c in paths_only] == [
        (c.sha, c.message, c.committed_at) for c in counted
    ]
    assert [c.files for c in paths_only] == [tuple((p, 0) for p, _ in c.files) for c in counted]
    assert any(n for c in counted for _, n in c.files)
    assert await source.history_counts([c.sha for c in counted]) == {c.sha: c.files for c in counted}


def test_a_file_counted_without_a_patch_is_asked_again() -> None:
    """A big text file counted again (big_files.recount) has counts but no patch: `--numstat` says "-"."""
    plain = FileChange("a.py", "modified", 2, 1, patch="@@ -1 +1,2 @@\n-a\n+b\n+c")
    assert no_rename_files([plain, FileChange("img.png", "added", 0, 0)]) == (("a.py", 3), ("img.png", 0))
    assert no_rename_files([plain, FileChange("big.sql", "modified", 9, 0)]) is None
    assert no_rename_files([FileChange("new.py", "renamed", 1, 1, "@@", previous_path="old.py")]) is None


async def test_a_users_diff_algorithm_changes_no_count(tmp_path: Path) -> None:
    """The history's counts are read with the diff options the patches are read with: a user's
    `diff.algorithm = histogram` counts this change 7+/9- where the pinned myers counts 2+/4-."""
    repo = GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")
    before = ["b", "b", "}", "b", "a", "b", "}", "}", "b", "d", "}", "c"]
    after = ["d", "b", "}", "b", "b", "}", "}", "b", "c", "c"]
    repo.commit("one", files={"f.txt": "\n".join(before) + "\n"}, when="2026-01-26T09:00:00+08:00")
    repo.commit("two", files={"f.txt": "\n".join(after) + "\n"}, when="2026-01-26T09:30:00+08:00")
    pinned = await LocalGitSource(repo.path).history(*SPAN)
    repo.git("config", "diff.algorithm", "histogram")
    source = LocalGitSource(repo.path)
    history = await source.history(*SPAN)
    commits = await source.read_commits([c.sha for c in history])

    assert [c.files for c in history] == [c.files for c in pinned]
    assert history[-1].files == (("f.txt", 6),)
    assert await source.past_files(commits) == {c.sha: c.files for c in history}
    await source.aclose()
