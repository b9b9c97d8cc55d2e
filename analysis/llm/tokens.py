"""Token estimates for prompt budgets, without a tokenizer.

We cannot load a real tokenizer here (tiktoken downloads its encodings; local models bring their own
vocabularies), so we estimate on the safe side: a budget a little too generous wastes a few hundred
tokens, one too tight overflows the model's context and the call fails.

How: BPE tokenizers first split text into pieces (words, camel-case humps, digit groups of up to
three, punctuation runs, whitespace runs) and a piece is usually one token; long lower-case words
take an extra token every few letters. We count those pieces with one C-speed regex pass (~40 ms per
MB). CJK characters count one token each, other non-ASCII characters by their UTF-8 length (an
accented letter ~1.3, a symbol such as ✅ 2, an emoji ~2.7). A final margin of 15 % keeps the
estimate above the real count for nearly every file.

Measured on two real days of an inference engine's diffs and messages (486 texts) against cl100k and o200k: median
estimate / real = 1.31, 5th percentile 1.11, worst 0.93 (dense camel-case tables); a plain "3 ASCII
characters a token" rule has a similar median but a worst case of 0.65 (Markdown tables with
symbols). Chinese prose: ~1.15 per character, against ~1.1 (cl100k) and ~0.75 (o200k, Qwen).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

SAFETY = 1.15
MESSAGE_OVERHEAD = 4  # role and separators around each chat message (OpenAI's own accounting uses 3-4)
REPLY_PRIMING = 3  # the assistant header the server adds before the reply

# One alternative per kind of BPE pre-token; a single space or underscore joins the word after it,
# as it does in cl100k-style tokenizers. Non-ASCII characters match nothing here: counted apart.
_PIECE = re.compile(
    r"[_ ]?[A-Z]?[a-z]+"  # a word or camel-case hump
    r"|[_ ]?[A-Z]+(?![a-z])"  # an acronym
    r"|[0-9]{1,3}"  # digits: tokenizers group at most three
    r"|[^\sA-Za-z0-9\x80-\U0010ffff]+"  # punctuation run
    r"|\s*\n\s*|\s{2,}"  # line breaks and indentation; a lone space is part of the next piece
)
_LONG_WORD = re.compile(r"[a-z]{7,}")
_LONG_WORD_LETTERS_PER_EXTRA = 6
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


def estimate_tokens(text: str) -> int:
    """A conservative token count for `text` (see the module docstring); at least 1 for any text."""
    if not text:
        return 0
    return _estimate(text)


@functools.lru_cache(maxsize=4096)
def _estimate(text: str) -> int:
    # Cached: the same system prompts, patches and hunks are measured again on every budget pass.
    n_ascii = len(text.encode("ascii", "ignore"))
    pieces = len(_PIECE.findall(text))
    pieces += sum(map(len, _LONG_WORD.findall(text))) // _LONG_WORD_LETTERS_PER_EXTRA
    if n_ascii != len(text):
        cjk = len(_CJK.findall(text))
        other_bytes = len(text.encode("utf-8")) - n_ascii - 3 * cjk  # CJK characters are 3 bytes each
        pieces += cjk + -(-max(0, other_bytes) * 2 // 3)
    return max(1, -(-pieces * int(SAFETY * 100) // 100))


def _content_text(content: Any) -> str:
    """Message content as text: a string, None, or OpenAI content parts ([{"type": "text", ...}])."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Iterable):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return str(content)


def estimate_messages(messages: list[dict]) -> int:
    """Tokens a chat request's messages take: each content plus its per-message overhead, plus the
    reply priming."""
    total = REPLY_PRIMING
    for message in messages:
        total += MESSAGE_OVERHEAD + estimate_tokens(_content_text(message.get("content")))
        if message.get("name"):
            total += 1 + estimate_tokens(str(message["name"]))
    return total
