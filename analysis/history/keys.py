"""What a history counts a past commit under: each file it touched and the file's folders (a path's
follow-up record is kept per file and per folder), and the vendored-looking trees its people edited (a
tree edited often enough is the branch's own code). Shared by a day's index and the index slid day by
day through eval's replay (analysis/history/index.py, sliding.py); cached, because months of history
touch the same files again and again.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from analysis.paths import PathKind, classify_path, updates_dependencies, vendored_tree

FOLDER_DEPTH = 4  # folders up to this many segments deep are scored


@lru_cache(maxsize=1 << 16)
def file_keys(files: tuple[tuple[str, int], ...]) -> frozenset[str]:
    """`path_keys` of a past commit's files, cached: eval replays the same commits day after day."""
    return frozenset(path_keys(path for path, _ in files))


def path_keys(paths: Iterable[str]) -> set[str]:
    """Each file, and each of its folders up to FOLDER_DEPTH deep (with a trailing "/")."""
    keys: set[str] = set()
    for path in paths:
        keys.update(_one_path(path))
    return keys


@lru_cache(maxsize=1 << 16)
def _one_path(path: str) -> tuple[str, ...]:
    segments = path.split("/")[:-1]
    return (
        path,
        *("/".join(segments[:depth]) + "/" for depth in range(1, min(len(segments), FOLDER_DEPTH) + 1)),
    )


def people_trees(files: tuple[tuple[str, int], ...]) -> frozenset[str | None]:
    """The vendored-looking trees a commit by people edits, unless it updates dependencies (then none)."""
    trees = frozenset(vendored_tree(p) for p, _ in files if classify_path(p) == PathKind.VENDORED)
    return trees if trees and not updates_dependencies(p for p, _ in files) else frozenset()
