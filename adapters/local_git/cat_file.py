"""One long-running `git cat-file --batch-command` per source (git ≥ 2.36) for the surface step's object
checks and blob reads. A long run (eval) asked a `--batch-check` and a `--batch` process of their own for every
batch of files: 800 processes for four months of a large repository, each starting git anew and inflating again
the delta bases the previous one had in its cache.

Requests go in under a lock (the source is called from worker threads), in rounds small enough for the pipe
(see ROUND_BYTES); a process that died or hung is killed, started again once, then given up on (SourceError).
Names must not hold a line break (the caller skips such paths): the protocol is one command a line."""

from __future__ import annotations

import re
import subprocess
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import IO

from analysis.errors import SourceError

# A round's commands are written whole before its answers are read: git stops reading once its own output pipe
# is full, so what we write at once must fit in the input pipe (64 KiB on Linux, 4 KiB on the smallest).
ROUND_BYTES = 4096
MIN_VERSION = (2, 36)  # `--batch-command`
_VERSION = re.compile(rb"git version (\d+)\.(\d+)")

Header = bytes  # "<oid> <type> <size>", or "<name> missing" (and "<name> ambiguous")


def supports_batch_command(version_output: bytes) -> bool:
    """Whether `git version` names a git that has `cat-file --batch-command`."""
    found = _VERSION.search(version_output)
    return found is not None and (int(found[1]), int(found[2])) >= MIN_VERSION


class CatFile:
    """`info` (the header git's `--batch-check` writes) and `contents` (header and data) of objects by name,
    from one git process started on first use. `start` runs `git cat-file --batch-command --buffer` with its
    stdin and stdout piped; timeout: seconds a round may take before the process is taken for hung."""

    def __init__(self, start: Callable[[], subprocess.Popen[bytes]], timeout: float) -> None:
        self._start = start
        self._timeout = timeout
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize | None = None

    def info(self, names: Sequence[bytes]) -> list[Header]:
        return [header for header, _ in self._ask(b"info", names, with_data=False)]

    def contents(self, names: Sequence[bytes]) -> list[tuple[Header, bytes | None]]:
        """(header, data) per name, data None where git has no such object."""
        return self._ask(b"contents", names, with_data=True)

    def close(self) -> None:
        """End the process (its stdin closed: git exits) and reap it."""
        with self._lock:
            self._stop()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _ask(
        self, verb: bytes, names: Sequence[bytes], *, with_data: bool
    ) -> list[tuple[Header, bytes | None]]:
        answers: list[tuple[Header, bytes | None]] = []
        with self._lock:
            for batch in _rounds([verb + b" " + name + b"\n" for name in names]):
                for attempt in (1, 2):
                    try:
                        answers += self._round(batch, with_data)
                        break
                    except (OSError, ValueError, EOFError) as exc:
                        self._stop()  # a killed, hung or confused process is not asked again
                        if attempt == 2:
                            raise SourceError(f"git cat-file --batch-command failed: {exc}") from exc
        return answers

    def _round(self, commands: list[bytes], with_data: bool) -> list[tuple[Header, bytes | None]]:
        proc = self._running()
        assert proc.stdin is not None and proc.stdout is not None
        timer = threading.Timer(self._timeout, proc.kill)  # a hung git: its pipe ends, the read fails
        timer.start()
        try:
            proc.stdin.write(b"".join(commands) + b"flush\n")
            proc.stdin.flush()
            return [_answer(proc.stdout, with_data) for _ in commands]
        finally:
            timer.cancel()

    def _running(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            self._stop()
            self._proc = self._start()
            # a source dropped without aclose (a test, a short script) still ends its process
            self._finalizer = weakref.finalize(self, end_process, self._proc)
        return self._proc

    def _stop(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # runs end_process once
        self._proc = self._finalizer = None


def _answer(out: IO[bytes], with_data: bool) -> tuple[Header, bytes | None]:
    line = out.readline()
    if not line.endswith(b"\n"):
        raise EOFError("git cat-file ended")
    header = line[:-1]
    if not with_data or header.endswith((b" missing", b" ambiguous")):
        return header, None
    size = int(header.rsplit(b" ", 1)[1])  # ValueError on a header that is not one: the process is dropped
    data = out.read(size + 1)
    if len(data) != size + 1:
        raise EOFError("git cat-file ended")
    return header, data[:-1]


def _rounds(commands: list[bytes]) -> list[list[bytes]]:
    """The commands in runs of at most ROUND_BYTES (one longer command alone)."""
    rounds: list[list[bytes]] = []
    size = ROUND_BYTES
    for command in commands:
        if size + len(command) > ROUND_BYTES:
            rounds.append([])
            size = 0
        rounds[-1].append(command)
        size += len(command)
    return rounds


def end_process(proc: subprocess.Popen[bytes]) -> None:
    """Close a long-running git's pipes (git exits at the end of its input) and reap it."""
    for pipe in (proc.stdin, proc.stdout):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass  # a broken pipe to a dead process
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
