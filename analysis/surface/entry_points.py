"""Entry points a Python distribution declares: the commands it installs (`[project.scripts]`, setuptools'
`console_scripts`) and the plugins it registers with another package (`[project.entry-points."<group>"]`, a
host that loads `<group>` finds them at start). Either is a name users rely on without importing anything: a
command they type, a plugin the host they run loads (and they may select or disable it by name). One removed is
a breaking change, one added a new capability, one renamed (the same object under another name) a rename.

Read from pyproject.toml (PEP 621, poetry's `scripts` and `plugins`), setup.cfg (`[options.entry_points]`) and
setup.py (a literal `entry_points=` of setup()), never run; the commands an npm package (`bin`) or a Cargo package
(`[[bin]]`) installs, likewise. Where the object an entry point names moves
(`pkg:register` → `pkg.platform:register`) nothing changes for users: not stated.
"""

from __future__ import annotations

import configparser
import posixpath

from analysis.models import SurfaceChange, SurfaceKind
from analysis.surface.packaging_texts import (
    MAX_PACKAGING_CHARS,
    json_object,
    line_of,
    setup_py_keywords,
    toml_table,
)

_COMMANDS = frozenset({"console_scripts", "gui_scripts"})


def entry_point_changes(path: str, before: str | None, after: str | None) -> list[SurfaceChange]:
    """ADDED, REMOVED and RENAMED facts of one packaging file's two versions (None: absent). A command is
    named as users type it; a plugin as `group:name`."""
    old, new = entry_points(path, before), entry_points(path, after)
    if not old and not new:
        return []
    out: list[SurfaceChange] = []
    added = {key: new[key] for key in new.keys() - old.keys()}
    for key in sorted(old.keys() - new.keys()):
        group, name = key
        # the same object under another name in the same group: a rename, said once
        twin = next((k for k, target in sorted(added.items()) if k[0] == group and target == old[key]), None)
        if twin is not None:
            del added[twin]
            out.append(
                SurfaceChange(
                    SurfaceKind.RENAMED,
                    _shown(twin),
                    path,
                    line_of(after, twin[1]),
                    old=_shown(key),
                    new=_shown(twin),  # what the reason line and the cards show after the arrow
                )
            )
        else:
            out.append(SurfaceChange(SurfaceKind.REMOVED, _shown(key), path, line_of(before, name)))
    out += [
        SurfaceChange(SurfaceKind.ADDED, _shown(key), path, line_of(after, key[1])) for key in sorted(added)
    ]
    return out


def _shown(key: tuple[str, str]) -> str:
    group, name = key
    return name if group in _COMMANDS else f"{group}:{name}"


def entry_points(path: str, text: str | None) -> dict[tuple[str, str], str]:
    """{(group, name): "module:object"} declared by one packaging file; {} for any other file or one that
    cannot be read."""
    if not text or len(text) > MAX_PACKAGING_CHARS:
        return {}
    name = posixpath.basename(path)
    found: dict[str, object] = {}
    if name == "pyproject.toml":
        project = toml_table(text, "project")
        found["console_scripts"] = project.get("scripts")
        found["gui_scripts"] = project.get("gui-scripts")
        groups = project.get("entry-points")
        if isinstance(groups, dict):
            found.update(groups)
        poetry = toml_table(text, "tool", "poetry")
        if isinstance(poetry.get("scripts"), dict):
            found["console_scripts"] = poetry["scripts"]
        if isinstance(poetry.get("plugins"), dict):
            found.update(poetry["plugins"])
    elif name == "setup.cfg":
        found.update(_setup_cfg(text))
    elif name == "setup.py":
        declared = setup_py_keywords(text).get("entry_points")
        if isinstance(declared, str):
            found.update(_ini(declared))
        elif isinstance(declared, dict):
            found.update(declared)
    elif name == "package.json":
        found["console_scripts"] = _npm_bin(text)
    elif name == "Cargo.toml":
        bins = toml_table(text).get("bin")
        found["console_scripts"] = {
            b["name"]: str(b.get("path") or b["name"])
            for b in (bins if isinstance(bins, list) else [])
            if isinstance(b, dict) and isinstance(b.get("name"), str)
        }
    return {
        (str(group), entry): target
        for group, table in found.items()
        for entry, target in _entries(table).items()
    }


def _npm_bin(text: str) -> dict[str, str]:
    """package.json's `bin`: {command: script}; a single script is a command named as the package (its scope
    taken off)."""
    data = json_object(text)
    if data is None:
        return {}
    bins, package = data.get("bin"), data.get("name")
    if isinstance(bins, str) and isinstance(package, str) and package:
        return {package.rsplit("/", 1)[-1]: bins}
    return {str(k): str(v) for k, v in bins.items()} if isinstance(bins, dict) else {}


def _entries(table: object) -> dict[str, str]:
    """One group's entries: a table (TOML), a list of `name = target` lines (setup.py), or such text."""
    if isinstance(table, dict):
        return {str(k).strip(): _target(v) for k, v in table.items() if str(k).strip()}
    lines = table.splitlines() if isinstance(table, str) else table if isinstance(table, list | tuple) else []
    out: dict[str, str] = {}
    for line in lines:
        if isinstance(line, str) and "=" in line and not line.lstrip().startswith(("#", ";")):
            entry, _, target = line.partition("=")
            if entry.strip():
                out[entry.strip()] = " ".join(target.split())
    return out


def _target(value: object) -> str:
    if isinstance(value, dict):  # poetry's {reference = "...", type = "console"}, {callable = "..."}
        value = value.get("reference") or value.get("callable") or ""
    return " ".join(str(value).split())


def _setup_cfg(text: str) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return {}
    if not parser.has_section("options.entry_points"):
        return {}
    return dict(parser["options.entry_points"].items())


def _ini(text: str) -> dict[str, list[str]]:
    """setuptools' entry_points given as INI text: `[group]` then `name = target` lines."""
    out: dict[str, list[str]] = {}
    group: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
            out.setdefault(group, [])
        elif group is not None and line:
            out[group].append(line)
    return out
