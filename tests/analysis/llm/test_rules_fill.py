"""An LLM card's unknown insight rows take the rules' facts where the rules have some (analysis/llm/rules_fill.py)."""

from __future__ import annotations

from analysis.heuristic import assess
from analysis.heuristic.prose import found_insights
from analysis.llm.rules_fill import with_known_insights
from analysis.models import INSIGHT_DIMENSIONS, Analysis, ChangeType, Importance
from tests.analysis.heuristic.test_heuristic import fc, make

# a 1.5B model's high card on a large change: three of six rows left empty
COMMIT = make(
    "Drop the legacy loader", fc("src/widget/loader.py", 400, 900), fc("tests/test_loader.py", 30, 80)
)


def card(lang: str) -> Analysis:
    unknown = "未知" if lang == "zh" else "Unknown"
    rows = dict.fromkeys(INSIGHT_DIMENSIONS, unknown) | {
        "architecture": "The loader goes.",
        "compatibility": "x",
    }
    return Analysis(sha=COMMIT.sha, importance=Importance.HIGH, importance_reason="r",
                    change_type=ChangeType.REFACTOR, summary="s", insights=rows, lang=lang)  # fmt: skip


def test_unknown_rows_take_the_rules_facts_and_rows_without_facts_stay_unknown() -> None:
    a = assess(COMMIT)
    found = found_insights(a.facts, list(a.judgment.signals), "en")
    assert "maintainability" in found and "performance" not in found  # "not assessable without a model"
    out, filled = with_known_insights(card("en"), found, "en")
    assert "maintainability" in filled and out.insights["maintainability"] == found["maintainability"]
    assert out.insights["maintainability"].startswith("1 test file changed")
    assert out.insights["performance"] == "Unknown" and out.insights["architecture"] == "The loader goes."
    zh = found_insights(a.facts, list(a.judgment.signals), "zh")
    out, filled = with_known_insights(card("zh"), zh, "zh")
    assert (
        out.insights["maintainability"].startswith("测试文件改动") and out.insights["performance"] == "未知"
    )


def test_a_card_without_unknown_rows_is_the_same_card() -> None:
    full = card("en").model_copy(update={"insights": dict.fromkeys(INSIGHT_DIMENSIONS, "said")})
    a = assess(COMMIT)
    assert with_known_insights(full, found_insights(a.facts, list(a.judgment.signals), "en"), "en") == (
        full,
        [],
    )
