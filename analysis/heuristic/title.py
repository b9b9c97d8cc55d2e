"""What a commit title states by convention: leading tags ("[CI/Build][Bugfix]"), a conventional-commit
prefix ("fix(api)!:"), a revert. The heuristic's change type and grounding's check of the model's
change type both read titles through these, so they agree on what a title says."""

from __future__ import annotations

import functools
import re

TAG_MAX = 60  # characters in one tag: longer bracketed text is prose, not a tag

PR_SUFFIX = re.compile(r"\s*\(#\d+\)\s*$")
REVERT_TITLE = re.compile(r"^\s*(?:partial(?:ly)?\s+)?revert(?:s|ed|ing)?\b", re.IGNORECASE)
REVERTS_SHA = re.compile(r"This reverts commit ([0-9a-f]{7,40})", re.IGNORECASE)
REVERTS_SHA_LINE = re.compile(r"^\s*This reverts commit [0-9a-f]{7,40}\.?\s*$", re.IGNORECASE | re.MULTILINE)
_CONVENTIONAL = re.compile(r"^(?P<type>[A-Za-z]+)(?:\((?P<scope>[^)\n]*)\))?!?:\s*\S")


@functools.cache
def _tags_pattern(longest: int) -> re.Pattern[str]:
    return re.compile(rf"^\s*((?:\[[^\[\]\n]{{1,{longest}}}\]\s*:?\s*)+)")


def leading_tags(title: str, longest: int = TAG_MAX) -> tuple[tuple[str, ...], str]:
    """The tags a title starts with, normalised ("[CI/Build] [Bug_Fix]:" → ("ci/build", "bugfix")),
    and the title after them; no tags and the whole title when it starts with none."""
    m = _tags_pattern(longest).match(title)
    if not m:
        return (), title
    return tuple(norm_tag(t) for t in re.findall(r"\[([^\[\]\n]+)\]", m.group(1))), title[m.end() :]


def norm_tag(tag: str) -> str:
    return re.sub(r"[\s_-]+", "", tag.lower())


def is_revert_title(title: str) -> bool:
    """A title that says it reverts something, after any leading tags: `[Core] Revert "…"`."""
    return bool(REVERT_TITLE.match(leading_tags(title)[1]))


def conventional_prefix(text: str) -> tuple[str, str] | None:
    """The type and scope, lower-case, of a conventional-commit prefix: "fix(API)!: x" → ("fix", "api")."""
    m = _CONVENTIONAL.match(text)
    if not m:
        return None
    return m.group("type").lower(), (m.group("scope") or "").strip().lower()
