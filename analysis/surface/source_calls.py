"""Calls and declarations read out of source text by hand, for the languages no parser here reads whole: a
call's arguments (strings and nested brackets kept whole, bounded), each declaration read once, and which lines
start as comments. native_knobs.py reads flags and environment variables with these."""

from __future__ import annotations

import re
from bisect import bisect_right

_ARGUMENTS_READ = 4000  # characters of one declaration's arguments read at most
MAX_DECLARATIONS = 5000  # declarations read per file version
_INDENT = re.compile(r"[ \t]*")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)


class Calls:
    """The arguments of the declarations a file's patterns find, each read once: a match that starts inside the
    arguments of the one read before it is part of them, and at most MAX_DECLARATIONS are read per file (a
    file of nested or repeated openings was read again from each: seconds per megabyte)."""

    def __init__(self, text: str) -> None:
        self.text, self.left, self.until = text, MAX_DECLARATIONS, -1

    def arguments(self, match_start: int, start: int, close: str = ")") -> list[str] | None:
        if match_start < self.until or self.left <= 0:
            return None
        self.left -= 1
        args, self.until = call(self.text, start, close)
        return args

    def fresh(self) -> None:
        """The next pattern's matches may overlap this one's."""
        self.until = -1


def arguments(text: str, start: int, close: str = ")") -> list[str]:
    return call(text, start, close)[0]


def call(text: str, start: int, close: str = ")") -> tuple[list[str], int]:
    """The comma-separated arguments from `start` (just after the opening bracket) to the matching `close`,
    each stripped, and where they end (just past `close`); string literals and nested brackets are kept
    whole. Unclosed: what was read within _ARGUMENTS_READ characters, and where the reading stopped."""
    args: list[str] = []
    depth, i, begin, n = 0, start, start, min(len(text), start + _ARGUMENTS_READ)
    opening = {")": "(", ">": "<", "]": "["}[close]
    closed = False
    while i < n:
        c = text[i]
        if c in "\"'":
            end = _string_end(text, i)
            i = end
            continue
        if c in "([{" or c == opening == "<":
            depth += 1
        elif c in ")]}" or c == close == ">":
            if depth == 0 and c == close:
                closed = True
                break
            depth -= 1
        elif c == "," and depth == 0:
            args.append(text[begin:i].strip())
            begin = i + 1
        elif c == ";" and close == ")":
            break  # a statement's end: the call was not closed
        i += 1
    last = text[begin:i].strip()
    if last:
        args.append(last)
    # `/*default=*/"true"`: the value
    return [_BLOCK_COMMENT.sub("", a).strip() for a in args], i + 1 if closed else i


def _string_end(text: str, i: int) -> int:
    quote, j = text[i], i + 1
    while j < len(text) and text[j] != quote and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return j + 1


def is_string(arg: str) -> bool:
    return len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "\"'`"


def unquote(arg: str) -> str:
    return arg[1:-1] if is_string(arg) else arg


class Lines:
    """Line numbers by bisection, and whether a match sits on a line that starts as a comment."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def number(self, at: int) -> int:
        return bisect_right(self.starts, at)

    def commented(self, at: int) -> bool:
        """Whether the line starts as a comment (its indentation skipped; no copy of a long line is made)."""
        first = _INDENT.match(self.text, self.starts[self.number(at) - 1]).end()
        if first >= at:
            return False
        text = self.text
        return text.startswith(("//", "/*", "*", "<!--"), first) or (
            text.startswith("#", first) and not text.startswith("#[", first)
        )
