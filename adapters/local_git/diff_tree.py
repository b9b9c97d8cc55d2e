"""One long-running `git diff-tree --stdin` per source for the commits' patches. A `git log -p` per batch of
50 commits (eval reads months of them) started git anew each time and inflated again the delta bases the one
before had in its cache: a third of the patch reading's CPU (1.10 → 0.72 CPU-s for a month of a large
repository). diff-tree writes, for the same diff options, the very patches `git log -p` writes.

A round (the commits' names, then a sentinel line) is written whole before its answer is read, so it must fit
in the input pipe (long_running.ROUND_BYTES). The sentinel compares the empty tree with itself: git echoes the
two names (no patch line can be that line: every one starts with a prefix or a header word), then the empty
line we send after it makes git flush. A process that died or hung is killed, started again once, then given
up on."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Sequence

from adapters.local_git.long_running import LongRunning, rounds

# `--always`: a commit with an empty diff still gets its header line, so every commit asked is answered.
DIFF_TREE_OPTIONS = ("diff-tree", "--stdin", "-r", "--always")


def empty_tree(name_length: int) -> bytes:
    """The empty tree's object name in a repository whose names have this many hex digits (SHA-1 or -256)."""
    digest = hashlib.sha256 if name_length == 64 else hashlib.sha1
    return digest(b"tree 0\0").hexdigest().encode("ascii")


class DiffTree(LongRunning):
    """`patches(shas)`: diff-tree's output for those commits, in order (one "<sha>" line, then its patch, per
    commit), from one git process started on first use (long_running.py). `start` runs git with
    DIFF_TREE_OPTIONS and the diff options, its stdin and stdout piped."""

    what = "git diff-tree --stdin"

    def patches(self, shas: Sequence[str]) -> bytes:
        if not shas:
            return b""
        empty = empty_tree(len(shas[0]))
        sentinel = empty + b" " + empty + b"\n\n"
        lines = [sha.encode("ascii") + b"\n" for sha in shas]
        return b"".join(
            self._each_round(rounds(lines, len(sentinel)), lambda proc, batch: _round(proc, batch, sentinel))
        )


def _round(proc: subprocess.Popen[bytes], lines: list[bytes], sentinel: bytes) -> bytes:
    assert proc.stdin is not None and proc.stdout is not None
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
    return b"".join(chunks)[: -len(sentinel)]
