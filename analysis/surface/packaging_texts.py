"""The packaging files' texts read into plain values, shared by the modules that read them: what a distribution
ships (packaging.py), what it requires (requirements.py), the commands and plugins it declares
(entry_points.py) and the manifests' settings (manifest_surface.py).

TOML, JSON, setup.cfg and setup.py (its literals, never run) are parsed once per text (the parsers are pure and
asked again for the same texts); a text that does not parse, or a value of the wrong type where a table or a list
belongs, reads as absent.
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from analysis.surface.shared_parse import parse as parse_python
from analysis.surface.static_values import UNKNOWN, keyword_items, module_bindings, static_value, unalias

MAX_PACKAGING_CHARS = 1_000_000


# The packaging files' parsers are pure and asked again for the same texts (every batch of a span reads the
# packaging at its newest commit): kept for the last few texts. Their results are shared: read, never changed.
_PARSED_TEXTS = 64


@lru_cache(maxsize=_PARSED_TEXTS)
def read_toml(text: str | None) -> dict:
    """A TOML text's top-level table; {} when it does not parse."""
    if not text:
        return {}
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


# Valid TOML (or JSON, or setup.py literals) may still hold a value of the wrong type where a table or a
# list belongs (`optional-dependencies = "none"`, `py-modules = true`): such a value is read as absent,
# as a file that does not parse is, and the rest of the file still counts.
def table_of(value: object) -> dict:
    """A table's entries; {} for a value that is no table."""
    return value if isinstance(value, dict) else {}


def items_of(value: object) -> list:
    """An array's items; [] for a value that is no array."""
    return list(value) if isinstance(value, list | tuple) else []


@dataclass(frozen=True, slots=True)
class FindPackages:
    """A setuptools `find_packages(...)` / `find:` request: where to look, which dotted names to take or leave."""

    where: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    namespaces: bool = True

    @staticmethod
    def of(raw: Mapping) -> FindPackages:
        def strings(key: str) -> tuple[str, ...]:
            value = raw.get(key)
            return tuple(str(v) for v in ([value] if isinstance(value, str) else items_of(value)))

        return FindPackages(
            strings("where"), strings("include"), strings("exclude"), bool(raw.get("namespaces", True))
        )


@lru_cache(maxsize=_PARSED_TEXTS)
def setup_cfg_options(text: str | None) -> dict:
    """What a setup.cfg says of packages, modules, requirements and classifiers; {} when it does not parse."""
    if not text:
        return {}
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return {}
    out: dict = {}
    if parser.has_section("options"):
        opts = parser["options"]
        if "packages" in opts:
            raw = opts["packages"].strip()
            if raw.startswith("find"):
                find = (
                    dict(parser["options.packages.find"])
                    if parser.has_section("options.packages.find")
                    else {}
                )
                out["packages"] = FindPackages(
                    tuple(_lines(find.get("where", ""))), tuple(_lines(find.get("include", ""))),
                    tuple(_lines(find.get("exclude", ""))), raw.startswith("find_namespace"),
                )  # fmt: skip
            else:
                out["packages"] = _lines(raw)
        if "package_dir" in opts:
            out["package_dir"] = {
                k.strip(): v.strip()
                for k, _, v in (line.partition("=") for line in _lines(opts["package_dir"]))
            }
        if "py_modules" in opts:
            out["py_modules"] = _lines(opts["py_modules"])
        out["install_requires"] = _lines(opts.get("install_requires", ""))
        out["python_requires"] = opts.get("python_requires", "").strip() or None
    if parser.has_section("options.extras_require"):
        out["extras_require"] = {k: _lines(v) for k, v in parser["options.extras_require"].items()}
    if parser.has_section("metadata"):
        out["classifiers"] = _lines(parser["metadata"].get("classifiers", ""))
    return out


def _lines(value: str) -> list[str]:
    return [s.strip() for s in re.split(r"[\n,]", value) if s.strip() and not s.strip().startswith("#")]


@lru_cache(maxsize=_PARSED_TEXTS)
def setup_py_keywords(text: str | None) -> dict:
    """The keyword arguments of setup(...) (also those spread from a dict: `setup(**metadata)`) whose values
    literals spell, directly or through named constants (static_values.py), and find_packages(...) calls;
    "_opaque" when the call has keywords we cannot read (computed packages)."""
    if not text or len(text) > MAX_PACKAGING_CHARS:
        return {}
    try:
        tree = parse_python(text.removeprefix("\ufeff"))  # a BOM Python accepts, ast.parse does not
    except (SyntaxError, ValueError, RecursionError):
        return {}
    out: dict = {}
    bound = module_bindings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node) == "setup":
            keywords: list[tuple[str, ast.expr]] = []
            for kw in node.keywords:
                # `setup(**metadata)`: the keywords of the dict bound to that name
                keywords += keyword_items(tree, kw.value, bound) if kw.arg is None else [(kw.arg, kw.value)]
            for arg, given in keywords:
                value = unalias(given, bound)
                if isinstance(value, ast.Call) and call_name(value) in (
                    "find_packages",
                    "find_namespace_packages",
                ):
                    out[arg] = FindPackages(
                        tuple(_strs(keyword_value(value, "where") or (value.args[0] if value.args else None))),
                        tuple(_strs(keyword_value(value, "include"))), tuple(_strs(keyword_value(value, "exclude"))),
                        call_name(value) == "find_namespace_packages",
                    )  # fmt: skip
                    continue
                try:
                    out[arg] = ast.literal_eval(value)
                except (ValueError, TypeError, SyntaxError, RecursionError):
                    # names bound to literals, "...".format(...) and f-strings of them
                    computed = static_value(value, bound)
                    if computed is not UNKNOWN:
                        out[arg] = computed
                    elif arg in ("packages", "package_dir", "py_modules"):
                        out["_opaque"] = True
    return out


@dataclass(frozen=True, slots=True)
class ExtensionFiles:
    """What setup.py's extension modules compile, relative to its folder: source files or glob patterns
    (`glob("src/*.cpp")`), the folders of headers they include, and the source folders of extensions with no
    sources of their own, built by CMake from a `build_ext` (`CMakeExtension("pkg._C", sourcedir=".")`)."""

    sources: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ()
    cmake_dirs: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.sources or self.include_dirs or self.cmake_dirs)


# Calls that describe a compiled module: setuptools' `Extension` and its kin (`Pybind11Extension`,
# `CppExtension`, `CUDAExtension`, a project's own `CMakeExtension`), and Cython's `cythonize("pkg/*.pyx")`.
_SOURCE_KEYWORDS = ("sources", "depends")
_CMAKE_DIR_KEYWORDS = ("sourcedir", "source_dir", "cmake_lists_dir", "cmake_source_dir")


@lru_cache(maxsize=_PARSED_TEXTS)
def setup_py_extensions(text: str | None) -> ExtensionFiles:
    """The files setup.py's `Extension(...)` calls (wherever they are written: in `ext_modules=`, in a list
    assigned before) compile, read from its syntax tree, never run. Only what literals, names bound to them,
    `glob()`, `sorted()`, `os.path.join()` and `+` spell is read; a computed path is left out."""
    if not text or len(text) > MAX_PACKAGING_CHARS:
        return ExtensionFiles()
    try:
        tree = parse_python(text.removeprefix("\ufeff"))
    except (SyntaxError, ValueError, RecursionError):
        return ExtensionFiles()
    bound = {
        target.id: node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    inits = _own_inits(tree)
    sources: list[str] = []
    include_dirs: list[str] = []
    cmake_dirs: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node)
        if name == "cythonize":
            sources += [p for arg in node.args[:1] for p in _paths(arg, bound)]
            continue
        if not name.endswith("Extension"):
            continue
        arguments = _by_parameter(node, inits.get(name))
        found = [p for key in _SOURCE_KEYWORDS for p in _paths(arguments.get(key), bound)]
        sources += found
        include_dirs += _paths(arguments.get("include_dirs"), bound)
        folder = next((arguments[k] for k in _CMAKE_DIR_KEYWORDS if k in arguments), None)
        if folder is not None or (not found and "cmake" in name.lower()):
            # a folder computed (`os.path.dirname(__file__)`) is, by CMake's convention, setup.py's own
            cmake_dirs += _paths(folder, bound) or [""]
    return ExtensionFiles(tuple(dict.fromkeys(sources)), tuple(dict.fromkeys(include_dirs)),
                          tuple(dict.fromkeys(cmake_dirs)))  # fmt: skip


def _own_inits(tree: ast.Module) -> dict[str, ast.arguments]:
    """The `__init__` parameters of the Extension subclasses the file defines (`class CMakeExtension(Extension)`)."""
    out: dict[str, ast.arguments] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            init = next(
                (f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None
            )
            if init is not None:
                out[node.name] = init.args
    return out


def _by_parameter(call: ast.Call, init: ast.arguments | None) -> dict[str, ast.expr]:
    """An Extension call's arguments by parameter name. setuptools' own takes (name, sources, ...); a subclass
    the file defines takes its `__init__`'s parameters, with their defaults (`CMakeExtension(name, path,
    sourcedir="")`: its second argument is a path inside the package, not a source)."""
    out = {k.arg: k.value for k in call.keywords if k.arg is not None}
    if init is None:
        names = ["name", "sources"]
        defaults: dict[str, ast.expr] = {}
    else:
        params = [*init.posonlyargs, *init.args][1:]  # without self
        names = [a.arg for a in params]
        defaults = dict(zip(names[len(names) - len(init.defaults) :], init.defaults, strict=True))
        defaults.update({a.arg: d for a, d in zip(init.kwonlyargs, init.kw_defaults, strict=True) if d})
    for param, arg in zip(names, call.args, strict=False):
        if not isinstance(arg, ast.Starred):
            out.setdefault(param, arg)
    for param, default in defaults.items():
        out.setdefault(param, default)
    return out


_PATH_CALLS = (
    "glob",
    "iglob",
    "sorted",
    "list",
    "tuple",
    "set",
    "abspath",
    "normpath",
    "realpath",
    "Path",
    "str",
)
_MAX_DEPTH = 20  # names bound to names bound to ...: a cycle (`a = b; b = a`) ends here


def _paths(node: ast.expr | None, bound: Mapping[str, ast.expr], depth: int = 0) -> list[str]:
    """The paths (or glob patterns) an expression spells; [] where it computes one we cannot read."""
    if node is None or depth > _MAX_DEPTH:
        return []
    if isinstance(node, ast.Constant):
        return [node.value] if isinstance(node.value, str) else []
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [p for item in node.elts for p in _paths(item, bound, depth + 1)]
    if isinstance(node, ast.Starred):
        return _paths(node.value, bound, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _paths(node.left, bound, depth + 1) + _paths(node.right, bound, depth + 1)
    if isinstance(node, ast.Name):
        return _paths(bound.get(node.id), bound, depth + 1)
    if isinstance(node, ast.Call):
        name = call_name(node)
        if name in _PATH_CALLS and node.args:
            return _paths(node.args[0], bound, depth + 1)
        if name == "join" and node.args:  # os.path.join("src", "core.cpp"): every part a single path
            parts = [_paths(arg, bound, depth + 1) for arg in node.args]
            if all(len(p) == 1 for p in parts):
                return ["/".join(p[0].strip("/") for p in parts if p[0].strip("/"))]
    return []


def call_name(node: ast.Call) -> str:
    """The called name: `setup` of `setup(...)` and of `setuptools.setup(...)`; "" for anything else."""
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def keyword_value(call: ast.Call, name: str) -> ast.expr | None:
    """The expression a call passes as keyword `name`, None where it passes none."""
    return next((k.value for k in call.keywords if k.arg == name), None)


def _strs(node: ast.expr | None) -> list[str]:
    if node is None:
        return []
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return []
    return (
        [value]
        if isinstance(value, str)
        else [str(v) for v in value]
        if isinstance(value, list | tuple)
        else []
    )


def json_object(text: str | None) -> dict | None:
    """A JSON text's top-level object (package.json); None when it does not parse or is not an object."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def toml_table(text: str | None, *keys: str) -> dict:
    """The table at `keys` of a TOML text; {} when the text does not parse or holds no such table."""
    table = read_toml(text)
    for key in keys:
        table = table_of(table.get(key))
    return table


def line_of(text: str | None, needle: str) -> int | None:
    """The 1-based line where `needle` first occurs in `text`; None when it does not."""
    if not text or not needle:
        return None
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else None
