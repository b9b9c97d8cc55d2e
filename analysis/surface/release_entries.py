"""The release-notes entries a commit adds for itself: its author's own word on what kind of change it is
(DESIGN.md §3c, issue 16). Many projects make each pull request add its entry as it lands: an item under a
heading of the notes' next-release section (Keep a Changelog's "### Added", a reST "Potentially Breaking
Changes" section), or a news fragment whose name carries its type (towncrier's `changes/1234.feature.md`,
`newsfragments/1234.bugfix.rst`, numpy's `upcoming_changes/1234.new_feature.rst`) or whose text does (reno's
`features:`, a `:tags: bug` line, a changeset's `minor` bump: analysis/surface/fragment_types.py). Pure: the
commit's files and patches in, entries out; the headings and items are read by the rules eval's notes key
uses (analysis/release_headings.py).

Where the surface step read a notes file's text after the commit (`notes_to_read`, `placed_entries`: the
commit's RELEASE_ENTRY facts, Commit.release_entries), an added item takes its category from the headings
above it in that text, walked from the top down to the item's line (the patch's hunk headers give it): most
items sit far below their heading, out of the patch's three lines of context. Else (a source that reads no
files, a file over the read cap) it is read from the patch: an added item takes its category from the
nearest heading above it in the new file, found among the hunk's context lines or, failing that, in git's
`@@ … @@ heading` text (a heading in the hunk that names no kind, such as a module's name, is a topic under
it); where none is visible it is "other". An item under no category heading in notes written as plain items
led by verbs ("Version 3.1.0" / "- Add …") takes its verb's category; whether a file is written so is read
from its whole text, and so only where the surface step read it. Not a declaration, and so no entries at all:
- an item the commit also removes (a release moving "Unreleased" entries under a version heading), and any
  notes a commit writes while deleting fragments (a release compiling them);
- a commit that changes only release notes, fragments and docs: it describes other commits;
- a commit by an automated account (a release-notes or dependency bot);
- more than MAX_ENTRIES entries: a collected release, not one change's declaration.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from analysis.history.automation import is_automated
from analysis.models import Commit, FileChange, SurfaceChange, SurfaceKind
from analysis.paths import RELEASE_NOTES_STEMS, PathKind, classify_path
from analysis.release_headings import (
    IGNORE,
    ITEM,
    RELEASE_HEADING,
    Category,
    SectionState,
    clean,
    heading_category,
    heading_line,
    item_text,
    line_category,
    listed_lines,
    mixed_item_kind,
)
from analysis.release_verbs import item_reader
from analysis.surface.fragment_types import body_lines, is_mixed_name, name_category, text_category

MAX_ENTRIES = 3  # more in one commit: a collected release (or a notes rewrite), not one change's declaration
MAX_TEXT = 100  # characters of an entry's text kept (untrusted: said in quotes, shortened)
# Characters of an item read to find its text: a hostile megabyte-long line costs no more than a long item.
READ_CHARS = 10 * MAX_TEXT
# Lines of a notes file's patch beyond which it is a rewrite or a compiled release, not one change's entry: not
# read at all (a 200,000-line patch took seconds to read for entries it was then too many to keep).
MAX_NOTES_PATCH_LINES = 2_000

_NOTES_SUFFIXES = ("md", "rst", "markdown", "txt")
_FRAGMENT_SUFFIXES = (".md", ".rst", ".markdown", ".txt", ".yaml", ".yml")
_NOTES_PREFIXES = ("release-notes", "release_notes", "releasenotes", "changelog")
# Folders of per-release pages in a docs tree (`docs/releases/5.1.txt`, `doc/source/whatsnew/v2.2.0.rst`).
_RELEASE_PAGE_DIRS = frozenset(
    {"releases", "release-notes", "release_notes", "whatsnew", "whats_new", "changelog"}
)
_DOCS_ROOTS = frozenset({"docs", "doc", "documentation"})
# Folders release-notes tools collect fragments from (towncrier, scikit-learn's and numpy's upcoming changes).
FRAGMENT_DIRS = frozenset(
    {
        "changes",
        "newsfragments",
        "changelog.d",
        "changes.d",
        "changelog",
        "changelogs",
        ".changeset",
        "releasenotes",
        "release-notes",
        "upcoming_changes",
    }
)
# `@@ -1,4 +1,6 @@ text`: the hunk's header and the line git shows as its heading.
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@ ?(.*)$")
_LINK = re.compile(r"\[([^\]\n]{0,200})\]\([^)\s]{0,300}\)")
# The hunk's own heading is above every line the hunk shows, at a level its text does not tell.
_HEADING_LEVEL_OF_CONTEXT = 0.0
_CATEGORIES = frozenset(c.value for c in Category)


@dataclass(frozen=True, slots=True)
class Entry:
    path: str
    category: Category
    text: str  # the item's or the fragment's first line, shortened (untrusted); "" when the patch has none
    fragment: bool = False

    @property
    def declares(self) -> str:
        """The entry in a reason line's words: its category, then what it says (a fragment: its path)."""
        return f"{self.category.value}: {self.text or self.path}"


def is_release_notes_file(path: str) -> bool:
    """A compiled release-notes file: CHANGELOG/CHANGES/HISTORY/NEWS/RELEASES anywhere, `*release-notes*`,
    `ReleaseNotes.rst`, or a page of a docs tree's release folder (`docs/releases/5.1.txt`)."""
    lower = path.lower()
    folders = lower.split("/")
    name = folders.pop()
    stem, _, suffix = name.partition(".")
    if suffix and suffix.rsplit(".", 1)[-1] not in _NOTES_SUFFIXES:
        return False
    if stem in RELEASE_NOTES_STEMS or name.startswith(_NOTES_PREFIXES):
        return True
    in_docs = not _DOCS_ROOTS.isdisjoint(folders)
    return in_docs and bool(suffix) and not _RELEASE_PAGE_DIRS.isdisjoint(folders)


def fragment_category(path: str) -> Category | None:
    """A news fragment's category from its name (`changes/1234.feature.md` → feature); None when the path is
    not a fragment (no fragment folder above it, or a name whose type names no category)."""
    folders = path.lower().split("/")
    name = folders.pop()
    return name_category(name) if _in_fragment_dir(folders) else None


def declared_entries(commit: Commit) -> tuple[Entry, ...]:
    """The entries the commit adds for itself (see the module docstring), in the order of its files."""
    found = _declaring_files(commit)
    if found is None:
        return ()
    fragments, notes = found
    entries = [
        Entry(f.path, c, _first_added(f.patch), fragment=True) for f, c in fragments if f.status == "added"
    ]
    removed = _removed_keys(notes)
    placed = _placed(commit.release_entries)
    entries += [
        e
        for f in notes
        for e in placed.get(f.path, None) or _added_items(f.path, f.patch or "")
        if _key(e.text) not in removed
    ]
    return tuple(entries) if len(entries) <= MAX_ENTRIES else ()


def notes_to_read(commit: Commit) -> list[FileChange]:
    """The release-notes files whose text after the commit places the items it adds under their headings:
    those `declared_entries` reads entries from whose patch adds an item (none for a commit it reads none
    from: a release, a notes-only commit, a bot's)."""
    found = _declaring_files(commit)
    if found is None:
        return []
    fragments, notes = found
    removed = _removed_keys(notes)
    new = {
        f.path: [t for t in _added_item_lines(f.patch or "").values() if _key(_item(t)) not in removed]
        for f in notes
        if f.status != "removed"
    }
    if sum(map(len, new.values())) + sum(f.status == "added" for f, _ in fragments) > MAX_ENTRIES:
        return []  # too many for one change's declaration whatever their headings (a release): not worth a read
    return [f for f in notes if new.get(f.path)]  # an item moved (removed too) is no entry: nor worth one


def placed_entries(path: str, patch: str, after: str) -> tuple[SurfaceChange, ...] | None:
    """The items the patch adds at the top level of a list, each with the category the headings above it
    in the file's text after the commit give it: RELEASE_ENTRY facts (name: the category, new: the item's
    text, line: its line). None when the text is not the one the patch made (a line differs): the patch
    alone then says."""
    added = _added_item_lines(patch)
    if not added:
        return ()
    whole = [line.removesuffix("\r") for line in after.split("\n")]
    lines = whole[: max(added) + 1]
    if any(n > len(lines) or lines[n - 1] != text.removesuffix("\r") for n, text in added.items()):
        return None
    found: list[SurfaceChange] = []
    # whether the file classifies its items by their verbs is the whole file's style, not its top's
    for i, line, category, state in listed_lines(lines, read_item=item_reader(whole)):
        m = ITEM.match(line)
        # a top-level item (a nested one is part of its parent's entry), in a section listing changes
        if i + 1 in added and m and len(state.items) == 1:
            text = _shorten(item_text(m.group(2)))
            found.append(SurfaceChange(SurfaceKind.RELEASE_ENTRY, category.value, path, i + 1, new=text))
    return tuple(found)


def apart(
    surface: tuple[SurfaceChange, ...] | None,
) -> tuple[tuple[SurfaceChange, ...] | None, tuple[SurfaceChange, ...]]:
    """A commit's stored facts split into its surface and its placed entries (Commit.release_entries): every
    reader of the surface (digests, cards, questions, prompts, scores) takes its facts for API changes."""
    if surface is None or not any(c.kind == SurfaceKind.RELEASE_ENTRY for c in surface):
        return surface, ()
    entries = tuple(c for c in surface if c.kind == SurfaceKind.RELEASE_ENTRY)
    return tuple(c for c in surface if c.kind != SurfaceKind.RELEASE_ENTRY), entries


def _declaring_files(commit: Commit) -> tuple[list[tuple[FileChange, Category]], list[FileChange]] | None:
    """The commit's fragments (with their categories) and the notes files its own entries may stand in (none
    where it deletes fragments: it compiles the notes from them), or None where it declares nothing (see the
    module docstring)."""
    if is_automated(commit.author, commit.author_login):
        return None
    fragments = [(f, c) for f in commit.files if (c := _fragment_kind(f)) is not None]
    typed = {f.path for f, _ in fragments}
    notes = [f for f in commit.files if is_release_notes_file(f.path) and f.path not in typed]
    if any((f.patch or "").count("\n") > MAX_NOTES_PATCH_LINES for f in notes):
        return None  # a rewrite of the notes or a release compiling them
    if not notes and not fragments:
        return None
    described = {f.path for f in notes} | typed
    if all(f.path in described or classify_path(f.path) == PathKind.DOCS for f in commit.files):
        return None  # it writes about other commits
    if any(f.status == "removed" and _is_fragment_file(f.path) for f in commit.files):
        notes = []  # compiled from the fragments it deletes: the items it writes are theirs
    return fragments, notes


def _removed_keys(notes: Iterable[FileChange]) -> set[str]:
    """The items the notes' patches remove, as entries key them: an item removed and added again moved."""
    return {_key(text) for f in notes for text in _removed_items(f.patch or "")}


def _placed(facts: Iterable[SurfaceChange]) -> dict[str, list[Entry]]:
    """The entries the surface step placed from the notes' text, by path."""
    found: dict[str, list[Entry]] = {}
    for c in facts:
        if c.kind == SurfaceKind.RELEASE_ENTRY and c.name in _CATEGORIES:
            found.setdefault(c.path, []).append(Entry(c.path, Category(c.name), c.new or ""))
    return found


def strongest(entries: Iterable[Entry]) -> Entry | None:
    """The most significant entry (breaking first)."""
    return min(entries, key=lambda e: e.category.significance, default=None)


def _in_fragment_dir(folders: list[str]) -> bool:
    # a leading underscore keeps a folder out of a Sphinx build (`docs/_newsfragments`): the same folder
    return not FRAGMENT_DIRS.isdisjoint(f.removeprefix("_") for f in folders)


def _is_fragment_file(path: str) -> bool:
    """A file of notes text in a fragment folder, whether or not its name carries a type."""
    folders = path.lower().split("/")
    return folders.pop().endswith(_FRAGMENT_SUFFIXES) and _in_fragment_dir(folders)


def _fragment_kind(change: FileChange) -> Category | None:
    """A fragment's category: from its name, or, for one the commit adds, from its own text (a reno note,
    a `.. change::` block's tags, a changeset's version bump)."""
    return fragment_type(change.path, _added_lines(change.patch) if change.status == "added" else None)


def fragment_type(path: str, text: Sequence[str] | None) -> Category | None:
    """A news fragment's category from its name, else from its text's lines (`text`: the fragment as it was
    added; None: not known), from both where the name's type is a mixed one (`is_mixed_name`); None when the
    path is no fragment or neither says. The one reading of a fragment for a commit's own entries and for
    eval's key (analysis/evaluation/notes_fragments.fragment_notes)."""
    found = fragment_category(path)
    if found is not None and text is not None and is_mixed_name(path.rpartition("/")[2]):
        # "Deprecate `x`" in a `removal` fragment is a deprecation; "Drop `y`" or neither word: a removal
        return mixed_item_kind(" ".join(body_lines(text))) or found
    if found is not None or text is None or not _in_fragment_dir(path.lower().split("/")[:-1]):
        return found
    return text_category(path, text)


def text_decides(path: str) -> bool:
    """Whether a fragment's category needs its text: its name carries no type, or one that names
    deprecations and removals together."""
    return fragment_category(path) is None or is_mixed_name(path.rpartition("/")[2])


def is_fragment_file(path: str) -> bool:
    """A file of notes text in a fragment folder, whether or not its name carries a type (a compiled notes
    file kept there, `changelog/changelog_20.rst`, is not one)."""
    name = path.lower().rpartition("/")[2]
    compiled = name.partition(".")[0] in RELEASE_NOTES_STEMS or name.startswith(_NOTES_PREFIXES)
    return _is_fragment_file(path) and not compiled


def _added_lines(patch: str | None) -> list[str]:
    return [line for _, lines in _hunks(patch or "") for sign, line in lines if sign == "+"]


def _added_items(path: str, patch: str) -> list[Entry]:
    """The items the patch adds at the top level of a list, each with the category of its section."""
    found: list[Entry] = []
    for header, lines in _hunks(patch):
        state = SectionState()
        context = _context_heading(header)
        if context is not None:
            state.push_heading(_HEADING_LEVEL_OF_CONTEXT, context)
        new_side = [(sign, text) for sign, text in lines if sign in " +"]
        for i, (sign, line) in enumerate(new_side):
            nxt = new_side[i + 1][1] if i + 1 < len(new_side) else ""
            heading = heading_line(line, nxt, state)
            if heading is not None:
                if _names_a_kind_or_release(heading[1]):
                    # a sibling of the hunk's heading or a release above it, not a topic under it
                    state.headings = [h for h in state.headings if h.level != _HEADING_LEVEL_OF_CONTEXT]
                state.push_heading(*heading)
                continue
            category = line_category(line, state)
            m = ITEM.match(line)
            # a top-level item (a nested one is part of its parent's entry), in a section listing changes
            if sign == "+" and m and category is not None and len(state.items) == 1:
                found.append(Entry(path, category, _shorten(item_text(m.group(2)))))
    return found


def _names_a_kind_or_release(text: str) -> bool:
    return heading_category(text) is not None or RELEASE_HEADING.search(clean(text)) is not None


def _removed_items(patch: str) -> list[str]:
    return [
        _item(line) for _, lines in _hunks(patch) for sign, line in lines if sign == "-" and ITEM.match(line)
    ]


def _item(line: str) -> str:
    """An item line's text as an entry keeps it."""
    m = ITEM.match(line)
    return _shorten(item_text(m.group(2))) if m else ""


def _added_item_lines(patch: str) -> dict[int, str]:
    """{line in the new file: text} of the list items the patch adds (counted from its hunk headers)."""
    found: dict[int, str] = {}
    line = 0
    for raw in patch.split("\n"):
        m = _HUNK.match(raw)
        if m:
            line = int(m.group(1))
        elif line and raw[:1] == "+":
            if ITEM.match(raw[1:]):
                found[line] = raw[1:]
            line += 1
        elif line and raw[:1] != "-" and raw[:1] != "\\":  # "\ No newline at end of file" is no line
            line += 1  # context (a blank one may have lost its space)
    return found


def _hunks(patch: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """Each hunk's heading text and its lines as (sign, text)."""
    hunks: list[tuple[str, list[tuple[str, str]]]] = []
    for raw in patch.replace("\r\n", "\n").split("\n"):
        m = _HUNK.match(raw)
        if m:
            hunks.append((m.group(2), []))
        elif hunks and raw[:1] in (" ", "+", "-"):
            hunks[-1][1].append((raw[:1], raw[1:]))
    return hunks


def _context_heading(text: str) -> str | None:
    """git's heading of a hunk, when it is a heading that names a kind of change: a Markdown heading or bold
    line, or (reStructuredText, whose titles git shows without their underline) a short line that names one."""
    text = text.strip()
    if not text or ITEM.match(text):
        return None
    found = heading_line(text, "", SectionState())
    if found is not None:
        return found[1]
    if (
        len(text) <= 60
        and not text.endswith((".", ",", ":", ";"))
        and heading_category(text) not in (None, IGNORE)
    ):
        return text
    return None


def _first_added(patch: str | None) -> str:
    """A fragment's first line of prose (its whole content is the entry)."""
    for line in body_lines(_added_lines(patch))[:1]:
        return _shorten(line.strip().lstrip("-*+ \t"))
    return ""


def _shorten(text: str) -> str:
    # a Markdown link's text: its URL says nothing of the kind
    text = " ".join(_LINK.sub(r"\1", text[:READ_CHARS]).split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1].rstrip() + "…"


def _key(text: str) -> str:
    return clean(text)
