"""What a repository's distribution ships.

From the packaging files at a commit (pyproject.toml for setuptools, hatch, poetry, flit, pdm, maturin and
scikit-build; setup.cfg; setup.py read as literals, never run; package.json; Cargo.toml; go.mod) this module
decides which paths end up in what users install (`Commit.shipped`). A folder of examples, tutorials or docs
beside the package is not shipped because the packaging does not ship it, whatever its name. The nearest
packaging file above a path decides for it, so a monorepo's packages each speak for their own folder.

What the packaging metadata promises users (supported versions, dependencies) is requirements.py's; the
texts' parsers are packaging_texts.py's.

Where setuptools' package discovery needs to know which folders hold `__init__.py`, the caller passes the
commit's tree (`tree`: every path at the commit); without it every folder counts as a package.

Over 400 lines because it is one reading: each packaging format (setuptools, hatch, poetry, flit, pdm,
maturin, package.json, Cargo, go.mod) answers the same question, and they are compared side by side.
"""

from __future__ import annotations

import configparser
import dataclasses
import fnmatch
import posixpath
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import pathspec
from packaging.utils import canonicalize_name

from analysis.surface.meson_build import header_patterns, meson_install
from analysis.surface.packaging_files import BUILD_DESCRIPTIONS
from analysis.surface.packaging_texts import (
    MAX_PACKAGING_CHARS,
    FindPackages,
    items_of,
    json_object,
    read_toml,
    setup_cfg_options,
    setup_py_extensions,
    setup_py_keywords,
    table_of,
)
from analysis.surface.requirements import python_requires
from analysis.surface.setup_py_packages import SetupPackages, Spelled, setup_py_packages

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


@dataclass(frozen=True, slots=True)
class Distribution:
    """One packaging file's idea of what it ships. Paths are the repository's own (posix, no leading /)."""

    root: str  # folder of the packaging file: "" at the top, else "sub/dir/"
    system: str
    prefixes: tuple[str, ...] = ()  # shipped path prefixes ("pkg/", "src/pkg/", "mod.py")
    patterns: tuple[str, ...] = ()  # gitignore-style patterns relative to root (npm "files", Cargo include)
    excludes: tuple[str, ...] = ()  # gitignore-style patterns relative to root taken out again
    # taken out of what `patterns` alone ship (a native tree's tests, not a Python package's `benchmarks/`)
    pattern_excludes: tuple[str, ...] = ()
    import_roots: tuple[str, ...] = ()  # where dotted module names start ("src/")
    understood: bool = True
    name: str = ""  # the project's canonical name ("" unknown)
    requires_python: str = ""  # the Pythons it supports, as its metadata states them ("" unknown)

    def ships(self, path: str) -> bool:
        if not path.startswith(self.root):
            return False
        inner = path[len(self.root) :]
        if self.excludes and _spec(self.excludes).match_file(inner):
            return False
        if any(path == p or (p.endswith("/") and path.startswith(p)) for p in self.prefixes):
            return True
        return (
            bool(self.patterns)
            and _spec(self.patterns).match_file(inner)
            and not (self.pattern_excludes and _spec(self.pattern_excludes).match_file(inner))
        )


@lru_cache(maxsize=256)
def _spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """Gitignore-style patterns, compiled once; ValueError for one git cannot read (`!`)."""
    return pathspec.GitIgnoreSpec.from_lines(patterns)


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
    builds = {path: text for path, text in files.items() if posixpath.basename(path) in BUILD_DESCRIPTIONS}
    for folder, texts in by_folder.items():
        dist = _distribution(folder, texts, listing, builds)
        if dist is not None:
            found.distributions.append(dist)
    if not any(d.understood for d in found.distributions):
        return None
    return found


def _distribution(
    folder: str, texts: dict[str, str], listing: set[str] | None, builds: Mapping[str, str] | None = None
) -> Distribution | None:
    """What one folder's packaging files declare; None when nothing, or when they cannot be read. builds:
    {path: text} of the repository's build descriptions (meson.build) its backend may read."""
    try:
        dist = _python(folder, texts, listing, builds or {})
        if dist is None and "package.json" in texts:
            dist = _npm(folder, texts["package.json"], listing)
        if dist is None and "Cargo.toml" in texts:
            dist = _cargo(folder, texts["Cargo.toml"], listing)
        if dist is None and "go.mod" in texts:
            dist = _go(folder, listing)
        if dist is None:
            return None
        for patterns in (dist.patterns, dist.excludes, dist.pattern_excludes):
            _spec(patterns)  # a pattern git cannot read raises here, not later in `ships`
        return dataclasses.replace(dist, name=_project_name(texts), requires_python=_requires_python(texts))
    except (TypeError, AttributeError, ValueError):
        # A backstop for values of a type no reader above expects: read as a file that does not parse is,
        # so one malformed file does not take the facts of every commit that reads it.
        return None


# --- Python --------------------------------------------------------------------------------------------


def _python(
    root: str, texts: dict[str, str], tree: set[str] | None, builds: Mapping[str, str]
) -> Distribution | None:
    if not ({"pyproject.toml", "setup.cfg", "setup.py"} & texts.keys()):
        return None
    data = read_toml(texts.get("pyproject.toml"))
    if not (
        "setup.py" in texts
        or _CFG_DISTRIBUTION.search(texts.get("setup.cfg") or "")
        or _declares_distribution(data)
    ):
        return None  # a folder's tools' settings ([tool.ruff], setup.cfg's [flake8] ...): nothing is built
    backend = str(table_of(data.get("build-system")).get("build-backend") or "")
    system = next((name for key, name in _BACKENDS.items() if backend.startswith(key)), "")
    if not system:
        system = "setuptools" if ("setup.py" in texts or "setup.cfg" in texts or not data) else ""
    tool = table_of(data.get("tool"))
    if not system:
        system = next((s for s in ("poetry", "hatch", "flit", "pdm", "maturin") if s in tool), "")
    if not system:
        system = "setuptools"  # PEP 517's fallback for a pyproject.toml without a backend
    name = _normal(
        str(table_of(data.get("project")).get("name") or table_of(tool.get("poetry")).get("name") or "")
    )
    if system == "scikit-build":
        return _scikit_build(root, table_of(tool.get("scikit-build")), tree, name)
    if system == "setuptools":
        return _setuptools(root, data, texts, tree, name)
    if system == "hatch":
        return _hatch(root, table_of(tool.get("hatch")), tree, name)
    if system == "poetry":
        return _poetry(root, table_of(tool.get("poetry")), tree, name)
    if system == "flit":
        module = str(table_of(table_of(tool.get("flit")).get("module")).get("name") or name)
        return _default_layout(root, "flit", module.replace(".", "/"), tree)
    if system == "pdm":
        return _pdm(root, table_of(table_of(tool.get("pdm")).get("build")), tree, name)
    if system == "maturin":
        return _maturin(root, table_of(tool.get("maturin")), tree, name)
    if system == "meson":
        return _meson(root, builds, tree)
    return Distribution(root, system, understood=False)


_CFG_DISTRIBUTION = re.compile(r"^\[(?:metadata|options)\]", re.MULTILINE)  # setup.cfg's own sections
_BUILD_TOOLS = ("setuptools", "scikit-build", "poetry", "hatch", "flit", "pdm", "maturin")


def _declares_distribution(data: dict) -> bool:
    """Whether a pyproject.toml (without setup.py or setup.cfg beside it) describes something to build: project
    metadata, a build system, or a build tool's own table. PEP 517's setuptools fallback applies to a
    project; a file holding only other tools' settings is not one."""
    tool = table_of(data.get("tool"))
    return "project" in data or "build-system" in data or any(name in tool for name in _BUILD_TOOLS)


def _requires_python(texts: dict[str, str]) -> str:
    specs = (python_requires(n, texts.get(n)) for n in ("pyproject.toml", "setup.cfg", "setup.py"))
    return next((spec for spec in specs if spec), "")


def _project_name(texts: dict[str, str]) -> str:
    """The canonical name of the project a folder's packaging files declare, "" when none says."""
    data = read_toml(texts.get("pyproject.toml"))
    name = table_of(data.get("project")).get("name") or table_of(
        table_of(data.get("tool")).get("poetry")
    ).get("name")
    if not name and "setup.cfg" in texts:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(texts["setup.cfg"])
            name = parser.get("metadata", "name", fallback=None)
        except configparser.Error:
            name = None
    if not name and "setup.py" in texts:
        name = setup_py_keywords(texts["setup.py"]).get("name")
    if not name and "Cargo.toml" in texts:
        name = table_of(read_toml(texts["Cargo.toml"]).get("package")).get("name")
    if not name and "package.json" in texts:
        value = json_object(texts["package.json"])
        name = value.get("name") if value is not None else None
    return canonicalize_name(name) if isinstance(name, str) and name.strip() else ""


def _rel(path: object) -> str:
    """A folder or file as a packaging file writes it, relative to that file's folder, in one spelling:
    `./src/`, `src/.` and `/src` are `src`; `.`, `./` and `` are `` (the folder itself)."""
    text = str(path).strip("/")
    norm = posixpath.normpath(text) if text else ""
    return "" if norm == "." else norm


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
    """The Python packages and modules setuptools ships, and what its extension modules compile."""
    dist = _setuptools_packages(root, data, texts, tree, name)
    if not dist.understood:
        return dist
    config = table_of(table_of(data.get("tool")).get("setuptools"))
    prefixes, patterns, excludes = _extension_files(root, config, texts.get("setup.py"))
    headers = setup_py_keywords(texts.get("setup.py")).get("headers")  # installed beside the package
    prefixes += [f"{root}{_rel(h)}" for h in items_of(headers) if isinstance(h, str) and _rel(h)]
    if not (prefixes or patterns):
        return dist
    return dataclasses.replace(
        dist, prefixes=_top([*dist.prefixes, *prefixes]), patterns=patterns, pattern_excludes=excludes
    )


_GLOB = re.compile(r"[*?\[]")


def _extension_files(
    root: str, config: dict, setup_py: str | None
) -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
    """(prefixes, patterns, excludes) of what a setuptools build's extension modules compile: their sources
    (files, or `glob()` patterns anchored at the packaging file's folder), the headers of their include
    folders, and the native tree of an extension CMake builds (`CMakeExtension`, with its tests, docs and
    examples left out); from setup.py's `Extension(...)` calls and pyproject's `[tool.setuptools]
    ext-modules`."""
    found = setup_py_extensions(setup_py)
    sources, include_dirs = list(found.sources), list(found.include_dirs)
    for module in items_of(config.get("ext-modules")):
        module = table_of(module)
        sources += [
            s for key in ("sources", "depends") for s in items_of(module.get(key)) if isinstance(s, str)
        ]
        include_dirs += [d for d in items_of(module.get("include-dirs")) if isinstance(d, str)]
    prefixes = [f"{root}{_rel(s)}" for s in sources if _rel(s) and not _GLOB.search(s)]
    patterns = [f"/{_rel(s)}" for s in sources if _rel(s) and _GLOB.search(s)]
    patterns += header_patterns({_rel(d) for d in include_dirs})
    excludes: tuple[str, ...] = ()
    for folder in dict.fromkeys(_rel(d) for d in found.cmake_dirs):
        patterns += [f"/{folder}/**/{p}" if folder else p for p in _NATIVE_PATTERNS]
        excludes = _NATIVE_EXCLUDES
    return prefixes, tuple(dict.fromkeys(patterns)), excludes


def _setuptools_packages(
    root: str, data: dict, texts: dict[str, str], tree: set[str] | None, name: str
) -> Distribution:
    config = table_of(table_of(data.get("tool")).get("setuptools"))
    options = setup_cfg_options(texts.get("setup.cfg"))
    literal = setup_py_keywords(texts.get("setup.py"))
    spelled = setup_py_packages(texts.get("setup.py")) or SetupPackages()
    package_dir = config.get("package-dir") or options.get("package_dir") or spelled.package_dir or {}
    if not isinstance(package_dir, dict):
        package_dir = {}
    dir_computed = (
        not (config.get("package-dir") or options.get("package_dir")) and spelled.package_dir_computed
    )
    base = _rel(package_dir.get("", ""))
    base = f"{base}/" if base else ""
    packages = config.get("packages", options.get("packages", spelled.packages))
    modules = config.get("py-modules") or options.get("py_modules") or spelled.py_modules
    if isinstance(modules, Spelled):
        modules = list(modules.names)
    prefixes: list[str] = [f"{root}{base}{m}.py" for m in items_of(modules) if isinstance(m, str)]
    if isinstance(packages, list):
        packages = Spelled(tuple(p for p in packages if isinstance(p, str)))
    elif isinstance(packages, dict) and "find" in packages:
        packages = Spelled(finds=(FindPackages.of(table_of(packages.get("find"))),))
    elif isinstance(packages, FindPackages):
        packages = Spelled(finds=(packages,))
    elif packages is None and (literal.get("_opaque") or dir_computed):
        packages = Spelled(computed=True)  # discovery from folders setup.py computes: the plausible ones
    if isinstance(packages, Spelled):
        return _spelled_packages(root, base, package_dir, dir_computed, packages, prefixes, tree)
    if packages is not None or literal.get("_opaque"):
        return Distribution(root, "setuptools", understood=False)  # a value of no type setuptools reads
    # automatic discovery: an explicit package_dir, the src layout, else flat layout without setuptools'
    # excluded names
    if tree is None:
        return Distribution(root, "setuptools", understood=False)
    if base:  # package_dir={"": "python"}: its folder is the src layout's `src/`
        return Distribution(root, "setuptools", (f"{root}{base}", *prefixes), import_roots=(f"{root}{base}",))
    mapped = [f"{root}{_rel(d)}/" for k, d in package_dir.items() if k and isinstance(d, str) and _rel(d)]
    if mapped:  # package_dir={"pkg": "lib"} alone: setuptools' explicit layout ships the packages it maps
        return Distribution(root, "setuptools", _top([*mapped, *prefixes]), import_roots=(root,))
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


def _spelled_packages(
    root: str,
    base: str,
    package_dir: dict,
    dir_computed: bool,
    packages: Spelled,
    prefixes: list[str],
    tree: set[str] | None,
) -> Distribution:
    """The packages a list of names and find_packages requests ship; where setup.py computes a part of them,
    what setuptools would most plausibly ship besides (`_plausible_packages`)."""
    prefixes = list(prefixes)
    roots = [f"{root}{base}"]
    for package in packages.names:
        folder = _package_folder(package, package_dir, base)
        prefixes.append(f"{root}{folder}/" if folder else root)
    for find in packages.finds:
        wheres = [_rel(w) for w in find.where] or [base.rstrip("/")]
        for where in wheres:
            folder = f"{root}{where}/" if where else root
            prefixes.extend(_find_packages(folder, find, tree))
        roots = [*(f"{root}{w}/" if w else root for w in wheres), *roots] if find.where else roots
    if packages.computed:
        # what the computed part names is not known: the folders setuptools would most plausibly ship, under
        # the folders the packages are mapped to (and the packaging file's own folder, when a mapping is
        # computed too); without the tree, or with no such folder, "unknown" stays
        folders = [f"{root}{base}"]
        folders += [
            f"{root}{_rel(d)}/" for k, d in package_dir.items() if k and isinstance(d, str) and _rel(d)
        ]
        if dir_computed:
            folders.append(root)
        found = _plausible_packages(folders, tree)
        if not found:
            return Distribution(root, "setuptools", understood=False)
        prefixes.extend(found)
        # the test, example, doc and benchmark trees inside a guessed package are no more plausible
        excludes = tuple(f"/{p[len(root) :]}**/{n}/" for p in found for n in sorted(_NOT_PLAUSIBLE))
        return Distribution(
            root, "setuptools", _top(prefixes), excludes=excludes, import_roots=tuple(dict.fromkeys(roots))
        )
    return Distribution(root, "setuptools", _top(prefixes), import_roots=tuple(dict.fromkeys(roots)))


def _package_folder(package: str, package_dir: dict, base: str) -> str:
    """The folder setuptools takes a package from: its own package_dir entry, else its nearest mapped parent's
    folder with the rest of its name, else the root's (`""`) folder."""
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        mapped = package_dir.get(".".join(parts[:cut]))
        if isinstance(mapped, str) and _rel(mapped):
            return "/".join([_rel(mapped), *parts[cut:]])
    return base + package.replace(".", "/")


# Trees no package-discovery guess counts as shipped, at any depth: a build script that computes its packages
# rarely means to install its tests, examples, docs or benchmarks, and a wrong "shipped" there ranks them high.
_NOT_PLAUSIBLE = frozenset(
    {"test", "tests", "testing", "example", "examples", "doc", "docs", "benchmark", "benchmarks", "bench"}
)


def _plausible_packages(folders: Iterable[str], tree: set[str] | None) -> list[str]:
    """Why this rather than "unknown": a setup.py that computes its packages (a loop over `os.listdir`, a
    backend list read from the environment) almost always ships the folders holding `__init__.py` under
    the folders it maps packages from, and knowing that ranks a change to them as one to what users install
    and one to `examples/` as not; "unknown" would rank both alike. Left out: setuptools' own excluded top
    folders (`tests`, `docs`, `tools`, `build` ...), dot and underscore folders, and any test, example, doc or
    benchmark tree below (a `_private` subpackage is the package's own). Without the tree there is nothing to
    look at: []."""
    if tree is None:
        return []
    found = []
    for folder in dict.fromkeys(folders):
        for path in tree:
            if not (path.startswith(folder) and path.endswith("/__init__.py")):
                continue
            parts = path[len(folder) :].split("/")[:-1]
            if (
                parts
                and not _excluded_top(parts[0])
                and not any(p in _NOT_PLAUSIBLE or p.startswith(".") for p in parts)
            ):
                found.append(f"{folder}{'/'.join(parts)}/")
    return list(_top(found))


def _excluded_top(name: str) -> bool:
    return name in _SETUPTOOLS_EXCLUDE or name.startswith((".", "_")) or "." in name


def _find_packages(folder: str, find: FindPackages, tree: set[str] | None) -> list[str]:
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


def _hatch(root: str, hatch: dict, tree: set[str] | None, name: str) -> Distribution:
    build = table_of(hatch.get("build"))
    wheel = table_of(table_of(build.get("targets")).get("wheel"))
    packages = items_of(wheel.get("packages") or build.get("packages"))
    only = items_of(wheel.get("only-include") or build.get("only-include"))
    include = items_of(wheel.get("include") or build.get("include"))
    exclude = tuple(str(e) for e in items_of(wheel.get("exclude") or build.get("exclude")))
    sources = wheel.get("sources") or build.get("sources") or {}
    roots = (
        tuple(f"{root}{_rel(k)}/" if _rel(k) else root for k in sources) if isinstance(sources, dict) else ()
    )
    if packages or only:
        prefixes = tuple(
            f"{root}{_rel(p)}" + ("" if str(p).endswith(".py") else "/") for p in (packages or only)
        )
        if packages and not roots:
            roots = tuple(
                sorted({f"{root}{posixpath.dirname(_rel(p))}/".replace(f"{root}/", root) for p in packages})
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
            base = _rel(p.get("from") or "")
            base = f"{base}/" if base else ""
            target = _rel(p["include"])
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
    package_dir = _rel(build.get("package-dir") or "")
    if not package_dir and _exists_dir(tree, f"{root}src"):
        package_dir = "src"
    base = f"{root}{package_dir}/" if package_dir else root
    excludes = tuple(
        str(e) for e in [*items_of(build.get("excludes")), *items_of(build.get("source-includes"))]
    )
    includes = items_of(build.get("includes"))
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
    source = _rel(maturin.get("python-source") or "")
    base = f"{root}{source}/" if source else root
    module = str(maturin.get("module-name") or name).split(".", 1)[0]
    manifest = str(maturin.get("manifest-path") or "Cargo.toml")
    crate = posixpath.dirname(posixpath.normpath(f"{root}{manifest}"))
    crate = f"{crate}/" if crate and crate != "." else ""
    prefixes = (f"{base}{module}/", f"{crate}src/", f"{crate}build.rs", f"{crate}Cargo.toml")
    return Distribution(root, "maturin", prefixes, import_roots=(base,))


# What CMake compiles into a scikit-build-core wheel or installs beside it: the native sources, headers and build
# files, wherever they sit (`include/`, `lib/`, `src/`); not the project's tests, docs, examples or benchmarks.
_NATIVE_PATTERNS = (
    "*.c", "*.cc", "*.cpp", "*.cxx", "*.h", "*.hh", "*.hpp", "*.hxx", "*.cu", "*.cuh", "*.inc", "*.def", "*.td",
    "CMakeLists.txt", "*.cmake",
)  # fmt: skip
_NATIVE_EXCLUDES = (
    "test/", "tests/", "unittests/", "doc/", "docs/", "example/", "examples/", "bench/", "benchmark/",
    "benchmarks/",
)  # fmt: skip


def _scikit_build(root: str, config: dict, tree: set[str] | None, name: str) -> Distribution:
    """scikit-build-core: the Python packages `wheel.packages` names (by default `src/<name>`, `python/<name>`
    or `<name>`), and what CMake builds: its sources are compiled into what users install, not discovered
    as setuptools would."""
    packages = table_of(config.get("wheel")).get("packages")
    if isinstance(packages, list) and packages:
        prefixes = tuple(f"{root}{_rel(p)}/" for p in packages if isinstance(p, str) and _rel(p))
        roots = tuple(dict.fromkeys(posixpath.dirname(p.rstrip("/")) + "/" for p in prefixes))
        dist = Distribution(root, "scikit-build", prefixes, import_roots=tuple(r.lstrip("/") for r in roots))
    else:
        dist = _default_layout(root, "scikit-build", name, tree, roots=("src/", "python/", ""))
        if not dist.understood:
            dist = Distribution(root, "scikit-build")
    return dataclasses.replace(dist, patterns=_NATIVE_PATTERNS, pattern_excludes=_NATIVE_EXCLUDES)


def _meson(root: str, builds: Mapping[str, str], tree: set[str] | None) -> Distribution:
    """meson-python: what the Meson build installs (meson_build.py), nothing else: a Python file no
    `install_sources()` or `install_subdir()` names is not in the wheel, whatever its folder. Not known when
    a meson.build the build reaches is in the tree but was not read (more than the reader's bound)."""
    found = meson_install(root, builds)
    if not found.read or not (found.files or found.folders) or (tree is not None and found.unread & tree):
        return Distribution(root, "meson", understood=False)
    return Distribution(
        root,
        "meson",
        _top([*found.files, *found.folders]),
        header_patterns(found.header_folders),
        import_roots=tuple(sorted(found.import_roots, key=len, reverse=True)) or (root,),
    )


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
    data = read_toml(text)
    if not data:
        return None
    prefixes: list[str] = []
    if isinstance(data.get("package"), dict):
        lib = data.get("lib") or {}
        prefixes += [f"{root}src/", f"{root}build.rs"]
        if isinstance(lib, dict) and isinstance(lib.get("path"), str):
            prefixes.append(f"{root}{posixpath.dirname(lib['path'])}/")
    members = table_of(data.get("workspace")).get("members") or []
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
