"""What a public class's own statement says to its users beyond its members: the bases it derives from and
the literal values its class body sets (`media_type = "text/plain"`, `status_code = 200`), which every
instance gets unless told otherwise, as a parameter's default.
"""

from __future__ import annotations

import ast

from analysis.surface.python_nodes import _name_of

# Bases that say nothing of what a class is to its users: the implicit root and the typing scaffolding.
_NEUTRAL_BASES = frozenset({"", "object", "Generic", "Protocol", "ABC"})


def base_names(node: ast.AST | None) -> list[str] | None:
    """A class's bases as users name them (`pkg.HTTPException` → "HTTPException"), None for no class."""
    if not isinstance(node, ast.ClassDef):
        return None
    return [_name_of(b) for b in node.bases]


def dropped_bases(old: ast.AST | None, new: ast.AST | None) -> tuple[str, str] | None:
    """(bases before, bases after) when an exception class no longer derives from a base it had: users'
    `except Old` clauses stop catching it, or a handler for the new base starts to. A base only added (a
    mixin) keeps every clause that held before. Other classes' bases are left alone: swapping the base of an
    implementation class is mostly a refactor users never see."""
    was, now = base_names(old), base_names(new)
    if was is None or now is None or not isinstance(new, ast.ClassDef):
        return None
    if not any(_exceptional(name) for name in [new.name, *was, *now]):
        return None
    if not [b for b in was if b not in now and b not in _NEUTRAL_BASES]:
        return None
    return ", ".join(was) or "object", ", ".join(now) or "object"


def _exceptional(name: str) -> bool:
    return name.endswith(("Error", "Exception", "Warning")) or name in ("BaseException", "Exit", "Interrupt")


def is_enum(node: ast.AST | None) -> bool:
    """An enumeration: its members' values are identities, not defaults anyone gets."""
    return any(b.endswith(("Enum", "Flag")) for b in base_names(node) or [])


def class_literal(value: ast.expr | None) -> bool:
    """A class-level value worth comparing: a plain literal (str, int, float, bool, None), not a container or
    an expression whose change says nothing users see (a registry, a mapping of weights)."""
    return isinstance(value, ast.Constant) and isinstance(value.value, str | int | float | bool | type(None))
