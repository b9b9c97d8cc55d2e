"""A branch's history for LocalGitSource: its commits with their paths and line counts from `git log --numstat`
(several processes at once over a long span), or with their paths alone (`--name-only`: no file is diffed,
a fortieth of the cost) where the counts can come later, from the patches eval reads anyway (past_files).

`git log --numstat --no-renames` over a four-month eval's span was 2.3 CPU-s of a large repository for the
very commits whose patches the eval then reads with rename detection; a commit whose files the patches
cannot count as `--no-renames` would (a rename, a copy, a type change, a path git quotes, a big file counted
again) is asked of git once more, a few in a hundred.
"""

from __future__ import annotations

import asyncio
import os
import secrets
from collections.abc import Iterable, Sequence

from adapters.local_git.git_cli import COUNT_OPTIONS, GitCli, ReadCount
from adapters.local_git.git_output import parse_history, text_of
from analysis.history.followups import PastCommit
from analysis.models import Commit, FileChange
from bot.ports.protocols import Progress

# `git log --numstat` diffs every file of every commit: months of history are seconds of one core. A long
# span is read by one process per core, in contiguous parts.
HISTORY_PASSES = max(1, min(4, os.cpu_count() or 1))
MIN_COMMITS_PER_PASS = 250  # fewer are not worth a process of their own

Files = tuple[tuple[str, int], ...]  # PastCommit.files: (path, lines added and removed)
_PLAIN_STATUS = frozenset({"added", "modified", "removed"})  # what `--no-renames` lists as the patches do


class HistoryReads(GitCli):
    """`_history_rows` (the history of listed commits) and `past_files` over the git calls of GitCli."""

    history_passes: int = HISTORY_PASSES

    def _shallow_cut(self) -> frozenset[str]: ...  # LocalGitSource's

    async def _history_rows(
        self, shas: Sequence[str], counted: bool = True, progress: Progress | None = None
    ) -> list[PastCommit]:
        """These commits (newest first, as listed) with their messages and files, in that order; counted=False:
        their paths only, every count 0. `git log` reads exactly the listed commits as it streams, one process
        per part of a long list (history_passes at once); `progress` (called from worker threads) gets the
        commits read so far."""
        if not shas:
            return []
        nonce = secrets.token_hex(16)
        args = ["log", "--no-walk=unsorted", "--stdin", "--diff-merges=first-parent", "--no-renames"]
        args += ["--numstat" if counted else "--name-only", "--encoding=UTF-8", *COUNT_OPTIONS]
        args += [f"--format={nonce}%H %ct%x09%an%x09%ae%n%B{nonce}"]
        counter = ReadCount(len(shas), progress)
        passes = min(self.history_passes, -(-len(shas) // MIN_COMMITS_PER_PASS)) if counted else 1
        outs = await asyncio.gather(
            *(
                asyncio.to_thread(self._stream_history, args, "\n".join(p) + "\n", nonce, counter)
                for p in _parts(list(shas), passes)
            )
        )
        # the parts are contiguous runs of the list: joined in order, the output is one pass's
        return parse_history(text_of(b"".join(outs)), nonce, counted=counted)

    async def history_counts(self, shas: Sequence[str]) -> dict[str, Files]:
        """The files of these commits with their line counts, as `history` reads them."""
        cut = self._shallow_cut()  # as in history: a commit at a shallow cut did not touch every path
        return {c.sha: () if c.sha in cut else c.files for c in await self._history_rows(shas)}

    async def past_files(self, commits: Sequence[Commit]) -> dict[str, Files]:
        """The files of these read commits as `history` lists them (no renames), counted from their patches;
        git is asked again for those whose patches cannot say (see no_rename_files)."""
        cut = self._shallow_cut()
        files: dict[str, Files] = {}
        ask: list[str] = []
        for commit in commits:
            counted = () if commit.sha in cut else no_rename_files(commit.files)
            if counted is None:
                ask.append(commit.sha)
            else:
                files[commit.sha] = counted
        files.update(await self.history_counts(ask) if ask else {})
        return files


def no_rename_files(changes: Iterable[FileChange]) -> Files | None:
    """The files as `git log --numstat --no-renames` lists them, from a commit read with rename detection; None
    when its files cannot say: a rename or copy (listed as a removal and an addition of whole files), a type
    change, a path `--numstat` quotes, a file counted without a patch (a big file counted again, or diffed as
    binary only by the patch read's bound)."""
    files = []
    for change in changes:
        if change.status not in _PLAIN_STATUS or _quoted(change.path):
            return None
        if change.patch is None and change.changes:
            return None
        files.append((change.path, change.changes))
    return tuple(files)


def _quoted(path: str) -> bool:
    # core.quotepath=off: git quotes a path with a double quote, a backslash or a control character
    return any(ch in '"\\' or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in path)


def _parts(items: list[str], n: int) -> list[list[str]]:
    """`items` cut into n (at least one) contiguous runs of nearly equal length, in order."""
    n = max(1, min(n, len(items)))
    size, extra = divmod(len(items), n)
    cuts = [i * size + min(i, extra) for i in range(n + 1)]
    return [items[cuts[i] : cuts[i + 1]] for i in range(n)]
