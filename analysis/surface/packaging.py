"""What a repository's distribution ships, and what its packaging metadata promises users.

From the packaging files at a commit (pyproject.toml for setuptools, hatch, poetry, flit, pdm, maturin and
scikit-build; setup.cfg; setup.py read as literals, never run; package.json; Cargo.toml; go.mod) this module
decides which paths end up in what users install (`Commit.shipped`). A folder of examples, tutorials or docs
beside the package is not shipped because the packaging does not ship it, whatever its name. The nearest
packaging file above a path decides for it, so a monorepo's packages each speak for their own folder.

It also states packaging changes as surface facts: a supported Python (or Node, Rust, Go) version dropped, and
real dependency changes — the requirements users get (runtime, optional extras, build requirements), read with
tomllib/json/ast, never a tool section, a dev group or a coverage `omit` list.

Where setuptools' package discovery needs to know which folders hold `__init__.py`, the caller passes the
commit's tree (`tree`: every path at the commit); without it every folder counts as a package.

Over 400 lines because it is one reading: each packaging format (setuptools, hatch, poetry, flit, pdm,
maturin, package.json, Cargo, go.mod) answers the same two questions, and they are compared side by side.
"""

from __future__ import annotations

import ast
import configparser
import dataclasses
import fnmatch
import json
import posixpath
import re
import tomllib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import pathspec
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from analysis.models import SurfaceChange, SurfaceKind
from analysis.surface.packaging_files import is_requirements_file
from analysis.surface.shared_parse import parse as parse_python

MAX_PACKAGING_CHARS = 1_000_000

# setuptools' own automatic discovery leaves these top-level folders out (FlatLayoutPackageFinder).
_SETUPTOOLS_EXCLUDE = (
    "ci", "bin", "debian", "doc", "docs", "documentation", "manpages", "news", "newsfragments", "changelog",
    "test", "tests", "unit_test", "unit_tests", "example", "examples", "scripts", "tools", "util", "utils",
    "python", "build", "dist", "venv", "env", "requirements", "tasks", "fabfile", "site_scons", "benchmark",
    "benchmarks", "exercise", "exercises", "htmlcov",
)  # fmt: skip
_SETUPTOOLS_MODULE_EXCLUDE = (
    "setup", "conftest", "test", "tests", "example", "examples", "build", "toxfile", "noxfile", "pavement",
    "dodo", "tasks", "fabfile",
)  # fmt: skip
_BACKENDS = {
    "setuptools": "setuptools",
    "hatchling": "hatch",
    "poetry": "poetry",
    "flit_core": "flit",
    "flit": "flit",
    "pdm": "pdm",
    "maturin": "maturin",
    "scikit_build_core": "scikit-build",
    "mesonpy": "meson",
}
# A requirements file named for a development task (tests, docs, CI jobs, translation or release
# scripts) installs tools for the maintainers, not what users get.
_DEV_REQUIREMENTS = re.compile(
    r"(^|[^a-z])(dev|develop|development|test|tests|testing|doc|docs|lint|ci|bench|benchmark|build|"
    r"typing|mypy|format|style|coverage|github|actions|workflows?|translations?|i18n|l10n|release|"
    r"publish|deploy|pre-commit|precommit|tools?|tooling|scripts?|examples?|notebooks?|tox|nox)([^a-z]|$)"
)
_PY_CLASSIFIER = re.compile(r"Programming Language :: Python :: (\d+\.\d+)$")


@dataclass(frozen=True, slots=True)
class Distribution:
    """One packaging file's idea of what it ships. Paths are the repository's own (posix, no leading /)."""

    root: str  # folder of the packaging file: "" at the top, else "sub/dir/"
    system: str
    prefixes: tuple[str, ...] = ()  # shipped path prefixes ("pkg/", "src/pkg/", "mod.py")
    patterns: tuple[str, ...] = ()  # gitignore-style patterns relative to root (npm "files", Cargo include)
    excludes: tuple[str, ...] = ()  # gitignore-style patterns relative to root taken out again
    import_roots: tuple[str, ...] = ()  # where dotted module names start ("src/")
    understood: bool = True
    name: str = ""  # the project's canonical name ("" unknown)

    def ships(self, path: str) -> bool:
        if not path.startswith(self.root):
            return False
        inner = path[len(self.root) :]
        if self.excludes and _spec(self.excludes).match_file(inner):
            return False
        if any(path == p or (p.endswith("/") and path.startswith(p)) for p in self.prefixes):
            return True
        return bool(self.patterns) and _spec(self.patterns).match_file(inner)


@lru_cache(maxsize=256)
def _spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """Gitignore-style patterns, compiled once; ValueError for one git cannot read (`!`)."""
    return pathspec.GitIgnoreSpec.from_lines(patterns)


@dataclass(frozen=True, slots=True)
class DependencyChange:
    name: str  # canonical project name
    old: str | None  # the requirement as written before (None: added)
    new: str | None  # after (None: removed)
    scope: str  # runtime | optional:<extra> | build
    line: int | None = None


@dataclass(slots=True)
class Packaging:
    """Every distribution found, nearest-first lookup by folder."""

    distributions: list[Distribution] = field(default_factory=list)

    def owner(self, path: str) -> Distribution | None:
        best: Distribution | None = None
        for d in self.distributions:
            if path.startswith(d.root) and (best is None or len(d.root) > len(best.root)):
                best = d
        return best

    def shipped(self, paths: Iterable[str]) -> frozenset[str] | None:
        """The paths the distributions ship; None when a path's nearest packaging file is not understood
        (or there is none)."""
        out = set()
        for path in paths:
            owner = self.owner(path)
            if owner is None or not owner.understood:
                return None
            if owner.ships(path):
                out.add(path)
        return frozenset(out)

    def names(self) -> frozenset[str]:
        """The canonical names of the projects this repository builds: a pin on one of them moves with
        the repository's own releases, it is no outside dependency."""
        return frozenset(d.name for d in self.distributions if d.name)

    def module_name(self, path: str) -> str:
        """The dotted name a Python file is imported by: "src/pkg/sub/mod.py" → "pkg.sub.mod"."""
        owner = self.owner(path)
        inner = path
        roots = sorted(
            (owner.import_roots if owner else ()) or ((owner.root,) if owner else ("",)),
            key=len,
            reverse=True,
        )
        for root in roots:
            if path.startswith(root):
                inner = path[len(root) :]
                break
        return module_from_path(inner)


def module_from_path(path: str) -> str:
    stem = path.rsplit(".", 1)[0] if path.endswith((".py", ".pyi")) else path
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    if len(parts) > 1 and parts[0] in ("src", "lib", "python"):
        parts = parts[1:]
    return ".".join(parts)


def read_packaging(files: Mapping[str, str], tree: Collection[str] | None = None) -> Packaging | None:
    """The distributions declared by `files` ({path: text} of packaging files at one commit); None when
    none is understood."""
    by_folder: dict[str, dict[str, str]] = {}
    for path, text in files.items():
        if text is None or len(text) > MAX_PACKAGING_CHARS:
            continue
        folder = posixpath.dirname(path)
        by_folder.setdefault(folder + "/" if folder else "", {})[posixpath.basename(path)] = text
    found = Packaging()
    listing = set(tree) if tree is not None else None
    for folder, texts in by_folder.items():
        dist = _distribution(folder, texts, listing)
        if dist is not None:
            found.distributions.append(dist)
    if not any(d.understood for d in found.distributions):
        return None
    return found


def _distribution(folder: str, texts: dict[str, str], listing: set[str] | None) -> Distribution | None:
    """What one folder's packaging files declare; None when nothing, or when they cannot be read."""
    try:
        dist = _python(folder, texts, listing)
        if dist is None and "package.json" in texts:
            dist = _npm(folder, texts["package.json"], listing)
        if dist is None and "Cargo.toml" in texts:
            dist = _cargo(folder, texts["Cargo.toml"], listing)
        if dist is None and "go.mod" in texts:
            dist = _go(folder, listing)
        if dist is None:
            return None
        for patterns in (dist.patterns, dist.excludes):
            _spec(patterns)  # a pattern git cannot read raises here, not later in `ships`
        return dataclasses.replace(dist, name=_project_name(texts))
    except (TypeError, AttributeError, ValueError):
        # A backstop for values of a type no reader above expects: read as a file that does not parse is,
        # so one malformed file does not take the facts of every commit that reads it.
        return None


# --- Python --------------------------------------------------------------------------------------------


# The packaging files' parsers are pure and asked again for the same texts (every batch of a span reads the
# packaging at its newest commit): kept for the last few texts. Their results are shared: read, never changed.
_PARSED_TEXTS = 64


@lru_cache(maxsize=_PARSED_TEXTS)
def _toml(text: str | None) -> dict:
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
def _table(value: object) -> dict:
    """A table's entries; {} for a value that is no table."""
    return value if isinstance(value, dict) else {}


def _items(value: object) -> list:
    """An array's items; [] for a value that is no array."""
    return list(value) if isinstance(value, list | tuple) else []


def _python(root: str, texts: dict[str, str], tree: set[str] | None) -> Distribution | None:
    if not ({"pyproject.toml", "setup.cfg", "setup.py"} & texts.keys()):
        return None
    data = _toml(texts.get("pyproject.toml"))
    if not (
        "setup.py" in texts
        or _CFG_DISTRIBUTION.search(texts.get("setup.cfg") or "")
        or _declares_distribution(data)
    ):
        return None  # a folder's tools' settings ([tool.ruff], setup.cfg's [flake8] ...): nothing is built
    backend = str(_table(data.get("build-system")).get("build-backend") or "")
    system = next((name for key, name in _BACKENDS.items() if backend.startswith(key)), "")
    if not system:
        system = "setuptools" if ("setup.py" in texts or "setup.cfg" in texts or not data) else ""
    tool = _table(data.get("tool"))
    if not system:
        system = next((s for s in ("poetry", "hatch", "flit", "pdm", "maturin") if s in tool), "")
    if not system:
        system = "setuptools"  # PEP 517's fallback for a pyproject.toml without a backend
    name = _normal(
        str(_table(data.get("project")).get("name") or _table(tool.get("poetry")).get("name") or "")
    )
    if system == "setuptools" or system == "scikit-build":
        return _setuptools(root, data, texts, tree, name)
    if system == "hatch":
        return _hatch(root, _table(tool.get("hatch")), tree, name)
    if system == "poetry":
        return _poetry(root, _table(tool.get("poetry")), tree, name)
    if system == "flit":
        module = str(_table(_table(tool.get("flit")).get("module")).get("name") or name)
        return _default_layout(root, "flit", module.replace(".", "/"), tree)
    if system == "pdm":
        return _pdm(root, _table(_table(tool.get("pdm")).get("build")), tree, name)
    if system == "maturin":
        return _maturin(root, _table(tool.get("maturin")), tree, name)
    return Distribution(root, system, understood=False)


_CFG_DISTRIBUTION = re.compile(r"^\[(?:metadata|options)\]", re.MULTILINE)  # setup.cfg's own sections
_BUILD_TOOLS = ("setuptools", "scikit-build", "poetry", "hatch", "flit", "pdm", "maturin")


def _declares_distribution(data: dict) -> bool:
    """Whether a pyproject.toml (without setup.py or setup.cfg beside it) describes something to build: project
    metadata, a build system, or a build tool's own table. PEP 517's setuptools fallback applies to a
    project; a file holding only other tools' settings is not one."""
    tool = _table(data.get("tool"))
    return "project" in data or "build-system" in data or any(name in tool for name in _BUILD_TOOLS)


def _project_name(texts: dict[str, str]) -> str:
    """The canonical name of the project a folder's packaging files declare, "" when none says."""
    data = _toml(texts.get("pyproject.toml"))
    name = _table(data.get("project")).get("name") or _table(_table(data.get("tool")).get("poetry")).get(
        "name"
    )
    if not name and "setup.cfg" in texts:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(texts["setup.cfg"])
            name = parser.get("metadata", "name", fallback=None)
        except configparser.Error:
            name = None
    if not name and "setup.py" in texts:
        name = _setup_py(texts["setup.py"]).get("name")
    if not name and "Cargo.toml" in texts:
        name = _table(_toml(texts["Cargo.toml"]).get("package")).get("name")
    if not name and "package.json" in texts:
        value = json_object(texts["package.json"])
        name = value.get("name") if value is not None else None
    return canonicalize_name(name) if isinstance(name, str) and name.strip() else ""


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _exists_dir(tree: set[str] | None, folder: str) -> bool | None:
    if tree is None:
        return None
    folder = folder.rstrip("/") + "/"
    return any(p.startswith(folder) for p in tree)


def _default_layout(
    root: str, system: str, name: str, tree: set[str] | None, roots: tuple[str, ...] = ("src/", "")
) -> Distribution:
    """The package named after the project: `<name>/`, `src/<name>/` or `<name>.py`."""
    for where in roots:
        if _exists_dir(tree, f"{root}{where}{name}") is not False:
            if tree is None and where:
                continue  # without the tree, prefer the flat layout...
            return Distribution(root, system, (f"{root}{where}{name}/",), import_roots=(f"{root}{where}",))
        if tree is not None and f"{root}{where}{name}.py" in tree:
            return Distribution(root, system, (f"{root}{where}{name}.py",), import_roots=(f"{root}{where}",))
    if tree is None:  # ...and ship both spellings, one of which is there
        return Distribution(
            root,
            system,
            (f"{root}{name}/", f"{root}src/{name}/", f"{root}{name}.py"),
            import_roots=(f"{root}src/", root),
        )
    return Distribution(root, system, understood=False)


def _setuptools(
    root: str, data: dict, texts: dict[str, str], tree: set[str] | None, name: str
) -> Distribution:
    config = _table(_table(data.get("tool")).get("setuptools"))
    options = _setup_cfg(texts.get("setup.cfg"))
    literal = _setup_py(texts.get("setup.py"))
    package_dir = config.get("package-dir") or options.get("package_dir") or literal.get("package_dir") or {}
    if not isinstance(package_dir, dict):
        package_dir = {}
    base = str(package_dir.get("", "")).strip("/")
    base = f"{base}/" if base else ""
    packages = config.get("packages", options.get("packages", literal.get("packages")))
    modules = config.get("py-modules") or options.get("py_modules") or literal.get("py_modules")
    prefixes: list[str] = [f"{root}{base}{m}.py" for m in _items(modules) if isinstance(m, str)]
    if isinstance(packages, list):
        for package in packages:
            if isinstance(package, str):
                mapped = package_dir.get(package)
                folder = str(mapped).strip("/") if mapped else base + package.replace(".", "/")
                prefixes.append(f"{root}{folder}/")
        return Distribution(root, "setuptools", _top(prefixes), import_roots=(f"{root}{base}",))
    if (isinstance(packages, dict) and "find" in packages) or isinstance(packages, _Find):
        find = packages if isinstance(packages, _Find) else _Find.of(_table(packages.get("find")))
        wheres = [w.strip("./") for w in find.where] or [base.rstrip("/")]
        for where in wheres:
            folder = f"{root}{where}/" if where else root
            prefixes.extend(_find_packages(folder, find, tree))
        roots = tuple(f"{root}{w}/" if w else root for w in wheres)
        return Distribution(root, "setuptools", tuple(prefixes), import_roots=roots)
    if packages is not None or literal.get("_opaque"):
        return Distribution(root, "setuptools", understood=False)  # computed in setup.py: not ours to guess
    # automatic discovery: src layout, else flat layout without setuptools' excluded names
    if tree is None:
        return Distribution(root, "setuptools", understood=False)
    if _exists_dir(tree, f"{root}src"):
        return Distribution(root, "setuptools", (f"{root}src/",), import_roots=(f"{root}src/",))
    tops = {p[len(root) :].split("/", 1)[0] for p in tree if p.startswith(root) and "/" in p[len(root) :]}
    flat = [f"{root}{t}/" for t in sorted(tops) if f"{root}{t}/__init__.py" in tree and not _excluded_top(t)]
    singles = [
        p for p in tree
        if p.startswith(root) and "/" not in p[len(root):] and p.endswith(".py")
        and posixpath.basename(p)[:-3] not in _SETUPTOOLS_MODULE_EXCLUDE and not p[len(root):].startswith(("_", "."))
    ]  # fmt: skip
    return Distribution(root, "setuptools", tuple(flat or singles), import_roots=(root,))


def _excluded_top(name: str) -> bool:
    return name in _SETUPTOOLS_EXCLUDE or name.startswith((".", "_")) or "." in name


@dataclass(frozen=True, slots=True)
class _Find:
    where: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    namespaces: bool = True

    @staticmethod
    def of(raw: Mapping) -> _Find:
        def strings(key: str) -> tuple[str, ...]:
            value = raw.get(key)
            return tuple(str(v) for v in ([value] if isinstance(value, str) else _items(value)))

        return _Find(
            strings("where"), strings("include"), strings("exclude"), bool(raw.get("namespaces", True))
        )


def _find_packages(folder: str, find: _Find, tree: set[str] | None) -> list[str]:
    """setuptools' find_packages over the tree: folders below `folder` that are packages (hold
    __init__.py, or any folder for namespace discovery) and match include/exclude; a folder that is not a
    package is not searched further. Without the tree every folder counts."""
    include = find.include or ("*",)
    if tree is None:
        # the include patterns' literal stems are the packages to ship
        stems = {p.split("*", 1)[0].rstrip(".").replace(".", "/") for p in include}
        if "" in stems:
            return [folder]
        return [f"{folder}{s}/" for s in sorted(stems)]
    dirs: set[str] = set()  # every folder above a path (relative to `folder`), its ancestors with it
    for path in tree:
        if path.startswith(folder):
            rest = path[len(folder) :]
            if "/" not in rest:
                continue
            d = rest.rpartition("/")[0]
            while d not in dirs:  # one found: its ancestors are in already (thousands of paths, every batch)
                dirs.add(d)
                if "/" not in d:
                    break
                d = d.rpartition("/")[0]
    shipped = []
    for d in sorted(dirs):
        chain = d.split("/")
        ok = True
        for i in range(1, len(chain) + 1):
            sub = "/".join(chain[:i])
            if "." in chain[i - 1] or not (find.namespaces or f"{folder}{sub}/__init__.py" in tree):
                ok = False
                break
        dotted = d.replace("/", ".")
        if (
            ok
            and any(fnmatch.fnmatchcase(dotted, p) for p in include)
            and not any(fnmatch.fnmatchcase(dotted, p) for p in find.exclude)
        ):
            shipped.append(f"{folder}{d}/")
    return _top(shipped)


def _top(prefixes: Iterable[str]) -> tuple[str, ...]:
    """Prefixes without the ones another prefix covers (kept for files: a sub-package listed alone)."""
    ordered = sorted(set(prefixes))
    out: list[str] = []
    for p in ordered:
        if not any(p.startswith(q) and q.endswith("/") for q in out):
            out.append(p)
    return tuple(out)


@lru_cache(maxsize=_PARSED_TEXTS)
def _setup_cfg(text: str | None) -> dict:
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
                out["packages"] = _Find(
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
def _setup_py(text: str | None) -> dict:
    """The literal keyword arguments of setup(...), and find_packages(...) calls; "_opaque" when the call
    has keywords we cannot read (computed packages)."""
    if not text or len(text) > MAX_PACKAGING_CHARS:
        return {}
    try:
        tree = parse_python(text.removeprefix("\ufeff"))  # a BOM Python accepts, ast.parse does not
    except (SyntaxError, ValueError, RecursionError):
        return {}
    out: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node) == "setup":
            for kw in node.keywords:
                if kw.arg is None:
                    continue
                value = kw.value
                if isinstance(value, ast.Call) and _call_name(value) in (
                    "find_packages",
                    "find_namespace_packages",
                ):
                    out[kw.arg] = _Find(
                        tuple(_strs(_kwarg(value, "where") or (value.args[0] if value.args else None))),
                        tuple(_strs(_kwarg(value, "include"))), tuple(_strs(_kwarg(value, "exclude"))),
                        _call_name(value) == "find_namespace_packages",
                    )  # fmt: skip
                    continue
                try:
                    out[kw.arg] = ast.literal_eval(value)
                except (ValueError, TypeError, SyntaxError, RecursionError):
                    if kw.arg in ("packages", "package_dir", "py_modules"):
                        out["_opaque"] = True
    return out


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _kwarg(call: ast.Call, name: str) -> ast.expr | None:
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


def _hatch(root: str, hatch: dict, tree: set[str] | None, name: str) -> Distribution:
    build = _table(hatch.get("build"))
    wheel = _table(_table(build.get("targets")).get("wheel"))
    packages = _items(wheel.get("packages") or build.get("packages"))
    only = _items(wheel.get("only-include") or build.get("only-include"))
    include = _items(wheel.get("include") or build.get("include"))
    exclude = tuple(str(e) for e in _items(wheel.get("exclude") or build.get("exclude")))
    sources = wheel.get("sources") or build.get("sources") or {}
    roots = (
        tuple(f"{root}{str(k).strip('/')}/" if str(k).strip("/") else root for k in sources)
        if isinstance(sources, dict)
        else ()
    )
    if packages or only:
        prefixes = tuple(
            f"{root}{str(p).strip('/')}" + ("" if str(p).endswith(".py") else "/") for p in (packages or only)
        )
        if packages and not roots:
            roots = tuple(
                sorted(
                    {
                        f"{root}{posixpath.dirname(str(p).strip('/'))}/".replace(f"{root}/", root)
                        for p in packages
                    }
                )
            )
        return Distribution(root, "hatch", prefixes, excludes=exclude, import_roots=roots or (root,))
    if include:
        return Distribution(root, "hatch", (), tuple(str(i) for i in include), exclude, roots or (root,))
    dist = _default_layout(root, "hatch", name, tree)
    return Distribution(
        dist.root,
        dist.system,
        dist.prefixes,
        excludes=exclude,
        import_roots=dist.import_roots,
        understood=dist.understood,
    )


def _poetry(root: str, poetry: dict, tree: set[str] | None, name: str) -> Distribution:
    packages = poetry.get("packages")
    if isinstance(packages, list) and packages:
        prefixes, roots = [], set()
        for p in packages:
            if not isinstance(p, dict) or "include" not in p:
                continue
            base = str(p.get("from") or "").strip("/")
            base = f"{base}/" if base else ""
            target = str(p["include"]).strip("/")
            prefixes.append(
                f"{root}{base}{target}" + ("" if target.endswith(".py") or "*" in target else "/")
            )
            roots.add(f"{root}{base}")
        patterns = tuple(x[len(root) :] for x in prefixes if "*" in x)
        return Distribution(
            root,
            "poetry",
            tuple(x for x in prefixes if "*" not in x),
            patterns,
            import_roots=tuple(sorted(roots)),
        )
    return _default_layout(root, "poetry", name, tree)


def _pdm(root: str, build: dict, tree: set[str] | None, name: str) -> Distribution:
    package_dir = str(build.get("package-dir") or "").strip("/")
    if not package_dir and _exists_dir(tree, f"{root}src"):
        package_dir = "src"
    base = f"{root}{package_dir}/" if package_dir else root
    excludes = tuple(str(e) for e in [*_items(build.get("excludes")), *_items(build.get("source-includes"))])
    includes = _items(build.get("includes"))
    if includes:
        return Distribution(root, "pdm", (), tuple(str(i) for i in includes), excludes, (base,))
    if tree is None:
        dist = _default_layout(root, "pdm", name, tree)
        return Distribution(root, "pdm", dist.prefixes, excludes=excludes, import_roots=dist.import_roots)
    tops = sorted(
        {p[len(base) :].split("/", 1)[0] for p in tree if p.startswith(base) and "/" in p[len(base) :]}
    )
    # pdm-backend's default: every top-level package but `tests`, which goes to the sdist only
    packages = [f"{base}{t}/" for t in tops if f"{base}{t}/__init__.py" in tree and t != "tests"]
    return Distribution(root, "pdm", tuple(packages), excludes=excludes, import_roots=(base,))


def _maturin(root: str, maturin: dict, tree: set[str] | None, name: str) -> Distribution:
    source = str(maturin.get("python-source") or "").strip("/")
    base = f"{root}{source}/" if source else root
    module = str(maturin.get("module-name") or name).split(".", 1)[0]
    manifest = str(maturin.get("manifest-path") or "Cargo.toml")
    crate = posixpath.dirname(posixpath.normpath(f"{root}{manifest}"))
    crate = f"{crate}/" if crate and crate != "." else ""
    prefixes = (f"{base}{module}/", f"{crate}src/", f"{crate}build.rs", f"{crate}Cargo.toml")
    return Distribution(root, "maturin", prefixes, import_roots=(base,))


# --- other ecosystems ------------------------------------------------------------------------------------


def _npm(root: str, text: str, listing: set[str] | None = None) -> Distribution | None:
    data = json_object(text)
    if data is None:
        return None
    files = data.get("files")
    if data.get("private") is True and root:
        # never published: a docs site's or a tool's package.json inside a repository ships nothing
        return Distribution(root, "npm")
    if not isinstance(files, list) or not files:
        # everything not .npmignore'd, or an application at the top (deployed, not published): unknown
        return Distribution(root, "npm", understood=False)
    patterns = [str(f).lstrip("./") for f in files if isinstance(f, str)]
    targets = [data.get(k) for k in ("main", "module", "types", "typings", "browser")]
    targets += _strings_in(data.get("exports"))
    bins = data.get("bin")
    targets += list(bins.values()) if isinstance(bins, dict) else [bins]
    patterns += [str(t).lstrip("./") for t in targets if isinstance(t, str)]
    if listing is not None and (not _any_tracked(root, patterns, listing) or _built(root, patterns, listing)):
        # what it publishes is built (`dist/`, ignored by git) from sources it does not name: unknown, even
        # when it also publishes tracked files (a `bin/` script beside `dist/`: src/ is no less shipped)
        return Distribution(root, "npm", understood=False)
    return Distribution(root, "npm", (), tuple(patterns))


def _any_tracked(root: str, patterns: list[str], listing: set[str]) -> bool:
    """Whether any code file of the repository is one the patterns publish (a plain folder or file name is
    looked up directly; a glob is matched against the files under root). The files npm publishes whatever
    `files` says (README, LICENSE, CHANGELOG, package.json) and other prose say nothing about the code."""
    plain = [p.rstrip("/") for p in patterns if not any(c in p for c in "*?[!")]
    if any(f"{root}{p}" in listing and _code_file(p) for p in plain):
        return True
    folders = tuple(f"{root}{p}/" for p in plain)
    globs = tuple(p for p in patterns if any(c in p for c in "*?["))
    spec = _spec(globs) if globs else None
    for path in listing:
        if not _code_file(path):
            continue
        if path.startswith(folders) or (
            spec is not None and path.startswith(root) and spec.match_file(path[len(root) :])
        ):
            return True
    return False


def _built(root: str, patterns: list[str], listing: set[str]) -> bool:
    """Whether a plain pattern names a folder git tracks nothing in: a build's output (`dist`, `lib`),
    made from sources the patterns do not name. A missing file in a tracked folder (a `.d.ts` generated
    beside committed `.js`) is not one."""
    for pattern in patterns:
        plain = pattern.rstrip("/")
        if not plain or any(c in plain for c in "*?[!") or not _code_file(plain):
            continue
        top = f"{root}{plain.split('/', 1)[0]}"
        if top not in listing and not any(path.startswith(f"{top}/") for path in listing):
            return True
    return False


_ALWAYS_PUBLISHED = ("readme", "license", "licence", "changelog", "history", "notice", "authors")
_PROSE_SUFFIXES = (".md", ".markdown", ".txt", ".rst", ".adoc")


def _code_file(path: str) -> bool:
    name = posixpath.basename(path).lower()
    return not (
        name.startswith(_ALWAYS_PUBLISHED) or name == "package.json" or name.endswith(_PROSE_SUFFIXES)
    )


def _strings_in(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings_in(v)]
    return []


def _cargo(root: str, text: str, tree: set[str] | None) -> Distribution | None:
    data = _toml(text)
    if not data:
        return None
    prefixes: list[str] = []
    if isinstance(data.get("package"), dict):
        lib = data.get("lib") or {}
        prefixes += [f"{root}src/", f"{root}build.rs"]
        if isinstance(lib, dict) and isinstance(lib.get("path"), str):
            prefixes.append(f"{root}{posixpath.dirname(lib['path'])}/")
    members = _table(data.get("workspace")).get("members") or []
    for member in members if isinstance(members, list) else []:
        for folder in _glob_dirs(root, str(member), tree):
            prefixes += [f"{folder}src/", f"{folder}build.rs"]
    if not prefixes:
        return Distribution(root, "cargo", understood=False)
    return Distribution(root, "cargo", _top(prefixes))


def _glob_dirs(root: str, pattern: str, tree: set[str] | None) -> list[str]:
    if "*" not in pattern:
        return [f"{root}{pattern.strip('/')}/"]
    if tree is None:
        return []
    found = {posixpath.dirname(p) + "/" for p in tree if p.endswith("/Cargo.toml")}
    return sorted(d for d in found if fnmatch.fnmatchcase(d.rstrip("/"), f"{root}{pattern.strip('/')}"))


def _go(root: str, tree: set[str] | None) -> Distribution:
    # A module ships its .go files but not tests, testdata, _/. folders or nested modules.
    nested = tuple(
        f"{posixpath.dirname(p)[len(root) :]}/"
        for p in (tree or ())
        if p.endswith("/go.mod") and p.startswith(root) and posixpath.dirname(p) + "/" != root
    )
    return Distribution(root, "go", (), ("*.go",), ("*_test.go", "testdata/", "_*/", ".*/", *nested))


# --- facts: supported versions and dependencies -----------------------------------------------------


def packaging_changes(path: str, before: str | None, after: str | None) -> list[SurfaceChange]:
    """SUPPORT_DROPPED and DEPENDENCY_* facts for a changed packaging or requirements file."""
    try:
        dependencies, support = dependency_changes(path, before, after), support_changes(path, before, after)
    except (TypeError, AttributeError, ValueError):
        return []  # a backstop, as in `_distribution`: a file that cannot be read states nothing
    out = []
    for c in dependencies:
        kind = (
            SurfaceKind.DEPENDENCY_CHANGED if c.old and c.new
            else SurfaceKind.DEPENDENCY_ADDED if c.new
            else SurfaceKind.DEPENDENCY_REMOVED
        )  # fmt: skip
        out.append(SurfaceChange(kind, c.name, path, c.line, old=c.old, new=c.new))
    out.extend(support)
    return out


def dependency_changes(path: str, before: str | None, after: str | None) -> list[DependencyChange]:
    """Requirements users get that a change added, removed or re-ranged, for one file's two versions
    (None: absent). Runtime and optional requirements and build requirements count; development groups,
    tool sections (coverage, linters, test runners) and lockfiles do not."""
    old, new = _requirements(path, before), _requirements(path, after)
    out = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        scope, name = key
        line = _line_of(after if b else before, name)
        out.append(DependencyChange(name, a, b, scope, line))
    return out


def _requirements(path: str, text: str | None) -> dict[tuple[str, str], str]:
    """{(scope, canonical name): normalised requirement} of one file."""
    if not text or len(text) > MAX_PACKAGING_CHARS:
        return {}
    name = posixpath.basename(path)
    found: list[tuple[str, str]] = []  # (scope, requirement text)
    if name == "pyproject.toml":
        data = _toml(text)
        project = _table(data.get("project"))
        found += [("runtime", r) for r in _list(project.get("dependencies"))]
        for extra, reqs in _table(project.get("optional-dependencies")).items():
            found += [(f"optional:{extra}", r) for r in _list(reqs)]
        found += [("build", r) for r in _list(_table(data.get("build-system")).get("requires"))]
        poetry = _table(_table(data.get("tool")).get("poetry"))
        for dep, spec in _table(poetry.get("dependencies")).items():
            if dep.lower() != "python":
                found.append(("runtime", f"{dep} {_poetry_spec(spec)}".strip()))
    elif name == "setup.cfg":
        cfg = _setup_cfg(text)
        found += [("runtime", r) for r in cfg.get("install_requires") or []]
        for extra, reqs in (cfg.get("extras_require") or {}).items():
            found += [(f"optional:{extra}", r) for r in reqs]
    elif name == "setup.py":
        literal = _setup_py(text)
        found += [("runtime", r) for r in _list(literal.get("install_requires"))]
        extras = literal.get("extras_require")
        for extra, reqs in extras.items() if isinstance(extras, dict) else []:
            found += [(f"optional:{extra}", r) for r in _list(reqs)]
    elif is_requirements_file(path):
        if _DEV_REQUIREMENTS.search(path.lower().rsplit("/", 1)[-1].rsplit(".", 1)[0]):
            return {}
        found += [("runtime", line) for line in _requirement_lines(text)]
    elif name == "package.json":
        data = json_object(text)
        if data is None:
            return {}
        out: dict[tuple[str, str], str] = {}
        for section, scope in (
            ("dependencies", "runtime"),
            ("peerDependencies", "runtime"),
            ("optionalDependencies", "optional"),
        ):
            deps = data.get(section)
            for dep, spec in deps.items() if isinstance(deps, dict) else []:
                out[(scope, dep)] = f"{dep}@{spec}"
        return out
    elif name == "Cargo.toml":
        data = _toml(text)
        out = {}
        tables = [("runtime", data.get("dependencies")), ("build", data.get("build-dependencies")),
                  ("runtime", _table(data.get("workspace")).get("dependencies"))]  # fmt: skip
        for target in _table(data.get("target")).values():
            if isinstance(target, dict):
                tables.append(("runtime", target.get("dependencies")))
        for scope, table in tables:
            for dep, spec in table.items() if isinstance(table, dict) else []:
                version = (
                    spec
                    if isinstance(spec, str)
                    else (spec.get("version") or spec.get("path") or spec.get("git") or "")
                    if isinstance(spec, dict)
                    else ""
                )
                out[(scope, dep)] = f"{dep} {version}".strip()
        return out
    elif name == "go.mod":
        out = {}
        for module, version in re.findall(
            r"^\s*(?:require\s+)?([\w.\-/]+\.[\w.\-/]+)\s+(v[\w.\-+]+)(?!.*// indirect)", text, re.MULTILINE
        ):
            out[("runtime", module)] = f"{module} {version}"
        return out
    out = {}
    for scope, raw in found:
        try:
            req = Requirement(raw)
        except InvalidRequirement:
            continue
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
        marker = f"; {req.marker}" if req.marker else ""
        out[(scope, canonicalize_name(req.name))] = (
            f"{canonicalize_name(req.name)}{extras}{req.specifier}{marker}"
        )
    return out


def _list(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list | tuple) else []


def _poetry_spec(spec: object) -> str:
    text = spec if isinstance(spec, str) else spec.get("version", "") if isinstance(spec, dict) else ""
    if not isinstance(text, str):
        return ""
    if text.startswith("^"):
        return f">={text[1:]}"
    return "" if text == "*" else text


def _requirement_lines(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith(("#", "-", "git+", "http")):
            out.append(line)
    return out


def support_changes(path: str, before: str | None, after: str | None) -> list[SurfaceChange]:
    """Supported runtime versions users lose: requires-python raised, Python classifiers removed,
    engines.node / rust-version / go directive raised."""
    name = posixpath.basename(path)
    out: list[SurfaceChange] = []
    if name in ("pyproject.toml", "setup.cfg", "setup.py"):
        old_spec, new_spec = _python_requires(name, before), _python_requires(name, after)
        lost: set[str] = set()
        gained: set[str] = set()
        if old_spec is not None and new_spec is not None and old_spec != new_spec:
            lost |= _pythons(old_spec) - _pythons(new_spec)
            gained |= _pythons(new_spec) - _pythons(old_spec)  # an upper cap lifted
        old_cls, new_cls = _classifier_pythons(name, before), _classifier_pythons(name, after)
        if new_cls or new_spec is not None:
            lost |= old_cls - new_cls
        if old_cls:  # a first list of classifiers states what was supported already: nothing new
            gained |= new_cls - old_cls
        # A version the specifier admits is not newly supported by a classifier naming it; one it
        # excludes cannot be gained.
        if new_spec is not None:
            gained &= _pythons(new_spec) or gained
        for version in sorted(lost, key=_version_key):
            line = _line_of(after, "requires-python") or _line_of(after, "python_requires")
            out.append(SurfaceChange(SurfaceKind.SUPPORT_DROPPED, f"Python {version}", path, line,
                                     old=old_spec, new=new_spec))  # fmt: skip
        for version in sorted(gained - lost, key=_version_key):
            line = _line_of(after, f"Python :: {version}") or _line_of(after, "requires-python")
            out.append(SurfaceChange(SurfaceKind.SUPPORT_ADDED, f"Python {version}", path, line))
    elif name in ("package.json", "Cargo.toml", "go.mod"):
        old, new = _minimum(name, before), _minimum(name, after)
        if old and new and _version_key(new[1]) > _version_key(old[1]):
            runtime, old_min, new_min = old[0], old[1], new[1]
            key = {"package.json": "node", "Cargo.toml": "rust-version", "go.mod": "go "}[name]
            out.append(SurfaceChange(SurfaceKind.SUPPORT_DROPPED, f"{runtime} {old_min}", path,
                                     _line_of(after, key), old=old_min, new=new_min))  # fmt: skip
    return out


def _python_requires(name: str, text: str | None) -> str | None:
    if not text:
        return None
    if name == "pyproject.toml":
        data = _toml(text)
        spec = _table(data.get("project")).get("requires-python")
        if spec is None:
            poetry = _table(_table(data.get("tool")).get("poetry"))
            python = _table(poetry.get("dependencies")).get("python")
            spec = _poetry_spec(python) if python else None
        return str(spec) if spec else None
    if name == "setup.cfg":
        return _setup_cfg(text).get("python_requires")
    value = _setup_py(text).get("python_requires")
    return value if isinstance(value, str) else None


def _pythons(spec: str) -> set[str]:
    try:
        specifier = SpecifierSet(spec.replace(" ", ""))
    except InvalidSpecifier:
        return set()
    versions = [f"2.{m}" for m in range(6, 8)] + [f"3.{m}" for m in range(0, 20)]
    return {v for v in versions if specifier.contains(f"{v}.0") or specifier.contains(f"{v}.99")}


def _classifier_pythons(name: str, text: str | None) -> set[str]:
    if not text:
        return set()
    if name == "pyproject.toml":
        classifiers = _list(_table(_toml(text).get("project")).get("classifiers"))
    elif name == "setup.cfg":
        classifiers = _setup_cfg(text).get("classifiers") or []
    else:
        classifiers = _list(_setup_py(text).get("classifiers"))
    return {m.group(1) for c in classifiers if (m := _PY_CLASSIFIER.search(c.strip()))}


def _minimum(name: str, text: str | None) -> tuple[str, str] | None:
    if not text:
        return None
    if name == "package.json":
        data = json_object(text)
        engines = data.get("engines") if data is not None else None
        node = engines.get("node") if isinstance(engines, dict) else None
        match = re.search(r"(\d+(?:\.\d+)*)", node) if isinstance(node, str) else None
        return ("Node", match.group(1)) if match else None
    if name == "Cargo.toml":
        data = _toml(text)
        version = _table(data.get("package")).get("rust-version")
        if not isinstance(version, str):  # a workspace's members inherit it (`rust-version.workspace = true`)
            version = _table(_table(data.get("workspace")).get("package")).get("rust-version")
        return ("Rust", str(version)) if isinstance(version, str) else None
    match = re.search(r"^go\s+(\d+(?:\.\d+)*)\s*$", text, re.MULTILINE)
    return ("Go", match.group(1)) if match else None


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def line_of(text: str | None, needle: str) -> int | None:
    """The 1-based line where `needle` first occurs in `text`; None when it does not."""
    return _line_of(text, needle)


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
    table = _toml(text)
    for key in keys:
        table = _table(table.get(key))
    return table


def setup_py_keywords(text: str | None) -> dict:
    """The literal keyword arguments of a setup.py's setup(...) call (see `_setup_py`)."""
    return _setup_py(text)


def _line_of(text: str | None, needle: str) -> int | None:
    if not text or not needle:
        return None
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else None
