"""The long-running `git diff-tree --stdin` (adapters/local_git/diff_tree.py) against `git log -p`, the call it
replaced: the same patch sections for every kind of file change, in rounds, across a killed process."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from subprocess import DEVNULL, PIPE

import pytest

from adapters.local_git import LocalGitSource, long_running
from adapters.local_git.diff_tree import DiffTree, empty_tree
from adapters.local_git.git_output import parse_tree_patches
from analysis.errors import SourceError
from tests.fakes.gitrepo import GitRepo, isolate_git_env


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git_env(monkeypatch, tmp_path / "home")


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """A history with each kind of file change a patch section can hold, a merge and an empty commit."""
    repo = GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")
    text = "".join(f"line {n}\n" for n in range(40))
    repo.commit(
        "root", files={"a.py": text, "keep.txt": "k\n", "old.py": text}, when="2026-01-26T09:00:00+08:00"
    )
    repo.commit(
        "kinds",
        files={
            "a.py": text.replace("line 7\n", "seven\n") + "no newline at end",
            "img.bin": b"\x00\x01\x02binary\x00",
            "empty.txt": "",
            "new.py": text.replace("line 3", "three"),  # a rename with a change
        },
        rename={"old.py": "moved/old.py"},
        delete=["keep.txt"],
        when="2026-01-26T10:00:00+08:00",
    )
    os.chmod(repo.path / "a.py", 0o755)
    repo.commit("mode only", when="2026-01-26T10:30:00+08:00")
    (repo.path / "empty.txt").unlink()
    os.symlink("a.py", repo.path / "empty.txt")  # a file turned symbolic link: two sections
    (repo.path / "vendor" / "sub").mkdir(parents=True)  # as a submodule not checked out looks
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{repo.head()},vendor/sub")
    repo.commit("type change and submodule", when="2026-01-26T10:35:00+08:00")
    repo.commit("nothing changed", when="2026-01-26T10:40:00+08:00")
    repo.branch("side")
    repo.checkout("side")
    repo.commit("side", files={"s.txt": "side\n"}, when="2026-01-26T11:00:00+08:00")
    repo.checkout("main")
    repo.commit("main moves on", files={"m.txt": "main\n"}, when="2026-01-26T11:30:00+08:00")
    repo.merge("side", when="2026-01-26T12:00:00+08:00")
    return repo


def shas(repo: GitRepo) -> list[str]:
    return repo.git("rev-list", "--first-parent", "main").split()


async def log_patches(source: LocalGitSource, names: list[str]) -> dict:
    source._diffs_failed = True  # the `git log -p` it falls back to
    return await source._patches(names)


async def test_same_sections_as_git_log_for_every_kind_of_change(repo: GitRepo) -> None:
    names = shas(repo)
    source = LocalGitSource(repo.path)

    from_tree = await source._patches(names)
    await source.aclose()
    from_log = await log_patches(LocalGitSource(repo.path), names)

    assert from_tree == from_log
    assert set(from_tree) == set(names)
    assert from_tree[repo.git("rev-parse", "HEAD~2")] == []  # nothing changed: its header, no section
    types = from_tree[repo.git("rev-parse", "HEAD~3")]  # the empty file's removal, the link, the submodule
    assert [p.hunks is None for p in types] == [True, False, False]
    assert types[2].hunks is not None and types[2].hunks.endswith(
        f"+Subproject commit {repo.git('rev-parse', 'HEAD~4')}"
    )
    assert [p.hunks for p in from_tree[repo.git("rev-parse", "HEAD~4")]] == [None]  # a mode change
    kinds = from_tree[repo.git("rev-parse", "HEAD~5")]
    assert len(kinds) == 6  # a.py, empty.txt, img.bin, keep.txt, moved/old.py, new.py
    assert sum(p.binary for p in kinds) == 1
    assert len(from_tree[repo.head()]) == 1  # the merge: its first-parent diff


def test_rounds_fit_the_pipe_and_one_process_serves_them_all(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(long_running, "ROUND_BYTES", 150)  # two names and the sentinel do not fit
    names = shas(repo)
    source = LocalGitSource(repo.path)
    source._diffs = DiffTree(source._start_diff_tree, 5.0)

    out = source._diffs.patches(names)
    pid = source._diffs.pid
    again = source._diffs.patches(names[::-1])
    assert source._diffs.pid == pid
    source._diffs.close()

    assert parse_tree_patches(out, names) == parse_tree_patches(again, names[::-1])
    assert len(long_running.rounds([b"x" * 41] * 7, 82)) == 7


def test_a_killed_process_is_started_again(repo: GitRepo) -> None:
    names = shas(repo)
    source = LocalGitSource(repo.path)
    source._diffs = DiffTree(source._start_diff_tree, 5.0)
    first = source._diffs.patches(names)
    pid = source._diffs.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)

    assert source._diffs.patches(names) == first
    assert source._diffs.pid != pid
    source._diffs.close()


async def test_a_diff_tree_that_fails_falls_back_to_git_log(
    repo: GitRepo, caplog: pytest.LogCaptureFixture
) -> None:
    names = shas(repo)
    expected = await log_patches(LocalGitSource(repo.path), names)
    source = LocalGitSource(repo.path)
    source._diffs = DiffTree(
        lambda: source._popen(["diff-tree", "--no-such-option"], stdin=PIPE, stderr=DEVNULL), 5.0
    )

    assert await source._patches(names) == expected
    assert source._diffs is None and source._diffs_failed  # not asked again
    assert "instead of git diff-tree" in caplog.text


def test_a_commit_missing_from_the_output_is_an_error() -> None:
    sha = "a" * 40
    with pytest.raises(SourceError, match="did not return"):
        parse_tree_patches(b"b" * 40 + b"\n", [sha])


def test_empty_tree_names() -> None:
    assert empty_tree(40) == b"4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    assert empty_tree(64) == b"6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"


async def test_reads_from_two_tasks_at_once_each_get_their_own(repo: GitRepo) -> None:
    names = shas(repo)
    source = LocalGitSource(repo.path)
    expected = await log_patches(LocalGitSource(repo.path), names)

    first, second = await asyncio.gather(source._patches(names[:3]), source._patches(names[3:]))
    await source.aclose()

    assert first | second == expected
    assert set(first) == set(names[:3])
