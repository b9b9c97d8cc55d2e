"""Packaging changes stated as surface facts: a supported Python (or Node, Rust, Go) version dropped or added,
and real dependency changes — the requirements users get (runtime, optional extras, build requirements), read
from pyproject.toml, setup.cfg, setup.py, requirements files, package.json, Cargo.toml and go.mod with
tomllib/json/ast, never a tool section, a dev group, a lockfile or a coverage `omit` list.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from analysis.models import SurfaceChange, SurfaceKind
from analysis.surface.packaging_files import is_build_requirements, is_dev_requirements, is_requirements_file
from analysis.surface.packaging_texts import (
    MAX_PACKAGING_CHARS,
    json_object,
    line_of,
    read_toml,
    setup_cfg_options,
    setup_py_keywords,
    table_of,
)

_PY_CLASSIFIER = re.compile(r"Programming Language :: Python :: (\d+\.\d+)$")


@dataclass(frozen=True, slots=True)
class DependencyChange:
    name: str  # canonical project name
    old: str | None  # the requirement as written before (None: added)
    new: str | None  # after (None: removed)
    scope: str  # runtime | optional:<extra> | build
    line: int | None = None


def packaging_changes(path: str, before: str | None, after: str | None) -> list[SurfaceChange]:
    """SUPPORT_DROPPED and DEPENDENCY_* facts for a changed packaging or requirements file."""
    try:
        dependencies, support = dependency_changes(path, before, after), support_changes(path, before, after)
    except (TypeError, AttributeError, ValueError):
        return []  # a backstop, as in packaging.py's `_distribution`: a file that cannot be read states nothing
    out = []
    # A runtime requirement now only in an extra: `pip install pkg` stops bringing it (`pkg[standard]` does).
    dropped = {c.name for c in dependencies if c.scope == "runtime" and c.old and not c.new}
    moved = {
        c.name: c for c in dependencies if c.name in dropped and c.new and c.scope.startswith("optional:")
    }
    for c in dependencies:
        if c.name in moved:
            if c.scope == "runtime":
                to = moved[c.name]
                out.append(SurfaceChange(SurfaceKind.DEPENDENCY_OPTIONAL, c.name, path, to.line, old=c.old,
                                         new=to.scope.split(":", 1)[1]))  # fmt: skip
            continue
        kind = (
            SurfaceKind.DEPENDENCY_CHANGED if c.old and c.new
            else SurfaceKind.DEPENDENCY_ADDED if c.new
            # what the default install brings, gone: as breaking as moving it to an extra (above)
            else SurfaceKind.DEPENDENCY_DROPPED if c.scope == "runtime"
            else SurfaceKind.DEPENDENCY_REMOVED
        )  # fmt: skip
        out.append(SurfaceChange(kind, c.name, path, c.line, old=c.old, new=c.new))
        if c.old and c.new and c.scope != "build":
            out += [
                SurfaceChange(
                    SurfaceKind.SUPPORT_DROPPED, f"{c.name} {major}", path, c.line, old=c.old, new=c.new
                )
                for major in majors_dropped(c.old, c.new)
            ]
    out.extend(support)
    return out


def majors_dropped(old: str, new: str) -> list[int]:
    """The major versions of a dependency users could install beside the release before and cannot after:
    its floor raised past them (`pydantic>=1.10,<3` → `pydantic>=2.7,<3` drops pydantic 1; npm's `^17 ||
    ^18` → `^18` drops 17; `serde 1.0` → `serde 2.0`). Only where both sides state a floor: a requirement
    with none said nothing about which majors work."""
    low, high = _floor_major(old), _floor_major(new)
    return list(range(low, high)) if low is not None and high is not None else []


_LOWER_BOUND_OPS = (">=", ">", "==", "~=", "===")
# A version a non-Python requirement states, not one an upper bound ("<19") caps at.
_VERSION_RANGE = re.compile(r"^[\s\dxX*^~<>=|.,vV-]+$")
# At most nine digits: a longer run is no version, and int() refuses over 4,300 of them.
_STATED_VERSION = re.compile(r"(?<![<\d.])(?<!<=)(?<!< )v?(\d{1,9})(?!\d)(?:\.[\dx*]+)*")


def _floor_major(requirement: str) -> int | None:
    """The major version of the lowest release a requirement admits, or None when it states no floor."""
    try:
        parsed: Requirement | None = Requirement(requirement)
    except InvalidRequirement:
        parsed = None
    if parsed is None or parsed.url:  # npm's `react@^17 || ^18` (read as a URL), Cargo's `serde 1.0`, go.mod
        spec = requirement.split("@", 1)[1] if "@" in requirement[1:] else requirement.rpartition(" ")[2]
        if not _VERSION_RANGE.match(spec):  # a git URL, a path, a tag, a workspace: no version range
            return None
        majors = [int(m.group(1)) for m in _STATED_VERSION.finditer(spec)]
        return min(majors) if majors else None
    floors = [
        int(m.group(0))
        for s in parsed.specifier
        if s.operator in _LOWER_BOUND_OPS and (m := re.match(r"\d{1,9}(?!\d)", s.version))
    ]
    return max(floors) if floors else None  # every specifier holds: the highest lower bound is the floor


def dependency_changes(path: str, before: str | None, after: str | None) -> list[DependencyChange]:
    """Requirements users get that a change added, removed or re-ranged, for one file's two versions
    (None: absent). Runtime and optional requirements and build requirements count; development groups,
    tool sections (coverage, linters, test runners) and lockfiles do not, nor a requirements file that installs
    the checkout itself: a development environment, whatever its name."""
    if is_requirements_file(path) and (installs_checkout(before) or installs_checkout(after)):
        return []
    old, new = _requirements(path, before), _requirements(path, after)
    out = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        scope, name = key
        line = line_of(after if b else before, name)
        out.append(DependencyChange(name, a, b, scope, line))
    return out


# A requirements line installing the repository's own checkout (`-e .[full]`, `--editable=.`, `.`, `-e file:.`):
# the file sets up a working copy for its maintainers (the project, its tests' and docs' tools); users install
# the package, whose metadata states what they get.
_CHECKOUT_LINE = re.compile(
    r"^[ \t]*(?:(?:-e|--editable)(?:[ \t]+|=))?(?:file:)?\./?(?:\[[^\]\n]*\])?[ \t]*(?:#.*)?$", re.M
)


def installs_checkout(text: str | None) -> bool:
    """Whether a requirements file installs the checkout it sits in (see _CHECKOUT_LINE)."""
    return bool(text) and len(text) <= MAX_PACKAGING_CHARS and _CHECKOUT_LINE.search(text) is not None


def _requirements(path: str, text: str | None) -> dict[tuple[str, str], str]:
    """{(scope, canonical name): normalised requirement} of one file."""
    if not text or len(text) > MAX_PACKAGING_CHARS:
        return {}
    name = posixpath.basename(path)
    found: list[tuple[str, str]] = []  # (scope, requirement text)
    if name == "pyproject.toml":
        data = read_toml(text)
        project = table_of(data.get("project"))
        found += [("runtime", r) for r in _list(project.get("dependencies"))]
        for extra, reqs in table_of(project.get("optional-dependencies")).items():
            found += [(f"optional:{extra}", r) for r in _list(reqs)]
        found += [("build", r) for r in _list(table_of(data.get("build-system")).get("requires"))]
        poetry = table_of(table_of(data.get("tool")).get("poetry"))
        for dep, spec in table_of(poetry.get("dependencies")).items():
            if dep.lower() != "python":
                found.append(("runtime", f"{dep} {_poetry_spec(spec)}".strip()))
    elif name == "setup.cfg":
        cfg = setup_cfg_options(text)
        found += [("runtime", r) for r in cfg.get("install_requires") or []]
        for extra, reqs in (cfg.get("extras_require") or {}).items():
            found += [(f"optional:{extra}", r) for r in reqs]
    elif name == "setup.py":
        literal = setup_py_keywords(text)
        found += [("runtime", r) for r in _list(literal.get("install_requires"))]
        extras = literal.get("extras_require")
        for extra, reqs in extras.items() if isinstance(extras, dict) else []:
            found += [(f"optional:{extra}", r) for r in _list(reqs)]
    elif is_requirements_file(path):
        if is_dev_requirements(path):
            return {}
        scope = "build" if is_build_requirements(path) else "runtime"  # what building from source needs
        found += [(scope, line) for line in _requirement_lines(text)]
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
        data = read_toml(text)
        out = {}
        tables = [("runtime", data.get("dependencies")), ("build", data.get("build-dependencies")),
                  ("runtime", table_of(data.get("workspace")).get("dependencies"))]  # fmt: skip
        for target in table_of(data.get("target")).values():
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
        old_spec, new_spec = python_requires(name, before), python_requires(name, after)
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
            line = line_of(after, "requires-python") or line_of(after, "python_requires")
            out.append(SurfaceChange(SurfaceKind.SUPPORT_DROPPED, f"Python {version}", path, line,
                                     old=old_spec, new=new_spec))  # fmt: skip
        for version in sorted(gained - lost, key=_version_key):
            line = line_of(after, f"Python :: {version}") or line_of(after, "requires-python")
            out.append(SurfaceChange(SurfaceKind.SUPPORT_ADDED, f"Python {version}", path, line))
    elif name in ("package.json", "Cargo.toml", "go.mod"):
        old, new = _minimum(name, before), _minimum(name, after)
        if old and new and _version_key(new[1]) > _version_key(old[1]):
            runtime, old_min, new_min = old[0], old[1], new[1]
            key = {"package.json": "node", "Cargo.toml": "rust-version", "go.mod": "go "}[name]
            out.append(SurfaceChange(SurfaceKind.SUPPORT_DROPPED, f"{runtime} {old_min}", path,
                                     line_of(after, key), old=old_min, new=new_min))  # fmt: skip
    return out


def python_requires(name: str, text: str | None) -> str | None:
    """The supported Pythons a pyproject.toml, setup.cfg or setup.py (by `name`) states, as written."""
    if not text:
        return None
    if name == "pyproject.toml":
        data = read_toml(text)
        spec = table_of(data.get("project")).get("requires-python")
        if spec is None:
            poetry = table_of(table_of(data.get("tool")).get("poetry"))
            python = table_of(poetry.get("dependencies")).get("python")
            spec = _poetry_spec(python) if python else None
        return str(spec) if spec else None
    if name == "setup.cfg":
        return setup_cfg_options(text).get("python_requires")
    value = setup_py_keywords(text).get("python_requires")
    return value if isinstance(value, str) else None


def installs_on(requirement: str, requires_python: str) -> bool:
    """Whether a requirement is installed on some Python the package supports: not one whose marker admits only
    Pythons below its floor (`importlib-metadata; python_version < '3.10'` beside `requires-python = ">=3.10"`),
    which a cleanup may remove without any user losing it. True when either cannot be read, or when the marker
    turns on something other than the Python version (a platform: this machine's says nothing of users')."""
    supported = _pythons(requires_python)
    try:
        marker = Requirement(requirement).marker
        if marker is None or not supported:
            return True
        # every Python a marker could name, the supported ones among them
        admits = {
            v
            for v in _pythons(">=2.6")
            if marker.evaluate({"python_version": v, "python_full_version": f"{v}.0", "extra": ""})
        }
    except (InvalidRequirement, ValueError, KeyError):  # an undefined marker variable, a bad version
        return True
    return not admits or bool(admits & supported)


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
        classifiers = _list(table_of(read_toml(text).get("project")).get("classifiers"))
    elif name == "setup.cfg":
        classifiers = setup_cfg_options(text).get("classifiers") or []
    else:
        classifiers = _list(setup_py_keywords(text).get("classifiers"))
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
        data = read_toml(text)
        version = table_of(data.get("package")).get("rust-version")
        if not isinstance(version, str):  # a workspace's members inherit it (`rust-version.workspace = true`)
            version = table_of(table_of(data.get("workspace")).get("package")).get("rust-version")
        return ("Rust", str(version)) if isinstance(version, str) else None
    match = re.search(r"^go\s+(\d+(?:\.\d+)*)\s*$", text, re.MULTILINE)
    return ("Go", match.group(1)) if match else None


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])
