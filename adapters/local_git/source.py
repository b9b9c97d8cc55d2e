"""LocalGitSource: commits from a local clone (bare or not) through the git CLI: no network, no token,
no quota.

Every git call pins the options that shape its output, so that a user's git configuration cannot change
what we parse (git_cli.py); the output is parsed as bytes (git_output.py); files at a commit are
file_reads.py's, which commit a branch name reads branches.py's. Here: the repository (discovery, its
name, default branch), a window's commits (a first-parent walk that survives clock skew) or known shas',
whether the clone has nothing as recent as a day (newest_before, with a warning), full commits in batches,
a span's history (read by history_reads.py), and shallow clones.
"""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
from collections.abc import Awaitable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

from adapters.local_git.big_files import recount
from adapters.local_git.branches import BranchReads
from adapters.local_git.file_reads import FileReads, kept_blobs, kept_trees
from adapters.local_git.git_cli import (
    LOG_OPTIONS,
    NO_GIT,
    first_line,
    git_env,
)
from adapters.local_git.git_output import (
    META,
    Meta,
    Patch,
    commit_time,
    file_changes,
    parse_meta,
    stamped,
    text_of,
)
from adapters.local_git.history_reads import HISTORY_PASSES, HistoryReads
from adapters.local_git.patch_reads import PatchReads
from adapters.local_git.remote import RemoteRepo, parse_remote_url, searched_where
from adapters.local_git.shallow import ShallowCut
from analysis.errors import AmbiguousRef, InputError, RefNotFound, SourceError
from analysis.history.automation import login_from_email
from analysis.history.followups import PastCommit
from analysis.models import PR_IN_TITLE, Commit
from analysis.refs import is_full_object_name
from bot.ports.protocols import Progress

# git prunes a --since walk at the first commit older than the bound, but committer dates along a
# first-parent history are not always monotonic (clock skew, rebased or cherry-picked commits). Walking
# back this far before the window absorbs small skews in the one walk (rev-list reads only commit headers,
# no diffs); larger ones (a 1970 clock) are walked past page by page (_past_skew). The exact window is
# applied in Python.
DEFAULT_SINCE_MARGIN = timedelta(days=30)
# Past where the --since walk stopped, the first-parent history is read in pages (doubling up to the
# largest) while a page still holds commits at or after the bound: see LocalGitSource._past_skew.
SKEW_PAGE, MAX_SKEW_PAGE = 16, 4096
BATCH_SIZE = 50  # commits per metadata call and diff-tree request: bounded output per call

_SHA_PREFIX = re.compile(r"[0-9a-fA-F]{4,64}")  # up to 64: a SHA-256 repository
_REMOTE_NAME = re.compile(r"[\w.][\w./-]*")

log = logging.getLogger(__name__)


class LocalGitSource(FileReads, BranchReads, PatchReads, HistoryReads):
    """bot.ports.protocols.CommitSource over a local clone.

    Construction is synchronous (the source factory is): a few quick git calls check the repository
    and name it. Everything else runs git in a worker thread (asyncio.to_thread)."""

    def __init__(
        self,
        git_dir: Path | str,
        repo: str | None = None,
        remote: str = "origin",
        *,
        since_margin: timedelta = DEFAULT_SINCE_MARGIN,
        batch_size: int = BATCH_SIZE,
        history_passes: int = HISTORY_PASSES,
    ) -> None:
        if not _REMOTE_NAME.fullmatch(remote):
            raise InputError(f"bad remote name {remote!r}")
        self.remote = remote
        self.since_margin = since_margin
        self.batch_size = max(1, batch_size)
        self.history_passes = max(1, history_passes)
        self._git = shutil.which("git")
        if self._git is None:
            raise SourceError(NO_GIT)
        self._env = git_env()
        self.git_dir = self._discover(Path(git_dir))
        self._cut = ShallowCut(self.git_dir)
        self._trees, self._blobs = kept_trees(), kept_blobs()  # FileReads': recent tree listings, blob texts
        self._fresher_of: dict[tuple[str, str, str], str] = {}  # _fresher: (branch, local, tracking) → read
        self._tip_times: dict[str, int] = {}  # _tip_before: a tip's committer date (Unix seconds)
        hosted = self._hosted_remote()
        self._web_url = hosted.web_url if hosted else None
        self._own_name = hosted.name if hosted else None  # _where: what the clone says it is
        self.repo = (repo or "").strip() or (hosted.name if hosted else self._folder_name())

    # --- CommitSource -------------------------------------------------------------------------------

    async def commits_in_window(
        self, branch: str, start: datetime, end: datetime, progress: Progress | None = None
    ) -> list[Commit]:
        if start.tzinfo is None or end.tzinfo is None:
            raise ValueError("window bounds must be timezone-aware")
        tip = await self._resolve_branch(branch)
        return await self.read_commits(await self._shas_in_window(tip, start, end), progress)

    async def read_commits(self, shas: Sequence[str], progress: Progress | None = None) -> list[Commit]:
        """Full commits by their full shas, in that order, a batch at a time (eval's days: their history's)."""
        if progress:
            progress(0, len(shas))
        commits: list[Commit] = []
        for i in range(0, len(shas), self.batch_size):
            commits.extend(await self._load(shas[i : i + self.batch_size]))
            if progress:
                progress(len(commits), len(shas))
        return commits

    async def history_start(self, branch: str, start: datetime, end: datetime) -> datetime | None:
        """When the branch's history in this clone starts inside [start, end) (a shallow clone's cut): the
        window's commits before it may be missing. None when the clone holds the window's whole history."""
        if not self._shallow_cut():
            return None  # not shallow: no git call
        tip = await self._resolve_branch(branch)
        if not self._cut.walked(tip, start, end):  # commits_in_window noted it, unless the tip moved
            await self._shas_in_window(tip, start, end)
        return self._cut.start_in(tip, start, end)

    async def newest_before(self, branch: str, start: datetime) -> datetime | None:
        """The committer date of the branch's newest commit in this clone, when before start: the clone has
        nothing of a day from start on. A clone nobody updates reads as a quiet day; so does a quiet
        repository (a weekend): the digest says which to check, and a warning. None when the tip is newer."""
        newest = await self._tip_before(await self._resolve_branch(branch), start)
        if newest is not None:
            log.warning(
                "%s: the clone's newest commit on %s is from %s, before the day starting %s: is %s kept up"
                " to date (git fetch / a mirror)?",
                self.repo, branch, f"{newest:%Y-%m-%d %H:%M} UTC", f"{start:%Y-%m-%d %H:%M %Z}".strip(),
                self.git_dir,
            )  # fmt: skip
        return newest

    async def get_commit(self, ref: str) -> Commit:
        ref = ref.strip()
        if not _SHA_PREFIX.fullmatch(ref):
            raise InputError(
                f"not a commit SHA: {ref!r} (use 4 to 40 hex digits, 64 in a SHA-256 repository)"
            )
        ref = ref.lower()
        out = await self._git_async("rev-parse", f"--disambiguate={ref}")
        candidates = out.decode("ascii", "replace").split()
        commits = await self._only_commits(candidates)
        if not commits:
            raise RefNotFound(f"no commit {ref} in {self._where()}")
        if len(commits) > 1:
            listed = ", ".join(sorted(sha[:12] for sha in commits))
            raise AmbiguousRef(f"short SHA {ref} is ambiguous in {self._where()}: {listed}; give more digits")
        return (await self._load(commits))[0]

    async def commit_named(self, name: str) -> Commit:
        """The commit a git name resolves to: HEAD, HEAD~2, a branch, a tag (`digestbot analyze`)."""
        sha = await self._commit_of(name.strip()) if name.strip() else None
        if not sha:
            raise RefNotFound(f"no commit named {name!r} in {self._where()}")
        return (await self._load([sha]))[0]

    async def commit_for_pr(self, number: int, branch: str) -> Commit:
        if number <= 0:
            raise InputError(f"bad pull request number {number}")
        tip = await self._resolve_branch(branch)
        # git narrows the walk with a loose pattern; the title rule (as in Commit.pr_number) decides.
        out = await self._git_async(
            "log", "--first-parent", "-z", "--no-show-signature", "--encoding=UTF-8", "-E",
            f"--grep=\\(#{number}\\)", f"--grep=^Merge pull request #{number} from ",
            "--format=%H%x00%B", tip,
        )  # fmt: skip
        tokens = out.split(b"\0")
        for sha, message in zip(tokens[0::2], tokens[1::2], strict=False):
            if _lands_pr(text_of(message), number):
                return (await self._load([sha.decode("ascii")]))[0]
        raise RefNotFound(f"no commit for pull request #{number} on {branch!r} in {self._where()}")

    async def default_branch(self) -> str:
        """The branch HEAD names (a clone's default branch), else the remote's HEAD, else "main"."""
        for args in (
            ["symbolic-ref", "--quiet", "--short", "HEAD"],
            ["symbolic-ref", "--quiet", "--short", f"refs/remotes/{self.remote}/HEAD"],
        ):
            proc = await asyncio.to_thread(self._spawn, args)
            name = text_of(proc.stdout).strip() if proc.returncode == 0 else ""
            if name:
                return name.removeprefix(f"{self.remote}/") if args[-1] != "HEAD" else name
        return "main"

    async def history(
        self,
        branch: str,
        since: datetime,
        until: datetime,
        progress: Progress | None = None,
        *,
        counted: bool = True,
    ) -> list[PastCommit]:
        """The branch's first-parent commits with committer dates in [since, until), oldest first, with their
        messages and the paths they touched (no patches), no quota: the span's commits are listed (headers
        only, cheap), then read (history_reads.py). counted=False: the paths without their line counts (0),
        for commits whose counts come later (past_files). `progress` (called from worker threads) gets the
        commits read so far."""
        tip = await self._resolve_branch(branch)
        newest_first = await self._history_rows(
            await self._shas_in_window(tip, since, until), counted, progress
        )
        cut = self._shallow_cut()  # as in _commit: a commit at a shallow cut did not touch every path
        return [
            replace(c, files=()) if c.sha in cut else c
            for c in newest_first[::-1]
            if since <= c.committed_at < until
        ]

    async def list_paths(self, sha: str) -> list[str] | None:
        """Every file path at a commit, for the surface step (a local clone has no budget to keep)."""
        return await self.paths_at(sha)

    async def branch_tip(self, branch: str) -> str:
        """The full SHA of the branch's newest commit."""
        return await self._resolve_branch(branch)

    async def on_branch(self, sha: str, branch: str) -> bool:
        """Whether the commit is in the branch's history (False for one this clone does not have)."""
        args = ["merge-base", "--is-ancestor", sha, await self._resolve_branch(branch)]
        return is_full_object_name(sha) and not (await asyncio.to_thread(self._spawn, args)).returncode

    async def aclose(self) -> None:
        self._close_objects()  # the long-running `git cat-file` (file_reads.py), if one was started
        self._close_diffs()  # the long-running `git diff-tree` (patch_reads.py), if one was started

    # --- repository -----------------------------------------------------------------------------------

    def _discover(self, path: Path) -> Path:
        not_a_repo = SourceError(f"{path} is not a git repository")
        path = path.parent if path.name == ".git" and path.is_file() else path  # a work tree's "gitdir:" file
        if not path.is_dir():
            raise not_a_repo
        proc = self._spawn(["rev-parse", "--absolute-git-dir"], discover_from=path)
        if proc.returncode != 0:
            message = first_line(proc.stderr)
            if "not a git repository" in message.lower():
                raise not_a_repo
            raise SourceError(f"{path} is not a usable git repository: {message}")
        return Path(text_of(proc.stdout).strip())

    def _hosted_remote(self) -> RemoteRepo | None:
        # get-url applies url.<base>.insteadOf; the URL itself is never stored (it may hold a token).
        proc = self._spawn(["remote", "get-url", "--", self.remote])
        return parse_remote_url(text_of(proc.stdout)) if proc.returncode == 0 else None

    def _where(self) -> str:
        """The repository a lookup searched, for its error (remote.searched_where)."""
        return searched_where(self.repo, self._own_name or self._folder_name(), self.git_dir)

    def _folder_name(self) -> str:
        proc = self._spawn(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        common = Path(text_of(proc.stdout).strip()) if proc.returncode == 0 else self.git_dir
        # a work tree's git dir is <top>/.git; a bare repository is conventionally <name>.git
        folder = common.parent if common.name == ".git" else common
        return folder.name.removesuffix(".git") or folder.name

    async def _only_commits(self, candidates: Sequence[str]) -> list[str]:
        if not candidates:
            return []
        out = await self._git_async(
            "cat-file", "--batch-check=%(objectname) %(objecttype)", stdin="\n".join(candidates) + "\n"
        )
        rows = (line.split() for line in text_of(out).splitlines())
        return [row[0] for row in rows if len(row) == 2 and row[1] == "commit"]

    # --- commits --------------------------------------------------------------------------------------

    async def _shas_in_window(self, tip: str, start: datetime, end: datetime) -> list[str]:
        """First-parent commits with committer date in [start, end), newest first (ties: history order)."""
        args = ["rev-list", "--first-parent", "--timestamp"]
        since = int(start.timestamp() - self.since_margin.total_seconds())
        if since > 0:
            args.append(f"--since=@{since}")  # a pre-filter only: see DEFAULT_SINCE_MARGIN
        cut = self._shallow_cut()  # a window read in a shallow clone may miss commits: say so
        walked = stamped(await self._git_async(*args, tip))
        if since > 0:
            walked += await self._past_skew(walked[-1][1] if walked else tip, bool(walked), since)
        low, high = start.timestamp(), end.timestamp()
        self._cut.note_walk(self.repo, tip, walked, cut, start, end)  # refused when wholly past the cut
        # compared as Unix seconds: git takes dates past year 9999, which datetime cannot hold
        listed = [(stamp, sha) for stamp, sha in walked if low <= stamp < high]
        listed.sort(key=lambda item: -item[0])  # stable: equal dates keep history order
        return [sha for _, sha in listed]

    async def _past_skew(self, start: str, skip_start: bool, since: int) -> list[tuple[int, str]]:
        """The first-parent commits a --since walk pruned although newer than since: git stops at the first
        commit older than the bound, so one commit with a skewed clock (a 1970 date) hides all behind it.
        Pages older than where the walk stopped are read while a page still holds a commit at or after
        since; the normal case costs one small call, whose page holds none."""
        found: list[tuple[int, str]] = []
        page = SKEW_PAGE
        while True:
            args = ["rev-list", "--first-parent", "--timestamp", f"--max-count={page}"]
            out = await self._git_async(*args, *(["--skip=1"] if skip_start else []), start)
            rows = stamped(out)
            if not any(stamp >= since for stamp, _ in rows):
                return found
            found += rows
            if len(rows) < page:  # the root commit is in it
                return found
            start, skip_start, page = rows[-1][1], True, min(page * 2, MAX_SKEW_PAGE)

    async def _load(self, shas: Sequence[str]) -> list[Commit]:
        """Full commits for shas, in that order: one metadata call and one patch request (_patches) for the
        whole batch. The lines added and removed are counted in the patches (a `--numstat` beside `--raw`
        diffed every file a second time: a third of the reading's CPU); git's own count is asked for only when
        a commit's patches do not pair with its files one to one (never seen: both calls diff alike)."""
        stdin = "\n".join(shas) + "\n"

        def meta_call(*counts: str) -> Awaitable[bytes]:
            return self._git_async(
                "log", *LOG_OPTIONS, "-z", "--raw", *counts, "--date=raw", f"--format={META}", stdin=stdin
            )

        meta_out, patched = await asyncio.gather(meta_call(), self._patches(list(dict.fromkeys(shas))))
        metas = parse_meta(meta_out)
        patches = await recount(self._git_async, metas, patched)
        counted = all(len(patches.get(m.sha, ())) == len(m.files) for m in metas)
        if not counted:
            metas = parse_meta(await meta_call("--numstat"))
        cut = self._shallow_cut()
        by_sha = {m.sha: self._commit(m, patches.get(m.sha), counted, m.sha in cut) for m in metas}
        missing = [sha for sha in shas if sha not in by_sha]
        if missing:
            raise SourceError(f"git did not return commit {missing[0]} of {self.repo}")
        return [by_sha[sha] for sha in shas]

    def _commit(self, meta: Meta, patches: list[Patch] | None, counted: bool, at_cut: bool = False) -> Commit:
        # At a shallow clone's cut git diffs against the empty tree (its parent is not there): that is the
        # whole repository, not the commit's change. It is listed with no files; the warning says why.
        files = () if at_cut and not meta.parents else file_changes(meta.files, patches, counted)
        return Commit(
            repo=self.repo,
            sha=meta.sha,
            message=meta.message,
            author=meta.author,
            author_login=login_from_email(meta.email),  # a GitHub noreply address names the login
            committed_at=commit_time(meta.committed_at, meta.sha),
            parents=meta.parents,
            files=files,
            url=f"{self._web_url}/commit/{meta.sha}" if self._web_url else None,
        )

    def _shallow_cut(self) -> frozenset[str]:
        """The commits at a shallow clone's cut; the first time there are any, one warning (ShallowCut.read)."""
        return self._cut.read(self.repo)


def _lands_pr(message: str, number: int) -> bool:
    title = message.strip().split("\n", 1)[0].strip()
    squash = PR_IN_TITLE.search(title)
    return (squash is not None and int(squash[1]) == number) or title.startswith(
        f"Merge pull request #{number} from "
    )
