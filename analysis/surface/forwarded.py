"""Whether a function's `**kwargs` hands a keyword on to a function of the same module that takes it by name:
`get_tokenizer(name, **kwargs)` calling `resolve_args(name, **kwargs)`, which has `tokenizer_mode`, still
accepts `get_tokenizer(name, tokenizer_mode=...)` after dropping the parameter. Keywords only stored, or passed
to a callee this module does not define (a base class elsewhere, another package), are not known to reach one.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from analysis.surface.python_nodes import _Def, _name_of


def forwards_keyword(
    qual: str, func: _Def, kwarg: str, name: str, defs: Mapping[str, _Def], tree: ast.Module | None
) -> bool:
    """Whether function `qual` passes `**kwarg` to a function of its module (or a method of its class or of a
    base class defined here) that has a parameter `name`."""
    node = func.whole
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    owner = qual.rpartition(".")[0]
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or not any(
            k.arg is None and isinstance(k.value, ast.Name) and k.value.id == kwarg for k in call.keywords
        ):
            continue
        for callee in _callees(call.func, owner, defs, tree):
            if any(p.name == name and p.kind not in ("vararg", "kwarg") for p in callee.params):
                return True
    return False


def _callees(target: ast.expr, owner: str, defs: Mapping[str, _Def], tree: ast.Module | None) -> list[_Def]:
    """The functions of this module a call target names: `f`, `self.f` / `cls.f`, `super().f` (on the bases
    defined here), and a module-level `f = wrapper(g)` or `f = g` (a cache or alias around g)."""
    names: list[str] = []
    if isinstance(target, ast.Name):
        names = [target.id, *_wrapped(target.id, tree)]
    elif isinstance(target, ast.Attribute) and owner:
        value = target.value
        if isinstance(value, ast.Name) and value.id in ("self", "cls"):
            names = [f"{owner}.{target.attr}"]
        elif isinstance(value, ast.Call) and _name_of(value.func) == "super":
            cls = defs.get(owner)
            bases = getattr(cls.node, "bases", ()) if cls is not None else ()
            names = [f"{_name_of(b)}.{target.attr}" for b in bases]
    found = [defs.get(n) for n in names]
    return [d for d in found if d is not None and d.kind == "function"]


def _wrapped(name: str, tree: ast.Module | None) -> list[str]:
    """What a module-level `name = g` or `name = wrapper(g, ...)` names (g)."""
    out: list[str] = []
    for stmt in tree.body if tree is not None else ():
        if not (
            isinstance(stmt, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)
        ):
            continue
        value = stmt.value
        if isinstance(value, ast.Call) and value.args:
            value = value.args[0]
        if isinstance(value, ast.Name):
            out.append(value.id)
    return out
