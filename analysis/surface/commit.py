"""A commit's surface changes: each touched file's two versions through the parser of its language, the
packaging files through analysis/surface/packaging.py and requirements.py, and removals paired with additions
across the commit into renames (a definition moved to another module under another name is one rename, not a
removal).

The sources read the files (adapters/); this module only looks at text. Which files are worth reading is
decided here too (`wanted`; the release-notes files whose text places a commit's own entries: `notes_files`),
so every source reads the same ones.

Over 400 lines because what a source reads for a commit (`file_specs`) and what its parsers then ask for
(`commit_facts`) must be decided in one place: a file one side wants and the other never read costs the
commit its facts.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from analysis.models import DEPENDENCY_KINDS, Commit, FileChange, FileTexts, SurfaceChange, SurfaceKind
from analysis.paths import PathKind, classify_own, classify_path, folder_kind
from analysis.surface.build_options import is_build_options_file, mentions_options
from analysis.surface.entry_points import entry_point_changes
from analysis.surface.manifest_surface import manifest_changes
from analysis.surface.modules import ModuleFacts, module_facts
from analysis.surface.native_knobs import KNOB_SUFFIXES, SOURCE_SUFFIXES, knob_surface, mentions_knobs
from analysis.surface.other_langs import installed_header, language_of, private_tree, tree_surface
from analysis.surface.packaging import Packaging, module_from_path, read_packaging
from analysis.surface.packaging_files import is_packaging_file, is_requirements_file
from analysis.surface.pairing import pair_renames, without_moved_names, without_moves
from analysis.surface.python import Collected, FileSurface, python_surface
from analysis.surface.release_entries import notes_to_read, placed_entries
from analysis.surface.requirements import installs_on, packaging_changes
from analysis.surface.stubs import merged_stubs

_DEPENDENCY_FACTS = DEPENDENCY_KINDS | {SurfaceKind.DEPENDENCY_DROPPED}
# Files read per commit: a commit touching more is read in part, the files users reach first.
MAX_FILES_PER_COMMIT = 150
_TEST_DIRS = frozenset({"tests", "test", "testdata", "__tests__", "spec"})
_NOT_USER_FACING = frozenset(
    {PathKind.TESTS, PathKind.DOCS, PathKind.EXAMPLE, PathKind.BENCHMARK, PathKind.TOOLING, PathKind.CI}
    | {PathKind.GENERATED, PathKind.VENDORED, PathKind.LOCKFILE, PathKind.MINIFIED, PathKind.BINARY}
)


@dataclass(frozen=True, slots=True)
class FileVersions:
    """One touched file's text before the commit (at its first parent) and after; None: absent."""

    path: str
    before: str | None
    after: str | None
    previous_path: str | None = None  # a renamed file's old path


def parsed_kind(path: str) -> str | None:
    """Which parser reads this path: "python", a tree-sitter language, "packaging", or None."""
    if is_packaging_file(path) or is_requirements_file(path):
        return "packaging" if not path.endswith("setup.py") else "packaging+python"
    if path.endswith((".py", ".pyi")):
        return "python"
    if path.lower().endswith(SOURCE_SUFFIXES):
        return "knobs"
    if is_build_options_file(path):
        return "build_options"
    return language_of(path)


def wanted(commit: Commit) -> list[FileChange]:
    """The touched files whose two versions the surface needs, users' files first, at most
    MAX_FILES_PER_COMMIT. Tests are never parsed (`_user_facing`), so never read: a quarter of a busy
    branch's touched files, each a request for a source that reads through an API."""
    files = [f for f in commit.files if _worth_reading(f) and not _test_path(f.path)]
    files.sort(key=lambda f: (classify_path(f.path) in _NOT_USER_FACING, -f.changes))
    return files[:MAX_FILES_PER_COMMIT]


def notes_files(commit: Commit) -> list[FileChange]:
    """The release-notes files whose text after the commit places the items it adds (release_entries.py's
    `notes_to_read`), in the room `wanted` leaves: the code's facts come first."""
    notes = notes_to_read(commit)
    return notes[: max(0, MAX_FILES_PER_COMMIT - len(wanted(commit)))] if notes else notes


def without_diffs(commit: Commit) -> Commit:
    """The commit as its parsers need it: no diffs, but for the few that `wanted` reads and the notes files
    (kept whole, so that the parsers want the very files the source read; a notes patch gives its items'
    lines)."""
    notes = {f.path for f in notes_files(commit)}
    files = tuple(
        f
        if (parsed_kind(f.path) in ("knobs", "build_options") and _worth_reading(f)) or f.path in notes
        else replace(f, patch=None)
        for f in commit.files
    )
    return replace(commit, files=files)


def _worth_reading(f: FileChange) -> bool:
    kind = parsed_kind(f.path)
    if kind == "knobs":  # a source without an API: only its environment variables and options
        return f.patch is not None and mentions_knobs(f.patch)
    if kind == "build_options":
        return f.patch is not None and mentions_options(f.patch)
    return kind is not None


def commit_surface(
    files: Sequence[FileVersions],
    packaging: Packaging | None,
    shipped: frozenset[str] | None,
    collected: Collected | None = None,
) -> tuple[SurfaceChange, ...]:
    """Every surface fact of one commit (`read_surface`'s changes)."""
    return read_surface(files, packaging, shipped, collected)[0]


def read_surface(
    files: Sequence[FileVersions],
    packaging: Packaging | None,
    shipped: frozenset[str] | None,
    collected: Collected | None = None,
    packaging_before: Packaging | None = None,
) -> tuple[tuple[SurfaceChange, ...], frozenset[str]]:
    """Every surface fact of one commit, and its Python files whose two versions are the same code but for
    comments, docstrings and message text (same_code.py). `shipped`: the changed paths the distribution ships
    (None: unknown, then the path's kind decides whether it is user-facing). `collected`: the Python versions
    its batch collected already (`expect_versions`). `packaging_before`: the packaging at the commit's parent,
    which says which of the modules it removes or renames users had (None: the same as `packaging`)."""
    results: list[FileSurface] = []
    prose: set[str] = set()
    for f in files:
        kind = parsed_kind(f.path)
        if kind is None:
            continue
        if kind.startswith("packaging"):
            if _speaks_for_users(f.path, packaging):
                siblings = packaging.names() if packaging is not None else frozenset()
                changes = (
                    packaging_changes(f.path, f.before, f.after)
                    + entry_point_changes(f.path, f.before, f.after)
                    + manifest_changes(f.path, f.before, f.after)
                )
                # a pin on a project this repository builds moves with its own releases
                results.append(
                    FileSurface(
                        [c for c in changes if not (c.kind in _DEPENDENCY_FACTS and c.name in siblings)]
                    )
                )
            if kind == "packaging":
                continue
        if kind == "build_options" and _exports_cmake_package(f) and _user_facing(f.path, None):
            # A CMake build that installs a package config is consumed by other CMake projects too
            # (`add_subdirectory`, FetchContent, `find_package`): the options it declares are its users'
            # `-D` flags, inside a Python distribution or not.
            results.append(knob_surface(f.path, f.before, f.after))
            continue
        if not _user_facing(f.path, shipped, vendored_looking=True):
            continue
        if kind not in ("python", "packaging+python") and _python_owned(f.path, packaging):
            # A Python distribution's native or web sources: users reach their names through its modules,
            # but the environment variables they read are the users' still (its `include/` headers: an API).
            # A TableGen file declares a compiler's dialect: the operations users write in their IR and the
            # passes' options, an interface whether or not a Python package wraps the compiler.
            if f.path.lower().endswith(KNOB_SUFFIXES):
                tablegen = f.path.lower().endswith(".td")
                results.append(knob_surface(f.path, f.before, f.after, options=tablegen))
            continue
        before = f.before
        if kind == "python":
            module = packaging.module_name(f.path) if packaging else module_from_path(f.path)
            found = python_surface(
                f.path, before, f.after, module=module, public=_public_module(module), collected=collected
            )
            results.append(found)
            if found.prose_only:
                prose.add(f.path)
        elif kind in ("knobs", "build_options"):  # (a Python distribution's CMake build: skipped above)
            results.append(knob_surface(f.path, before, f.after))
        elif kind != "packaging+python":
            knobs = knob_surface(f.path, before, f.after)  # a command line's flags live in `internal` too
            if private_tree(f.path, kind):  # no API users import; what they set or type still counts
                results.append(knobs)
                continue
            found = tree_surface(f.path, before, f.after, language=kind)
            results.append(FileSurface(found.changes + knobs.changes, found.shapes))
    results = _dropped_for_good(results, packaging)
    merged = merged_stubs(files)
    if merged:  # a stub deleted beside the module it described: the module's own facts say what changed
        results = [replace(r, changes=[c for c in r.changes if c.path not in merged]) for r in results]
    modules = _modules(files, packaging, packaging_before or packaging, shipped, results)
    if modules.moved:  # names that moved with their module are said by the module's fact
        results = [replace(r, changes=[c for c in r.changes if id(c) not in modules.moved]) for r in results]
    changes = [
        c
        for c in pair_renames(without_moved_names(results))
        if not (c.kind == SurfaceKind.REMOVED and c.path in modules.removed_paths)  # implied by the module's
    ]
    changes = _without_module_imports(changes, modules.changes) + modules.changes
    changes.sort(key=lambda c: (c.path, c.line or 0, c.kind.value, c.name))
    return without_moves(tuple(changes)), frozenset(prose)


def _dropped_for_good(results: list[FileSurface], packaging: Packaging | None) -> list[FileSurface]:
    """A runtime requirement dropped that users still get is a removal, not a drop: one another packaging file
    adds (requirements.txt moved into pyproject.toml, one requirements file split in two), or one whose
    marker admitted only Pythons the package no longer supports (a cleanup after a floor was raised)."""
    added = {c.name for r in results for c in r.changes if c.kind == SurfaceKind.DEPENDENCY_ADDED}

    def kept(c: SurfaceChange) -> bool:
        owner = packaging.owner(c.path) if packaging is not None else None
        floor = owner.requires_python if owner is not None else ""
        return c.name in added or not installs_on(c.old or c.name, floor)

    return [
        replace(
            r,
            changes=[
                replace(c, kind=SurfaceKind.DEPENDENCY_REMOVED)
                if c.kind == SurfaceKind.DEPENDENCY_DROPPED and kept(c)
                else c
                for c in r.changes
            ],
        )
        for r in results
    ]


def _without_module_imports(changes: list[SurfaceChange], moved: list[SurfaceChange]) -> list[SurfaceChange]:
    """Without the names that are the removed or renamed modules themselves: a package's __init__ importing its
    own submodule (`from pkg.sub import mod`, for its side effects) loses the name with the module, which the
    module's fact says, at its depth."""
    gone = {c.name for c in moved if c.kind == SurfaceKind.MODULE_REMOVED}
    gone |= {c.old for c in moved if c.kind == SurfaceKind.MODULE_RENAMED and c.old}
    came = {c.name for c in moved if c.kind == SurfaceKind.MODULE_RENAMED}
    if not gone and not came:
        return changes
    return [
        c
        for c in changes
        if not (c.kind == SurfaceKind.REMOVED and c.name in gone)
        and not (c.kind == SurfaceKind.ADDED and c.name in came)
        and not (c.kind == SurfaceKind.RENAMED and c.old in gone and c.name in came)
    ]


def _modules(
    files: Sequence[FileVersions],
    packaging: Packaging | None,
    before: Packaging | None,
    shipped: frozenset[str] | None,
    results: Sequence[FileSurface],
) -> ModuleFacts:
    """The Python modules the commit removes or renames (modules.py): a module users had is one the
    packaging before the commit shipped, at a path that is no test."""
    if not any(f.before is not None and (f.after is None or f.previous_path) for f in files):
        return ModuleFacts([], set(), frozenset())  # no file moved or deleted: the common commit
    old_paths = [f.previous_path or f.path for f in files if f.before is not None]
    shipped_before = before.shipped(old_paths) if before is not None else None

    def module_before(path: str) -> str | None:
        if not _user_facing(path, shipped_before):
            return None
        return before.module_name(path) if before is not None else module_from_path(path)

    def module_after(path: str) -> str | None:
        if not _user_facing(path, shipped):
            return None
        return packaging.module_name(path) if packaging is not None else module_from_path(path)

    names = [c for r in results for c in r.changes if c.kind in (SurfaceKind.REMOVED, SurfaceKind.ADDED)]
    return module_facts(files, module_before, module_after, names)


def _packaging(
    files: dict[str, str],
    tree: Collection[str] | None,
    commit: Commit,
    cache: dict[tuple, Packaging | None],
    before: bool = False,
) -> Packaging | None:
    """The packaging at a commit: the batch's tree plus the paths the commit itself touched (a package it
    deleted is still one at the commit's parent; before: its renamed files' old paths too). Commits of a
    batch mostly share it: computed once."""
    touched = [f.path for f in commit.files] + [
        f.previous_path for f in commit.files if before and f.previous_path
    ]
    extra = frozenset(p for p in touched if tree is None or p not in tree)
    key = (frozenset(files.items()), extra)
    if key not in cache:
        cache[key] = read_packaging(files, {*tree, *extra} if tree is not None else None)
    return cache[key]


_PYTHON_SYSTEMS = frozenset(
    {"setuptools", "hatch", "poetry", "flit", "pdm", "maturin", "scikit-build", "meson"}
)
_ECOSYSTEM = {"Cargo.toml": "cargo", "package.json": "npm", "go.mod": "go"}
_NOT_INSTALLED = frozenset(
    {PathKind.CI, PathKind.TOOLING, PathKind.DOCS, PathKind.TESTS, PathKind.EXAMPLE, PathKind.BENCHMARK}
    | {PathKind.VENDORED, PathKind.GENERATED}
)


def _speaks_for_users(path: str, packaging: Packaging | None) -> bool:
    """Whether a packaging or requirements file states what users install: not one in a CI, tooling, docs,
    tests or examples tree (a workflow's or a docs build's requirements), and not another ecosystem's
    manifest inside a Python distribution (its Rust crate or npm build is compiled into what ships: users
    never resolve those dependencies, nor need that toolchain)."""
    if folder_kind(path) in _NOT_INSTALLED:
        return False
    ecosystem = _ECOSYSTEM.get(posixpath.basename(path))
    return ecosystem is None or not _python_owned(path, packaging)


# What a CMake build writes for other CMake projects to find it by (`find_package(kit CONFIG)`).
_CMAKE_PACKAGE = re.compile(
    r"(?i)\b(?:configure_package_config_file|write_basic_package_version_file)\s*\(|\binstall\s*\(\s*EXPORT\b"
)


def _exports_cmake_package(f: FileVersions) -> bool:
    return any(text is not None and _CMAKE_PACKAGE.search(text) for text in (f.before, f.after))


def _python_owned(path: str, packaging: Packaging | None) -> bool:
    owner = packaging.owner(path) if packaging is not None else None
    return owner is not None and owner.system in _PYTHON_SYSTEMS and not installed_header(path)


def _user_facing(path: str, shipped: frozenset[str] | None, *, vendored_looking: bool = False) -> bool:
    """vendored_looking: a third_party/<x>/ file read as if outside it (the history, unseen here, decides)."""
    if _test_path(path):
        return False
    if shipped is not None and path not in shipped and installed_header(path):
        # A Python distribution's `include/` headers: an API to compile against, installed by its native
        # build (CMake, Meson) where the Python packaging, read statically, does not say so.
        return classify_path(path) not in _NOT_USER_FACING
    if shipped is not None:
        return path in shipped
    kind = classify_path(path)
    if vendored_looking and kind == PathKind.VENDORED:
        kind = classify_own(path)
    return kind not in _NOT_USER_FACING


def _test_path(path: str) -> bool:
    parts = path.lower().split("/")
    name = parts[-1]
    return (
        any(p in _TEST_DIRS for p in parts[:-1])
        or (len(parts) > 1 and parts[0] == "testing")  # nested, a module: a test client users import
        or name.startswith("test_")
        or name == "conftest.py"
        or posixpath.splitext(name)[0].endswith(("_test", ".test", ".spec"))
    )


def _public_module(module: str) -> bool:
    return not any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


Key = tuple[str, str]  # (commit sha, path): a version of a file, as the sources read it


def _version_keys(commit: Commit) -> list[tuple[FileChange, Key | None, Key | None]]:
    """Each wanted file with its version before (at the first parent, under its old name when renamed)
    and after (at the commit); None where the file is absent."""
    parent = commit.parents[0] if commit.parents else None
    return [
        (
            f,
            (parent, f.previous_path or f.path) if parent and f.status != "added" else None,
            (commit.sha, f.path) if f.status != "removed" else None,
        )
        for f in wanted(commit)
    ]


def file_specs(commit: Commit) -> list[Key]:
    """The (commit sha, path) pairs to read for a commit: each wanted file's versions before and after, then
    each notes file's version after."""
    keys = [key for _, *keys in _version_keys(commit) for key in keys if key is not None]
    return keys + [(commit.sha, f.path) for f in notes_files(commit)]


def expect_versions(commits: Iterable[Commit], texts: FileTexts, collected: Collected) -> None:
    """Count, for `collected`, every Python version the commits' surfaces will ask for (a batch's)."""
    for commit in commits:
        for f, *keys in _version_keys(commit):
            if parsed_kind(f.path) == "python":
                for key in keys:
                    if key is not None:
                        collected.expect(texts.texts.get(key), f.path.endswith("__init__.py"))


def commit_facts(
    commit: Commit,
    texts: FileTexts,
    packaging_files: Mapping[str, str],
    tree: Collection[str] | None,
    cache: dict[tuple, Packaging | None] | None = None,
    collected: Collected | None = None,
) -> tuple[tuple[SurfaceChange, ...] | None, frozenset[str] | None, frozenset[str] | None]:
    """(surface, shipped, prose) of one commit from what a source read (prose: `read_surface`'s).
    packaging_files: {path: text} of the packaging files near the commit and tree: every path, both read at
    the newest commit of its batch; the commit's own versions of the packaging files it touched replace
    them. cache: shared by the commits of one batch (one tree); collected: the Python versions the batch
    collected already, after `expect_versions` counted them. surface and prose are None when a file it
    needed was not read."""
    if collected is not None:
        collected.trees_after.clear()  # the commit before's, kept for its lookups (inherited.py) until now
    here = _overlaid(dict(packaging_files), texts, [(commit.sha, f.path) for f in commit.files])
    packaging = _packaging(here, tree, commit, cache if cache is not None else {})
    changed = [f.path for f in commit.files]
    shipped = packaging.shipped(changed) if packaging is not None else None
    versions = []
    for f, before_key, after_key in _version_keys(commit):
        keys = [k for k in (before_key, after_key) if k is not None]
        if not all(texts.read(k) for k in keys):
            return None, shipped, None
        if any(k in texts.skipped for k in keys):
            continue  # binary or too large: not parsed
        versions.append(
            FileVersions(
                f.path,
                texts.texts.get(before_key) if before_key else None,
                texts.texts.get(after_key) if after_key else None,
                f.previous_path,
            )
        )
    before = _packaging_before(commit, texts, packaging_files, tree, cache) if _moves_python(commit) else None
    surface, prose = read_surface(versions, packaging, shipped, collected, before)
    return surface + _release_entries(commit, texts), shipped, prose


def _release_entries(commit: Commit, texts: FileTexts) -> tuple[SurfaceChange, ...]:
    """The items the commit adds to its notes, placed by the notes' text; a file not read (over the size cap,
    a request budget spent) has none here: the ranking reads its items from the patch."""
    found: list[SurfaceChange] = []
    for f in notes_files(commit):
        text = texts.texts.get((commit.sha, f.path))
        placed = placed_entries(f.path, f.patch or "", text) if text is not None else None
        found.extend(placed or ())
    return tuple(found)


def _moves_python(commit: Commit) -> bool:
    return any(
        f.status in ("removed", "renamed") and (f.previous_path or f.path).endswith(".py")
        for f in commit.files
    )


def _packaging_before(
    commit: Commit,
    texts: FileTexts,
    packaging_files: Mapping[str, str],
    tree: Collection[str] | None,
    cache: dict[tuple, Packaging | None] | None,
) -> Packaging | None:
    """The packaging at the commit's parent, which says whether users had a module the commit removes or
    renames (a package renamed with its packaging: the old one shipped before): the commit's versions before
    of the packaging files it touched replace the batch's."""
    parent = commit.parents[0] if commit.parents else ""
    arrived = {f.path for f in commit.files if f.previous_path or f.status == "added"}  # not there before
    here = {path: text for path, text in packaging_files.items() if path not in arrived}
    here = _overlaid(here, texts, [(parent, f.previous_path or f.path) for f in commit.files])
    return _packaging(here, tree, commit, cache if cache is not None else {}, before=True)


def _overlaid(
    packaging_files: dict[str, str], texts: FileTexts, keys: Iterable[tuple[str, str]]
) -> dict[str, str]:
    """packaging_files (changed in place) with the versions a commit's source read of those it touched, one
    (sha, path) each: a text replaces the batch's, an absent file (None) is taken out."""
    for sha, path in keys:
        if is_packaging_file(path) and (sha, path) in texts.texts:
            text = texts.texts[sha, path]
            if text is None:
                packaging_files.pop(path, None)
            else:
                packaging_files[path] = text
    return packaging_files
