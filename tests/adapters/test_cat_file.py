"""The local git source's long-running `git cat-file --batch-command` (cat_file.py), against a throw-away
repository: answers as git's own, in order, across rounds and threads; a killed or hung process replaced,
then given up on; the process ended and reaped when the source closes (or is dropped)."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from adapters.local_git import LocalGitSource
from adapters.local_git.cat_file import CatFile, supports_batch_command
from analysis.errors import SourceError
from tests.fakes.gitrepo import GitRepo, isolate_git_env

WHEN = "2026-01-26T10:00:00+08:00"
ODD = "kit/tab\there and sp ace \udce9.py"  # a tab, spaces and a byte that is not UTF-8


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git_env(monkeypatch, tmp_path / "home")
    return GitRepo.init(tmp_path / "kit")


@pytest.fixture
def source(repo: GitRepo, tmp_path: Path) -> LocalGitSource:
    files = {f"kit/m{i}.py": f"X{i} = {i}\n" for i in range(200)}
    repo.commit("Start", {**files, ODD: "odd = 1\n", "logo.png": b"\x89PNG\x00"}, when=WHEN)
    return LocalGitSource(repo.clone(tmp_path / "kit.git", bare=True))


def _running(source: LocalGitSource) -> subprocess.Popen[bytes]:
    assert source._cat is not None and source._cat._proc is not None
    return source._cat._proc


def _reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True  # no such child left: waited for
    return False


async def test_one_process_answers_every_read_as_git_does(source: LocalGitSource) -> None:
    head = (await source.read_commits([await source.branch_tip("main")]))[0].sha
    wanted = [(head, f"kit/m{i}.py") for i in range(200)]  # more than one round of commands
    odd = (head, ODD.replace("\udce9", "\ufffd"))  # as the commit lists it: found by its own bytes
    texts = await source.read_files([*wanted, odd, (head, "gone.py"), (head, "logo.png")], max_bytes=100)
    assert [texts.texts[spec] for spec in wanted] == [f"X{i} = {i}\n" for i in range(200)]
    assert texts.texts[odd] == "odd = 1\n"
    assert texts.texts[head, "gone.py"] is None and (head, "logo.png") in texts.skipped
    blobs = await source.list_blobs(head)
    assert await source.read_blobs([blobs["kit/m7.py"], "0" * 40], max_bytes=100) == {
        blobs["kit/m7.py"]: "X7 = 7\n",
        "0" * 40: None,
    }
    pid = _running(source).pid
    await source.aclose()
    assert _reaped(pid) and source._cat is not None and source._cat.pid is None


async def test_a_killed_process_is_started_again_and_threads_take_turns(source: LocalGitSource) -> None:
    head = await source.branch_tip("main")
    await source.read_files([(head, "kit/m0.py")], max_bytes=100)
    killed = _running(source)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    cat = source._cat
    assert cat is not None
    names = [f"{head}:kit/m{i}.py".encode() for i in range(200)]
    assert cat.info(names[:1])[0].split()[1] == b"blob"  # answered by a new process
    assert _running(source).pid != killed.pid

    def read(i: int) -> list[bytes | None]:
        return [data for _, data in cat.contents(names[i::8])]

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(read, range(8)))
    assert answers == [[f"X{n} = {n}\n".encode() for n in range(i, 200, 8)] for i in range(8)]
    await source.aclose()


def test_a_hung_process_is_killed_then_given_up_on(tmp_path: Path) -> None:
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:  # reads its input, never answers
        started.append(subprocess.Popen(["sleep", "60"], stdin=subprocess.PIPE, stdout=subprocess.PIPE))
        return started[-1]

    cat = CatFile(start, timeout=0.3)
    with pytest.raises(SourceError, match="cat-file"):
        cat.info([b"HEAD"])
    assert len(started) == 2 and all(proc.poll() is not None for proc in started)  # killed and reaped


def test_a_dropped_source_ends_its_process(source: LocalGitSource) -> None:
    dropped = LocalGitSource(source.git_dir)
    cat = dropped._cat = CatFile(dropped._start_cat_file, 10)
    assert cat.info([b"HEAD"])[0].split()[1] == b"commit"
    pid = cat.pid
    assert pid is not None
    del dropped, cat
    gc.collect()
    assert _reaped(pid)


async def test_a_git_without_batch_command_reads_a_process_a_batch(
    source: LocalGitSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert supports_batch_command(b"git version 2.36.0\n") and supports_batch_command(b"git version 3.0")
    assert not supports_batch_command(b"git version 2.35.9\n") and not supports_batch_command(b"")
    monkeypatch.setattr("adapters.local_git.file_reads.supports_batch_command", lambda _: False)
    head = await source.branch_tip("main")
    texts = await source.read_files([(head, "kit/m1.py"), (head, "gone.py")], max_bytes=100)
    assert texts.texts == {(head, "kit/m1.py"): "X1 = 1\n", (head, "gone.py"): None}
    assert source._cat is None
    await source.aclose()
