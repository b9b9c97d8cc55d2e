"""A commit's own release-notes entry in the forms real projects write it, each as git shows the commit that
adds it beside a code change (`@@ … @@ heading` hunks with three lines of context; in the patches below an empty line is a blank
context line). The texts are modelled
on real notes files; names are made up."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from analysis.models import Commit, FileChange
from analysis.release_headings import Category
from analysis.surface.release_entries import declared_entries

CODE = FileChange("src/pkg/core.py", "modified", 2, 1, "@@ -1,2 +1,3 @@\n a = 1\n-b = 2\n+b = 3\n+c = 4\n")


def commit(*files: FileChange) -> Commit:
    return Commit("o/r", "a" * 40, "Change core", "Ada", datetime(2026, 1, 2, tzinfo=UTC), files=files)


def modified(path: str, patch: str) -> FileChange:
    """A file's change from its patch, where an empty line stands for a blank context line (git shows " ")."""
    patch = "\n".join(line or " " for line in patch.rstrip("\n").split("\n")) + "\n"
    return FileChange(path, "modified", patch.count("\n+"), patch.count("\n-"), patch)


def added(path: str, text: str) -> FileChange:
    lines = text.splitlines()
    patch = f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines)
    return FileChange(path, "added", len(lines), 0, patch)


def categories(*files: FileChange) -> list[Category]:
    return [e.category for e in declared_entries(commit(CODE, *files))]


# A per-release docs page whose "Minor features" section is divided by module (`:mod:` subheadings): no line
# of it starts with a letter, so git's hunk heading is the section's title.
DOCS_RELEASE_MODULE_TOPIC = """\
@@ -92,6 +92,9 @@ Minor features
 * :class:`~pkg.indexes.TreeIndex` now supports the
   ``dedupe`` parameter.

+* :class:`~pkg.indexes.HashIndex` now accepts ``fillfactor``.
+
 :mod:`pkg.contrib.redirects`
 ~~~~~~~~~~~~~~~~~~~~~~~~~~~~

"""

DOCS_RELEASE_SUBHEADING_IN_HUNK = """\
@@ -85,6 +85,8 @@ Minor features
 :mod:`pkg.contrib.postgres`
 ~~~~~~~~~~~~~~~~~~~~~~~~~~~

+* :class:`~pkg.indexes.HashIndex` now accepts ``fillfactor``.
+
 * :class:`~pkg.indexes.TreeIndex` now supports the
   ``dedupe`` parameter.
"""

# "Features deprecated in X.Y": the version does not make it a release heading, "deprecated" names the kind.
DOCS_RELEASE_DEPRECATED = """\
@@ -301,6 +301,10 @@ Features deprecated in 5.1
 Miscellaneous
 -------------

+* The ``Reader.open()`` method is deprecated. Use the
+  :class:`Reader` constructor instead.
+
 * The ``Model.log_action()`` method is deprecated.
"""

DOCS_RELEASE_INCOMPATIBLE = """\
@@ -250,6 +250,8 @@ Backwards incompatible changes in 5.1
 Database backend API
 --------------------

+* ``DatabaseFeatures.supports_x`` is removed.
+
 This section describes changes that may be needed in third-party database
"""

# A compiler's notes: "… in This Version" names the kind too.
COMPILER_BUG_FIXES = """\
@@ -410,6 +410,8 @@ Bug Fixes in This Version
 - Fixed a crash when a lambda captured a structured binding.
 - Fixed an assertion in template instantiation.
   (#90123)
+- Fixed a miscompile of ``__builtin_memcpy`` with overlapping ranges.
+  (#91234)

 Bug Fixes to Compiler Builtins
"""

# A data library's what's-new page: "Bug fixes" divided by area with `^^^` subheadings.
WHATSNEW_BUG_FIX_AREA = """\
@@ -612,6 +612,7 @@ Bug fixes
 Categorical
 ^^^^^^^^^^^
 - Bug in :meth:`Categorical.isin` raising for overlapping intervals (:issue:`34974`)
+- Bug in :meth:`Categorical.astype` dropping the ordered flag (:issue:`35012`)

 Datetimelike
 ^^^^^^^^^^^^
"""

# A version heading with an "Unreleased" date and plain items: no category to read.
VERSION_UNRELEASED = """\
@@ -1,6 +1,8 @@
 Version 3.2.0
 -------------

 Unreleased

+-   Add ``Config.from_prefixed_env()`` parameters. :pr:`5301`
+

"""

# A release heading inside the hunk: the hunk heading above it belongs to the previous release's notes.
RELEASE_BELOW_HUNK_HEADING = """\
@@ -20,6 +20,10 @@ Bug fixes
 - Old fix (#1)

+Version 2.1
+-----------
+
+- New entry (#9)

"""


@pytest.mark.parametrize(
    ("path", "patch", "expected"),
    [
        ("docs/releases/5.1.txt", DOCS_RELEASE_MODULE_TOPIC, Category.FEATURE),
        ("docs/releases/5.1.txt", DOCS_RELEASE_SUBHEADING_IN_HUNK, Category.FEATURE),
        ("docs/releases/5.1.txt", DOCS_RELEASE_DEPRECATED, Category.DEPRECATION),
        ("docs/releases/5.1.txt", DOCS_RELEASE_INCOMPATIBLE, Category.BREAKING),
        ("clang/docs/ReleaseNotes.rst", COMPILER_BUG_FIXES, Category.FIX),
        ("doc/source/whatsnew/v2.2.0.rst", WHATSNEW_BUG_FIX_AREA, Category.FIX),
        ("CHANGES.rst", VERSION_UNRELEASED, Category.OTHER),
        ("CHANGES.md", RELEASE_BELOW_HUNK_HEADING, Category.OTHER),
    ],
)
def test_notes_page_entries(path, patch, expected):
    assert categories(modified(path, patch)) == [expected]


def test_a_subheading_naming_a_kind_is_a_sibling_of_the_hunk_heading():
    patch = (
        "@@ -40,6 +40,8 @@ Deprecations\n"
        " - ``Reader.old`` is deprecated (:issue:`1`)\n"
        " \n"
        " Performance improvements\n"
        " ~~~~~~~~~~~~~~~~~~~~~~~~\n"
        "+- Faster :meth:`Reader.read` on wide files (:issue:`2`)\n"
    )
    assert categories(modified("doc/source/whatsnew/v2.2.0.rst", patch)) == [Category.PERFORMANCE]


RENO_UPGRADE = """\
---
upgrade:
  - |
    The ``rep_time`` argument of :func:`.assemble` is now in seconds, not
    microseconds.
"""

RENO_SECTIONS = """\
---
features_circuits:
  - |
    Added :meth:`.Circuit.compose_many`.
fixes:
  - |
    Fixed a crash in :meth:`.Circuit.copy`.
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (RENO_UPGRADE, Category.BREAKING),
        (RENO_SECTIONS, Category.FEATURE),
        ("security:\n  - Fixed CVE-2026-1234 in the token parser.\n", Category.FIX),
        ("deprecations:\n  - The ``legacy`` option is deprecated.\n", Category.DEPRECATION),
        ("prelude: >\n    This release adds a new solver.\n", Category.OTHER),
    ],
)
def test_reno_notes_carry_their_type_in_their_sections(text, expected):
    [entry] = declared_entries(
        commit(CODE, added("releasenotes/notes/rep-time-seconds-48533d8fe474a035.yaml", text))
    )
    assert (entry.category, entry.fragment) == (expected, True)


def test_a_reno_notes_text_is_its_first_line_of_prose():
    [entry] = declared_entries(
        commit(CODE, added("releasenotes/notes/x-0123456789abcdef.yaml", RENO_UPGRADE))
    )
    assert entry.text == "The ``rep_time`` argument of :func:`.assemble` is now in seconds, not"


CHANGE_BLOCK = """\
.. change::
    :tags: postgresql, bug
    :tickets: 10902

    Fixed regular expression used when reflecting foreign keys to
    support escaped quotes in table names.
"""


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ("postgresql, bug", Category.FIX),
        ("orm, usecase", Category.FEATURE),
        ("sql, feature", Category.FEATURE),
        ("engine, removed", Category.BREAKING),
        ("orm, deprecated", Category.DEPRECATION),
        ("performance, orm", Category.PERFORMANCE),
        ("bug, tests", Category.FIX),
    ],
)
def test_a_change_blocks_tags_name_its_type(tags, expected):
    text = CHANGE_BLOCK.replace("postgresql, bug", tags)
    [entry] = declared_entries(commit(CODE, added("doc/build/changelog/unreleased_20/10902.rst", text)))
    assert (entry.category, entry.fragment) == (expected, True)
    assert entry.text == "Fixed regular expression used when reflecting foreign keys to"


@pytest.mark.parametrize(
    ("bumps", "expected"),
    [
        ('"@acme/widgets": patch', Category.FIX),
        ('"@acme/widgets": minor\n"@acme/core": patch', Category.FEATURE),
        ("'@acme/core': major", Category.BREAKING),
        ("widgets: minor", Category.FEATURE),
    ],
)
def test_a_changesets_bump_names_its_type(bumps, expected):
    text = f"---\n{bumps}\n---\n\nAdd a `retry` option to `fetch()`.\n"
    [entry] = declared_entries(commit(CODE, added(".changeset/brave-dogs-dance.md", text)))
    assert (entry.category, entry.text) == (expected, "Add a `retry` option to `fetch()`.")


def test_a_fragment_whose_text_declares_no_type_is_no_entry():
    # a folder's README, a template: no section, tag or bump
    assert declared_entries(commit(CODE, added(".changeset/README.md", "# Changesets\n\nHello.\n"))) == ()
    assert declared_entries(commit(CODE, added("releasenotes/notes/template.yaml", "- a list\n"))) == ()


def test_a_release_deleting_typeless_fragments_compiles_them():
    # the fragments' types are in their text, not their names: their deletion still marks a compiled release
    gone = FileChange("doc/build/changelog/unreleased_20/10902.rst", "removed", 0, 6, "@@ -1,6 +0,0 @@\n-x\n")
    notes = modified(
        "CHANGES.md", "@@ -1,2 +1,4 @@\n # Changes\n+## 2.0.1\n+### Fixed\n+- Escaped quotes (#10902)\n"
    )
    assert declared_entries(commit(CODE, gone, notes)) == ()


def test_typed_fragments_alone_describe_other_commits():
    reno = added("releasenotes/notes/prep-0123456789abcdef.yaml", RENO_UPGRADE)
    assert declared_entries(commit(reno)) == ()
