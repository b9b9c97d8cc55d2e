"""What a setup.py's `packages=`, `package_dir=` and `py_modules=` spell when it computes them, read from its
syntax tree, never run.

Real build scripts of native and compiler projects rarely pass literals: `packages=list(get_packages())` from a
generator yielding `find_packages(where=...)` and f-strings, `packages=PACKAGES` assembled above with
`append`/`extend`, `find_packages(exclude=EXCLUDES)`, `find_packages(...) + [...]`, `package_dir=dict(...)`
of yielded pairs, `setup(**metadata)`. This module follows a name or a same-file function to its literal parts
where the code is simple (literals, `+`, `append`/`extend`/`+=`, loops and comprehensions over a literal list,
f-strings and string `+` over such a loop's names, `return`/`yield`/`yield from`, `list()`/`sorted()`), and says
`computed` where some part is not (a loop over `os.listdir`, a value read from the environment): packaging.py
then falls back to the folders setuptools would most plausibly ship.

Scopes are not told apart (a name's bindings anywhere in the file count together): build scripts bind their
package lists once, and a name bound only by unpacking a call's result (`a, packages = configure()`) is read
through its other bindings, the function that builds it.

Over 400 lines because it is one small evaluator: lists, single strings and package_dir mappings are read by
the same bindings, each shape needing the other two (an f-string item over a loop name over a list).
"""

from __future__ import annotations

import ast
import itertools
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from analysis.surface.packaging_texts import MAX_PACKAGING_CHARS, FindPackages, call_name, keyword_value
from analysis.surface.shared_parse import parse as parse_python

_MAX_DEPTH = 30  # names bound to names bound to ...; a cycle (`a = a + [...]`) ends earlier, on its own node
_MAX_SPELLINGS = 256  # the product of an f-string's loop names: beyond it the value counts as computed
_FINDERS = ("find_packages", "find_namespace_packages")
_PASS_THROUGH = ("list", "tuple", "sorted", "set", "frozenset", "dict")


@dataclass(frozen=True, slots=True)
class Spelled:
    """What an expression of strings spells: the literal items, the find_packages requests among them, and
    whether some part was computed (then the items are a part only)."""

    names: tuple[str, ...] = ()
    finds: tuple[FindPackages, ...] = ()
    computed: bool = False

    def __add__(self, other: Spelled) -> Spelled:
        return Spelled(
            tuple(dict.fromkeys((*self.names, *other.names))),
            (*self.finds, *other.finds),
            self.computed or other.computed,
        )


_COMPUTED = Spelled(computed=True)


@dataclass(frozen=True, slots=True)
class SetupPackages:
    """What setup(...) says of the Python packages it ships; None fields where it does not say."""

    packages: Spelled | None = None
    py_modules: Spelled | None = None
    package_dir: dict[str, str] = field(default_factory=dict)
    package_dir_computed: bool = False  # some mapping's name or folder could not be read


@lru_cache(maxsize=64)
def setup_py_packages(text: str | None) -> SetupPackages | None:
    """What setup.py's `packages=`, `py_modules=` and `package_dir=` spell; None when there is no setup(...)
    call or the text does not parse."""
    if not text or len(text) > MAX_PACKAGING_CHARS:
        return None
    try:
        tree = parse_python(text.removeprefix("\ufeff"))
    except (SyntaxError, ValueError, RecursionError):
        return None
    reader = _Reader(tree)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and call_name(n) == "setup" and n.keywords]
    if not calls:
        return None
    call = max(calls, key=lambda c: len(c.keywords))  # setup(...) itself, not another object's `.setup()`
    keywords = reader.keywords(call)
    packages = reader.items(keywords["packages"]) if "packages" in keywords else None
    modules = reader.items(keywords["py_modules"]) if "py_modules" in keywords else None
    mapping, computed = reader.mapping(keywords["package_dir"]) if "package_dir" in keywords else ({}, False)
    return SetupPackages(packages, modules, mapping, computed)


class _Reader:
    """One setup.py's bindings: every assignment, augmented assignment, `append`/`extend` call, loop target and
    function body, by name."""

    def __init__(self, tree: ast.Module) -> None:
        self.values: dict[str, list[ast.expr]] = defaultdict(
            list
        )  # name = expr; name += expr; name.extend(expr)
        self.items_of: dict[str, list[ast.expr]] = defaultdict(list)  # `for name in expr`: each item of expr
        self.elements: dict[str, list[ast.expr]] = defaultdict(
            list
        )  # name.append(expr), name.insert(i, expr)
        self.functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = defaultdict(list)
        self.active: set[int] = set()  # nodes being read: a cycle reads as nothing more
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions[node.name].append(node)
            elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    self._bind(target, node.value)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                self.values[node.target.id].append(node.value)
            elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
                self._bind_loop(node.target, node.iter)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                if isinstance(owner, ast.Name) and node.args:
                    if node.func.attr == "append":
                        self.elements[owner.id].append(node.args[0])
                    elif node.func.attr == "insert" and len(node.args) > 1:
                        self.elements[owner.id].append(node.args[1])
                    elif node.func.attr == "extend":
                        self.values[owner.id].append(node.args[0])

    def _bind(self, target: ast.expr, value: ast.expr) -> None:
        # a target unpacking a call's result (`a, packages = configure()`) binds nothing here: the name is read
        # through its other bindings, if any
        if isinstance(target, ast.Name):
            self.values[target.id].append(value)
        elif (
            isinstance(target, ast.Tuple | ast.List)
            and isinstance(value, ast.Tuple | ast.List)
            and len(value.elts) == len(target.elts)
        ):
            for t, v in zip(target.elts, value.elts, strict=True):
                self._bind(t, v)

    def _bind_loop(self, target: ast.expr, iterable: ast.expr) -> None:
        if isinstance(target, ast.Name):  # `for a, b in pairs`: the parts of each item are not followed
            self.items_of[target.id].append(iterable)

    # --- setup(...)'s keywords ---------------------------------------------------------------------------

    def keywords(self, call: ast.Call) -> dict[str, ast.expr]:
        """setup(...)'s keywords, those of a `**metadata` dict literal or `dict(...)` call bound above with them."""
        out: dict[str, ast.expr] = {}
        for kw in call.keywords:
            if kw.arg is not None:
                out[kw.arg] = kw.value
            elif isinstance(kw.value, ast.Name):
                for value in self.values.get(kw.value.id, []):
                    out.update({k: v for k, v in _dict_entries(value) if k not in out})
            else:
                out.update({k: v for k, v in _dict_entries(kw.value) if k not in out})
        return out

    # --- lists of strings -------------------------------------------------------------------------------

    def items(self, node: ast.expr | None, depth: int = 0) -> Spelled:
        """The items a list-valued expression holds."""
        return self._guarded(self._items, node, depth)

    def _guarded(
        self, read: Callable[[ast.expr, int], Spelled], node: ast.expr | None, depth: int
    ) -> Spelled:
        """`read` of a node, bounded: too deep reads as computed, a node already being read (a cycle) as
        nothing more."""
        if node is None or depth > _MAX_DEPTH:
            return _COMPUTED
        if id(node) in self.active:
            return Spelled()
        self.active.add(id(node))
        try:
            return read(node, depth + 1)
        finally:
            self.active.discard(id(node))

    def _items(self, node: ast.expr, depth: int) -> Spelled:
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            out = Spelled()
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    out += self.items(element.value, depth)
                else:
                    out += self.one(element, depth)
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.items(node.left, depth) + self.items(node.right, depth)
        if isinstance(node, ast.Name):
            return self._name_items(node.id, depth)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp) and len(node.generators) == 1:
            return self.one(node.elt, depth)  # its loop name reads the loop's items (a binding of its own)
        if isinstance(node, ast.Call):
            return self._call_items(node, depth)
        if isinstance(node, ast.Constant) and node.value is None:
            return Spelled()
        return _COMPUTED

    def _name_items(self, name: str, depth: int) -> Spelled:
        bound = self.values.get(name, []) + self.elements.get(name, [])
        if not bound:
            return _COMPUTED  # a parameter, a global from elsewhere: not ours to read
        out = Spelled()
        for value in self.values.get(name, []):
            out += self.items(value, depth)
        for element in self.elements.get(name, []):
            out += self.one(element, depth)
        return out

    def _call_items(self, call: ast.Call, depth: int) -> Spelled:
        name = call_name(call)
        if (
            name in _FINDERS and name not in self.functions
        ):  # a same-file `def find_packages` is the file's own
            return self._find(call, depth)
        if name in _PASS_THROUGH and isinstance(call.func, ast.Name) and len(call.args) == 1:
            return self.items(call.args[0], depth)
        if isinstance(call.func, ast.Name) and name in self.functions:
            out = Spelled()
            for function in self.functions[name]:
                out += self._returns(function, depth)
            return out
        return _COMPUTED

    def _returns(self, function: ast.FunctionDef | ast.AsyncFunctionDef, depth: int) -> Spelled:
        """What a function returns or yields (its own statements, not those of functions inside it)."""
        out = Spelled()
        found = False
        for node in _own_nodes(function):
            if isinstance(node, ast.Return) and node.value is not None:
                out += self.items(node.value, depth)
                found = True
            elif isinstance(node, ast.Yield) and node.value is not None:
                out += self.one(node.value, depth)
                found = True
            elif isinstance(node, ast.YieldFrom):
                out += self.items(node.value, depth)
                found = True
        return out if found else _COMPUTED

    def _find(self, call: ast.Call, depth: int) -> Spelled:
        """A find_packages(...) request; its `where` computed leaves the request unread."""
        where_node = keyword_value(call, "where") or (call.args[0] if call.args else None)
        where = self.one(where_node, depth) if where_node is not None else Spelled()
        include = self.items(
            keyword_value(call, "include") or (call.args[2] if len(call.args) > 2 else None), depth
        )
        exclude = self.items(
            keyword_value(call, "exclude") or (call.args[1] if len(call.args) > 1 else None), depth
        )
        if where.computed or len(where.names) > 1:
            return _COMPUTED
        if include.computed and not include.names:
            include = Spelled()  # none read: every package, as find_packages' default
        # an exclude list read in part leaves out what it names: the rest ships, as setuptools would
        return Spelled(
            finds=(FindPackages(where.names, include.names, exclude.names, call_name(call) == _FINDERS[1]),)
        )

    # --- single strings ---------------------------------------------------------------------------------

    def one(self, node: ast.expr | None, depth: int = 0) -> Spelled:
        """The strings a string-valued expression can be (several, for a loop name over a literal list)."""
        spelled = self._guarded(self._one, node, depth)
        if len(spelled.names) > _MAX_SPELLINGS:
            return _COMPUTED
        return spelled

    def _one(self, node: ast.expr, depth: int) -> Spelled:
        if isinstance(node, ast.Constant):
            return Spelled((node.value,)) if isinstance(node.value, str) else _COMPUTED
        if isinstance(node, ast.Name):
            if node.id in self.items_of:
                out = Spelled()
                for iterable in self.items_of[node.id]:
                    out += self.items(iterable, depth)
                return out
            values = self.values.get(node.id, [])
            if not values:
                return _COMPUTED
            out = Spelled()
            for value in values:
                out += self.one(value, depth)
            return out
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    if value.format_spec is not None or value.conversion not in (-1, ord("s")):
                        return _COMPUTED
                    parts.append(self.one(value.value, depth))
                else:
                    parts.append(self.one(value, depth))
            return _joined(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return _joined([self.one(node.left, depth), self.one(node.right, depth)])
        if (
            isinstance(node, ast.Call)
            and call_name(node) in _FINDERS
            and call_name(node) not in self.functions
        ):
            return self._find(
                node, depth
            )  # an item that is a whole find: `[*find_packages()]` spelled loosely
        return _COMPUTED

    # --- package_dir --------------------------------------------------------------------------------------

    def mapping(self, node: ast.expr, depth: int = 0) -> tuple[dict[str, str], bool]:
        """The (package, folder) pairs a package_dir expression spells, and whether some pair was computed."""
        if depth > _MAX_DEPTH or id(node) in self.active:
            return {}, depth > _MAX_DEPTH
        self.active.add(id(node))
        try:
            return self._mapping(node, depth + 1)
        finally:
            self.active.discard(id(node))

    def _mapping(self, node: ast.expr, depth: int) -> tuple[dict[str, str], bool]:
        if isinstance(node, ast.Dict):
            pairs = [(k, v) for k, v in zip(node.keys, node.values, strict=True)]
            out: dict[str, str] = {}
            computed = False
            for key, value in pairs:
                if key is None:  # {**other}
                    more, more_computed = self.mapping(value, depth)
                    out.update(more)
                    computed |= more_computed
                    continue
                computed |= self._pair(key, value, out, depth)
            return out, computed
        if isinstance(node, ast.Name):
            values = self.values.get(node.id, [])
            if not values:
                return {}, True
            out, computed = {}, False
            for value in values:
                more, more_computed = self.mapping(value, depth)
                out.update(more)
                computed |= more_computed
            return out, computed
        if isinstance(node, ast.Call):
            name = call_name(node)
            if name == "dict" and isinstance(node.func, ast.Name):
                out, computed = {}, False
                if node.args:
                    out, computed = self._pairs_of(node.args[0], depth)
                for kw in node.keywords:
                    if kw.arg is not None:
                        computed |= self._pair(ast.Constant(kw.arg), kw.value, out, depth)
                return out, computed
            if isinstance(node.func, ast.Name) and name in self.functions:
                out, computed, found = {}, False, False
                for function in self.functions[name]:
                    for inner in _own_nodes(function):
                        if isinstance(inner, ast.Return) and inner.value is not None:
                            more, more_computed = self.mapping(inner.value, depth)
                            out.update(more)
                            computed |= more_computed
                            found = True
                return (out, computed) if found else ({}, True)
        return {}, True

    def _pairs_of(self, node: ast.expr, depth: int) -> tuple[dict[str, str], bool]:
        """dict(x)'s argument: a mapping, a list of pairs, or a generator function yielding pairs."""
        if isinstance(node, ast.List | ast.Tuple):
            out: dict[str, str] = {}
            computed = False
            for element in node.elts:
                if isinstance(element, ast.Tuple) and len(element.elts) == 2:
                    computed |= self._pair(element.elts[0], element.elts[1], out, depth)
                else:
                    computed = True
            return out, computed
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions:
            out, computed = {}, False
            for function in self.functions[node.func.id]:
                for inner in _own_nodes(function):
                    if isinstance(inner, ast.Yield) and isinstance(inner.value, ast.Tuple):
                        if len(inner.value.elts) == 2:
                            computed |= self._pair(inner.value.elts[0], inner.value.elts[1], out, depth)
                        else:
                            computed = True
                    elif isinstance(inner, ast.Yield | ast.YieldFrom):
                        computed = True
            return out, computed
        return self.mapping(node, depth)

    def _pair(self, key: ast.expr, value: ast.expr, out: dict[str, str], depth: int) -> bool:
        """Adds a package → folder pair when both read as one string; True when computed."""
        k, v = self.one(key, depth), self.one(value, depth)
        if k.computed or v.computed or len(v.names) != 1:
            return True
        for name in k.names:
            out[name] = v.names[0]
        return False


def _joined(parts: list[Spelled]) -> Spelled:
    """Every concatenation of the parts' spellings."""
    if any(p.computed or p.finds for p in parts):
        return _COMPUTED
    count = 1
    for p in parts:
        count *= len(p.names)
    if count > _MAX_SPELLINGS:
        return _COMPUTED
    return Spelled(
        tuple(dict.fromkeys("".join(combo) for combo in itertools.product(*(p.names for p in parts))))
    )


def _own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef):
    """The nodes of a function's body, not descending into functions, lambdas or classes defined in it."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                stack.append(child)


def _dict_entries(node: ast.expr) -> list[tuple[str, ast.expr]]:
    """The string-keyed entries of a dict literal or a `dict(key=...)` call."""
    if isinstance(node, ast.Dict):
        return [
            (k.value, v)
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        ]
    if isinstance(node, ast.Call) and call_name(node) == "dict":
        return [(kw.arg, kw.value) for kw in node.keywords if kw.arg is not None]
    return []
