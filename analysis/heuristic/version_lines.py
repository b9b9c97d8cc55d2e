"""The project's own version in a diff's lines: whether every changed line of a file only sets it (a release
bump), in a manifest, a module's `__version__`, a VERSION file, or a build file's project declaration
(CMake's `project(x VERSION 1.2.0)`, Meson's `project('x', version: '1.2')`).
"""

from __future__ import annotations

import posixpath
import re

from analysis.heuristic.facts import Diff

# The project's own version: `version = "2.11.0"`, `__version__ = '1.2'`, `"version": "3.0.0"`,
# `VERSION = (1, 2, 0)`, `version='1.2.0',` in setup.py, or a VERSION file's one line.
_VERSION_VALUE = r"""["'(]?v?\d+(?:[.,+-]\s*\w+)*["')]?\s*,?\s*$"""
_VERSION_LINE = re.compile(
    r"""^\s*["']?(?i:[\w.-]*version(?:_info)?_*)["']?\s*[:=]\s*""" + _VERSION_VALUE
)  # also `_COMPATIBLE_CORE_VERSION = '2.46.0'`: a release moves the versions it is built with
_BARE_VERSION = re.compile(r"^\s*" + _VERSION_VALUE)
_VERSION_FILES = re.compile(r"(?:^|/)(?:_?version\.py|version|version\.txt|\.version)$", re.IGNORECASE)

# A build file's own version, wherever the line puts it: CMake's `project(x VERSION 1.2.0 LANGUAGES C)` (or a
# `VERSION 1.2.0` line of a multi-line `project(`), `set(X_VERSION_MINOR 3)`, Meson's `version: '1.2'` and
# `project('x', 'cpp', version: '1.2.0')`. The value is what a release moves; the rest of the line must stay.
_BUILD_VERSION = re.compile(
    r"""(?i)(\bversion\s*:\s*|\bversion\s+|_version(?:_(?:major|minor|patch|tweak))?\s+)(["']?)v?\d+(?:\.\w+)*\2"""
)
# Versions of what the build needs, not of what it builds: a higher one is a new requirement for those who build.
_REQUIRED_VERSION = re.compile(
    r"(?i)\b(?:cmake_minimum_required|cmake_policy|find_package|find_dependency|dependency|subproject)\s*\("
)
_BUILD_VERSION_FILES = ("cmakelists.txt", "meson.build")


def sets_only_the_version(path: str, diff: Diff) -> bool:
    """Whether the diff changes some line of the file at `path` and each one sets the project's own version."""
    lines = [line for line in diff.changed_lines() if line.strip()]
    if _is_build_version_file(path):
        return bool(lines) and _build_version_only(diff)
    bare = bool(_VERSION_FILES.search(path))
    return bool(lines) and all(_VERSION_LINE.match(x) or (bare and _BARE_VERSION.match(x)) for x in lines)


def _is_build_version_file(path: str) -> bool:
    name = posixpath.basename(path).lower()
    return name in _BUILD_VERSION_FILES or name.endswith(".cmake")


def _build_version_only(diff: Diff) -> bool:
    """Every changed line states a version, and the removed lines are the added ones but for its value."""
    sides = []
    for text in (diff.removed, diff.added):
        lines = [line for line in text.split("\n") if line.strip()]
        if not all(_BUILD_VERSION.search(line) and not _REQUIRED_VERSION.search(line) for line in lines):
            return False
        sides.append(sorted(_BUILD_VERSION.sub(r"\1\2V\2", line).strip() for line in lines))
    return sides[0] == sides[1] and bool(sides[0])
