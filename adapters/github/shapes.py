"""GitHub's JSON answers read into the domain: a commit detail and its files, a commit-list item, a tree, a
file's contents. Every field is checked against the shape GitHub documents; a wrong one raises ShapeError
naming where (e.g. files[2].filename), so a proxy's or a broken server's 200 never becomes a wrong digest."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from adapters.github.chain import Node
from analysis.models import Commit, FileChange

MAX_FILES = 3000  # GitHub never lists more files of one commit


def commit_from_api(repo: str, data: dict[str, Any], files: Iterable[FileChange], files_total: int) -> Commit:
    """The domain Commit from a GitHub commit detail (files given separately: they may span pages, see
    file_change). Raises ShapeError when the answer is not shaped as GitHub documents it."""
    meta = object_of(data.get("commit"), "commit")
    author = object_of(data.get("author"), "author")  # the top-level author is null for unknown e-mails
    login = field_of(author, "login", str, "author")
    stats = object_of(data.get("stats"), "stats")
    return Commit(
        repo=repo,
        sha=field_of(data, "sha", str, "", required=True),
        message=field_of(meta, "message", str, "commit") or "",
        author=field_of(object_of(meta.get("author"), "commit.author"), "name", str, "commit.author")
        or login
        or "unknown",
        author_login=login,
        committed_at=committed_of(meta, "commit"),
        parents=parents_of(data.get("parents"), "parents"),
        url=field_of(data, "html_url", str, ""),
        additions=field_of(stats, "additions", int, "stats"),
        deletions=field_of(stats, "deletions", int, "stats"),
        files_total=files_total,
        files=tuple(files),
    )


def page_files(data: dict[str, Any], offset: int) -> list[FileChange]:
    """The `files` of one page of a commit detail; `offset` numbers them across pages in messages."""
    return [file_change(f, f"files[{offset + i}]") for i, f in enumerate(list_of(data.get("files"), "files"))]


def commit_from_detail(repo: str, data: dict[str, Any]) -> Commit:
    """A saved GitHub commit detail whose `files` are all inline (one page), as a Commit: the benches' and
    tools' reader of GitHub-shaped JSON. Raises ValueError when it is not shaped as GitHub sends it."""
    try:
        entries = data.get("files") or []
        files = [file_change(f, f"files[{i}]") for i, f in enumerate(entries)]
        return commit_from_api(repo, data, files, len(files))
    except ShapeError as exc:
        raise ValueError(f"not a GitHub commit detail: {exc}") from None


def file_change(entry: Any, what: str) -> FileChange:
    """One entry of a commit's `files` (raises ShapeError when it is not shaped as GitHub sends it)."""
    f = object_of(entry, what)
    return FileChange(
        path=field_of(f, "filename", str, what, required=True),
        status=field_of(f, "status", str, what) or "modified",
        additions=field_of(f, "additions", int, what) or 0,
        deletions=field_of(f, "deletions", int, what) or 0,
        patch=field_of(f, "patch", str, what),  # absent for binaries and very large diffs: "diff unavailable"
        previous_path=field_of(f, "previous_filename", str, what),
    )


class ShapeError(Exception):
    """A 200 answer not shaped as GitHub documents it; the message says where (e.g. files[2].filename)."""


def where(what: str, key: str) -> str:
    return f"{what}.{key}" if what else key


def object_of(value: Any, what: str) -> dict[str, Any]:
    """An object field; {} for null or absent."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ShapeError(f"{what} is {type(value).__name__}, not an object")
    return value


def field_of(obj: dict[str, Any], key: str, kind: type, what: str, *, required: bool = False) -> Any:
    """A string or number field of an object: None when null or absent (unless required)."""
    value = obj.get(key)
    if value is None:
        if required:
            raise ShapeError(f"{where(what, key)} is missing")
        return None
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ShapeError(f"{where(what, key)} is {type(value).__name__}, not {kind.__name__}")
    return value


def list_of(value: Any, what: str) -> list[Any]:
    """A list field; [] for null or absent."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ShapeError(f"{what} is {type(value).__name__}, not a list")
    return value


def parents_of(value: Any, what: str) -> tuple[str, ...]:
    return tuple(
        field_of(object_of(p, f"{what}[{i}]"), "sha", str, f"{what}[{i}]", required=True)
        for i, p in enumerate(list_of(value, what))
    )


def committed_of(meta: dict[str, Any], what: str) -> datetime:
    """The committer date (the author date when GitHub gives none)."""
    for role in ("committer", "author"):
        text = field_of(object_of(meta.get(role), f"{what}.{role}"), "date", str, f"{what}.{role}")
        if text:
            try:
                moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise ShapeError(f"{what}.{role}.date {text[:40]!r} is not a date") from None
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    raise ShapeError(f"{what}.committer.date is missing")


def node_of(item: Any, what: str = "") -> Node:
    """A commit-list item as a chain node. Also checks the fields history() reads (raises ShapeError)."""
    item = object_of(item, what or "item")
    meta = object_of(item.get("commit"), where(what, "commit"))
    field_of(meta, "message", str, where(what, "commit"))
    who = object_of(meta.get("author"), where(what, "commit.author"))
    for key in ("name", "email"):
        field_of(who, key, str, where(what, "commit.author"))
    field_of(object_of(item.get("author"), where(what, "author")), "login", str, where(what, "author"))
    return Node(
        field_of(item, "sha", str, what, required=True),
        parents_of(item.get("parents"), where(what, "parents")),
        committed_of(meta, where(what, "commit")),
    )


def tree_paths(data: dict[str, Any]) -> list[str]:
    """The file paths of a recursive tree answer."""
    tree = data.get("tree")
    return [
        e["path"]
        for e in (tree if isinstance(tree, list) else [])
        if isinstance(e, dict) and e.get("type") == "blob" and isinstance(e.get("path"), str)
    ]


def tree_blobs(data: dict[str, Any]) -> dict[str, str]:
    """{path: blob id} of a recursive tree answer's files (symbolic links left out)."""
    tree = data.get("tree")
    return {
        e["path"]: e["sha"]
        for e in (tree if isinstance(tree, list) else [])
        if isinstance(e, dict)
        and e.get("type") == "blob"
        and e.get("mode") != "120000"
        and isinstance(e.get("path"), str)
        and isinstance(e.get("sha"), str)
    }


def decoded(data: dict[str, Any], max_bytes: int) -> str | None:
    """A contents answer's text; None for a directory, a file over max_bytes, or binary content."""
    if data.get("type") != "file" or data.get("encoding") != "base64":
        return None
    if not isinstance(data.get("size"), int) or data["size"] > max_bytes:
        return None
    try:
        raw = base64.b64decode(str(data.get("content") or ""))
    except ValueError:  # binascii.Error is a ValueError
        return None
    return None if b"\0" in raw else raw.decode("utf-8", "replace")


def files_capped(data: dict[str, Any], files: Sequence[FileChange]) -> bool:
    """GitHub stops at 3000 files without saying so; the commit's line totals then exceed the files'."""
    if len(files) < MAX_FILES:
        return False
    stats = data.get("stats")
    if not isinstance(stats, dict) or not stats:
        return True
    listed_add = sum(f.additions for f in files)
    listed_del = sum(f.deletions for f in files)
    return listed_add < (field_of(stats, "additions", int, "stats") or 0) or listed_del < (
        field_of(stats, "deletions", int, "stats") or 0
    )
