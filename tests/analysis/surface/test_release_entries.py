"""The release-notes entries a commit adds for itself, from the shapes projects write them in."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from analysis.models import Commit, FileChange
from analysis.release_headings import Category
from analysis.surface.release_entries import (
    MAX_ENTRIES,
    MAX_NOTES_PATCH_LINES,
    MAX_TEXT,
    declared_entries,
    fragment_category,
    is_release_notes_file,
    strongest,
)

CODE = FileChange("src/pkg/core.py", "modified", 5, 2, "@@ -1,2 +1,3 @@\n a = 1\n-b = 2\n+b = 3\n+c = 4\n")


def commit(*files: FileChange, author: str = "Ada", login: str | None = "ada") -> Commit:
    return Commit(
        "o/r",
        "a" * 40,
        "Change core",
        author,
        datetime(2026, 1, 2, tzinfo=UTC),
        files=files,
        author_login=login,
    )


def notes(patch: str, path: str = "CHANGELOG.md") -> FileChange:
    return FileChange(path, "modified", patch.count("\n+"), patch.count("\n-"), patch)


KEEP_A_CHANGELOG = "\n".join(
    [
        "@@ -8,6 +8,10 @@ and this project adheres to [Semantic Versioning](https://semver.org/).",
        " ## [Unreleased]",
        " ",
        " ### Added",
        "+- `Client.retry` option to retry failed requests (#41)",
        "+",
        "+### Removed",
        "+- The deprecated `Client.fetch_all` method (#41)",
        " ",
        " ## [1.4.0] - 2026-01-01",
        "",
    ]
)


def test_keep_a_changelog_items_take_their_heading():
    found = declared_entries(commit(CODE, notes(KEEP_A_CHANGELOG)))
    assert [(e.path, e.category) for e in found] == [
        ("CHANGELOG.md", Category.FEATURE),
        ("CHANGELOG.md", Category.BREAKING),
    ]
    assert found[1].text == "The deprecated `Client.fetch_all` method (#41)"
    assert strongest(found).category == Category.BREAKING


def test_the_hunk_heading_names_the_section_when_no_heading_is_in_the_context():
    patch = "@@ -20,6 +20,7 @@ ### Fixed\n - Old fix (#1)\n - Older fix (#2)\n+- Crash on empty input (#9)\n"
    assert [e.category for e in declared_entries(commit(CODE, notes(patch)))] == [Category.FIX]


def test_no_visible_heading_is_other():
    patch = "@@ -20,6 +20,7 @@\n - Old entry (#1)\n+- New entry (#9)\n"
    assert [e.category for e in declared_entries(commit(CODE, notes(patch)))] == [Category.OTHER]


def test_an_item_marked_breaking_is_breaking_in_any_section():
    patch = "@@ -3,4 +3,5 @@\n ### Changed\n \n+- **Breaking:** `timeout` is now in seconds (#7)\n"
    assert [e.category for e in declared_entries(commit(CODE, notes(patch)))] == [Category.BREAKING]


def test_llvm_style_rst_section_from_the_hunk_heading():
    patch = (
        "@@ -80,6 +80,11 @@ C++ Specific Potentially Breaking Changes\n"
        " - Clang now rejects an old extension.\n"
        " \n"
        "+- The ``-fold-flag`` option was removed; use ``-fnew-flag``.\n"
        "+  It had been deprecated since the last release.\n"
        "+\n"
        " ABI Changes in This Version\n"
        " ---------------------------\n"
    )
    found = declared_entries(commit(CODE, notes(patch, "clang/docs/ReleaseNotes.rst")))
    assert [e.category for e in found] == [Category.BREAKING]  # its second line continues it: one entry


def test_rst_underlined_heading_in_the_context():
    patch = (
        "@@ -10,6 +10,8 @@\n"
        " New features\n"
        " ~~~~~~~~~~~~\n"
        " \n"
        "+* :class:`Reader` accepts a ``strict`` argument.\n"
        "+\n"
        " Bug fixes\n"
    )
    found = declared_entries(commit(CODE, notes(patch, "docs/releases/5.1.txt")))
    assert [e.category for e in found] == [Category.FEATURE]


def test_towncrier_fragment_added_with_the_code():
    fragment = FileChange("changes/1234.feature.md", "added", 1, 0, "@@ -0,0 +1 @@\n+Add `--retry`.\n")
    found = declared_entries(commit(CODE, fragment))
    assert [(e.path, e.category, e.fragment, e.text) for e in found] == [
        ("changes/1234.feature.md", Category.FEATURE, True, "Add `--retry`.")
    ]


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Deprecate ``stream.unread_data()``", Category.DEPRECATION),
        ("Deprecated use of boolean in ``resp.enable_compression()``", Category.DEPRECATION),
        ("Drop dead ``Connection.detach()``.", Category.BREAKING),
        ("Encourage creation of public objects inside a coroutine", Category.BREAKING),  # neither: the type's
    ],
)
def test_a_removal_fragment_says_whether_it_deprecates_or_removes(text, category):
    # towncrier's default `removal` type is titled "Deprecations and Removals"
    fragment = FileChange("CHANGES/3260.removal", "added", 1, 0, f"@@ -0,0 +1 @@\n+{text}\n")
    assert [e.category for e in declared_entries(commit(CODE, fragment))] == [category]


@pytest.mark.parametrize(
    ("path", "category"),
    [
        ("newsfragments/1234.bugfix.rst", Category.FIX),
        ("changelog.d/20260102_ada.removal.md", Category.BREAKING),
        ("doc/release/upcoming_changes/1234.new_feature.rst", Category.FEATURE),
        ("doc/release/upcoming_changes/1234.python_removal.rst", Category.BREAKING),
        ("doc/whats_new/upcoming_changes/pkg.linear/12345.major-feature.rst", Category.FEATURE),
        ("changes/1234.deprecation.2.md", Category.DEPRECATION),
        ("changes/1234.doc", Category.DOCS),
        ("changes/1234.misc.md", Category.OTHER),
        ("doc/whats_new/upcoming_changes/Imputer.34010.enhancement.rst", Category.FEATURE),  # a name, an id
        ("doc/whats_new/upcoming_changes/33101.enh.rst", Category.FEATURE),
        ("changelog/1234.vendor.rst", Category.DEPENDENCIES),
        ("changelog/1234.contrib.rst", Category.INTERNAL),
        # type words run together: the leading word is read apart ("news" is no "new")
        ("docs/_newsfragments/2182.breakingchange.rst", Category.BREAKING),
        ("docs/_newsfragments/2124.newandimproved.rst", Category.FEATURE),
        ("newsfragments/1234.newsfragment.rst", None),
        ("releasenotes/notes/rep-time-48533d8fe474a035.yaml", None),  # its type is in its text
        (".changeset/brave-dogs-dance.md", None),
        ("src/pkg/changes/tracker.py", None),  # a module in a folder of that name, not a fragment
        ("notes/1234.feature.md", None),  # no fragment folder
    ],
)
def test_fragment_types(path, category):
    assert fragment_category(path) == category


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("CHANGELOG.md", True),
        ("CHANGES.rst", True),
        ("HISTORY", True),
        ("docs/changelog.md", True),
        ("clang/docs/ReleaseNotes.rst", True),
        ("docs/releases/5.1.txt", True),
        ("doc/source/whatsnew/v2.2.0.rst", True),
        ("src/pkg/changes.py", False),
        ("docs/guide/install.md", False),
    ],
)
def test_release_notes_files(path, expected):
    assert is_release_notes_file(path) is expected


def test_a_release_moving_unreleased_entries_declares_nothing():
    patch = (
        "@@ -8,12 +8,12 @@\n"
        " ## [Unreleased]\n"
        " \n"
        "+## [1.5.0] - 2026-01-02\n"
        "+\n"
        " ### Added\n"
        "-- `Client.retry` option (#41)\n"
        "+- `Client.retry` option (#41)\n"
    )
    version = FileChange(
        "pyproject.toml", "modified", 1, 1, '@@ -2 +2 @@\n-version = "1.4.0"\n+version = "1.5.0"\n'
    )
    assert declared_entries(commit(version, notes(patch))) == ()


def test_a_release_compiling_fragments_declares_nothing():
    patch = "@@ -1,3 +1,6 @@\n # Changes\n+\n+## 1.5.0\n+- Add `--retry` (#1234)\n"
    gone = FileChange("changes/1234.feature.md", "removed", 0, 1, "@@ -1 +0,0 @@\n-Add `--retry`.\n")
    version = FileChange(
        "pyproject.toml", "modified", 1, 1, '@@ -2 +2 @@\n-version = "1.4.0"\n+version = "1.5.0"\n'
    )
    assert declared_entries(commit(version, gone, notes(patch))) == ()


def test_a_docs_only_changelog_fix_declares_nothing():
    patch = "@@ -8,4 +8,4 @@\n ### Added\n-- `Client.retyr` option (#41)\n+- `Client.retry` option (#41)\n"
    guide = FileChange("docs/guide.md", "modified", 1, 1, "@@ -1 +1 @@\n-a\n+b\n")
    assert declared_entries(commit(notes(patch), guide)) == ()
    # and the same entry added beside docs alone: it describes other commits
    added = "@@ -8,3 +8,4 @@\n ### Added\n+- `Client.retry` option (#41)\n"
    assert declared_entries(commit(notes(added), guide)) == ()


def test_a_bot_declares_nothing():
    assert declared_entries(commit(CODE, notes(KEEP_A_CHANGELOG), author="release-bot", login=None)) == ()
    assert declared_entries(commit(CODE, notes(KEEP_A_CHANGELOG), login="dependabot[bot]")) == ()


def test_many_entries_are_a_collected_release():
    items = "".join(f"+- Entry {i} (#{i})\n" for i in range(MAX_ENTRIES + 1))
    patch = f"@@ -3,3 +3,{3 + MAX_ENTRIES + 1} @@\n ### Added\n{items}"
    assert declared_entries(commit(CODE, notes(patch))) == ()
    fewer = "".join(f"+- Entry {i} (#{i})\n" for i in range(MAX_ENTRIES))
    assert len(declared_entries(commit(CODE, notes(f"@@ -3,3 +3,6 @@\n ### Added\n{fewer}")))) == MAX_ENTRIES


def test_contributors_sections_list_people():
    patch = "@@ -3,3 +3,4 @@\n ### New Contributors\n+- @ada made their first contribution in #41\n"
    assert declared_entries(commit(CODE, notes(patch))) == ()


def test_a_links_text_stands_for_it():
    patch = "@@ -3,3 +3,4 @@\n ### Added\n+- Free threading by @ada in [#70](https://github.com/acme/widget/pull/70)\n"
    assert [e.text for e in declared_entries(commit(CODE, notes(patch)))] == ["Free threading by @ada in #70"]


def test_a_notes_patch_of_thousands_of_lines_declares_nothing_and_is_not_read():
    # a rewrite of the notes or a compiled release: one change's entry is a few lines
    items = "".join(f"+- item {i} (#{i})\n" for i in range(MAX_NOTES_PATCH_LINES + 1))
    patch = "@@ -1,2 +1,3 @@\n ## Unreleased\n ### Added\n" + items
    assert declared_entries(commit(CODE, notes(patch))) == ()


def test_a_megabyte_long_item_is_read_by_its_first_characters():
    patch = "@@ -1,2 +1,3 @@\n ### Breaking changes\n+- " + "[a](" * 250_000 + "\n"
    [entry] = declared_entries(commit(CODE, notes(patch)))
    assert entry.category == Category.BREAKING
    assert entry.text.startswith("[a]([a](") and entry.text.endswith("…") and len(entry.text) <= MAX_TEXT
