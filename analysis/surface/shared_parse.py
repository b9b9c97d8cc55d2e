"""Parsing Python text: ast.parse, with syntax newer than the interpreter's rewritten (`parse`), and the
pieces a version shares with another version's parse (reused_parse.py): the runs of lines both texts have at
the same place, cut at likely top-level statement starts (`shared_runs`), and a stretch of lines parsed alone,
numbered as in the file (`piece`).

A cut is a guess, checked by parsing: when the pieces of a text are parsed in order from the top, the first
cut that is not a statement boundary ends a piece inside a string, a bracket or a line continuation, or before
the clause or definition that completes a statement (an `else:`, the def after a decorator): that piece, or
the next, does not parse. Texts whose line numbering differs from "\\n" counting
(a "\\r") or whose parsing depends on an earlier statement (the one __future__ import that changes the
grammar) are parsed whole by the callers.
"""

from __future__ import annotations

import ast

from analysis.surface.newer_strings import flatten_fstrings
from analysis.surface.newer_syntax import downlevel

# A run shorter than this is not worth the extra parse calls it costs.
MIN_SHARED_LINES = 40
_CLAUSES = ("else", "elif", "except", "finally")
_NOT_A_START = frozenset(" \t#)]}")
GRAMMAR_FUTURE = "barry_as_FLUFL"  # `from __future__ import barry_as_FLUFL` changes how later lines parse
_SPURIOUS_RETRIES = 2
PARSE_FAILURES = (SyntaxError, ValueError, RecursionError, MemoryError)  # what ast.parse raises on a bad text


def parse(text: str) -> ast.Module:
    """ast.parse; a text in syntax newer than the interpreter's is parsed as rewritten, line numbers kept:
    type parameters, `type` aliases and `except A, B:` (newer_syntax.py), then, when that is not enough,
    3.12 f-strings and template strings (newer_strings.py)."""
    try:
        return _parse(text)
    except SyntaxError as error:
        failed = error
    tried = text
    for rewrite in (downlevel, flatten_fstrings):  # each on what the one before made
        rewritten = rewrite(tried)
        if rewritten == tried:
            continue
        try:
            return _parse(rewritten)
        except SyntaxError:
            tried = rewritten
    raise failed


def _parse(text: str) -> ast.Module:
    """ast.parse, tried again when CPython 3.11 reports its tree builder's recursion count out of step: a
    spurious SystemError when two threads build trees at once (python/cpython#106905), not the text's fault."""
    for _ in range(_SPURIOUS_RETRIES):
        try:
            return ast.parse(text)
        except SystemError as e:
            if "recursion depth mismatch" not in str(e):
                raise
    return ast.parse(text)


def shared_runs(old: list[str], new: list[str]) -> list[tuple[int, int]]:
    """(start, end) line indexes of the runs both versions have at the same place, each at least
    MIN_SHARED_LINES long, starting at a likely top-level statement start and ending at one (or at the end
    of both texts)."""
    runs: list[tuple[int, int]] = []
    same = bytes(map(str.__eq__, old, new))  # 1 where the line is the same at that place: compared in C
    n = len(same)
    start = same.find(1)
    while start >= 0:
        i = same.find(0, start)
        i = n if i < 0 else i  # [start, i): a longest run of equal lines
        if i - start >= MIN_SHARED_LINES:  # else no cuts within it can be far enough apart
            first = next((k for k in range(start, i) if _cut_on_both(old, new, k)), None)
            if first is not None:
                last = next((k for k in range(i, first, -1) if _cut_on_both(old, new, k)), None)
                if last is not None and last - first >= MIN_SHARED_LINES:
                    runs.append((first, last))
        start = same.find(1, i)
    return runs


def _starts(lines: list[str], i: int) -> bool:
    """A line that looks like a top-level statement start after a blank line (a guess: the parse decides)."""
    line = lines[i]
    if i == 0:
        return True
    return bool(line) and line[0] not in _NOT_A_START and lines[i - 1] == "" and not line.startswith(_CLAUSES)


def _cut_on_both(old: list[str], new: list[str], i: int) -> bool:
    return (i == len(old) or _starts(old, i)) and (i == len(new) or _starts(new, i))


def piece(lines: list[str], start: int, end: int) -> list[ast.stmt]:
    """The statements of lines [start, end), numbered as in the file."""
    if start >= end:
        return []
    text = "\n" * start + "\n".join(lines[start:end]) + ("\n" if end < len(lines) else "")
    return parse(text).body
