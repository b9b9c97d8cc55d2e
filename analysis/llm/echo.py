"""Model text that repeats our instructions or itself.

Small models copy their instructions into the answer ("reviewers should check or do, one to four
items") and repeat sentences; the reports we replace leaked prompt text this way (DESIGN.md §4).
Whatever the model, a clause made mostly of our own instruction wording is removed, a sentence or
item said twice is kept once, and a list item that enumerates "1. … 2. …" becomes several items.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise
from typing import Any

from analysis.labels import dimension_label, label
from analysis.models import INSIGHT_DIMENSIONS, Analysis

SHINGLE = 4  # tokens (a CJK character or an ASCII word) in one instruction shingle
ECHO_SHARE = 0.6  # a clause with this share of its tokens inside instruction shingles is an echo

_TOKEN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[A-Za-z0-9]+")
_CLAUSE_END = set("，,；;：:。！？!?\n")  # a clause ends after one of these…
_OPEN, _CLOSE = set("(（[【「"), set(")）]】」")  # …unless it is inside brackets or a code span
# ASCII "!" and "?" end a sentence only before a space, like "." (a neutralised "<\u200b!here>" is
# not a sentence of its own, whose loss would leave "here>").
_SENTENCE = re.compile(r".*?(?:[。！？\n]|[.!?](?=\s|$)|$)", re.S)
_ENUM_MARK = re.compile(r"(?:^|(?<=[\s；;：:，,。]))(?:\(|（)?(\d{1,2})[.、)）](?!\d)\s*")


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


@lru_cache(maxsize=16)
def shingles(instructions: str) -> frozenset[tuple[str, ...]]:
    """Every run of SHINGLE tokens in our instruction text (cached: a day's replies are each checked
    against the same instructions, a few coverage notes aside)."""
    tokens = _tokens(instructions)
    return frozenset(tuple(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1))


@lru_cache(maxsize=16)
def _last_tokens(instructions: str) -> tuple[str, ...]:
    return tuple(_tokens(instructions)[-(SHINGLE - 1) :])


def shingles_with(instructions: str, extra: str) -> frozenset[tuple[str, ...]]:
    """`shingles(instructions + "\n" + extra)` without tokenising the instructions again for each
    `extra` (a commit's coverage note: most of a day's notes differ). Exact: no token spans a line
    break, so the shingles are those of the instructions, and those of their last tokens and `extra`."""
    if not extra:
        return shingles(instructions)
    tokens = [*_last_tokens(instructions), *_tokens(extra)]
    joined = frozenset(tuple(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1))
    return shingles(instructions) | joined


def is_echo(clause: str, known: frozenset[tuple[str, ...]]) -> bool:
    tokens = _tokens(clause)
    if len(tokens) < SHINGLE:
        return False
    return _covered(tokens, known) >= ECHO_SHARE * len(tokens)


def _covered(tokens: list[str], known: frozenset[tuple[str, ...]]) -> int:
    """How many of the tokens run inside a shingle of `known`."""
    covered = [False] * len(tokens)
    for i in range(len(tokens) - SHINGLE + 1):
        if tuple(tokens[i : i + SHINGLE]) in known:
            covered[i : i + SHINGLE] = [True] * SHINGLE
    return sum(covered)


def mostly_echo(text: str, instructions: str) -> bool:
    """Whether a whole reply is mostly our instructions said back (ECHO_SHARE of its words): an answer
    that says nothing of its own (a thread answer made of the QA prompt's rules)."""
    tokens = _tokens(text)
    return len(tokens) >= SHINGLE and _covered(tokens, shingles(instructions)) >= ECHO_SHARE * len(tokens)


def _norm(text: str) -> str:
    return "".join(_tokens(text))


# An item that is only a field's name ("risk", "建议") or its label ("潜在风险") is the form's own word copied
# into it, not an item. The labels are read from analysis/labels.py, so a renamed label is covered here.
FIELD_WORDS = frozenset(
    {
        "risk",
        "risks",
        "recommendation",
        "recommendations",
        "scope",
        "insight",
        "insights",
        "summary",
        "reason",
    }
    | {"风险", "建议", "范围", "摘要", "原因"}
    | {
        _norm(label(lang, key))
        for lang in ("en", "zh")
        for key in ("summary", "scope", "risks", "recommendations")
    }
)


class _Tidier:
    def __init__(self, known: frozenset[tuple[str, ...]]):
        self.known = known
        self.removed = 0

    def text(self, text: str) -> str:
        """Prose without echoed clauses and without a sentence said twice."""
        kept, seen = [], set()
        for sentence in sentences(text):
            cleaned = self._without_echo(sentence)
            key = _norm(cleaned)
            if not key:
                continue
            if key in seen:
                self.removed += 1
                continue
            seen.add(key)
            kept.append(cleaned.strip())
        return joined(kept, text).strip()

    def items(self, items: list[str]) -> list[str]:
        out, seen = [], set()
        for item in items:
            for part in _enumeration(item):
                cleaned = self.text(part).strip(" ；;，,")
                key = _norm(cleaned)
                if not key or key in seen or key in FIELD_WORDS:
                    self.removed += bool(key)
                    continue
                seen.add(key)
                out.append(cleaned)
        return out

    def _without_echo(self, sentence: str) -> str:
        clauses = _merge_short(_clauses(sentence))
        kept = [c for c in clauses if not is_echo(c, self.known)]
        if len(kept) < len(clauses):  # what is left beside an echo, too short to judge, may be its tail
            kept = [c for c in kept if not _our_fragment(c, self.known)]
        self.removed += len(clauses) - len(kept)
        text = re.sub(r"^[，,；;：:、\s]+", "", "".join(kept).strip())
        if kept and kept[0] is not clauses[0]:
            text = text[:1].upper() + text[1:]  # the sentence now starts mid-way
        if kept and kept[-1] is not clauses[-1]:  # it now ends mid-way: close it
            stop = "。" if re.search(r"[\u3400-\u9fff]", text) else "."
            text = text.rstrip(" ，,；;：:、") + stop
        return text


def sentences(text: str) -> list[str]:
    """The text's sentences, each as written (its end mark kept), blank ones left out."""
    return [s for s in _SENTENCE.findall(text) if s.strip()]


def joined(parts: list[str], like: str) -> str:
    """Sentences put back together as `like` writes them: Chinese without spaces, others with one."""
    return ("" if re.search(r"[\u3400-\u9fff]", like) else " ").join(parts)


def _our_fragment(clause: str, known: frozenset[tuple[str, ...]]) -> bool:
    """A clause shorter than a shingle whose words run inside one of ours ("; decided by impact" after
    the copied "risk (low): 12 changed lines in 1 file (size prior: low)")."""
    tokens = tuple(_tokens(clause))
    n = len(tokens)
    if not 0 < n < SHINGLE:
        return False
    return any(shingle[i : i + n] == tokens for shingle in known for i in range(SHINGLE - n + 1))


def _clauses(sentence: str) -> list[str]:
    """The sentence cut after clause punctuation, never inside (…) or `code`: removing a clause must
    not leave half a parenthesis behind. The delimiter stays with the clause before it."""
    clauses, start, depth, code = [], 0, 0, False
    for i, ch in enumerate(sentence):
        if ch == "`":
            code = not code
        elif not code and ch in _OPEN:
            depth += 1
        elif not code and ch in _CLOSE:
            depth = max(0, depth - 1)
        elif not code and depth == 0 and ch in _CLAUSE_END:
            clauses.append(sentence[start : i + 1])
            start = i + 1
    if start < len(sentence):
        clauses.append(sentence[start:])
    return [c for c in clauses if c]


def _merge_short(clauses: list[str]) -> list[str]:
    """A clause too short to judge ("What reviewers,") is judged with the clause after it."""
    merged: list[str] = []
    carry = ""
    for clause in clauses:
        carry += clause
        if len(_tokens(carry)) >= SHINGLE:
            merged.append(carry)
            carry = ""
    if carry:
        merged.append(carry)
    return merged


def _enumeration(item: str) -> list[str]:
    """'a: 1. x; 2. y; 3. z' → ['a:', 'x', 'y', 'z'] when the numbers run 1, 2, 3…; else [item]."""
    marks = list(_ENUM_MARK.finditer(item))
    numbers = [int(m.group(1)) for m in marks]
    if len(marks) < 2 or numbers != list(range(1, len(marks) + 1)):
        return [item]
    lead_in = item[: marks[0].start()].strip()
    # "Reviewers should do the following:" says nothing once its points are items of their own.
    parts = [] if lead_in.endswith((":", "：")) else [lead_in]
    for mark, nxt in zip(marks, [*marks[1:], None], strict=True):
        parts.append(item[mark.end() : nxt.start() if nxt else len(item)])
    return [p.strip().rstrip("；;，,") for p in parts if p.strip()]


# Words naming a dimension (en, and the characters of the zh labels): a row that differs from another
# only by naming its own dimension ("…could impact the performance / the security of the code") is the
# same row. Derived from the labels, so a dimension added there is covered here.
_DIMENSION_TOKENS = frozenset(
    t
    for lang in ("en", "zh")
    for key in INSIGHT_DIMENSIONS
    for t in _tokens(f"{key} {dimension_label(lang, key)}")
) | {"resource", "maintainable", "secure", "compatible", "architectural"}
TEMPLATE_SIMILARITY = 0.6  # bigram overlap (Jaccard) at which two rows are one template


def _bigrams(text: str) -> frozenset[tuple[str, str]]:
    tokens = [t for t in _tokens(text) if t not in _DIMENSION_TOKENS]
    return frozenset(pairwise(tokens))


def _same_template(a: frozenset[tuple[str, str]], b: frozenset[tuple[str, str]]) -> bool:
    return len(a) >= SHINGLE and len(b) >= SHINGLE and len(a & b) >= TEMPLATE_SIMILARITY * len(a | b)


def _distinct_insights(insights: dict[str, str], t: _Tidier, unknown: str) -> dict[str, str]:
    """The same sentence under every dimension says nothing about five of them: keep it once. So is
    one sentence with the dimension's name swapped in (small models fill the table that way)."""
    seen: set[str] = set()
    earlier: list[frozenset[tuple[str, str]]] = []  # every row before, removed ones too: one template
    out: dict[str, str] = {}
    for key, text in insights.items():
        norm, grams = _norm(text), _bigrams(text)
        if text != unknown and (norm in seen or any(_same_template(grams, e) for e in earlier)):
            t.removed += 1
            text = unknown
        seen.add(norm)
        earlier.append(grams)
        out[key] = text
    return out


def without_echo(text: str, source: str) -> str:
    """`text` without the clauses that repeat `source` (a model's reason that copies the rubric's reason
    it was given): what is left is the model's own word, or nothing."""
    if not text.strip() or not source.strip():
        return text
    return _Tidier(shingles(source)).text(text)


def tidy(
    analysis: Analysis, instructions: str, lang: str, *, reason_fallback: str = "", extra: str = ""
) -> Analysis:
    """A copy without echoed instructions or repeats, with a note when anything was removed. A reason
    left empty takes `reason_fallback` (our own stated prior); other emptied prose becomes "unknown".
    `extra`: more of our own words the model saw, on a line after the instructions."""
    t = _Tidier(shingles_with(instructions, extra))
    unknown = label(lang, "unknown")

    def listed(items: list[str]) -> list[str]:
        # A list the model filled with echoes is not a list of nothing: it is unknown.
        return t.items(items) or ([unknown] if items else [])

    update: dict[str, Any] = {
        "summary": t.text(analysis.summary) or unknown,
        "importance_reason": t.text(analysis.importance_reason) or reason_fallback or unknown,
        "scope": listed(analysis.scope),
        "risks": listed(analysis.risks),
        "recommendations": listed(analysis.recommendations),
        "insights": _distinct_insights(
            {k: t.text(v) or unknown for k, v in analysis.insights.items()}, t, unknown
        ),
    }
    if t.removed:
        note = (
            f"整理：删除了 {t.removed} 处复述提示词或重复的文字。"
            if lang == "zh"
            else f"Tidied: removed {t.removed} passage(s) repeating the instructions or themselves."
        )
        update["notes"] = [*analysis.notes, note]
    return analysis.model_copy(update=update)
