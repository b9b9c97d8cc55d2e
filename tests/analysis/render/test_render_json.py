"""The JSON twin of the report: shape, types, times with offsets, order and tier fields."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from analysis.models import INSIGHT_DIMENSIONS, Importance
from analysis.render.json_report import dumps, render_commit_json, render_json
from tests.fakes.digests import hostile_digest, make_analysis, make_commit, make_digest

TOP_KEYS = {
    "repo", "branch", "date", "timezone", "window", "generated_at", "analyzer", "stats", "filtered_out", "history_start", "clone_newest", "followups", "commits",
}  # fmt: skip
COMMIT_KEYS = {
    "sha",
    "short_sha",
    "title",
    "author",
    "committed_at",
    "url",
    "pr_number",
    "importance",
    "importance_reason",
    "change_type",
    "files_changed",
    "additions",
    "deletions",
    "analysis",
    "analyzer",
    "surface",
    "shipped",
    "prose",
}
LOW_FIELDS = {"change_type", "summary", "notes"}
MEDIUM_FIELDS = LOW_FIELDS | {"scope", "risks", "recommendations"}
HIGH_FIELDS = MEDIUM_FIELDS | {"insights"}


def test_round_trip_keys_and_types() -> None:
    digest = make_digest(("high", "medium", "low", "low"))
    data = render_json(digest)
    text = dumps(data)

    assert json.loads(text) == data
    assert set(data) == TOP_KEYS
    assert (data["repo"], data["branch"], data["date"], data["timezone"]) == (
        "acme/widgets",
        "main",
        "2026-01-26",
        "Asia/Shanghai",
    )
    assert data["stats"] == {"high": 1, "medium": 1, "low": 2, "total": 4}
    for item, commit in zip(data["commits"], digest.commits, strict=True):
        assert set(item) == COMMIT_KEYS
        assert item["sha"] == commit.sha and item["short_sha"] == commit.sha[:7]
        assert item["title"] == commit.title and item["author"] == commit.author
        assert item["url"] == commit.url
        assert isinstance(item["pr_number"], int) and item["pr_number"] == commit.pr_number
        assert (item["files_changed"], item["additions"], item["deletions"]) == (1, 12, 3)
        assert item["importance"] == digest.analyses[commit.sha].importance.value
        assert item["change_type"] == "feature" and item["analyzer"] == "heuristic"
        assert isinstance(item["analysis"]["notes"], list)


def test_times_carry_the_zone_offset_and_commits_stay_newest_first() -> None:
    digest = make_digest(("low", "medium", "high"))
    data = render_json(digest)

    assert data["window"] == {"start": "2026-01-26T00:00:00+08:00", "end": "2026-01-27T00:00:00+08:00"}
    assert data["generated_at"].endswith("+08:00")
    stamps = [datetime.fromisoformat(c["committed_at"]) for c in data["commits"]]
    assert all(c["committed_at"].endswith("+08:00") for c in data["commits"])
    assert stamps == [c.committed_at for c in digest.commits]  # same instants, same (digest) order
    assert stamps == sorted(stamps, reverse=True)


def test_a_daylight_saving_day_has_two_offsets() -> None:
    data = render_json(make_digest(("low",), tz="America/New_York", day=date(2026, 3, 8)))
    assert data["window"] == {"start": "2026-03-08T00:00:00-05:00", "end": "2026-03-09T00:00:00-04:00"}


def test_analysis_holds_only_its_tier_fields() -> None:
    digest = make_digest(("high", "medium", "low"))
    high, medium, low = (c["analysis"] for c in render_json(digest)["commits"])

    assert set(high) == HIGH_FIELDS
    assert set(medium) == MEDIUM_FIELDS
    assert set(low) == LOW_FIELDS
    assert list(high["insights"]) == list(INSIGHT_DIMENSIONS)
    assert high["insights"]["security"] == digest.analyses[digest.commits[0].sha].insights["security"]
    assert medium["scope"] == digest.analyses[digest.commits[1].sha].scope
    assert low["summary"] == digest.analyses[digest.commits[2].sha].summary


def test_insights_keep_only_the_dimensions_given() -> None:
    commit = make_commit()
    item = render_commit_json(commit, make_analysis(commit, "high", insights={"security": "none new"}))
    assert item["analysis"]["insights"] == {"security": "none new"}


@pytest.mark.parametrize(
    ("analyzers", "expected"),
    [
        (["heuristic", "heuristic"], "heuristic"),
        (["llm", "llm"], "llm"),
        (["heuristic-fallback", "llm", "llm"], "llm+heuristic-fallback"),
        (["heuristic", "llm", "heuristic-fallback"], "llm+heuristic-fallback+heuristic"),
        ([], "none"),
    ],
)
def test_top_level_analyzer_names_the_mix(analyzers: list[str], expected: str) -> None:
    digest = make_digest(["low"] * len(analyzers), analyzer=analyzers)
    data = render_json(digest)
    assert data["analyzer"] == expected
    assert [c["analyzer"] for c in data["commits"]] == analyzers


def test_commit_json_zone_defaults_to_the_commits_own_offset() -> None:
    commit = make_commit(committed_at=datetime(2026, 1, 26, 15, 19, 57, tzinfo=UTC))
    analysis = make_analysis(commit)

    assert render_commit_json(commit, analysis)["committed_at"] == "2026-01-26T15:19:57+00:00"
    shanghai = render_commit_json(commit, analysis, tz=ZoneInfo("Asia/Shanghai"))
    assert shanghai["committed_at"] == "2026-01-26T23:19:57+08:00"
    assert set(shanghai) == COMMIT_KEYS


def test_untrusted_text_is_kept_raw_but_without_trailers_emails_or_unsafe_urls() -> None:
    commit = make_commit(
        "Fix | <b>pipes</b> @everyone (#5)",
        author="Eve <eve@example.org>",
        body="Signed-off-by: Eve <eve@example.org>",
        url="javascript:alert(1)",
    )
    item = render_commit_json(commit, make_analysis(commit, "low", summary="修复 `a|b` 的问题"))
    text = dumps(item)

    assert item["title"] == "Fix | <b>pipes</b> @everyone (#5)"  # data, not Markdown: no escaping
    assert item["author"] == "Eve"
    assert item["url"] is None and item["pr_number"] == 5
    assert "Signed-off-by" not in text and "eve@" not in text
    assert "修复 `a|b` 的问题" in text  # ensure_ascii=False keeps the text readable
    assert json.loads(text) == item


def test_hostile_digest_round_trips_with_every_long_text_whole() -> None:
    digest = hostile_digest()
    data = json.loads(dumps(render_json(digest)))
    assert [c["title"] for c in data["commits"]] == [c.title for c in digest.commits]
    assert sum(data["stats"][t.value] for t in Importance) == data["stats"]["total"] == len(digest.commits)
    assert data["commits"][-1]["analysis"]["summary"].endswith("THE-END")


def test_commit_without_analysis_is_an_error() -> None:
    digest = make_digest(("low", "low"))
    del digest.analyses[digest.commits[0].sha]
    with pytest.raises(ValueError, match=digest.commits[0].sha[:12]):
        render_json(digest)
    with pytest.raises(ValueError, match="does not belong"):
        render_commit_json(digest.commits[0], digest.analyses[digest.commits[1].sha])
