"""What the LLM must return, as pydantic models, and how we read its replies.

The models map one to one onto strict JSON schemas (`response_format`): every field required, no
defaults, no extra keys. Servers that honour the schema (OpenAI strict mode, vLLM, llama.cpp) can
only produce valid objects; servers that ignore it (or small models that drift) get a lenient reader:
`parse_reply` finds the JSON object in whatever came back and fixes what is safe to fix (case, common
synonyms, a string where a list belongs, a field label the model prefixed). Anything else raises
`ReplyInvalid` with a short description that the repair prompt hands back to the model.

Over 400 lines because the models and their lenient reader must change together: each repair rule follows a
field of a model beside it.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from typing import Any, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from analysis.labels import LANGS, change_type_label, label
from analysis.models import INSIGHT_DIMENSIONS, ChangeType, Importance

T = TypeVar("T", bound=BaseModel)

ImportanceValue = Literal["high", "medium", "low"]
ChangeTypeValue = Literal[
    "feature",
    "bugfix",
    "performance",
    "refactor",
    "docs",
    "tests",
    "ci/build",
    "config",
    "dependency",
    "revert",
    "security",
    "other",
]
# The closed sets are spelled out for type checkers; fail at import if they drift from the enums.
assert set(get_args(ImportanceValue)) == {i.value for i in Importance}
assert list(get_args(ChangeTypeValue)) == [c.value for c in ChangeType]


class ReplyInvalid(ValueError):
    """The model's reply could not be read as the expected object. The message says what is wrong,
    briefly, so it can be sent back in a repair prompt."""


# --------------------------------------------------------------------------------------------
# Lenient value normalisation (used by the models' "before" validators)
# --------------------------------------------------------------------------------------------

_IMPORTANCE_WORDS: dict[str, str] = {
    **dict.fromkeys(("high", "h", "critical", "major", "important", "高", "重要", "严重"), "high"),
    **dict.fromkeys(("medium", "med", "mid", "moderate", "normal", "中", "中等", "一般"), "medium"),
    **dict.fromkeys(("low", "l", "minor", "trivial", "低", "次要", "轻微"), "low"),
}

_CHANGE_TYPE_WORDS: dict[str, str] = {
    **dict.fromkeys(("feat", "features", "new feature", "enhancement", "新功能", "特性", "功能"), "feature"),
    **dict.fromkeys(
        ("bug fix", "bug", "fix", "fixes", "bugfixes", "hotfix", "bug fixes", "修复", "bug修复"), "bugfix"
    ),
    **dict.fromkeys(("perf", "optimization", "optimisation", "性能", "优化"), "performance"),
    **dict.fromkeys(("refactoring", "cleanup", "code cleanup", "重构"), "refactor"),
    **dict.fromkeys(("doc", "documentation", "文档"), "docs"),
    **dict.fromkeys(("test", "testing", "测试"), "tests"),
    **dict.fromkeys(
        ("ci", "build", "ci build", "ci/cd", "cicd", "ci cd", "build system", "构建"), "ci/build"
    ),
    **dict.fromkeys(("configuration", "配置"), "config"),
    **dict.fromkeys(("dependencies", "deps", "dep", "dependency update", "依赖"), "dependency"),
    **dict.fromkeys(("reversion", "回滚", "回退", "撤销"), "revert"),
    **dict.fromkeys(("sec", "security fix", "安全"), "security"),
    **dict.fromkeys(("misc", "chore", "others", "其他"), "other"),
}
# Our own display labels ("缺陷修复", "Bug fix", "CI/构建" ...) are accepted too.
for _lang in LANGS:
    for _kind in ChangeType:
        _CHANGE_TYPE_WORDS.setdefault(change_type_label(_lang, _kind).lower(), _kind.value)

_BULLET = re.compile(r"^\s*(?:[-*•·▪●]|\d{1,2}[.)、]|[（(]\d{1,2}[)）])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_EMOJI = re.compile(r"[\U0001F300-\U0001FAFF\u2600-\u27BF\uFE0F]")


def _field_label_prefix() -> re.Pattern[str]:
    """'Summary:', '**变更摘要**：', '⚠️ 潜在风险:' ... at the start of a value: the model wrote a label
    that our renderer writes already."""
    keys = (
        "summary",
        "summary_low",
        "scope",
        "risks",
        "recommendations",
        "insights",
        "change_type",
        "importance",
    )
    words = {_EMOJI.sub("", label(lang, key)).strip() for lang in LANGS for key in keys}
    words |= {
        "summary",
        "reason",
        "scope",
        "risks",
        "recommendations",
        "impact scope",
        "影响",
        "原因",
        "理由",
    }
    alternatives = "|".join(sorted((re.escape(w) for w in words if w), key=len, reverse=True))
    emoji = r"(?:[\U0001F300-\U0001FAFF\u2600-\u27BF]\uFE0F?\s*)?"
    return re.compile(rf"^\s*[*_]{{0,2}}{emoji}(?:{alternatives})[*_]{{0,2}}\s*[:：][*_]{{0,2}}\s*", re.I)


_LABEL_PREFIX = _field_label_prefix()


def _clean_text(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return value
    text = _HEADING.sub("", value.strip())
    return _LABEL_PREFIX.sub("", text, count=1).strip()


def _word_key(value: str) -> str:
    text = _EMOJI.sub("", value).strip().lower()
    return re.sub(r"[\s_-]+", " ", text).strip(" .:：。")


def normalize_importance(value: Any) -> Any:
    """'High', ' HIGH ', '🔴 高', 'critical' → 'high'; anything unknown is left for validation to reject."""
    if not isinstance(value, str):
        return value
    key = _word_key(value)
    if key in _IMPORTANCE_WORDS:
        return _IMPORTANCE_WORDS[key]
    first = key.split(" ", 1)[0]  # "high importance", "low risk"
    return _IMPORTANCE_WORDS.get(first, value.strip())


def normalize_change_type(value: Any) -> Any:
    """'Bug fix' → 'bugfix', 'perf' → 'performance', 'CI' → 'ci/build' ...; unknown left for validation."""
    if not isinstance(value, str):
        return value
    key = _word_key(value)
    canonical = {c.value for c in ChangeType}
    if key in canonical:
        return key
    if key.replace(" ", "") in canonical:  # "ci / build"
        return key.replace(" ", "")
    return _CHANGE_TYPE_WORDS.get(key, _CHANGE_TYPE_WORDS.get(key.replace(" ", ""), value.strip()))


# The score a reply without one stands for: the middle of the band of the tier it chose.
TIER_SCORES = {"high": 90, "medium": 60, "low": 20}
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def normalize_score(value: Any) -> Any:
    """85, 85.0, "85", "85/100", "0.85" (a share) → an integer in 0..100; anything else for validation."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        m = _NUMBER.search(value)
        if m is None:
            return value
        value = float(m.group(0))
    if isinstance(value, (int, float)):
        if 0 < value < 1 and isinstance(value, float):
            value *= 100
        return max(0, min(100, round(value)))
    return value


def _split_items(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) <= 1:
        # One line: items separated by semicolons ("风险一；风险二").
        lines = re.split(r"[;；]\s*", text)
    return [_BULLET.sub("", line) for line in lines]


def _item_text(item: Any) -> Any:
    if isinstance(item, dict):  # {"risk": "..."} or {"area": "x", "impact": "y"}
        values = [
            str(v).strip() for v in item.values() if isinstance(v, (str, int, float)) and str(v).strip()
        ]
        return ": ".join(values) if values else ""
    return item


def normalize_list(value: Any) -> Any:
    """A list of non-empty, stripped strings: a string becomes its lines (or ';'-separated parts),
    bullets and numbering are removed, null becomes []."""
    if value is None:
        return []
    if isinstance(value, str):
        value = _split_items(value)
    if not isinstance(value, list):
        return value
    items = [_clean_text(_item_text(v)) for v in value]
    items = [_BULLET.sub("", v).strip() if isinstance(v, str) else v for v in items]
    return [v for v in items if v is not None and v != "" and not (isinstance(v, str) and _PLACEHOLDER.match(v))]


# An item that says the list is empty ("None identified", "N/A", "未发现"): the list is empty, and the
# fields a tier needs are then filled by the rules instead of printing "- None".
_PLACEHOLDER = re.compile(
    r"^\W*(?:none(?: identified| found| known| expected)?|n/?a|nil|nothing(?: (?:to note|notable))?"
    r"|not applicable|no (?:known |notable |obvious |significant )?risks?(?: identified| found)?"
    r"|unknown|tbd|无|暂无|没有|未发现|未知|不适用|无明显风险)\W*$",
    re.IGNORECASE,
)


def _non_empty(value: str) -> str:
    if not value:
        raise ValueError("must not be empty")
    return value


# --------------------------------------------------------------------------------------------
# The reply models
# --------------------------------------------------------------------------------------------


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TriageOut(_Reply):
    importance: ImportanceValue
    reason: str
    change_type: ChangeTypeValue
    summary: str

    @field_validator("importance", mode="before")
    @classmethod
    def _lenient_importance(cls, value: Any) -> Any:
        return normalize_importance(value)

    @field_validator("change_type", mode="before")
    @classmethod
    def _lenient_change_type(cls, value: Any) -> Any:
        return normalize_change_type(value)

    @field_validator("reason", "summary", mode="before")
    @classmethod
    def _lenient_text(cls, value: Any) -> Any:
        return _clean_text(value)

    @field_validator("reason", "summary")
    @classmethod
    def _required_text(cls, value: str) -> str:
        return _non_empty(value)


class InsightsOut(_Reply):
    architecture: str
    performance: str
    security: str
    maintainability: str
    compatibility: str
    resources: str

    @field_validator(*INSIGHT_DIMENSIONS, mode="before")
    @classmethod
    def _lenient_text(cls, value: Any) -> Any:
        # An empty dimension is allowed here; grounding turns it into the "unknown" label.
        if value is None:
            return ""
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        return _clean_text(value)


class MediumOut(_Reply):
    summary: str
    scope: list[str]
    risks: list[str]
    recommendations: list[str]

    @field_validator("summary", mode="before")
    @classmethod
    def _lenient_text(cls, value: Any) -> Any:
        return _clean_text(value)

    @field_validator("summary")
    @classmethod
    def _required_text(cls, value: str) -> str:
        return _non_empty(value)

    @field_validator("scope", "risks", "recommendations", mode="before")
    @classmethod
    def _lenient_list(cls, value: Any) -> Any:
        return normalize_list(value)


class HighOut(MediumOut):
    insights: InsightsOut


assert tuple(InsightsOut.model_fields) == INSIGHT_DIMENSIONS


# One call per commit: the ranking and the fields of the tier it chose, in one reply (issue 12).
# Every key is in the strict schema (strict mode requires it), but what must be filled depends on the
# tier the model picked: low needs nothing deeper (its deeper fields are dropped), medium needs scope and
# recommendations, high also needs insights (null for the other tiers). What a medium/high reply left
# empty is reported by `missing()`: the caller fills it from the rules rather than paying a second
# round trip. (No docstring: pydantic would send it as the schema's description with every request.)
class CommitOut(TriageOut):
    score: int
    scope: list[str]
    risks: list[str]
    recommendations: list[str]
    insights: InsightsOut | None

    @field_validator("score", mode="before")
    @classmethod
    def _lenient_score(cls, value: Any) -> Any:
        return normalize_score(value)

    @field_validator("scope", "risks", "recommendations", mode="before")
    @classmethod
    def _lenient_list(cls, value: Any) -> Any:
        return normalize_list(value)

    @model_validator(mode="before")
    @classmethod
    def _absent_is_empty(cls, data: Any) -> Any:
        """A model without enforced structure often leaves out what its tier does not need: absent
        deeper fields are empty (whether the tier needs them is checked after), and an absent score
        is the middle of the tier it chose."""
        if isinstance(data, dict):
            data = {"scope": [], "risks": [], "recommendations": [], "insights": None, **data}
            if data.get("score") is None:
                data["score"] = TIER_SCORES.get(str(normalize_importance(data.get("importance"))), 50)
        return data

    @model_validator(mode="after")
    def _tier_fields(self) -> CommitOut:
        if self.importance == "low":
            self.scope, self.risks, self.recommendations, self.insights = [], [], [], None
            return self
        if self.importance == "medium":
            self.insights = None
        return self

    def missing(self) -> list[str]:
        """The fields this reply's tier needs but the model left empty."""
        if self.importance == "low":
            return []
        missing = [name for name in ("scope", "risks", "recommendations") if not getattr(self, name)]
        if self.importance == "high" and self.insights is None:
            missing.append("insights")
        return missing


# --------------------------------------------------------------------------------------------
# response_format: strict JSON schema
# --------------------------------------------------------------------------------------------

# Keywords that carry no constraint we need and that some strict validators refuse or choke on.
_DROPPED_KEYWORDS = frozenset({"title", "default", "examples", "$schema"})


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema for strict mode: $refs inlined (llama.cpp and some vLLM backends handle
    them poorly), every object closed (additionalProperties false) with every property required,
    and no 'title' / 'default' keywords."""
    return copy.deepcopy(_strict_schema(model))


@functools.cache
def _strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    # Generating a pydantic schema costs ~1 ms; every LLM call asks for one of four.
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    return _strict(raw, defs)


def _strict(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_strict(v, defs) for v in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        merged = {**copy.deepcopy(target), **{k: v for k, v in node.items() if k != "$ref"}}
        return _strict(merged, defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED_KEYWORDS:
            continue
        if key == "properties":
            # Property names are data, not keywords: a property called "title" stays.
            out[key] = {name: _strict(sub, defs) for name, sub in value.items()}
        else:
            out[key] = _strict(value, defs)
    if out.get("type") == "object" or "properties" in out:
        out["type"] = "object"
        out["additionalProperties"] = False
        out["required"] = list(out.get("properties", {}))
    return out


def response_format(model: type[BaseModel]) -> dict[str, Any]:
    """The `response_format` argument asking for `model` in strict json_schema mode."""
    return {
        "type": "json_schema",
        "json_schema": {"name": model.__name__, "strict": True, "schema": strict_schema(model)},
    }


@functools.cache
def json_shape(model: type[BaseModel]) -> str:
    """A compact one-line picture of the expected object for prompts, e.g.
    {"importance": "high"|"medium"|"low", "reason": string, ...}: servers that ignore the schema
    still learn the shape from the prompt, and the prompt can never drift from the model."""
    return _shape(strict_schema(model))


def _shape(node: dict[str, Any]) -> str:
    if "anyOf" in node:
        return "|".join(_shape(option) for option in node["anyOf"])
    if "enum" in node:
        return "|".join(json.dumps(v, ensure_ascii=False) for v in node["enum"])
    kind = node.get("type")
    if kind == "object":
        fields = ", ".join(f'"{name}": {_shape(sub)}' for name, sub in node.get("properties", {}).items())
        return "{" + fields + "}"
    if kind == "array":
        return "[" + _shape(node.get("items", {})) + ", ...]"
    return str(kind or "value")


# --------------------------------------------------------------------------------------------
# Reading replies
# --------------------------------------------------------------------------------------------

_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.I)
_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.I)
_FENCE = re.compile(r"```[ \t]*(?:json|JSON|json5)?[ \t]*\n?(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")

# Keys a model commonly uses instead of ours; applied only when our key is absent.
_KEY_ALIASES = {
    "type": "change_type",
    "changetype": "change_type",
    "change type": "change_type",
    "category": "change_type",
    "level": "importance",
    "priority": "importance",
    "rationale": "reason",
    "importance_reason": "reason",
    "explanation": "reason",
    "impact_scope": "scope",
    "impact": "scope",
    "scopes": "scope",
    "risk": "risks",
    "potential_risks": "risks",
    "recommendation": "recommendations",
    "suggestions": "recommendations",
    "advice": "recommendations",
    "insight": "insights",
    "technical_insights": "insights",
}


def strip_reasoning(text: str) -> str:
    """The reply without a leading <think>…</think> block (or its tail, when the server dropped the
    opening tag); an unclosed block means the model never got to the answer."""
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        return text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    return text[: opened.start()] if opened else text


def _json_objects(text: str) -> list[Any]:
    """Every top-level JSON object in the text, in order (nested ones are part of their parent)."""
    decoder = json.JSONDecoder(strict=False)  # strict=False: raw newlines inside strings are accepted
    found: list[Any] = []
    pos = text.find("{")
    while pos != -1:
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            value, end = _decode_lenient(decoder, text, pos)
        if isinstance(value, dict):
            found.append(value)
            pos = text.find("{", end)
        else:
            pos = text.find("{", pos + 1)
    return found


def _decode_lenient(decoder: json.JSONDecoder, text: str, pos: int) -> tuple[Any, int]:
    """A second try without trailing commas ({"a": 1,}), the commonest slip of small models."""
    end = _matching_brace(text, pos)
    if end is None:
        return None, pos + 1
    try:
        return decoder.decode(_TRAILING_COMMA.sub(r"\1", text[pos:end])), end
    except json.JSONDecodeError:
        return None, pos + 1


def _matching_brace(text: str, pos: int) -> int | None:
    depth, in_string, escaped = 0, False, False
    for i in range(pos, len(text)):
        ch = text[i]
        if in_string:
            escaped = not escaped and ch == "\\"
            if ch == '"' and not escaped:
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _candidates(text: str) -> list[Any]:
    body = strip_reasoning(text)
    fenced = [m.group(1) for m in _FENCE.finditer(body)]
    found: list[Any] = []
    for chunk in [*fenced, body]:
        found.extend(_json_objects(chunk))
    if not found:
        stripped = body.strip()
        try:  # a bare array holding the object, or a JSON-encoded string holding it
            value = json.loads(stripped, strict=False)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, list):
            found = [v for v in value if isinstance(v, dict)]
        elif isinstance(value, str):
            found = _json_objects(value)
    return found


def _normalize_keys(data: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """Keys matched case-insensitively, common aliases mapped, unknown keys dropped (they carry
    nothing we read), nested models normalised the same way."""
    fields = model.model_fields
    out: dict[str, Any] = {}
    for key, value in data.items():
        norm = str(key).strip().lower().replace("-", "_")
        norm = norm if norm in fields else _KEY_ALIASES.get(norm, norm)
        if norm in fields and norm not in out:
            out[norm] = value
    for name, info in fields.items():
        sub = info.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel) and isinstance(out.get(name), dict):
            out[name] = _normalize_keys(out[name], sub)
    return out


def _unwrap(data: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """{"analysis": {...}} → {...} when the outer object has none of our fields."""
    fields = set(model.model_fields)
    if len(data) == 1 and not fields & {str(k).lower() for k in data}:
        inner = next(iter(data.values()))
        if isinstance(inner, dict):
            return inner
    return data


def describe_errors(error: ValidationError) -> str:
    """A short, model-readable list of what is wrong."""
    missing = [".".join(map(str, e["loc"])) for e in error.errors() if e["type"] == "missing"]
    other = [
        f"{'.'.join(map(str, e['loc'])) or 'object'}: {e['msg']}"
        for e in error.errors()
        if e["type"] != "missing"
    ]
    parts = ([f"missing field(s): {', '.join(missing)}"] if missing else []) + other[:4]
    return "; ".join(parts)[:500]


def parse_reply(text: str | None, model: type[T]) -> T:
    """The `model` object in a model's reply: bare JSON, fenced ```json, JSON inside prose, or after a
    <think> block. Raises ReplyInvalid saying what is wrong."""
    if text is None or not text.strip():
        raise ReplyInvalid("the reply is empty: answer with the JSON object")
    candidates = _candidates(text)
    if not candidates:
        if _THINK_OPEN.search(text) and not _THINK_CLOSE.search(text):
            raise ReplyInvalid("the reply holds only unfinished reasoning and no JSON object")
        raise ReplyInvalid("no JSON object found in the reply")
    errors: list[tuple[int, str]] = []
    fields = set(model.model_fields)
    for raw in candidates:
        data = _normalize_keys(_unwrap(raw, model), model)
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            errors.append((-len(fields & set(data)), describe_errors(exc)))
    # Report on the candidate that looked most like the answer.
    raise ReplyInvalid(f"the JSON object does not match the required shape: {min(errors)[1]}")
