"""Readers of a diff's lines for changes that cannot alter behaviour: files moved whole, formatting only,
annotations (and the typing imports they need) only, comments and blank lines only.
"""

from __future__ import annotations

import re

from analysis.heuristic.facts import Diff
from analysis.models import FileChange

_ANNOTATION = re.compile(
    r"(?<![\w\"'.\[])([A-Za-z_]\w*)[ \t]*:[ \t]*[A-Za-z_][\w.\[\], |\"']*?(?=[ \t]*(?:=|,[ \t]*$|\)|$))",
    re.M,
)
_RETURN_ANNOTATION = re.compile(r"\)[ \t]*->[ \t]*[^:\n]+(?=:[ \t]*$)", re.M)
_IMPORT = re.compile(r"^[ \t]*(from[ \t]+\S+[ \t]+)?import[ \t].*$", re.M)
_ANNOTATED_EXT = (".py", ".pyi", ".ts", ".tsx")


def moved_files(files: list[FileChange], diffs: dict[str, Diff]) -> set[str]:
    """Paths of files deleted in one place and added with the same content elsewhere: a rename
    that the source reported as delete + add (git without rename detection does)."""
    deleted: dict[str, str] = {}
    for f in files:
        diff = diffs.get(f.path)
        if f.status == "removed" and diff is not None and not diff.added:
            deleted.setdefault(_squash(diff.removed), f.path)
    moved: set[str] = set()
    for f in files:
        diff = diffs.get(f.path)
        if f.status == "added" and diff is not None and not diff.removed:
            twin = deleted.pop(_squash(diff.added), None)
            if twin is not None:
                moved.update((twin, f.path))
    return moved


def mechanical_file(f: FileChange, diff: Diff | None) -> str | None:
    if diff is None:
        return None
    removed, added = diff.removed, diff.added
    if not removed.strip() or not added.strip():
        return None
    if _squash(removed) == _squash(added):
        return "formatting"
    if not f.path.endswith(_ANNOTATED_EXT) or "lambda" in removed or "lambda" in added:
        return None  # "lambda x: y" is code, not an annotation
    return "annotations" if _squash(_unannotated(removed)) == _squash(_unannotated(added)) else None


_COMMENT = re.compile(r"^\s*(#|//|/\*|\*|--|;|<!--|$)")


# In C and the languages that share its preprocessor a `#` line is a directive (`#define X 1`, `#undef X`), code.
_PREPROCESSED = frozenset({"c", "cpp", "cuda", "hip", "metal", "opencl"})
_DIRECTIVE = re.compile(r"^\s*#\s*[a-z]+\b")


def comments_only(diff: Diff | None) -> bool:
    """True when every changed line is a comment or blank: such a change cannot alter behaviour."""
    if diff is None:
        return False
    directives = diff.language in _PREPROCESSED
    return all(
        _COMMENT.match(line) and not (directives and _DIRECTIVE.match(line)) for line in diff.changed_lines()
    )


def _squash(text: str) -> str:
    return "".join(text.split())


def _unannotated(text: str) -> str:
    # Annotation changes often add or drop typing imports: imports do not count either.
    text = _IMPORT.sub("", text)
    return _RETURN_ANNOTATION.sub(")", _ANNOTATION.sub(r"\1", text))
