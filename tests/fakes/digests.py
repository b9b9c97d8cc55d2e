"""Builders of synthetic commits, analyses and digests for tests (no network, no ../shared).

Everything is deterministic: SHAs are hashes of a seed, times are fixed. Defaults give a plausible
vllm-like day in Asia/Shanghai; every builder takes keyword overrides.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import TypeVar
from zoneinfo import ZoneInfo

from analysis.models import INSIGHT_DIMENSIONS, Analysis, ChangeType, Commit, Digest, FileChange, Importance
from analysis.window import day_window

REPO = "acme/widgets"
BRANCH = "main"
DAY = date(2026, 1, 26)
TZ = "Asia/Shanghai"
T = TypeVar("T")

# Text a hostile commit author or a misbehaving model could produce; a report must survive all of it.
LONG_TEXT = "Long text that must never be cut " + " ".join(f"word{i}" for i in range(400)) + " THE-END"
HOSTILE_TEXTS: tuple[str, ...] = (
    "pipes | in | title || end",
    "back`ticks` and ``` fences",
    "<script>alert(1)</script>",
    "**bold** and __under__ and *em*",
    "[x](javascript:alert(1))",
    "line one\nline two\r\n# heading injected",
    "# heading at the start",
    "ping @everyone and @here and @channel",
    "slack <!here> <!channel> <@U123> discord <@&42>",
    "> quote\n- list\n1. numbered",
    "html <img src=x onerror=alert(1)> & entities &amp;",
    "`code | with pipe` and `<b>`",
    "``<img src=x onerror=alert(1)>` unbalanced run",
    LONG_TEXT,
)


def fake_sha(seed: str) -> str:
    """A 40-hex SHA derived from seed."""
    return hashlib.sha1(seed.encode("utf-8")).hexdigest()


def make_commit(
    title: str = "[Feature] Add widget support (#1001)",
    *,
    repo: str = REPO,
    sha: str | None = None,
    author: str = "Ada Lovelace",
    committed_at: datetime | None = None,
    body: str = "",
    files: Sequence[FileChange] | None = None,
    url: str | None = "",
) -> Commit:
    """A commit; url "" means the GitHub URL of the SHA, None means no web page."""
    sha = sha or fake_sha(f"{repo}:{title}:{committed_at}")
    message = title + (f"\n\n{body}" if body else "")
    if files is None:
        files = (FileChange("src/widgets/core.py", "modified", 12, 3, "@@ -1 +1 @@\n-a\n+b"),)
    if url == "":
        url = f"https://github.com/{repo}/commit/{sha}"
    return Commit(
        repo=repo,
        sha=sha,
        message=message,
        author=author,
        committed_at=committed_at or datetime(2026, 1, 26, 12, 0, tzinfo=ZoneInfo(TZ)),
        parents=(fake_sha(sha),),
        files=tuple(files),
        url=url,
    )


def many_commits(n: int) -> list[Commit]:
    """n small distinct commits a minute apart on DAY (floods, caps)."""
    start = datetime(2026, 1, 26, 1, 0, tzinfo=ZoneInfo(TZ))
    return [
        make_commit(
            f"Change part {i} (#{300 + i})",
            committed_at=start + timedelta(minutes=i),
            files=[FileChange(f"src/part{i}.py", "modified", 5, 1, "@@ -1 +1 @@\n-a\n+b")],
        )
        for i in range(n)
    ]


def make_analysis(
    commit: Commit,
    importance: Importance | str = Importance.LOW,
    *,
    change_type: ChangeType | str = ChangeType.FEATURE,
    reason: str | None = None,
    summary: str | None = None,
    scope: list[str] | None = None,
    insights: dict[str, str] | None = None,
    risks: list[str] | None = None,
    recommendations: list[str] | None = None,
    notes: list[str] | None = None,
    analyzer: str = "heuristic",
    lang: str = "zh",
) -> Analysis:
    """An analysis holding exactly its tier's fields; unspecified ones get text naming the commit."""
    level = Importance(importance)
    tag = commit.short_sha
    above_low = level != Importance.LOW
    default_insights = {d: f"{d} of {tag}" for d in INSIGHT_DIMENSIONS}
    return Analysis(
        sha=commit.sha,
        importance=level,
        importance_reason=_given(
            reason, f"{commit.changed_lines} changed lines in {commit.file_count} files"
        ),
        change_type=ChangeType(change_type),
        summary=_given(summary, f"Summary of {tag}."),
        scope=_given(scope, [f"scope A of {tag}", f"scope B of {tag}"]) if above_low else [],
        insights=_given(insights, default_insights) if level == Importance.HIGH else {},
        risks=_given(risks, [f"risk of {tag}"]) if above_low else [],
        recommendations=_given(recommendations, [f"check {tag}"]) if above_low else [],
        analyzer=analyzer,
        lang=lang,
        notes=list(notes or []),
    )


def _given(value: T | None, default: T) -> T:
    return default if value is None else value


def make_digest(
    importances: Sequence[Importance | str] = ("low", "high", "medium", "low", "medium", "high", "low"),
    *,
    repo: str = REPO,
    branch: str = BRANCH,
    day: date = DAY,
    tz: str = TZ,
    commits: Sequence[Commit] | None = None,
    analyses: Sequence[Analysis] | None = None,
    analyzer: str | Sequence[str] = "heuristic",
    generated_at: datetime | None = None,
    lang: str = "zh",
) -> Digest:
    """A digest of one day, newest first. Without commits, one commit per entry of importances,
    one hour apart from 23:xx down; analyzer may be one name or one per commit."""
    zone = ZoneInfo(tz)
    start, end = day_window(day, zone)
    if commits is None:
        commits = [
            make_commit(
                f"[Change] Step {i} of the day (#{2000 + i})",
                repo=repo,
                author=f"Dev {i}",
                committed_at=end - timedelta(hours=i + 1, minutes=-i, seconds=7 * i + 3),
            )
            for i in range(len(importances))
        ]
    if analyses is None:
        names = [analyzer] * len(commits) if isinstance(analyzer, str) else list(analyzer)
        analyses = [
            make_analysis(c, imp, analyzer=name, lang=lang)
            for c, imp, name in zip(commits, importances, names, strict=True)
        ]
    return Digest(
        repo=repo,
        branch=branch,
        day=day,
        timezone=tz,
        window_start=start,
        window_end=end,
        generated_at=generated_at or end + timedelta(hours=8, seconds=3),
        commits=list(commits),
        analyses={a.sha: a for a in analyses},
        lang=lang,
    )


def hostile_digest(repo: str = "evil|org/<script>*repo*", tz: str = TZ) -> Digest:
    """Every tier, with hostile titles, authors and analysis text (HOSTILE_TEXTS) everywhere."""
    zone = ZoneInfo(tz)
    _, end = day_window(DAY, zone)
    commits, analyses = [], []
    for i, text in enumerate(HOSTILE_TEXTS):
        commit = make_commit(
            text,
            repo=repo,
            author=f"{HOSTILE_TEXTS[(i + 1) % len(HOSTILE_TEXTS)]} <mallory{i}@evil.example.com>",
            committed_at=end - timedelta(minutes=30 * (i + 1)),
            body="Body text.\n\nSigned-off-by: Mallory <mallory@evil.example.com>",
            url=f"https://github.com/evil/repo/commit/{fake_sha(text)}?q=(x) y",
        )
        hostile = HOSTILE_TEXTS[(i + 3) % len(HOSTILE_TEXTS)]
        analyses.append(
            make_analysis(
                commit,
                (Importance.HIGH, Importance.MEDIUM, Importance.LOW)[i % 3],
                reason=hostile,
                summary=text,
                scope=[hostile, text],
                insights={
                    d: HOSTILE_TEXTS[(i + k) % len(HOSTILE_TEXTS)] for k, d in enumerate(INSIGHT_DIMENSIONS)
                },
                risks=[text],
                recommendations=[hostile],
                notes=[text, "covered 3 of 4 files"],
            )
        )
        commits.append(commit)
    return make_digest(repo=repo, tz=tz, commits=commits, analyses=analyses)
