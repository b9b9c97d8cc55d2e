"""Commits from a local clone (bare or not) through the git CLI: no network, no token, no quota.

Every git call pins the options that shape its output (prefixes, colour, rename detection, encoding,
merge diffs ...) so that a user's git configuration cannot change what we parse. Output is parsed as
bytes: NUL-separated (-z) where paths appear, decoded with errors="replace" since commit messages and
diffs are untrusted and need not be UTF-8. Paths need not be UTF-8 either: one shown with a replacement
character is named to git again by its own bytes, found in the commit's tree (`_raw_names`).

Over 400 lines because it is one source: every read goes through the same pinned git invocation and byte
parsing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from analysis.errors import AmbiguousRef, InputError, RefNotFound, SourceError
from analysis.history.automation import is_automated, login_from_email
from analysis.history.followups import PastCommit
from analysis.history.index import BranchCommit
from analysis.models import PR_IN_TITLE, Commit, FileChange, FileTexts
from bot.ports.protocols import Progress

log = logging.getLogger(__name__)

# git prunes a --since walk at the first commit older than the bound, but committer dates along a
# first-parent history are not always monotonic (clock skew, rebased or cherry-picked commits). Walking
# back this far before the window absorbs small skews in the one walk (rev-list reads only commit headers,
# no diffs); larger ones (a 1970 clock) are walked past page by page (_past_skew). The exact window is
# applied in Python.
DEFAULT_SINCE_MARGIN = timedelta(days=30)
# Past where the --since walk stopped, the first-parent history is read in pages (doubling up to the
# largest) while a page still holds commits at or after the bound: see LocalGitSource._past_skew.
SKEW_PAGE, MAX_SKEW_PAGE = 16, 4096
BATCH_SIZE = 50  # commits per `git log -p` call: few processes, bounded output per call
GIT_TIMEOUT = 300.0  # seconds; only local work, so anything longer is a hung process
# `git log --numstat` diffs every file of every commit: months of history are seconds of one core (the
# file list alone is a tenth of that). A long span is read by one process per core, in contiguous parts.
HISTORY_PASSES = max(1, min(4, os.cpu_count() or 1))
MIN_COMMITS_PER_PASS = 250  # fewer are not worth a process of their own

_SHA_PREFIX = re.compile(r"[0-9a-fA-F]{4,40}")
_FULL_SHA = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_NUMSTAT = re.compile(rb"(\d+|-)\t(\d+|-)\t(.*)", re.DOTALL)
_REMOTE_NAME = re.compile(r"[\w.][\w./-]*")
_URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")  # credentials in a URL, to scrub from git's messages
_SCP_LIKE = re.compile(r"(?:[^@/\s]+@)?(?P<host>[^:/\s]+):(?P<path>[^/].*)")  # [user@]host:owner/name
_PATH_SEGMENT = re.compile(r"[\w.-]+")
_RAW_OFFSET = re.compile(r"([+-])(\d\d)(\d\d)")  # the offset of git's raw date
_WEB_SCHEMES = {"https": "https", "http": "http", "ssh": "https", "git": "https", "git+ssh": "https"}
_HOST_ALIASES = {"ssh.github.com": "github.com"}  # GitHub's ssh-over-443 endpoint

NO_GIT = "git is not installed (or not on PATH); it is needed to read a local clone"
_STATUS = {"A": "added", "M": "modified", "D": "removed", "R": "renamed", "C": "copied", "T": "changed"}

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
# `git log` options shared by the metadata and the patch call: both must see the very same files.
_LOG_OPTIONS = (
    "--no-walk=unsorted",
    "--stdin",
    "--no-show-signature",
    "--no-mailmap",  # the author as recorded, as GitHub reports it
    "--no-notes",
    "--no-decorate",
    "--encoding=UTF-8",
    "--no-ext-diff",
    "--no-textconv",
    "--no-relative",
    "--root",  # the root commit diffs against the empty tree
    "--diff-merges=first-parent",  # a merge shows what it brought into the branch
    "-M",  # GitHub reports renames
    f"-O{os.devnull}",  # no diff.orderFile reordering
    "--diff-algorithm=myers",
    "--indent-heuristic",
    "--submodule=short",
)
# The committer date as git stores it (%cd with --date=raw: '<unix seconds> <+hhmm>'): git dies formatting
# %cI for a local time before 1970 (a reset clock west of UTC), and the offset may be one no zone has
# (+2500, -9959: old importers wrote such dates, git fsck lets them be).
_META = "%H%x00%P%x00%an%x00%ae%x00%cd%x00%B"  # see _parse_meta
_PATCH_OPTIONS = (
    "-p",
    "--no-color",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--unified=3",
    "--inter-hunk-context=0",
)


@dataclass(frozen=True, slots=True)
class RemoteRepo:
    """A hosted repository read from a remote URL (never holds the URL or its credentials)."""

    name: str  # owner/name
    web_url: str  # https://host/owner/name


def parse_remote_url(url: str) -> RemoteRepo | None:
    """owner/name and web page of a remote such as https://github.com/o/n(.git), git@github.com:o/n.git or
    ssh://git@host/o/n.git; None for local paths, file:// URLs and paths that are not owner/name."""
    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        web_scheme = _WEB_SCHEMES.get(parts.scheme.lower())
        try:
            host, port = parts.hostname, parts.port  # hostname drops user:password@
        except ValueError:
            return None
        if web_scheme is None or not host:
            return None
        keep_port = port is not None and parts.scheme.lower() == web_scheme  # an ssh port is not a web port
        path = parts.path
    else:
        match = _SCP_LIKE.fullmatch(url)
        if match is None:
            return None
        web_scheme, host, port, keep_port, path = "https", match["host"].lower(), None, False, match["path"]
    segments = [s for s in path.split("/") if s]
    if len(segments) != 2:
        return None
    owner, name = segments[0], segments[1].removesuffix(".git")
    if not (_PATH_SEGMENT.fullmatch(owner) and _PATH_SEGMENT.fullmatch(name)):
        return None
    host = _HOST_ALIASES.get(host, host)
    netloc = f"[{host}]" if ":" in host else host
    if keep_port:
        netloc = f"{netloc}:{port}"
    return RemoteRepo(f"{owner}/{name}", f"{web_scheme}://{netloc}/{owner}/{name}")


def redact(text: str) -> str:
    """Text without credentials embedded in URLs (https://user:token@host → https://host)."""
    return _URL_USERINFO.sub("", text)


class LocalGitSource:
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
        self._env = {k: v for k, v in os.environ.items() if k not in _STRIP_ENV}
        self._env.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
        self.git_dir = self._discover(Path(git_dir))
        self._shallow_file = _common_dir(self.git_dir) / "shallow"
        self._told_shallow = False
        hosted = self._hosted_remote()
        self._web_url = hosted.web_url if hosted else None
        self.repo = (repo or "").strip() or (hosted.name if hosted else self._folder_name())

    # --- CommitSource -------------------------------------------------------------------------------

    async def commits_in_window(
        self, branch: str, start: datetime, end: datetime, progress: Progress | None = None
    ) -> list[Commit]:
        if start.tzinfo is None or end.tzinfo is None:
            raise ValueError("window bounds must be timezone-aware")
        tip = await self._resolve_branch(branch)
        shas = await self._shas_in_window(tip, start, end)
        if progress:
            progress(0, len(shas))
        commits: list[Commit] = []
        for i in range(0, len(shas), self.batch_size):
            commits.extend(await self._load(shas[i : i + self.batch_size]))
            if progress:
                progress(len(commits), len(shas))
        return commits

    async def get_commit(self, ref: str) -> Commit:
        ref = ref.strip()
        if not _SHA_PREFIX.fullmatch(ref):
            raise InputError(f"not a commit SHA: {ref!r} (use 4 to 40 hex digits)")
        ref = ref.lower()
        out = await self._git_async("rev-parse", f"--disambiguate={ref}")
        candidates = out.decode("ascii", "replace").split()
        commits = await self._only_commits(candidates)
        if not commits:
            raise RefNotFound(f"no commit {ref} in {self.repo}")
        if len(commits) > 1:
            listed = ", ".join(sorted(sha[:12] for sha in commits))
            raise AmbiguousRef(f"short SHA {ref} is ambiguous in {self.repo}: {listed}; give more digits")
        return (await self._load(commits))[0]

    async def commit_named(self, name: str) -> Commit:
        """The commit a git name resolves to: HEAD, HEAD~2, a branch, a tag (`digestbot analyze`)."""
        sha = await self._commit_of(name.strip()) if name.strip() else None
        if not sha:
            raise RefNotFound(f"no commit named {name!r} in {self.repo}")
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
            if _lands_pr(_text(message), number):
                return (await self._load([sha.decode("ascii")]))[0]
        raise RefNotFound(f"no commit for pull request #{number} on {branch!r} in {self.repo}")

    async def default_branch(self) -> str:
        """The branch HEAD names (a clone's default branch), else the remote's HEAD, else "main"."""
        for args in (
            ["symbolic-ref", "--quiet", "--short", "HEAD"],
            ["symbolic-ref", "--quiet", "--short", f"refs/remotes/{self.remote}/HEAD"],
        ):
            proc = await asyncio.to_thread(self._spawn, args)
            name = _text(proc.stdout).strip() if proc.returncode == 0 else ""
            if name:
                return name.removeprefix(f"{self.remote}/") if args[-1] != "HEAD" else name
        return "main"

    async def history(
        self, branch: str, since: datetime, until: datetime, progress: Progress | None = None
    ) -> list[PastCommit]:
        """The branch's first-parent commits with committer dates in [since, until), oldest first,
        with their messages and the paths they touched (no patches), no quota: the span's commits are
        listed (headers only, cheap), then `git log` reads exactly those as it streams, so no commit
        outside the span costs a diff: one process per part of a long span (HISTORY_PASSES at once).
        `progress` (called from worker threads) gets the commits read so far."""
        tip = await self._resolve_branch(branch)
        shas = await self._shas_in_window(tip, since, until)
        if not shas:
            return []
        nonce = secrets.token_hex(16)
        args = ["log", "--no-walk=unsorted", "--stdin", "--diff-merges=first-parent", "--no-renames"]
        args += ["--numstat", "--encoding=UTF-8", f"--format={nonce}%H %ct%x09%an%x09%ae%n%B{nonce}"]
        counter = _ReadCount(len(shas), progress)
        parts = _parts(shas, min(self.history_passes, -(-len(shas) // MIN_COMMITS_PER_PASS)))
        outs = await asyncio.gather(
            *(
                asyncio.to_thread(self._stream_history, args, "\n".join(p) + "\n", nonce, counter)
                for p in parts
            )
        )
        # the parts are contiguous runs of the newest-first list: joined in order, the output is one pass's
        newest_first = _parse_history(_text(b"".join(outs)), nonce)
        cut = self._shallow_cut()  # as in _commit: a commit at a shallow cut did not touch every path
        return [
            replace(c, files=()) if c.sha in cut else c
            for c in newest_first[::-1]
            if since <= c.committed_at < until
        ]

    def _stream_history(self, args: list[str], stdin: str, nonce: str, counter: _ReadCount) -> bytes:
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
                raise SourceError(f"git log failed in {self.git_dir}: {_first_line(errors.read())}")
        counter.add(total - told)
        return b"".join(chunks)

    async def read_files(self, wanted: Sequence[tuple[str, str]], *, max_bytes: int) -> FileTexts:
        """The text of each (commit sha, path) for the surface facts: one `git cat-file --batch-check` for
        types and sizes, then one `git cat-file --batch` for the blobs under max_bytes (a file over it, a
        binary or a submodule is skipped, never half-read). No quota: everything asked is answered."""
        asked = [(sha, path) for sha, path in dict.fromkeys(wanted) if "\n" not in path and "\r" not in path]
        result = FileTexts({}, set())
        named = {spec: raw for spec, raw in (await self._raw_names(asked)).items() if raw is not None}
        result.skipped.update(spec for spec in asked if spec not in named)
        specs = list(named)
        if not specs:
            return result
        lines = b"".join(f"{sha}:".encode() + raw + b"\n" for (sha, _), raw in named.items())
        checked = await self._git_async(
            "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)", stdin=lines
        )
        blobs: dict[str, list[tuple[str, str]]] = {}
        for spec, row in zip(specs, checked.split(b"\n"), strict=False):
            parts = row.split()
            if len(parts) == 2 and parts[1] == b"missing":
                result.texts[spec] = None
            elif len(parts) == 3 and parts[1] == b"blob" and int(parts[2]) <= max_bytes:
                blobs.setdefault(parts[0].decode("ascii"), []).append(spec)
            else:
                result.skipped.add(spec)
        if blobs:
            out = await self._git_async("cat-file", "--batch", stdin="".join(f"{oid}\n" for oid in blobs))
            for oid, data in _parse_batch(out):
                text = None if b"\0" in data else data.decode("utf-8", "replace")
                for spec in blobs.get(oid, ()):
                    if text is None:
                        result.skipped.add(spec)
                    else:
                        result.texts[spec] = text
        return result

    async def list_paths(self, sha: str) -> list[str] | None:
        """Every file path at a commit, for the surface step (a local clone has no budget to keep)."""
        return await self.paths_at(sha)

    async def branch_tip(self, branch: str) -> str:
        """The full SHA of the branch's newest commit."""
        return await self._resolve_branch(branch)

    async def paths_at(self, sha: str) -> list[str]:
        """Every file path in the commit's tree."""
        out = await self._git_async("ls-tree", "-r", "-z", "--name-only", "--full-tree", sha)
        return [_text(p) for p in out.split(b"\0") if p]

    async def text_at(self, sha: str, path: str) -> str | None:
        """A file's text as of the commit (UTF-8, undecodable bytes replaced); None when it has no such file."""
        raw = (await self._raw_names([(sha, path)]))[sha, path]
        if raw is None:
            return None
        proc = await asyncio.to_thread(self._spawn, ["cat-file", "blob", f"{sha}:".encode() + raw])
        return _text(proc.stdout) if proc.returncode == 0 else None

    async def _raw_names(self, specs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], bytes | None]:
        """The bytes git names each (commit sha, path) by. A path shown with a replacement character had
        bytes that are not UTF-8: its own are found among the paths of that commit's tree (none there: git
        answers "missing" for it); None when more than one shows so, or the tree was not listed (its text
        is then not read, never taken for an absent file)."""
        trees: dict[str, dict[str, list[bytes]] | None] = {}
        names: dict[tuple[str, str], bytes | None] = {}
        for sha, path in specs:
            if "\ufffd" not in path:
                names[sha, path] = path.encode()
                continue
            if sha not in trees:
                proc = await asyncio.to_thread(
                    self._spawn, ["ls-tree", "-r", "-z", "--name-only", "--full-tree", sha]
                )
                shown: dict[str, list[bytes]] | None = {} if proc.returncode == 0 else None
                for raw in proc.stdout.split(b"\0") if shown is not None else ():
                    if "\ufffd" in (text := _text(raw)):
                        shown.setdefault(text, []).append(raw)
                trees[sha] = shown
            listed = trees[sha]
            found = listed.get(path, [path.encode()]) if listed is not None else []
            names[sha, path] = found[0] if len(found) == 1 else None
        return names

    async def aclose(self) -> None:
        return None

    # --- repository -----------------------------------------------------------------------------------

    def _discover(self, path: Path) -> Path:
        not_a_repo = SourceError(f"{path} is not a git repository")
        if not path.is_dir():
            raise not_a_repo
        proc = self._spawn(["rev-parse", "--absolute-git-dir"], discover_from=path)
        if proc.returncode != 0:
            message = _first_line(proc.stderr)
            if "not a git repository" in message.lower():
                raise not_a_repo
            raise SourceError(f"{path} is not a usable git repository: {message}")
        return Path(_text(proc.stdout).strip())

    def _hosted_remote(self) -> RemoteRepo | None:
        # get-url applies url.<base>.insteadOf; the URL itself is never stored (it may hold a token).
        proc = self._spawn(["remote", "get-url", "--", self.remote])
        return parse_remote_url(_text(proc.stdout)) if proc.returncode == 0 else None

    def _folder_name(self) -> str:
        proc = self._spawn(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        common = Path(_text(proc.stdout).strip()) if proc.returncode == 0 else self.git_dir
        # a work tree's git dir is <top>/.git; a bare repository is conventionally <name>.git
        folder = common.parent if common.name == ".git" else common
        return folder.name.removesuffix(".git") or folder.name

    async def _resolve_branch(self, branch: str) -> str:
        name = branch.strip()
        if name:
            for candidate in (f"refs/heads/{name}", f"refs/remotes/{self.remote}/{name}", name):
                sha = await self._commit_of(candidate)
                if sha:
                    return sha
        known = await self._known_branches()
        listed = ", ".join(known[:20]) + (f", … ({len(known) - 20} more)" if len(known) > 20 else "")
        raise InputError(f"unknown branch {branch!r} in {self.repo}; known branches: {listed or '(none)'}")

    async def _commit_of(self, ref: str) -> str | None:
        proc = await asyncio.to_thread(
            self._spawn, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"]
        )
        return _text(proc.stdout).strip() if proc.returncode == 0 else None

    async def _known_branches(self) -> list[str]:
        out = await self._git_async(
            "for-each-ref", "--format=%(refname:short)", "refs/heads/", f"refs/remotes/{self.remote}/"
        )
        names = [n for n in _text(out).splitlines() if n and not n.endswith("/HEAD") and n != self.remote]
        return list(dict.fromkeys(names))

    async def _only_commits(self, candidates: Sequence[str]) -> list[str]:
        if not candidates:
            return []
        out = await self._git_async(
            "cat-file", "--batch-check=%(objectname) %(objecttype)", stdin="\n".join(candidates) + "\n"
        )
        rows = (line.split() for line in _text(out).splitlines())
        return [row[0] for row in rows if len(row) == 2 and row[1] == "commit"]

    # --- commits --------------------------------------------------------------------------------------

    async def _shas_in_window(self, tip: str, start: datetime, end: datetime) -> list[str]:
        """First-parent commits with committer date in [start, end), newest first (ties: history order)."""
        args = ["rev-list", "--first-parent", "--timestamp"]
        since = int(start.timestamp() - self.since_margin.total_seconds())
        if since > 0:
            args.append(f"--since=@{since}")  # a pre-filter only: see DEFAULT_SINCE_MARGIN
        self._shallow_cut()  # a window read in a shallow clone may miss commits: say so
        walked = _stamped(await self._git_async(*args, tip))
        if since > 0:
            walked += await self._past_skew(walked[-1][1] if walked else tip, bool(walked), since)
        low, high = start.timestamp(), end.timestamp()
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
            rows = _stamped(out)
            if not any(stamp >= since for stamp, _ in rows):
                return found
            found += rows
            if len(rows) < page:  # the root commit is in it
                return found
            start, skip_start, page = rows[-1][1], True, min(page * 2, MAX_SKEW_PAGE)

    async def _load(self, shas: Sequence[str]) -> list[Commit]:
        """Full commits for shas, in that order: one metadata and one patch call for the whole batch. The
        lines added and removed are counted in the patches (a `--numstat` beside `--raw` diffed every file a
        second time: a third of the reading's CPU); git's own count is asked for only when a commit's
        patches do not pair with its files one to one (never seen: both calls diff alike)."""
        nonce = secrets.token_hex(16)
        stdin = "\n".join(shas) + "\n"

        def meta_call(*counts: str) -> Awaitable[bytes]:
            return self._git_async(
                "log", *_LOG_OPTIONS, "-z", "--raw", *counts, "--date=raw", f"--format={_META}", stdin=stdin
            )

        meta_out, patch_out = await asyncio.gather(
            meta_call(),
            self._git_async("log", *_LOG_OPTIONS, *_PATCH_OPTIONS, f"--format={nonce}%H", stdin=stdin),
        )
        patches = _parse_patches(patch_out, nonce.encode())
        metas = _parse_meta(meta_out)
        counted = all(len(patches.get(m.sha, ())) == len(m.files) for m in metas)
        if not counted:
            metas = _parse_meta(await meta_call("--numstat"))
        cut = self._shallow_cut()
        by_sha = {m.sha: self._commit(m, patches.get(m.sha), counted, m.sha in cut) for m in metas}
        missing = [sha for sha in shas if sha not in by_sha]
        if missing:
            raise SourceError(f"git did not return commit {missing[0]} of {self.repo}")
        return [by_sha[sha] for sha in shas]

    def _commit(
        self, meta: _Meta, patches: list[_Patch] | None, counted: bool, at_cut: bool = False
    ) -> Commit:
        # At a shallow clone's cut git diffs against the empty tree (its parent is not there): that is the
        # whole repository, not the commit's change. It is listed with no files; the warning says why.
        files = () if at_cut and not meta.parents else _changes(meta.files, patches, counted)
        return Commit(
            repo=self.repo,
            sha=meta.sha,
            message=meta.message,
            author=meta.author,
            author_login=login_from_email(meta.email),  # a GitHub noreply address names the login
            committed_at=_commit_time(meta.committed_at, meta.sha),
            parents=meta.parents,
            files=files,
            url=f"{self._web_url}/commit/{meta.sha}" if self._web_url else None,
        )

    def _shallow_cut(self) -> frozenset[str]:
        """The commits at a shallow clone's cut (their parents were not fetched), read from git's
        `shallow` file; the first time it lists any, one warning says what that costs and how to fix it."""
        try:
            cut = frozenset(self._shallow_file.read_text("ascii", "replace").split())
        except OSError:  # no such file: not a shallow clone
            return frozenset()
        if cut and not self._told_shallow:
            self._told_shallow = True
            log.warning(
                "%s is a shallow clone (%s): commits older than its cut are not listed, and the %d "
                "commit(s) at the cut are listed with no changed files (git has no parent to diff them "
                "against); run `git fetch --unshallow`, or `git fetch --shallow-since=<date>` with a date "
                "before the oldest day you read, in that clone",
                self.repo, self.git_dir, len(cut),
            )  # fmt: skip
        return cut

    # --- running git ----------------------------------------------------------------------------------

    def _spawn(
        self,
        args: Sequence[str | bytes],
        stdin: str | bytes | None = None,
        *,
        discover_from: Path | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        # An explicit --git-dir once discovered: no second discovery, no surprise from the cwd.
        where = ["-C", str(discover_from)] if discover_from else [f"--git-dir={self.git_dir}"]
        base = [self._git or "git", "--no-pager", *where]
        for setting in _CONFIG:
            base += ["-c", setting]
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
        base = [self._git or "git", "--no-pager", f"--git-dir={self.git_dir}"]
        for setting in _CONFIG:
            base += ["-c", setting]
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
            raise SourceError(f"git {args[0]} failed in {self.git_dir}: {_first_line(proc.stderr)}")
        return proc.stdout


@dataclass(frozen=True, slots=True)
class _File:
    path: str
    status: str
    additions: int
    deletions: int
    binary: bool
    previous_path: str | None


@dataclass(frozen=True, slots=True)
class _Meta:
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    committed_at: str
    message: str
    files: list[_File]


def _parse_meta(out: bytes) -> list[_Meta]:
    """Parse `git log -z --raw [--numstat] --format=<_META>` (without --numstat every file counts as "-").

    Per commit: six header tokens, then raw entries (':modes shas status', then one path, two for
    renames and copies), then any numstat entries ('add<TAB>del<TAB>path', or 'add<TAB>del<TAB>' then two
    paths). Messages cannot hold NUL, paths are consumed by their entry, so the token stream is exact."""
    tokens = out.split(b"\0")
    commits: list[_Meta] = []
    i = 0
    while i < len(tokens):
        if not tokens[i].strip():  # the terminator after the last commit
            i += 1
            continue
        if len(tokens) < i + 6 or not _FULL_SHA.fullmatch(tokens[i]):
            raise SourceError("unexpected output from git log")
        sha, parents, author, email, date, message = tokens[i : i + 6]
        i += 6
        raw: list[tuple[str, list[str]]] = []
        stats: list[tuple[str, str, list[str]]] = []
        while i < len(tokens):
            token = tokens[i].lstrip(b"\n")
            if token.startswith(b":"):
                status = _text(token.split()[-1])
                width = 2 if status[:1] in ("R", "C") else 1
                raw.append((status, [_text(p) for p in tokens[i + 1 : i + 1 + width]]))
                i += 1 + width
            elif match := _NUMSTAT.fullmatch(token):
                width = 2 if not match[3] else 0
                paths = [_text(p) for p in tokens[i + 1 : i + 1 + width]] if width else [_text(match[3])]
                stats.append((_text(match[1]), _text(match[2]), paths))
                i += 1 + width
            else:
                break
        commits.append(
            _Meta(
                sha=_text(sha),
                parents=tuple(_text(parents).split()),
                author=_text(author),
                email=_text(email),
                committed_at=_text(date).strip(),
                message=_text(message),
                files=_files(raw, stats),
            )
        )
    return commits


def _files(raw: list[tuple[str, list[str]]], stats: list[tuple[str, str, list[str]]]) -> list[_File]:
    # --raw and --numstat list the same diff queue in the same order; match by path to be safe.
    counts = {paths[-1]: (add, delete) for add, delete, paths in stats if paths}
    files = []
    for status, paths in raw:
        add, delete = counts.get(paths[-1], ("-", "-"))
        binary = add == "-" or delete == "-"
        files.append(
            _File(
                path=paths[-1],
                status=_STATUS.get(status[:1], "changed"),
                additions=0 if binary else int(add),
                deletions=0 if binary else int(delete),
                binary=binary,
                previous_path=paths[0] if len(paths) == 2 else None,
            )
        )
    return files


@dataclass(frozen=True, slots=True)
class _Patch:
    """One file section of a commit's patch: its hunks (None: none) and the lines they add and remove, as
    `--numstat` counts them; binary: git said "Binary files ... differ" (no count, as numstat's "-")."""

    hunks: str | None
    additions: int
    deletions: int
    binary: bool


def _parse_patches(out: bytes, nonce: bytes) -> dict[str, list[_Patch]]:
    """Per commit sha, per file section ('diff --git' ...), the hunks from the first '@@' on (GitHub's
    `patch` field), or None when the section has none (binary, pure rename, mode change, empty file), with
    the lines the hunks add and remove.

    Lines inside a diff are always prefixed (' ', '+', '-', '\\'), so a line starting with the random
    nonce is a commit header and a line starting with 'diff --git ' is a file header. Lines end at "\n"
    only: \r, \f and friends are content. Cut by searching, not line by line (tens of megabytes a span)."""
    sections: dict[str, list[_Patch]] = {}
    heads = _nonce_lines(out, nonce)
    for n, (_, start, sha) in enumerate(heads):
        end = heads[n + 1][0] if n + 1 < len(heads) else len(out)
        # from the header line's own newline on: every line of the commit follows a "\n"
        files = out[start:end].split(b"\ndiff --git ")[1:]
        sections.setdefault(_text(sha), []).extend(map(_section, files))
    return sections


def _nonce_lines(out: bytes, nonce: bytes) -> list[tuple[int, int, bytes]]:
    """(where it starts, where it ends, the sha) of every line that is the nonce and a full sha, in order."""
    found: list[tuple[int, int, bytes]] = []
    at = out.find(nonce)
    while at >= 0:
        end = out.find(b"\n", at)
        end = len(out) if end < 0 else end
        sha = out[at + len(nonce) : end]
        if (at == 0 or out[at - 1] == 0x0A) and _FULL_SHA.fullmatch(sha):
            found.append((at, end, sha))
        at = out.find(nonce, at + 1)
    return found


def _section(text: bytes) -> _Patch:
    """A file section from after its 'diff --git ' on: the rest of that line, the headers, the hunks."""
    at = text.find(b"\n@@")  # no header line starts with "@@"
    if at < 0:  # headers only: a binary file's one line says so
        return _Patch(None, 0, 0, b"\nBinary files " in text)
    body = text[at + 1 :].rstrip(b"\n")  # the output's final newlines; a blank context line is " "
    # starts with "@@": every added or removed line follows a newline
    return _Patch(_text(body), body.count(b"\n+"), body.count(b"\n-"), False)


def _parts(items: list[str], n: int) -> list[list[str]]:
    """`items` cut into n (at least one) contiguous runs of nearly equal length, in order."""
    n = max(1, min(n, len(items)))
    size, extra = divmod(len(items), n)
    cuts = [i * size + min(i, extra) for i in range(n + 1)]
    return [items[cuts[i] : cuts[i + 1]] for i in range(n)]


class _ReadCount:
    """The commits the history passes have read, summed and reported in order: one running total for the
    progress bar, whichever worker thread read them."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total = total
        self.read = 0
        self._progress = progress
        self._lock = threading.Lock()

    def add(self, n: int) -> None:
        """n more read; each pass adds up to its own count, so the passes together end at the total."""
        if self._progress is None or n <= 0:
            return
        with self._lock:
            self.read += n
            self._progress(self.read, self.total)


def _parse_history(text: str, nonce: str) -> list[PastCommit]:
    """`git log --numstat` output whose headers and messages are framed by nonce, newest first."""
    parts = text.split(nonce)
    # parts: ["", "<sha> <ct>\t<name>\t<email>\n<message>", "\n<numstat lines>\n", ...]
    result: list[PastCommit] = []
    for i in range(1, len(parts) - 1, 2):
        head, _, message = parts[i].partition("\n")
        head, _, who = head.partition("\t")
        name, _, email = who.partition("\t")
        sha, _, stamp = head.partition(" ")
        files = []
        for line in parts[i + 1].splitlines():
            added, tab, rest = line.partition("\t")
            deleted, tab2, path = rest.partition("\t")
            if tab and tab2 and path:
                lines = (int(added) if added.isdigit() else 0) + (int(deleted) if deleted.isdigit() else 0)
                files.append((path, lines))
        result.append(
            BranchCommit(
                sha,
                datetime.fromtimestamp(int(stamp), UTC),  # listed in the span, so a date datetime holds
                message.rstrip("\n"),
                tuple(files),
                automated=is_automated(name, login_from_email(email), email),
            )
        )
    return result


def _commit_time(raw: str, sha: str) -> datetime:
    """A commit's date from git's raw '<unix seconds> <+hhmm>': the instant, shown in the commit's own
    offset when a Python timezone can hold it (strictly within a day), else in UTC: the day is never lost."""
    stamp, _, zone_text = raw.partition(" ")
    match = _RAW_OFFSET.fullmatch(zone_text.strip())
    zone = UTC
    if match:
        offset = timedelta(hours=int(match[2]), minutes=int(match[3])) * (-1 if match[1] == "-" else 1)
        zone = timezone(offset) if abs(offset) < timedelta(hours=24) else UTC
    try:
        return datetime.fromtimestamp(int(stamp), zone)
    except (OverflowError, OSError, ValueError):  # git takes dates past year 9999; no window holds them
        raise SourceError(f"commit {sha[:12]} has a committer date past year 9999 (@{stamp})") from None


def _changes(files: list[_File], patches: list[_Patch] | None, counted: bool) -> tuple[FileChange, ...]:
    """The commit's files; counted: the lines added and removed are the patches' (else the files' own, from
    `--numstat`)."""
    if patches is None or len(patches) != len(files):
        # Should not happen (both calls diff alike); never pair a patch with the wrong file.
        return tuple(_change(f, f.binary, f.additions, f.deletions, None) for f in files)
    if not counted:
        return tuple(
            _change(f, f.binary, f.additions, f.deletions, p.hunks)
            for f, p in zip(files, patches, strict=True)
        )
    return tuple(
        _change(f, p.binary, p.additions, p.deletions, p.hunks) for f, p in zip(files, patches, strict=True)
    )


def _change(f: _File, binary: bool, additions: int, deletions: int, hunks: str | None) -> FileChange:
    return FileChange(
        path=f.path,
        status=f.status,
        additions=0 if binary else additions,
        deletions=0 if binary else deletions,
        patch=None if binary else hunks,
        previous_path=f.previous_path,
    )


def _common_dir(git_dir: Path) -> Path:
    """Where a repository's shared files are (`shallow` among them): a linked work tree's git dir names
    it in its `commondir` file, as git itself reads it."""
    try:
        pointer = (git_dir / "commondir").read_text("utf-8").strip()
    except OSError:
        return git_dir
    return (git_dir / pointer).resolve() if pointer else git_dir


def _stamped(out: bytes) -> list[tuple[int, str]]:
    """`git rev-list --timestamp` output: (committer Unix time, sha) per commit, in walk order."""
    rows = []
    for line in _text(out).splitlines():
        stamp, _, sha = line.partition(" ")
        rows.append((int(stamp), sha))
    return rows


def _parse_batch(out: bytes) -> list[tuple[str, bytes]]:
    """`git cat-file --batch` output: "<oid> <type> <size>\\n<content>\\n" per object."""
    found = []
    i = 0
    while i < len(out):
        end = out.find(b"\n", i)
        if end < 0:
            break
        header = out[i:end].split()
        if len(header) != 3:
            i = end + 1
            continue
        size = int(header[2])
        found.append((header[0].decode("ascii"), out[end + 1 : end + 1 + size]))
        i = end + 1 + size + 1
    return found


def _lands_pr(message: str, number: int) -> bool:
    title = message.strip().split("\n", 1)[0].strip()
    squash = PR_IN_TITLE.search(title)
    return (squash is not None and int(squash[1]) == number) or title.startswith(
        f"Merge pull request #{number} from "
    )


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _first_line(stderr: bytes) -> str:
    lines = [line.strip() for line in redact(_text(stderr)).splitlines() if line.strip()]
    fatal = [line for line in lines if line.lower().startswith(("fatal:", "error:"))]
    return (fatal or lines or ["no details"])[0]
