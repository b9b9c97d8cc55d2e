"""Which paths are packaging files: names and places only, no parsing. Kept apart from
analysis/surface/packaging_texts.py, whose parsers (TOML, setup.cfg, requirement grammars) a verb that reads its
facts from the store never needs to import (issue 21: a card's start)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Iterable

from analysis.paths import folder_kind

PACKAGING_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "package.json", "Cargo.toml", "go.mod")
# Build descriptions a packaging file's backend reads to know what it installs (meson-python's `meson.build`,
# each folder's own, reached by `subdir()`): read with the packaging, but build code, not metadata.
BUILD_DESCRIPTIONS = ("meson.build",)
# At most this many build descriptions are read beside the packaging (the shallowest first).
MAX_BUILD_DESCRIPTIONS = 200


def is_packaging_file(path: str) -> bool:
    return posixpath.basename(path) in PACKAGING_FILES


def is_packaging_input(path: str) -> bool:
    """A packaging file or a build description that decides, with it, what a distribution ships."""
    return posixpath.basename(path) in PACKAGING_FILES or posixpath.basename(path) in BUILD_DESCRIPTIONS


def is_requirements_file(path: str) -> bool:
    name = posixpath.basename(path).lower()
    folder = posixpath.basename(posixpath.dirname(path)).lower()
    return name.endswith((".txt", ".in")) and (
        name.startswith(("requirements", "constraints")) or folder == "requirements"
    )


# A requirements file named for a development task (tests, docs, CI jobs, translation or release
# scripts, the changelog) or for a maintainers' tool (a test runner, a linter, a docs or news-fragment
# builder) installs tools for the maintainers, not what users get. Not "build": what building from source
# needs is everyone's who does (`is_build_requirements`).
_DEV_REQUIREMENTS = re.compile(
    r"(^|[^a-z])(dev|develop|development|test|tests|testing|doc|docs|lint|ci|bench|benchmark|"
    r"typing|mypy|format|style|coverage|github|actions|workflows?|translations?|i18n|l10n|release|"
    r"publish|deploy|pre-commit|precommit|tools?|tooling|scripts?|examples?|notebooks?|tox|nox|"
    r"changelog|news|towncrier|sphinx|pytest|flake8|pylint|ruff|isort)([^a-z]|$)"
)


def is_dev_requirements(path: str) -> bool:
    """A requirements file for the maintainers' tasks, not what users install: named for one
    (`requirements-dev.txt`, `requirements/ci-gpu.txt`, `test-requirements.txt`) or in a folder named for one
    inside a requirements folder (`requirements/dev/base.txt`)."""
    return any(_DEV_REQUIREMENTS.search(part) for part in _requirements_names(path))


def _requirements_names(path: str) -> tuple[str, ...]:
    """The names a requirements file is known by: its stem and its folders inside a requirements folder;
    () for a file that is no requirements file (`.txt`/`.in` named for requirements or constraints, or in a
    requirements folder)."""
    parts = path.lower().split("/")
    stem, _, suffix = parts[-1].rpartition(".")
    if suffix not in ("txt", "in") or not stem:
        return ()
    below = parts[parts.index("requirements") + 1 : -1] if "requirements" in parts[:-1] else None
    if below is None and not re.search(r"requirements|constraints", stem):
        return ()
    return (stem, *(below or ()))


_BUILD_REQUIREMENTS = re.compile(r"(^|[^a-z])build([^a-z]|$)")


def is_build_requirements(path: str) -> bool:
    """A requirements file of what building from source needs (`requirements-build.txt`,
    `requirements/build.txt`, `build-requirements.in`): everyone who installs from an sdist or a checkout
    resolves it, as a pyproject's `[build-system] requires`. Not one also named for a maintainers' task
    (`requirements-docs-build.txt`: the docs' build)."""
    names = _requirements_names(path)
    return any(_BUILD_REQUIREMENTS.search(n) for n in names) and not is_dev_requirements(path)


# Distributions read beside those above the changed paths: the repository's other packages, whose names
# tell a pin on a sibling (released from the same repository) from an outside dependency.
MAX_SIBLING_PACKAGING = 40


def _beside(path: str, names: Iterable[str]) -> set[str]:
    folder = posixpath.dirname(path)
    return {f"{folder}/{name}" if folder else name for name in names}


def packaging_paths(changed: Iterable[str], tree: Collection[str] | None) -> list[str]:
    """The packaging files that may decide for the changed paths: at the top and, where the tree is known,
    in every folder above a changed path, and the packaging of the repository's other distributions (not
    those in test, docs, example, CI or tooling trees; the shallowest first, at most
    MAX_SIBLING_PACKAGING); and the build descriptions (meson.build) of a project whose pyproject.toml has one
    beside it (at most MAX_BUILD_DESCRIPTIONS)."""
    wanted = set(PACKAGING_FILES)
    if tree is not None:
        folders = {""}
        for path in changed:
            parts = path.split("/")[:-1]
            folders |= {"/".join(parts[:i]) + "/" for i in range(1, len(parts) + 1)}
        present = set(tree)
        wanted = {f"{folder}{name}" for folder in folders for name in PACKAGING_FILES} & present
        # the names' endings first (one C call a path: the tree's thousands of paths, every batch)
        siblings = sorted(
            (p for p in present if p.endswith(PACKAGING_FILES) and posixpath.basename(p) in PACKAGING_FILES
             and p not in wanted and folder_kind(p) is None),
            key=lambda p: (p.count("/"), p),
        )  # fmt: skip
        wanted.update(siblings[:MAX_SIBLING_PACKAGING])
        # beside a pyproject.toml (a meson-python project), a build description's `subdir()` reaches any folder
        # below: all of them, but those in test, docs or tooling trees
        roots = tuple(
            p[: -len("pyproject.toml")]
            for p in wanted
            if posixpath.basename(p) == "pyproject.toml" and _beside(p, BUILD_DESCRIPTIONS) & present
        )
        descriptions = sorted(
            (p for p in present if p.startswith(roots) and posixpath.basename(p) in BUILD_DESCRIPTIONS
             and folder_kind(p) is None),
            key=lambda p: (p.count("/"), p),
        ) if roots else []  # fmt: skip
        wanted.update(descriptions[:MAX_BUILD_DESCRIPTIONS])
    else:
        wanted.update(BUILD_DESCRIPTIONS)
    return sorted(wanted)
