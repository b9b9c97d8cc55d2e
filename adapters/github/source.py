"""GitHub REST source: a branch's commits in a time window, one commit by SHA, or a pull request's commit.

The source lists commits with `since`/`until`, keeps the branch's first-parent history, then fetches each
new commit's detail (files and patches) concurrently under a bound. Commits are immutable, so anything
already in the store is never fetched again; list pages and pull requests are revalidated with ETags
(a 304 costs no rate-limit quota). Rate limits are waited out up to `max_wait`, then reported.
The token only ever lives in the HTTP client's headers: no message or log line includes it.

Over 400 lines because it is one client: listing, details, pull requests, history and blobs share its request
path (ETags, rate-limit waits, error mapping). Reading GitHub's JSON into the domain is shapes.py's; the
first-parent chain is chain.py's.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import math
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx
import tenacity

from adapters.github.chain import Node, first_parent_shas, needs_history_above
from adapters.github.shapes import (
    MAX_FILES,
    ShapeError,
    commit_from_api,
    decoded,
    field_of,
    files_capped,
    node_of,
    object_of,
    page_files,
    tree_blobs,
    tree_paths,
)
from adapters.http_headers import finite_number, retry_after
from analysis.errors import AmbiguousRef, InputError, RateLimited, RefNotFound, SourceError, SourceRefused
from analysis.history.automation import is_automated
from analysis.history.followups import PastCommit
from analysis.history.index import BranchCommit
from analysis.models import PR_IN_TITLE, Commit, FileChange, FileTexts
from analysis.refs import is_full_object_name
from analysis.titles import merge_pr, message_title
from bot.ports.protocols import CommitStore, Progress
from bot.ports.secrets import clip, without_scheme

# A whole answer may take this many read timeouts: a large commit's page on a slow link is read in full, an
# answer that trickles in a byte at a time (httpx's timeout restarts at every read) is still bounded.
WHOLE_ANSWER_READS = 4
log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[Any]]

API_VERSION = "2022-11-28"
# GitHub pages a commit's files 300 at a time (10 pages); a server paging them smaller still ends well
# within this, a pagination that runs past it is broken.
MAX_FILE_PAGES = 30
PER_PAGE = 100
MAX_WINDOW_PAGES = 100  # 10 000 commits in one window: surely a wrong window, not a day
MAX_ABOVE_PAGES = 10  # history above the window read to settle the first-parent chain
HISTORY_MAX_PAGES = 200  # 20 000 commits of history for the judgment signals; older ones are not read
HISTORY_DETAILS = 200  # commit details fetched per history read for the paths they touched
HISTORY_PAGES_ANONYMOUS = 3  # without GITHUB_TOKEN: the newest 300 commits of history, no details
# File reads for the surface facts (one request per file version) per source, i.e. per run: with a token
# a day's worth; without one (60 requests an hour) so few that the day's commits still come through.
SURFACE_READS = 1500
SURFACE_READS_ANONYMOUS = 12
KEPT_TREES = 2  # recursive trees kept per source: a batch's listing serves its paths and its blob ids
MAX_RETRIES = 3  # 5xx and network failures
MAX_RATE_WAITS = 5
SECONDARY_WAIT = 60.0  # GitHub's advice when a limit gives no time: wait at least a minute
RATE_WAIT_CAP = 86400.0  # GitHub's limits reset within the hour: a longer asked wait is a broken header

_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SHA = re.compile(r"^[0-9a-f]{4,40}$")


@dataclass(frozen=True, slots=True)
class _Page:
    data: Any
    next_url: str | None


class _ServerError(Exception):
    """A 5xx answer, raised inside the retry loop so tenacity retries it."""

    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


class _HTTPStatus(Exception):
    """A 4xx answer the caller has to put into words (404 and 422 mean different things per endpoint)."""

    def __init__(self, status: int, message: str, path: str):
        super().__init__(f"{status} {message}")
        self.status = status
        self.message = message
        self.path = path


class GitHubSource:
    def __init__(
        self,
        repo: str,
        *,
        store: CommitStore,
        base_url: str = "https://api.github.com",
        token: str | None = None,
        concurrency: int = 8,
        max_wait: float = 300.0,
        timeout: float = 30.0,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.time,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        repo = repo.strip().removesuffix(".git")
        if not _REPO.fullmatch(repo) or any(part in (".", "..") for part in repo.split("/")):
            raise InputError(f"bad repository {repo[:100]!r}: use OWNER/NAME, e.g. vllm-project/vllm")
        self.repo = repo
        self.store = store
        self.base_url = base_url.strip().rstrip("/")
        parsed = httpx.URL(self.base_url)
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise InputError(
                f"bad GitHub API URL {self._shown_base(parsed)!r}: use e.g. https://api.github.com"
            )
        self._origin = (parsed.scheme, parsed.host, parsed.port)
        self._shown_url = self._shown_base(parsed)
        self._repo_url = f"{self.base_url}/repos/{repo}"
        self._has_token = bool(token)
        self.max_wait = max_wait
        self.timeout = timeout  # per read (httpx's); the whole answer gets WHOLE_ANSWER_READS of them
        self._sleep = sleep
        self._clock = clock
        self._sem = asyncio.Semaphore(max(1, concurrency))
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": "digestbot",
        }
        if token:
            # A token pasted with its header's scheme ("token ghp_…", "Bearer ghp_…") would be sent as
            # "Bearer token ghp_…" and rejected: the scheme is ours to add.
            token = without_scheme(token, "bearer", "token")
            headers["Authorization"] = f"Bearer {token}"
        self._client = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(timeout),
            limits=httpx.Limits(
                max_connections=max(1, concurrency), max_keepalive_connections=max(1, concurrency)
            ),
            follow_redirects=True,  # renamed repositories answer 301; httpx drops auth on cross-origin hops
            transport=transport,
        )
        self.surface_reads_left = SURFACE_READS if token else SURFACE_READS_ANONYMOUS
        self._trees: dict[str, tuple[list[str], dict[str, str]] | None] = {}  # trees listed, newest last
        # Observability (the benchmark reports these).
        self.requests_made = 0
        self.not_modified = 0
        self.rate_limit_waits: list[float] = []

    @staticmethod
    def _shown_base(url: httpx.URL) -> str:
        """The base URL as safe to show: without any user:password part."""
        return str(url.copy_with(username=None, password=None)) if url.userinfo else str(url)

    async def __aenter__(self) -> GitHubSource:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    # -- CommitSource ------------------------------------------------------------------------------
    async def commits_in_window(
        self, branch: str, start: datetime, end: datetime, progress: Progress | None = None
    ) -> list[Commit]:
        listed = await self._list(branch, since=start, until=end, max_pages=MAX_WINDOW_PAGES)
        nodes = [node_of(item) for item in listed]
        above: list[Node] = []
        if needs_history_above(nodes):
            # Merge commits make side-branch commits possible; only the history from the branch tip
            # down to the window tells which of them a later merge brought in.
            above_items = await self._list(branch, since=end, until=None, max_pages=MAX_ABOVE_PAGES)
            above = [node_of(item) for item in above_items]
        chain = first_parent_shas([*above, *nodes])
        wanted = [n for n in nodes if n.sha in chain and start <= n.committed_at < end]
        commits = await self._details([n.sha for n in wanted], progress)
        # Newest first; sorted() is stable, so ties keep GitHub's order.
        return sorted(commits, key=lambda c: c.committed_at, reverse=True)

    async def get_commit(self, ref: str) -> Commit:
        sha = ref.strip().lower()
        if not _SHA.fullmatch(sha):
            raise InputError(f"bad commit reference {ref[:50]!r}: give a commit SHA (4 to 40 hex digits)")
        stored = self._stored(sha)
        if stored is not None:
            return stored
        commit = await self._fetch_commit(sha, asked=True)
        self.store.save_commit(commit)
        return commit

    async def commit_named(self, name: str) -> Commit:
        """The newest commit of a branch or tag (GitHub resolves names at /commits/{ref});
        HEAD is the default branch's newest commit."""
        name = name.strip()
        ref = await self.default_branch() if name == "HEAD" else name
        commit = await self._fetch_commit(quote(ref, safe="/"), asked=True)
        self.store.save_commit(commit)
        return commit

    async def default_branch(self) -> str:
        """The repository's default branch (one cached, usually 304, request)."""
        try:
            page = await self._get(self._repo_url, cache=True)
        except _HTTPStatus as exc:
            if exc.status == 404:
                raise SourceRefused(
                    f"repository {self.repo} not found on GitHub{self._private_hint()}"
                ) from None
            raise self._unexpected(exc) from None
        branch = page.data.get("default_branch") if isinstance(page.data, dict) else None
        return branch if isinstance(branch, str) and branch else "main"

    async def commit_for_pr(self, number: int, branch: str) -> Commit:
        if number <= 0:
            raise InputError(f"bad pull request number {number}")
        try:
            page = await self._get(f"{self._repo_url}/pulls/{number}", cache=True)
        except _HTTPStatus as exc:
            if exc.status in (404, 422):
                raise RefNotFound(
                    f"pull request #{number} not found in {self.repo}{self._private_hint()}"
                ) from None
            raise self._unexpected(exc) from None
        pull = page.data if isinstance(page.data, dict) else {}
        merge_sha = pull.get("merge_commit_sha")
        if not (pull.get("merged") or pull.get("merged_at")) or not isinstance(merge_sha, str):
            raise RefNotFound(f"pull request #{number} in {self.repo} is not merged")
        base = pull.get("base")
        base = base.get("ref") if isinstance(base, dict) else None
        if branch and isinstance(base, str) and base != branch:
            raise RefNotFound(
                f"pull request #{number} in {self.repo} was merged into {base!r}, not {branch!r}"
            )
        return await self.get_commit(merge_sha)

    async def history(
        self,
        branch: str,
        since: datetime,
        until: datetime,
        progress: Progress | None = None,
        *,
        detail_budget: int | None = None,
    ) -> list[PastCommit]:
        """The branch's commits with committer dates in [since, until), oldest first, from the list
        endpoint (ETag-cached pages: a re-read costs 304s). The list has no files: the paths a commit
        touched come from the store, and up to `detail_budget` commits the store lacks are fetched
        (newest first) and stored, so the record fills in over a few runs without spending the quota.
        `progress` follows the commits whose details are fetched."""
        # Without a token GitHub allows 60 requests an hour: history must not eat the day's quota.
        pages = HISTORY_MAX_PAGES if self._has_token else HISTORY_PAGES_ANONYMOUS
        if detail_budget is None:
            detail_budget = HISTORY_DETAILS if self._has_token else 0
        listed = await self._list(branch, since=since, until=until, max_pages=pages, strict=False)
        nodes = [node_of(item) for item in listed]
        chain = first_parent_shas(nodes)
        items = [(n, item) for n, item in zip(nodes, listed, strict=True) if n.sha in chain]
        items = [(n, item) for n, item in items if since <= n.committed_at < until]
        stored = {n.sha: self.store.get_commit(self.repo, n.sha) for n, _ in items}
        missing = [sha for sha, commit in stored.items() if commit is None][: max(0, detail_budget)]
        if missing:
            for commit in await self._details(missing, progress):
                stored[commit.sha] = commit
        history = []
        for n, item in items:
            commit = stored.get(n.sha)
            meta = item.get("commit") or {}
            message = meta.get("message") or ""
            files = tuple((f.path, f.changes) for f in commit.files) if commit is not None else ()
            who = meta.get("author") or {}
            bot = is_automated(who.get("name"), (item.get("author") or {}).get("login"), who.get("email"))
            history.append(BranchCommit(n.sha, n.committed_at, message, files, automated=bot))
        return sorted(history, key=lambda c: c.committed_at)

    # -- files at a commit (surface facts) ----------------------------------------------------------
    async def read_files(self, wanted: Sequence[tuple[str, str]], *, max_bytes: int) -> FileTexts:
        """The text of each (commit sha, path) through the contents endpoint, ETag-revalidated (a re-read
        after a parser upgrade costs 304s, no quota). At most `surface_reads_left` requests per source:
        past it a pair is left unread, and the commits that needed it get no facts. A file over max_bytes
        (GitHub serves up to 1 MB this way) or not valid text is skipped."""
        result = FileTexts({}, set())
        allowed = self._within_budget(list(dict.fromkeys(wanted)), "file reads")

        async def read(spec: tuple[str, str]) -> None:
            sha, path = spec
            page = await self._surface_page(
                f"{self._repo_url}/contents/{quote(path, safe='/')}", {"ref": sha}
            )
            if isinstance(page, _HTTPStatus):
                if page.status == 404:
                    result.texts[spec] = None
                return  # another 4xx: unread
            if page is None:
                return  # a rate limit or failure stopped the reads: unread
            data = page.data if isinstance(page.data, dict) else {}
            text = decoded(data, max_bytes)
            if text is None:
                result.skipped.add(spec)
            else:
                result.texts[spec] = text

        async with asyncio.TaskGroup() as group:
            for spec in allowed:
                group.create_task(read(spec))
        return result

    def _within_budget(self, items: list[Any], what: str) -> list[Any]:
        """The items the surface reads' request budget still covers (it is spent on them); the rest are left
        unread, and said so."""
        allowed = items[: max(0, self.surface_reads_left)]
        self.surface_reads_left -= len(allowed)
        if len(allowed) < len(items):
            log.info(
                "surface: %d %s of %s left for later (request budget)",
                len(items) - len(allowed),
                what,
                self.repo,
            )
        return allowed

    async def _surface_page(self, url: str, params: dict[str, Any] | None = None) -> Any:
        """A page for the surface facts, or the 4xx (_HTTPStatus) it got; None once a rate limit or a failure
        stopped this run's surface reads (the first says so; no more are made)."""
        if self.surface_reads_left < 0:
            return None
        try:
            return await self._get(url, params=params, cache=True, patient=False)
        except _HTTPStatus as exc:
            return exc
        except (RateLimited, SourceError) as exc:
            if self.surface_reads_left >= 0:
                log.warning("surface: reading files of %s stopped: %s", self.repo, exc)
            self.surface_reads_left = -1
            return None

    async def list_paths(self, sha: str) -> list[str] | None:
        """Every file path at a commit (one request; None when GitHub truncates the listing or the
        request budget is spent)."""
        tree = await self._whole_tree(sha)
        return None if tree is None else tree[0]

    async def list_blobs(self, sha: str) -> dict[str, str] | None:
        """Every file path at a commit with its blob id (the same request as list_paths)."""
        tree = await self._whole_tree(sha)
        return None if tree is None else tree[1]

    async def _whole_tree(self, sha: str) -> tuple[list[str], dict[str, str]] | None:
        """The paths and the blob ids of a commit's recursive tree, the last KEPT_TREES kept (a batch lists its
        tree for paths, the next batch's docs are read at it; the answer itself is not kept: a large tree's
        JSON is many times its paths); None when truncated (a partial tree would mislead), unreadable or over
        the request budget."""
        if sha in self._trees:
            return self._trees[sha]
        if self.surface_reads_left <= 0:
            return None
        self.surface_reads_left -= 1
        try:
            page = await self._get(
                f"{self._repo_url}/git/trees/{sha}", params={"recursive": "1"}, cache=True, patient=False
            )
        except (_HTTPStatus, RateLimited, SourceError):
            return None  # not kept: a later batch may list it
        data = page.data if isinstance(page.data, dict) else {}
        tree = None if data.get("truncated") else (tree_paths(data), tree_blobs(data))
        self._trees[sha] = tree
        while len(self._trees) > KEPT_TREES:
            del self._trees[next(iter(self._trees))]
        return tree

    async def read_blobs(self, ids: Sequence[str], *, max_bytes: int) -> dict[str, str | None]:
        """The text of each blob id through the blobs endpoint (ETag-cached, within the request budget as
        read_files is); None for one over max_bytes or not text. An id left unread is absent."""
        found: dict[str, str | None] = {}
        wanted = [i for i in dict.fromkeys(ids) if is_full_object_name(i)]  # they go into a URL path
        allowed = self._within_budget(wanted, "docs file reads")

        async def read(blob: str) -> None:
            page = await self._surface_page(f"{self._repo_url}/git/blobs/{blob}")
            if page is None or isinstance(page, _HTTPStatus):
                return  # unread: the caller knows the docs only in part
            data = page.data if isinstance(page.data, dict) else {}
            if not isinstance(data.get("size"), int) or data["size"] > max_bytes:
                found[blob] = None
                return
            try:
                raw = base64.b64decode(str(data.get("content") or ""))
            except ValueError:
                return
            found[blob] = None if b"\0" in raw else raw.decode("utf-8", "replace")

        async with asyncio.TaskGroup() as group:
            for blob in allowed:
                group.create_task(read(blob))
        return found

    async def branch_tip(self, branch: str) -> str:
        """The full SHA of the branch's newest commit (one ETag-cached request)."""
        try:
            page = await self._get(f"{self._repo_url}/branches/{quote(branch, safe='/')}", cache=True)
        except _HTTPStatus as exc:
            if exc.status == 404:
                raise SourceRefused(f"branch {branch!r} not found in {self.repo} on GitHub (404)") from None
            raise self._unexpected(exc) from None
        tip = page.data.get("commit") if isinstance(page.data, dict) else None
        sha = tip.get("sha") if isinstance(tip, dict) else None
        if not isinstance(sha, str):
            raise SourceError(f"GitHub sent an unexpected answer for branch {branch!r} of {self.repo}")
        return sha

    async def paths_at(self, sha: str) -> list[str]:
        """Every file path in the commit's tree (the recursive tree endpoint: one request; GitHub cuts
        a tree past 100,000 entries, and then only those it listed are returned)."""
        try:
            page = await self._get(f"{self._repo_url}/git/trees/{sha}", params={"recursive": "1"}, cache=True)
        except _HTTPStatus as exc:
            raise self._unexpected(exc) from None
        data = page.data if isinstance(page.data, dict) else {}
        if data.get("truncated"):
            log.warning("GitHub listed only part of %s's tree at %s", self.repo, sha[:12])
        return tree_paths(data)

    async def text_at(self, sha: str, path: str) -> str | None:
        """A file's text as of the commit (the contents endpoint, ETag-cached; past its 1 MB limit the
        blob endpoint); None when the commit has no such file."""
        try:
            page = await self._get(
                f"{self._repo_url}/contents/{quote(path, safe='/')}", params={"ref": sha}, cache=True
            )
        except _HTTPStatus as exc:
            if exc.status == 404:
                return None
            raise self._unexpected(exc) from None
        data = page.data if isinstance(page.data, dict) else {}
        if data.get("type") != "file":
            return None
        if data.get("encoding") != "base64" and data.get("size") and isinstance(data.get("sha"), str):
            blob = await self._get(f"{self._repo_url}/git/blobs/{data['sha']}", cache=True)
            data = blob.data if isinstance(blob.data, dict) else {}
        try:
            raw = base64.b64decode(str(data.get("content") or ""))
        except ValueError:
            raise SourceError(f"GitHub sent unreadable contents for {path} of {self.repo}") from None
        return raw.decode("utf-8", "replace")

    # -- listing -----------------------------------------------------------------------------------
    async def _list(
        self, branch: str, *, since: datetime, until: datetime | None, max_pages: int, strict: bool = True
    ) -> list[dict[str, Any]]:
        params: dict[str, str | int] = {
            "sha": branch,
            "since": _utc_z(since, math.floor),
            "per_page": PER_PAGE,
        }
        if until is not None:
            params["until"] = _utc_z(until, math.ceil)
        items: list[dict[str, Any]] = []
        seen: set[str] = set()
        pages_read: set[str] = set()
        url: str | None = f"{self._repo_url}/commits"
        for _ in range(max_pages):
            if url is None:
                return items
            page_key = _page_key(url, params)
            if page_key in pages_read:  # a Link back to a page already read: it would never end
                if strict and until is not None:
                    raise SourceError(
                        f"GitHub's pagination of the commit list of {self.repo}@{branch} loops (a page "
                        f"linked back to one already read, after {len(items)} commits); try again later"
                    )
                log.warning(
                    "GitHub's pagination of the commit list of %s@%s loops: using the %d commits read",
                    self.repo,
                    branch,
                    len(items),
                )
                return items
            pages_read.add(page_key)
            try:
                page = await self._get(url, params=params, cache=True)
            except _HTTPStatus as exc:
                if exc.status == 409:  # "Git Repository is empty."
                    return []
                if exc.status in (404, 422):
                    raise self._branch_not_found(branch, exc) from None
                raise self._unexpected(exc) from None
            if not isinstance(page.data, list):
                raise self._bad_answer("commits", "not a list")
            for i, item in enumerate(page.data):
                try:
                    node_of(item, f"[{i}]")  # the shape every reader of the list relies on
                except ShapeError as exc:
                    raise self._bad_answer("commits", str(exc)) from None
                # A commit pushed between two page reads shifts the pages: never count one twice.
                if item["sha"] not in seen:
                    seen.add(item["sha"])
                    items.append(item)
            url, params = page.next_url, {}
        if strict and until is not None and url is not None:
            if len(items) <= (max_pages - 1) * PER_PAGE:  # pages that repeat commits: not a busy window
                raise SourceError(
                    f"GitHub's commit list of {self.repo}@{branch} did not end after {max_pages} pages "
                    f"(only {len(items)} distinct commits): its pagination is broken; try again later"
                )
            raise SourceError(
                f"more than {max_pages * PER_PAGE} commits of {self.repo}@{branch} in one window: "
                "narrow the window"
            )
        # Above the window we only needed enough to settle the chain; a truncated read still helps.
        return items

    def _branch_not_found(self, branch: str, exc: _HTTPStatus) -> SourceError:
        if "no commit found" in exc.message.lower():
            return SourceRefused(f"branch {branch!r} not found in {self.repo} on GitHub (404)")
        return SourceRefused(
            f"GitHub repository {self.repo} or its branch {branch!r} not found (404){self._private_hint()}"
        )

    def _private_hint(self) -> str:
        if self._has_token:
            return "; check the name and that GITHUB_TOKEN can read it"
        return "; private repositories need GITHUB_TOKEN"

    # -- commit details ----------------------------------------------------------------------------
    def _stored(self, sha: str) -> Commit | None:
        if len(sha) == 40:
            return self.store.get_commit(self.repo, sha)
        shas = self.store.find_shas(self.repo, sha)
        if len(shas) > 1:
            shown = ", ".join(s[:12] for s in shas[:5])
            raise AmbiguousRef(f"short SHA {sha} is ambiguous in {self.repo} ({shown}…): give more digits")
        return self.store.get_commit(self.repo, shas[0]) if shas else None

    async def _details(self, shas: Sequence[str], progress: Progress | None) -> list[Commit]:
        total = len(shas)
        found: dict[str, Commit] = {}
        missing: list[str] = []
        for sha in shas:
            stored = self.store.get_commit(self.repo, sha)
            if stored is not None:
                found[sha] = stored
            else:
                missing.append(sha)
        done = len(found)
        if progress:
            progress(done, total)

        async def fetch(sha: str) -> None:
            nonlocal done
            commit = await self._fetch_commit(sha, asked=False)
            self.store.save_commit(commit)  # saved at once: an interrupted run resumes where it stopped
            found[sha] = commit
            done += 1
            if progress:
                progress(done, total)

        try:
            async with asyncio.TaskGroup() as group:
                for sha in missing:
                    group.create_task(fetch(sha))
        except ExceptionGroup as eg:
            raise eg.exceptions[0] from None  # one clear error, not a group
        return [found[sha] for sha in shas]

    async def _fetch_commit(self, ref: str, *, asked: bool) -> Commit:
        url = f"{self._repo_url}/commits/{ref}"
        try:
            page = await self._get(url, cache=False)
            if not isinstance(page.data, dict):
                raise self._bad_answer(f"commits/{ref}", "not an object")
            files, complete = await self._commit_files(ref, url, page)
            data = page.data
            files_total = len(files)
            if not complete or files_capped(data, files):
                files_total = await self._changed_files(data) or len(files) + 1
            return commit_from_api(self.repo, data, files, files_total)
        except ShapeError as exc:
            raise self._bad_answer(f"commits/{ref}", str(exc)) from None
        except _HTTPStatus as exc:
            if exc.status == 422 and "ambiguous" in exc.message.lower():
                raise AmbiguousRef(f"short SHA {ref} is ambiguous in {self.repo}: give more digits") from None
            if exc.status == 422 and asked:
                hint = " (a short SHA may also be ambiguous: give more digits)" if len(ref) < 40 else ""
                raise RefNotFound(f"no commit {ref} in {self.repo}{hint}") from None
            if exc.status == 404:
                raise SourceError(
                    f"GitHub repository {self.repo} not found (404){self._private_hint()}"
                ) from None
            raise self._unexpected(exc) from None

    async def _commit_files(self, ref: str, url: str, first: _Page) -> tuple[list[FileChange], bool]:
        """A commit's files over their pages (at most MAX_FILES), and whether the listing ended as GitHub
        ends one. Pagination that loops (a page linked again, a page adding no new file) or runs past
        MAX_FILE_PAGES stops with a warning: the commit then counts more files than it lists, as one past
        GitHub's cap does, never a silently shorter list. Raises ShapeError for a page of the wrong shape."""
        files = page_files(first.data, 0)
        names = {f.path for f in files}
        pages_read = {_page_key(url, None)}
        next_url = first.next_url
        while next_url and len(files) < MAX_FILES:
            if _page_key(next_url, None) in pages_read:
                problem = "a page linked back to one already read"
            elif len(pages_read) >= MAX_FILE_PAGES:
                problem = f"still more after {MAX_FILE_PAGES} pages"
            else:
                pages_read.add(_page_key(next_url, None))
                more = await self._get(next_url, cache=False)
                if not isinstance(more.data, dict):
                    raise ShapeError(f"files page {len(pages_read)} is not an object")
                new = [f for f in page_files(more.data, len(files)) if f.path not in names]
                files.extend(new)
                names.update(f.path for f in new)
                next_url = more.next_url
                if new:
                    continue
                problem = "a page added no new file"
            log.warning(
                "GitHub's file list of commit %s in %s does not end (%s): the commit is marked as "
                "having more files than the %d listed",
                ref[:12],
                self.repo,
                problem,
                len(files),
            )
            return files[:MAX_FILES], False
        return files[:MAX_FILES], True

    async def _changed_files(self, data: dict[str, Any]) -> int | None:
        """The exact file count of a capped commit, from the pull request it landed (GitHub gives no
        count on the commit itself). None when the commit names no merged pull request."""
        message = field_of(object_of(data.get("commit"), "commit"), "message", str, "commit") or ""
        title = message_title(message)[0]
        match = PR_IN_TITLE.search(title)
        pr = int(match.group(1)) if match else merge_pr(title)
        if pr is None:
            return None
        try:
            pull = (await self._get(f"{self._repo_url}/pulls/{pr}", cache=True)).data
        except _HTTPStatus:
            return None
        if isinstance(pull, dict) and pull.get("merge_commit_sha") == data.get("sha"):
            count = pull.get("changed_files")
            return count if isinstance(count, int) and count > 0 else None
        return None

    # -- HTTP --------------------------------------------------------------------------------------
    async def _get(
        self, url: str, *, params: dict[str, Any] | None = None, cache: bool, patient: bool = True
    ) -> _Page:
        """GET with ETag revalidation, rate-limit waits and retries. Raises SourceError / RateLimited,
        or _HTTPStatus for a 4xx the caller words. Not patient: a rate limit is reported at once, never
        waited out (reads that only add facts must not hold up the digest)."""
        request = self._client.build_request("GET", url, params=params or None)
        if (request.url.scheme, request.url.host, request.url.port) != self._origin:
            # A Link header pointing elsewhere must not receive our token.
            raise SourceError(f"GitHub pointed to another host ({request.url.host}); refusing to follow")
        key = str(request.url)
        cached = self._cached(key) if cache else None
        if cached is not None:
            if cached["etag"]:
                request.headers["If-None-Match"] = cached["etag"]
            if cached["last_modified"]:
                request.headers["If-Modified-Since"] = cached["last_modified"]
        waits = 0
        # Rate limits keep our own loop: each wait is what GitHub's headers say (Retry-After, the
        # reset time, or a growing secondary-limit pause), bounded by GITHUB_MAX_WAIT with a message
        # that names the reset; plain network/5xx retries are tenacity's, in _send_retrying.
        while True:
            response = await self._send_retrying(request)
            status = response.status_code
            if status == 304 and cached is not None:
                self.not_modified += 1
                return cached["page"]
            if 200 <= status < 300:
                return self._accept(key, response, cache)
            wait = self._rate_limit_wait(response, waits)
            if wait is not None:
                waits += 1
                if waits > MAX_RATE_WAITS:
                    raise RateLimited(
                        f"GitHub still rate-limits {self.repo} after {MAX_RATE_WAITS} waits; try later"
                    )
                if wait > self.max_wait or not patient:
                    raise self._rate_limited(wait)
                log.warning("GitHub rate limit: waiting %.0f s", wait)
                self.rate_limit_waits.append(wait)
                await self._sleep(wait)
                continue
            raise self._client_error(response)

    async def _send_retrying(self, request: httpx.Request) -> httpx.Response:
        """Send, retrying network failures and 5xx answers with exponential backoff (1, 2, 4 s).
        Rate limits are not retried here: their wait comes from GitHub's headers (_rate_limit_wait)."""
        retrying = tenacity.AsyncRetrying(
            retry=tenacity.retry_if_exception_type((httpx.TransportError, _ServerError)),
            stop=tenacity.stop_after_attempt(MAX_RETRIES + 1),
            wait=tenacity.wait_exponential(multiplier=1.0),
            sleep=self._sleep,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    response = await self._send(request)
                    if response.status_code >= 500:
                        raise _ServerError(response.status_code)
        except httpx.TransportError as exc:
            raise SourceError(f"cannot reach GitHub at {self._shown_url}: {_describe(exc)}") from None
        except _ServerError as exc:
            raise SourceError(
                f"GitHub kept failing ({exc.status}) for {request.url.path} after {MAX_RETRIES + 1} attempts; "
                "try again later"
            ) from None
        return response

    async def _send(self, request: httpx.Request) -> httpx.Response:
        async with self._sem:  # the bound covers requests in flight, not rate-limit sleeps
            self.requests_made += 1
            try:
                # A total deadline: httpx's timeout restarts at every read, so an answer that trickles
                # in a byte at a time would never time out.
                async with asyncio.timeout(self.timeout * WHOLE_ANSWER_READS):
                    response = await self._client.send(request)  # reads the whole body
            except TimeoutError:
                # A transport error, so that it is retried like any other timeout.
                raise httpx.ReadTimeout(
                    f"no complete answer within {self.timeout * WHOLE_ANSWER_READS:g} s", request=request
                ) from None
        log.debug("GET %s -> %s", request.url.path, response.status_code)
        return response

    def _cached(self, key: str) -> dict[str, Any] | None:
        row = self.store.cache_get(key)
        if not row or not (row.get("etag") or row.get("last_modified")):
            return None
        try:
            envelope = json.loads(row["body"])
            page = _Page(envelope["data"], envelope.get("next"))
        except (TypeError, ValueError, KeyError):
            return None  # not ours or damaged: fetch afresh
        return {"etag": row.get("etag"), "last_modified": row.get("last_modified"), "page": page}

    def _accept(self, key: str, response: httpx.Response, cache: bool) -> _Page:
        try:
            data = response.json()
        except ValueError:
            raise SourceError(f"GitHub sent an unreadable answer for {response.request.url.path}") from None
        next_url = response.links.get("next", {}).get("url")
        page = _Page(data, next_url)
        etag = response.headers.get("ETag")
        last_modified = response.headers.get("Last-Modified")
        if cache and (etag or last_modified):
            # Our own envelope: the Link to the next page is needed again when the answer is a 304.
            self.store.cache_put(key, etag, last_modified, json.dumps({"data": data, "next": next_url}))
        return page

    def _rate_limit_wait(self, response: httpx.Response, waits: int) -> float | None:
        """Seconds to wait when the answer is a rate limit, None when it is not one."""
        if response.status_code not in (403, 429):
            return None
        headers = response.headers
        retry_after = _retry_after(headers.get("Retry-After"), self._clock())
        if retry_after is not None:
            return retry_after
        reset = finite_number(headers.get("x-ratelimit-reset"))
        if headers.get("x-ratelimit-remaining") == "0" and reset is not None:
            # One second of slack for clock skew between us and GitHub.
            return min(RATE_WAIT_CAP, max(0.0, reset - self._clock()) + 1.0)
        if response.status_code == 429 or "rate limit" in _message(response).lower():
            return SECONDARY_WAIT * 2**waits  # GitHub: a minute, then exponentially longer
        return None

    def _rate_limited(self, wait: float) -> RateLimited:
        advice = (
            "set GITHUB_MAX_WAIT higher to wait, or try again then"
            if self._has_token
            else "set GITHUB_TOKEN to raise the limit (60 to 5000 requests an hour)"
        )
        if wait >= RATE_WAIT_CAP:  # a header no GitHub limit sends (milliseconds, garbage): no reset time
            return RateLimited(
                f"GitHub rate limit reached: it asks to wait a day or more, longer than the allowed wait "
                f"of {self.max_wait:.0f} s; {advice}"
            )
        resets = datetime.fromtimestamp(self._clock() + wait, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return RateLimited(
            f"GitHub rate limit reached: it resets at {resets} (in {wait:.0f} s), longer than the "
            f"allowed wait of {self.max_wait:.0f} s; {advice}"
        )

    def _client_error(self, response: httpx.Response) -> Exception:
        status = response.status_code
        if status == 401:
            if self._has_token:
                return SourceRefused("GitHub rejected the token (401): check GITHUB_TOKEN")
            return SourceRefused("GitHub requires authentication (401): set GITHUB_TOKEN")
        if status == 403:
            return SourceError(
                f"GitHub refused access to {self.repo} (403: {_message(response)}){self._private_hint()}"
            )
        return _HTTPStatus(status, _message(response), response.request.url.path)

    def _bad_answer(self, endpoint: str, detail: str) -> SourceError:
        """A 200 whose JSON is not shaped as GitHub documents it (a proxy's page, an API change)."""
        return SourceError(
            f"GitHub sent an unexpected answer for /repos/{self.repo}/{endpoint} ({clip(detail, 200)})"
        )

    def _unexpected(self, exc: _HTTPStatus) -> SourceError:
        return SourceError(f"GitHub answered {exc.status} for {exc.path}: {exc.message}")


# -- pure helpers (no I/O) ------------------------------------------------------------------------
def _page_key(url: str, params: dict[str, Any] | None) -> str:
    """A page's URL with its query, as requested: the same page linked twice has the same key."""
    return str(httpx.URL(url).copy_merge_params(params) if params else httpx.URL(url))


def _utc_z(moment: datetime, rounding: Callable[[float], int]) -> str:
    """ISO UTC with Z at whole seconds, rounded outward: GitHub takes no fractions, we filter exactly."""
    seconds = rounding(moment.timestamp())
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _retry_after(value: str | None, now: float) -> float | None:
    """Retry-After in seconds (a number or an HTTP date), at most RATE_WAIT_CAP; None when unreadable."""
    seconds = retry_after(value, now=now)
    return None if seconds is None else min(RATE_WAIT_CAP, seconds)


def _message(response: httpx.Response) -> str:
    """GitHub's error message, as one short line (server text is untrusted)."""
    try:
        body = response.json()
        text = str(body.get("message", "")) if isinstance(body, dict) else ""
    except ValueError:
        text = response.text
    text = clip(" ".join(text.split()), 200)  # masked before it is cut
    return text or response.reason_phrase or "no message"


def _describe(exc: Exception) -> str:
    return clip(" ".join(str(exc).split()), 200) or type(exc).__name__
