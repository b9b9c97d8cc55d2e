"""A version's tree with the top-level statements it shares, line for line, with a version parsed before taken
from that version's tree rather than parsed again.

A version collected against another version of its file (blanked_bodies.py) is parsed from its blanked text,
and so was the other one. Where the two parsed texts have the same lines at the same line numbers (the runs of
shared_parse.shared_runs, cut at likely top-level statement starts: before a commit's first change, and after
each change that kept the line count), the other tree's statements that fill a run are this text's there too.
Only the rest is parsed, in pieces padded with blank lines so that its line numbers are the file's.

Why the tree is exactly ast.parse's: a run is taken only when the other tree's top-level statements fill it
(none crosses either end: the lines they leave out are blank or comments), so the run is whole statements,
and a stretch of whole top-level statements parses the same wherever it follows a complete one (texts whose grammar an earlier
statement changes, `barry_as_FLUFL`, are never shared). The pieces between the runs are parsed in order from
the top, each as a module of its own: a piece that ends before a clause, a decorated definition or a
continuation that the next stretch completes, or that starts inside one, does not parse (shared_parse.py
says why), and any piece that does not parse sends the text to a parse of the whole.
"""

from __future__ import annotations

import ast
from bisect import bisect_left
from collections.abc import Sequence

from analysis.surface.blanked_bodies import first_line
from analysis.surface.shared_parse import parse, piece, shared_runs


def parse_reusing(
    original: list[str],
    lines: list[str],
    stubs: dict[int, tuple[int, int]],
    known_lines: list[str],
    known_tree: ast.Module,
) -> tuple[ast.Module, list[str], dict[int, tuple[int, int]]]:
    """(the tree, the lines it is the parse of, their blanked bodies) of a version whose `original` lines
    blank_bodies.blank gave as `lines` with `stubs`, with the statements of the runs it shares with
    known_lines (the text known_tree is the parse of) taken from known_tree. A function this version blanked
    and the known one did not, at the same lines, is kept whole where that lets a run be shared (no parse
    left to save). Raises as ast.parse of the whole text does."""
    lines, stubs = list(lines), dict(stubs)
    restored: dict[int, tuple[list[str], tuple[int, int]]] = {}  # line after its `pass` → its blanked lines
    for end, stub in stubs.items():
        head = stub[0] - 1  # the `def` line: blank_bodies.blank changed [head, end) of the lines
        if known_lines[head:end] == original[head:end]:
            restored[end] = (lines[head:end], stub)
            lines[head:end] = original[head:end]
    for end in restored:
        del stubs[end]
    taken = _filled_runs(shared_runs(known_lines, lines), known_tree.body)
    for end, (blanked, stub) in restored.items():
        head = stub[0] - 1
        if not any(start <= head and end <= stop for start, stop, _ in taken):  # blanked again: parsed
            lines[head:end] = blanked
            stubs[end] = stub
    taken = [run for run in taken if lines[run[0] : run[1]] == known_lines[run[0] : run[1]]]
    if taken:
        try:
            return ast.Module(body=_body(lines, taken), type_ignores=[]), lines, stubs
        except Exception:  # any failure: the whole text decides
            pass
    return parse("\n".join(lines)), lines, stubs


def _body(lines: list[str], taken: list[tuple[int, int, list[ast.stmt]]]) -> list[ast.stmt]:
    body: list[ast.stmt] = []
    at = 0
    for start, end, statements in taken:
        body += piece(lines, at, start)
        body += statements
        at = end
    return body + piece(lines, at, len(lines))


def _filled_runs(
    runs: list[tuple[int, int]], statements: Sequence[ast.stmt]
) -> list[tuple[int, int, list[ast.stmt]]]:
    """(start, end, the statements) of each run (line indexes) that top-level statements of the known tree
    fill: none crosses its start or its end (the lines no statement covers are blank or comments)."""
    firsts = [first_line(s) for s in statements]
    filled = []
    for start, end in runs:
        i = bisect_left(firsts, start + 1)  # the statements that start in the run: [i, j)
        j = bisect_left(firsts, end + 1, lo=i)
        crosses_start = i > 0 and statements[i - 1].end_lineno > start  # type: ignore[operator]
        if crosses_start or (j > i and statements[j - 1].end_lineno > end):  # type: ignore[operator]
            continue
        filled.append((start, end, list(statements[i:j])))
    return filled
