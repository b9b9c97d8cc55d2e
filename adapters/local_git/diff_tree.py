"""One long-running `git diff-tree --stdin` per source for the commits' patches. A `git log -p` per batch of 50
commits (eval reads months of them) started git anew each time and inflated again the delta bases the one
before had in its cache: a third of the patch reading's CPU (1.10 → 0.72 CPU-s for a month of a large
repository). diff-tree writes, for the same diff options, the very patches `git log -p` writes.

A round (the commits' names, then a sentinel line) is written whole before its answer is read, so it must fit
in the input pipe (ROUND_BYTES). The sentinel compares the empty tree with itself: git echoes the two names
(no patch line can be that line: every one starts with a prefix or a header word), then the empty line we send
after it makes git flush. A process that died or hung is killed, started again once, then given up on."""

from __future__ import annotations

import hashlib
import subprocess
import threading
import weakref
from collections.abc import Callable, Sequence

from adapters.local_git.cat_file import ROUND_BYTES, end_process
from analysis.errors import SourceError

# `--always`: a commit with an empty diff still gets its header line, so every commit asked is answered.
DIFF_TREE_OPTIONS = ("diff-tree", "--stdin", "-r", "--always")


def empty_tree(name_length: int) -> bytes:
    """The empty tree's object name in a repository whose names have this many hex digits (SHA-1 or -256)."""
    digest = hashlib.sha256 if name_length == 64 else hashlib.sha1
    return digest(b"tree 0\0").hexdigest().encode("ascii")


class DiffTree:
    """`patches(shas)`: diff-tree's output for those commits, in order (one "<sha>" line, then its patch, per
    commit), from one git process started on first use. `start` runs git with DIFF_TREE_OPTIONS and the diff
    options, its stdin and stdout piped; timeout: seconds a round may take before the process is taken for
    hung."""

    def __init__(self, start: Callable[[], subprocess.Popen[bytes]], timeout: float) -> None:
        self._start = start
        self._timeout = timeout
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize | None = None

    def patches(self, shas: Sequence[str]) -> bytes:
        if not shas:
            return b""
        empty = empty_tree(len(shas[0]))
        sentinel = empty + b" " + empty + b"\n\n"
        out: list[bytes] = []
        with self._lock:
            for batch in _rounds([sha.encode("ascii") + b"\n" for sha in shas], len(sentinel)):
                for attempt in (1, 2):
                    try:
                        out.append(self._round(batch, sentinel))
                        break
                    except (OSError, ValueError, EOFError) as exc:
                        self._stop()  # a killed, hung or confused process is not asked again
                        if attempt == 2:
                            raise SourceError(f"git diff-tree --stdin failed: {exc}") from exc
        return b"".join(out)

    def close(self) -> None:
        """End the process (its stdin closed: git exits) and reap it."""
        with self._lock:
            self._stop()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _round(self, lines: list[bytes], sentinel: bytes) -> bytes:
        proc = self._running()
        assert proc.stdin is not None and proc.stdout is not None
        timer = threading.Timer(self._timeout, proc.kill)  # a hung git: its pipe ends, the read fails
        timer.start()
        try:
            proc.stdin.write(b"".join(lines) + sentinel)
            proc.stdin.flush()
            chunks: list[bytes] = []
            tail, total = b"", 0
            while True:
                chunk = proc.stdout.read1(1 << 20)
                if not chunk:
                    raise EOFError("git diff-tree ended")
                chunks.append(chunk)
                total += len(chunk)
                # the sentinel line is the last git writes for the round, always at a line's start
                tail = (tail + chunk)[-len(sentinel) - 1 :]
                if tail.endswith(sentinel) and (total == len(sentinel) or tail[0] == 0x0A):
                    break
        finally:
            timer.cancel()
        return b"".join(chunks)[: -len(sentinel)]

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


def _rounds(lines: list[bytes], reserved: int) -> list[list[bytes]]:
    """The lines in runs that fit ROUND_BYTES with the sentinel (reserved bytes); a longer line alone."""
    rounds: list[list[bytes]] = []
    size = ROUND_BYTES
    for line in lines:
        if size + len(line) + reserved > ROUND_BYTES:
            rounds.append([])
            size = 0
        rounds[-1].append(line)
        size += len(line)
    return rounds
