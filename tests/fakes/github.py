"""A fake GitHub REST API on 127.0.0.1 for tests and benchmarks.

It serves one repository's commits, given as GitHub-API-shaped dicts (the shape of the detail endpoint,
as in ../shared/data/vllm/*.json), through the endpoints digestbot reads: the commit list, a commit's
detail (with paginated files), a pull request, and files: at the branch tips (`set_files`) and at any
commit (`set_file`), through the contents endpoint (base64, as GitHub sends it) and the recursive tree. Every 200 carries an ETag and a matching
If-None-Match gets a 304. Faults (rate limits, 5xx, 401) can be queued, answers broken by path (`reshape`:
the wrong JSON shape, `loop_pages`: pagination that never ends, `trickle`: a body sent a byte at a time),
and every request is counted.

Usable as a pytest fixture (see tests/adapters/test_github.py) or standalone from a benchmark:

    with FakeGitHub("vllm-project/vllm", json.load(open(path))) as gh:
        source = GitHubSource(gh.repo, store=store, base_url=gh.base_url)
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any
from urllib.parse import urlencode

from werkzeug import Request, Response

from tests.fakes.server import FakeServer, trickle

FILE_CAP = 3000  # GitHub lists at most 3000 files of a commit
FILES_PER_PAGE = 300


# -- building synthetic commits ----------------------------------------------------------------------
def make_file(
    filename: str,
    *,
    status: str = "modified",
    additions: int = 1,
    deletions: int = 0,
    patch: str | None = "@@ -1 +1 @@\n-old\n+new",
    previous_filename: str | None = None,
) -> dict[str, Any]:
    """One entry of a commit's `files`; patch=None leaves the key out, as GitHub does for binaries."""
    entry: dict[str, Any] = {
        "filename": filename,
        "status": status,
        "additions": additions,
        "deletions": deletions,
        "changes": additions + deletions,
    }
    if patch is not None:
        entry["patch"] = patch
    if previous_filename is not None:
        entry["previous_filename"] = previous_filename
    return entry


def _iso_z(moment: datetime | str) -> str:
    if isinstance(moment, str):
        return moment
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def make_commit(
    message: str,
    when: datetime | str,
    *,
    parents: Sequence[str] = (),
    files: Sequence[dict[str, Any]] | None = None,
    sha: str | None = None,
    author: str = "Ada Lovelace",
    login: str | None = "ada",
    author_date: datetime | str | None = None,
    repo: str = "octo/demo",
) -> dict[str, Any]:
    """A commit dict shaped like GitHub's commit detail. `when` is the committer date; the SHA is derived
    from the message and date unless given, so tests stay deterministic."""
    committed = _iso_z(when)
    sha = sha or hashlib.sha1(f"{repo}\0{message}\0{committed}\0{','.join(parents)}".encode()).hexdigest()
    files = list(files) if files is not None else [make_file("src/app.py")]
    additions = sum(f["additions"] for f in files)
    deletions = sum(f["deletions"] for f in files)
    web = f"https://github.com/{repo}"
    return {
        "sha": sha,
        "html_url": f"{web}/commit/{sha}",
        "commit": {
            "author": {"name": author, "email": "a@example.com", "date": _iso_z(author_date or when)},
            "committer": {"name": "GitHub", "email": "noreply@github.com", "date": committed},
            "message": message,
        },
        "author": {"login": login} if login else None,
        "parents": [{"sha": p, "html_url": f"{web}/commit/{p}"} for p in parents],
        "stats": {"additions": additions, "deletions": deletions, "total": additions + deletions},
        "files": files,
    }


def linear_history(
    count: int,
    newest: datetime,
    *,
    step: timedelta = timedelta(minutes=10),
    repo: str = "octo/demo",
    base_parent: str | None = None,
    title: str = "change",
) -> list[dict[str, Any]]:
    """`count` commits, newest first, each the parent of the one before, `step` apart."""
    oldest_first: list[dict[str, Any]] = []
    parent = base_parent
    for i in range(count):
        when = newest - step * (count - 1 - i)
        c = make_commit(f"{title} {i}", when, parents=[parent] if parent else [], repo=repo)
        oldest_first.append(c)
        parent = c["sha"]
    return oldest_first[::-1]


# -- the server -------------------------------------------------------------------------------------
@dataclass
class Fault:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    count: int = 1
    path_contains: str | None = None  # only requests whose path contains this


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-case names
    status: int


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _json_response(data: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    return Response(
        json.dumps(data), status=status, headers=dict(headers or {}), content_type="application/json"
    )


_LIST_ONLY_KEYS = (
    "sha",
    "node_id",
    "commit",
    "url",
    "html_url",
    "comments_url",
    "author",
    "committer",
    "parents",
)
_PR_TITLE = re.compile(r"\(#(\d+)\)\s*$")


class FakeGitHub(FakeServer):
    name = "GitHub"

    def __init__(
        self,
        repo: str = "octo/demo",
        commits: Iterable[dict[str, Any]] = (),
        *,
        branches: Iterable[str] = ("main",),
        path_prefix: str = "",
        token: str | None = None,
        files_per_page: int = FILES_PER_PAGE,
        file_cap: int = FILE_CAP,
        latency: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        quiet: bool = True,
    ):
        super().__init__(host, port, quiet)
        self.repo = repo
        self.branches = set(branches)
        self.default_branch = next(iter(branches), "main")
        self.path_prefix = "/" + path_prefix.strip("/") if path_prefix.strip("/") else ""
        self.token = token  # when set, every request must carry "Bearer <token>" or gets 401
        self.files_per_page = files_per_page
        self.file_cap = file_cap
        self.latency = latency  # seconds each request takes, to make overlap measurable
        self.pulls: dict[int, dict[str, Any]] = {}
        self.files: dict[str, str] = {}  # the tree of every branch's tip: path → text (see set_files)
        self.contents_limit = 1_000_000  # bytes: past it the contents endpoint sends no content
        self._faults: deque[Fault] = deque()
        # Broken answers by path pattern (re.search on the path without the prefix): see reshape,
        # loop_pages and trickle.
        self._reshapes: list[tuple[str, Callable[[Any], Any]]] = []
        self._loops: dict[str, str] = {}
        self._trickles: dict[str, float] = {}
        self._lock = threading.Lock()
        self._in_flight = 0
        self._commits: list[dict[str, Any]] = []
        self._by_sha: dict[str, dict[str, Any]] = {}
        self._dates: dict[str, datetime] = {}
        self.commit_files: dict[str, dict[str, bytes]] = {}  # commit sha → {path: content} (see set_file)
        self.reset_counters()
        self.set_commits(commits)

    # -- addresses --------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """What GitHubSource takes as base_url (GITHUB_API_URL)."""
        return self.server.url_for(self.path_prefix or "/").rstrip("/")

    # -- data -------------------------------------------------------------------------------------
    def set_commits(self, commits: Iterable[dict[str, Any]]) -> None:
        """Replace the repository's history. Listed newest first by committer date (stable)."""
        items = list(commits)
        dates = {c["sha"]: _parse_time(c["commit"]["committer"]["date"]) for c in items}
        items.sort(key=lambda c: dates[c["sha"]], reverse=True)
        with self._lock:
            self._commits = items
            self._by_sha = {c["sha"]: c for c in items}
            self._dates = dates

    def add_commits(self, commits: Iterable[dict[str, Any]]) -> None:
        self.set_commits([*self._commits, *commits])

    def set_files(self, files: Mapping[str, str]) -> None:
        """The files at each branch's tip, served by /branches, /git/trees, /contents and /git/blobs."""
        self.files = dict(files)

    def set_file(self, sha: str, path: str, content: bytes | str) -> None:
        """A file at one commit, served by /contents/{path}?ref={sha} and /git/trees/{sha}."""
        self.commit_files.setdefault(sha, {})[path] = (
            content.encode() if isinstance(content, str) else content
        )

    def add_pull(
        self, number: int, *, merged: bool, merge_commit_sha: str | None = None, base: str | None = None
    ) -> None:
        self.pulls[number] = {
            "number": number,
            "state": "closed" if merged else "open",
            "merged": merged,
            "merge_commit_sha": merge_commit_sha,
            "base": {"ref": base or self.default_branch},
        }

    # -- faults -----------------------------------------------------------------------------------
    def fail_next(
        self,
        status: int,
        *,
        count: int = 1,
        headers: Mapping[str, str] | None = None,
        body: Any = None,
        path_contains: str | None = None,
    ) -> None:
        """The next `count` matching requests answer `status` with these headers and JSON body."""
        self._faults.append(Fault(status, dict(headers or {}), body, count, path_contains))

    def rate_limit(
        self,
        *,
        count: int = 1,
        status: int = 429,
        retry_after: int | None = None,
        reset_at: float | None = None,
        path_contains: str | None = None,
    ) -> None:
        """Primary limit (x-ratelimit-remaining 0 + reset epoch) or secondary limit (Retry-After)."""
        headers: dict[str, str] = {}
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        if reset_at is not None:
            headers.update(
                {
                    "x-ratelimit-limit": "60",
                    "x-ratelimit-remaining": "0",
                    "x-ratelimit-reset": str(int(reset_at)),
                }
            )
        message = (
            "API rate limit exceeded" if reset_at is not None else "You have exceeded a secondary rate limit"
        )
        self.fail_next(
            status, count=count, headers=headers, body={"message": message}, path_contains=path_contains
        )

    def reshape(self, path_pattern: str, change: Callable[[Any], Any]) -> None:
        """Every 200 answer on a path matching the regex carries `change(data)` instead of its JSON (a
        proxy's page, an API change: a wrongly shaped answer). `change` gets a deep copy it may edit.
        E.g. r"/commits$" is the commit list, r"/commits/" a commit's detail."""
        self._reshapes.append((path_pattern, change))

    def loop_pages(self, path_pattern: str, how: str = "self") -> None:
        """Broken pagination on paths matching the regex: every answer links a next page, its own URL
        ("self") or the page after it, forever ("endless": pages past the last are empty)."""
        assert how in ("self", "endless")
        self._loops[path_pattern] = how

    def trickle(self, path_pattern: str, seconds: float) -> None:
        """Answers on paths matching the regex send their body a byte at a time for `seconds` (see
        server.trickle)."""
        self._trickles[path_pattern] = seconds

    # -- counters ---------------------------------------------------------------------------------
    def reset_counters(self) -> None:
        self.requests = 0
        self.not_modified = 0
        self.by_path: Counter[str] = Counter()
        self.log: list[RecordedRequest] = []
        self.max_in_flight = 0

    def requests_to(self, fragment: str) -> int:
        """Requests whose path (without the prefix) contains fragment."""
        return sum(n for path, n in self.by_path.items() if fragment in path)

    # -- request handling -------------------------------------------------------------------------
    def _handle(self, request: Request) -> Response:
        with self._lock:
            self.requests += 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            if self.latency:
                time.sleep(self.latency)
            response = self._route(request)
        finally:
            with self._lock:
                self._in_flight -= 1
        path = (
            request.path[len(self.path_prefix) :]
            if request.path.startswith(self.path_prefix)
            else request.path
        )
        response = self._broken(request, path, response)
        with self._lock:
            self.by_path[path] += 1
            if response.status_code == 304:
                self.not_modified += 1
            self.log.append(
                RecordedRequest(
                    request.method,
                    path,
                    dict(request.args),
                    {k.lower(): v for k, v in request.headers.items()},
                    response.status_code,
                )
            )
        return response

    def _broken(self, request: Request, path: str, response: Response) -> Response:
        """The answer as reshape, loop_pages and trickle break it."""
        reshapes = [change for pattern, change in self._reshapes if re.search(pattern, path)]
        if reshapes and response.status_code == 200:
            data = json.loads(response.get_data())
            for change in reshapes:
                data = change(copy.deepcopy(data))
            link = response.headers.get("Link")
            response = _json_response(data, 200, {"Link": link} if link else None)
        how = next((h for pattern, h in self._loops.items() if re.search(pattern, path)), None)
        if how is not None and response.status_code == 200:
            page, _ = self._page_args(request, 1, 1)
            args = dict(request.args)
            if how == "endless":
                args["page"] = str(page + 1)
            target = f"{request.base_url}?{urlencode(args)}" if args else request.base_url
            response.headers["Link"] = f'<{target}>; rel="next"'
        seconds = next((t for pattern, t in self._trickles.items() if re.search(pattern, path)), None)
        if seconds is not None:
            response = trickle(response, seconds)
        return response

    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.path_contains is None or fault.path_contains in path:
                    fault.count -= 1
                    if fault.count <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def _route(self, request: Request) -> Response:
        if request.method != "GET":
            return _json_response({"message": "Not Found"}, 404)
        if not request.path.startswith(self.path_prefix + "/"):
            return _json_response({"message": "Not Found"}, 404)
        path = request.path[len(self.path_prefix) :]
        fault = self._take_fault(path)
        if fault is not None:
            return _json_response(
                fault.body if fault.body is not None else {"message": "fault"}, fault.status, fault.headers
            )
        if self.token is not None and request.headers.get("Authorization") != f"Bearer {self.token}":
            return _json_response({"message": "Bad credentials"}, 401)
        prefix = f"/repos/{self.repo}/"
        if path == prefix.rstrip("/"):
            return self._ok(request, {"full_name": self.repo, "default_branch": self.default_branch})
        if not path.startswith(prefix):
            return _json_response({"message": "Not Found"}, 404)
        rest = path[len(prefix) :]
        if rest == "commits":
            return self._list(request)
        if rest.startswith("commits/") and rest.count("/") == 1:
            return self._detail(request, rest.split("/", 1)[1])
        if rest.startswith("pulls/") and rest.split("/", 1)[1].isdigit():
            return self._pull(request, int(rest.split("/", 1)[1]))
        if rest.startswith("contents/") and request.args.get("ref") in self.commit_files:
            return self._contents_at(request, rest[len("contents/") :])
        if rest.startswith("git/trees/") and rest[len("git/trees/") :] in self.commit_files:
            tree = self.commit_files[rest[len("git/trees/") :]]
            entries = [
                {"path": p, "mode": "100644", "type": "blob", "sha": self._blob_id(b), "size": len(b)}
                for p, b in sorted(tree.items())
            ]
            return self._ok(request, {"tree": entries, "truncated": False})
        if rest.startswith(("branches/", "git/trees/", "contents/", "git/blobs/")):
            return self._files_route(request, rest)
        return _json_response({"message": "Not Found"}, 404)

    # -- files at a commit (set_file) and at the tip (set_files) ------------------------------------
    def _contents_at(self, request: Request, path: str) -> Response:
        import base64

        content = self.commit_files[request.args.get("ref", "")].get(path)
        if content is None:
            return _json_response({"message": "Not Found"}, 404)
        big = len(content) > self.contents_limit  # GitHub's JSON form stops at 1 MB
        body = {"type": "file", "path": path, "size": len(content), "encoding": "none" if big else "base64",
                "content": "" if big else base64.b64encode(content).decode()}  # fmt: skip
        return self._ok(request, body)

    def _tip(self) -> str:
        return self._commits[0]["sha"] if self._commits else "0" * 40

    @staticmethod
    def _blob_sha(text: str) -> str:
        return FakeGitHub._blob_id(text.encode("utf-8"))

    @staticmethod
    def _blob_id(data: bytes) -> str:
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()

    def _files_route(self, request: Request, rest: str) -> Response:
        import base64

        kind, _, name = rest.partition("/")
        if kind == "branches":
            if name not in self.branches:
                return _json_response({"message": "Branch not found"}, 404)
            return self._ok(request, {"name": name, "commit": {"sha": self._tip()}})
        kind, _, name = name.partition("/")  # git/trees/<sha>, git/blobs/<sha>
        if rest.startswith("git/trees/"):
            if name != self._tip():
                return _json_response({"message": "Not Found"}, 404)
            tree = [
                {"path": p, "type": "blob", "sha": self._blob_sha(t)} for p, t in sorted(self.files.items())
            ]
            return self._ok(request, {"sha": name, "tree": tree, "truncated": False})
        if rest.startswith("git/blobs/"):
            known = [text.encode() for text in self.files.values()]
            known += [b for tree in self.commit_files.values() for b in tree.values()]
            for data in known:
                if self._blob_id(data) == name:
                    content = base64.b64encode(data).decode()
                    body = {"sha": name, "size": len(data), "encoding": "base64", "content": content}
                    return self._ok(request, body)
            return _json_response({"message": "Not Found"}, 404)
        path = rest.removeprefix("contents/")
        text = self.files.get(path)
        if text is None or request.args.get("ref") not in (self._tip(), *self.branches):
            return _json_response({"message": "Not Found"}, 404)
        data = text.encode("utf-8")
        entry = {"type": "file", "path": path, "size": len(data), "sha": self._blob_sha(text)}
        if len(data) > self.contents_limit:  # GitHub: empty content, encoding "none", past 1 MB
            entry.update(encoding="none", content="")
        else:
            # GitHub wraps base64 at 60 columns
            encoded = base64.b64encode(data).decode()
            entry.update(
                encoding="base64", content="\n".join(encoded[i : i + 60] for i in range(0, len(encoded), 60))
            )
        return self._ok(request, entry)

    def _ok(self, request: Request, data: Any, headers: Mapping[str, str] | None = None) -> Response:
        body = json.dumps(data)
        etag = 'W/"' + hashlib.sha1(body.encode()).hexdigest() + '"'
        sent = request.headers.get("If-None-Match")
        if sent and (sent.strip() == "*" or etag in [t.strip() for t in sent.split(",")]):
            return Response(b"", status=304, headers={"ETag": etag})
        all_headers = {"ETag": etag, **(headers or {})}
        return Response(body, status=200, headers=all_headers, content_type="application/json; charset=utf-8")

    def _links(self, request: Request, page: int, last: int) -> dict[str, str]:
        """GitHub-style Link header for a paginated answer."""
        if last <= 1:
            return {}

        def url(p: int) -> str:
            args = dict(request.args)
            args["page"] = str(p)
            return f"{request.base_url}?{urlencode(args)}"

        rels = []
        if page < last:
            rels += [f'<{url(page + 1)}>; rel="next"', f'<{url(last)}>; rel="last"']
        if page > 1:
            rels += [f'<{url(1)}>; rel="first"', f'<{url(page - 1)}>; rel="prev"']
        return {"Link": ", ".join(rels)} if rels else {}

    @staticmethod
    def _page_args(request: Request, default_per_page: int, max_per_page: int) -> tuple[int, int]:
        try:
            page = max(1, int(request.args.get("page", "1")))
            per_page = min(max_per_page, max(1, int(request.args.get("per_page", str(default_per_page)))))
        except ValueError:
            page, per_page = 1, default_per_page
        return page, per_page

    def _reachable(self, sha: str) -> list[dict[str, Any]]:
        seen: set[str] = set()
        stack = [sha]
        while stack:
            current = stack.pop()
            if current in seen or current not in self._by_sha:
                continue
            seen.add(current)
            stack.extend(p["sha"] for p in self._by_sha[current]["parents"])
        return [c for c in self._commits if c["sha"] in seen]

    def _list(self, request: Request) -> Response:
        ref = request.args.get("sha", self.default_branch)
        if ref in self.branches:
            history = self._commits
        elif ref in self._by_sha:
            history = self._reachable(ref)
        else:
            return _json_response({"message": f"No commit found for SHA: {ref}"}, 404)
        since = _parse_time(request.args["since"]) if "since" in request.args else None
        until = _parse_time(request.args["until"]) if "until" in request.args else None
        # GitHub's since/until are inclusive on both ends
        selected = [
            c
            for c in history
            if (since is None or self._dates[c["sha"]] >= since)
            and (until is None or self._dates[c["sha"]] <= until)
        ]
        page, per_page = self._page_args(request, 30, 100)
        last = max(1, -(-len(selected) // per_page))
        chunk = selected[(page - 1) * per_page : page * per_page]
        items = [{k: c[k] for k in _LIST_ONLY_KEYS if k in c} for c in chunk]
        headers = self._links(request, page, last)
        if chunk:
            headers["Last-Modified"] = format_datetime(
                self._dates[chunk[0]["sha"]].astimezone(UTC), usegmt=True
            )
        return self._ok(request, items, headers)

    def _resolve(self, ref: str) -> tuple[dict[str, Any] | None, Response | None]:
        ref_l = ref.lower()
        if ref_l in self._by_sha:
            return self._by_sha[ref_l], None
        matches = [c for c in self._commits if c["sha"].startswith(ref_l)] if len(ref_l) >= 4 else []
        if len(matches) == 1:
            return matches[0], None
        if len(matches) > 1:
            # Assumed wording: GitHub's answer for an ambiguous short SHA is not documented.
            return None, _json_response({"message": f"The SHA {ref} is ambiguous"}, 422)
        return None, _json_response({"message": f"No commit found for SHA: {ref}"}, 422)

    def _detail(self, request: Request, ref: str) -> Response:
        commit, error = self._resolve(ref)
        if error is not None or commit is None:
            return error or _json_response({"message": "Not Found"}, 404)
        files = commit.get("files", [])[: self.file_cap]
        page, _ = self._page_args(request, self.files_per_page, self.files_per_page)
        per_page = self.files_per_page
        last = max(1, -(-len(files) // per_page))
        data = dict(commit)
        data["files"] = files[(page - 1) * per_page : page * per_page]
        return self._ok(request, data, self._links(request, page, last))

    def _pull(self, request: Request, number: int) -> Response:
        if number in self.pulls:
            return self._ok(request, {"number": number, **self.pulls[number]})
        for c in self._commits:
            m = _PR_TITLE.search(c["commit"]["message"].split("\n", 1)[0])
            if m and int(m.group(1)) == number:
                return self._ok(
                    request,
                    {
                        "number": number,
                        "state": "closed",
                        "merged": True,
                        "merge_commit_sha": c["sha"],
                        "base": {"ref": self.default_branch},
                        "changed_files": len(c.get("files", [])),
                    },
                )
        return _json_response({"message": "Not Found"}, 404)
