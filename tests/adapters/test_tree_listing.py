"""A commit's tree listing from its tree objects (tree_listing.py) gives `git ls-tree -r -z --full-tree`'s
paths in its order, and its blob ids those list_blobs reads from that listing: names that sort around "/", names git would quote, an executable, a symbolic link, a submodule, a
mode only old git wrote; commit after commit, with folders kept or dropped from the budget."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from adapters.local_git import LocalGitSource, tree_listing
from adapters.local_git.cat_file import CatFile
from adapters.local_git.git_output import text_of
from adapters.local_git.tree_listing import TreeListing
from analysis.errors import SourceError
from tests.fakes.gitrepo import GitRepo, git_date, isolate_git_env

WHEN = "2026-01-26T10:00:00+08:00"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git_env(monkeypatch, tmp_path / "home")
    return GitRepo.init(tmp_path / "kit")


def _history(repo: GitRepo) -> list[str]:
    files = {
        "a-b": "1\n",
        "a/c": "2\n",
        "a.b/x": "3\n",
        "a/deep/er/f.py": "4\n",
        'tab\there \udce9 "q".md': "5\n",
        "bin/run": "#!/bin/sh\n",
    }
    shas = [repo.commit("Start", files, when=WHEN)]
    os.chmod(repo.path / "bin/run", 0o755)
    (repo.path / "a/link").symlink_to("c")
    shas.append(repo.commit("Link and exec", when=WHEN))
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{shas[0]},vendor/sub")  # a submodule's entry
    dates = {"GIT_COMMITTER_DATE": git_date(WHEN), "GIT_AUTHOR_DATE": git_date(WHEN)}
    repo.git("commit", "--quiet", "-m", "Submodule", env=dates)  # not `add --all`: it drops the entry
    shas.append(repo.head())
    shas.append(repo.commit("Move", rename={"a/c": "z/c"}, delete=["a-b"], when=WHEN))
    # a tree as git before 1.5 wrote it: a file's mode 100664 (ls-tree shows 100644)
    blob = repo.git("hash-object", "-w", "--stdin", input="old\n")
    tree = repo.git_bytes(
        "hash-object", "-w", "-t", "tree", "--literally", "--stdin",
        input=b"100664 old.txt\0" + bytes.fromhex(blob),
    ).decode().strip()  # fmt: skip
    shas.append(
        repo.git("commit-tree", tree, "-p", shas[-1], "-m", "Old", env={"GIT_COMMITTER_DATE": git_date(WHEN)})
    )
    return shas


def _cat(git_dir: Path) -> CatFile:
    def start() -> subprocess.Popen[bytes]:
        args = ["git", f"--git-dir={git_dir}", "cat-file", "--batch-command", "--buffer"]
        return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    return CatFile(start, 60)


@pytest.mark.parametrize("budget", [tree_listing.KEPT_FOLDER_BYTES, 40])  # 40: folders dropped mid-listing
def test_paths_and_blob_ids_are_ls_trees(repo: GitRepo, monkeypatch: pytest.MonkeyPatch, budget: int) -> None:
    monkeypatch.setattr(tree_listing, "KEPT_FOLDER_BYTES", budget)
    shas = _history(repo)
    cat = _cat(repo.path / ".git")
    lister = TreeListing(cat)
    for sha in [*shas, *shas[::-1]]:  # read anew, then from kept folders
        listed = repo.git_bytes("ls-tree", "-r", "-z", "--full-tree", sha)
        rows = [entry.partition(b"\t") for entry in listed.split(b"\0") if entry]
        assert lister.paths(sha) == [text_of(path) for _, _, path in rows]  # what paths_at read from ls-tree
        # the blob ids list_blobs reads from the listing, in its order: files only, names as text_of decodes them
        files = [
            (text_of(path), meta.split()[2].decode()) for meta, _, path in rows if meta.startswith(b"100")
        ]
        assert list(lister.blobs(sha).items()) == files
    assert list(lister.blobs(shas[-1])) == ["old.txt"] and "vendor/sub" in lister.paths(shas[2])
    with pytest.raises(SourceError):
        lister.paths("0" * 40)
    with pytest.raises(SourceError):
        lister.blobs("0" * 40)
    cat.close()


async def test_the_source_lists_trees_through_its_cat_file(repo: GitRepo, tmp_path: Path) -> None:
    shas = _history(repo)
    source = LocalGitSource(repo.clone(tmp_path / "kit.git", bare=True))
    calls: list[str] = []
    original = source._git_async

    async def counting(*args: str, **kw: object) -> bytes:
        calls.append(args[0])
        return await original(*args, **kw)  # type: ignore[arg-type]

    source._git_async = counting  # type: ignore[method-assign]
    paths = await source.paths_at(shas[2])  # the submodule's commit
    assert sorted(paths) == sorted(
        [
            "a-b",
            "a/c",
            "a.b/x",
            "a/deep/er/f.py",
            'tab\there \ufffd "q".md',
            "bin/run",
            "a/link",
            "vendor/sub",
        ]
    )
    assert set(await source.list_blobs(shas[2]) or {}) == set(paths) - {"a/link", "vendor/sub"}
    assert await source.list_blobs("f" * 40) is None  # a commit this clone does not have
    assert "ls-tree" not in calls
    await source.aclose()
