"""What a Meson build installs, read from its `meson.build` files (meson-python's backend builds the wheel
from them): the sources of its extension modules and libraries, the Python files `install_sources()` and
`install_subdir()` install, the headers of their include folders and `install_headers()`; `subdir()` followed
into each folder's own file.

The files are read by meson_syntax.py, never run: a value computed otherwise than by literals, `files()`,
variables, `+` and `/` (a `run_command()`, a loop's variable) is left out.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field

from analysis.surface.meson_syntax import Call, IncludeDirs, SiteDir, calls, join, sources

_HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc")
# Calls whose sources are compiled into what a wheel installs (an `executable()` is a tool or a test).
_COMPILED = frozenset(
    {"extension_module", "library", "static_library", "shared_library", "both_libraries", "shared_module"}
)
_MAX_FILES = 200  # meson.build files followed through subdir() (a cycle ends here too)


@dataclass(slots=True)
class MesonInstall:
    """What the build installs, as repository paths: files, folders (ending in "/"), and the folders the
    Python packages are imported from (an installed `pkg/` at `python/pkg/`: "python/")."""

    files: set[str] = field(default_factory=set)
    folders: set[str] = field(default_factory=set)
    header_folders: set[str] = field(default_factory=set)
    import_roots: set[str] = field(default_factory=set)
    read: bool = False  # the top meson.build was read
    unread: set[str] = field(default_factory=set)  # meson.build files a subdir() reached that were not given


def meson_install(root: str, texts: Mapping[str, str]) -> MesonInstall:
    """What the Meson build whose top file is `{root}meson.build` installs; texts: {path: text} of the
    repository's meson.build files."""
    found = MesonInstall()
    variables: dict[str, object] = {}
    todo = [root]
    seen: set[str] = set()
    while todo and len(seen) < _MAX_FILES:
        folder = todo.pop(0)
        path = f"{folder}meson.build"
        if path not in texts:
            found.unread.add(path)
        if path in seen or path not in texts:
            continue
        seen.add(path)
        found.read = found.read or folder == root
        for call in calls(texts[path], folder, variables):
            _record(call, folder, found, todo)
    found.unread.update(f"{folder}meson.build" for folder in todo)  # past the bound
    found.unread -= seen
    return found


def _record(call: Call, folder: str, found: MesonInstall, todo: list[str]) -> None:
    name = call.name
    if name == "subdir":
        sub = next(iter(_strings(call.args)), None)
        if sub:
            todo.append(join(folder, sub) + "/")
    elif name in _COMPILED:
        found.files.update(sources(call.args[1:], folder))
        found.files.update(sources((call.kwargs.get("sources"),), folder))
        found.header_folders.update(_folders(call.kwargs.get("include_directories"), folder))
    elif name == "install_sources":
        installed = sources(call.args, folder)
        found.files.update(installed)
        target = next(iter(_strings((call.kwargs.get("subdir"),))), "")
        preserve = call.kwargs.get("preserve_path") is True
        for path in installed:
            where = posixpath.dirname(path)
            inside = where if preserve else target.strip("/")
            root = _root_of(where, inside)
            if root is not None and path.endswith(".py"):
                found.import_roots.add(root)
    elif name == "install_subdir":
        sub = next(iter(_strings(call.args)), None)
        if sub:
            path = join(folder, sub)
            found.folders.add(path + "/")
            # installed as `<install_dir>/<its last folder>`: imported from where that path starts
            target = call.kwargs.get("install_dir")
            inside = (
                posixpath.join(target.sub, posixpath.basename(path)) if isinstance(target, SiteDir) else ""
            )
            root = _root_of(path, inside)
            if root is not None:
                found.import_roots.add(root)
            else:
                found.import_roots.add(posixpath.dirname(path) + "/" if "/" in path else "")
    elif name == "install_headers":
        found.files.update(sources(call.args, folder))


def _root_of(path: str, installed: str) -> str | None:
    """The folder a repository path is imported from when it is installed as `installed` below site-packages
    ("python/ncc", "ncc" → "python/"); None when the path does not end so."""
    if not installed or not (path == installed or path.endswith("/" + installed)):
        return None
    return path[: len(path) - len(installed)]


def _folders(value: object, folder: str) -> list[str]:
    if isinstance(value, IncludeDirs):
        return list(value.folders)
    if isinstance(value, str):
        return [join(folder, value)]
    if isinstance(value, list):
        return [f for item in value for f in _folders(item, folder)]
    return []


def _strings(values: tuple[object, ...]) -> list[str]:
    return [v for v in values if isinstance(v, str)]


def header_patterns(folders: set[str]) -> tuple[str, ...]:
    """Gitignore-style patterns, anchored at the repository's top, of the headers in include folders."""
    return tuple(
        f"/{folder}/**/*{suffix}" if folder else f"**/*{suffix}"
        for folder in sorted(folders)
        for suffix in _HEADER_SUFFIXES
    )
