"""One long-running `git cat-file --batch-command` per source (git ≥ 2.36) for the surface step's object
checks and blob reads. A long run (eval) asked a `--batch-check` and a `--batch` process of their own for
every batch of files: 800 processes for four months of a large repository, each starting git anew and
inflating again the delta bases the previous one had in its cache.

Requests go in under a lock (the source is called from worker threads), in rounds small enough for the pipe
(see long_running.ROUND_BYTES); a process that died or hung is killed, started again once, then given up on
(SourceError). Names must not hold a line break (the caller skips such paths): the protocol is one command a
line."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from typing import IO

from adapters.local_git.long_running import LongRunning, rounds

MIN_VERSION = (2, 36)  # `--batch-command`
_VERSION = re.compile(rb"git version (\d+)\.(\d+)")

Header = bytes  # "<oid> <type> <size>", or "<name> missing" (and "<name> ambiguous")


def supports_batch_command(version_output: bytes) -> bool:
    """Whether `git version` names a git that has `cat-file --batch-command`."""
    found = _VERSION.search(version_output)
    return found is not None and (int(found[1]), int(found[2])) >= MIN_VERSION


class CatFile(LongRunning):
    """`info` (the header git's `--batch-check` writes) and `contents` (header and data) of objects by name,
    from one git process started on first use (long_running.py). `start` runs `git cat-file --batch-command
    --buffer` with its stdin and stdout piped."""

    what = "git cat-file --batch-command"

    def info(self, names: Sequence[bytes]) -> list[Header]:
        return [header for header, _ in self._ask(b"info", names, with_data=False)]

    def contents(self, names: Sequence[bytes]) -> list[tuple[Header, bytes | None]]:
        """(header, data) per name, data None where git has no such object."""
        return self._ask(b"contents", names, with_data=True)

    def _ask(
        self, verb: bytes, names: Sequence[bytes], *, with_data: bool
    ) -> list[tuple[Header, bytes | None]]:
        batches = rounds([verb + b" " + name + b"\n" for name in names])
        answered = self._each_round(batches, lambda proc, batch: _round(proc, batch, with_data))
        return [answer for batch in answered for answer in batch]


def _round(
    proc: subprocess.Popen[bytes], commands: list[bytes], with_data: bool
) -> list[tuple[Header, bytes | None]]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(commands) + b"flush\n")
    proc.stdin.flush()
    return [_answer(proc.stdout, with_data) for _ in commands]


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
