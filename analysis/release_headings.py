"""The headings and items of release notes, read into the categories of change they name (DESIGN.md §3c):
shared by the notes read whole as `eval`'s answer key (analysis/evaluation/release_notes.py) and by the
entries one commit adds to its own notes (analysis/surface/release_entries.py). Pure: lines in, categories out.

The rules (Markdown or reStructuredText, any mix of them) are listed in release_notes.py's docstring.
Over 400 lines because the heading words, the item prefixes and the line reader that applies them are one
table read together: split apart, a rule and the words it reads would sit in different files.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum


class Category(StrEnum):
    """In order of significance: a PR listed twice keeps the earlier one."""

    BREAKING = "breaking"
    FEATURE = "feature"
    CHANGE = "change"  # a change of existing behaviour, neither clearly new nor a fix
    DEPRECATION = "deprecation"
    PERFORMANCE = "performance"
    FIX = "fix"
    DEPENDENCIES = "dependencies"  # what users install: packaging, dependency upgrades
    DOCS = "docs"
    INTERNAL = "internal"
    OTHER = "other"  # listed under no heading or prefix that names a category

    @property
    def significance(self) -> int:
        """0 for the most significant."""
        return list(Category).index(self)


IGNORE = "ignore"  # a heading whose section lists people, or every merged PR: not what users were told
# Kinds whose sections projects divide by topic; a generic "Changes" is often the file's own title, and so
# never one.
_UMBRELLAS = frozenset({Category.BREAKING, Category.DEPRECATION, Category.FEATURE})

# (category, words) — a heading's category is that of the word found earliest in it (ties: this order).
_HEADING_WORDS: tuple[tuple[str, str], ...] = (
    (IGNORE, r"new contributors?|contributors?|thanks|acknowledge?ments?|sponsors?|authors?"),
    # An index of every pull request merged ("Pull-Requests:", a "Full Changelog" table) beside the sections
    # the maintainers wrote: a PR listed only there is one they chose not to tell users about.
    (IGNORE, r"(?:merged )?pull[- ]requests?|full change ?log|commits?"),
    (
        Category.BREAKING,
        r"breaking|backwards?[- ]incompatib\w*|incompatib\w*|removed|removals?|dropped|compatibility",
    ),
    (Category.DEPRECATION, r"deprecat\w*"),
    (Category.DEPENDENCIES, r"packaging|dependenc\w*|deps|upgrades?|bumps?"),
    (
        Category.INTERNAL,
        r"internals?|refactor\w*|ci|chores?|maintenance|tests?|testing|build|builds|"
        r"infrastructure|tooling|development|code quality|clean[- ]?ups?|lint\w*",
    ),
    (Category.DOCS, r"docs?|documentation|translations?|i18n|l10n|examples?|tutorials?"),
    (Category.PERFORMANCE, r"perf|performance|speed[- ]?ups?|optimi[sz]\w*"),
    (Category.FIX, r"fix\w*|bugs?|bug[- ]?fix\w*|security|vulnerabilit\w*"),
    # "Model support", "Hardware and operator support": what now works that did not
    (Category.FEATURE, r"features?|added|additions?|new|enhancements?|improvements?|stabili[sz]\w*|support"),
    (Category.CHANGE, r"changes?|changed|behaviou?rs?"),
)
_HEADING_PATTERNS = tuple(
    (cat, re.compile(rf"(?<![\w-])(?:{words})(?![\w-])")) for cat, words in _HEADING_WORDS
)
# Words that say what happened to the features a heading names: they name its kind wherever they stand.
_OVERRIDING = re.compile(
    r"(?<![\w-])(?:breaking|backwards?[- ]incompatib\w*|incompatib\w*|removed|dropped|deprecat\w*)(?![\w-])"
)
# A heading that names deprecations and breaking changes as two kinds side by side ("Deprecation & Breaking
# Changes", "Deprecations and Removals"): its items say which they are (see `mixed_item_kind`).
_MIXED = re.compile(
    r"(?<![\w-])deprecat\w*\s*(?:and|&|,|/|\+)\s*(?:breaking|removals?|backwards?[- ]incompatib\w*|incompatib\w*)"
    r"|(?<![\w-])(?:breaking|removals?|backwards?[- ]incompatib\w*|incompatib\w*)(?:\s+changes?)?\s*(?:and|&|,|/|\+)\s*"
    r"deprecat\w*"
)
# A heading that names additions and removals side by side ("New and removed platforms"): its items say which.
_MIXED_NEW = re.compile(
    r"(?<![\w-])(?:new|added|additions?)\s*(?:and|&|,|/|\+)\s*(?:removed|removals?|dropped)(?![\w-])"
)
# What an item under such a heading says first: deprecated (still works), or taken away now.
_ITEM_DEPRECATED = re.compile(r"(?<![\w-])deprecat\w*", re.IGNORECASE)
_ITEM_TAKEN = re.compile(
    r"(?<![\w-])(?:remov(?:ed|es|e|al)|dropp(?:ed|ing)|drops?|renam(?:ed|es|e)|disabl(?:ed|es|e)|delet(?:ed|es|e)"
    r"|no\s+longer|breaking)(?![\w-])",
    re.IGNORECASE,
)
# Words of an item under a heading of changes that say something was withdrawn from users (`withdrawn_kind`).
_WITHDRAWN = re.compile(
    r"(?<![\w-])(?:remov\w*|dropp?\w*|discontinu\w*)\s+(?:the\s+)?support(?![\w-])"
    # "Support for Python 3.8 has been removed", "support for it was also dropped": one sentence ("3.8" in it)
    r"|(?<![\w-])support\b(?:[^.;]|\.(?=\d)){0,80}?\b(?:has|have|is|are|was|were)\s+(?:\w+\s+){0,2}?"
    r"(?:removed|dropped|discontinued)"
    r"|(?<![\w-])no\s+longer\s+(?:supports?|provides?|accepts?|allows?|exposes?|exports?)(?![\w-])",
    re.IGNORECASE,
)
# An item that calls itself a fix ("Fix crash on …", "Fixed …") under a heading of improvements to one topic
# ("Incremental Checking Improvements", "Improvements to X"): such a heading gathers fixes and additions alike,
# and the item's own word says which it is. A heading that names features ("New Features / fixes") decides.
_ITEM_FIX = re.compile(r"^\W{0,3}fix(?:es|ed)?(?![\w-])", re.IGNORECASE)
_IMPROVEMENTS = re.compile(r"(?<![\w-])improvements?(?![\w-])")
_NAMES_FEATURES = re.compile(r"(?<![\w-])(?:features?|new|added|additions?|enhancements?)(?![\w-])")
_DEPRECATES = re.compile(
    r"^\W*deprecat\w*|(?<![\w-])(?:is|are|was|were|been|now)\s+deprecated(?![\w-])", re.IGNORECASE
)
# A heading that names a release rather than a kind of change: a version, a date, "Unreleased". With a word
# of a specific kind it names both ("Backwards incompatible changes in 5.1", "Bug Fixes in This Version"): the
# kind is kept; with only "changes" or "new" it names the release.
_GENERIC = re.compile(r"(?<![\w-])(?:changes?|changed|new)(?![\w-])")
RELEASE_HEADING = re.compile(
    r"\d+\.\d+|\d{4}-\d{2}-\d{2}|unreleased|upcoming|latest|what'?s (?:changed|new)|release notes?|"
    r"changelog|change log|version|history"
)

# Conventional-commit types and gitmoji, for items under no category heading.
_CONVENTIONAL = re.compile(r"^(\w+)(?:\(([^)]*)\))?(!)?:\s")
_CONVENTIONAL_TYPES = {
    "feat": Category.FEATURE,
    "feature": Category.FEATURE,
    "fix": Category.FIX,
    "bugfix": Category.FIX,
    "perf": Category.PERFORMANCE,
    "docs": Category.DOCS,
    "doc": Category.DOCS,
    "refactor": Category.INTERNAL,
    "chore": Category.INTERNAL,
    "ci": Category.INTERNAL,
    "test": Category.INTERNAL,
    "tests": Category.INTERNAL,
    "build": Category.INTERNAL,
    "style": Category.INTERNAL,
    "deps": Category.INTERNAL,
    "deprecate": Category.DEPRECATION,
    "deprecation": Category.DEPRECATION,
    "example": Category.DOCS,
    "examples": Category.DOCS,
}
# A scope that names where the work is, when that is no code users run: `feat(ci):` adds to CI, `fix(docs):`
# mends the docs, whatever its type says.
_CONVENTIONAL_SCOPES = {
    "ci": Category.INTERNAL,
    "test": Category.INTERNAL,
    "tests": Category.INTERNAL,
    "docs": Category.DOCS,
    "doc": Category.DOCS,
    "readme": Category.DOCS,
    "example": Category.DOCS,
    "examples": Category.DOCS,
}
_GITMOJI = {
    "💥": Category.BREAKING,
    "✨": Category.FEATURE,
    "🎉": Category.FEATURE,
    "🐛": Category.FIX,
    "🚑": Category.FIX,
    "🩹": Category.FIX,
    "🔒": Category.FIX,
    "⚡": Category.PERFORMANCE,
    "🗑": Category.DEPRECATION,
    "📝": Category.DOCS,
    "🌐": Category.DOCS,
    "✏": Category.DOCS,
    "💡": Category.DOCS,
    "♻": Category.INTERNAL,
    "🎨": Category.INTERNAL,
    "👷": Category.INTERNAL,
    "💚": Category.INTERNAL,
    "🔧": Category.INTERNAL,
    "🔨": Category.INTERNAL,
    "⬆": Category.INTERNAL,
    "⬇": Category.INTERNAL,
    "📌": Category.INTERNAL,
    "➕": Category.INTERNAL,
    "➖": Category.INTERNAL,
    "✅": Category.INTERNAL,
    "🧪": Category.INTERNAL,
    "🚨": Category.INTERNAL,
    "🔖": Category.INTERNAL,
    "🚚": Category.INTERNAL,
    "📦": Category.INTERNAL,
    "🙈": Category.INTERNAL,
}
_LEADING_TAG = re.compile(r"^\[([^\]]{1,30})\]\s")
BREAKING_ITEM = re.compile(
    r"^breaking\b|\bbreaking[- ]changes?\b|\[breaking\]|\(breaking\)|💥|^\w+(?:\([^)]*\))?!:", re.IGNORECASE
)

# Notes are untrusted text: every pattern below runs in linear time on any line (bounded repeats where a
# pattern could otherwise rescan the rest of the line from each of its starts).
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
UNDERLINE = re.compile(r"^ {0,3}([=\-~^\"'`*+#:.])\1{2,}\s*$")
ITEM = re.compile(r"^(\s*)(?:[-*+•]|\d{1,3}[.)])\s+(.*)$")
FENCE = re.compile(r"^\s*(```|~~~)")
_FIRST_CONTRIBUTION = re.compile(r"made (?:their|his|her|a) first contribution", re.IGNORECASE)
# Markup, and the underscores of emphasis (`__Fixes__`) but not those inside an identifier: `new_style` is a
# name, not the word "new".
_MARKUP = re.compile(r"[`*\[\]()<>:]|(?<!\w)_+|_+(?!\w)")
_EMOJI_CODE = re.compile(r":[a-z0-9_+-]+:")


@dataclass(slots=True)
class _Heading:
    level: float
    text: str
    category: str | None  # a Category, IGNORE, or None (no category word)
    # names two kinds side by side (deprecations and breaking changes, or additions and removals): its items
    # decide; this is the kind of an item that says neither
    mixed: Category | None = None


@dataclass(slots=True)
class _Item:
    indent: int
    category: Category | None  # from the item's own prefix or breaking marker
    breaking: bool
    mixed_kind: Category | None = None  # what it says under a mixed heading: deprecated, or taken away
    # what it says under a heading of changes: support withdrawn, deprecated
    withdrawn: Category | None = None
    fix: bool = False  # it calls itself a fix ("Fix …")


@dataclass(slots=True)
class SectionState:
    headings: list[_Heading] = field(default_factory=list)
    items: list[_Item] = field(default_factory=list)
    setext_levels: dict[str, int] = field(default_factory=dict)
    # the file's own way of classifying an item that has no prefix (analysis/release_verbs.py), or None
    read_item: Callable[[str], Category | None] | None = None

    def push_heading(self, level: float, text: str, entry: bool = False) -> None:
        """entry: the heading is one entry's title (a paragraph below it, no list: see `entry_title`)."""
        while self.headings and self.headings[-1].level >= level:
            self.headings.pop()
        category = heading_category(text)
        if entry and category not in (Category.BREAKING, Category.DEPRECATION) and self.section is not None:
            # An entry's title under a section that names its kind ("Changes" › "POWER support update"): the
            # section decides; only a title that says the thing was removed or deprecated says more.
            category = None
        mixed = None
        if category == Category.BREAKING and _MIXED_NEW.search(clean(text)):
            mixed = Category.FEATURE
        elif category == Category.BREAKING and _MIXED.search(clean(text)):
            mixed = Category.BREAKING
        self.headings.append(_Heading(level, text, category, mixed))
        self.items.clear()

    @property
    def section(self) -> str | None:
        """The category of the nearest heading that names one; under a heading of an umbrella kind, its
        subheadings are topics ("Minor features" › "Tests", "Backwards incompatible API changes" › "Other
        API changes"): the umbrella's kind stands when it is the more significant."""
        named = [h.category for h in self.headings if h.category is not None]
        if not named or named[-1] == IGNORE:
            return named[-1] if named else None
        umbrellas = [Category(c) for c in named[:-1] if c in _UMBRELLAS]
        return min([Category(named[-1]), *umbrellas], key=lambda c: c.significance)

    @property
    def bold_level(self) -> float:
        """A bold line alone is a heading one step below the last real (not bold) one."""
        real = [h.level for h in self.headings if h.level == int(h.level)]
        return (real[-1] if real else 0) + 0.5


def heading_category(text: str) -> str | None:
    """The category a heading names (a Category value or "ignore"), or None when it names none."""
    words = clean(text)
    category = _named(words)
    if category == Category.DEPRECATION and _MIXED.search(words):
        return Category.BREAKING  # the stronger kind; `line_category` takes each item's own word
    if category in (Category.FEATURE, Category.CHANGE):
        # "Features deprecated in 5.1", "Features removed in 5.0": what happens to them is the kind
        overriding = _OVERRIDING.search(words)
        if overriding is not None:
            return Category.DEPRECATION if overriding.group().startswith("deprecat") else Category.BREAKING
        if _WITHDRAWN.search(words):
            # "Drop Support for Python 3.9": the word "support" names what was withdrawn, not a feature
            return Category.BREAKING
    if category not in (None, IGNORE) and RELEASE_HEADING.search(words):
        # "Latest Changes", "What's new in 5.1": a release, unless a word of a specific kind names one too
        return _named(_GENERIC.sub(" ", RELEASE_HEADING.sub(" ", words)))
    return category


def _named(words: str) -> str | None:
    """The category of the word found earliest (ties: the order of _HEADING_WORDS)."""
    found: tuple[int, int, str] | None = None
    for order, (category, pattern) in enumerate(_HEADING_PATTERNS):
        m = pattern.search(words)
        if m and (found is None or (m.start(), order) < found[:2]):
            found = (m.start(), order, category)
    return found[2] if found is not None else None


def item_category(text: str) -> Category | None:
    """The category an item gives itself: conventional-commit type, leading [Tag], or gitmoji."""
    text = text.lstrip()
    m = _CONVENTIONAL.match(text)
    if m:
        if m.group(3):
            return Category.BREAKING
        return _CONVENTIONAL_SCOPES.get((m.group(2) or "").strip().lower()) or _CONVENTIONAL_TYPES.get(
            m.group(1).lower()
        )
    m = _LEADING_TAG.match(text)
    if m:
        category = heading_category(m.group(1))
        return Category(category) if category not in (None, IGNORE) else None
    for mark, category in _GITMOJI.items():
        if text.startswith(mark):
            return category
    return None


def mixed_item_kind(text: str) -> Category | None:
    """Under a heading of deprecations and breaking changes, the kind an item's first such word names: "`x` is
    deprecated, it will be removed" is a deprecation, "Removed the deprecated `y`" and "`z` is dropped" are
    breaking; None when it says neither."""
    deprecated, taken = _ITEM_DEPRECATED.search(text), _ITEM_TAKEN.search(text)
    if deprecated is None and taken is None:
        return None
    if taken is None or (deprecated is not None and deprecated.start() < taken.start()):
        return Category.DEPRECATION
    return Category.BREAKING


def withdrawn_kind(text: str) -> Category | None:
    """Under a heading of changes of no one kind, what an item says was withdrawn from users: support
    removed ("Drop support for 3.9", "Support for 3.8 has been removed", "`x` no longer accepts `None`") is
    breaking, a deprecation ("Deprecate `y`", "`z` is deprecated") a deprecation; None for the rest, a
    "Remove …" of a warning or of redundant work included (a change like any other)."""
    if _WITHDRAWN.search(text):
        return Category.BREAKING
    return Category.DEPRECATION if _DEPRECATES.search(text) else None


def heading_line(line: str, nxt: str, state: SectionState, prev: str = "") -> tuple[float, str] | None:
    """prev: the line above (a colon line that ends a paragraph is its last sentence, no heading)."""
    m = _ATX.match(line)
    if m:
        return len(m.group(1)), (m.group(2) or "").strip().rstrip("#").strip()
    if line.strip() and not ITEM.match(line) and UNDERLINE.match(nxt) and not UNDERLINE.match(line):
        char = nxt.strip()[0]
        # Markdown underlines with = or - of any length; a `~` line is reST's only when as long as its title
        if len(nxt.strip()) >= min(len(line.strip()), 3) and (char != "~" or underlines(nxt, line)):
            level = state.setext_levels.setdefault(char, len(state.setext_levels) + 1)
            return level, line.strip()
    bold = bold_line(line) or colon_line(line, nxt, prev)
    if bold is not None:
        return state.bold_level, bold
    return None


def colon_line(line: str, nxt: str, prev: str = "") -> str | None:
    """The text of a short unindented line that ends with a colon and names a category, above a blank line
    or an item ("New Features:", "Bug fixes (free-threading):"): a heading in notes written without markup.
    Not the last line of a paragraph ("…performance\nimprovements and bug fixes. You can install it as
    follows:"): that is a sentence, and read as a heading it stood over every section below it."""
    text = line.rstrip()
    if not text.endswith(":") or line[:1].isspace() or len(text) > 60 or ITEM.match(line):
        return None
    if (
        prev.strip()
        and not ITEM.match(prev)
        and not UNDERLINE.match(prev)
        and heading_line(prev, "", SectionState()) is None
    ):
        return None
    if nxt.strip() and not ITEM.match(nxt):
        return None
    inner = text[:-1].strip()
    return inner if inner and heading_category(inner) not in (None, IGNORE) else None


def underlines(line: str, previous: str) -> bool:
    """Whether a line of `~` is the underline of the heading text above it (reStructuredText's third level,
    Sphinx's usual subsection), not a Markdown code fence: it opened a "fence" that hid every item below."""
    return (
        UNDERLINE.match(line) is not None
        and bool(previous.strip())
        and not ITEM.match(previous)
        and not FENCE.match(previous)
        and len(line.strip()) >= len(previous.strip())  # reST's rule; a Markdown fence is three, four
    )


def bold_line(line: str) -> str | None:
    """The text of a line that is only bold text ("**Features**", "__Bug fixes:__"), up to 60 characters."""
    text = line.strip().removesuffix(":")
    for mark in ("**", "__"):
        inner = text[2:-2] if len(text) > 4 and text.startswith(mark) and text.endswith(mark) else ""
        inner = inner.removesuffix(":")
        if inner and len(inner) <= 60 and mark not in inner and inner[0] not in "*_":
            return inner
    return None


def line_category(line: str, state: SectionState) -> Category | None:
    """The category of the PRs this line references; None: the line lists nothing (ignored section,
    a first-contribution line, a heading's anchor)."""
    section = state.section
    if section == IGNORE or _FIRST_CONTRIBUTION.search(line):
        return None
    m = ITEM.match(line)
    if m:
        indent, text = len(m.group(1).expandtabs(4)), item_text(m.group(2))
        while state.items and state.items[-1].indent >= indent:
            state.items.pop()
        own = item_category(text) or (state.read_item(text) if state.read_item is not None else None)
        state.items.append(
            _Item(
                indent,
                own,
                bool(BREAKING_ITEM.search(text)),
                mixed_item_kind(text),
                withdrawn_kind(text),
                bool(_ITEM_FIX.match(text)),
            )
        )
    elif line.strip() and not line[:1].isspace():
        state.items.clear()  # a paragraph ends the list
    if any(item.breaking for item in state.items):
        return Category.BREAKING
    mixed = next((h.mixed for h in reversed(state.headings) if h.mixed is not None), None)
    if section == Category.BREAKING and mixed is not None:
        said = [item.mixed_kind for item in state.items if item.mixed_kind is not None]
        return said[0] if said else mixed
    if section == Category.CHANGE and state.items and state.items[0].withdrawn is not None:
        # "Other changes" › "Support for 3.8 has been removed": a section of changes of no one kind holds what
        # maintainers withdrew too, in words that say so (`withdrawn_kind`)
        return state.items[0].withdrawn
    if section == Category.FEATURE and state.items and state.items[0].fix and _improvements_only(state):
        return Category.FIX
    if section is not None:
        return Category(section)
    for item in reversed(state.items):
        if item.category is not None:
            return item.category
    return Category.OTHER


def _improvements_only(state: SectionState) -> bool:
    """Whether the heading that makes the section one of features names improvements, not features."""
    heading = next((h for h in reversed(state.headings) if h.category == Category.FEATURE), None)
    if heading is None:
        return False
    words = clean(heading.text)
    return bool(_IMPROVEMENTS.search(words)) and not _NAMES_FEATURES.search(words)


def listed_lines(
    lines: Sequence[str],
    skip: Callable[[str], bool] | None = None,
    *,
    read_item: Callable[[str], Category | None] | None = None,
) -> Iterator[tuple[int, str, Category, SectionState]]:
    """Each line of notes that lists changes, read from the top: its index, its text (HTML comments taken
    out), its category and the sections and items it stands under (the state, live: read it before the next
    line). Headings, underlines, fenced code, comments, lines in an ignored section and `skip`'s lines (link
    definitions) are read here and not yielded. read_item: how the file classifies an item with no prefix
    (analysis.release_verbs.item_reader), for the items under no category heading."""
    state = SectionState(read_item=read_item)
    fenced = False
    in_comment = False
    for i, line in enumerate(lines):
        if FENCE.match(line) and (fenced or not underlines(line, lines[i - 1] if i else "")):
            fenced = not fenced
            continue
        if fenced:
            continue
        if in_comment or "<!--" in line:
            line, in_comment = without_comments(line, in_comment)
            if not line.strip():
                continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        heading = heading_line(line, nxt, state, lines[i - 1] if i else "")
        if heading is not None:
            state.push_heading(*heading, entry=entry_title(lines, i))
            continue
        if UNDERLINE.match(line) or (skip is not None and skip(line)):
            continue
        category = line_category(line, state)
        if category is not None:
            yield i, line, category, state


_ENTRY_LOOKAHEAD = 60  # lines: an entry is a paragraph or two; the bound keeps a file of headings linear


def entry_title(lines: Sequence[str], at: int) -> bool:
    """Whether the heading at `at` is the title of one entry (reST notes that underline each entry's title, a
    paragraph and its pull request below): text follows it and no list does before the next heading."""
    text = False
    start = at + 2 if at + 1 < len(lines) and UNDERLINE.match(lines[at + 1]) else at + 1
    end = min(len(lines), start + _ENTRY_LOOKAHEAD)
    for j in range(start, end):
        line, nxt = lines[j], lines[j + 1] if j + 1 < len(lines) else ""
        if _ATX.match(line) or (line.strip() and UNDERLINE.match(nxt) and not UNDERLINE.match(line)):
            return text
        if ITEM.match(line) or FENCE.match(line) or UNDERLINE.match(line) or bold_line(line):
            return False
        text = text or bool(line.strip())
    return text and end == len(lines)  # the file's last entry; a section longer than the bound is no entry


def without_comments(line: str, inside: bool) -> tuple[str, bool]:
    """The line without its HTML comments, and whether a comment is still open after it."""
    kept, at = [], 0
    while at < len(line):
        if inside:
            end = line.find("-->", at)
            if end < 0:
                return "".join(kept), True
            at, inside = end + 3, False
        else:
            start = line.find("<!--", at)
            if start < 0:
                kept.append(line[at:])
                break
            kept.append(line[at:start])
            at, inside = start + 4, True
    return "".join(kept), inside


def item_text(text: str) -> str:
    """An item's text without a leading bold mark ("**Breaking Change:** …")."""
    text = text.strip()
    return text[2:] if text.startswith(("**", "__")) else text


def clean(text: str) -> str:
    text = _EMOJI_CODE.sub(" ", text)
    text = _MARKUP.sub(" ", text)
    text = "".join(ch if ch.isascii() or ch.isalnum() else " " for ch in text)
    return " ".join(text.lower().split())
