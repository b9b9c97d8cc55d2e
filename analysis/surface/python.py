"""Surface changes of one Python file, from its syntax trees before and after (ast; no import, no execution).

What is compared (DESIGN.md §3c):
- public functions, classes, methods and UPPER_CASE constants: added, removed; their parameters removed,
  renamed, reordered, newly required, added; defaults whose *value* changed (`0.0` and `"0.0"` are the same
  value retyped; `False` and `True` are not);
- configuration fields (dataclasses, attrs, pydantic models and settings, TypedDicts, NamedTuples, classes
  named *Config/*Settings/... with annotated fields) added, removed or renamed, with the aliases that keep an
  old name working: the old name still written as a string in the class (validation_alias, AliasChoices, a
  `__getattr__` or validator mapping) or defined as a property/method there;
- command-line options (argparse add_argument, click/typer options), environment variables read (getenv,
  os.environ, *env* helpers and registries built on them), HTTP routes (decorators and route tables of
  FastAPI, Flask, Starlette, aiohttp; Django url patterns), names registered for users to select (registration
  calls and decorators, registry mappings: registrations.py);
- deprecation warnings added, feature switches flipped (a switch-named default or attribute, a `supports_*`
  answer, a guard that raised or returned early that no longer does) and exceptions newly raised by a
  public function.

Removed/added definitions carry a shape (their signature and body without names and docstrings) so that the
caller can pair a removal and an addition anywhere in the commit into a rename (surface.commit_surface).
A file that does not parse yields nothing.

Over 400 lines because it is one comparison: every kind of public name shares the same walk of two syntax
trees and the same notion of what is public.
"""

from __future__ import annotations

import ast
import re
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from analysis.models import SurfaceChange, SurfaceKind
from analysis.surface.blanked_bodies import Blanked, Relative, Relatives, Span, blank, first_line
from analysis.surface.class_changes import class_literal, dropped_bases, is_enum
from analysis.surface.forwarded import forwards_keyword
from analysis.surface.python_nodes import (
    _MODEL_BASES,
    _PROTOCOL_DUNDERS,
    _SHOWN,
    ENV_NAME,
    _camel_words,
    _const_str,
    _Def,
    _default_kind,
    _default_of,
    _deprecation,
    _dump,
    _env_read,
    _Field,
    _field,
    _first_string,
    _has_word,
    _is_classvar,
    _is_environ,
    _is_model,
    _is_str,
    _keyword,
    _lines_matching,
    _literal_all,
    _literal_words,
    _marked_deprecated,
    _name_of,
    _outer_kept,
    _outer_new,
    _Param,
    _param_list,
    _passed_params,
    _position,
    _positions_shift,
    _public_name,
    _route_call,
    _route_of,
    _scalar,
    _scoped,
    _shown,
    _similar,
    _string_args,
    _strings,
    _truthy,
    abstract_method,
    branch_blocks,
    is_switch,
    same_value,
)
from analysis.surface.registrations import (
    Mapping,
    key_aliases,
    mapping_changes,
    registered_key,
    registering_scope,
    registration_call,
    string_mapping,
)
from analysis.surface.reused_parse import parse_reusing
from analysis.surface.same_code import Version, same_code
from analysis.surface.shapes import Shape
from analysis.surface.shared_parse import GRAMMAR_FUTURE as _GRAMMAR_FUTURE
from analysis.surface.shared_parse import PARSE_FAILURES
from analysis.surface.shared_parse import parse as parse_python

MAX_SOURCE_CHARS = 2_000_000  # a larger file is generated or vendored: not parsed

_CONSTANT = re.compile(r"[A-Z][A-Z0-9_]*")
_VERSIONISH = re.compile(r"VERSION|REVISION|RELEASE", re.IGNORECASE)
# Classes whose annotated attributes are fields: records (dataclasses, attrs, TypedDicts, NamedTuples, structs)
# and validation models. A record is configuration (its fields are options users set) when it says so: its
# name (`*Config`, `*Settings`, ...), a settings base, a config decorator, an explicit export (`__all__`),
# a docstring that calls it configuration, or a config class that holds it in a field; or when it is a
# validation model (BaseModel and kin validate data from outside: requests, files, settings).
# Every other record is data the code passes around (attention metadata, an engine's state): no config.
_RECORD_BASES = frozenset({"TypedDict", "NamedTuple", "Struct"})
_RECORD_DECORATORS = frozenset(
    {"dataclass", "define", "frozen", "mutable", "attrs", "s", "dataclass_transform"}
)
_CONFIG_DECORATORS = frozenset({"config", "configclass", "config_class", "settings", "configurable"})
_CONFIG_SUFFIXES = ("Config", "Settings", "Options", "Params", "Args", "Arguments", "Parameters")
_CONFIG_WORDS = frozenset({"Config", "Configuration", "Settings", "Options", "Conf"})
_CONFIG_DOC = re.compile(r"\b(?:config(?:uration)?|settings|options)\b", re.IGNORECASE)
_TYPING_FACTORIES = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple", "NewType"})  # not constants users read
# Decorators of a command-line command (click, typer): `@x.command()`, `@click.option(...)`.
_COMMAND_DECORATORS = frozenset(
    {"command", "group", "option", "argument", "password_option", "version_option"}
)
_ROUTE_CALLS = frozenset(
    {"add_url_rule", "add_api_route", "add_route", "add_api_websocket_route", "add_websocket_route", "Route"}
    | {"WebSocketRoute", "add_get", "add_post", "add_put", "add_delete", "add_patch"}
)
_DJANGO_ROUTES = frozenset({"path", "re_path", "url"})
# A validation model is an HTTP API's request or response body (every API client sends or reads its fields,
# however deep its module) when its module declares routes, or when HTTP's own words name it: the handlers
# that take `*Request` and return `*Response` usually live in another module, which this file does not show.
_PAYLOAD_SUFFIXES = ("Request", "Response")
# Words without which a module has none of the calls _calls looks for (a cheap test before a full walk). An
# option call is named `option`: `Option` would match the `Optional` on most lines of a typed module.
_CALL_WORDS = re.compile(
    r"add_argument|option|env|Env|ENV|add_|Route|urlpatterns|eprecat|Warning|warn|regist"
)
# Inside a statement that has them, a nested statement is walked only when its own text has one of these (in
# any case): every node _Collector._node records has one in its text (add_argument, option, *env*/environ
# reads, add_*/*Route* tables, urlpatterns, deprecat/warn), so the walk skips the rest of a long function.
_NESTED_CALL_WORDS = re.compile(
    r"add_argument|option|env|add_|route|urlpatterns|deprecat|warn|regist", re.IGNORECASE
)

# Nodes the calls walk neither records nor finds anything under: names, constants, contexts and operators.
_INERT = (ast.expr_context, ast.Name, ast.Constant, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
# The kinds of node _Collector._node records anything of (the parser makes no subclasses): the walk calls it
# for these only, a few of the nodes it passes.
_RECORDED = frozenset({ast.Call, ast.Subscript, ast.Compare, ast.Assign})
# Where the parser starts a new line: "\r\n", "\r" or "\n" — not the form feeds, separators and "\u2028"
# that str.splitlines also splits at (inside a string or comment they would shift every later line).
_PARSER_LINE_BREAK = re.compile("\r\n|\r|\n")
# The characters other than ASCII letters that a case-insensitive search matches to an ASCII letter, or that
# lower to one: without them, the lowered text has a lowercase word exactly where the text has it in any case.
_CASE_FOLDS = re.compile("[\u0130\u0131\u017f\u212a]")
_OPTION_WORD = re.compile(r"Option(?!\w)")


@dataclass(frozen=True, slots=True)
class FileSurface:
    """What one file's diff does to its users; shapes pair removals and additions across the commit."""

    changes: list[SurfaceChange]
    # (ADDED|REMOVED, name) → shape
    shapes: dict[tuple[SurfaceKind, str], Shape] = field(default_factory=dict)
    prose_only: bool = False  # both versions parsed: only comments, docstrings, message text or layout differ
    # names this version imports from its own package anew or from elsewhere than before, absolute:
    # "pkg.mod.name" → where from ("pkg.other.name"); a package's __init__'s re-pointed ones: before → after
    imports: dict[str, str] = field(default_factory=dict)
    reexports: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class _ConfigClass:
    qualname: str
    public: bool
    node: ast.ClassDef
    fields: dict[str, _Field] = field(default_factory=dict)
    members: set[str] = field(default_factory=set)  # methods, properties and other attributes
    blanked: Blanked | None = None  # the version's blanked bodies, which may be in node
    _strings: frozenset[str] | None = None
    _names: set[str] | None = None

    def annotation_names(self) -> set[str]:
        """The names its fields' annotations mention: the records a configuration holds (asked once the
        fields are all collected, so kept)."""
        if self._names is None:
            self._names = {
                n for f in self.fields.values() for n in re.findall(r"[A-Za-z_]\w*", f.annotation_text)
            }
        return self._names

    def serves(self, name: str) -> bool:
        """Whether the class still answers to an old field name: a member under it, or the name written as
        a string (validation_alias, AliasChoices, a __getattr__ or validator mapping)."""
        if name in self.members:
            return True
        if self._strings is None:
            self._strings = frozenset(_strings(self.blanked.whole(self.node) if self.blanked else self.node))
        return name in self._strings


@dataclass(slots=True)
class _Option:
    key: str
    names: tuple[str, ...]
    line: int
    default: ast.expr | None
    shape: str  # the call's other arguments, to pair a renamed option
    deprecated: bool = False


@dataclass(slots=True)
class _Module:
    defs: dict[str, _Def] = field(default_factory=dict)
    configs: dict[str, _ConfigClass] = field(default_factory=dict)
    options: dict[str, _Option] = field(default_factory=dict)
    envs: dict[str, tuple[int, ast.expr | None]] = field(default_factory=dict)
    routes: dict[str, int] = field(default_factory=dict)
    registrations: dict[str, int] = field(default_factory=dict)  # names users select (registrations.py)
    mappings: dict[str, Mapping] = field(default_factory=dict)  # module-level dicts of string keys
    key_aliases: dict[str, str] = field(default_factory=dict)  # {"old key": "new key"} tables
    models: set[str] = field(default_factory=set)  # validation models and their subclasses (qualnames)
    deprecations: dict[tuple[str, str], int] = field(default_factory=dict)
    switches: dict[str, tuple[int, bool]] = field(default_factory=dict)  # switch-named bool attributes
    aliases: dict[str, str] = field(default_factory=dict)  # old = new assignments at module/class level
    class_values: dict[str, tuple[int, ast.expr]] = field(default_factory=dict)  # a public class's literals
    assigned: set[str] = field(default_factory=set)  # every name assigned at module or class level
    imported: set[str] = field(default_factory=set)  # names imported at module level
    # name → where a from-import takes it from, relative as written (`..pkg.mod.name`)
    reexported: set[str] = field(default_factory=set)  # imported as themselves (`import X as X`): re-exports
    origins: dict[str, str] = field(default_factory=dict)
    exports: set[str] | None = None  # __all__, when literal
    tree: ast.Module | None = None
    lines: list[str] | None = None  # the text's, when it has spans
    spans: tuple[Span, ...] = ()  # the functions another version may blank (blanked_bodies.py)
    blanked: Blanked | None = None  # the bodies this version's tree has blanked
    # the lines `tree` is the parse of (blanked or not), when another version's parse may take its statements
    parsed_lines: list[str] | None = None
    _strings: set[str] | None = None

    @property
    def strings(self) -> set[str]:
        """Every short string literal and imported name: a removed name still among them is still served
        (a shim import, a deprecation mapping, a fallback read). Walked only when a removal asks."""
        if self._strings is None:
            self._strings = set(self.imported)
            if self.blanked is not None:
                self._strings |= _strings(self.blanked.whole_tree())
            elif self.tree is not None:
                self._strings |= _strings(self.tree)
        return self._strings


class Collected:
    """Versions of files collected once and asked for again within a batch: its commits often touch a
    file one after another, and one's version after is the other's before (a source hands the same text
    object to both: a blob read once). `expect` counts each use beforehand; a version is kept after its
    first use while uses remain, and dropped at its last: the memory stays that of a few modules."""

    def __init__(self, relatives: Relatives | None = None) -> None:
        self._uses: Counter[tuple[int, bool]] = Counter()
        self._kept: dict[tuple[int, bool], tuple[str, _Module | None]] = {}
        self.relatives = relatives  # other versions of the files, whose function bodies a version may blank
        # the trees of the versions after a commit, by text, for the reads that follow its facts (the class
        # lookups of inherited.py: no second parse); the caller clears them between commits
        self.trees_after: dict[int, tuple[str, ast.Module]] = {}

    def tree_after(self, text: str) -> ast.Module | None:
        """The tree collected of this text as a version after (its function bodies may be blanked)."""
        found = self.trees_after.get(id(text))
        return found[1] if found is not None and found[0] is text else None

    def expect(self, text: str | None, package_init: bool) -> None:
        if text is not None:
            self._uses[id(text), package_init] += 1

    def take(self, text: str, package_init: bool) -> tuple[bool, _Module | None]:
        """(True, the module) when this version was collected for an earlier use."""
        key = (id(text), package_init)
        found = self._kept.get(key)
        if found is None or found[0] is not text:
            return False, None
        self._used(key)
        return True, found[1]

    def keep(self, text: str, package_init: bool, module: _Module | None) -> None:
        """This use collected the version itself: kept when more uses are expected."""
        key = (id(text), package_init)
        if self._used(key) > 0:
            self._kept[key] = (text, module)  # the text held too, so that its id is not reused meanwhile

    def _used(self, key: tuple[int, bool]) -> int:
        left = self._uses[key] = self._uses[key] - 1
        if left <= 0:
            self._kept.pop(key, None)
        return left


def python_surface(
    path: str,
    before: str | None,
    after: str | None,
    *,
    module: str,
    public: bool = True,
    collected: Collected | None = None,
) -> FileSurface:
    """Surface changes between two versions of a Python file (None: the file did not exist).

    module: the dotted name users import it by; public: whether the module is part of the public API
    (not underscore-private). Options, environment variables, routes, deprecations and switches are
    reported for any shipped module; names, parameters, fields and raised exceptions only for public ones.
    collected: the batch's versions collected for an earlier use, which are not parsed again, and its
    `relatives`: with another version of a file known, a version is parsed with the bodies of the functions it
    shares with that one left out (blanked_bodies.py): the first version of a file in a batch against the
    version its worker parsed last (parsed whole when there is none), each next one against its neighbour,
    whose parse gives it the statements they have at the same lines (reused_parse.py)."""
    init = path.endswith("__init__.py")
    had_old, old = collected.take(before, init) if collected and before is not None else (False, None)
    had_new, new = collected.take(after, init) if collected and after is not None else (False, None)
    relative = collected.relatives.get(path) if collected and collected.relatives else None
    # The texts as read are what `collected` knows; the code parsed is without a BOM.
    source_before, source_after = without_bom(before), without_bom(after)
    # each version parsed with the bodies it shares with the nearest version known blanked (blanked_bodies.py)
    # and the statements at the same lines as in that version's parse taken from its tree (reused_parse.py)
    if not had_old:
        known = new if had_new else relative
        old = _collect_against(source_before, known, init) if source_before is not None else _Module()
    if not had_new:
        known = old if old is not None and old.spans else relative
        new = _collect_against(source_after, known, init) if source_after is not None else _Module()
    if collected:
        for had, text, version in ((had_old, before, old), (had_new, after, new)):
            if not had and text is not None:
                collected.keep(text, init, version)
        if collected.relatives is not None and new is not None and new.lines is not None:
            collected.relatives.put(path, new.lines, new.spans)
        if after is not None and source_after is after and new is not None and new.tree is not None:
            collected.trees_after[id(after)] = (after, new.tree)  # the text as read: ast.parse refuses a BOM
    if old is None or new is None:
        return FileSurface([])
    if (
        source_before is not None
        and source_after is not None
        and _prose_only(old, source_before, new, source_after)
    ):
        return FileSurface([], prose_only=True)
    try:
        return _Compare(path, module, public, old, new).run()
    except RecursionError:  # a definition too deeply nested to compare (its shape, an annotation's dump)
        return FileSurface([])


def absolute_origin(origin: str, package: str) -> str | None:
    """`..mod.name` imported in package `pkg.sub` → `pkg.mod.name` (None: above the top package)."""
    level = len(origin) - len(origin.lstrip("."))
    if not level:
        return origin
    parts = package.split(".") if package else []
    if level - 1 >= len(parts):
        return None
    return ".".join([*parts[: len(parts) - (level - 1)], origin[level:]])


def _prose_only(old: _Module, before: str, new: _Module, after: str) -> bool:
    """Whether the versions differ in comments, docstrings, message text or layout only (same_code.py)."""
    if before == after or old.tree is None or new.tree is None or "\r" in before or "\r" in after:
        return False
    return same_code(_version(old, before), _version(new, after))


def _version(module: _Module, text: str) -> Version:
    assert module.tree is not None  # _prose_only
    if module.blanked is not None:
        return Version(module.tree, module.blanked.lines, module.blanked.whole)
    return Version(module.tree, module.lines if module.lines is not None else text.split("\n"), _itself)


def _itself(node: ast.AST) -> ast.AST:
    return node


def without_bom(text: str | None) -> str | None:
    """A Python text without its leading UTF-8 byte-order mark: Python runs such a file, but ast.parse of the
    decoded text refuses the U+FEFF. It is no line, so line numbers stay."""
    return text[1:] if text is not None and text.startswith("\ufeff") else text


def _parse(text: str, package_init: bool = False) -> _Module | None:
    return _collect(text, _tree(text), package_init)


def _tree(text: str | None) -> ast.Module | None:
    if text is None or len(text) > MAX_SOURCE_CHARS:
        return None
    try:
        return parse_python(text)
    except PARSE_FAILURES:
        return None


def _collect(text: str, tree: ast.Module | None, package_init: bool) -> _Module | None:
    if tree is None:
        return None
    collector = _Collector(package_init)
    try:
        collector.module(tree, text)
    except RecursionError:
        return None
    if "\r" not in text and _GRAMMAR_FUTURE not in text:  # lines split as the parser counts them
        collector.out.parsed_lines = collector.out.lines  # (set when another version may blank against it)
    return collector.out


def _collect_against(text: str, known: _Module | Relative | None, package_init: bool) -> _Module | None:
    """A version collected with the bodies it shares with another version of the file blanked (blanked_bodies.py);
    parsed whole when none is, or when the blanked text does not check out."""
    lines_known, spans = (known.lines, known.spans) if known is not None else (None, ())
    if (
        lines_known is None
        or not spans
        or len(text) > MAX_SOURCE_CHARS
        or "\r" in text
        or _GRAMMAR_FUTURE in text
    ):
        return _collect(text, _tree(text), package_init)
    # a head is read only for typer options (its parameters' defaults) or, when compared, from its whole node
    typer_options = _may_have_typer_options(text)
    original = text.split("\n")
    lines, stubs = blank(original, lines_known, spans, heads=not typer_options)
    if stubs:
        try:
            if isinstance(known, _Module) and known.tree is not None and known.parsed_lines is not None:
                # the statements shared with the known version's parse at the same lines are taken from it
                tree, lines, stubs = parse_reusing(original, lines, stubs, known.parsed_lines, known.tree)
                parsed = "\n".join(lines)
            else:
                parsed = "\n".join(lines)
                tree = parse_python(parsed)
            collector = _Collector(package_init, stubs, typer_options)
            collector.module(tree, text, parsed)
            collector.out.parsed_lines = lines
            return collector.out
        except (_Unverified, *PARSE_FAILURES):
            pass
    return _collect(text, _tree(text), package_init)


def _may_have_typer_options(text: str) -> bool:
    """A typer option is a call named `Option`: a text without that word (`Optional` is another) has none,
    unless a character of it is one the parser may normalize (NFKC) to an ASCII letter of a name (a text
    that NFKC leaves as it is has none)."""
    if (
        not text.isascii()
        and not unicodedata.is_normalized("NFKC", text)
        and any(_folds_to_ascii(c) for c in set(text) if not c.isascii())
    ):
        return True
    for found in _OPTION_WORD.finditer(text):  # a pattern that starts with the word: searched for fast
        before = found.start() - 1
        if before < 0 or not (text[before].isalnum() or text[before] == "_"):
            return True
    return False


@lru_cache(maxsize=4096)
def _folds_to_ascii(char: str) -> bool:
    return any(c.isascii() and (c.isalnum() or c == "_") for c in unicodedata.normalize("NFKC", char))


# --- collecting one version ----------------------------------------------------------------------------


class _Unverified(Exception):
    """A blanked body did not end up as the whole body of a function the collector visits."""


class _Collector:
    def __init__(
        self,
        package_init: bool = False,
        stubs: dict[int, tuple[int, int]] | None = None,
        typer_options: bool | None = None,  # _may_have_typer_options of the text, when known
    ) -> None:
        self.out = _Module()
        self._stubs = stubs or {}
        self._package_init = package_init  # a package's __init__ re-exports what it imports
        self._scope: list[str] = []
        self._private_depth = 0
        self._records: dict[str, _ConfigClass] = {}
        self._stubbed: Blanked | None = None  # set with the text when stubs are given
        self._verified = 0
        self._bodies: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, int, str]] = []
        self._hits: list[int] = []  # line indexes of what the calls walk found
        self._typer_options = typer_options  # whether a call named `Option` may be in the text

    def module(self, tree: ast.Module, text: str, parsed: str | None = None) -> None:
        """parsed: the text with the blanked bodies (blanked_bodies.py) the tree was parsed from. The calls
        walk searches it for its words: it finds nothing in a blanked body, and the rest is the text's."""
        # without "\r" a line's index is the count of "\n" before it (str.split: six times the regex's speed)
        self._plain_lines = "\r" not in text
        self._searched = parsed if parsed is not None else text
        # Most modules have no typer option, and each parameter of each definition was looked at.
        if self._typer_options is None:
            self._typer_options = _may_have_typer_options(text)
        self._lines = text.split("\n") if self._plain_lines else _PARSER_LINE_BREAK.split(text)
        self.out.tree = tree
        if self._stubs:
            self._stubbed = self.out.blanked = Blanked(self._lines, self._stubs)
        self.out.exports = _literal_all(tree)
        self._body(tree.body, top=True)
        if self._verified != len(self._stubs):
            raise _Unverified
        self._settle_configs()
        self._expose_inherited()
        self._calls(tree)
        self._blankable()

    def _blankable(self) -> None:
        """The functions another version may blank: those in which the calls walk found nothing (what it
        finds in a function depends on the function's text alone)."""
        spans = []
        hits = sorted(self._hits)
        for node, body, indent in self._bodies:
            if _has_word(hits, node):
                continue
            first = first_line(node)
            spans.append(
                Span(first - 1, node.lineno - 1, body - 1, (node.end_lineno or node.lineno) - 1, indent)
            )
        self.out.spans = tuple(spans)
        if spans:
            self.out.lines = self._lines

    def _expose_inherited(self) -> None:
        """Members of an underscore-private base class that a public class of the module inherits are that
        class's API (users call `Url.encoded_string()` though `_BaseUrl` defines it): recorded under the first
        public heir's name, unless the heir defines the member itself."""
        classes = {q: d for q, d in self.out.defs.items() if d.kind == "class" and "." not in q}
        bases = {q: [_name_of(b) for b in d.node.bases] for q, d in classes.items()}  # type: ignore[union-attr]
        heirs: dict[str, str] = {}
        for q, d in classes.items():
            if not d.public:
                continue
            stack, seen = list(bases[q]), set()
            while stack:
                base = stack.pop()
                if base in seen or base not in classes:
                    continue
                seen.add(base)
                stack.extend(bases[base])
                if not classes[base].public:
                    heirs.setdefault(base, q)
        for qual, d in list(self.out.defs.items()):
            owner, _, rest = qual.partition(".")
            heir = heirs.get(owner)
            if heir is None or not rest or not all(_public_name(part) for part in rest.split(".")):
                continue
            self.out.defs.setdefault(
                f"{heir}.{rest}",
                _Def(f"{heir}.{rest}", d.kind, d.line, True, node=d.node, signature=d.signature, value=d.value,
                     lines=d.lines, origin=d.origin, blanked=d.blanked),
            )  # fmt: skip

    def _source(self, node: ast.AST) -> str:
        """The node's text, decorators included."""
        start = first_line(node)
        end = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
        return "\n".join(self._lines[start - 1 : end])

    # definitions ------------------------------------------------------------------------------------
    def _body(self, body: list[ast.stmt], *, top: bool, config: _ConfigClass | None = None) -> None:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self._function(stmt, config)
            elif isinstance(stmt, ast.ClassDef):
                self._class(stmt)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                self._assign(stmt, top=top, config=config)
            elif isinstance(stmt, ast.ImportFrom) and top and not self._scope:
                self._import(stmt)
            elif isinstance(stmt, ast.If | ast.Try) and top:
                # `if TYPE_CHECKING:` / `try: import x` blocks at module level still define names
                for inner in branch_blocks(stmt):
                    self._body(inner, top=top, config=config)

    def _qual(self, name: str) -> str:
        return ".".join([*self._scope, name])

    def _public(self, name: str, *, top: bool) -> bool:
        if self._private_depth:
            return False
        if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
            return False
        if top and not self._scope and self.out.exports is not None:
            return name in self.out.exports
        return True

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, config: _ConfigClass | None) -> None:
        body = self._body_start(node)
        if any(_name_of(d) == "overload" for d in node.decorator_list):
            return  # the implementation that follows carries the signature
        qual = self._qual(node.name)
        public = self._public(node.name, top=not self._scope)
        if node.name in _PROTOCOL_DUNDERS and node.name not in ("__init__", "__call__", "__new__"):
            public = False  # Python's protocol, not API
        if config is not None:
            config.members.add(node.name)
        is_property = any(_name_of(d) in ("property", "cached_property") for d in node.decorator_list)
        # A command-line command's parameters are filled by its framework from the options its decorators
        # declare: users type the options (stated as option facts), never call the function.
        is_command = any(_name_of(d) in _COMMAND_DECORATORS for d in node.decorator_list)
        signature = None if is_property or is_command else (node.args, bool(self._scope))
        self.out.defs[qual] = _Def(
            qual, "function", node.lineno, public, node=node, signature=signature, lines=self._lines,
            blanked=self._stubbed,
        )  # fmt: skip
        self._decorators(node, qual)
        if body is not None and self._plain_lines:
            line = self._lines[body - 1]
            self._bodies.append((node, body, line[: len(line) - len(line.lstrip())]))

    def _body_start(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> int | None:
        """The line the body starts on when it has lines of its own (None: on the `def`'s line); a blanked
        body is counted as verified here (blanked_bodies.py)."""
        first = node.body[0]
        stub = self._stubs.get(node.end_lineno or 0)
        if (
            stub is not None
            and stub[0] == node.lineno
            and len(node.body) == 1
            and isinstance(first, ast.Pass)
        ):
            self._verified += first.lineno == node.end_lineno
            return stub[1]
        start = first_line(first)
        prefix = self._lines[start - 1][: first.col_offset]
        return start if prefix.isspace() and start > node.lineno else None

    def _class(self, node: ast.ClassDef) -> None:
        qual = self._qual(node.name)
        public = self._public(node.name, top=not self._scope)
        self.out.defs[qual] = _Def(qual, "class", node.lineno, public, node=node, blanked=self._stubbed)
        record = _ConfigClass(qual, public, node, blanked=self._stubbed) if self._is_record(node) else None
        if record is not None:
            self._records[qual] = record
        self._scope.append(node.name)
        self._private_depth += 0 if public else 1
        try:
            self._body(node.body, top=False, config=record)
        finally:
            self._scope.pop()
            self._private_depth -= 0 if public else 1

    def _import(self, node: ast.ImportFrom) -> None:
        """Imported names are served by this module (a shim keeps an old name working); in a package's
        __init__, or listed in __all__, they are its public API, except the standard library's names a
        package's __init__ imports for its own use (`from asyncio import FIRST_COMPLETED`)."""
        stdlib = node.level == 0 and (node.module or "").split(".")[0] in sys.stdlib_module_names
        for alias in node.names:
            name = alias.asname or alias.name
            if name == "*":
                continue
            self.out.imported.add(name)
            where = f"{node.module}.{alias.name}" if node.module else alias.name
            self.out.origins[name] = "." * node.level + where
            exported = self.out.exports is not None and name in self.out.exports
            # `from x import Y as Y` is the typing convention's explicit re-export (PEP 484), in any module
            explicit = alias.asname == alias.name
            if (exported or explicit or (self._package_init and not stdlib)) and self._public(name, top=True):
                origin = f"{'.' * node.level}{node.module or ''}.{alias.name}"
                self.out.defs[name] = _Def(name, "import", node.lineno, True, origin=origin)
                if explicit:
                    self.out.reexported.add(name)

    def _is_record(self, node: ast.ClassDef) -> bool:
        """A class whose annotated attributes are fields (see _RECORD_BASES)."""
        if any(_name_of(d) in _RECORD_DECORATORS | _CONFIG_DECORATORS for d in node.decorator_list):
            return True
        for base in node.bases:
            name = _name_of(base)
            if (
                name in _RECORD_BASES | _MODEL_BASES
                or self._qual(name) in self._records
                or name in self._records
            ):
                return True
        annotated = any(isinstance(s, ast.AnnAssign) for s in node.body)
        return annotated and node.name.endswith(_CONFIG_SUFFIXES)

    def _settle_configs(self) -> None:
        """Which records are configuration (see _RECORD_BASES): those that say so, validation models, their
        subclasses, and the records a configuration class holds in its fields."""
        records = self._records
        config = {q for q, r in records.items() if self._says_config(r.node) or _is_model(r.node)}
        changed = True
        while changed:
            changed = False
            for q, r in records.items():
                if q in config:
                    continue
                bases = {_name_of(b) for b in r.node.bases}
                held = any(q.rsplit(".", 1)[-1] in c_names for c_names in (
                    records[c].annotation_names() for c in config))  # fmt: skip
                if bases & {c.rsplit(".", 1)[-1] for c in config} or held:
                    config.add(q)
                    changed = True
        self.out.configs = {q: r for q, r in records.items() if q in config}
        models = {q for q, r in records.items() if _is_model(r.node)}
        while grown := {
            q for q, r in records.items()
            if q not in models and {_name_of(b) for b in r.node.bases} & {m.rsplit(".", 1)[-1] for m in models}
        }:  # fmt: skip
            models |= grown
        self.out.models = models

    def _says_config(self, node: ast.ClassDef) -> bool:
        if any(_name_of(d) in _CONFIG_DECORATORS for d in node.decorator_list):
            return True
        if node.name.endswith(_CONFIG_SUFFIXES) or _CONFIG_WORDS & set(_camel_words(node.name)):
            return True
        if self.out.exports is not None and node.name in self.out.exports and not self._scope:
            return True
        doc = ast.get_docstring(node, clean=True)
        return bool(doc) and bool(_CONFIG_DOC.search(doc.split("\n", 1)[0]))

    def _assign(self, node: ast.Assign | ast.AnnAssign, *, top: bool, config: _ConfigClass | None) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        value = node.value
        for name in names:
            qual = self._qual(name)
            self.out.assigned.add(qual)
            if isinstance(value, ast.Name) and value.id != name:
                self.out.aliases[qual] = self._qual(value.id)  # `old = new` in the same scope
            if config is not None and isinstance(node, ast.AnnAssign) and not _is_classvar(node.annotation):
                if not name.startswith("_"):
                    config.fields[name] = _field(name, node)
                continue
            if config is not None:
                config.members.add(name)
            if is_switch(name) and isinstance(value, ast.Constant) and isinstance(value.value, bool):
                self.out.switches[qual] = (node.lineno, value.value)
            elif (
                not top
                and self._scope
                and config is None
                and class_literal(value)
                and self._public(name, top=False)
            ):
                self.out.class_values[qual] = (node.lineno, value)  # type: ignore[assignment]
            elif (
                top
                and not self._scope
                and len(name) > 1
                and _CONSTANT.fullmatch(name)
                and self._public(name, top=True)
                and value is not None
                and _name_of(value) not in _TYPING_FACTORIES
            ):
                self.out.defs[qual] = _Def(qual, "constant", node.lineno, True, value=value)

    def _decorators(self, node: ast.FunctionDef | ast.AsyncFunctionDef, qual: str) -> None:
        for deco in node.decorator_list:
            name = _name_of(deco)
            if (
                name == "deprecated" and self.out.defs[qual].public
            ):  # a private name deprecated: no user calls it
                message = _first_string(deco) if isinstance(deco, ast.Call) else ""
                self.out.deprecations[(qual, message)] = node.lineno
            if isinstance(deco, ast.Call):
                route = _route_of(deco)
                if route:
                    self.out.routes[route] = deco.lineno
        if self._typer_options:
            for param in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                self._typer_option(param, node.args, qual)

    def _typer_option(self, param: ast.arg, args: ast.arguments, qual: str) -> None:
        candidates: list[ast.expr] = []
        default = _default_of(param, args)
        if default is not None:
            candidates.append(default)
        if isinstance(param.annotation, ast.Subscript) and _name_of(param.annotation.value) == "Annotated":
            inner = param.annotation.slice
            candidates.extend(inner.elts if isinstance(inner, ast.Tuple) else [inner])
        for call in candidates:
            if isinstance(call, ast.Call) and _name_of(call.func) == "Option":
                names = [s for s in _string_args(call) if s.startswith("-")]
                if not names:
                    names = ["--" + param.arg.replace("_", "-")]
                default_value = call.args[0] if call.args and not _is_str(call.args[0], "-") else None
                self._record_option(tuple(names), call, default_value)

    # calls anywhere: options, environment variables, routes, deprecations ---------------------------------
    def _calls(self, tree: ast.Module) -> None:
        """A walk with the enclosing function or class of each node, for options, environment variables,
        route tables and deprecations; only into the statements whose text has a word they need (a
        module's functions mostly have none). Whether a statement's text has one is looked up among the
        lines where the words are (one search of the module per word list): searching each statement's
        text searched a line again at every depth of nesting."""
        words, nested = self._word_lines(_CALL_WORDS), None
        stack: list[tuple[ast.AST, str]] = []
        for stmt in tree.body:
            self._registry(stmt)
            if isinstance(stmt, ast.ClassDef):  # one level down: a class's methods are checked one by one
                for inner in stmt.body:
                    if _has_word(words, inner):
                        self._node(inner, stmt.name)
                        stack.append((inner, _scoped(stmt.name, inner)))
                for deco in stmt.decorator_list:
                    stack.append((deco, ""))
            elif _has_word(words, stmt):
                self._node(stmt, "")
                stack.append((stmt, _scoped("", stmt)))
        while stack:
            parent, scope = stack.pop()
            for name in parent._fields:  # ast.iter_child_nodes, in its order, without the inert leaves
                value = getattr(parent, name, None)
                if type(value) is list:
                    children = value
                elif isinstance(value, ast.AST):
                    children = [value]
                else:
                    continue
                for node in children:
                    if not isinstance(node, ast.AST) or isinstance(node, _INERT):
                        continue
                    if isinstance(node, ast.stmt):
                        if nested is None:
                            nested = self._word_lines(_NESTED_CALL_WORDS)
                        if not _has_word(nested, node):
                            continue
                        stack.append((node, _scoped(scope, node)))
                    else:
                        stack.append((node, scope))
                    if type(node) in _RECORDED:
                        self._node(node, scope)

    def _word_lines(self, pattern: re.Pattern[str]) -> list[int]:
        """The indexes in self._lines of the lines where pattern matches, in order. A word never spans
        lines, so a statement's text has one exactly when one of its lines does."""
        if not self._plain_lines:
            return [i for i, line in enumerate(self._lines) if pattern.search(line)]
        text, words = self._searched, _literal_words(pattern)
        if words is not None and pattern.flags & re.IGNORECASE:
            # lowered, the text has the (lowered) words exactly where it had them in any case
            folds = not text.isascii() and _CASE_FOLDS.search(text) is not None  # the folds are not ASCII
            text, words = (text, None) if folds else (text.lower(), words)
        if words is None:
            return _lines_matching(text, pattern)
        starts: list[int] = []
        for word in words:  # str.find is many times faster than the regular expression's alternation
            at = text.find(word)
            while at >= 0:
                starts.append(at)
                end = text.find("\n", at)
                if end < 0:
                    break
                at = text.find(word, end + 1)  # the next line with the word
        starts.sort()
        out: list[int] = []
        line = pos = 0
        for start in starts:
            line += text.count("\n", pos, start)
            pos = start
            if not out or out[-1] != line:
                out.append(line)
        return out

    def _node(self, node: ast.AST, scope: str) -> None:
        if isinstance(node, ast.Call):
            self._call(node, scope)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environ(node.value):
            key = _const_str(node.slice)
            if key and ENV_NAME.fullmatch(key):
                self._hits.append(node.lineno - 1)
                self.out.envs.setdefault(key, (node.lineno, None))
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            key = _const_str(node.left)
            if key and ENV_NAME.fullmatch(key):
                self._hits.append(node.lineno - 1)
                self.out.envs.setdefault(key, (node.lineno, None))
        elif isinstance(node, ast.Assign) and any(_name_of(t) == "urlpatterns" for t in node.targets):
            for call in ast.walk(node.value):
                if isinstance(call, ast.Call) and _name_of(call.func) in _DJANGO_ROUTES:
                    route = _const_str(call.args[0]) if call.args else None
                    if route is not None:
                        self._hits.append(call.lineno - 1)
                        self.out.routes[f"* /{route.lstrip('^/')}"] = call.lineno

    def _call(self, node: ast.Call, scope: str) -> None:
        name = _name_of(node.func)
        if name == "add_argument":
            names = tuple(s for s in _string_args(node) if s.startswith("-"))
            if names:
                self._record_option(names, node, _keyword(node, "default"))
        elif name == "option":  # click / typer decorators and calls
            self._option(node)
        elif name in _ROUTE_CALLS:
            route = _route_call(node, name)
            if route:
                self._hits.append(node.lineno - 1)
                self.out.routes[route] = node.lineno
        elif registering_scope(scope):
            registered = registration_call(node)
            if registered:
                self._hits.append(node.lineno - 1)
                self.out.registrations.setdefault(registered, node.lineno)
        env = _env_read(node, name)
        if env is not None:
            self._hits.append(node.lineno - 1)
            key, default = env
            if key not in self.out.envs or self.out.envs[key][1] is None:
                self.out.envs[key] = (node.lineno, default)
        message = _deprecation(node, name)
        if message is not None:
            self._hits.append(node.lineno - 1)
            self.out.deprecations[(scope, message)] = node.lineno

    def _registry(self, stmt: ast.stmt) -> None:
        """The names a module-level statement registers: a registry mapping's keys, or a decorator's key."""
        if isinstance(stmt, ast.Assign | ast.AnnAssign):
            mapping = string_mapping(stmt)
            if mapping is not None:
                self.out.mappings[mapping[0]] = mapping[1]
            self.out.key_aliases.update(key_aliases(stmt))
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for deco in stmt.decorator_list:
                registered = registration_call(deco, decorator=True) if isinstance(deco, ast.Call) else None
                if registered:
                    self.out.registrations.setdefault(registered, deco.lineno)

    def _option(self, node: ast.Call) -> None:
        names = tuple(s for s in _string_args(node) if s.startswith("-"))
        if names:
            self._record_option(names, node, _keyword(node, "default"))

    def _record_option(self, names: tuple[str, ...], call: ast.Call, default: ast.expr | None) -> None:
        longs = [n for n in names if n.startswith("--")]
        key = longs[0] if longs else names[0]
        rest = [k for k in call.keywords if k.arg not in ("help", "default", "deprecated")]
        shape = "|".join(_dump(k.value) + f"={k.arg}" for k in rest)
        deprecated = _truthy(_keyword(call, "deprecated")) or "deprecat" in _dump(call).lower()
        self._hits.append(call.lineno - 1)
        self.out.options[key] = _Option(key, names, call.lineno, default, shape, deprecated)


# --- comparing two versions ----------------------------------------------------------------------------


def _hook(qual: str) -> bool:
    """A special method other than a constructor or `__call__` (a framework's `__torch_function__`,
    `__get_pydantic_core_schema__`, ...): what calls it passes its arguments by position. Python's own
    protocol methods are not public at all (python_nodes._PROTOCOL_DUNDERS)."""
    short = qual.rpartition(".")[2]
    return (
        "." in qual
        and len(short) > 4
        and short.startswith("__")
        and short.endswith("__")
        and short not in ("__init__", "__new__", "__call__")
    )


def _bare_constructor(qual: str, d: _Def) -> bool:
    """An `__init__` or `__new__` that takes nothing but the instance (or class): the class is built by
    `C()` with or without it."""
    owner, _, short = qual.rpartition(".")
    return bool(owner) and short in ("__init__", "__new__") and d.kind == "function" and not d.params


# Records whose class statement writes their constructor: a dataclass or attrs class, a NamedTuple, a model.
_GENERATED_INIT_DECORATORS = frozenset({"dataclass", "define", "frozen", "mutable", "attrs", "s"})
_GENERATED_INIT_BASES = frozenset({"NamedTuple"}) | _MODEL_BASES


def _generated_constructor(qual: str, d: _Def, new_defs: dict[str, _Def]) -> bool:
    """An `__init__` dropped from a class that is now a record (`@dataclass`, attrs, a NamedTuple, a validation
    model) whose fields take every argument it took, those it took by position first and in their order:
    `C(a, b=1)` builds the class as before, from the constructor the record writes."""
    owner, _, short = qual.rpartition(".")
    cls = new_defs.get(owner)
    if short != "__init__" or cls is None or not isinstance(cls.node, ast.ClassDef):
        return False
    node = cls.node
    if not (
        any(_name_of(x) in _GENERATED_INIT_DECORATORS for x in node.decorator_list)
        or any(_name_of(b) in _GENERATED_INIT_BASES for b in node.bases)
    ):
        return False
    fields = [
        s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
    ]
    params = [p for p in d.params if p.kind not in ("vararg", "kwarg")]
    if len(params) < len(d.params) or not {p.name for p in params} <= set(fields):
        return False  # `*args`, `**kwargs` or a keyword the record does not take
    positional = [p.name for p in params if p.kind in ("posonly", "pos")]
    return fields[: len(positional)] == positional


def _sets_attribute(cls: ast.ClassDef, name: str) -> bool:
    """Whether a class body assigns the name (`name: int`, `name = ...`) or one of its own methods sets
    `self.name` (not a nested class's)."""
    for stmt in cls.body:
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, ast.AnnAssign):
            targets = [stmt.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.args.args:
            me = stmt.args.args[0].arg
            for n in ast.walk(stmt):
                if (
                    isinstance(n, ast.Attribute)
                    and isinstance(n.ctx, ast.Store)
                    and n.attr == name
                    and isinstance(n.value, ast.Name)
                    and n.value.id == me
                ):
                    return True
    return False


class _Compare:
    def __init__(self, path: str, module: str, public: bool, old: _Module, new: _Module):
        self.path, self.module, self.public, self.old, self.new = path, module, public, old, new
        self.out: list[SurfaceChange] = []
        self.shapes: dict[tuple[SurfaceKind, str], Shape] = {}

    def run(self) -> FileSurface:
        if self.public:
            self._defs()
            self._aliases_removed()
            self._class_values()
            self._configs()
        self._options()
        self._envs()
        self._routes()
        self._registrations()
        self._deprecations()
        self._switches()
        self._env_mirrors()
        self.out.sort(key=lambda c: (c.line or 0, c.kind.value, c.name))
        found = FileSurface(self.out, self.shapes)
        if self.public and self.module:
            self._imports(found)
        return found

    def _imports(self, found: FileSurface) -> None:
        """The names the version after imports from its own top-level package anew or from another of its
        modules than before (a definition moved and imported back; a package's re-export re-pointed)."""
        init = self.path.endswith("__init__.py")
        package = self.module if init else self.module.rpartition(".")[0]
        root = self.module.split(".")[0]
        for name, raw in self.new.origins.items():
            before = self.old.origins.get(name)
            if before == raw:
                continue
            now = absolute_origin(raw, package)
            if now is None or now.split(".")[0] != root:
                continue
            found.imports[self._name(name)] = now
            was = absolute_origin(before, package) if before and init else None
            if was is not None:
                found.reexports[was] = now

    def _env_mirrors(self) -> None:
        """A module-level constant named exactly as an environment variable the file adds or removes (its typed
        declaration, `X: int = 600` beside the lookup) is the same change as the variable: one fact, not two."""
        env = {
            (c.kind, c.name) for c in self.out if c.kind in (SurfaceKind.ENV_ADDED, SurfaceKind.ENV_REMOVED)
        }
        if not env:
            return
        mirror = {SurfaceKind.ADDED: SurfaceKind.ENV_ADDED, SurfaceKind.REMOVED: SurfaceKind.ENV_REMOVED}

        def same_variable(c: SurfaceChange) -> bool:
            qual = c.name[len(self.module) + 1 :] if self.module else c.name
            return (
                c.kind in mirror
                and "." not in qual
                and (mirror[c.kind], qual) in env
                and (shape := self.shapes.get((c.kind, c.name))) is not None
                and shape.kind == "constant"
            )

        self.out = [c for c in self.out if not same_variable(c)]

    def _add(self, kind: SurfaceKind, name: str, line: int | None, **extra: object) -> None:
        self.out.append(SurfaceChange(kind, name, self.path, line, **extra))  # type: ignore[arg-type]

    def _name(self, qual: str) -> str:
        return f"{self.module}.{qual}" if self.module else qual

    @staticmethod
    def _abstract_added(qual: str, d: _Def, old: dict[str, _Def]) -> bool:
        """A public method added to a public class that existed before, left to subclasses to implement."""
        owner = old.get(qual.rpartition(".")[0])
        return (
            d.kind == "function"
            and d.public
            and owner is not None
            and owner.kind == "class"
            and owner.public
            and abstract_method(d.whole)
        )

    def _still_served(self, qual: str) -> bool:
        """An old name kept working: an alias assignment, a string the module still serves (a
        `__getattr__` or deprecation mapping, `__all__`), or a definition under it."""
        outer, _, short = qual.rpartition(".")
        if qual in self.new.aliases:
            return True
        if outer:  # a member: only its class can still serve it (a common word elsewhere proves nothing)
            owner = self.new.defs.get(outer)
            return owner is not None and short in owner.strings
        return short in self.new.strings

    def _inherited(self, qual: str) -> bool:
        """A method a surviving class no longer defines that a base class of the same module (after the change)
        defines: the override went, the name still works on the class (an implementation moved up into a
        shared base is a refactor, not a removal). Bases imported from other modules are not read."""
        outer, _, short = qual.rpartition(".")
        defs = self.new.defs
        owner = defs.get(outer)
        if not outer or owner is None or owner.kind != "class" or not short:
            return False
        stack, seen = [owner], {outer}
        while stack:
            node = stack.pop().node
            for base in getattr(node, "bases", ()):
                name = _name_of(base)
                if name in seen:
                    continue
                seen.add(name)
                if f"{name}.{short}" in defs:
                    return True
                base_def = defs.get(name)
                if base_def is not None and base_def.kind == "class":
                    stack.append(base_def)
        return False

    def _now_attribute(self, qual: str, d: _Def) -> bool:
        """A property the surviving class replaced by an attribute of the same name: a class-level one (a
        NamedTuple's or dataclass's field, a class attribute) or one its methods set on `self`. Users read
        `obj.name` as before. (A plain method become an attribute is not this: `obj.name()` breaks.)"""
        outer, _, short = qual.rpartition(".")
        owner = self.new.defs.get(outer)
        node = d.node
        if (
            owner is None
            or owner.kind != "class"
            or not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        ):
            return False
        if not any(_name_of(deco) in ("property", "cached_property") for deco in node.decorator_list):
            return False
        cls = owner.whole
        return isinstance(cls, ast.ClassDef) and _sets_attribute(cls, short)

    # definitions ------------------------------------------------------------------------------------------
    def _foreign(self, d: _Def, version: _Module) -> bool:
        """A name a package's __init__ imports from outside the package for its own use — another
        distribution's (`from torch import Tensor`) or a sibling package's (`from pkg.utils import GiB`):
        not the package's API unless its `__all__` lists it or it imports it as itself (`import X as X`), as
        the standard library's are not. What it imports from its own modules (`from .lora import LoRAConfig`,
        `from pkg.config.lora import ...`) is."""
        if d.kind != "import" or not self.module or d.qualname in version.reexported:
            return False
        if version.exports is not None and d.qualname in version.exports:
            return False
        if d.origin.startswith("."):
            return d.origin.startswith("..")  # from the parent package or beyond
        return not d.origin.startswith(f"{self.module}.")

    def _defs(self) -> None:
        old, new = self.old.defs, self.new.defs
        gone = [
            q
            for q, d in old.items()
            if d.public
            and not (q in new and new[q].public)
            and _outer_kept(q, old, new)
            and not self._foreign(d, self.old)
        ]
        came = [
            q
            for q, d in new.items()
            if d.public
            and not (q in old and old[q].public)
            and _outer_new(q, old, new)
            and not self._foreign(d, self.new)
        ]
        for qual in gone:
            d = old[qual]
            if self._inherited(qual):
                continue  # an override dropped: the class still answers to the name, from its base
            if self._now_attribute(qual, d):
                continue  # a property become a plain attribute: `obj.name` reads the same
            if _bare_constructor(qual, d) and self.new.defs.get(qual.rpartition(".")[0]) is not None:
                continue  # `C()` works as before: an `__init__(self)` dropped is no name users lose
            if _generated_constructor(qual, d, self.new.defs):
                continue  # the class became a record whose generated `__init__` takes the same arguments
            target = self.new.aliases.get(qual)
            if target is not None and target in new:
                self._add(SurfaceKind.RENAMED, self._name(target), new[target].line, old=self._name(qual),
                          new=self._name(target), aliased=True)  # fmt: skip
                continue
            self._add(SurfaceKind.REMOVED, self._name(qual), d.line, aliased=self._still_served(qual))
            self.shapes[(SurfaceKind.REMOVED, self._name(qual))] = Shape(d.kind, d)
        renamed_to = {self.new.aliases[q] for q in gone if q in self.new.aliases}
        for qual in came:
            if qual in renamed_to:
                continue
            d = new[qual]
            if self._abstract_added(qual, d, old):
                self._add(SurfaceKind.ABSTRACT_ADDED, self._name(qual), d.line)
                continue
            self._add(SurfaceKind.ADDED, self._name(qual), d.line)
            self.shapes[(SurfaceKind.ADDED, self._name(qual))] = Shape(d.kind, d)
        for qual, d in new.items():
            before = old.get(qual)
            if before is None or not (d.public and before.public) or before.kind != d.kind:
                continue
            if d.kind == "function":
                if before.source == d.source:
                    continue  # the same text: nothing of it changed
                self._signature(qual, before, d)
                self._raises(qual, before, d)
                self._guards(qual, before, d)
                answers = (before.returns_switch, d.returns_switch)
                if None not in answers and answers[0] != answers[1]:
                    self._add(SurfaceKind.SWITCH_FLIPPED, self._name(qual), d.line,
                              old=str(answers[0]), new=str(answers[1]))  # fmt: skip
            elif d.kind == "class" and (bases := dropped_bases(before.node, d.node)) is not None:
                self._add(SurfaceKind.BASES_CHANGED, self._name(qual), d.line, old=bases[0], new=bases[1])
            elif d.kind == "constant" and before.value is not None and d.value is not None:
                short = qual.rsplit(".", 1)[-1]
                if (
                    not _VERSIONISH.search(short)
                    and _scalar(d.value)
                    and not same_value(before.value, d.value)
                ):
                    self._add(SurfaceKind.DEFAULT_CHANGED, self._name(qual), d.line,
                              old=_shown(before.value), new=_shown(d.value))  # fmt: skip

    def _aliases_removed(self) -> None:
        """A public alias (`old_name = new_name` in a module or a surviving public class) the version after no
        longer assigns nor defines: code that imports or calls it breaks, as with a function removed."""
        old, new = self.old.defs, self.new.defs
        for qual, target in self.old.aliases.items():
            if (
                qual in self.new.assigned  # still assigned, if not an alias now (`X: TypeAlias = A | B`)
                or qual in old
                or qual in new
                or any(part.startswith("_") for part in qual.split("."))
            ):
                continue
            if not self._served_alias(target):
                continue  # `X = Any`, `EngineId = str`: a placeholder or type shorthand, not a name users import
            outer = qual.rpartition(".")[0]
            if outer:
                owner = old.get(outer)
                if owner is None or owner.kind != "class" or not owner.public or outer not in new:
                    continue
            elif self.old.exports is not None and qual not in self.old.exports:
                continue
            self._add(SurfaceKind.REMOVED, self._name(qual), None, aliased=self._still_served(qual))
            self.shapes[(SurfaceKind.REMOVED, self._name(qual))] = Shape("alias")

    def _served_alias(self, target: str) -> bool:
        """Whether an alias's target is the module's own API: defined there, or imported from a module that is
        neither the standard library's nor typing's (`X = Any` under `if not TYPE_CHECKING` is a placeholder)."""
        if target in self.old.defs:
            return True
        origin = self.old.origins.get(target)
        if origin is None:
            return False
        top = origin.lstrip(".").split(".")[0]
        return origin.startswith(".") or (top not in sys.stdlib_module_names and top != "typing_extensions")

    def _class_values(self) -> None:
        """A literal a public class's body sets, changed: what every instance gets by default (not an enum's
        member: its value is its identity)."""
        for qual, (line, value) in self.new.class_values.items():
            before = self.old.class_values.get(qual)
            owner = self.new.defs.get(qual.rpartition(".")[0])
            if owner is None or is_enum(owner.node):
                continue
            if before is not None and not _VERSIONISH.search(qual) and not same_value(before[1], value):
                self._add(SurfaceKind.DEFAULT_CHANGED, self._name(qual), line, old=_shown(before[1]),
                          new=_shown(value))  # fmt: skip

    def _signature(self, qual: str, old: _Def, new: _Def) -> None:
        name = self._name(qual)
        before = {p.name: p for p in old.params}
        after = {p.name: p for p in new.params}
        removed = [p for p in old.params if p.name not in after and p.kind not in ("vararg", "kwarg")]
        added = [p for p in new.params if p.name not in before and p.kind not in ("vararg", "kwarg")]
        pairs: list[tuple[_Param, _Param]] = []
        for r in list(removed):
            match = [a for a in added if a.kind == r.kind and a.annotation == r.annotation
                     and same_value(a.default, r.default) and _position(old, r) == _position(new, a)]  # fmt: skip
            if len(match) == 1:
                pairs.append((r, match[0]))
                removed.remove(r)
                added.remove(match[0])
        catch_all = next((p.name for p in new.params if p.kind == "kwarg"), None)
        owner = self.new.defs.get(qual.rpartition(".")[0]) if "." in qual else None
        hook = _hook(qual)
        for r, a in pairs:
            if hook and r.kind in ("pos", "posonly"):
                continue  # the language or a framework passes a hook's arguments by position: no name to break
            aliased = r.name in new.strings
            self._add(SurfaceKind.PARAM_RENAMED, f"{name}({a.name})", new.line, old=r.name, new=a.name,
                      aliased=aliased)  # fmt: skip
        stated = set()  # removals that break callers: the positions they shift need no word of their own
        for r in removed:
            # A `**kwargs` that only stores keywords, or passes them where the old one is not known to be
            # taken, does not take it: only a function that still names it (`kwargs.pop("old")`, a warning),
            # its class when it keeps the keywords (`self.extra.get("old")`), or a function of the module it
            # hands them to with a parameter of that name does.
            aliased = r.name in new.strings or (
                catch_all is not None
                and (
                    (owner is not None and owner.kind == "class" and r.name in owner.strings)
                    or forwards_keyword(qual, new, catch_all, r.name, self.new.defs, self.new.tree)
                )
            )
            self._add(SurfaceKind.PARAM_REMOVED, f"{name}({r.name})", new.line, aliased=aliased)
            if not aliased:
                stated.add(r.name)
        for a in added:
            required = a.default is None and a.kind in ("posonly", "pos", "kwonly")
            kind = SurfaceKind.PARAM_REQUIRED if required else SurfaceKind.PARAM_ADDED
            self._add(kind, f"{name}({a.name})", new.line)
        # positional order among the parameters both versions have
        common_old = [p.name for p in old.params if p.kind in ("posonly", "pos") and p.name in after]
        common_new = [p.name for p in new.params if p.kind in ("posonly", "pos") and p.name in before]
        if common_old != common_new and sorted(common_old) == sorted(common_new):
            self._add(SurfaceKind.PARAM_REORDERED, name, new.line, old=", ".join(common_old)[:_SHOWN],
                      new=", ".join(common_new)[:_SHOWN])  # fmt: skip
        elif common_old == common_new and _positions_shift(old, new, common_old, frozenset(stated)):
            self._add(SurfaceKind.PARAM_REORDERED, name, new.line, old=_param_list(old), new=_param_list(new))
        for pname, p in after.items():
            q = before.get(pname)
            if q is None:
                continue
            if q.default is not None and p.default is None and p.kind in ("pos", "posonly", "kwonly"):
                self._add(SurfaceKind.PARAM_REQUIRED, f"{name}({pname})", new.line, old=_shown(q.default))
            elif q.default is not None and p.default is not None and not same_value(q.default, p.default):
                kind = _default_kind(pname, q.default, p.default)
                self._add(kind, f"{name}({pname})", new.line, old=_shown(q.default), new=_shown(p.default))

    def _raises(self, qual: str, old: _Def, new: _Def) -> None:
        for exc, line in new.raises.items():
            if exc not in old.raises:
                self._add(SurfaceKind.RAISES, self._name(qual), line, new=exc)

    def _guards(self, qual: str, old: _Def, new: _Def) -> None:
        """A guard that no longer stands (not one rewritten: as many guards added as removed is a rewrite)
        lets a path run that did not."""
        lifted = [g for g in old.guards if g not in new.guards]
        added = [g for g in new.guards if g not in old.guards]
        if len(lifted) <= len(added):
            return
        condition = old.guards[lifted[0]][1]
        self._add(SurfaceKind.SWITCH_FLIPPED, self._name(qual), new.line, old=condition)

    # configuration fields ---------------------------------------------------------------------------------
    def _configs(self) -> None:
        for qual, new in self.new.configs.items():
            old = self.old.configs.get(qual)
            if not new.public:
                continue
            if old is None:
                if qual in self.old.defs:  # an existing class became a config: its fields are new
                    for f in new.fields.values():
                        self._add(SurfaceKind.FIELD_ADDED, self._name(f"{qual}.{f.name}"), f.line,
                                  api=self._payload(qual))  # fmt: skip
                continue
            self._fields(qual, old, new)
        for qual, old in self.old.configs.items():
            stays = (
                qual in self.new.defs and self.new.defs[qual].kind != "import"
            )  # not moved and re-exported
            if qual not in self.new.configs and stays and old.public:
                for f in old.fields.values():  # the class stays but is no longer a config
                    self._add(SurfaceKind.FIELD_REMOVED, self._name(f"{qual}.{f.name}"), f.line,
                              api=self._payload(qual))  # fmt: skip

    def _payload(self, qual: str) -> bool:
        """Whether a config class is an HTTP API's request or response body (see _PAYLOAD_SUFFIXES)."""
        for version in (self.new, self.old):
            if qual in version.models and (version.routes or qual.endswith(_PAYLOAD_SUFFIXES)):
                return True
        return False

    def _fields(self, qual: str, old: _ConfigClass, new: _ConfigClass) -> None:
        api = self._payload(qual)
        removed = [f for n, f in old.fields.items() if n not in new.fields]
        added = [f for n, f in new.fields.items() if n not in old.fields]
        single = len(removed) == 1 and len(added) == 1  # one field out, one in: the same field renamed
        for r in list(removed):
            match = [a for a in added if a.annotation == r.annotation and same_value(a.default, r.default)]
            if len(match) != 1 and single:
                match = added
            if len(match) == 1:
                a = match[0]
                removed.remove(r)
                added.remove(a)
                self._add(SurfaceKind.FIELD_RENAMED, self._name(f"{qual}.{a.name}"), a.line,
                          old=r.name, new=a.name, aliased=new.serves(r.name), api=api)  # fmt: skip
        for r in removed:
            self._add(SurfaceKind.FIELD_REMOVED, self._name(f"{qual}.{r.name}"), r.line,
                      aliased=new.serves(r.name), api=api)  # fmt: skip
        for a in added:
            self._add(SurfaceKind.FIELD_ADDED, self._name(f"{qual}.{a.name}"), a.line, api=api)
        for n, f in new.fields.items():
            o = old.fields.get(n)
            if o is None:
                continue
            if o.default is not None and f.default is not None and not same_value(o.default, f.default):
                self._add(_default_kind(n, o.default, f.default), self._name(f"{qual}.{n}"), f.line,
                          old=_shown(o.default), new=_shown(f.default), api=api)  # fmt: skip
            if f.deprecated and not o.deprecated:
                self._add(SurfaceKind.DEPRECATION, self._name(f"{qual}.{n}"), f.line, api=api)

    # options, environment, routes, deprecations, switches ---------------------------------------------
    def _options(self) -> None:
        old, new = self.old.options, self.new.options
        # An option is its key (the first long name): one whose key another keeps as a spelling is kept; a
        # short flag both share (`--out-path, -o` → `--out-dir, -o`) does not make a renamed option the same.
        new_names = {n for o in new.values() for n in o.names}
        old_names = {n for o in old.values() for n in o.names}
        gone = [o for k, o in old.items() if k not in new and k not in new_names]
        came = [
            o for k, o in new.items() if k not in old and k not in old_names and not set(o.names) & old.keys()
        ]
        single = len(gone) == 1 and len(came) == 1  # one option out, one in: the same option renamed
        for r in list(gone):
            match = came if single else [a for a in came if a.shape == r.shape]
            if len(match) == 1:
                a = match[0]
                gone.remove(r)
                came.remove(a)
                self._add(SurfaceKind.OPTION_RENAMED, a.key, a.line, old=r.key, new=a.key,
                          aliased=r.key in self.new.strings)  # fmt: skip
        for r in gone:
            self._add(SurfaceKind.OPTION_REMOVED, r.key, r.line, aliased=r.key in self.new.strings)
        for a in came:
            self._add(SurfaceKind.OPTION_ADDED, a.key, a.line)
        for key, o in new.items():
            before = old.get(key)
            if before is None:
                continue
            if (
                before.default is not None
                and o.default is not None
                and not same_value(before.default, o.default)
            ):
                self._add(_default_kind(key, before.default, o.default), key, o.line,
                          old=_shown(before.default), new=_shown(o.default))  # fmt: skip
            if o.deprecated and not before.deprecated:
                self._add(SurfaceKind.DEPRECATION, key, o.line)

    def _envs(self) -> None:
        old, new = self.old.envs, self.new.envs
        gone = [k for k in old if k not in new and k not in self.new.strings]
        came = [k for k in new if k not in old]
        if len(gone) == 1 and len(came) == 1 and same_value(old[gone[0]][1], new[came[0]][1]):
            self._add(SurfaceKind.ENV_RENAMED, came[0], new[came[0]][0], old=gone[0], new=came[0])
            return self._env_defaults()
        for k in gone:
            self._add(SurfaceKind.ENV_REMOVED, k, old[k][0])
        for k in came:
            self._add(SurfaceKind.ENV_ADDED, k, new[k][0])
        self._env_defaults()

    def _env_defaults(self) -> None:
        for key, (line, default) in self.new.envs.items():
            before = self.old.envs.get(key)
            if before is None or before[1] is None or default is None:
                continue
            if not same_value(before[1], default):
                self._add(_default_kind(key, before[1], default), key, line, old=_shown(before[1]),
                          new=_shown(default))  # fmt: skip

    def _routes(self) -> None:
        for route, line in self.old.routes.items():
            if route not in self.new.routes:
                self._add(SurfaceKind.ROUTE_REMOVED, route, line)
        for route, line in self.new.routes.items():
            if route not in self.old.routes:
                self._add(SurfaceKind.ROUTE_ADDED, route, line)

    def _registrations(self) -> None:
        """Names users select gone or new; an old key an alias table maps to a key still registered keeps
        working (a table of the versions that dropped a key, `{"old": "0.12.0"}`, does not)."""
        lost, gained = mapping_changes(self.old.mappings, self.new.mappings)
        old, new = self.old.registrations | lost, self.new.registrations | gained
        registries = [m.keys for m in self.new.mappings.values() if m.registry]
        keys = {registered_key(name) for name in new} | {k for m in registries for k in m}
        for name, line in old.items():
            if name not in new:
                aliased = self.new.key_aliases.get(registered_key(name)) in keys
                self._add(SurfaceKind.REGISTRATION_REMOVED, name, line, aliased=aliased)
        for name, line in new.items():
            if name not in old:
                self._add(SurfaceKind.REGISTRATION_ADDED, name, line)

    def _deprecations(self) -> None:
        known_scopes = {scope for scope, _ in self.old.deprecations}
        for (scope, message), line in self.new.deprecations.items():
            if (scope, message) in self.old.deprecations:
                continue
            if (
                scope in known_scopes
                and message
                and any(_similar(message, m) for s, m in self.old.deprecations if s == scope)
            ):
                continue  # the same warning reworded
            where = self.new.defs.get(scope) if scope else None
            if where is not None and not where.public and _marked_deprecated(where):
                continue  # a private name marked deprecated: no user calls it
            # PEP 562: a module's `__getattr__` that warns deprecates the names it answers, not itself
            if scope == "__getattr__":
                for served in self._served_by_getattr() or [None]:
                    name = self._name(served) if served else self.module or self.path
                    self._add(SurfaceKind.DEPRECATION, name, line, new=message[:_SHOWN] or None)
                continue
            name = self._name(scope) if scope else self.module or self.path
            passed = _passed_params(where, line) if where is not None else []
            if passed:  # `if old_param is not None: warn(...)` deprecates the parameter, not the function
                name = f"{name}({', '.join(passed)})"
            self._add(SurfaceKind.DEPRECATION, name, line, new=message[:_SHOWN] or None)

    def _served_by_getattr(self) -> list[str]:
        """The module's public names gone from its code that a string still names (what its `__getattr__`
        answers with a warning), in their order before."""
        gone = [*self.old.defs, *(q for q in self.old.aliases if q not in self.old.defs)]
        return [
            q
            for q in gone
            if "." not in q
            and not q.startswith("_")
            and q not in self.new.defs
            and q not in self.new.aliases
            and q in self.new.strings
        ]

    def _switches(self) -> None:
        for qual, (line, value) in self.new.switches.items():
            before = self.old.switches.get(qual)
            if before is not None and before[1] != value:
                self._add(
                    SurfaceKind.SWITCH_FLIPPED, self._name(qual), line, old=str(before[1]), new=str(value)
                )
