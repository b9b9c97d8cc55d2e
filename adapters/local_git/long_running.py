"""A long-running git process asked in rounds (cat_file.py's `cat-file --batch-command`, diff_tree.py's
`diff-tree --stdin`): started on first use, asked under a lock (the source is called from worker threads), a
round that hangs past its timeout killed, a process that died, hung or answered out of step started again once,
then given up on (SourceError), and ended (its pipes closed, reaped) on close or when its owner is dropped."""

from __future__ import annotations

import subprocess
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import TypeVar

from analysis.errors import SourceError

T = TypeVar("T")
# A round's requests are written whole before its answers are read: git stops reading once its own output pipe
# is full, so what we write at once must fit in the input pipe (64 KiB on Linux, 4 KiB on the smallest).
ROUND_BYTES = 4096


class LongRunning:
    """`start` runs the git process with its stdin and stdout piped; timeout: seconds a round may take before
    the process is taken for hung; `what` names it in errors."""

    what = "git"

    def __init__(self, start: Callable[[], subprocess.Popen[bytes]], timeout: float) -> None:
        self._start = start
        self._timeout = timeout
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize | None = None

    def close(self) -> None:
        """End the process (its stdin closed: git exits) and reap it."""
        with self._lock:
            self._stop()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _each_round(
        self, rounds: Iterable[T], ask: Callable[[subprocess.Popen[bytes], T], bytes | list]
    ) -> list:
        """`ask(process, round)` for each round in turn under the lock, with a timer that kills a hung git
        (its pipe ends, the read fails); a failed round is asked again of a new process once."""
        answers = []
        with self._lock:
            for batch in rounds:
                for attempt in (1, 2):
                    proc = self._running()
                    timer = threading.Timer(self._timeout, proc.kill)
                    timer.start()
                    try:
                        answers.append(ask(proc, batch))
                        break
                    except (OSError, ValueError, EOFError) as exc:
                        self._stop()  # a killed, hung or confused process is not asked again
                        if attempt == 2:
                            raise SourceError(f"{self.what} failed: {exc}") from exc
                    finally:
                        timer.cancel()
        return answers

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


def rounds(lines: list[bytes], reserved: int = 0) -> list[list[bytes]]:
    """The request lines in runs that fit ROUND_BYTES with `reserved` bytes written after each run (a
    sentinel); a longer line alone."""
    out: list[list[bytes]] = []
    size = ROUND_BYTES
    for line in lines:
        if size + len(line) + reserved > ROUND_BYTES:
            out.append([])
            size = 0
        out[-1].append(line)
        size += len(line)
    return out
