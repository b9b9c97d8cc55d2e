"""Running the git CLI for LocalGitSource: one pinned invocation (the config and environment that would
otherwise change what we parse), its timeout, and git's failures turned into SourceError with a redacted
one-line reason. Mixed into the source, which holds the git binary, the environment and the git dir."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from adapters.local_git.git_output import text_of
from adapters.local_git.remote import redact
from analysis.errors import SourceError
from bot.ports.protocols import Progress

log = logging.getLogger(__name__)

GIT_TIMEOUT = 300.0  # seconds; only local work, so anything longer is a hung process
# A file larger than this is diffed as binary (git's core.bigFileThreshold, default 512 MiB): listed, no patch, no
# line count. A commit adding a 500 MB data file otherwise put its whole patch in memory a few times over and in
# the store; no source text is this large (GitLab's Gitaly sets 50 MiB for the same reason).
BIG_FILE_BYTES = 8 * 1024 * 1024
NO_GIT = "git is not installed (or not on PATH); it is needed to read a local clone"

# Variables with which a calling git (hooks, aliases) would point us at another repository or options.
_STRIP_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_GRAFT_FILE",
    "GIT_SHALLOW_FILE",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_NOTES_REF",
)
# Config that would otherwise leak into the output we parse.
_CONFIG = (
    "core.quotepath=off",
    "core.pager=cat",
    "color.ui=never",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.suppressBlankEmpty=false",
    "diff.renameLimit=1000",
    "log.showSignature=false",
    "i18n.logOutputEncoding=UTF-8",
)
# The diff options that decide a file's line counts: the history's `--numstat` (history_reads.py) reads with
# them too, so a user's diff.algorithm, textconv driver or external diff cannot make its counts differ from the
# patches'.
COUNT_OPTIONS = ("--no-ext-diff", "--no-textconv", "--no-relative", "--diff-algorithm=myers")
# The diff options of every file list and patch we read: `git log` and `git diff-tree` must see the same files.
DIFF_OPTIONS = (
    *COUNT_OPTIONS,
    "--root",  # the root commit diffs against the empty tree
    "--diff-merges=first-parent",  # a merge shows what it brought into the branch
    "-M",  # GitHub reports renames
    f"-O{os.devnull}",  # no diff.orderFile reordering
    "--indent-heuristic",
    "--submodule=short",
)
# `git log` options shared by the metadata and the patch call: both must see the very same files.
LOG_OPTIONS = (
    "--no-walk=unsorted",
    "--stdin",
    "--no-show-signature",
    "--no-mailmap",  # the author as recorded, as GitHub reports it
    "--no-notes",
    "--no-decorate",
    "--encoding=UTF-8",
    *DIFF_OPTIONS,
)
PATCH_OPTIONS = (
    "-p",
    "--no-color",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--unified=3",
    "--inter-hunk-context=0",
)


def _settings() -> list[str]:
    """The `-c` options of every git call: _CONFIG and the big-file bound."""
    return [
        arg for setting in (*_CONFIG, f"core.bigFileThreshold={BIG_FILE_BYTES}") for arg in ("-c", setting)
    ]


def git_env() -> dict[str, str]:
    """The environment git runs in: the caller's, without what would point it elsewhere, never prompting."""
    env = {k: v for k, v in os.environ.items() if k not in _STRIP_ENV}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return env


class GitCli:
    """git calls for a repository: `_git` (the binary), `_env` (git_env()) and `git_dir` are set by the class
    this is mixed into."""

    _git: str | None
    _env: dict[str, str]
    git_dir: Path

    def _spawn(
        self,
        args: Sequence[str | bytes],
        stdin: str | bytes | None = None,
        *,
        discover_from: Path | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        # An explicit --git-dir once discovered: no second discovery, no surprise from the cwd.
        where = ["-C", str(discover_from)] if discover_from else [f"--git-dir={self.git_dir}"]
        base = [self._git or "git", "--no-pager", *where, *_settings()]
        log.debug("git %s", args[0])
        if isinstance(stdin, str):
            stdin = stdin.encode()
        try:
            return subprocess.run(
                [*base, *args],
                input=stdin,
                capture_output=True,
                env=self._env,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except FileNotFoundError as exc:
            raise SourceError(NO_GIT) from exc
        except subprocess.TimeoutExpired as exc:
            raise SourceError(f"git {args[0]} ran over {GIT_TIMEOUT:.0f} s in {self.git_dir}") from exc

    def _popen(self, args: list[str], *, stdin: Any, stderr: Any) -> subprocess.Popen[bytes]:
        """A git process whose output is read as it streams (see `_spawn` for the options)."""
        base = [self._git or "git", "--no-pager", f"--git-dir={self.git_dir}", *_settings()]
        log.debug("git %s", args[0])
        try:
            return subprocess.Popen(
                [*base, *args], stdin=stdin, stdout=subprocess.PIPE, stderr=stderr, env=self._env
            )
        except FileNotFoundError as exc:
            raise SourceError(NO_GIT) from exc

    async def _git_async(self, *args: str, stdin: str | bytes | None = None) -> bytes:
        proc = await asyncio.to_thread(self._spawn, list(args), stdin)
        if proc.returncode != 0:
            raise SourceError(f"git {args[0]} failed in {self.git_dir}: {first_line(proc.stderr)}")
        return proc.stdout

    def _stream_history(self, args: list[str], stdin: str, nonce: str, counter: ReadCount) -> bytes:
        """`git log --stdin` output, read as it comes (for a progress bar over the commits listed)."""
        total = stdin.count("\n")
        marker, seen, told = nonce.encode(), 0, 0
        with tempfile.TemporaryFile() as errors:
            proc = self._popen(args, stdin=subprocess.PIPE, stderr=errors)
            timer = threading.Timer(GIT_TIMEOUT, proc.kill)
            timer.start()
            chunks: list[bytes] = []
            try:
                assert proc.stdin is not None and proc.stdout is not None
                with contextlib.suppress(BrokenPipeError):  # git read every line before it writes
                    proc.stdin.write(stdin.encode())
                    proc.stdin.close()
                while chunk := proc.stdout.read1(1 << 20):
                    chunks.append(chunk)
                    seen += chunk.count(marker)  # two per commit (a marker cut in two: one less)
                    now = min(total, seen // 2)
                    counter.add(now - told)
                    told = now
                code = proc.wait()
            finally:
                timer.cancel()
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            if code != 0:
                errors.seek(0)
                if code < 0:
                    raise SourceError(f"git log ran over {GIT_TIMEOUT:.0f} s in {self.git_dir}")
                raise SourceError(f"git log failed in {self.git_dir}: {first_line(errors.read())}")
        counter.add(total - told)
        return b"".join(chunks)


class ReadCount:
    """The commits the history passes have read, summed and reported in order: one running total for the
    progress bar, whichever worker thread read them, at most every REPORT_EVERY seconds (and the total
    when it is reached). Each report wakes the event loop from a reader thread: once per chunk of git's
    output, 3,000-4,000 of them for 180 days, it was 0.3 s of CPU beside the surface step (issue 21)."""

    REPORT_EVERY = 0.1  # seconds: ten updates a second are as smooth as a bar gets

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total = total
        self.read = 0
        self._progress = progress
        self._lock = threading.Lock()
        self._next = 0.0  # when the next report may go out (the first goes at once)

    def add(self, n: int) -> None:
        """n more read; each pass adds up to its own count, so the passes together end at the total."""
        if self._progress is None or n <= 0:
            return
        with self._lock:
            self.read += n
            now = time.monotonic()
            if self.read < self.total and now < self._next:
                return
            self._next = now + self.REPORT_EVERY
            self._progress(self.read, self.total)


def first_line(stderr: bytes) -> str:
    lines = [line.strip() for line in redact(text_of(stderr)).splitlines() if line.strip()]
    fatal = [line for line in lines if line.lower().startswith(("fatal:", "error:"))]
    return (fatal or lines or ["no details"])[0]
