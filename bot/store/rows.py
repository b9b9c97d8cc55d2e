"""Rows of the store's tables read into the domain and back: commits and their files, follow-up links,
surface facts, stored path sets; the timestamps every row carries."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from analysis.history.followups import FollowUpKind, FollowUpLink
from analysis.models import PR_IN_TITLE, Commit, FileChange, SurfaceChange
from analysis.titles import merge_pr, message_title


def insert_sql(table: str, columns: Sequence[str], key: Sequence[str] = ()) -> str:
    """One statement that inserts a row of `columns`; with `key`, an upsert that sets the other columns where a
    row with that key exists (what sqlite-utils' upsert does in six or more statements, each giving the GIL up
    and waiting for it again). Names are bracketed: the call log's are whatever fields a call brings."""
    names = ", ".join(f"[{c}]" for c in columns)
    sql = f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(columns))})"
    if not key:
        return sql
    values = [c for c in columns if c not in key]
    return sql + f" ON CONFLICT ({', '.join(key)}) DO UPDATE SET {', '.join(f'[{c}] = excluded.[{c}]' for c in values)}"


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(dt: datetime) -> str:
    return dt.isoformat()


def link_row(link: FollowUpLink) -> dict[str, Any]:
    return {
        "original": link.original,
        "follow_up": link.follow_up,
        "kind": link.kind.value,
        "evidence": link.evidence,
        "original_at": iso(link.original_at.astimezone(UTC)),
        "follow_up_at": iso(link.follow_up_at.astimezone(UTC)),
    }


def link_from_row(r: dict[str, Any]) -> FollowUpLink:
    return FollowUpLink(
        original=r["original"],
        follow_up=r["follow_up"],
        kind=FollowUpKind(r["kind"]),
        evidence=r["evidence"],
        original_at=datetime.fromisoformat(r["original_at"]),
        follow_up_at=datetime.fromisoformat(r["follow_up_at"]),
    )


def title_pr(message: str | None) -> int | None:
    title = message_title(message or "")[0]
    m = PR_IN_TITLE.search(title)
    return int(m.group(1)) if m else merge_pr(title)


def json_paths(paths: frozenset[str] | None) -> str | None:
    return json.dumps(sorted(paths), ensure_ascii=False) if paths is not None else None


def paths_from_json(stored: str | None) -> frozenset[str] | None:
    return frozenset(json.loads(stored)) if stored is not None else None


def surface_row(change: SurfaceChange) -> dict[str, Any]:
    return {
        "kind": change.kind.value,
        "name": change.name,
        "path": change.path,
        "line": change.line,
        "old": change.old,
        "new": change.new,
        "aliased": change.aliased,
        "documented": change.documented,
        "api": change.api,
    }


def commit_from_row(row: dict[str, Any], files: Iterable[dict[str, Any]]) -> Commit:
    return Commit(
        repo=row["repo"],
        sha=row["sha"],
        message=row["message"],
        author=row["author"],
        author_login=row["author_login"],
        committed_at=datetime.fromisoformat(row["committed_at"]),
        parents=tuple(json.loads(row["parents"] or "[]")),
        url=row["url"],
        additions=row["additions"],
        deletions=row["deletions"],
        files_total=row["files_total"],
        files=tuple(
            FileChange(
                path=f["path"],
                status=f["status"],
                additions=f["additions"],
                deletions=f["deletions"],
                patch=f["patch"],
                previous_path=f["previous_path"],
            )
            for f in files
        ),
    )
