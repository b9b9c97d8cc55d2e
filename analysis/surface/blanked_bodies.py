"""A version's text with the bodies of the functions it shares with another version of the file left empty.

Most of a touched module is function bodies, and most of its functions are the same text before and after the
commit. The surface (analysis/surface/python.py) needs a function's body only when the function changed, when
a comparison asks for its shape or its strings, or when the calls walk finds something in it (an option, an
environment variable, a route, a deprecation: what it finds in a function depends on the function's text
alone). So a version collected after another version of its file has each function of that version in which
the walk found nothing, and that stands word for word in its text as a whole function, parsed with its body
replaced by a `pass` on the body's last line, the lines before it left empty: every line number stays the
file's, and the parser skips the empty lines almost for free. Unless the text may hold a typer option (read
from a parameter's default), the head goes too: `def name():` on the `def` line, its other lines empty (the
decorators stay); the collector reads a function's parameters only when a comparison asks, from its whole
node. A node whose text holds such a body is parsed again from its own lines when it is asked for (`reparse`).

Why the rest of the tree is exactly ast.parse's: a blanked function's text parsed, in the other version, as
one complete function; the text before it is the same in the parsed text and in the file. The collector checks
(python.py: _Collector._function) that each `pass` ended up as the whole body of a function it visits, at the
line where the function starts. Then the file's body closed where the `pass` is (a longer body would have
followed it in the parsed text as well: then the `pass` is not the whole body, or the parse fails), and what
follows reads the same in both. A check that fails, or a parse that fails, sends the version to a whole parse.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from analysis.surface.shared_parse import PARSE_FAILURES
from analysis.surface.shared_parse import parse as parse_python

# Places a function's first line has in the new text that are compared with it, at most: a file of many
# functions that start alike (`def __init__(self):`) would compare each with all of them.
MAX_TRIED = 16
# A `def` line up to its name, when the parameters follow: a blanked head keeps it and drops the rest.
_DEF_NAME = re.compile(r"[ \t]*(?:async[ \t]+)?def[ \t]+\w+(?=[ \t]*[(\[])")


@dataclass(frozen=True, slots=True)
class Span:
    """A function the next version may leave out: line indexes (0-based) of its first line (a decorator's),
    its `def`, its body's first line and last line, and its body's indentation."""

    first: int
    head: int
    body: int
    last: int
    indent: str


def blank(
    lines: list[str], known: Sequence[str], spans: Iterable[Span], *, heads: bool = False
) -> tuple[list[str], dict[int, tuple[int, int]]]:
    """`lines` with the bodies emptied of the `spans` (functions of the lines `known`) that stand in them word for
    word, each closed by the next line that is not empty or a comment; and {line of each `pass`: (line of its
    `def`, line where its body started)}, numbered from 1 as the parser does. heads: their parameters and
    return annotation left out too (`def name():`), for a caller that reads a blanked function's signature
    from its whole node (`Blanked.whole`); its decorators stay."""
    spans = list(spans)
    firsts = {known[s.first] for s in spans}
    where: dict[str, list[int]] = {}
    for i in [i for i, line in enumerate(lines) if line in firsts]:  # a comprehension: most lines are none
        where.setdefault(lines[i], []).append(i)
    out: list[str] | None = None
    used = bytearray(len(lines))
    free: dict[str, int] = {}  # per first line, where its places not yet blanked start
    stubs: dict[int, tuple[int, int]] = {}
    for s in spans:
        size = s.last - s.first + 1
        places = where.get(known[s.first], ())
        start = free.get(known[s.first], 0)
        while start < len(places) and used[places[start]]:
            start += 1
        free[known[s.first]] = start
        for at in places[start : start + MAX_TRIED]:
            end = at + size
            if used.find(1, at, end) >= 0 or lines[at:end] != known[s.first : s.last + 1]:
                continue
            if not _closed(lines, end, lines[at + s.head - s.first]):
                continue
            if out is None:
                out = list(lines)
            head, body, last = at + s.head - s.first, at + s.body - s.first, end - 1
            out[body:last] = [""] * (last - body)
            out[last] = s.indent + "pass"
            if heads:
                _blank_head(out, head, body)
            used[at:end] = b"\x01" * size
            stubs[last + 1] = (head + 1, body + 1)
            break
    return (out if out is not None else lines), stubs


def _blank_head(lines: list[str], head: int, body: int) -> None:
    """The `def` line at index `head` as `def name():`, its other lines up to the body's first (`body`) left
    empty: a signature's annotations and defaults are a large part of what a blanked text parses."""
    found = _DEF_NAME.match(lines[head])
    if found is None:  # the name on a line of its own (after a backslash): the head is kept
        return
    lines[head] = found.group() + "():"
    lines[head + 1 : body] = [""] * (body - head - 1)


def _closed(lines: list[str], i: int, head: str) -> bool:
    """Whether the first line from index i that is not empty or a comment is indented no deeper than `head`
    (or there is none): the function that ends before it ends there."""
    depth = len(head) - len(head.lstrip())
    for j in range(i, len(lines)):
        line = lines[j]
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#"):
            return len(line) - len(stripped) <= depth
    return True


def first_line(node: ast.AST) -> int:
    """The line a statement's text starts on: its first decorator's, or its own. Decorators stand one after
    another before the `def` or `class` (the grammar's `('@' expression NEWLINE)+`), so the first one listed
    starts first: no need to look at the others (asked for every definition of every version)."""
    decorators = getattr(node, "decorator_list", None)
    return min(node.lineno, decorators[0].lineno) if decorators else node.lineno  # type: ignore[attr-defined]


def reparse(lines: Sequence[str], node: ast.stmt) -> ast.stmt | None:
    """The statement `node` stands for, parsed from its own lines (padded, and under an `if 1:` when indented,
    so that its line numbers and columns are the file's); None when that does not give a statement there."""
    first = first_line(node)
    last = node.end_lineno or node.lineno
    text = "\n".join(lines[first - 1 : last])
    if node.col_offset:
        if first < 2:
            return None
        text = "\n" * (first - 2) + "if 1:\n" + text
    else:
        text = "\n" * (first - 1) + text
    try:
        body = parse_python(text).body
    except PARSE_FAILURES:
        return None
    if node.col_offset:
        body = body[0].body if len(body) == 1 and isinstance(body[0], ast.If) else []
    if len(body) != 1:
        return None
    found = body[0]
    place = (node.lineno, node.col_offset, node.end_lineno)
    return (
        found
        if type(found) is type(node) and (found.lineno, found.col_offset, found.end_lineno) == place
        else None
    )


@dataclass(frozen=True, slots=True)
class Relative:
    """A version of a file as far as blanking needs it: its lines and the functions it lets blank."""

    lines: list[str]
    spans: tuple[Span, ...]


class Relatives:
    """The latest collected version of each file (`Relative`), for a version of it that is collected without
    its neighbour (the first of a file in a batch, or a file a batch touches once): the versions of a file a
    few days apart share most functions. At most max_chars of text are held, the one put longest ago dropped
    first."""

    def __init__(self, max_chars: int = 16_000_000) -> None:
        self.max_chars = max_chars
        self._held: dict[str, tuple[Relative, int]] = {}  # insertion order: least recently put first
        self._chars = 0

    def get(self, path: str) -> Relative | None:
        found = self._held.get(path)
        return found[0] if found is not None else None

    def put(self, path: str, lines: list[str], spans: tuple[Span, ...]) -> None:
        old = self._held.pop(path, None)
        if old is not None:
            self._chars -= old[1]
        size = sum(map(len, lines))
        if not spans or size > self.max_chars:
            return
        self._held[path] = (Relative(lines, spans), size)
        self._chars += size
        while self._chars > self.max_chars:
            _, dropped = self._held.pop(next(iter(self._held)))
            self._chars -= dropped


class Blanked:
    """A version's blanked bodies ({line of each `pass`: (line of its `def`, line where its body started)},
    as `blank` gives them) with the version's lines, to give a node back its bodies when it is asked for."""

    def __init__(self, lines: list[str], stubs: dict[int, tuple[int, int]]) -> None:
        self.lines = lines
        self._stub_lines = sorted(stubs)
        # a node with a blanked body inside, by id (its tree holds it while this is asked) → its whole node
        self._whole: dict[int, ast.AST] = {}
        self._tree: ast.Module | None = None

    def whole(self, node: ast.AST | None) -> ast.AST | None:
        """The node, or, when a blanked body is inside it, the node parsed from its own lines."""
        if not isinstance(node, ast.stmt):
            return node
        at = bisect_left(self._stub_lines, node.lineno)
        if at == len(self._stub_lines) or self._stub_lines[at] > (node.end_lineno or node.lineno):
            return node
        found = self._whole.get(id(node))
        if found is None:
            found = self._whole[id(node)] = reparse(self.lines, node) or self._found(node)
        return found

    def whole_tree(self) -> ast.Module:
        """The whole text's tree (parsed when first asked: a removal's check of the strings still served)."""
        if self._tree is None:
            self._tree = parse_python("\n".join(self.lines))
        return self._tree

    def _found(self, node: ast.stmt) -> ast.AST:
        """The node of the same kind at the same place in the whole tree, for a node whose own lines do not
        parse alone."""
        place = (node.lineno, node.col_offset)
        for found in ast.walk(self.whole_tree()):
            if type(found) is type(node) and (found.lineno, found.col_offset) == place:  # type: ignore[attr-defined]
                return found
        return node  # not reached: the blanked text parsed to this node where the whole text has one
