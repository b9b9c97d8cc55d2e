"""Release notes as an answer key for impact: which pull requests the maintainers told users about, and
under which heading (DESIGN.md §3c). Pure: text in, {PR number: category} out; reading the file at the
branch tip is the sources' job.

Formats read (Markdown or reStructuredText, any mix of them):
- headings of any kind (`## x`, a line underlined with `===`/`---`/`~~~`, a line that is only bold text)
  name a category by general words: "Breaking changes", "Backwards-incompatible", "Removed" → breaking;
  "New features", "Added", "Enhancements" → feature; "Changes"/"Changed" → change (of existing
  behaviour); "Deprecations"; "Performance"; "Fixes", "Bug fixes", "Security" → fix; "Docs",
  "Documentation", "Translations" → docs; "Packaging", "Dependencies", "Upgrades" → dependencies (what
  users install changed: a new version of a runtime dependency changes what they get, so it is neither
  internal nor, by itself, a feature); "Internal", "Refactors", "CI", "Chores", "Maintenance", "Tests",
  "Build" → internal. A heading with no category word (a
  version, "What's Changed", "Language", a component name) adds none: its items keep the category of
  the nearest heading above that has one, else they are listed without a category ("other").
- "New Contributors", "Contributors", "Thanks" sections list people, not changes: ignored.
- An item that declares itself breaking ("**Breaking Change:** …", "[BREAKING]", 💥, `feat!:`) is
  breaking whatever its section. An item under no category heading takes one from its own prefix where it
  has one: a conventional-commit type (`fix:`, `feat(x):`), a leading `[Tag]`, or a gitmoji.
- References: `#123`, `(#123)`, `[#123](…/pull/123)`, `…/pull/123` and `…/issues/123` URLs (GitHub
  numbers issues and pull requests alike; a number that landed no commit matches nothing), link
  reference definitions (`[123]: …/pull/123`), reST roles (:pr:`123`, :issue:`123`). A reference into
  another repository (`other/repo#12`, a URL of another repository) is not this repository's: the notes'
  own repository is the one their pull-request URLs name most often, or the caller's when it is among them.
- A pull request listed twice keeps its most significant category (breaking > feature > change >
  deprecation > performance > fix > dependencies > docs > internal > other).

`notes_key` decides what an unlisted pull request means; see its docstring.

Over 400 lines because it is one reader: every release-notes format maps onto the same categories through the
same heading rules.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from analysis.paths import RELEASE_NOTES_STEMS
from analysis.titles import PR_DIGITS


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


UNLISTED = "unlisted"  # a PR the notes do not list, in a repository that lists its user-facing changes

# Where release notes usually live, tried in this order (case-insensitive); a bounded search, no names
# of any one repository.
ROOT_NAMES = RELEASE_NOTES_STEMS
ROOT_SUFFIXES = (".md", ".rst", ".markdown", ".txt", "")
DOCS_PREFIXES = ("release-notes", "release_notes", "releasenotes", "changelog")
DOCS_SUFFIXES = (".md", ".rst", ".markdown")
MAX_CANDIDATES = 6

# "Lists its user-facing changes": within the stretch of the span its notes cover, at least this many of
# the span's pull requests are listed, and at least this share of them. Below that (a file of highlights
# only, or notes that reference issues rather than pull requests) an unlisted PR says nothing.
MIN_LISTED = 20
MIN_LISTED_SHARE = 0.10

_IGNORE = "ignore"  # a heading whose section lists people, not changes

# (category, words) — a heading's category is that of the word found earliest in it (ties: this order).
_HEADING_WORDS: tuple[tuple[str, str], ...] = (
    (_IGNORE, r"new contributors?|contributors?|thanks|acknowledge?ments?|sponsors?|authors?"),
    (
        Category.BREAKING,
        r"breaking|backwards?[- ]incompatib\w*|incompatib\w*|removed|removals?|compatibility",
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
    (Category.FEATURE, r"features?|added|additions?|new|enhancements?|improvements?|stabili[sz]\w*"),
    (Category.CHANGE, r"changes?|changed|behaviou?rs?"),
)
_HEADING_PATTERNS = tuple(
    (cat, re.compile(rf"(?<![\w-])(?:{words})(?![\w-])")) for cat, words in _HEADING_WORDS
)
# A heading that names a release rather than a kind of change: a version, a date, "Unreleased".
_RELEASE_HEADING = re.compile(
    r"\d+\.\d+|\d{4}-\d{2}-\d{2}|unreleased|upcoming|latest|what'?s (?:changed|new)|release notes?|"
    r"changelog|change log|version|history"
)

# Conventional-commit types and gitmoji, for items under no category heading.
_CONVENTIONAL = re.compile(r"^(\w+)(?:\([^)]*\))?(!)?:\s")
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
_BREAKING_ITEM = re.compile(
    r"^breaking\b|\bbreaking[- ]changes?\b|\[breaking\]|\(breaking\)|💥|^\w+(?:\([^)]*\))?!:", re.IGNORECASE
)

# Notes are untrusted text: every pattern below runs in linear time on any line (bounded repeats where a
# pattern could otherwise rescan the rest of the line from each of its starts).
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_UNDERLINE = re.compile(r"^ {0,3}([=\-~^\"'`*+#:.])\1{2,}\s*$")
_ITEM = re.compile(r"^(\s*)(?:[-*+•]|\d{1,3}[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LINK_DEFINITION = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*<?(\S+?)>?\s*(?:\"[^\"]*\")?\s*$")
_LINK_REFERENCE = re.compile(r"\]\[([^\]]{1,100})\]|\[([^\]]{1,100})\](?![(\[:])")
_FIRST_CONTRIBUTION = re.compile(r"made (?:their|his|her|a) first contribution", re.IGNORECASE)

# A pull request or issue URL on any forge (GitHub, GitHub Enterprise, GitLab's /-/merge_requests).
_URL = re.compile(
    rf"https?://[^\s/()<>\]]+/([\w.-]+)/([\w.-]+)/(?:-/)?(?:pull|pulls|issues|merge_requests)/({PR_DIGITS})\b"
)
# A Markdown link [text](url) or a reST one `text <url>`_.
_LINK = re.compile(
    r"\[[^\]]{0,300}+\]\([ \t]{0,20}+[^)\s]{1,300}+(?:[ \t]+[^)]{0,200}+)?\)|`[^`<]{0,300}+<[^>`]{1,300}+>`__?"
)
_QUALIFIED = re.compile(rf"(?<![\w/.#-])([\w.-]+/[\w.-]+)#({PR_DIGITS})\b")
_PLAIN = re.compile(rf"(?<![\w/&#-])#({PR_DIGITS})\b")
_ROLE = re.compile(rf":(?:pr|pull|issue|gh|ghpull|ghissue):`(?:[^`<]{{0,200}}<)?#?({PR_DIGITS})>?`")
_MARKUP = re.compile(r"[`*_\[\]()<>:]")
_EMOJI_CODE = re.compile(r":[a-z0-9_+-]+:")


@dataclass(frozen=True, slots=True)
class ReleaseNotes:
    prs: dict[int, Category]  # every pull request the notes list, with its most significant category
    home: str | None = None  # owner/name the notes' PR links point at (lower case), when they have any
    unclassified_headings: tuple[str, ...] = ()  # headings with PRs but no category word, for the report

    def category(self, pr: int | None) -> Category | None:
        return self.prs.get(pr) if pr is not None else None

    @property
    def counts(self) -> dict[str, int]:
        tally = Counter(self.prs.values())
        return {c.value: tally[c] for c in Category if tally[c]}


@dataclass(slots=True)
class _Heading:
    level: float
    text: str
    category: str | None  # a Category, _IGNORE, or None (no category word)


@dataclass(slots=True)
class _Item:
    indent: int
    category: Category | None  # from the item's own prefix or breaking marker
    breaking: bool


@dataclass(slots=True)
class _State:
    headings: list[_Heading] = field(default_factory=list)
    items: list[_Item] = field(default_factory=list)
    setext_levels: dict[str, int] = field(default_factory=dict)

    def push_heading(self, level: float, text: str) -> None:
        while self.headings and self.headings[-1].level >= level:
            self.headings.pop()
        self.headings.append(_Heading(level, text, heading_category(text)))
        self.items.clear()

    @property
    def section(self) -> str | None:
        for heading in reversed(self.headings):
            if heading.category is not None:
                return heading.category
        return None

    @property
    def bold_level(self) -> float:
        """A bold line alone is a heading one step below the last real (not bold) one."""
        real = [h.level for h in self.headings if h.level == int(h.level)]
        return (real[-1] if real else 0) + 0.5


def heading_category(text: str) -> str | None:
    """The category a heading names (a Category value or "ignore"), or None when it names none."""
    words = _clean(text)
    found: tuple[int, int, str] | None = None
    for order, (category, pattern) in enumerate(_HEADING_PATTERNS):
        m = pattern.search(words)
        if m and (found is None or (m.start(), order) < found[:2]):
            found = (m.start(), order, category)
    if found is None:
        return None
    if found[2] != _IGNORE and _RELEASE_HEADING.search(words):
        return None  # "v2.1 (2025-01-02)", "Latest Changes", "What's Changed": a release, not a kind
    return found[2]


def item_category(text: str) -> Category | None:
    """The category an item gives itself: conventional-commit type, leading [Tag], or gitmoji."""
    text = text.lstrip()
    m = _CONVENTIONAL.match(text)
    if m:
        return Category.BREAKING if m.group(2) else _CONVENTIONAL_TYPES.get(m.group(1).lower())
    m = _LEADING_TAG.match(text)
    if m:
        category = heading_category(m.group(1))
        return Category(category) if category not in (None, _IGNORE) else None
    for mark, category in _GITMOJI.items():
        if text.startswith(mark):
            return category
    return None


def parse(text: str, repo: str | None = None) -> ReleaseNotes:
    """Every pull request the notes list, by category. repo: owner/name of the repository the notes
    belong to, when known (it decides which links are its own when they name several repositories)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    definitions = _link_definitions(lines)
    home = _home(text, definitions, repo)
    state = _State()
    found: dict[int, Category] = {}
    unclassified: dict[str, None] = {}
    fenced = False
    in_comment = False
    for i, line in enumerate(lines):
        if _FENCE.match(line) and (fenced or not _underlines(line, lines[i - 1] if i else "")):
            fenced = not fenced
            continue
        if fenced:
            continue
        if in_comment or "<!--" in line:
            line, in_comment = _without_comments(line, in_comment)
            if not line.strip():
                continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        heading = _heading(line, nxt, state)
        if heading is not None:
            state.push_heading(*heading)
            continue
        if _UNDERLINE.match(line) or _LINK_DEFINITION.match(line):
            continue
        category = _line_category(line, state)
        if category is None:
            continue
        for pr in _references(line, definitions, home):
            heading = _clean(state.headings[-1].text) if state.headings else ""
            if category == Category.OTHER and heading and not _RELEASE_HEADING.search(heading):
                unclassified[heading] = None
            current = found.get(pr)
            if current is None or category.significance < current.significance:
                found[pr] = category
    return ReleaseNotes(found, home, tuple(h for h in unclassified if h))


def candidates(paths: Iterable[str]) -> list[str]:
    """The files of a tree that may hold release notes, most likely first, at most MAX_CANDIDATES:
    CHANGELOG/CHANGES/HISTORY/NEWS/RELEASES at the root, then release-notes*/changelog* under docs/."""
    by_lower = {}
    for path in paths:
        by_lower.setdefault(path.lower(), path)
    chosen: list[str] = []
    for name in ROOT_NAMES:
        for suffix in ROOT_SUFFIXES:
            if name + suffix in by_lower:
                chosen.append(by_lower[name + suffix])
    docs = []
    for lower, path in by_lower.items():
        folder, _, base = lower.rpartition("/")
        in_docs = folder == "docs" or folder.startswith("docs/")
        if in_docs and base.startswith(DOCS_PREFIXES) and base.endswith(DOCS_SUFFIXES):
            docs.append((lower.count("/"), lower, path))
    chosen += [path for _, _, path in sorted(docs)]
    return chosen[:MAX_CANDIDATES]


@dataclass(frozen=True, slots=True)
class Landed:
    """A commit of the span as the key needs it."""

    sha: str
    committed_at: datetime
    pr: int | None


@dataclass(frozen=True, slots=True)
class NotesKey:
    """What the notes say about each commit of a span: its category, UNLISTED, or None (unknown)."""

    answers: dict[str, str | None]  # by sha
    lists_changes: bool
    listed: int  # the span's pull requests the notes list
    with_pr: int  # the span's commits that name their pull request, within the covered stretch
    covered_from: datetime | None
    covered_to: datetime | None

    @property
    def reason(self) -> str:
        if not self.listed:
            return "the notes list none of the span's pull requests"
        share = self.listed / self.with_pr if self.with_pr else 0.0
        judged = (
            "an unlisted pull request counts as not release-worthy"
            if self.lists_changes
            else f"too few to read an unlisted one as not release-worthy (need {MIN_LISTED} and"
            f" {MIN_LISTED_SHARE:.0%}): unlisted pull requests are left out"
        )
        return (
            f"{self.listed} of the {self.with_pr} pull requests landed from {self.covered_from:%Y-%m-%d} to"
            f" {self.covered_to:%Y-%m-%d} are listed ({share:.0%}); {judged}"
        )


def notes_key(notes: ReleaseNotes, span: Sequence[Landed]) -> NotesKey:
    """Each commit's answer. The notes cover the stretch of the span from the first to the last commit
    whose pull request they list (later commits are not released yet; earlier ones may predate the
    file). There, a listed PR has its category; an unlisted one is UNLISTED when the repository lists
    its user-facing changes (MIN_LISTED and MIN_LISTED_SHARE), else unknown. Commits outside the stretch
    and commits that name no pull request are unknown (None): nothing says whether they were released."""
    ordered = sorted(span, key=lambda c: c.committed_at)
    listed_at = [i for i, c in enumerate(ordered) if notes.category(c.pr) is not None]
    answers: dict[str, str | None] = {c.sha: None for c in ordered}
    if not listed_at:
        return NotesKey(answers, False, 0, 0, None, None)
    first, last = listed_at[0], listed_at[-1]
    stretch = [c for c in ordered[first : last + 1] if c.pr is not None]
    listed = len(listed_at)
    lists = listed >= MIN_LISTED and listed / len(stretch) >= MIN_LISTED_SHARE
    for c in stretch:
        category = notes.category(c.pr)
        answers[c.sha] = category.value if category else (UNLISTED if lists else None)
    return NotesKey(
        answers, lists, listed, len(stretch), ordered[first].committed_at, ordered[last].committed_at
    )


# -- lines ----------------------------------------------------------------------------------------


def _heading(line: str, nxt: str, state: _State) -> tuple[float, str] | None:
    m = _ATX.match(line)
    if m:
        return len(m.group(1)), (m.group(2) or "").strip().rstrip("#").strip()
    if line.strip() and not _ITEM.match(line) and _UNDERLINE.match(nxt) and not _UNDERLINE.match(line):
        char = nxt.strip()[0]
        # Markdown underlines with = or - of any length; a `~` line is reST's only when as long as its title
        if len(nxt.strip()) >= min(len(line.strip()), 3) and (char != "~" or _underlines(nxt, line)):
            level = state.setext_levels.setdefault(char, len(state.setext_levels) + 1)
            return level, line.strip()
    bold = _bold_line(line)
    if bold is not None:
        return state.bold_level, bold
    return None


def _underlines(line: str, previous: str) -> bool:
    """Whether a line of `~` is the underline of the heading text above it (reStructuredText's third level,
    Sphinx's usual subsection), not a Markdown code fence: it opened a "fence" that hid every item below."""
    return (
        _UNDERLINE.match(line) is not None
        and bool(previous.strip())
        and not _ITEM.match(previous)
        and not _FENCE.match(previous)
        and len(line.strip()) >= len(previous.strip())  # reST's rule; a Markdown fence is three, four
    )


def _bold_line(line: str) -> str | None:
    """The text of a line that is only bold text ("**Features**", "__Bug fixes:__"), up to 60 characters."""
    text = line.strip().removesuffix(":")
    for mark in ("**", "__"):
        inner = text[2:-2] if len(text) > 4 and text.startswith(mark) and text.endswith(mark) else ""
        inner = inner.removesuffix(":")
        if inner and len(inner) <= 60 and mark not in inner and inner[0] not in "*_":
            return inner
    return None


def _line_category(line: str, state: _State) -> Category | None:
    """The category of the PRs this line references; None: the line lists nothing (ignored section,
    a first-contribution line, a heading's anchor)."""
    section = state.section
    if section == _IGNORE or _FIRST_CONTRIBUTION.search(line):
        return None
    m = _ITEM.match(line)
    if m:
        indent, text = len(m.group(1).expandtabs(4)), _item_text(m.group(2))
        while state.items and state.items[-1].indent >= indent:
            state.items.pop()
        state.items.append(_Item(indent, item_category(text), bool(_BREAKING_ITEM.search(text))))
    elif line.strip() and not line[:1].isspace():
        state.items.clear()  # a paragraph ends the list
    if any(item.breaking for item in state.items):
        return Category.BREAKING
    if section is not None:
        return Category(section)
    for item in reversed(state.items):
        if item.category is not None:
            return item.category
    return Category.OTHER


def _references(line: str, definitions: dict[str, int | None], home: str | None) -> list[int]:
    found: list[int] = []

    def own(m: re.Match[str]) -> int | None:
        return int(m.group(3)) if home is None or f"{m.group(1)}/{m.group(2)}".lower() == home else None

    def link(m: re.Match[str]) -> str:
        # "[#12](…/other/repo/pull/12)": the link's target decides, not its text.
        url = _URL.search(m.group(0))
        if url is None:
            return m.group(0)
        number = own(url)
        if number is not None:
            found.append(number)
        return " "

    rest = _LINK.sub(link, line)
    for m in _URL.finditer(rest):
        number = own(m)
        if number is not None:
            found.append(number)
    rest = _URL.sub(" ", rest)
    for m in _QUALIFIED.finditer(rest):
        if home is not None and m.group(1).lower() == home:
            found.append(int(m.group(2)))
    rest = _QUALIFIED.sub(" ", rest)
    found += [int(n) for n in _PLAIN.findall(rest)]
    found += [int(n) for n in _ROLE.findall(rest)]
    for m in _LINK_REFERENCE.finditer(line):
        number = definitions.get((m.group(1) or m.group(2)).lower())
        if number is not None:
            found.append(number)
    return list(dict.fromkeys(found))


def _link_definitions(lines: list[str]) -> dict[str, int | None]:
    """[label]: URL lines whose URL is one of the notes' pull requests, by lower-case label."""
    out: dict[str, int | None] = {}
    for line in lines:
        m = _LINK_DEFINITION.match(line)
        if m:
            url = _URL.search(m.group(2))
            out[m.group(1).lower()] = int(url.group(3)) if url else None
    return out


def _home(text: str, definitions: dict[str, int | None], repo: str | None) -> str | None:
    """The repository the notes' links belong to: the caller's when the links name it, else the one
    they name most often; None when they name none (every plain #N is then the notes' own)."""
    named = Counter(f"{m.group(1)}/{m.group(2)}".lower() for m in _URL.finditer(text))
    if not named:
        return None
    if repo and repo.lower() in named:
        return repo.lower()
    return named.most_common(1)[0][0]


def _without_comments(line: str, inside: bool) -> tuple[str, bool]:
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


def _item_text(text: str) -> str:
    """An item's text without a leading bold mark ("**Breaking Change:** …")."""
    text = text.strip()
    return text[2:] if text.startswith(("**", "__")) else text


def _clean(text: str) -> str:
    text = _EMOJI_CODE.sub(" ", text)
    text = _MARKUP.sub(" ", text)
    text = "".join(ch if ch.isascii() or ch.isalnum() else " " for ch in text)
    return " ".join(text.lower().split())
