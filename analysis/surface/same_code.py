"""Whether two versions of a Python file are the same code: only comments, docstrings and message text differ.

A change that rewrites a docstring, a comment or the words of an error message changes nothing users run
(DESIGN.md §3c: docstrings are prose). The patch alone cannot always tell: a hunk may start inside a long
docstring that holds code examples, and a message may be an f-string around a call. The two syntax trees can:
the versions are the same code when their trees are equal once every docstring (a string standing alone as a
statement: module, class, function and attribute docstrings) and every statement that does nothing (`pass`, a
lone `...`) is left out, and the literal words of a message (a string of at least two words passed to a call,
such as `raise ValueError(f"... {x} ...")`, `warn("...")`, `Field(description="...")`, `Doc("...")`, and an
assert's, `assert ok, "..."`) are not compared. Documentation in a type (PEP 727: `Annotated[str, Doc("...")]`)
is prose too: a parameter annotated `str` before and `Annotated[str, Doc("...")]` after is the same code, and
other metadata (`Annotated[str, Query(), Doc("...")]`) is still compared; the typing import of `Annotated` and
`Doc` that such documentation needs is no code either. Comments and layout are not in the tree at all.

Conservative: a string elsewhere (an assignment, a default, a dictionary key, a comparison) is compared, as is
every name, number and the code inside an f-string's braces; a version that did not parse is never the same.
Statements whose source lines are equal are not walked, so the cost is the changed statements'.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from analysis.surface.blanked_bodies import first_line
from analysis.text import TWO_WORDS

_DEFINITIONS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True, slots=True)
class Version:
    """One version as the collector left it: its tree (bodies may be blanked), its lines, and how to give a
    node with a blanked body back its whole text (blanked_bodies.Blanked.whole; the identity when none is)."""

    tree: ast.Module
    lines: Sequence[str]
    whole: Callable[[ast.AST], ast.AST | None]

    def text(self, node: ast.stmt) -> Sequence[str]:
        return self.lines[first_line(node) - 1 : node.end_lineno or node.lineno]


def same_code(old: Version, new: Version) -> bool:
    try:
        return _same_body(old, old.tree.body, new, new.tree.body)
    except RecursionError:
        return False


def _same_body(
    a: Version, xs: list[ast.stmt], b: Version, ys: list[ast.stmt], whole: tuple[bool, bool] = (False, False)
) -> bool:
    """whole: whether each side's statements are known to hold no blanked body (inside a node given back
    whole): they are not given back again."""
    xs, ys = _code(xs), _code(ys)
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys, strict=True):
        if type(x) is not type(y):
            return False
        if a.text(x) == b.text(y):
            continue  # the same source lines: the same code (a blanked body is blanked text that was equal)
        as_parsed = True  # the nodes are the parse of their text: none holds a blanked body
        inner = whole
        if not isinstance(x, ast.ClassDef):  # a class's own body is never blanked: its methods are given back
            wx = x if whole[0] else a.whole(x)
            wy = y if whole[1] else b.whole(y)
            if wx is None or wy is None:
                return False
            inner = (whole[0] or wx is not x, whole[1] or wy is not y)
            as_parsed, x, y = wx is x and wy is y, wx, wy
        if isinstance(x, _DEFINITIONS):
            if not _same_fields(x, y, skip="body") or not _same_body(a, x.body, b, y.body, inner):  # type: ignore[attr-defined]
                return False
        elif not (_same_block(a, x, b, y) if as_parsed else _same(x, y, message=False)):
            return False
    return True


_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.TryStar)
_BLOCK_BODIES = frozenset({"body", "orelse", "finalbody"})


def _same_block(a: Version, x: ast.stmt, b: Version, y: ast.stmt) -> bool:
    """`_same(x, y, message=False)` for two statements parsed from their text, with a block's statements of
    equal text not walked (equal lines parse to equal trees): a change inside an `if` or `for` compares the
    changed statements only."""
    if not isinstance(x, _BLOCKS) or type(x) is not type(y):
        return _same(x, y, message=False)
    for name in x._fields:
        u, v = getattr(x, name, None), getattr(y, name, None)
        if name in _BLOCK_BODIES:
            us, vs = _code(u), _code(v)  # type: ignore[arg-type]
            if len(us) != len(vs):
                return False
            for p, q in zip(us, vs, strict=True):
                if type(p) is not type(q):
                    return False
                if a.text(p) != b.text(q) and not _same_block(a, p, b, q):
                    return False
        elif not _same_value(u, v, False):
            return False
    return True


def _code(body: list[ast.stmt]) -> list[ast.stmt]:
    return [s for s in body if not _no_op(s)]


def _no_op(stmt: ast.stmt) -> bool:
    """A docstring, a `pass` or a lone `...`: statements that do nothing (a linter's "unnecessary pass"); an
    import of only what documentation in types needs (`from typing_extensions import Annotated, Doc`)."""
    if isinstance(stmt, ast.ImportFrom) and stmt.module in _TYPING_MODULES:
        return not _typing_names(stmt)
    return isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))


_TYPING_MODULES = frozenset({"typing", "typing_extensions"})
_DOC_NAMES = frozenset({"Annotated", "Doc"})  # what `Annotated[X, Doc("...")]` imports


def _typing_names(stmt: ast.ImportFrom) -> set[tuple[str, str | None]]:
    """A typing import's names but those documentation in types needs."""
    return {(a.name, a.asname) for a in stmt.names if a.name not in _DOC_NAMES or a.asname}


def _same_fields(x: ast.AST, y: ast.AST, skip: str) -> bool:
    return all(
        _same_value(getattr(x, name, None), getattr(y, name, None), False)
        for name in x._fields
        if name != skip
    )


def _same(x: ast.AST, y: ast.AST, message: bool) -> bool:
    """Equal trees but for docstrings, and for message words where `message` (inside a call's arguments)."""
    x, y = _undocumented(x), _undocumented(y)
    if type(x) is not type(y):
        return False
    if isinstance(x, ast.ImportFrom) and x.module in _TYPING_MODULES and x.module == y.module:  # type: ignore[attr-defined]
        return _typing_names(x) == _typing_names(y) and x.level == y.level  # type: ignore[arg-type, attr-defined]
    if isinstance(x, ast.Constant):
        if type(x.value) is type(y.value) and x.value == y.value:  # type: ignore[attr-defined]
            return True
        return message and _prose(x.value) and _prose(y.value)  # type: ignore[attr-defined]
    if isinstance(x, ast.Assert):  # `assert ok, "message"`: the message is what a failure says
        return _same(x.test, y.test, False) and _same_value(x.msg, y.msg, True)  # type: ignore[attr-defined]
    if isinstance(x, ast.Call):
        keeps = _format_call(x) and _format_call(y)
        return (
            _same(x.func, y.func, keeps)  # type: ignore[attr-defined]
            and _same_value(x.args, y.args, True)  # type: ignore[attr-defined]
            and _same_value(x.keywords, y.keywords, True)  # type: ignore[attr-defined]
        )
    inner = message and isinstance(x, (ast.JoinedStr, ast.BinOp, ast.IfExp, ast.keyword, ast.Attribute))
    for name in x._fields:
        u, v = getattr(x, name, None), getattr(y, name, None)
        if isinstance(x, ast.FormattedValue) and name == "value":
            if not _same(u, v, False):  # the code in an f-string's braces
                return False
        elif not _same_value(u, v, inner):
            return False
    return True


def _undocumented(node: ast.AST) -> ast.AST:
    """`Annotated[X, Doc("..."), *meta]` without its `Doc(...)`: `Annotated[X, *meta]`, or `X` alone."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and node.slice.elts):
        return node
    head = node.value
    name = head.attr if isinstance(head, ast.Attribute) else head.id if isinstance(head, ast.Name) else ""
    if name != "Annotated":
        return node
    kind, *meta = node.slice.elts
    kept = [m for m in meta if not _doc_call(m)]
    if len(kept) == len(meta):
        return node
    if not kept:
        return kind
    return ast.Subscript(value=head, slice=ast.Tuple(elts=[kind, *kept], ctx=ast.Load()), ctx=node.ctx)


def _doc_call(node: ast.expr) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name == "Doc"


def _same_value(u: object, v: object, message: bool) -> bool:
    if isinstance(u, list) and isinstance(v, list):
        if u and isinstance(u[0], ast.stmt):
            u, v = _code(u), _code(v)  # type: ignore[arg-type]
        return len(u) == len(v) and all(_same_value(p, q, message) for p, q in zip(u, v, strict=True))
    if isinstance(u, ast.AST) and isinstance(v, ast.AST):
        return _same(u, v, message)
    return type(u) is type(v) and u == v


def _format_call(call: ast.Call) -> bool:
    """`"... {} ...".format(x)`: the string the method is called on is the message."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant)


# Words a message has: at least two, a space between. `--out-path`, `text/event-stream`, `max-tokens` are names
# a program reads (an option, a media type, a key), never a message, though TWO_WORDS finds two words in them.
_SPACED = re.compile(r"[A-Za-z]{2,}[^\w\n]*\s[^\w\n]*[A-Za-z]{2,}")


def _prose(value: object) -> bool:
    return (
        isinstance(value, str)
        and not value.lstrip().startswith("-")
        and TWO_WORDS.search(value) is not None
        and _SPACED.search(value) is not None
    )
