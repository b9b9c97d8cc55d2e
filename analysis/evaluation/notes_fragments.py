"""The notes key a span's news fragments make (towncrier, reno, changesets, `.. change::` files): each pull
request with the most significant category of the fragments written for it. Pure: the span's changed paths and
the fragments' texts in, the notes out; reading the texts is the sources' job (bot/digest/notes_source.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence

from analysis.evaluation.release_notes import PR_ROLE, PR_URL, ReleaseNotes
from analysis.release_headings import Category
from analysis.surface.release_entries import (
    MAX_ENTRIES,
    fragment_category,
    fragment_type,
    is_fragment_file,
    text_decides,
)
from analysis.titles import PR_DIGITS

# Fragments whose type is in their text, read in one span (a read each on a forge's API): enough for months of
# a busy project's fragments, bounded for a span of years.
MAX_FRAGMENT_READS = 1_000
MAX_FRAGMENT_BYTES = 64_000  # a fragment is a paragraph; a bigger file in a fragment folder is something else

_DIGITS = re.compile(PR_DIGITS)
# What a news fragment names for itself: `1234.feature.rst`'s number, a `:tickets: 1, 2` field (reST
# `.. change::` blocks), "(#1234)".
_NAME_NUMBER = re.compile(rf"^({PR_DIGITS})(?:\.|$)")
_NUMBERS_FIELD = re.compile(r"^\s*:(?:tickets?|prs?|pulls?|issues?):[ \t]+([\d, \t#]{1,200})$")
_PARENTHESISED = re.compile(rf"\(#({PR_DIGITS})\)")


def fragment_notes(
    commits: Iterable[tuple[int | None, Sequence[str]]], texts: Mapping[str, str | None] | None = None
) -> ReleaseNotes:
    """The notes a span's news fragments make: each pull request with the most significant category of the
    fragments written for it. `commits`: (pull request, changed paths) in time order; paths only, so a
    fragment belongs to the first commit that touches it (the release that deletes it comes later), and a
    commit touching more than MAX_ENTRIES fragments is a release compiling them, not one change's declaration.
    `texts`: {path: the fragment's text as that commit added it} (`fragments_to_read`'s), for the fragments
    whose type is in their text, not their name (reno, changesets, `.. change::` blocks): read the way a
    commit's own entries are (analysis/surface/release_entries.fragment_type).

    A fragment is written for the pull requests it names where they landed in the span (its name's number,
    `1234.feature.rst`; in its text a `:tickets:`/`:pr:` field or role, a pull-request URL, a "(#N)"), else
    for the pull request that added it: a number that landed nothing (an issue's) says nothing."""
    texts = texts or {}
    spans = list(commits)
    landed = {pr for pr, _ in spans if pr is not None}
    found: dict[int, Category] = {}
    for (pr, _), new in zip(spans, _added_fragments(paths for _, paths in spans), strict=True):
        for path in new:
            text = texts.get(path)
            lines = text.replace("\r\n", "\n").split("\n") if text is not None else None
            category = fragment_type(path, lines)
            if category is None:
                continue
            named = [n for n in _fragment_numbers(path, lines or ()) if n in landed]
            for number in named or ([pr] if pr is not None else []):
                current = found.get(number)
                if current is None or category.significance < current.significance:
                    found[number] = category
    return ReleaseNotes(found)


def fragments_to_read(commits: Iterable[tuple[str, Sequence[str]]]) -> list[tuple[str, str]]:
    """(commit sha, path) of the fragments `fragment_notes` needs the text of: those a commit adds whose
    name carries no type or a mixed one (`release_entries.text_decides`), at most MAX_FRAGMENT_READS.
    `commits`: (sha, changed paths) in time order."""
    spans = list(commits)
    wanted = [
        (sha, path)
        for (sha, _), new in zip(spans, _added_fragments(paths for _, paths in spans), strict=True)
        for path in new
        if text_decides(path)
    ]
    return wanted[:MAX_FRAGMENT_READS]


def _added_fragments(commits: Iterable[Sequence[str]]) -> Iterator[list[str]]:
    """For each commit in time order, the fragments it touches first; none for a release compiling more than
    MAX_ENTRIES of them."""
    seen: set[str] = set()
    for paths in commits:
        mine = [p for p in paths if fragment_category(p) is not None or is_fragment_file(p)]
        new = [p for p in mine if p not in seen]
        seen.update(mine)
        yield new if len(mine) <= MAX_ENTRIES else []


def _fragment_numbers(path: str, lines: Iterable[str]) -> list[int]:
    """The numbers a fragment names for itself: its name's leading number, its fields and roles, its
    pull-request URLs and "(#N)" (a bare "#N" in prose may name the change it fixes, not its own)."""
    found: list[int] = []
    m = _NAME_NUMBER.match(path.rpartition("/")[2])
    if m:
        found.append(int(m.group(1)))
    for line in lines:
        field = _NUMBERS_FIELD.match(line)
        if field:
            found += [int(n) for n in _DIGITS.findall(field.group(1))]
        found += [int(n) for listed in PR_ROLE.findall(line) for n in _DIGITS.findall(listed)]
        found += [int(m.group(3)) for m in PR_URL.finditer(line)]
        found += [int(n) for n in _PARENTHESISED.findall(line)]
    return list(dict.fromkeys(found))
