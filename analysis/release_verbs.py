"""Release notes that classify their items by leading verbs (DESIGN.md §3c): Pallets-style CHANGES.rst
("Version 3.1.0" / "Released …" / "- Add … :pr:`123`") and the many Markdown files written like it give each
item no heading or prefix of a category; its first word is how such projects say what it is. Read only in a
file written that way, decided once for the whole file, so notes with category headings read as before.
Pure: lines in, a reader of items out, for analysis/release_headings.listed_lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from analysis.release_headings import ITEM, Category, item_text, listed_lines

# Notes written as plain items under version headings ("Version 3.1.0" / "- Add …" / "- Fix …") classify each
# item by its leading verb: (category, the item's first words), tried in this order. Read only in files
# written that way (`written_with_verbs`), where no heading or prefix names a category.
_VERB_RULES: tuple[tuple[Category, re.Pattern[str]], ...] = tuple(
    (category, re.compile(rf"^(?:{words})(?![\w-])"))
    for category, words in (
        # what an "Add …" item adds decides when it is tests or docs, not a capability users get
        (Category.INTERNAL, r"add(?:s|ed)? (?:(?:a|an|the|more|missing|some) )?(?:unit )?tests?"),
        # what "Enable …" switches on may be the project's own checks: tests, linters, CI
        (
            Category.INTERNAL,
            r"enable(?:s|d)? [^.]{0,60}?\b(?:tests?|ci|ruff|flake8|mypy|pylint|lint\w*)(?![\w-])",
        ),
        (
            Category.DOCS,
            # "Added user guide for running X": a guide or tutorial is documentation, whoever it names
            r"add(?:s|ed)? (?:(?:a|an|the|more|missing|some) )?(?:(?:user|developer|migration|installation) )?"
            r"(?:docs?|documentation|docstrings?|examples?|guides?|tutorials?)|"
            r"document(?:s|ed)?|docs?|fix(?:es|ed)? (?:a |some )?typos?",
        ),
        (
            Category.PERFORMANCE,
            r"improve(?:s|d)? (?:the )?(?:performance|speed)|speed(?:s|ed)? up|faster|optimi[sz]e(?:s|d)?",
        ),
        (Category.DEPRECATION, r"deprecate(?:s|d)?"),
        (Category.BREAKING, r"remove(?:s|d)?|drop(?:s|ped)?"),
        (
            Category.CHANGE,
            r"(?:change(?:s|d)?|make(?:s)?|made|set(?:s)?|enable(?:s|d)?|disable(?:s|d)?) [^.]{0,80}?\bdefaults?|"
            r"change(?:s|d)?",
        ),
        (Category.FIX, r"fix(?:es|ed)?"),
        (
            Category.FEATURE,
            r"add(?:s|ed)?|support(?:s|ed)?|allow(?:s|ed)?|introduce(?:s|d)?|new|implement(?:s|ed)?|"
            # "Enabled TP=3 with INT4 checkpoints": what was not possible before is (by default: a change, above)
            r"provide(?:s|d)?|expose(?:s|d)?|enable(?:s|d)?",
        ),
    )
)
# GitHub's generated list ("… by @ann in https://…/pull/12"): its items are the pull requests' titles, which
# the ranking reads too: a key drawn from their verbs would score the ranking against its own input.
_GENERATED_ITEM = re.compile(r"\bby @[\w-]{1,40}(?:\[bot\])? in\b")
# "Written that way": of a file's top-level items, at most this share stands under a category heading or
# carries a prefix, and at least this share of the rest (and MIN_VERB_ITEMS) starts with a verb above.
MAX_CATEGORISED_SHARE = 0.2
MIN_VERB_SHARE = 0.3
MIN_VERB_ITEMS = 3


def verb_category(text: str) -> Category | None:
    """The category an item's leading verb names ("Add …" → feature, "Drop …" → breaking), None when it
    starts with none of them or is a generated item (a pull request's title)."""
    words = " ".join(text[:300].lstrip("[*_ ").lower().split()[:20])  # untrusted: its first words only
    if _GENERATED_ITEM.search(text):
        return None
    for category, pattern in _VERB_RULES:
        if pattern.match(words):
            return category
    return None


def written_with_verbs(lines: Sequence[str], skip: Callable[[str], bool] | None = None) -> bool:
    """Whether notes classify their items by leading verbs rather than by headings or prefixes (see
    MAX_CATEGORISED_SHARE): decided once for a whole file, so files with category headings read as before."""
    categorised = plain = verb_led = 0
    for _, line, category, state in listed_lines(lines, skip):
        m = ITEM.match(line)
        if m is None or len(state.items) != 1:
            continue  # a continuation line or a nested item: part of its top-level item
        if category != Category.OTHER:
            categorised += 1
        else:
            plain += 1
            verb_led += verb_category(item_text(m.group(2))) is not None
    return (
        verb_led >= MIN_VERB_ITEMS
        and verb_led >= MIN_VERB_SHARE * plain
        and categorised <= MAX_CATEGORISED_SHARE * (categorised + plain)
    )


def item_reader(
    lines: Sequence[str], skip: Callable[[str], bool] | None = None
) -> Callable[[str], Category | None] | None:
    """`verb_category` for notes written with verbs, else None: what listed_lines' read_item takes."""
    return verb_category if written_with_verbs(lines, skip) else None
