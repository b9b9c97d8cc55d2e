"""The machine-readable twin of the Markdown report (`digestbot digest --format json`).

Text stays raw (no Markdown escaping, no mention breaking: escaping is the presenter's job), but the
same facts as the report: display titles without trailers, no e-mail addresses, only http(s) URLs.
Times are ISO 8601 with the digest zone's offset; commits keep the digest order (newest first).

Top-level "analyzer" names the analysers behind the digest: one name when all commits share it
("heuristic"), names joined by "+" when mixed ("llm+heuristic-fallback"), "none" on an empty day.
"""

from __future__ import annotations

import json
from datetime import datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from analysis.models import (
    INSIGHT_DIMENSIONS,
    Analysis,
    Commit,
    DayFollowUp,
    Digest,
    Importance,
    SurfaceChange,
    describe,
)
from analysis.render.markdown import analyzer_name, safe_url, same_commit
from analysis.text import display_author, display_title, redact


def render_json(digest: Digest) -> dict[str, Any]:
    """The whole day as plain JSON types. Raises ValueError when a commit has no analysis."""
    tz = ZoneInfo(digest.timezone)
    commits = []
    for commit in digest.commits:
        analysis = digest.analyses.get(commit.sha)
        if analysis is None:
            raise ValueError(f"{digest.repo}: commit {commit.sha[:12]} has no analysis")
        commits.append(render_commit_json(commit, analysis, tz))
    stats = {tier.value: sum(1 for c in commits if c["importance"] == tier.value) for tier in Importance}
    return {
        "repo": digest.repo,
        "branch": digest.branch,
        "date": digest.day.isoformat(),
        "timezone": digest.timezone,
        "window": {"start": _iso(digest.window_start, tz), "end": _iso(digest.window_end, tz)},
        "generated_at": _iso(digest.generated_at, tz),
        "analyzer": analyzer_name(digest.analyses[c.sha].analyzer for c in digest.commits),
        "stats": {**stats, "total": len(commits)},
        "filtered_out": digest.filtered_out,  # commits of the window a subscription's filters left out
        # a shallow clone's history of the branch starts inside the window: earlier commits may be missing
        "history_start": _iso(digest.history_start, tz) if digest.history_start else None,
        # an empty day after the local clone's newest commit: the clone may not be kept up to date
        "clone_newest": _iso(digest.clone_newest, tz) if digest.clone_newest else None,
        "followups": [_followup_json(entry, tz) for entry in digest.followups],
        "commits": commits,
    }


def _followup_json(entry: DayFollowUp, tz: tzinfo) -> dict[str, Any]:
    """One of the day's follow-ups: which of its commits reverts or fixes which earlier one."""
    return {
        "kind": entry.kind.value,  # revert | fix
        "follow_up": entry.follow_up.sha,
        "evidence": redact(entry.evidence),
        "original": {
            "sha": entry.original_sha,
            "title": redact(entry.original_title),
            "committed_at": _iso(entry.original_at, tz),
            "url": safe_url(entry.original_url),
            "pr_number": entry.original_pr,
            "importance": entry.original_rank.value if entry.original_rank else None,  # the rank we gave it
            "report": entry.original_report,  # its section in its day's report, when we wrote one
        },
    }


def render_commit_json(commit: Commit, analysis: Analysis, tz: tzinfo | None = None) -> dict[str, Any]:
    """One commit with its analysis; committed_at in tz (the commit's own offset when tz is None)."""
    if not same_commit(commit.sha, analysis.sha):
        raise ValueError(f"analysis {analysis.sha[:12]} does not belong to commit {commit.sha[:12]}")
    return {
        "sha": commit.sha,
        "short_sha": commit.short_sha,
        "title": display_title(commit),
        "author": display_author(commit),
        "committed_at": _iso(commit.committed_at, tz),
        "url": safe_url(commit.url),
        "pr_number": commit.pr_number,
        "importance": analysis.importance.value,
        "importance_reason": redact(analysis.importance_reason),
        "change_type": analysis.change_type.value,
        "files_changed": commit.file_count,
        "additions": commit.total_additions,
        "deletions": commit.total_deletions,
        "analysis": tier_fields(analysis),
        "analyzer": analysis.analyzer,
        "surface": [surface_json(c) for c in commit.surface] if commit.surface is not None else None,
        "shipped": sorted(commit.shipped) if commit.shipped is not None else None,
        "prose": sorted(commit.prose_files) if commit.prose_files is not None else None,
    }


def surface_json(change: SurfaceChange) -> dict[str, Any]:
    """One surface fact: names from the code, raw (the presenter escapes them), e-mail addresses out."""
    return {
        "kind": change.kind.value,
        "name": redact(change.name),
        "path": change.path,
        "line": change.line,
        "old": redact(change.old) if change.old is not None else None,
        "new": redact(change.new) if change.new is not None else None,
        "aliased": change.aliased,
        "documented": change.documented,
        "api": change.api,
        "breaking": change.breaking,
        "feature": change.feature,
        "behaviour": change.behaviour,
        "text": redact(describe(change)),
    }


def tier_fields(analysis: Analysis) -> dict[str, Any]:
    """Only the fields of the analysis's tier (DESIGN.md §3), plus the notes shown to readers."""
    fields: dict[str, Any] = {"change_type": analysis.change_type.value, "summary": redact(analysis.summary)}
    if analysis.importance != Importance.LOW:
        fields["scope"] = _texts(analysis.scope)
    if analysis.importance == Importance.HIGH:
        keys = [*INSIGHT_DIMENSIONS, *sorted(k for k in analysis.insights if k not in INSIGHT_DIMENSIONS)]
        fields["insights"] = {k: redact(analysis.insights[k]) for k in keys if k in analysis.insights}
    if analysis.importance != Importance.LOW:
        fields["risks"] = _texts(analysis.risks)
        fields["recommendations"] = _texts(analysis.recommendations)
    fields["notes"] = _texts(analysis.notes)
    if analysis.grounding_removed:  # what the fact-check removed: for tools, never shown in chat or reports
        fields["grounding_removed"] = [redact(i) for i in analysis.grounding_removed]
    return fields


def dumps(obj: Any) -> str:
    """UTF-8 friendly, indented JSON text (no trailing newline, like json.dumps)."""
    return json.dumps(obj, ensure_ascii=False, indent=2)


def _texts(items: list[str]) -> list[str]:
    return [redact(i) for i in items if i.strip()]


def _iso(moment: datetime, tz: tzinfo | None) -> str:
    return (moment.astimezone(tz) if tz is not None else moment).isoformat(timespec="seconds")
