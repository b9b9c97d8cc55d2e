"""The syntax trees of a file's two versions, with the stretches the versions share parsed once.

A commit changes a few places of a module; between them, long runs of lines are the same text at the same
line numbers on both sides (before the first change, and after any change that kept the line count). Such a
run, cut at top-level statement starts, parses to the same statements on both sides: it is parsed once and
its nodes serve both trees (the surface only reads them). Everything else is parsed per side, in pieces,
each padded with blank lines so that its line numbers are the file's.

Why the trees are exactly ast.parse's: the pieces of a side are parsed in order from the top of the file, so
the first cut that is not a statement boundary ends a piece inside a string, a bracket or a line
continuation, or before the clause or definition that completes a statement (an `else:`, the def after a
decorator): that piece, or the next, does not parse. Any piece that does not parse, for whatever reason,
sends both versions to a plain ast.parse of the whole text, so an unparseable file fails as before. Texts
whose line numbering differs from "\\n" counting (a "\\r") or whose parsing depends on an earlier
statement (the one __future__ import that changes the grammar) are parsed whole.
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


def parse_pair(before: str, after: str) -> tuple[ast.Module | None, ast.Module | None]:
    """ast.parse of each version (None where it raises a syntax, value, recursion or memory error)."""
    if "\r" in before or "\r" in after or GRAMMAR_FUTURE in before or GRAMMAR_FUTURE in after:
        return _whole(before), _whole(after)
    old, new = before.split("\n"), after.split("\n")
    runs = shared_runs(old, new)
    if runs:
        try:
            return _pieces(old, new, runs)
        except Exception:  # any failure: the whole texts decide, as without sharing
            pass
    return _whole(before), _whole(after)


def shared_runs(old: list[str], new: list[str]) -> list[tuple[int, int]]:
    """(start, end) line indexes of the runs both versions have at the same place, each at least
    MIN_SHARED_LINES long, starting at a likely top-level statement start and ending at one (or at the end
    of both texts)."""
    runs: list[tuple[int, int]] = []
    n = min(len(old), len(new))
    i = 0
    while i < n:
        if old[i] != new[i]:
            i += 1
            continue
        start = i
        while i < n and old[i] == new[i]:
            i += 1
        first = next((k for k in range(start, i) if _cut_on_both(old, new, k)), None)
        if first is None:
            continue
        last = next((k for k in range(i, first, -1) if _cut_on_both(old, new, k)), None)
        if last is not None and last - first >= MIN_SHARED_LINES:
            runs.append((first, last))
    return runs


def _starts(lines: list[str], i: int) -> bool:
    """A line that looks like a top-level statement start after a blank line (a guess: the parse decides)."""
    line = lines[i]
    if i == 0:
        return True
    return bool(line) and line[0] not in _NOT_A_START and lines[i - 1] == "" and not line.startswith(_CLAUSES)


def _cut_on_both(old: list[str], new: list[str], i: int) -> bool:
    return (i == len(old) or _starts(old, i)) and (i == len(new) or _starts(new, i))


def _pieces(old: list[str], new: list[str], runs: list[tuple[int, int]]) -> tuple[ast.Module, ast.Module]:
    old_body: list[ast.stmt] = []
    new_body: list[ast.stmt] = []
    at = 0
    for start, end in runs:
        if start > at:
            old_body += _piece(old, at, start)
            new_body += _piece(new, at, start)
        shared = _piece(old, start, end)
        old_body += shared
        new_body += shared
        at = end
    old_body += _piece(old, at, len(old))
    new_body += _piece(new, at, len(new))
    return ast.Module(body=old_body, type_ignores=[]), ast.Module(body=new_body, type_ignores=[])


def _piece(lines: list[str], start: int, end: int) -> list[ast.stmt]:
    """The statements of lines [start, end), numbered as in the file."""
    if start >= end:
        return []
    text = "\n" * start + "\n".join(lines[start:end]) + ("\n" if end < len(lines) else "")
    return parse(text).body


def _whole(text: str) -> ast.Module | None:
    try:
        return parse(text)
    except PARSE_FAILURES:
        return None
