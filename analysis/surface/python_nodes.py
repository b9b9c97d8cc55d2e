"""What single syntax nodes of a Python file say, for the comparison of its two versions (python.py): a
default's value, a name, a function's parameters and shape, the exceptions it raises and the guards that end
it early, the environment variables, deprecations and routes a call declares.

Pure functions of `ast` nodes and source text, and the records of a definition, a parameter and a field
that call them lazily: no state of the walk, no comparison.

Over 400 lines because each reader is small and they are many: split further, every group would import
the others' name and literal helpers.
"""

from __future__ import annotations

import ast
import hashlib
import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from analysis.models import SurfaceKind
from analysis.surface.blanked_bodies import Blanked, first_line

_SHOWN = 120  # characters of a value or condition kept in a fact
# What an environment variable's name looks like (native_knobs.py reads them too).
ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{3,}[0-9]*")
_SWITCH_WORDS = frozenset(
    {
        "enable",
        "enabled",
        "disable",
        "disabled",
        "use",
        "supports",
        "support",
        "supported",
        "allow",
        "allowed",
    }
)
_MODEL_BASES = frozenset({"BaseModel", "BaseSettings", "SQLModel", "RootModel", "BaseConfig"})
# Python's own special names (the data model's protocol): implementing one is no new API. Any other dunder
# a package defines is a hook of its own that users write or call (`__myframework_on_complete__`).
_BUILTIN_TYPES = (
    object,
    type,
    int,
    float,
    complex,
    str,
    bytes,
    list,
    dict,
    set,
    tuple,
    slice,
    property,
    BaseException,
)
_PROTOCOL_DUNDERS = frozenset(
    name for t in _BUILTIN_TYPES for name in dir(t) if name.startswith("__") and name.endswith("__")
) | frozenset(
    [
        "__enter__",
        "__exit__",
        "__aenter__",
        "__aexit__",
        "__await__",
        "__aiter__",
        "__anext__",
        "__iter__",
        "__next__",
        "__get__",
        "__set__",
        "__delete__",
        "__set_name__",
        "__missing__",
        "__post_init__",
        "__length_hint__",
        "__fspath__",
        "__copy__",
        "__deepcopy__",
        "__class_getitem__",
        "__init_subclass__",
        "__instancecheck__",
        "__subclasscheck__",
        "__prepare__",
        "__mro_entries__",
        "__buffer__",
        "__release_buffer__",
        "__getattr__",
        "__dir__",
        "__call__",
        "__del__",
        "__slots__",
        "__match_args__",
        "__all__",
        "__version__",
        "__bool__",
        "__index__",
        "__round__",
        "__trunc__",
        "__floor__",
        "__ceil__",
        "__getstate__",
    ]
)
_FIELD_CALLS = frozenset({"Field", "field", "ib", "attrib", "PrivateAttr"})
_DEPRECATION_CATEGORIES = ("DeprecationWarning", "FutureWarning", "PendingDeprecationWarning")
_LOG_METHODS = frozenset({"warning", "warn", "warning_once", "info", "info_once", "error"})
_ROUTE_METHODS = {
    "get": "GET",
    "post": "POST",
    "put": "PUT",
    "delete": "DELETE",
    "patch": "PATCH",
    "head": "HEAD",
    "options": "OPTIONS",
    "websocket": "WS",
    "route": "GET",
    "api_route": "GET",
}
_WORD_ALTERNATION = re.compile(r"[A-Za-z_]+(?:\|[A-Za-z_]+)*")


class _Param:
    """A parameter; its annotation is dumped only when a comparison pairs parameters (a changed signature)."""

    __slots__ = ("_annotation", "_arg", "default", "kind", "name")

    def __init__(self, name: str, kind: str, default: ast.expr | None, arg: ast.arg) -> None:
        self.name, self.kind, self.default, self._arg = name, kind, default, arg  # kind: posonly | pos | ...
        self._annotation: str | None = None

    @property
    def annotation(self) -> str:
        if self._annotation is None:
            self._annotation = _ann(self._arg)
        return self._annotation

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Param):
            return NotImplemented
        return (self.name, self.kind, self.default, self.annotation) == (
            other.name,
            other.kind,
            other.default,
            other.annotation,
        )

    __hash__ = None  # type: ignore[assignment]


class _Def:
    """A definition; what is costly to find out (shape, strings, raises, guards) is computed only when a
    comparison needs it: most definitions of a touched file are unchanged and never need it."""

    def __init__(
        self,
        qualname: str,
        kind: str,  # function | class | constant | import
        line: int,
        public: bool,
        *,
        node: ast.AST | None = None,
        signature: tuple[ast.arguments, bool] | None = None,  # (arguments, method): params when asked
        value: ast.expr | None = None,  # constants
        lines: Sequence[str] | None = None,  # the version's lines, for `source`
        origin: str = "",  # imports: where the name comes from
        blanked: Blanked | None = None,  # the version's blanked bodies, which may be in node
    ) -> None:
        self.qualname, self.kind, self.line, self.public = qualname, kind, line, public
        self.node, self.signature, self.value, self.origin = node, signature, value, origin
        self.lines, self.blanked = lines, blanked

    @cached_property
    def source(self) -> str:
        """Its text, decorators included: an identical text cannot have changed. Joined only when asked: only
        a definition present in both versions is compared."""
        node = self.node
        if self.lines is None or not isinstance(node, ast.stmt):
            return ""
        return "\n".join(self.lines[first_line(node) - 1 : node.end_lineno or node.lineno])

    @property
    def whole(self) -> ast.AST | None:
        """The node with its bodies (analysis/surface/blanked_bodies.py)."""
        return self.blanked.whole(self.node) if self.blanked is not None else self.node

    @cached_property
    def params(self) -> list[_Param]:
        """Only a changed function's parameters are compared: most are never needed."""
        if self.signature is None:
            return []
        args, method = self.signature
        node = self.whole  # a blanked function's head is `def name():` (blanked_bodies.py): its own is here
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
        return _params(args, method=method)

    @cached_property
    def shape(self) -> str:
        if self.kind == "import":
            return self.origin
        if self.kind == "constant":
            return _dump(self.value) if self.value is not None else ""
        node = self.whole
        return _shape(node) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else ""

    @cached_property
    def strings(self) -> frozenset[str]:  # string literals in the definition (aliases of old names)
        return frozenset(_strings(self.whole)) if self.node is not None else frozenset()

    @cached_property
    def exits(self) -> tuple[dict[str, int], dict[str, tuple[int, str]]]:
        node = self.whole
        return _exits(node) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else ({}, {})

    @property
    def raises(self) -> dict[str, int]:
        return self.exits[0]

    @property
    def guards(self) -> dict[str, tuple[int, str]]:
        return self.exits[1]

    @cached_property
    def returns_switch(self) -> bool | None:  # a supports_*/is_*_enabled answer
        node = self.whole
        return _switch_answer(node) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None


@dataclass(slots=True)
class _Field:
    name: str
    line: int
    annotation_node: ast.expr
    default: ast.expr | None
    deprecated: bool = False

    @property
    def annotation(self) -> str:  # dumped only when a renamed field is paired
        return _dump(self.annotation_node)

    @property
    def annotation_text(self) -> str:  # the annotation as written; only a configuration's are read
        return ast.unparse(self.annotation_node)


# --- values --------------------------------------------------------------------------------------------


def same_value(a: ast.expr | None, b: ast.expr | None) -> bool:
    """Whether two default expressions give users the same value: literals by value, with a number and
    its string spelling ("0.0" for 0.0, as argparse's `type=float` reads it) the same, and a flag and its
    number or spelling (`1` or "true" for True: an int option retyped bool); others by syntax."""
    if a is None or b is None:
        return a is None and b is None
    va, ok_a = _literal(a)
    vb, ok_b = _literal(b)
    if ok_a and ok_b:
        return _same_literal(va, vb)
    return _dump(a) == _dump(b)


def _same_literal(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        if isinstance(a, bool) and isinstance(b, bool):
            return a == b
        other, flag = (b, a) if isinstance(a, bool) else (a, b)
        if isinstance(other, int | float):
            return other == flag  # 1 is True and 0 is False to every `if` that reads it
        return isinstance(other, str) and other.strip().lower() in (
            ("1", "true", "yes", "on") if flag else ("0", "false", "no", "off")
        )
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, str) and isinstance(b, int | float):
        a, b = b, a
    if isinstance(a, int | float) and isinstance(b, str):
        try:
            return float(b) == a
        except ValueError:
            return False
    return type(a) is type(b) and a == b


def _literal(node: ast.expr) -> tuple[object, bool]:
    try:
        return ast.literal_eval(node), True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None, False


def _scalar(node: ast.expr) -> bool:
    value, ok = _literal(node)
    return ok and isinstance(value, bool | int | float | str)


def _default_kind(name: str, old: ast.expr, new: ast.expr) -> SurfaceKind:
    """A switch-named setting whose boolean value flipped is a switch; anything else a default."""
    va, ok_a = _literal(old)
    vb, ok_b = _literal(new)
    if ok_a and ok_b and is_switch(name) and _boolish(va) is not None and _boolish(vb) is not None:
        return SurfaceKind.SWITCH_FLIPPED
    return SurfaceKind.DEFAULT_CHANGED


def _boolish(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in (
        "1",
        "true",
        "yes",
        "on",
        "0",
        "false",
        "no",
        "off",
    ):
        return value.strip().lower() in ("1", "true", "yes", "on")
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


def is_switch(name: str) -> bool:
    """A name that says it turns something on or off (`enable_x`, `--use-cache`, `X_DISABLED`)."""
    words = set(re.split(r"[_\-\s]+", name.strip("-").lower()))
    return bool(words & _SWITCH_WORDS)


def _shown(node: ast.expr) -> str:
    text = ast.unparse(node)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _dump(node: ast.AST) -> str:
    return ast.dump(node, annotate_fields=False, include_attributes=False)


def _similar(a: str, b: str) -> bool:
    wa, wb = set(re.findall(r"\w+", a.lower())), set(re.findall(r"\w+", b.lower()))
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= 0.6


# --- syntax helpers -------------------------------------------------------------------------------------


def abstract_method(node: ast.AST | None) -> bool:
    """A method its class leaves to subclasses: `@abstractmethod`, or a body (past its docstring) that only
    raises NotImplementedError."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    if any(_name_of(d).rpartition(".")[2] == "abstractmethod" for d in node.decorator_list):
        return True
    body = node.body[1:] if node.body and _docstring(node.body[0]) else node.body
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return _name_of(exc) == "NotImplementedError"


def _docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _marked_deprecated(where: _Def) -> bool:
    node = where.node
    decorators = (
        node.decorator_list if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else []
    )
    return any(_name_of(d) == "deprecated" for d in decorators)


def _passed_params(where: _Def, line: int) -> list[str]:
    """The parameters whose being passed guards `line` in the function (`if a or b:`, `if a is not None:`,
    `if not a:`), in the order the guard names them; a test of a parameter's value (`url.startswith(...)`,
    `mode == "fast"`) is not about its being passed, and names none."""
    node = where.whole
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return []
    params = {p.name for p in where.params}
    found: list[str] = []
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.If)
            and sub.body
            and sub.body[0].lineno <= line <= (sub.body[-1].end_lineno or 0)
        ):
            found += [n for n in _truth_names(sub.test) if n in params and n not in found]
    return found


def _truth_names(test: ast.expr) -> list[str]:
    if isinstance(test, ast.Name):
        return [test.id]
    if isinstance(test, ast.BoolOp):
        return [n for value in test.values for n in _truth_names(value)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _truth_names(test.operand)
    if (
        isinstance(test, ast.Compare)
        and all(isinstance(op, ast.Is | ast.IsNot) for op in test.ops)
        and all(isinstance(c, ast.Constant) and c.value is None for c in test.comparators)
    ):
        return _truth_names(test.left)
    return []


def _name_of(node: ast.AST | None) -> str:
    """The last name of a call target or decorator: `a.b.c(...)` → "c"."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript):
        return _name_of(node.value)
    return ""


def branch_blocks(stmt: ast.If | ast.Try) -> Iterable[list[ast.stmt]]:
    if isinstance(stmt, ast.If):
        return (stmt.body, stmt.orelse)
    return (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody)


def _literal_all(tree: ast.Module) -> set[str] | None:
    names: set[str] | None = None
    for stmt in tree.body:
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else [stmt.target]
            if isinstance(stmt, ast.AnnAssign | ast.AugAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and stmt.value is not None:
            value, ok = _literal(stmt.value)
            if not ok or not isinstance(value, list | tuple):
                return None  # computed: not ours to guess
            names = (names or set()) | {v for v in value if isinstance(v, str)}
    return names


def _params(args: ast.arguments, *, method: bool) -> list[_Param]:
    out: list[_Param] = []
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (a, d) in enumerate(zip(positional, defaults, strict=True)):
        if method and i == 0 and a.arg in ("self", "cls", "mcs", "metacls"):
            continue
        out.append(_Param(a.arg, "posonly" if i < len(args.posonlyargs) else "pos", d, a))
    if args.vararg:
        out.append(_Param(args.vararg.arg, "vararg", None, args.vararg))
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append(_Param(a.arg, "kwonly", d, a))
    if args.kwarg:
        out.append(_Param(args.kwarg.arg, "kwarg", None, args.kwarg))
    return out


def _ann(arg: ast.arg) -> str:
    return _dump(arg.annotation) if arg.annotation is not None else ""


def _default_of(param: ast.arg, args: ast.arguments) -> ast.expr | None:
    positional = [*args.posonlyargs, *args.args]
    if param in positional:
        index = positional.index(param) - (len(positional) - len(args.defaults))
        return args.defaults[index] if index >= 0 else None
    if param in args.kwonlyargs:
        return args.kw_defaults[args.kwonlyargs.index(param)]
    return None


def _position(d: _Def, p: _Param) -> int:
    return d.params.index(p)


def _positions_shift(old: _Def, new: _Def, common: list[str], stated: frozenset[str] = frozenset()) -> bool:
    """A new positional parameter inserted before existing ones shifts what callers pass by position; so does
    one removed before them, unless each removed one is `stated` as a removal that breaks callers (`f(cls, x)`
    → `f(x)`: the removal says it). One that `**kwargs` still takes by name breaks only positional callers:
    the shift says it."""
    pos_old = [p.name for p in old.params if p.kind in ("posonly", "pos")]
    pos_new = [p.name for p in new.params if p.kind in ("posonly", "pos")]
    for name in common:
        was, now = pos_old.index(name), pos_new.index(name)
        if now > was or (now < was and not all(p in stated for p in pos_old[:was] if p not in pos_new)):
            return True
    return False


def _param_list(d: _Def) -> str:
    return ", ".join(p.name for p in d.params if p.kind in ("posonly", "pos"))[:_SHOWN]


def _shape(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """The definition without its name and docstring: equal shapes under two names are a rename."""
    body = list(node.body)
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    parts = [_dump(s) for s in body]
    if isinstance(node, ast.ClassDef):
        parts.insert(0, "|".join(_dump(b) for b in node.bases))
    else:
        parts.insert(0, _dump(node.args))
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=12).hexdigest()


def _strings(node: ast.AST) -> set[str]:
    """Every string constant under node shorter than 200 characters (asked of whole modules and classes: a
    walk without ast.walk's generator per node)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Constant):
            if isinstance(n.value, str) and len(n.value) < 200:
                out.add(n.value)
            continue
        for name in n._fields:
            value = getattr(n, name, None)
            if isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
    return out


# What a guard that keeps a path from running says: "not supported", "not implemented", "only … with",
# "requires …", "disabled": lifting it lets users take that path.
_UNSUPPORTED = re.compile(
    r"not (?:yet )?(?:supported|implemented|available|allowed|compatible)|unsupported|only supported|only"
    r" (?:works|available)|is disabled|cannot be used|can't be used|incompatible|requires?\b",
    re.IGNORECASE,
)


def _exits(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[dict[str, int], dict[str, tuple[int, str]]]:
    """The exceptions a function raises itself (by name: the first line of each), and its guards: exits that
    keep a path from running for some users: `if cond: raise NotImplementedError` or a raise or assert whose
    message says the path is unsupported, and `if cond: return` when the condition names a switch. Guards are
    keyed by the condition and the exit, so a guard that only moved is the same guard. One walk for both: a
    changed function is asked for both."""
    raises: dict[str, int] = {}
    guards: dict[str, tuple[int, str]] = {}
    for n in _own_statements(node):
        if isinstance(n, ast.Raise):
            if n.exc is not None:
                name = _name_of(n.exc)
                if name[:1].isupper() and name not in raises:
                    raises[name] = n.lineno
        elif isinstance(n, ast.Assert):
            if n.msg is not None and _UNSUPPORTED.search(_message_text(n.msg)):
                guards["assert:" + _dump(n.test)] = (n.lineno, _shown(n.test))
        elif isinstance(n, ast.If) and n.body and len(n.body) <= 3:
            last = n.body[-1]
            if isinstance(last, ast.Raise) and last.exc is not None and _refuses(last.exc):
                guards[f"raise:{_name_of(last.exc)}:" + _dump(n.test)] = (n.lineno, _shown(n.test))
            elif isinstance(last, ast.Return) and any(is_switch(_name_of(x)) for x in ast.walk(n.test)):
                guards["return:" + _dump(n.test)] = (n.lineno, _shown(n.test))
    return raises, guards


def _refuses(exc: ast.expr) -> bool:
    """A raised exception that refuses a path rather than reporting bad input: NotImplementedError, or a
    message saying the path is not supported."""
    if _name_of(exc) == "NotImplementedError":
        return True
    return isinstance(exc, ast.Call) and any(_UNSUPPORTED.search(_message_text(a)) for a in exc.args[:1])


def _message_text(node: ast.expr) -> str:
    """The literal text of a message: a string, an f-string's constant parts, concatenations."""
    return " ".join(
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )


def _own_statements(node: ast.AST) -> Iterable[ast.AST]:
    """The statements of a function's own body (with their except and case clauses), not those of functions
    or classes nested in it; in the order a walk of every node meets them. Expressions hold no statements:
    they are not walked (most of a body's nodes)."""
    stack = _inner_statements(node)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        yield n
        stack.extend(_inner_statements(n))


def _inner_statements(node: ast.AST) -> list[ast.AST]:
    """The statements (and except/case clauses) directly under a node, in field order."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            out.extend(v for v in value if isinstance(v, ast.stmt | ast.excepthandler | ast.match_case))
    return out


def _switch_answer(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool | None:
    """`def supports_x(self): return True`: a capability switch stated as a method."""
    if not is_switch(node.name) and not node.name.startswith(("is_", "can_", "has_")):
        return None
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Constant):
        value = body[0].value.value
        return value if isinstance(value, bool) else None
    return None


def _camel_words(name: str) -> list[str]:
    return re.findall(r"[A-Z][a-z]+|[A-Z]+(?![a-z])", name)


def _is_model(node: ast.ClassDef) -> bool:
    """A validation model: it takes data from outside (requests, files, settings), so its fields are config."""
    return any(_name_of(b) in _MODEL_BASES for b in node.bases)


def _public_name(name: str) -> bool:
    """A member name users may call: not underscore-private, and not one of Python's protocol dunders."""
    if name.startswith("__") and name.endswith("__"):
        return name not in _PROTOCOL_DUNDERS or name in ("__init__", "__call__", "__new__")
    return not name.startswith("_")


def _is_classvar(annotation: ast.expr) -> bool:
    return _name_of(annotation) == "ClassVar"


def _field(name: str, node: ast.AnnAssign) -> _Field:
    value = node.value
    default: ast.expr | None = value
    deprecated = False
    if isinstance(value, ast.Call) and _name_of(value.func) in _FIELD_CALLS:
        default = (
            _keyword(value, "default") or _keyword(value, "default_factory") or _keyword(value, "factory")
        )
        if default is None and value.args:
            default = value.args[0]  # Field(0.0), field(...) positional default
        deprecated = _truthy(_keyword(value, "deprecated"))
    return _Field(name, node.lineno, node.annotation, default, deprecated)


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _truthy(node: ast.expr | None) -> bool:
    if node is None:
        return False
    value, ok = _literal(node)
    return bool(value) if ok else True


def _string_args(call: ast.Call) -> list[str]:
    return [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]


def _is_str(node: ast.expr, prefix: str) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(prefix)


def _const_str(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _first_string(call: ast.Call) -> str:
    for a in call.args:
        text = _const_str(a)
        if text is None and isinstance(a, ast.JoinedStr):  # an f-string: its holes shown as {expression}
            text = "".join(
                str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
                for v in a.values
                if isinstance(v, ast.Constant | ast.FormattedValue)
            )
        if text:
            return " ".join(text.split())
    return ""


def _is_environ(node: ast.AST) -> bool:
    return _name_of(node) == "environ"


def _env_read(call: ast.Call, name: str) -> tuple[str, ast.expr | None] | None:
    """("APP_X", default) for getenv("APP_X", d), os.environ.get("APP_X", d), env.bool("APP_X"), ..."""
    func = call.func
    reads = (
        "env" in name.lower()
        or (name in ("get", "pop") and isinstance(func, ast.Attribute) and _is_environ(func.value))
        or (
            isinstance(func, ast.Attribute)
            and "env" in _name_of(func.value).lower()
            and name in ("get", "str", "int", "bool", "float", "list", "json")
        )
    )
    if not reads or not call.args:
        return None
    key = _const_str(call.args[0])
    if key is None or not ENV_NAME.fullmatch(key):
        return None
    default = call.args[1] if len(call.args) > 1 else _keyword(call, "default")
    return key, default


def _deprecation(call: ast.Call, name: str) -> str | None:
    """The message of a deprecation warning raised or logged by this call, else None."""
    if (
        name == "warn"
        and isinstance(call.func, ast.Attribute | ast.Name)
        and _name_of(getattr(call.func, "value", None)) in ("warnings", "")
    ):
        category = call.args[1] if len(call.args) > 1 else _keyword(call, "category")
        if category is not None and (
            "Deprecat" in _name_of(category) or _name_of(category) in _DEPRECATION_CATEGORIES
        ):
            return _first_string(call)
        return None
    if name in ("deprecated", "deprecate", "warn_deprecated", "deprecation_warning"):
        return _first_string(call)
    if name in _LOG_METHODS and isinstance(call.func, ast.Attribute):
        message = _first_string(call)
        if "deprecat" in message.lower():
            return message
    return None


def _route_of(deco: ast.Call) -> str | None:
    method = _ROUTE_METHODS.get(_name_of(deco.func))
    path = _const_str(deco.args[0]) if deco.args else _const_str(_keyword(deco, "path") or ast.Constant(None))
    if method is None or path is None or not path.startswith("/"):
        return None
    if _name_of(deco.func) in ("route", "api_route"):
        methods = _keyword(deco, "methods")
        listed, ok = _literal(methods) if methods is not None else (None, False)
        if ok and isinstance(listed, list | tuple | set) and listed:
            return ",".join(sorted(str(m).upper() for m in listed)) + " " + path
    return f"{method} {path}"


def _route_call(call: ast.Call, name: str) -> str | None:
    strings = _string_args(call)
    paths = [s for s in strings if s.startswith("/")]
    if not paths:
        return None
    path = paths[0]
    verbs = [
        s.upper()
        for s in strings
        if s.upper() in ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "*")
    ]
    if name.startswith("add_") and name[4:].upper() in ("GET", "POST", "PUT", "DELETE", "PATCH"):
        verbs = [name[4:].upper()]
    methods = _keyword(call, "methods")
    listed, ok = _literal(methods) if methods is not None else (None, False)
    if ok and isinstance(listed, list | tuple | set) and listed:
        verbs = [str(m).upper() for m in listed]
    if "websocket" in name.lower():
        verbs = ["WS"]
    return f"{','.join(sorted(verbs)) or '*'} {path}"


def _scoped(scope: str, node: ast.AST) -> str:
    """The scope inside node: a function or class adds its name."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return f"{scope}.{node.name}" if scope else node.name
    return scope


def _lines_matching(text: str, pattern: re.Pattern[str]) -> list[int]:
    """The indexes of the lines ("\\n"-separated) where pattern matches, one search per such line."""
    out: list[int] = []
    line = pos = 0
    while (match := pattern.search(text, pos)) is not None:
        start = match.start()
        line += text.count("\n", pos, start)
        out.append(line)
        pos = text.find("\n", start) + 1
        if not pos:
            break
        line += 1
    return out


@lru_cache(maxsize=8)
def _literal_words(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """The words of a pattern that is only words (`a|b|c`, no other syntax or flag than IGNORECASE), less
    those that contain another (a line with `add_argument` has `add_`); None for any other pattern."""
    if pattern.flags & ~(re.IGNORECASE | re.UNICODE) or not _WORD_ALTERNATION.fullmatch(pattern.pattern):
        return None
    words = pattern.pattern.split("|")
    if pattern.flags & re.IGNORECASE:
        words = [w.lower() for w in words]
    return tuple(dict.fromkeys(w for w in words if not any(o != w and o in w for o in words)))


def _has_word(lines: list[int], node: ast.AST) -> bool:
    """Whether the node's text (Collector._source: decorators included) has one of the lines (sorted)."""
    start = first_line(node)
    end = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
    i = bisect_left(lines, start - 1)
    return i < len(lines) and lines[i] <= end - 1


def _outer_kept(qual: str, old: dict[str, _Def], new: dict[str, _Def]) -> bool:
    """A member counts on its own only while its class stays public and defined here: a removed class is one
    removal, and a class moved to another module and imported back (re-exported) takes its members along."""
    return _outers_public(qual, new) and not _outer_imported(qual, new)


def _outer_imported(qual: str, defs: dict[str, _Def]) -> bool:
    parts = qual.split(".")
    return any(
        (d := defs.get(".".join(parts[:i]))) is not None and d.kind == "import" for i in range(1, len(parts))
    )


def _outer_new(qual: str, old: dict[str, _Def], new: dict[str, _Def]) -> bool:
    """A member counts on its own only when its class was public before: a new (or newly exported)
    class is one addition."""
    return _outers_public(qual, old)


def _outers_public(qual: str, defs: dict[str, _Def]) -> bool:
    parts = qual.split(".")
    outers = (defs.get(".".join(parts[:i])) for i in range(1, len(parts)))
    return all(d is not None and d.public for d in outers)
