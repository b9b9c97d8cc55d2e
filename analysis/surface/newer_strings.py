"""f-strings in the grammar of Python 3.12 (PEP 701: a replacement field may reuse the string's own quote, hold a
backslash or a comment, span lines) and template strings (PEP 750, 3.14), which the 3.11 we run on does not
parse: each such literal becomes a plain string literal of the same length, its text blanked, its line breaks
kept, so every other token stays at its line and column.

What is lost is the literal's text (a formatted message, a default built by formatting), never a name, a
parameter or a statement. Used only on a text that did not parse after newer_syntax.downlevel (shared_parse.parse).
"""

from __future__ import annotations

import re

# A string literal's start: its prefix (not the end of a name) and its quote.
_START = re.compile(r"(?<![\w.])([rRbBuUfFtT]{0,2})('''|\"\"\"|'|\")")


class _Unclosed(Exception):
    """A literal or a replacement field that does not end: the text is left as it is."""


def flatten_fstrings(text: str) -> str:
    """The text with every f-string and t-string turned into a blank plain string (the same text when it holds
    none, or when a literal in it does not end)."""
    out: list[str] = []
    at = i = 0
    try:
        while i < len(text):
            char = text[i]
            if char == "#":
                i = _line_end(text, i)
                continue
            m = _literal_at(text, i)
            if m is None:
                i += 1
                continue
            end = _literal_end(text, m)
            if {"f", "t"} & set(m[1].lower()):
                out += [text[at : m.start()], _blank(text[m.start() : end], m[2])]
                at = end
            i = end
    except _Unclosed:
        return text
    out.append(text[at:])
    return "".join(out)


def _blank(literal: str, quote: str) -> str:
    """A plain literal as long as `literal`, with its line breaks: the quotes, then spaces."""
    inner = re.sub(r"[^\n]", " ", literal[: len(literal) - len(quote)])[len(quote) :]
    if "\n" in inner and len(quote) == 1:  # a 3.12 field may break the line: a triple quote holds that,
        quote = quote * 3  # its two extra characters a side taken from the blanks of the first and last line
        first, *middle, last = inner.split("\n")
        inner = "\n".join([first[2:], *middle, last[2:]])
    return quote + inner + quote


def _literal_at(text: str, i: int) -> re.Match[str] | None:
    """A string literal starting at i, its prefix included (the first character checked before the regex)."""
    return _START.match(text, i) if text[i] in "'\"rRbBuUfFtT" else None


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _literal_end(text: str, m: re.Match[str]) -> int:
    """Where the literal starting at m ends (after its closing quote)."""
    formatted = bool({"f", "t"} & set(m[1].lower()))
    return _body_end(text, m.end(), m[2], formatted)


def _body_end(text: str, i: int, quote: str, formatted: bool, spec: bool = False) -> int:
    """From inside a literal (or a format spec, spec=True: it ends before the "}" that closes its field), the
    position after its closing quote (spec: of that "}")."""
    while i < len(text):
        if not spec and text.startswith(quote, i):
            return i + len(quote)
        char = text[i]
        if char == "\\":
            i += 2
        elif char == "\n" and len(quote) == 1 and not spec:
            raise _Unclosed
        elif formatted and text.startswith(("{{", "}}"), i) and not spec:
            i += 2
        elif formatted and char == "{":
            i = _field_end(text, i + 1)
        elif spec and char == "}":
            return i
        else:
            i += 1
    raise _Unclosed


def _field_end(text: str, i: int) -> int:
    """From after a field's "{", the position after its closing "}": brackets, nested literals and comments
    skipped; a ":" at its own depth starts the format spec, itself holding fields."""
    depth = 0
    while i < len(text):
        char = text[i]
        if char == "#":
            i = _line_end(text, i)
            continue
        m = _literal_at(text, i)
        if m is not None:
            i = _literal_end(text, m)
        elif char in "([{":
            depth += 1
            i += 1
        elif char in ")]}" and depth:
            depth -= 1
            i += 1
        elif char == "}":
            return i + 1
        elif char == ":" and depth == 0:
            return _body_end(text, i + 1, "", True, spec=True) + 1
        else:
            i += 1
    raise _Unclosed
