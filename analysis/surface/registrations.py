"""Names a module registers for users to select: what a plugin or a framework looks up by a string key.

Two shapes, decided by syntax alone and never by one project's names:
- a registration call whose callee says so (`register*`, or `add_*` given the thing it adds) with a string
  key first: `register_model("foo", FooModel)`, `Registry.register("foo")(cls)`, `@register("foo")`,
  `add_backend("foo", FooBackend)`; at module level, as a decorator of a module-level definition, or inside
  a function whose name says it registers or plugs in (a plugin's `register()` entry point). A call on
  `self` or `cls` registers on an instance (a buffer, a submodule, a hook), not a name users pick;
- a module-level registry mapping: a dict literal of string keys to classes, callables or import paths
  (`_BACKENDS = {"foo": FooBackend}`, `MODELS = {"foo": ("pkg.mod", "Cls")}`).

A key gone from such a place breaks the users who select it; a key new is a capability. Which registry holds
a key is shown (`register_model("foo")`, `MODELS["foo"]`) but a key registered anywhere else in the commit is
still served (analysis/surface/pairing.py compares the keys: `registered_key`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

# A key users select: a short name without blanks, not an option (`-x`), a route (`/x`) or a sentence.
_KEY = re.compile(r"[A-Za-z0-9_][\w.:+-]{0,79}")
# `register`, `register_model`, `_register_backend`; not `unregister`, nor a hook or an instance's parts.
_REGISTER = re.compile(r"_?register(?:_\w+)?")
_NOT_NAMES = re.compile(r"hook|buffer|parameter|callback|handler|signal|atexit|finalizer|listener|event")
_ADD = re.compile(r"_?add_[a-z]\w*")
# Callees that take a string first but add no selectable name (argparse, logging, an HTTP route, a tokenizer).
_ADD_OTHER = re.compile(
    r"argument|option|route|url|get|post|put|patch|delete|head|token|handler|header|section"
)
# The functions in which a registration is a plugin's own: `register()`, `register_models()`, `load_plugin()`.
_REGISTERING_SCOPE = re.compile(r"regist|plugin", re.IGNORECASE)
_SHOWN = re.compile(r"""\(["'](.*)["']\)|\[["'](.*)["']\]""")

_IMPORT_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_]\w*)?|[A-Za-z_]\w*:[A-Za-z_]\w*")
_BUILTINS = frozenset(
    {"int", "str", "float", "bool", "bytes", "list", "dict", "set", "tuple", "object", "type"}
)


def registered_key(name: str) -> str:
    """The key of a registration as `registration_call` and `registry_keys` name it: `f("foo")` → `foo`."""
    found = _SHOWN.search(name)
    return (found.group(1) if found.group(1) is not None else found.group(2)) if found else name


def registering_scope(scope: str) -> bool:
    """Whether registrations made in this scope (`""`: the module, else `Class.func` qualnames) are the
    module's own: at module level, or in a function whose name says it registers or plugs in."""
    return not scope or _REGISTERING_SCOPE.search(scope.rsplit(".", 1)[-1]) is not None


def registration_call(call: ast.Call, decorator: bool = False) -> str | None:
    """`callee("key")` when this call registers a name users select (see the module's docstring), else None.
    `decorator`: the call decorates a definition (which is then the thing registered)."""
    func = call.func
    if isinstance(func, ast.Attribute):
        receiver = func.value
        if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
            return None
        if (
            isinstance(receiver, ast.Call)
            and isinstance(receiver.func, ast.Name)
            and receiver.func.id == "super"
        ):
            return None
        name = func.attr
    elif isinstance(func, ast.Name):
        name = func.id
    else:
        return None
    if _REGISTER.fullmatch(name):
        if _NOT_NAMES.search(name):
            return None
    elif _ADD.fullmatch(name):
        # what is added must be given too (`add_backend("foo", Foo)`), or the call decorates it
        if _ADD_OTHER.search(name) or (len(call.args) < 2 and not decorator):
            return None
    else:
        return None
    key = _key(call)
    return f'{name}("{key}")' if key is not None else None


def _key(call: ast.Call) -> str | None:
    first = (
        call.args[0]
        if call.args
        else next((k.value for k in call.keywords if k.arg in ("name", "key")), None)
    )
    if isinstance(first, ast.Constant) and isinstance(first.value, str) and _KEY.fullmatch(first.value):
        return first.value
    return None


@dataclass(frozen=True, slots=True)
class Mapping:
    """A module-level dict literal of string keys: its keys (with their lines) and whether every value names
    code (a class, callable or import path: a registry) rather than data (a number, a message, a table)."""

    keys: dict[str, int]
    registry: bool


def string_mapping(stmt: ast.stmt) -> tuple[str, Mapping] | None:
    """The name and keys a module-level statement assigns a dict literal of string keys to (None: it does
    not). A mapping is compared with itself in the other version by name: one whose values change from one
    form to another (functions to methods) is still the same registry."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        target, value = stmt.target, stmt.value
    else:
        return None
    if not isinstance(target, ast.Name) or not isinstance(value, ast.Dict) or not value.keys:
        return None
    keys: dict[str, int] = {}
    registry = True
    for key, item in zip(value.keys, value.values, strict=True):
        if key is None:  # `**OTHER`: its keys are OTHER's
            continue
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and _KEY.fullmatch(key.value)):
            return None
        registry = registry and _names_code(item)
        keys[key.value] = key.lineno
    return (target.id, Mapping(keys, registry)) if keys else None


def mapping_changes(
    old: dict[str, Mapping], new: dict[str, Mapping]
) -> tuple[dict[str, int], dict[str, int]]:
    """(`NAME["key"]` → line) of the keys registry mappings lost (old lines) and gained (new lines). A registry
    only in one version loses or gains all its keys: a table moved to another module, or registrations moved
    into a table, are paired by key across the commit (analysis/surface/pairing.py) and said by neither."""
    lost: dict[str, int] = {}
    gained: dict[str, int] = {}
    empty = Mapping({}, False)
    for name in old.keys() | new.keys():
        before, after = old.get(name, empty), new.get(name, empty)
        if not (before.registry or after.registry):
            continue
        lost |= {f'{name}["{k}"]': line for k, line in before.keys.items() if k not in after.keys}
        gained |= {f'{name}["{k}"]': line for k, line in after.keys.items() if k not in before.keys}
    return lost, gained


def key_aliases(stmt: ast.stmt) -> dict[str, str]:
    """`{"old": "new"}` entries of a module-level dict of strings to strings: an alias table, which keeps an old
    key working when it maps it to a key still registered."""
    value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
    if not isinstance(value, ast.Dict):
        return {}
    return {
        k.value: v.value
        for k, v in zip(value.keys, value.values, strict=True)
        if isinstance(k, ast.Constant)
        and isinstance(k.value, str)
        and isinstance(v, ast.Constant)
        and isinstance(v.value, str)
    }


def _names_code(node: ast.expr) -> bool:
    """A class or callable (`Foo`, `mod.Foo`, `make_foo`), an import path (`"pkg.mod.Foo"`, `"pkg.mod:Foo"`),
    or a (module, class) pair of strings (`("pkg.mod", "Foo")`, `("llama", "LlamaForCausalLM")`)."""
    if isinstance(node, ast.Name):
        return node.id not in _BUILTINS and _code_name(node.id)
    if isinstance(node, ast.Attribute):  # `mod.Foo`, `mod.make_foo`, `Foo.create`; not `mod.LIMIT`
        return _code_name(node.attr)
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and _IMPORT_PATH.fullmatch(node.value) is not None
    if isinstance(node, ast.Tuple) and len(node.elts) == 2:
        module, name = node.elts
        return (
            isinstance(module, ast.Constant)
            and isinstance(module.value, str)
            and re.fullmatch(r"[A-Za-z_][\w.]*", module.value) is not None
            and isinstance(name, ast.Constant)
            and isinstance(name.value, str)
            and _code_name(name.value)
        )
    return False


def _code_name(name: str) -> bool:
    """A class or function name (`Foo`, `make_foo`, `xLAMToolParser`), not an UPPER_CASE constant."""
    return name.isidentifier() and not name.isupper()
