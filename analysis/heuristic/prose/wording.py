"""What every field of the heuristic's text is written with: figures, code spans, lists of at most three
items with how many more, clauses joined, and untrusted commit text made plain prose (cut to whole
sentences, no trailers, e-mails, mentions or Markdown constructs)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from analysis.heuristic.phrases import t
from analysis.labels import quote_elided
from analysis.text import code_text, neutralize_mentions, one_line, strip_trailers

MAX_ITEMS = 3


def num(n: int) -> str:
    return f"{n:,}"


def code_span(text: str) -> str:
    """An identifier or path as a code span. Paths and names come from the commit too: no backticks
    (they would break the span) and no mentions."""
    return f"`{code_text(text)}`"


def listed_items(lang: str, items: Iterable[str]) -> str:
    """Up to three facts as code spans, then how many more there are."""
    values = list(items)
    shown = [code_span(v) for v in values[:MAX_ITEMS]]
    if len(values) > MAX_ITEMS:
        return t(lang, "list_sep").join(shown) + t(
            lang, "more", total=num(len(values)), rest=num(len(values) - MAX_ITEMS)
        )
    return t(lang, "list_sep").join(shown)


def untrusted(text: str, limit: int, lang: str) -> str:
    """Commit text as plain prose: one line, no trailers or e-mails, no mentions, no Markdown
    constructs (links, headings, HTML), balanced backticks. Over `limit`, whole sentences are kept
    (at least the first, unless it is itself over twice `limit`: then it is elided, its size stated)."""
    text = strip_trailers(text)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"!?\[([^\]\n]*)\]\([^)\n]*\)", r"\1", text)  # [label](url) → label
    # <url|label> (a link disguised as its label) → label; <url> → nothing: no stray "<" is left.
    text = re.sub(r"<https?://[^\s|<>]*(?:\|([^<>\n]*))?>", lambda m: m.group(1) or "", text)
    text = re.sub(r"https?://\S+", "", text)
    # Line-level Markdown (headings, quotes, bullets, checkboxes) would be noise once joined.
    text = re.sub(r"^[ \t]*(#{1,6}|>|[-*+]|\d+[.)])[ \t]+(\[[ xX]\][ \t]+)?", "", text, flags=re.M)
    text = neutralize_mentions(one_line(text))
    if text.count("`") % 2:
        text = text.replace("`", "'")
    if len(text) > limit:
        text = _whole_sentences(text, limit)
    if len(text) > 2 * limit:  # one endless "sentence" (a 190 KB message): never quote it all
        text = quote_elided(lang, text, limit)
        text = text.replace("`", "'") if text.count("`") % 2 else text
    return text.strip()


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


def _whole_sentences(text: str, limit: int) -> str:
    sentences = _SENTENCE_END.split(text)
    kept = [sentences[0]]
    for sentence in sentences[1:]:
        if len(" ".join([*kept, sentence])) > limit:
            break
        kept.append(sentence)
    result = " ".join(kept)
    return result.replace("`", "'") if result.count("`") % 2 else result


def join_clauses(parts: list[str], lang: str) -> str:
    """Clauses joined by "; ": in English the later ones start lower-case, mid-sentence."""
    if lang == "en":
        parts = parts[:1] + [p[:1].lower() + p[1:] for p in parts[1:]]
    return t(lang, "sep").join(parts)
