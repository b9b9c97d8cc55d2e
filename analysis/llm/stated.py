"""A breaking change the code shows is stated in an LLM analysis's Compatibility and Risks (issue 16: a
user-facing name removed or renamed without an alias is named in both), whatever the model wrote.

The rules' finding already decides the tier (a model cannot move it below high: the floor of
bands.within_one_tier); the model's text may still miss it or deny it: a small model, on a commit that reorders a public function's
parameters, wrote "breaking users" as its only risk and "compatible with the existing API and does not
introduce any breaking changes" as its compatibility insight. So:
- Risks: the rules' breaking-change risks come first unless a risk of the model's names what breaks;
- Compatibility (the high tier's insight): the model's, when it names what breaks and does not call the
  change compatible; else the rules' statement, with the model's after it unless that denies the break;
- anywhere else (summary, other insights, risks, recommendations), a sentence or item that calls the change
  compatible is dropped: a summary that did is followed by the rules' statement instead.
A note says when the rules' words were put in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from analysis.heuristic import BreakingStatement
from analysis.labels import label
from analysis.llm.echo import joined, sentences
from analysis.models import Analysis

# Words too common in prose to show that a name is meant.
_COMMON = frozenset({"init", "call", "self", "main", "get", "post", "put", "delete", "patch", "head"})
# A change called harmless to its users: "no breaking changes", "backward compatible", "向后兼容" (not "not
# backward compatible", "不兼容").
_DENIES = re.compile(
    r"\b(?:no|not|without|never|doesn't|does not|won't|will not)\b[^.;:。；]{0,30}\bbreak"
    r"|(?<!not )(?<!n't )\b(?:backwards?[- ]compatible|fully compatible|remains? compatible"
    r"|(?:is|are|stays?) compatible|compatible with (?:the )?existing)"
    r"|\bno (?:compatibility|incompatib)|compatibility is (?:good|fine|kept|maintained|preserved|unaffected)"
    r"|(?:不会|不|没有|无)(?:会)?(?:破坏|影响)(?:现有|原有)?(?:的)?(?:接口|兼容)"
    r"|(?<!不)(?:向后|完全|保持)兼容|无(?:任何)?兼容性(?:问题|风险|影响)|兼容性(?:良好|不受影响|没有问题)"
    r"|(?:没有|未|无|不存在)(?:发现)?[^。；;]{0,24}不兼容",
    re.IGNORECASE,
)
# A name's word as code and prose write it; an option keeps its dashes.
_WORD = re.compile(r"-{0,2}[A-Za-z_][\w-]*")
_BREAK_WORDS = re.compile(r"break|incompatib|破坏|不兼容", re.IGNORECASE)
_JOIN = {"zh": "；", "en": "; "}
_NOTE = {
    "zh": "兼容性与风险按代码事实写明了破坏兼容的改动（模型的这两项未写明，或称其兼容）",
    "en": "Compatibility and risks state the breaking change the code shows"
    " (the model's did not name it, or called it compatible)",
}


def with_breaking_stated(analysis: Analysis, statement: BreakingStatement, lang: str) -> Analysis:
    """The analysis with the breaking change in its Risks and Compatibility (a copy; the same one when the
    model's text already names it)."""
    tokens = _name_tokens(statement.names)
    unknown = label(lang, "unknown")  # what the tidying left of a field that only echoed our words
    risks = [r for r in analysis.risks if not _DENIES.search(r)]
    if not any(_names(r, tokens) for r in risks):
        risks = [*statement.risks, *(r for r in risks if r != unknown)]
    recommendations = [r for r in analysis.recommendations if not _DENIES.search(r)]
    summary = _without_denials(analysis.summary)
    if summary != analysis.summary:  # the summary's word on compatibility is the code's
        summary = ("" if lang == "zh" else " ").join(
            _sentence(s, lang) for s in (summary, statement.compatibility) if s
        )
    insights = {
        k: (_without_denials(v) or unknown) if k != "compatibility" else v
        for k, v in analysis.insights.items()
    }
    own = insights.get("compatibility", "")
    own = "" if own == unknown else own
    denies = bool(_DENIES.search(own))
    if insights and (denies or not _names(own, tokens)):
        kept = "" if denies else own
        joined = _JOIN.get(lang, _JOIN["en"]).join(filter(None, (statement.compatibility, kept)))
        insights = {**insights, "compatibility": joined}
    update = {"risks": risks, "recommendations": recommendations, "summary": summary, "insights": insights}
    if all(getattr(analysis, field) == value for field, value in update.items()):
        return analysis
    notes = [*analysis.notes, _NOTE.get(lang, _NOTE["en"])]
    return analysis.model_copy(update={**update, "notes": notes})


def _sentence(text: str, lang: str) -> str:
    ended = text.endswith(("。", ".", "！", "？", "!", "?"))
    return text if ended else text + ("。" if lang == "zh" else ".")


def _without_denials(text: str) -> str:
    """The text without its sentences that call the change compatible."""
    if not _DENIES.search(text):
        return text
    return joined([s.strip() for s in sentences(text) if not _DENIES.search(s)], text)


def _name_tokens(names: Iterable[str]) -> frozenset[str]:
    """The words that show a name is meant: the last part of each dotted name and the parameters it
    lists (`pkg.mod.f(old_arg)` → f, old_arg), lower-cased; an option keeps its dashes; "Python 3.9" → python."""
    tokens = set()
    for name in names:  # a name of words ("Python 3.9", "GET /v1/models") by each of its words
        for word in (w for part in name.split(" ") for w in _WORD.findall(part.rsplit(".", 1)[-1])):
            word = word.strip("_").lower()
            if len(word) >= 3 and word.strip("-") not in _COMMON:
                tokens.add(word)
    return frozenset(tokens)


def _names(text: str, tokens: frozenset[str]) -> bool:
    """Whether the text names one of the tokens (as a whole word); with no names to look for (the
    message declares the break), whether it speaks of a break at all."""
    if not text:
        return False
    if not tokens:
        return bool(_BREAK_WORDS.search(text))
    words = {w.strip("_").lower() for w in _WORD.findall(text)}
    return not tokens.isdisjoint(words)
