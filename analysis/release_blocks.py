"""Release notes kept as reStructuredText `.. change::` blocks in one compiled file (a Sphinx changelog
directive: `.. changelog:: 2.7.0`, then per change `.. change:: Title` with fields `:type: feature`,
`:breaking:`, `:pr: 3100`, `:issue: 3068`). Each block lists the numbers its fields name, with the kind its
`:type:` or `:tags:` field declares, breaking when it carries a `:breaking:` flag: the maintainers' own word
on each change. Pure: lines in, {number: category} and the lines the blocks cover out
(analysis/evaluation/release_notes.py reads the rest of the file as before).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from analysis.release_headings import Category
from analysis.surface.fragment_types import type_category
from analysis.titles import PR_DIGITS

_DIRECTIVE = re.compile(r"^( {0,12})\.\.[ \t]+change::")
_FIELD = re.compile(r"^\s+:([\w-]{1,40}):(?:[ \t]+(.{0,200}))?$")
_DIGITS = re.compile(PR_DIGITS)
# Fields that name the change's pull requests or issues (GitHub numbers both in one sequence, so an issue's
# number matches no commit and says nothing).
_NUMBER_FIELDS = frozenset({"pr", "prs", "pull", "pulls", "issue", "issues", "tickets", "ticket"})
_KIND_FIELDS = frozenset({"type", "tags"})


@dataclass(frozen=True, slots=True)
class ChangeBlocks:
    prs: dict[int, Category]  # each number the blocks name, with its most significant category
    covered: frozenset[int]  # indexes of the lines inside blocks: their prose names other changes ("#2751")


def change_blocks(lines: Sequence[str]) -> ChangeBlocks:
    found: dict[int, Category] = {}
    covered: set[int] = set()
    i = 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i])
        if m is None:
            i += 1
            continue
        indent = len(m.group(1))
        end = i + 1
        while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent):
            end += 1
        covered.update(range(i, end))
        fields = _fields(lines[i + 1 : end], indent)
        category = _category(fields)
        for name, value in fields:
            if name in _NUMBER_FIELDS:
                for number in (int(n) for n in _DIGITS.findall(value)):
                    current = found.get(number)
                    if current is None or category.significance < current.significance:
                        found[number] = category
        i = end
    return ChangeBlocks(found, frozenset(covered))


def _fields(body: Sequence[str], indent: int) -> list[tuple[str, str]]:
    """The field list right under the directive (up to the first line that is not a field)."""
    out: list[tuple[str, str]] = []
    for line in body:
        m = _FIELD.match(line)
        if m is None or _indent(line) <= indent:
            break
        out.append((m.group(1).lower(), (m.group(2) or "").strip()))
    return out


def _category(fields: list[tuple[str, str]]) -> Category:
    if any(name == "breaking" for name, _ in fields):
        return Category.BREAKING
    kinds = [
        type_category(word.strip())
        for name, value in fields
        if name in _KIND_FIELDS
        for word in value.split(",")
        if word.strip()
    ]
    named = [k for k in kinds if k is not None]
    return min(named, key=lambda c: c.significance, default=Category.OTHER)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
