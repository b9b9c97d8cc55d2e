"""The kind of change a news fragment declares, from its name or from its own text (DESIGN.md §3c):
- its name: towncrier's `<id>.<type>[.<n>].<suffix>` (`1234.bugfix.rst`, `Reader.1234.enhancement.rst`);
- its text, where the tool keeps the type inside the file: reno's YAML sections (`features:`, `upgrade:`,
  `fixes:`, also a project's own `features_<area>:`), a reST `.. change::` block's `:tags: bug, orm` line,
  a changeset's front matter (`"pkg": major|minor|patch`, the version bump the change asks for);
- both, where the name's type names deprecations and removals together (towncrier's default `removal`,
  "Deprecations and Removals"): its text says which, as an item under such a heading does.
Pure: a path and the lines a commit adds in, a category out. Read by analysis/surface/release_entries.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from analysis.release_headings import IGNORE, Category, heading_category

_SUFFIXES = ("md", "rst", "txt", "markdown")
_TYPE = re.compile(r"^[a-z][a-z_-]{1,30}$")
# Type words that name no heading category (the rest are read as headings: "bugfix" → fix,
# "new_feature" → feature, "python_removal" → breaking, "deprecation").
_TYPES = {
    "api": Category.CHANGE,  # "API change": an existing call behaves differently
    "efficiency": Category.PERFORMANCE,
    "enh": Category.FEATURE,
    "expired": Category.BREAKING,  # expired deprecations: the deprecated names are gone
    "future": Category.DEPRECATION,  # a change announced for a later release: users are warned now
    "major-feature": Category.FEATURE,
    "usecase": Category.FEATURE,  # a new use the API supports
    "vendor": Category.DEPENDENCIES,  # a vendored dependency upgraded: what users get changes
    "contrib": Category.INTERNAL,  # for contributors, not users
    "process": Category.INTERNAL,
    "misc": Category.OTHER,
    "trivial": Category.OTHER,
    "other": Category.OTHER,
}
# reno's sections whose names say something else as headings ("upgrade" is not a dependency: it is what
# users must do when they upgrade, an incompatible change).
_SECTIONS = {
    "upgrade": Category.BREAKING,
    "critical": Category.FIX,
    "issues": Category.OTHER,  # known issues
    "prelude": Category.OTHER,
}
_BUMPS = {"major": Category.BREAKING, "minor": Category.FEATURE, "patch": Category.FIX}
# Type words whose section names deprecations and removals together: towncrier's default `removal` type is
# titled "Deprecations and Removals", so its fragments say which they are, as items under such a heading do.
_MIXED_TYPES = frozenset({"removal", "removals"})

_YAML_KEY = re.compile(r"^([a-z][a-z0-9_]{0,40}):\s*(?:[|>][-+]?\s*)?$")
_FIELD = re.compile(r"^\s*:[\w-]{1,40}:(?:\s|$)")  # a reST field (`:tickets: 123`), not a role (`:class:`)
_TAGS = re.compile(r"^\s*:tags:\s*(.{1,200})$")
_BUMP = re.compile(r"""^\s*(?:"[^"]{1,214}"|'[^']{1,214}'|[\w@./-]{1,214})\s*:\s*(major|minor|patch)\s*$""")


# A type written as words run together ("breakingchange", "newandimproved"): its leading word is read apart.
_FUSED = re.compile(
    r"^(breaking|deprecations?|removals?|features?|new(?=and)|fix(?:es)?|bugs?|docs?|internal)(?=[a-z]{3})"
)


def type_category(kind: str) -> Category | None:
    """The category a fragment type word names ("bugfix" → fix), None when it names none."""
    kind = kind.lower()
    if kind in _TYPES:
        return _TYPES[kind]
    words = kind.replace("_", " ").replace("-", " ")
    found = heading_category(words)
    if found is None and (fused := _FUSED.match(words)):
        found = heading_category(f"{fused.group(1)} {words[fused.end() :]}")
    return Category(found) if found not in (None, IGNORE) else None


def name_category(name: str) -> Category | None:
    """The type a fragment's file name carries: its last word before the suffix and an optional counter,
    after at least an id (`1234.feature.md`, `+orphan.bugfix.rst`, `Reader.1234.enhancement.rst`)."""
    kind = _type_word(name)
    return type_category(kind) if kind is not None else None


def is_mixed_name(name: str) -> bool:
    """Whether a fragment's name carries a type that names deprecations and removals together (its text
    decides which: analysis/release_headings.mixed_item_kind)."""
    return _type_word(name) in _MIXED_TYPES


def _type_word(name: str) -> str | None:
    parts = name.lower().split(".")
    if len(parts) > 2 and parts[-1] in _SUFFIXES:
        parts.pop()
    if len(parts) > 2 and parts[-1].isdigit():
        parts.pop()
    if len(parts) < 2 or not parts[0] or not _TYPE.match(parts[-1]):
        return None
    return parts[-1]


def text_category(path: str, added: Sequence[str]) -> Category | None:
    """The type a fragment's own text declares (see the module docstring), the most significant when it
    declares several; None when it declares none."""
    lower = path.lower()
    if lower.endswith((".yaml", ".yml")):
        found = [_section_category(m.group(1)) for line in added if (m := _YAML_KEY.match(line))]
    elif lower.endswith((".md", ".markdown")):
        found = [_BUMPS[m.group(1)] for line in _front_matter(added) if (m := _BUMP.match(line))]
    else:
        found = [
            type_category(tag.strip())
            for line in added
            if (m := _TAGS.match(line))
            for tag in m[1].split(",")
        ]
    named = [c for c in found if c is not None]
    return min(named, key=lambda c: c.significance, default=None)


def body_lines(added: Sequence[str]) -> list[str]:
    """A fragment's lines of prose: without YAML keys, front matter, directives and field lists."""
    body = list(added)
    if body and body[0].strip() == "---":
        end = next((i for i, line in enumerate(body[1:], 1) if line.strip() == "---"), 0)
        body = body[end + 1 :]
    return [
        line
        for line in body
        if line.strip()
        and not _YAML_KEY.match(line)
        and line.strip() not in ("- |", "- >", "-")
        and not line.lstrip().startswith(".. ")
        and not _FIELD.match(line)
    ]


def _section_category(key: str) -> Category | None:
    section = key.split("_", 1)[0]  # a project's own `features_<area>` section is a features section
    return _SECTIONS.get(section) or type_category(section)


def _front_matter(added: Sequence[str]) -> Sequence[str]:
    if not added or added[0].strip() != "---":
        return ()
    end = next((i for i, line in enumerate(added[1:], 1) if line.strip() == "---"), len(added))
    return added[1:end]
