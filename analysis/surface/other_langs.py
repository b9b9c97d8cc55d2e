"""Surface changes of C/C++ headers, Rust, Go, JavaScript and TypeScript files, from tree-sitter syntax
trees (the grammars the tree-sitter project publishes as wheels: no download at run time).

What each language exports to its users:
- C/C++ headers: functions declared or defined inline (not `static`), structs, classes, enums, typedefs and
  macros (not include guards) at file level, in namespaces and in `extern "C"` blocks; struct fields and
  enumerators;
- Rust: `pub` items (fn, struct, enum, trait, const, static, type, mod) and `pub` methods of impl blocks;
  `pub` struct fields and a `pub` enum's variants;
- Go: capitalised functions, methods, types, constants and variables; capitalised struct fields;
- JavaScript/TypeScript: `export`ed functions, classes (with their public methods), variables, interfaces
  (with their properties), types, enums (with their members), `export { a as b }` names and `export default`;
  CommonJS `module.exports = {…}` keys and `exports.x = …` names.
Items marked deprecated (`#[deprecated]`, `[[deprecated]]`, JSDoc `@deprecated`, Go's `Deprecated:`) are
deprecations when the mark is new.
Names added, removed (with a shape for renames), parameters added, removed or renamed, fields added or
removed. A file that does not parse cleanly yields nothing.

Over 400 lines because it is one comparison: the tree-sitter walk per language feeds the same public-API
comparison.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache

from analysis.models import SurfaceChange, SurfaceKind
from analysis.surface.cpp_macros import plain_cpp
from analysis.surface.python import FileSurface
from analysis.surface.shapes import Shape

MAX_SOURCE_BYTES = 2_000_000
_PRIVATE_NAMESPACES = frozenset({"detail", "details", "internal", "impl", "_internal"})
_GUARD_SUFFIXES = ("_H", "_H_", "_HPP", "_HPP_", "_INCLUDED", "_H__")

LANGUAGES = {
    ".h": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".cuh": "cpp",
    ".rs": "rust",
    ".go": "go",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
}


@dataclass(slots=True)
class _Item:
    kind: str  # function | type | value | macro
    line: int
    params: list[str] = field(default_factory=list)
    shape: str = ""
    deprecated: bool = False  # marked so in the language's own way (attribute, doc tag, doc comment)
    optional: frozenset[str] = frozenset()  # parameters a call may leave out (a default, variadic, JS's)
    overloaded: bool = False  # declared more than once (C++ overloads): compared by `signatures`, not params
    # C++: each declaration's parameter types (and `const`), with how many a call must pass, and its line
    signatures: dict[tuple[str, ...], tuple[int, int]] = field(default_factory=dict)


@dataclass(slots=True)
class _Api:
    items: dict[str, _Item] = field(default_factory=dict)
    fields: dict[str, int] = field(default_factory=dict)  # "Type.field" → line


def language_of(path: str) -> str | None:
    lower = path.lower()
    if lower.endswith("_test.go"):
        return None  # Go test files are never part of a package's API
    dot = lower.rfind(".")
    return LANGUAGES.get(lower[dot:]) if dot >= 0 else None


# Folders whose names say their code is the project's own, not its users' API: Go enforces `internal`; C, C++,
# Rust and JavaScript projects follow the same convention by name (`detail/`, `_internal/`, `private/`).
_PRIVATE_FOLDERS = frozenset({"internal", "_internal", "detail", "details", "private", "_private"})


def private_tree(path: str, language: str) -> bool:
    """Whether a file's folders keep its names from users (the caller still reads its knobs)."""
    folders = path.lower().split("/")[:-1]
    return "internal" in folders if language == "go" else any(part in _PRIVATE_FOLDERS for part in folders)


_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh")


def installed_header(path: str) -> bool:
    """A C/C++ header in an `include/` tree: by the convention every build system follows, what is installed
    for users to compile against (a library's public API), even inside a Python distribution whose other
    native sources users reach only through its modules."""
    return path.lower().endswith(_HEADER_SUFFIXES) and "include" in path.lower().split("/")[:-1]


def tree_surface(path: str, before: str | None, after: str | None, *, language: str) -> FileSurface:
    old = _api(before, language) if before is not None else _Api()
    new = _api(after, language) if after is not None else _Api()
    if old is None or new is None:
        return FileSurface([])
    out: list[SurfaceChange] = []
    shapes: dict[tuple[SurfaceKind, str], Shape] = {}
    for name, item in old.items.items():
        if name not in new.items:
            out.append(SurfaceChange(SurfaceKind.REMOVED, name, path, item.line))
            shapes[(SurfaceKind.REMOVED, name)] = Shape(item.kind, item)
    for name, item in new.items.items():
        before_item = old.items.get(name)
        if before_item is None:
            out.append(SurfaceChange(SurfaceKind.ADDED, name, path, item.line))
            shapes[(SurfaceKind.ADDED, name)] = Shape(item.kind, item)
        else:
            if item.deprecated and not before_item.deprecated:
                out.append(SurfaceChange(SurfaceKind.DEPRECATION, name, path, item.line))
            both = (item, before_item)
            if all(i.kind == "function" and not i.overloaded for i in both):
                out.extend(_params(path, name, before_item, item))
            elif all(i.kind == "function" for i in both):
                out.extend(_overloads(path, name, before_item, item, shapes))
    for name, line in old.fields.items():
        if name not in new.fields and name.rsplit(".", 1)[0] in new.items:
            out.append(SurfaceChange(SurfaceKind.FIELD_REMOVED, name, path, line))
    for name, line in new.fields.items():
        if name not in old.fields and name.rsplit(".", 1)[0] in old.items:
            out.append(SurfaceChange(SurfaceKind.FIELD_ADDED, name, path, line))
    out.sort(key=lambda c: (c.line or 0, c.kind.value, c.name))
    return FileSurface(out, shapes)


def _overloads(
    path: str, name: str, old: _Item, new: _Item, shapes: dict[tuple[SurfaceKind, str], Shape]
) -> Iterator[SurfaceChange]:
    """Overloads of one name told apart by their parameter types: one gone is a removal, whatever overloads of
    the name remain (its calls stop compiling), unless a new one takes the same leading types and lets a call
    leave the rest out (`f(int)` → `f(int, int = 0)`); one new is an addition. Named `f(int, const char*)`."""
    for sig, (line, _) in old.signatures.items():
        if sig not in new.signatures and not any(_extends(s, r, sig) for s, (_, r) in new.signatures.items()):
            label = _overload_name(name, sig)
            shapes[(SurfaceKind.REMOVED, label)] = Shape("function", old)
            yield SurfaceChange(SurfaceKind.REMOVED, label, path, line)
    for sig, (line, required) in new.signatures.items():
        gone = (o for o in old.signatures if o not in new.signatures)
        if sig not in old.signatures and not any(_extends(sig, required, o) for o in gone):
            yield SurfaceChange(SurfaceKind.ADDED, _overload_name(name, sig), path, line)


def _extends(sig: tuple[str, ...], required: int, old: tuple[str, ...]) -> bool:
    """Whether every call of the overload `old` still matches `sig` (its types first, the rest defaulted)."""
    count = len(old) - 1  # the last element is the qualifier (`const` or "")
    return sig[-1] == old[-1] and sig[:count] == old[:-1] and required <= count


def _overload_name(name: str, sig: tuple[str, ...]) -> str:
    """`ns::f(int, bool) const`: the name as the signature the overload's callers match."""
    return f"{name}({', '.join(sig[:-1])}){' ' + sig[-1] if sig[-1] else ''}"


def _params(path: str, name: str, old: _Item, new: _Item) -> Iterator[SurfaceChange]:
    if old.params == new.params:
        return
    if len(old.params) == len(new.params):
        for a, b in zip(old.params, new.params, strict=True):
            if a != b:
                yield SurfaceChange(SurfaceKind.PARAM_RENAMED, f"{name}({b})", path, new.line, old=a, new=b)
        return
    for p in old.params:
        if p not in new.params:
            yield SurfaceChange(SurfaceKind.PARAM_REMOVED, f"{name}({p})", path, new.line, old=p)
    for p in new.params:
        if p not in old.params:
            # C, C++, Rust and Go callers must pass a parameter that has no default: their calls stop compiling
            kind = SurfaceKind.PARAM_ADDED if p in new.optional else SurfaceKind.PARAM_REQUIRED
            yield SurfaceChange(kind, f"{name}({p})", path, new.line)


@cache
def _parser(language: str):
    import tree_sitter

    if language == "cpp":
        import tree_sitter_cpp as grammar

        lang = grammar.language()
    elif language == "rust":
        import tree_sitter_rust as grammar

        lang = grammar.language()
    elif language == "go":
        import tree_sitter_go as grammar

        lang = grammar.language()
    elif language == "javascript":
        import tree_sitter_javascript as grammar

        lang = grammar.language()
    else:
        import tree_sitter_typescript as grammar

        lang = grammar.language_tsx() if language == "tsx" else grammar.language_typescript()
    return tree_sitter.Parser(tree_sitter.Language(lang))


def _api(text: str, language: str) -> _Api | None:
    data = text.encode("utf-8", "replace")
    if len(data) > MAX_SOURCE_BYTES:
        return None
    if language == "cpp":
        data = plain_cpp(text).encode("utf-8", "replace")
    try:
        root = _parser(language).parse(data).root_node
    except (ImportError, ValueError, RuntimeError):
        return None
    if root.has_error:
        return None  # half-parsed text would invent removals
    api = _Api()
    walker: Callable[[object, _Api], None] = {
        "cpp": _cpp,
        "rust": _rust,
        "go": _go,
        "javascript": _js,
        "typescript": _js,
        "tsx": _js,
    }[language]
    try:
        walker(root, api)
    except RecursionError:  # a backstop, as for Python: a file too deeply nested to read yields nothing
        return None
    return api


_Descend = Callable[[object, _Api, str], tuple[object, str] | None]


def _walk(root, api: _Api, visit: _Descend) -> None:
    """`visit` on every child of root and of the nodes it descends into (it returns that node and the
    prefix of the names in it), in the order recursion would take: with a stack of the children left, as
    namespaces and modules nest as deep as a file likes (1200 levels raised RecursionError)."""
    stack = [(iter(root.children), "")]
    while stack:
        children, prefix = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
        elif (inner := visit(child, api, prefix)) is not None:
            stack.append((iter(inner[0].children), inner[1]))


def _text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def _line(node) -> int:
    return node.start_point[0] + 1


def _shape(node, name: str) -> str:
    body = _text(node).replace(name, "_", 1)
    return hashlib.blake2b(" ".join(body.split()).encode(), digest_size=12).hexdigest()


def _add(
    api: _Api,
    name: str,
    kind: str,
    node,
    params: list[tuple[str, bool]] | None = None,
    *,
    marks: str = "",
    signature: tuple[tuple[str, ...], int] | None = None,
) -> None:
    """`params`: (name, whether a call may leave it out); `marks`: the item's attributes and doc comment, read
    for a deprecation; `signature`: a C++ function's parameter types and qualifier, with how many a call must
    pass (overloads are told apart by it)."""
    if name:
        short = re.split(r"\.|::", name)[-1]  # `pkg.Fn`, `mc::fold`: the name as its declaration writes it
        deprecated = _DEPRECATED.search(marks) is not None
        earlier = api.items.get(name)
        names = [p for p, _ in params or ()]
        optional = frozenset(p for p, may_omit in params or () if may_omit)
        function = earlier is not None and earlier.kind == kind == "function"
        signatures = dict(earlier.signatures) if function and earlier is not None else {}
        # declared twice with the same parameter types (a declaration and its inline definition): one function
        overloaded = function and (signature is None or signature[0] not in signatures or earlier.overloaded)
        if signature is not None:
            signatures.setdefault(signature[0], (_line(node), signature[1]))
        item = _Item(
            kind, _line(node), names, _shape(node, short), deprecated, optional, overloaded, signatures
        )
        api.items[name] = item


# `#[deprecated]`, `[[deprecated]]`, `__attribute__((deprecated))`, a `FOO_DEPRECATED` macro, JSDoc's
# `@deprecated`, Go's `Deprecated:` paragraph.
_DEPRECATED = re.compile(r"(?i)(?<![a-z])deprecated(?![a-z])|_DEPRECATED\b|@deprecated")
_MARK_NODES = frozenset(
    {"attribute_item", "line_comment", "block_comment", "comment", "attribute_declaration", "decorator"}
)


def _marks(node) -> str:
    """The attributes and comments right above a node (its preceding siblings, up to other code)."""
    out = []
    sibling = node.prev_sibling if node is not None else None
    while sibling is not None and sibling.type in _MARK_NODES and len(out) < 50:
        out.append(_text(sibling))
        sibling = sibling.prev_sibling
    return "\n".join(out)


# --- C/C++ headers ----------------------------------------------------------------------------------


def _cpp(root, api: _Api) -> None:
    _walk(root, api, _cpp_item)


def _cpp_item(child, api: _Api, prefix: str) -> tuple[object, str] | None:
    """One declaration of a header read into api; the node to read next with its prefix, if any."""
    kind = child.type
    if kind == "namespace_definition":
        name = _text(child.child_by_field_name("name"))
        body = child.child_by_field_name("body")
        if name.rsplit("::", 1)[-1] in _PRIVATE_NAMESPACES:
            return None  # `namespace detail { … }`: the header's own helpers, by the language's convention
        if body is not None:
            return body, f"{prefix}{name}::" if name else prefix
    elif kind == "linkage_specification":
        body = child.child_by_field_name("body")
        if body is not None:
            return body if body.type == "declaration_list" else child, prefix
    elif kind in ("declaration", "function_definition"):
        if any(c.type == "storage_class_specifier" and _text(c) == "static" for c in child.children):
            return None
        declarator = _function_declarator(child.child_by_field_name("declarator"))
        if declarator is not None:
            name = _text(declarator.child_by_field_name("declarator"))
            marks = f"{_marks(child)}\n{_head(child, declarator)}"
            _add(
                api,
                prefix + name,
                "function",
                child,
                _c_params(declarator),
                marks=marks,
                signature=_c_signature(declarator),
            )
        else:
            _cpp_type(child.child_by_field_name("type"), api, prefix)
    elif kind in ("struct_specifier", "class_specifier", "enum_specifier", "union_specifier"):
        _cpp_type(child, api, prefix)
    elif kind == "type_definition":
        name = _text(child.child_by_field_name("declarator"))
        _add(api, prefix + name, "type", child)
        _cpp_type(child.child_by_field_name("type"), api, prefix)
    elif kind in ("preproc_def", "preproc_function_def"):
        name = _text(child.child_by_field_name("name"))
        if name and not name.startswith("_") and not name.endswith(_GUARD_SUFFIXES):
            _add(api, name, "macro", child)
    elif (
        kind in ("preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif", "declaration_list")
        or kind == "template_declaration"
    ):
        return child, prefix
    return None


def _cpp_type(node, api: _Api, prefix: str) -> None:
    if node is None or node.type not in (
        "struct_specifier",
        "class_specifier",
        "enum_specifier",
        "union_specifier",
    ):
        return
    name = _text(node.child_by_field_name("name"))
    body = node.child_by_field_name("body")
    if not name or body is None:
        return
    _add(api, prefix + name, "type", node)
    if node.type == "enum_specifier":
        for enumerator in body.named_children:
            if enumerator.type == "enumerator":
                api.fields[f"{prefix}{name}.{_text(enumerator.child_by_field_name('name'))}"] = _line(
                    enumerator
                )
        return
    public = node.type != "class_specifier"
    for member in body.children:
        if member.type == "access_specifier":
            public = _text(member).startswith("public")
        elif member.type in ("field_declaration", "function_definition") and public:
            # a method declared, or defined inline in the class body (a header-only library's usual way)
            declarator = member.child_by_field_name("declarator")
            function = _function_declarator(declarator)
            if function is not None:
                method = _text(function.child_by_field_name("declarator"))
                marks = f"{_marks(member)}\n{_head(member, function)}"
                _add(
                    api,
                    f"{prefix}{name}::{method}",
                    "function",
                    member,
                    _c_params(function),
                    marks=marks,
                    signature=_c_signature(function),
                )
            elif declarator is not None:
                api.fields[f"{prefix}{name}.{_text(declarator)}"] = _line(member)


def _head(node, declarator) -> str:
    """A declaration's text before its declarator: its attributes and specifiers (`[[deprecated]] int`)."""
    return (node.text or b"")[: max(0, declarator.start_byte - node.start_byte)].decode("utf-8", "replace")


def _function_declarator(node):
    while node is not None and node.type in ("pointer_declarator", "reference_declarator"):
        node = node.child_by_field_name("declarator")
    return node if node is not None and node.type == "function_declarator" else None


def _c_params(declarator) -> list[tuple[str, bool]]:
    params = declarator.child_by_field_name("parameters")
    out = []
    for p in params.named_children if params is not None else []:
        inner = p.child_by_field_name("declarator")
        while inner is not None and inner.child_by_field_name("declarator") is not None:
            inner = inner.child_by_field_name("declarator")
        name = _text(inner) or _text(p.child_by_field_name("type")) or _text(p)
        out.append(
            (
                name,
                p.type
                in ("optional_parameter_declaration", "variadic_parameter_declaration", "variadic_parameter"),
            )
        )
    return out


def _c_signature(declarator) -> tuple[tuple[str, ...], int]:
    """The parameter types of a C/C++ function declarator and its `const`, as the key of one overload
    (`(const char*, int, "const")`), with how many arguments a call must pass. Names and defaults left out:
    callers match on types; `f(void)` takes none."""
    params = declarator.child_by_field_name("parameters")
    types: list[str] = []
    required = 0
    for p in params.named_children if params is not None else []:
        if p.type == "comment":
            continue
        text = p.text or b""
        end = len(text)
        default = p.child_by_field_name("default_value")
        if default is not None:
            end = default.start_byte - p.start_byte
        inner = p.child_by_field_name("declarator")
        while inner is not None and inner.child_by_field_name("declarator") is not None:
            inner = inner.child_by_field_name("declarator")
        if inner is not None and inner.type == "identifier":  # the parameter's name: not part of its type
            a, b = inner.start_byte - p.start_byte, inner.end_byte - p.start_byte
            text = text[:a] + text[b:end]
        else:
            text = text[:end]
        kind = " ".join(text.decode("utf-8", "replace").replace("=", " ").split())
        types.append(re.sub(r"\s*([*&,()\[\]<>])\s*", r"\1", kind))
        optional = default is not None or p.type in ("variadic_parameter", "variadic_parameter_declaration")
        required += not optional
    if types == ["void"]:
        types, required = [], 0
    qualifier = (
        "const"
        if any(c.type == "type_qualifier" and _text(c) == "const" for c in declarator.children)
        else ""
    )
    return (*types, qualifier), required


# --- Rust -------------------------------------------------------------------------------------------

_RUST_ITEMS = {
    "function_item": "function",
    "struct_item": "type",
    "enum_item": "type",
    "trait_item": "type",
    "type_item": "type",
    "union_item": "type",
    "const_item": "value",
    "static_item": "value",
    "mod_item": "type",
}


def _pub(node) -> bool:
    return any(c.type == "visibility_modifier" and _text(c) == "pub" for c in node.children)


def _rust(root, api: _Api) -> None:
    _walk(root, api, _rust_item)


def _rust_item(child, api: _Api, prefix: str) -> tuple[object, str] | None:
    """One item of a Rust file read into api; a public module's body to read next with its prefix."""
    kind = _RUST_ITEMS.get(child.type)
    if kind is not None and _pub(child):
        name = prefix + _text(child.child_by_field_name("name"))
        params = _rust_params(child) if kind == "function" else None
        _add(api, name, kind, child, params, marks=_marks(child))
        if child.type == "enum_item":
            body = child.child_by_field_name("body")
            for variant in body.named_children if body is not None else []:
                if variant.type == "enum_variant":  # a pub enum's variants are public: users match on them
                    api.fields[f"{name}.{_text(variant.child_by_field_name('name'))}"] = _line(variant)
        elif child.type == "struct_item":
            body = child.child_by_field_name("body")
            for f in body.named_children if body is not None else []:
                if f.type == "field_declaration" and _pub(f):
                    api.fields[f"{name}.{_text(f.child_by_field_name('name'))}"] = _line(f)
        elif child.type == "mod_item":
            body = child.child_by_field_name("body")
            if body is not None:
                return body, f"{name}::"
    elif child.type == "impl_item" and child.child_by_field_name("trait") is None:
        owner = _text(child.child_by_field_name("type")).split("<", 1)[0]
        body = child.child_by_field_name("body")
        for f in body.named_children if body is not None else []:
            if f.type == "function_item" and _pub(f):
                name = f"{prefix}{owner}::{_text(f.child_by_field_name('name'))}"
                _add(api, name, "function", f, _rust_params(f), marks=_marks(f))
    return None


def _rust_params(node) -> list[tuple[str, bool]]:
    params = node.child_by_field_name("parameters")
    return [
        (_text(p.child_by_field_name("pattern")), False)  # Rust has no default arguments
        for p in (params.named_children if params is not None else [])
        if p.type == "parameter"
    ]


# --- Go ---------------------------------------------------------------------------------------------


def _exported(name: str) -> bool:
    return name[:1].isupper()


def _go(node, api: _Api) -> None:
    for child in node.children:
        if child.type == "function_declaration":
            name = _text(child.child_by_field_name("name"))
            if _exported(name):
                _add(api, name, "function", child, _go_params(child), marks=_marks(child))
        elif child.type == "method_declaration":
            name = _text(child.child_by_field_name("name"))
            receiver = _text(child.child_by_field_name("receiver")).strip("()").split()[-1:] or [""]
            owner = receiver[0].lstrip("*").split("[", 1)[0]
            if _exported(name) and _exported(owner):
                _add(api, f"{owner}.{name}", "function", child, _go_params(child), marks=_marks(child))
        elif child.type == "type_declaration":
            for spec in child.named_children:
                name = _text(spec.child_by_field_name("name"))
                if spec.type in ("type_spec", "type_alias") and _exported(name):
                    _add(api, name, "type", spec, marks=_marks(child))
                    body = spec.child_by_field_name("type")
                    if body is not None and body.type == "struct_type":
                        for fields in body.named_children:
                            for f in fields.named_children:
                                for n in f.children_by_field_name("name"):
                                    if _exported(_text(n)):
                                        api.fields[f"{name}.{_text(n)}"] = _line(f)
        elif child.type in ("const_declaration", "var_declaration"):
            for spec in child.named_children:
                for n in spec.children_by_field_name("name"):
                    if _exported(_text(n)):
                        _add(api, _text(n), "value", spec)


def _go_params(node) -> list[tuple[str, bool]]:
    params = node.child_by_field_name("parameters")
    out = []
    for p in params.named_children if params is not None else []:
        names = [_text(n) for n in p.children_by_field_name("name")]
        variadic = p.type == "variadic_parameter_declaration"  # `opts ...Option`: calls may pass none
        out.extend((n, variadic) for n in names or [_text(p.child_by_field_name("type"))])
    return out


# --- JavaScript / TypeScript -------------------------------------------------------------------------

_JS_DECLARATIONS = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "type",
    "abstract_class_declaration": "type",
    "interface_declaration": "type",
    "type_alias_declaration": "type",
    "enum_declaration": "type",
}


_JS_FUNCTIONS = frozenset({"function_expression", "function", "arrow_function", "generator_function"})


def _js(node, api: _Api) -> None:
    for child in node.children:
        if child.type == "expression_statement":
            _commonjs(child, api)
            continue
        if child.type != "export_statement":
            continue
        declaration = child.child_by_field_name("declaration")
        if declaration is not None:
            _js_declaration(declaration, api, _marks(child))
        elif any(c.type == "default" for c in child.children):
            _add(api, "default", "value", child)
        for clause in (c for c in child.named_children if c.type == "export_clause"):
            for spec in clause.named_children:
                name = _text(spec.child_by_field_name("alias")) or _text(spec.child_by_field_name("name"))
                _add(api, name, "value", spec)
        source = child.child_by_field_name("source")
        if source is not None and not any(c.type == "export_clause" for c in child.named_children):
            _add(api, f"* from {_text(source).strip(chr(39) + chr(34))}", "value", child)


def _commonjs(statement, api: _Api) -> None:
    """CommonJS exports at the top of a module: `module.exports = {a, b: c, d() {}}` names each key,
    `module.exports = x` the default, `exports.x = …` / `module.exports.x = …` one name."""
    expression = statement.named_children[0] if statement.named_children else None
    if expression is None or expression.type != "assignment_expression":
        return
    target, value = _text(expression.child_by_field_name("left")), expression.child_by_field_name("right")
    if value is None:
        return
    marks = _marks(statement)
    if target in ("module.exports", "exports"):
        if value.type != "object":
            _add(api, "default", "value", statement, marks=marks)
            return
        for member in value.named_children:
            if member.type == "shorthand_property_identifier":
                _add(api, _text(member), "value", member, marks=_marks(member))
            elif member.type in ("pair", "method_definition"):
                key = member.child_by_field_name("key" if member.type == "pair" else "name")
                inner = member.child_by_field_name("value") if member.type == "pair" else member
                function = inner is not None and (
                    inner.type in _JS_FUNCTIONS or member.type == "method_definition"
                )
                params = _js_params(inner) if function else None
                _add(
                    api,
                    _text(key).strip("'\""),
                    "function" if function else "value",
                    member,
                    params,
                    marks=_marks(member),
                )
    elif (
        target.startswith(("module.exports.", "exports."))
        and target.count(".") == target.startswith("module.") + 1
    ):
        name = target.rsplit(".", 1)[1]
        function = value.type in _JS_FUNCTIONS
        _add(
            api,
            name,
            "function" if function else "value",
            statement,
            _js_params(value) if function else None,
            marks=marks,
        )


def _js_declaration(node, api: _Api, marks: str) -> None:
    kind = _JS_DECLARATIONS.get(node.type)
    if kind is not None:
        name = _text(node.child_by_field_name("name"))
        _add(api, name, kind, node, _js_params(node) if kind == "function" else None, marks=marks)
        body = node.child_by_field_name("body")
        if node.type == "interface_declaration" and body is not None:
            for member in body.named_children:  # an exported interface's properties: what users pass or read
                key = member.child_by_field_name("name")
                if member.type == "property_signature" and key is not None:
                    api.fields[f"{name}.{_text(key)}"] = _line(member)
        if node.type == "enum_declaration" and body is not None:
            for member in body.named_children:  # an exported enum's members: users compare against them
                key = member.child_by_field_name("name") if member.type == "enum_assignment" else member
                if key is not None and key.type in ("property_identifier", "string"):
                    api.fields[f"{name}.{_text(key)}"] = _line(member)
        if node.type in ("class_declaration", "abstract_class_declaration") and body is not None:
            for member in body.named_children:
                if member.type != "method_definition":
                    continue
                method = _text(member.child_by_field_name("name"))
                private = any(
                    c.type == "accessibility_modifier" and _text(c) != "public" for c in member.children
                )
                if method and not method.startswith("#") and not private:
                    params = _js_params(member)
                    _add(api, f"{name}.{method}", "function", member, params, marks=_marks(member))
    elif node.type in ("lexical_declaration", "variable_declaration"):
        for declarator in node.named_children:
            if declarator.type == "variable_declarator":
                name = _text(declarator.child_by_field_name("name"))
                _add(api, name, "value", declarator, marks=marks)


def _js_params(node) -> list[tuple[str, bool]]:
    params = node.child_by_field_name("parameters")
    out = []
    for p in params.named_children if params is not None else []:
        pattern = p.child_by_field_name("pattern")
        # a call may leave out any JavaScript parameter; TypeScript checks a `required_parameter` without a default
        required = p.type == "required_parameter" and p.child_by_field_name("value") is None
        out.append((_text(pattern if pattern is not None else p), not required))
    return out
