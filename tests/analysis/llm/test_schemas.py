import json

import pytest

from analysis.llm.schemas import (
    CommitOut,
    HighOut,
    InsightsOut,
    MediumOut,
    ReplyInvalid,
    TriageOut,
    json_shape,
    parse_reply,
    response_format,
    strict_schema,
)
from analysis.models import INSIGHT_DIMENSIONS, ChangeType

TRIAGE = {
    "importance": "high",
    "reason": "Changes a default.",
    "change_type": "config",
    "summary": "Raises x.",
}
INSIGHTS = {d: f"{d} text" for d in INSIGHT_DIMENSIONS}
HIGH = {
    "summary": "Adds a cache.",
    "scope": ["engine"],
    "risks": ["stale entries"],
    "recommendations": ["watch memory"],
    "insights": INSIGHTS,
}


def _objects(node):
    if isinstance(node, dict):
        if node.get("type") == "object":
            yield node
        for value in node.values():
            yield from _objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from _objects(value)


@pytest.mark.parametrize("model", [TriageOut, InsightsOut, MediumOut, HighOut, CommitOut])
def test_strict_schema_closes_every_object(model):
    fmt = response_format(model)
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["name"] == model.__name__
    schema = fmt["json_schema"]["schema"]
    objects = list(_objects(schema))
    assert objects and schema["type"] == "object"
    for obj in objects:
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    text = json.dumps(schema)
    for keyword in ('"$ref"', '"$defs"', '"default"', '"title"'):
        assert keyword not in text


def test_enums_are_the_closed_sets():
    props = strict_schema(TriageOut)["properties"]
    assert props["importance"]["enum"] == ["high", "medium", "low"]
    assert props["change_type"]["enum"] == [c.value for c in ChangeType]
    high = strict_schema(HighOut)
    assert list(high["properties"]["insights"]["properties"]) == list(INSIGHT_DIMENSIONS)


def test_models_forbid_extra_keys_and_need_every_field():
    with pytest.raises(ValueError):
        TriageOut.model_validate({**TRIAGE, "extra": 1})
    with pytest.raises(ValueError):
        MediumOut.model_validate({"summary": "x"})


def test_json_shape_names_every_field():
    shape = json_shape(HighOut)
    for name in ("summary", "scope", "risks", "recommendations", "insights", *INSIGHT_DIMENSIONS):
        assert f'"{name}"' in shape
    assert '"high"|"medium"|"low"' in json_shape(TriageOut)


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps(TRIAGE),
        "```json\n" + json.dumps(TRIAGE, indent=2) + "\n```",
        "Here is my assessment:\n" + json.dumps(TRIAGE) + "\nHope this helps!",
        "<think>The user wants {json}. Let me think: high?</think>\n" + json.dumps(TRIAGE),
        "reasoning without an opening tag</think>" + json.dumps(TRIAGE),
        json.dumps({"result": TRIAGE}),
        json.dumps([TRIAGE]),
        json.dumps(TRIAGE)[:-1] + ",}",  # trailing comma
    ],
)
def test_parse_reply_finds_the_object(reply):
    out = parse_reply(reply, TriageOut)
    assert out == TriageOut.model_validate(TRIAGE)


@pytest.mark.parametrize(
    ("importance", "change_type", "want_importance", "want_type"),
    [
        ("High", "Bug Fix", "high", "bugfix"),
        (" MEDIUM ", "perf", "medium", "performance"),
        ("🟢 低", "doc", "low", "docs"),
        ("critical", "test", "high", "tests"),
        ("low", "CI", "low", "ci/build"),
        ("low", "ci / build", "low", "ci/build"),
        ("medium", "缺陷修复", "medium", "bugfix"),
        ("medium", "Dependencies", "medium", "dependency"),
    ],
)
def test_lenient_enums(importance, change_type, want_importance, want_type):
    reply = json.dumps({**TRIAGE, "importance": importance, "change_type": change_type})
    out = parse_reply(reply, TriageOut)
    assert (out.importance, out.change_type) == (want_importance, want_type)


def test_lenient_lists_text_and_keys():
    reply = json.dumps(
        {
            "Summary": "  **Summary**: Adds a cache.  ",
            "scope": "- engine\n- scheduler\n",
            "risks": "风险一；风险二",
            "recommendations": ["", "  1. watch memory ", None],
            "insights": {
                **{k: v for k, v in INSIGHTS.items() if k != "architecture"},
                "Architecture": ["a", "b"],
            },
            "confidence": 0.9,  # unknown keys carry nothing we read
        }
    )
    out = parse_reply(reply, HighOut)
    assert out.summary == "Adds a cache."
    assert out.scope == ["engine", "scheduler"]
    assert out.risks == ["风险一", "风险二"]
    assert out.recommendations == ["watch memory"]
    assert out.insights.architecture == "a b"


def test_null_list_is_empty_and_raw_newlines_are_accepted():
    reply = '{"summary": "line one\nline two", "scope": ["x"], "risks": null, "recommendations": ["y"]}'
    out = parse_reply(reply, MediumOut)
    assert out.risks == [] and out.summary.startswith("line one")


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (None, "empty"),
        ("", "empty"),
        ("   \n", "empty"),
        ("I cannot help with that.", "no JSON object"),
        ("<think>still going, never finished", "reasoning"),
        ('{"importance": "urgent", "reason": "r", "change_type": "bugfix", "summary": "s"}', "importance"),
        ('{"importance": "low", "reason": "", "change_type": "bugfix", "summary": "s"}', "reason"),
        ('{"summary": "s"}', "missing field(s): importance, reason, change_type"),
        ('{"importance": "low", "reason": "r", "change_type": "wat", "summary": "s"}', "change_type"),
    ],
)
def test_parse_reply_says_what_is_wrong(reply, fragment):
    with pytest.raises(ReplyInvalid) as info:
        parse_reply(reply, TriageOut)
    assert fragment in str(info.value)
    assert len(str(info.value)) < 600  # fit for a repair prompt


def test_high_needs_insights():
    reply = json.dumps({k: v for k, v in HIGH.items() if k != "insights"})
    with pytest.raises(ReplyInvalid, match="insights"):
        parse_reply(reply, HighOut)
    assert parse_reply(json.dumps(HIGH), HighOut).insights.security == "security text"


def test_first_valid_object_wins_over_an_earlier_example():
    reply = 'For example {"importance": "x"} — my answer: ' + json.dumps(TRIAGE)
    assert parse_reply(reply, TriageOut).importance == "high"


def card(importance: str, **fields) -> str:
    deep = {"scope": [], "risks": [], "recommendations": [], "insights": None}
    return json.dumps({**TRIAGE, **deep, "importance": importance, **fields})


def test_one_reply_needs_deeper_fields_only_for_higher_tiers():
    # The strict schema lists every key (strict mode requires it); insights may be null.
    schema = strict_schema(CommitOut)
    assert set(schema["required"]) == set(CommitOut.model_fields)
    assert {"type": "null"} in schema["properties"]["insights"]["anyOf"]
    assert '"insights": {"architecture": string' in json_shape(CommitOut) and "}|null}" in json_shape(
        CommitOut
    )
    low = parse_reply(card("low", scope=["ignored"], insights=INSIGHTS), CommitOut)
    assert low.scope == [] and low.insights is None  # nothing deeper survives for low
    # What a tier needs but the reply left empty is reported, for the rules to fill (no second call).
    assert parse_reply(card("medium"), CommitOut).missing() == ["scope", "risks", "recommendations"]
    medium = parse_reply(
        card("medium", scope=["engine"], risks=["r"], recommendations=["test"], insights=INSIGHTS), CommitOut
    )
    assert medium.insights is None and medium.missing() == []
    # "None identified" is no risk: the list is empty, and the rules fill it
    said_none = card("medium", scope=["engine"], risks=["None identified."], recommendations=["N/A"])
    assert parse_reply(said_none, CommitOut).missing() == ["risks", "recommendations"]
    zh_none = card("medium", scope=["engine"], risks=["未发现", "- 无"], recommendations=["运行测试"])
    assert parse_reply(zh_none, CommitOut).risks == []
    kept = card(
        "medium",
        scope=["engine"],
        risks=["None of the callers pass a dtype: they break"],
        recommendations=["t"],
    )
    assert parse_reply(kept, CommitOut).risks == [
        "None of the callers pass a dtype: they break"
    ]  # a sentence
    assert parse_reply(
        card("high", scope=["engine"], risks=["r"], recommendations=["test"]), CommitOut
    ).missing() == ["insights"]
    high = parse_reply(card("high", scope=["e"], recommendations=["t"], insights=INSIGHTS), CommitOut)
    assert high.insights is not None and high.insights.security == "security text"


def test_a_low_reply_may_leave_out_the_deeper_fields():
    assert parse_reply(json.dumps({**TRIAGE, "importance": "low"}), CommitOut).scope == []
    high = parse_reply(json.dumps(TRIAGE), CommitOut)  # TRIAGE is high and has nothing deeper
    assert high.missing() == ["scope", "risks", "recommendations", "insights"]
