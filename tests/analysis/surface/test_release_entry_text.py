"""A release-notes item placed by the notes' text after the commit, not only by the patch's few context lines:
most items sit far below their heading (analysis/surface/release_entries.py, the surface step's notes read)."""

from __future__ import annotations

import dataclasses
import difflib

from analysis.heuristic import rank
from analysis.models import Commit, FileChange, FileTexts, Importance, SurfaceKind
from analysis.release_headings import Category
from analysis.surface.commit import MAX_FILES_PER_COMMIT, commit_facts, file_specs, without_diffs
from analysis.surface.release_entries import MAX_ENTRIES, declared_entries, notes_to_read, placed_entries
from tests.analysis.heuristic.test_heuristic import fc
from tests.analysis.heuristic.test_heuristic import make as make_commit
from tests.analysis.heuristic.test_judgment import hunk

CODE = fc(
    "src/widget/engine.py", 2, 2, hunk(["    limit = 10", "    step = 1"], ["    limit = 12", "    step = 2"])
)
OLD_ITEMS = [f"- Older removal number {n} (#{n})" for n in range(1, 11)]
MARKDOWN = "\n".join(
    [
        "# Changelog",
        "",
        "## [Unreleased]",
        "",
        "### Removed",
        "",
        *OLD_ITEMS,
        "",
        "## [2.3.0] - 2026-01-05",
        "",
    ]
)
NEW_ITEM = "- The `Engine.legacy_step` method; use `Engine.step` (#77)"
REST = "\n".join(
    [
        "Release notes",
        "=============",
        "",
        "Unreleased",
        "----------",
        "",
        "Backwards incompatible changes",
        "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~",
        "",
        *[f"* Older change number {n} (:pr:`{n}`)" for n in range(1, 11)],
        "",
        "2.3.0",
        "-----",
        "",
    ]
)


PARENT = "f" * 40


def make(title: str, *files: FileChange) -> Commit:
    return make_commit(title, *files, parents=(PARENT,))


def diff(before: str, after: str) -> str:
    """git's patch of a file, three lines of context (no hunk heading: git shows no `#` line there)."""
    lines = difflib.unified_diff(before.split("\n"), after.split("\n"), lineterm="", n=3)
    return "\n".join(line for line in lines if not line.startswith(("---", "+++"))) + "\n"


def after_adding(text: str, below: str, item: str) -> str:
    return text.replace(below + "\n", below + "\n" + item + "\n", 1)


def notes_change(before: str, after: str, path: str = "CHANGELOG.md") -> FileChange:
    return fc(path, 1, 0, diff(before, after))


def read(commit: Commit, texts: dict[tuple[str, str], str | None]) -> Commit:
    """The commit as the surface step leaves it: its notes items placed by the text the source read."""
    code = {key: "limit = 1\n" for key in file_specs(commit)}  # the code files' versions
    surface, _, _ = commit_facts(without_diffs(commit), FileTexts(code | texts, set()), {}, None)
    assert surface is not None
    entries = tuple(c for c in surface if c.kind == SurfaceKind.RELEASE_ENTRY)
    return dataclasses.replace(commit, surface=(), release_entries=entries)


def test_an_item_far_below_its_markdown_heading_is_breaking_with_the_text_other_with_the_patch_alone():
    after = after_adding(MARKDOWN, OLD_ITEMS[-1], NEW_ITEM)
    commit = make("Rework the engine loop (#77)", CODE, notes_change(MARKDOWN, after))
    assert "### Removed" not in commit.files[1].patch  # out of the patch's context
    assert [e.category for e in declared_entries(commit)] == [Category.OTHER]
    assert rank(commit, "en")[0] == Importance.LOW  # a source that reads no files: the patch path

    filled = read(commit, {(commit.sha, "CHANGELOG.md"): after})
    [fact] = filled.release_entries
    assert (fact.name, fact.path, fact.line) == (
        "breaking",
        "CHANGELOG.md",
        after.split("\n").index(NEW_ITEM) + 1,
    )
    assert fact.new == "The `Engine.legacy_step` method; use `Engine.step` (#77)"
    assert [(e.category, e.text) for e in declared_entries(filled)] == [(Category.BREAKING, fact.new)]
    importance, reason = rank(filled, "en")
    assert importance == Importance.HIGH
    assert "its release-notes entry: `breaking: The 'Engine.legacy_step' method" in reason


def test_an_item_under_a_rest_section_takes_its_kind_from_the_text():
    item = "* ``Engine.run`` no longer accepts ``legacy=True`` (:pr:`77`)"
    after = after_adding(REST, "* Older change number 10 (:pr:`10`)", item)
    commit = make("Rework the engine loop (#77)", CODE, notes_change(REST, after, "docs/changelog.rst"))
    assert [e.category for e in declared_entries(commit)] == [Category.OTHER]
    filled = read(commit, {(commit.sha, "docs/changelog.rst"): after})
    assert [e.category for e in declared_entries(filled)] == [Category.BREAKING]
    assert rank(filled, "en")[0] == Importance.HIGH


def test_the_notes_file_is_read_after_the_code_files_and_only_its_version_after():
    after = after_adding(MARKDOWN, OLD_ITEMS[-1], NEW_ITEM)
    commit = make("Rework the engine loop (#77)", CODE, notes_change(MARKDOWN, after))
    assert file_specs(commit) == [
        (PARENT, "src/widget/engine.py"),
        (commit.sha, "src/widget/engine.py"),
        (commit.sha, "CHANGELOG.md"),
    ]
    assert without_diffs(commit).files[1].patch == commit.files[1].patch  # its lines are counted from it


def test_no_notes_file_no_read_and_a_full_commit_keeps_its_code_files():
    assert file_specs(make("Rework the engine loop (#77)", CODE)) == file_specs(
        make("Rework the engine loop (#77)", CODE, fc("docs/engine.md", 1, 0, "@@ -1 +1,2 @@\n x\n+- y\n"))
    )
    after = after_adding(MARKDOWN, OLD_ITEMS[-1], NEW_ITEM)
    many = [fc(f"src/widget/m{n}.py", 1, 1, CODE.patch) for n in range(MAX_FILES_PER_COMMIT)]
    full = make("Rework every module (#78)", *many, notes_change(MARKDOWN, after))
    assert notes_to_read(full) and all(path != "CHANGELOG.md" for _, path in file_specs(full))
    assert len(file_specs(full)) == 2 * MAX_FILES_PER_COMMIT


def test_a_notes_file_not_read_leaves_the_patch_to_say():
    after = after_adding(MARKDOWN, OLD_ITEMS[-1], NEW_ITEM)
    commit = make("Rework the engine loop (#77)", CODE, notes_change(MARKDOWN, after))
    key = (commit.sha, "CHANGELOG.md")
    texts = {k: "limit = 1\n" for k in file_specs(commit) if k != key}
    for read_texts, skipped in (({}, {key}), ({}, set())):  # over the size cap; not read at all
        surface, _, _ = commit_facts(without_diffs(commit), FileTexts(texts | read_texts, skipped), {}, None)
        assert surface is not None and not any(c.kind == SurfaceKind.RELEASE_ENTRY for c in surface)


def test_a_text_that_is_not_the_patchs_places_nothing():
    after = after_adding(MARKDOWN, OLD_ITEMS[-1], NEW_ITEM)
    patch = diff(MARKDOWN, after)
    assert placed_entries("CHANGELOG.md", patch, after.replace("Engine.legacy_step", "Engine.other")) is None
    assert placed_entries("CHANGELOG.md", patch, after[: after.index(NEW_ITEM)]) is None  # a shorter file
    assert [c.name for c in placed_entries("CHANGELOG.md", patch, after) or ()] == ["breaking"]


def test_items_in_fenced_code_nested_items_and_thanks_are_no_entries():
    text = (
        "## Unreleased\n\n### Removed\n\n- Old (#1)\n\n```python\n# not a heading\n```\n\n"
        "### Thanks\n\n- Someone\n"
    )
    after = text.replace("- Old (#1)\n", "- Old (#1)\n  - nested detail\n- New removal (#2)\n").replace(
        "- Someone\n", "- Someone\n- Someone else\n"
    )
    after = after.replace("# not a heading\n", "# not a heading\n- not an item\n")
    placed = placed_entries("CHANGELOG.md", diff(text, after), after)
    assert [(c.name, c.new) for c in placed or ()] == [("breaking", "New removal (#2)")]


def test_a_release_moving_its_entries_declares_nothing_even_with_the_text():
    unreleased = (
        "## Unreleased\n\n### Removed\n\n- `Engine.legacy_step` (#70)\n\n### Fixed\n\n- Crash (#71)\n"
    )
    before = unreleased + "\n## 2.3.0\n\n- First.\n"
    # the release's sections under its version, the kinds in another order: each item moved is removed too
    after = "## Unreleased\n\n## 2.4.0\n\n### Fixed\n\n- Crash (#71)\n\n### Removed\n\n- `Engine.legacy_step` (#70)\n"
    after += "\n## 2.3.0\n\n- First.\n"
    version = fc("src/widget/__init__.py", 1, 1, hunk(['__version__ = "2.3.0"'], ['__version__ = "2.4.0"']))
    commit = make("Release 2.4.0", version, notes_change(before, after))
    assert notes_to_read(commit) == []  # its items are moved, not added: nothing to read
    placed = placed_entries("CHANGELOG.md", commit.files[1].patch, after)  # as a stored fact would say
    assert [(c.name, c.new) for c in placed or ()] == [("fix", "Crash (#71)")]
    filled = dataclasses.replace(commit, surface=(), release_entries=placed or ())
    assert declared_entries(commit) == () and declared_entries(filled) == ()


def test_more_items_than_one_change_declares_are_not_read():
    items = "".join(f"- Removal number {n} (#{n})\n" for n in range(20, 20 + MAX_ENTRIES + 1))
    after = MARKDOWN.replace(OLD_ITEMS[-1] + "\n", OLD_ITEMS[-1] + "\n" + items, 1)
    commit = make("Prepare release 2.4.0 (#80)", CODE, notes_change(MARKDOWN, after))
    assert notes_to_read(commit) == [] and declared_entries(commit) == ()


def test_a_notes_only_commit_or_a_bots_reads_no_notes_file():
    after = after_adding(MARKDOWN, OLD_ITEMS[-1], NEW_ITEM)
    notes_only = make("Changelog for #77", notes_change(MARKDOWN, after))
    assert notes_to_read(notes_only) == [] and file_specs(notes_only) == []
    bot = dataclasses.replace(
        make("Rework the engine loop (#77)", CODE, notes_change(MARKDOWN, after)),
        author_login="dependabot[bot]",
    )
    assert notes_to_read(bot) == []


# Notes of plain items under version headings, classified by their leading verbs (rewritten Pallets shape).
VERSION_ITEMS = "\n".join(
    [
        "Version 2.4.0",
        "-------------",
        "",
        "Unreleased",
        "",
        "-   Add a ``retries`` option to the client. :pr:`70`",
        "-   Fix the loop stalling on an empty queue. :issue:`60`",
        "",
        "",
        "Version 2.3.0",
        "-------------",
        "",
        "Released 2026-01-05",
        "",
        *[f"-   Fix crash number {n}. :pr:`{n}`" for n in range(1, 6)],
        "-   Support a ``step`` argument. :pr:`6`",
        "",
    ]
)


def test_an_item_in_notes_written_with_verbs_takes_its_verbs_kind_from_the_text():
    item = "-   Drop the ``Engine.legacy_step`` method. :pr:`77`"
    after = after_adding(VERSION_ITEMS, "-   Fix the loop stalling on an empty queue. :issue:`60`", item)
    commit = make("Rework the engine loop (#77)", CODE, notes_change(VERSION_ITEMS, after, "CHANGES.rst"))
    # the patch alone cannot tell how the whole file is written: "other"
    assert [e.category for e in declared_entries(commit)] == [Category.OTHER]
    filled = read(commit, {(commit.sha, "CHANGES.rst"): after})
    assert [(e.category, e.text) for e in declared_entries(filled)] == [
        (Category.BREAKING, "Drop the ``Engine.legacy_step`` method. :pr:`77`")
    ]
    # the same item in notes under category headings keeps their reading ("Fixed" here)
    categorised = (
        "## 2.4.0\n\n### Fixed\n\n" + "\n".join(f"- Fix crash {n} (#{n})" for n in range(1, 6)) + "\n"
    )
    after = categorised + "- Drop the `Engine.legacy_step` method (#77)\n"
    placed = placed_entries("CHANGELOG.md", diff(categorised, after), after)
    assert [c.name for c in placed or ()] == ["fix"]
