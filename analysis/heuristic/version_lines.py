"""The project's own version in a diff's lines: whether every changed line of a file only sets it (a release
bump), in a manifest, a module's `__version__` or a VERSION file.
"""

from __future__ import annotations

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


def sets_only_the_version(path: str, diff: Diff) -> bool:
    """Whether the diff changes some line of the file at `path` and each one sets the project's own version."""
    lines = [line for line in diff.changed_lines() if line.strip()]
    bare = bool(_VERSION_FILES.search(path))
    return bool(lines) and all(_VERSION_LINE.match(x) or (bare and _BARE_VERSION.match(x)) for x in lines)
