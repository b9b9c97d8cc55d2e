"""A breaking change the code shows is named in an LLM analysis's Compatibility and Risks (analysis/llm/stated.py),
built from the shape of a real commit: a parameter inserted before others of a public function, which a small
model summarised as breaking yet called "compatible with the existing API"."""

from __future__ import annotations

from analysis.heuristic import assess, breaking_statement
from analysis.llm.stated import with_breaking_stated
from analysis.models import Analysis, ChangeType, Importance, SurfaceChange, SurfaceKind
from tests.analysis.heuristic.test_heuristic import fc, make

REORDERED = SurfaceChange(
    SurfaceKind.PARAM_REORDERED,
    "pkg.json_schema.model_json_schema",
    "pkg/json_schema.py",
    line=2498,
    old="cls, by_alias, ref_template, schema_generator, mode",
    new="cls, by_alias, ref_template, union_format, schema_generator, mode",
)
COMMIT = make(
    "Add `union_format` parameter to JSON Schema generation (#12147)",
    fc("pkg/json_schema.py", 120, 10),
    fc("tests/test_json_schema.py", 70, 3),
    surface=(REORDERED,),
    shipped=frozenset({"pkg/json_schema.py"}),
)
DENIAL = "The change is compatible with the existing API and does not introduce any breaking changes."


def model_analysis(**kw) -> Analysis:
    base = {
        "sha": COMMIT.sha,
        "importance": Importance.HIGH,
        "importance_reason": "A new parameter.",
        "change_type": ChangeType.FEATURE,
        "summary": "Adds a union format to JSON schema generation.",
        "scope": ["pkg/json_schema.py"],
        "risks": ["breaking users"],
        "recommendations": ["Review the new parameter."],
        "insights": {"architecture": "A new parameter.", "compatibility": DENIAL},
        "analyzer": "llm",
        "lang": "en",
    }
    return Analysis(**{**base, **kw})


def statement(lang: str = "en"):
    found = breaking_statement(assess(COMMIT), lang)
    assert found is not None
    return found


def test_the_rules_state_what_breaks_with_the_names_it_rests_on() -> None:
    found = statement()
    assert found.compatibility.startswith("May affect compatibility: breaks users: reorders the parameters of")
    assert "model_json_schema" in found.compatibility
    assert found.risks and all(r.startswith("Breaking change (reorders the parameters of") for r in found.risks)
    assert "pkg.json_schema.model_json_schema" in found.names
    zh = statement("zh")
    assert zh.compatibility.startswith("可能影响兼容性：破坏兼容") and zh.risks[0].startswith("破坏兼容的改动")


def test_nothing_is_stated_where_nothing_breaks_users() -> None:
    added = SurfaceChange(SurfaceKind.PARAM_ADDED, "pkg.f", "pkg/mod.py", line=3, new="x")
    commit = make("Add x to f (#1)", fc("pkg/mod.py", 30, 2), surface=(added,), shipped=frozenset({"pkg/mod.py"}))
    assert breaking_statement(assess(commit), "en") is None
    revert = make('Revert "Add x" (#2)', fc("pkg/json_schema.py", 10, 120), surface=(REORDERED,))
    assert breaking_statement(assess(revert), "en") is None  # a revert takes a break back: its impact is capped


def test_a_denial_and_an_unnamed_risk_give_way_to_the_rules_statement() -> None:
    found = statement()
    out = with_breaking_stated(model_analysis(), found, "en")
    assert out.insights["compatibility"] == found.compatibility  # the denial is dropped, not kept beside it
    assert out.risks == [*found.risks, "breaking users"]  # the model's own risk stays after the rules'
    assert out.insights["architecture"] == "A new parameter."
    assert out.notes[-1].startswith("Compatibility and risks state the breaking change the code shows")


def test_a_model_that_names_the_break_keeps_its_own_words() -> None:
    own = "Callers passing `schema_generator` positionally to `model_json_schema()` break: it moved one place."
    analysis = model_analysis(risks=[own], insights={"compatibility": own})
    assert with_breaking_stated(analysis, statement(), "en") is analysis


def test_a_compatibility_text_that_does_not_name_the_break_follows_the_rules_statement() -> None:
    found = statement()
    other = "Output for existing schemas is unchanged."
    out = with_breaking_stated(model_analysis(insights={"compatibility": other}), found, "en")
    assert out.insights["compatibility"] == f"{found.compatibility}; {other}"


def test_what_the_tidying_left_unknown_is_not_kept_beside_the_rules_statement() -> None:
    found = statement()
    out = with_breaking_stated(model_analysis(risks=["Unknown"], insights={"compatibility": "Unknown"}), found, "en")
    assert out.risks == list(found.risks) and out.insights["compatibility"] == found.compatibility


def test_a_medium_analysis_gets_the_risk_and_no_insights() -> None:
    found = statement("zh")
    out = with_breaking_stated(model_analysis(importance=Importance.MEDIUM, insights={}, lang="zh"), found, "zh")
    assert out.insights == {} and out.risks[0] == found.risks[0]
    assert out.notes[-1].startswith("兼容性与风险按代码事实写明")


def test_chinese_denials_are_recognised_and_a_negated_compatibility_is_not_one() -> None:
    found = statement("zh")
    for denial in (
        "该改动保持向后兼容，model_json_schema 不受影响。",
        "不会破坏现有接口：model_json_schema 照常可用。",
        # a real 1.5B model's words on the same change
        "model_json_schema 兼容性良好，没有发现接口、配置或行为与平台不兼容的问题。",
    ):
        out = with_breaking_stated(model_analysis(insights={"compatibility": denial}, lang="zh"), found, "zh")
        assert out.insights["compatibility"] == found.compatibility
    for denial in ("No compatibility issues for model_json_schema.", "Compatibility is preserved in model_json_schema."):
        out = with_breaking_stated(model_analysis(insights={"compatibility": denial}), statement(), "en")
        assert out.insights["compatibility"] == statement().compatibility
    honest = "model_json_schema is not backward compatible for positional callers."
    analysis = model_analysis(risks=[honest], insights={"compatibility": honest})
    assert with_breaking_stated(analysis, statement(), "en") is analysis


def test_a_declared_break_without_names_is_stated_by_any_words_of_a_break() -> None:
    commit = make(
        "feat!: drop the legacy loader (#9)\n\nBREAKING CHANGE: the loader is gone.",
        fc("pkg/loader.py", 5, 80),
        shipped=frozenset({"pkg/loader.py"}),
    )
    found = breaking_statement(assess(commit), "en")
    assert found is not None and found.names == ()
    said = model_analysis(risks=["Breaks every user of the legacy loader."], insights={})
    assert with_breaking_stated(said, found, "en") is said
    unsaid = model_analysis(risks=["Check the docs."], insights={})
    assert with_breaking_stated(unsaid, found, "en").risks[0] == found.risks[0]


def test_a_summary_that_calls_the_break_compatible_says_what_breaks_instead() -> None:
    found = statement()
    summary = "Adds a union format to JSON schema generation. It does not introduce any breaking changes."
    out = with_breaking_stated(model_analysis(summary=summary), found, "en")
    assert out.summary == f"Adds a union format to JSON schema generation. {found.compatibility}."
    zh = statement("zh")
    said = "为 JSON Schema 生成新增 union_format 参数。该改动保持向后兼容。"
    out = with_breaking_stated(model_analysis(summary=said, lang="zh"), zh, "zh")
    assert out.summary == f"为 JSON Schema 生成新增 union_format 参数。{zh.compatibility}。"


def test_denials_elsewhere_are_dropped_and_the_rest_of_each_field_kept() -> None:
    found = statement()
    analysis = model_analysis(
        risks=["No breaking changes are expected.", "`model_json_schema` callers passing arguments by position break."],
        recommendations=["No migration is needed: the change is backward compatible.", "Document `union_format`."],
        insights={
            "architecture": "One parameter more. The API remains compatible.",
            "performance": "The change does not break anything.",
            "compatibility": "Positional callers of `model_json_schema` break.",
        },
    )
    out = with_breaking_stated(analysis, found, "en")
    assert out.risks == ["`model_json_schema` callers passing arguments by position break."]
    assert out.recommendations == ["Document `union_format`."]
    assert out.insights["architecture"] == "One parameter more."
    assert out.insights["performance"] == "Unknown"  # all it said was the denial
    assert out.insights["compatibility"] == "Positional callers of `model_json_schema` break."
    assert out.summary == analysis.summary and out.notes[-1].startswith("Compatibility and risks state")


def test_a_dropped_python_version_is_named_by_its_words() -> None:
    # A real 1.5B model on "Drop support for Python 3.9": its only risk was "breaking users", which named no
    # version, yet it counted as stating the break (the name gave no word to look for).
    dropped = SurfaceChange(SurfaceKind.SUPPORT_DROPPED, "Python 3.9", "pyproject.toml")
    commit = make("Drop support for Python 3.9 (#13070)", fc("pyproject.toml", 3, 3), surface=(dropped,))
    found = breaking_statement(assess(commit), "en")
    assert found is not None and found.risks
    out = with_breaking_stated(model_analysis(risks=["breaking users"], insights={}), found, "en")
    assert out.risks == [*found.risks, "breaking users"] and "Python 3.9" in out.risks[0]
    said = model_analysis(risks=["Users still on Python 3.9 can no longer install it."], insights={})
    assert with_breaking_stated(said, found, "en") is said
