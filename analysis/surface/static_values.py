"""The values a build script spells from literals and the names bound to them, read from its syntax tree and never
run: setup.py's `python_requires=">={}".format(min_python_version)`, `install_requires=install_requires` (a list
bound above), `setup(**metadata)` with `metadata = dict(...)`. Projects that keep their supported versions in
named constants state them this way; a literal-only reading saw no `python_requires` at all there. Pure.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Mapping

UNKNOWN = object()  # an expression that computes something we cannot read
_MAX_DEPTH = 20  # names bound to names bound to ...: a cycle (`a = b; b = a`) ends here
# Untrusted text: a value built by concatenation (`a = b + b`, `b = c + c`, ...) could grow without bound.
_MAX_LENGTH = 10_000
_PLAIN_FIELD = re.compile(r"^(?:\d{1,3}|[A-Za-z_]\w{0,40})?$")  # "{}", "{0}", "{name}": no item or attribute


def module_bindings(tree: ast.Module) -> dict[str, ast.expr]:
    """The expression each top-level name is last bound to (`x = ...`, `x: T = ...`)."""
    out: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out[node.target.id] = node.value
    return out


def unalias(node: ast.expr, bound: Mapping[str, ast.expr]) -> ast.expr:
    """The expression a name stands for, through names bound to names; the node itself when it is no name
    bound at the top level."""
    for _ in range(_MAX_DEPTH):
        if not isinstance(node, ast.Name) or node.id not in bound:
            return node
        node = bound[node.id]
    return node


def keyword_items(
    tree: ast.Module, node: ast.expr, bound: Mapping[str, ast.expr]
) -> list[tuple[str, ast.expr]]:
    """The keywords a `**spread` passes: a `dict(k=...)` call or a `{"k": ...}` literal, directly or through a
    name, with the `name["k"] = ...` assignments made to that name at the top level after it."""
    target = node.id if isinstance(node, ast.Name) else None
    expr = unalias(node, bound)
    out: list[tuple[str, ast.expr]] = []
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "dict"
        and not expr.args
    ):
        out += [(k.arg, k.value) for k in expr.keywords if k.arg is not None]
    elif isinstance(expr, ast.Dict):
        out += [
            (k.value, v)
            for k, v in zip(expr.keys, expr.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        ]
    else:
        return []
    if target is not None:
        for stmt in tree.body:
            if not isinstance(stmt, ast.Assign):
                continue
            for t in stmt.targets:
                if (
                    isinstance(t, ast.Subscript)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == target
                    and isinstance(t.slice, ast.Constant)
                    and isinstance(t.slice.value, str)
                ):
                    out.append((t.slice.value, stmt.value))
    return out


def static_value(node: ast.expr | None, bound: Mapping[str, ast.expr]) -> object:
    """The plain value (str, number, bool, None, list, dict) an expression spells from literals, names bound
    to them, `+` of strings or lists, f-strings and `"...".format(...)` with plain fields; UNKNOWN otherwise."""
    return _bounded(node, bound, 0, {})


def _bounded(
    node: ast.expr | None, bound: Mapping[str, ast.expr], depth: int, seen: dict[int, object]
) -> object:
    # `seen`: a name used twice (`a = b + b`) is read once, so a chain of them costs its length, not 2**length
    if node is None or depth > _MAX_DEPTH:
        return UNKNOWN
    if id(node) not in seen:
        value = _value(node, bound, depth, seen)
        seen[id(node)] = UNKNOWN if isinstance(value, str | list) and len(value) > _MAX_LENGTH else value
    return seen[id(node)]


def _value(node: ast.expr, bound: Mapping[str, ast.expr], depth: int, seen: dict[int, object]) -> object:
    def sub(n: ast.expr | None) -> object:
        return _bounded(n, bound, depth + 1, seen)

    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str | int | float | bool | type(None)) else UNKNOWN
    if isinstance(node, ast.Name):
        return sub(bound.get(node.id))
    if isinstance(node, ast.List | ast.Tuple):
        items = [sub(e) for e in node.elts]
        return UNKNOWN if any(i is UNKNOWN for i in items) else items
    if isinstance(node, ast.Dict):
        keys, values = [sub(k) for k in node.keys], [sub(v) for v in node.values]
        if any(not isinstance(k, str) for k in keys) or any(v is UNKNOWN for v in values):
            return UNKNOWN
        return dict(zip(keys, values, strict=True))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = sub(node.left), sub(node.right)
        if isinstance(left, str | list) and type(left) is type(right):
            return left + right
        return UNKNOWN
    if isinstance(node, ast.JoinedStr):
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append(part.value)
            elif isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None:
                inner = sub(part.value)
                if not isinstance(inner, str | int | float) or isinstance(inner, bool):
                    return UNKNOWN
                parts.append(str(inner))
            else:
                return UNKNOWN
        return "".join(parts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _formatted(node, sub)
    return UNKNOWN


def _formatted(node: ast.Call, sub) -> object:
    """`"...".format(a, b)`: only plain fields ("{}", "{0}", "{name}"), never a format spec or a conversion,
    which could ask for a string of any width."""
    assert isinstance(node.func, ast.Attribute)
    template = sub(node.func.value)
    if not isinstance(template, str) or any(isinstance(a, ast.Starred) for a in node.args):
        return UNKNOWN
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return UNKNOWN
    if any(
        spec or conversion or not _PLAIN_FIELD.match(field)
        for _, field, spec, conversion in fields
        if field is not None
    ):
        return UNKNOWN
    args = [sub(a) for a in node.args]
    kwargs = {k.arg: sub(k.value) for k in node.keywords if k.arg is not None}
    values = [*args, *kwargs.values()]
    if len(kwargs) != len(node.keywords) or any(not isinstance(v, str | int | float) for v in values):
        return UNKNOWN
    try:
        return template.format(*args, **kwargs)
    except (IndexError, KeyError, ValueError, AttributeError):
        return UNKNOWN
