"""Release notes read as an answer key: each format's headings, items and references, and what an
unlisted pull request means."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from analysis.evaluation.release_notes import (
    MIN_LISTED,
    UNLISTED,
    Category,
    Landed,
    candidates,
    notes_key,
    parse,
)
from analysis.release_headings import heading_category, item_category

B, F, C, D, P, X, DEP, DOC, INT, OTH = (
    Category.BREAKING,
    Category.FEATURE,
    Category.CHANGE,
    Category.DEPRECATION,
    Category.PERFORMANCE,
    Category.FIX,
    Category.DEPENDENCIES,
    Category.DOCS,
    Category.INTERNAL,
    Category.OTHER,
)


@pytest.mark.parametrize(
    ("heading", "category"),
    [
        ("Breaking Changes", B),
        ("💥 Breaking changes", B),
        ("Backwards-incompatible Changes", B),
        ("Backward incompatible changes", B),
        ("Removed", B),
        ("Compatibility Notes", B),
        ("New Features", F),
        ("Features", F),
        ("Added", F),
        ("Enhancements", F),
        ("Stabilized APIs", F),
        ("Changes", C),
        ("Changed", C),
        ("Deprecations", D),
        ("Deprecated", D),
        ("Performance", P),
        ("⚡️ Performance improvements", P),
        ("Fixes", X),
        ("Bug Fixes", X),
        ("Bugfixes", X),
        ("Fixed", X),
        ("Security", X),
        ("Docs", DOC),
        ("Documentation", DOC),
        ("Translations", DOC),
        ("Internal", INT),
        ("Internal Changes", INT),
        ("Minor Internal Improvements", INT),
        ("Refactors", INT),
        ("Upgrades", DEP),
        ("Packaging", DEP),
        ("Dependency updates", DEP),
        ("Build", INT),
        ("CI", INT),
        ("Chores", INT),
        ("Maintenance", INT),
        ("Dependencies", DEP),
        ("Improved Documentation", DOC),
        ("Model Support", F),
        ("Hardware and Operator Support", F),
        # deprecations and breaking changes side by side: the stronger kind, each item then says its own
        ("Deprecation & Breaking Changes", B),
        ("Deprecations and Removals", B),
        ("Breaking Changes and Deprecations", B),
        ("New Contributors", "ignore"),
        ("Contributors", "ignore"),
        # an entry's title (reST notes that underline each entry): a drop is breaking whatever it drops; a
        # word inside an identifier is a name, not a kind
        ("Dropped support for Python 3.9", B),
        ("Python 3.8 support dropped", B),
        ('Make it compliant under "new_style" error handling', None),
        ("__Bug fixes__", X),
        # an index of every merged pull request, beside the written sections
        ("Pull-Requests", "ignore"),
        ("Full Changelog", "ignore"),
        # A release's version beside a word of a specific kind: the kind (per-release docs pages).
        ("Backwards incompatible changes in 5.1", B),
        ("Features deprecated in 5.1", D),
        ("Features removed in 5.1", B),
        ("Bug Fixes in This Version", X),
        ("v2.1 new features", F),
        # What happens to the features names the kind, wherever it stands.
        ("Removed Compiler Flags", B),
        # Support withdrawn: "support" names what was taken away, not a feature.
        ("Drop Support for Python 3.9", B),
        ("Dropped support for Windows 7", B),
        ("New deprecations", D),
        ("New Compiler Flags", F),
        # A release, not a kind of change.
        ("What's new in 5.1", None),
        ("Changes in 1.2", None),
        ("v2.14.0b1 (2026-08-06)", None),
        ("[1.2.0] - 2025-01-02", None),
        ("What's Changed", None),
        ("Latest Changes", None),
        ("Unreleased", None),
        ("Language", None),
        ("`pydantic-core`", None),
    ],
)
def test_headings_name_categories_by_general_words(heading, category):
    assert heading_category(heading) == category


@pytest.mark.parametrize(
    ("item", "category"),
    [
        ("feat: add retries", F),
        ("feat(cli)!: drop --old", B),
        ("fix(parser): handle tabs", X),
        ("docs: typo", DOC),
        ("chore(deps): bump x", INT),
        ("perf: faster walk", P),
        # a scope naming no code users run decides: CI work, docs, examples
        ("feat(ci): Update workflows and pre-built wheels", INT),
        ("fix(ci): Fix build-and-release.yaml", INT),
        ("fix(docs): Update development instructions", DOC),
        ("feat(server): Add support for setting root_path", F),
        ("fix(tests)!: drop the old fixture", B),
        ("examples: fix quantize example", DOC),
        ("example: LLM inference with Ray Serve", DOC),
        ("[Bugfix] Handle empty batch", X),
        ("[Doc] Fix link", DOC),
        ("✨ Add support for lifespans", F),
        ("🐛 Fix crash", X),
        ("🌐 Add Japanese translation for Tutorial", DOC),
        ("⬆️ Bump ruff", INT),
        ("👷 Update CI", INT),
        ("💥 Remove Python 3.8 support", B),
        ("Add support for something", None),
    ],
)
def test_items_under_no_category_take_their_own_prefix(item, category):
    assert item_category(item) == category


GITHUB_CATEGORISED = """\
<!-- markdownlint-disable no-bare-urls -->

## v3.1.0 (2026-02-01)

[GitHub release](https://github.com/acme/widgets/releases/tag/v3.1.0)

### What's Changed

Some prose that mentions nothing.

#### New Features

* Add `Frobnicator` by @ann in [#301](https://github.com/acme/widgets/pull/301)
* Support the new core by @bob in [acme/widgets-core#77](https://github.com/acme/widgets-core/pull/77)

#### Changes

* **Breaking Change:** rename `old_name` by @ann in [#302](https://github.com/acme/widgets/pull/302)
* Drop support for Python 3.9 by @bob in [#303](https://github.com/acme/widgets/pull/303)

#### Performance

##### Internal Improvements

* ⚡️ Speed up `walk()` by 30% by @cy in [#304](https://github.com/acme/widgets/pull/304)

#### Fixes

* Fix the thing by @dee in [#305](https://github.com/acme/widgets/pull/305)
* Fix a link whose text names another repository's PR by @dee in [#78](https://github.com/acme/widgets-core/pull/78)

#### Packaging

* Bump the core to v2 by @ann in [#306](https://github.com/acme/widgets/pull/306)
* Also ships the Frobnicator by @ann in [#301](https://github.com/acme/widgets/pull/301)

### New Contributors

* @dee made their first contribution in [#305](https://github.com/acme/widgets/pull/305)
* @eve made their first contribution in [#399](https://github.com/acme/widgets/pull/399)

## v3.0.1 (2026-01-10)

### What's Changed

* Fix a crash in patch releases by @ann in [#290](https://github.com/acme/widgets/pull/290)

**Full Changelog**: https://github.com/acme/widgets/compare/v3.0.0...v3.0.1
"""


def test_github_whats_changed_with_category_headings():
    notes = parse(GITHUB_CATEGORISED, "acme/widgets")
    assert notes.home == "acme/widgets"
    assert notes.prs == {
        301: F,  # also under Packaging: the most significant category stays
        302: B,  # the item says it is breaking, whatever its section
        303: B,  # under "Changes", an item that drops support says so
        304: INT,  # the innermost heading with a category word decides
        305: X,  # a first-contribution line lists nobody's change
        306: DEP,  # what users install changed: not internal
        290: OTH,  # a patch release's flat list names no category
    }
    assert 77 not in notes.prs and 78 not in notes.prs and 399 not in notes.prs
    assert notes.counts == {
        "breaking": 2,
        "feature": 1,
        "fix": 1,
        "dependencies": 1,
        "internal": 1,
        "other": 1,
    }


def test_the_callers_repository_decides_which_links_are_its_own():
    text = (
        "### Fixes\n\n"
        "* one in https://github.com/acme/core/pull/1\n"
        "* two in https://github.com/acme/core/pull/2\n"
        "* three in https://github.com/acme/widgets/pull/3\n"
    )
    assert set(parse(text).prs) == {1, 2}  # the repository its links name most often
    assert set(parse(text, "Acme/Widgets").prs) == {3}


GITHUB_FLAT = """\
## What's Changed
* feat: add a --json flag by @ann in https://github.com/acme/tool/pull/41
* fix(io): close the file by @bob in https://github.com/acme/tool/pull/42
* Update README.md by @cy in https://github.com/acme/tool/pull/43
* chore(deps): bump click from 8.1 to 8.2 by @dependabot[bot] in https://github.com/acme/tool/pull/44

## New Contributors
* @cy made their first contribution in https://github.com/acme/tool/pull/43

**Full Changelog**: https://github.com/acme/tool/compare/v1.0.0...v1.1.0
"""


def test_github_generated_list_without_categories_uses_each_items_prefix():
    assert parse(GITHUB_FLAT).prs == {41: F, 42: X, 43: OTH, 44: INT}


KEEP_A_CHANGELOG = """\
# Changelog

All notable changes to this project will be documented in this file.

## [Unreleased]

### Added
- A `--since` option ([#12](https://github.com/acme/cli/pull/12)).

## [1.1.0] - 2025-06-01

### Added
- Retries on 5xx (#10)
- Nested list item:
  - with details (#11)

### Changed
- The default timeout is 30 s (#9)

### Deprecated
- `--old-flag` (#8)

### Removed
- Python 3.8 support (#7)

### Fixed
- A crash on empty input (#6)

### Security
- Escape user names in logs (#5)

[Unreleased]: https://github.com/acme/cli/compare/v1.1.0...HEAD
[1.1.0]: https://github.com/acme/cli/compare/v1.0.0...v1.1.0
"""


def test_keep_a_changelog():
    assert parse(KEEP_A_CHANGELOG).prs == {12: F, 10: F, 11: F, 9: C, 8: D, 7: B, 6: X, 5: X}


FRAMEWORK_NOTES = """\
# Release Notes

## Latest Changes

* ✨ Add support for lifespan state. PR [#2001](https://github.com/acme/web/pull/2001) by [@ann](https://github.com/ann).
* 🌐 Add Korean translation for `docs/ko/docs/index.md`. PR [#2002](https://github.com/acme/web/pull/2002) by [@bob](https://github.com/bob).
* ⬆ Bump ruff from 0.5 to 0.6. PR [#2003](https://github.com/acme/web/pull/2003) by [@dependabot[bot]](https://github.com/apps/dependabot).

## 0.110.0

### Breaking Changes

* Require the core library > `1.0.0`.
    * Remove the deprecated parameter `skip_defaults`.
    * PR [#1862](https://github.com/acme/web/pull/1862).

### Features

* ✨ Add `HTTPConnection` injection. PR [#1827](https://github.com/acme/web/pull/1827) by [@cy](https://github.com/cy).

### Refactors

* ♻️ Simplify the router. PR [#1830](https://github.com/acme/web/pull/1830) by [@cy](https://github.com/cy).

### Docs

* 📝 Fix typo in the tutorial. PR [#1831](https://github.com/acme/web/pull/1831) by [@dee](https://github.com/dee).

### Translations

* 🌐 Add Japanese translation for Tutorial - Body. PR [#1683](https://github.com/acme/web/pull/1683) by [@eve](https://github.com/eve).

### Internal

* 👷 Update the docs preview action. PR [#1840](https://github.com/acme/web/pull/1840) by [@ann](https://github.com/ann).

```python
# code blocks list nothing: #9999
```
"""


def test_framework_notes_with_gitmoji_and_nested_items():
    assert parse(FRAMEWORK_NOTES).prs == {
        2001: F,
        2002: DOC,
        2003: INT,
        1862: B,  # referenced in a sub-item of a breaking change
        1827: F,
        1830: INT,
        1831: DOC,
        1683: DOC,
        1840: INT,
    }


TOWNCRIER_RST = """\
Changelog
=========

25.1.0 (2025-03-01)
-------------------

Backwards-incompatible Changes
^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^

- Python 3.8 is no longer supported.
  `#1301 <https://github.com/acme/lib/issues/1301>`_

Deprecations
^^^^^^^^^^^^

- ``lib.old()`` warns. :pr:`1302`

Changes
^^^^^^^

- ``lib.define()`` accepts ``slots``. :issue:`1303`


Improved Documentation
^^^^^^^^^^^^^^^^^^^^^^

- Explain hashing. `#1304 <https://github.com/acme/lib/pull/1304>`_

Misc
^^^^

- `#1305 <https://github.com/acme/lib/issues/1305>`_
"""


def test_towncrier_restructuredtext():
    assert parse(TOWNCRIER_RST).prs == {1301: B, 1302: D, 1303: C, 1304: DOC, 1305: OTH}


COMPILER_NOTES = """\
Version 1.90.0 (2026-01-08)
===========================

<a id="1.90.0-Language"></a>

Language
--------
- [Stabilize `let` chains](https://github.com/acme/lang/pull/132833/)
- [Lint on unused parens][133001]

Compiler
--------
- Target changes:
  - [Promote `riscv64` to Tier 2.](https://github.com/acme/lang/pull/133010/)

Cargo
-----
- [feat: add `info` subcommand](https://github.com/acme/pkg/pull/14141/)

Compatibility Notes
-------------------
- [Disallow setting built-in cfgs on the command line](https://github.com/acme/lang/pull/126158)
- The new sort may panic on a bad `Ord` (#128254).

Internal Changes
----------------

These changes do not affect any public interfaces.

- [Update to LLVM 21](https://github.com/acme/lang/pull/127513)

[133001]: https://github.com/acme/lang/pull/133001
"""


def test_compiler_style_notes_with_underlined_headings_and_reference_links():
    notes = parse(COMPILER_NOTES, "acme/lang")
    assert notes.prs == {
        132833: OTH,
        133001: OTH,
        133010: OTH,
        126158: B,
        128254: B,
        127513: INT,
    }
    assert 14141 not in notes.prs  # another repository's
    assert notes.unclassified_headings == ("language", "compiler")


# A compiler's notes: written-up entries under category sections, then the index of every merged pull request.
NOTES_WITH_INDEX = """Version 0.61.0 (16 January 2025)
================================

Bug Fixes
~~~~~~~~~

Fix parfor hoisting
-------------------

Traverse blocks in the right order.

(`PR-#9397 <https://github.com/acme/lang/pull/9397>`__)

Pull-Requests:
~~~~~~~~~~~~~~

* PR `#9397 <https://github.com/acme/lang/pull/9397>`_: Reorder block traversal (`ann <https://github.com/ann>`_)
* PR `#9701 <https://github.com/acme/lang/pull/9701>`_: update flake8 in pre-commit (`bob <https://github.com/bob>`_)

Authors:
~~~~~~~~

* `ann <https://github.com/ann>`_
"""

# reST notes that underline each entry's title (towncrier's compiled fragments in a compiler's style).
ENTRY_TITLES = """Highlights
~~~~~~~~~~

Dropped support for Python 3.9
------------------------------

Numba now supports Python 3.10 and later.

(`PR-#1 <https://github.com/acme/lang/pull/1>`__)

Python 3.13 support
-------------------

Support for Python 3.13 is added.

(`PR-#2 <https://github.com/acme/lang/pull/2>`__)

Changes
~~~~~~~

POWER Support Update
--------------------

POWER support is now downgraded to unofficial status.

(`PR-#3 <https://github.com/acme/lang/pull/3>`__)

Removal of experimental frontend
--------------------------------

The experimental frontend has been removed.

(`PR-#4 <https://github.com/acme/lang/pull/4>`__)

Bug Fixes
~~~~~~~~~

Make it compliant under new style error handling
------------------------------------------------

Internal code now raises NumbaErrors.

(`PR-#5 <https://github.com/acme/lang/pull/5>`__)
"""


def test_an_entry_title_under_a_section_that_names_its_kind_takes_the_sections_kind():
    # under no category, the title's words decide; under one, the section does unless the title says removed
    assert parse(ENTRY_TITLES).prs == {1: B, 2: F, 3: C, 4: B, 5: X}


# A plugin's notes: topical sections, then a "Full Changelog" table of every pull request.
PLUGIN_NOTES = """# Plugin v0.24.0 Release Notes

## Fixes

- Fixed the kernel block size. ([#1453](https://github.com/acme/plugin/pull/1453))

---

## Full Changelog

| PR | Title | Author |
| --- | --- | --- |
| [#1453](https://github.com/acme/plugin/pull/1453) | fix kernel block size | @ann |
| [#1464](https://github.com/acme/plugin/pull/1464) | Increase timeout from default 6h to 12h | @bob |
"""


@pytest.mark.parametrize(("text", "written", "index_only"), [(NOTES_WITH_INDEX, 9397, 9701),
                                                              (PLUGIN_NOTES, 1453, 1464)])  # fmt: skip
def test_an_index_of_every_merged_pull_request_lists_none_of_them(text, written, index_only):
    # the maintainers wrote up the first; the second is only in the index: not told to users (unlisted)
    assert parse(text).prs == {written: X} and index_only not in parse(text).prs


def test_a_tilde_underline_is_a_heading_not_a_code_fence():
    # Sphinx notes underline their subsections with `~`: read as a Markdown fence, it hid the items below
    # it and the next one hid the rest (4 of 13 pull requests read, under the wrong headings)
    text = (
        "Brick 3.3 Release Notes\n=======================\n\nChanges to the IR\n-----------------\n\n"
        "Breaking changes\n~~~~~~~~~~~~~~~~\n\n* ``createMul`` was removed. (`#301 <https://x.org/a/b/pull/301>`_)\n\n"
        "New features\n~~~~~~~~~~~~\n\n* ``Opcode::Rem``. (`#302 <https://x.org/a/b/pull/302>`_)\n\n"
        "Bug fixes\n~~~~~~~~~\n\n* A crash (#315)\n"
    )
    assert parse(text).prs == {301: B, 302: F, 315: X}
    # a Markdown fence stays one: three tildes under a line, or after a blank line, hide what they hold
    fenced = "## Fixes\n\nUsage:\n~~~\n- not an item #5\n~~~\n\n~~~~\n- nor #6\n~~~~\n\n- A crash (#7)\n"
    assert parse(fenced).prs == {7: X}


def test_bold_lines_act_as_headings():
    text = "## 2.0\n\n**Features**\n\n- New API (#1)\n\n**Bug fixes:**\n\n- A crash (#2)\n\n## 1.9\n\n- Old (#3)\n"
    assert parse(text).prs == {1: F, 2: X, 3: OTH}


def test_references_in_every_shape():
    text = (
        "### Fixes\n"
        "- (#1) and #2, [#3](https://github.com/o/r/pull/3), https://github.com/o/r/pull/4/files\n"
        "- https://github.com/o/r/issues/5 and o/r#6 and :pr:`7` and gh GitLab https://gitlab.com/o/r/-/merge_requests/8\n"
        "- not references: &#9; page#10 v1.2#11 `abc`#x\n"
    )
    assert set(parse(text, "o/r").prs) == {1, 2, 3, 4, 5, 6, 7, 8}


# Four lines of pydantic's HISTORY.md (MIT), as written.
PYDANTIC_EXCERPT = """\
## v2.11.0 (2025-03-27)

[GitHub release](https://github.com/pydantic/pydantic/releases/tag/v2.11.0)

### What's Changed

#### New Features

* Add `encoded_string()` method to the URL types by @YassinNouh21 in [#11580](https://github.com/pydantic/pydantic/pull/11580)

#### Fixes

* Fix deferred discriminator application logic by @Viicos in [#11591](https://github.com/pydantic/pydantic/pull/11591)

#### Packaging

* Bump `pydantic-core` to v2.33.0 by @Viicos in [#11631](https://github.com/pydantic/pydantic/pull/11631)

### New Contributors

* @cmenon12 made their first contribution in [#11562](https://github.com/pydantic/pydantic/pull/11562)
"""


def test_a_real_excerpt():
    assert parse(PYDANTIC_EXCERPT, "pydantic/pydantic").prs == {11580: F, 11591: X, 11631: DEP}


def test_candidates_are_a_bounded_list_in_order():
    tree = [
        "src/changelog.py",
        "docs/en/docs/release-notes.md",
        "HISTORY.md",
        "docs/changelog.rst",
        "CHANGES.rst",
        "packages/x/CHANGELOG.md",
        "docs/img/changelog.png",
        "README.md",
    ]
    assert candidates(tree) == [
        "CHANGES.rst",
        "HISTORY.md",
        "docs/changelog.rst",
        "docs/en/docs/release-notes.md",
    ]
    many = [f"docs/v{i}/changelog.md" for i in range(20)]
    assert len(candidates(many)) == 6


T0 = datetime(2025, 3, 1, tzinfo=UTC)


def span_of(prs: list[int | None]) -> list[Landed]:
    return [Landed(f"{i:040x}", T0 + timedelta(hours=i), pr) for i, pr in enumerate(prs)]


def test_a_repository_that_lists_its_changes_makes_unlisted_prs_not_release_worthy():
    # PRs 0..99 land in order; the notes list every third one from 10 to 70.
    listed = {n: (F if n % 2 else X) for n in range(10, 71, 3)}
    notes = parse(
        "".join(f"### {'Features' if c == F else 'Fixes'}\n- x (#{n})\n" for n, c in listed.items())
    )
    span = span_of([*range(100), None])
    key = notes_key(notes, span)
    assert key.listed == len(listed) >= MIN_LISTED and key.lists_changes
    by_pr = {c.pr: key.answers[c.sha] for c in span}
    assert by_pr[13] == "feature" and by_pr[10] == "fix" and by_pr[11] == UNLISTED
    # Before the first and after the last listed PR the notes say nothing (not written yet, or older).
    assert by_pr[5] is None and by_pr[80] is None and by_pr[None] is None
    assert (
        key.with_pr == 61
        and key.covered_from == span[10].committed_at
        and key.covered_to == span[70].committed_at
    )
    assert "21 of the 61 pull requests" in key.reason and "not release-worthy" in key.reason


def test_too_few_listed_prs_leave_unlisted_ones_unknown():
    notes = parse("### Features\n- a (#3)\n- b (#50)\n")
    key = notes_key(notes, span_of(list(range(100))))
    assert not key.lists_changes and key.listed == 2
    assert sorted(v for v in key.answers.values() if v) == ["feature", "feature"]
    assert "left out" in key.reason


def test_an_item_that_names_no_pull_request_lists_the_commit_it_links():
    # release-please's CHANGELOG.md: every item links its commit; those pushed without a pull request name
    # only that. A commit link beside a pull request is not read (it may be the change being fixed).
    span = span_of([101, None, 102, None, None])
    gh = "https://github.com/acme/sdk"

    def item(text: str, pr: int | None, i: int) -> str:
        ref = f" ([#{pr}]({gh}/issues/{pr}))" if pr else ""
        return f"* {text}{ref} ([{span[i].sha[:7]}]({gh}/commit/{span[i].sha}))\n"

    text = (
        f"## 1.41.0 (2024-08-16)\n\nFull Changelog: [v1.40.8...v1.41.0]({gh}/compare/v1.40.8...v1.41.0)\n\n"
        f"### Features\n\n{item('**client:** add uploads.upload_file helper', None, 1)}\n"
        f"### Bug Fixes\n\n{item('**json schema:** remove `None` defaults', 101, 0)}"
        f"* **types:** a regression ([#102]({gh}/issues/102)), from [{span[3].sha[:7]}]({gh}/commit/{span[3].sha})\n\n"
        f"### Chores\n\n{item('**internal:** update test snapshots', None, 4)}"
        f"* sync with [upstream](https://github.com/other/repo/commit/{span[2].sha})\n"
    )
    notes = parse(text)
    assert notes.prs == {101: X, 102: X}
    assert notes.commits == {span[1].sha: F, span[4].sha: INT}
    key = notes_key(notes, span)
    assert [key.answers[c.sha] for c in span] == ["fix", "feature", "fix", None, "internal"]
    assert key.listed == 4 and key.with_pr == 4
    # a link with an abbreviated sha lists the commit it abbreviates
    short = parse(f"### Features\n* add a helper ([abc1234]({gh}/commit/abc1234))\n")
    assert (
        short.commit_category("abc1234" + "0" * 33) == F
        and short.commit_category("abc1235" + "0" * 33) is None
    )


def test_an_item_that_names_no_pull_request_lists_the_commit_its_sha_names():
    # llama-cpp-python's CHANGELOG.md credits a direct push by its sha in plain text ("… by @abetlen in
    # 2a26de32…"); 21 of its 54 keyable items read so were left out. Another repository's commit
    # (`ggerganov/llama.cpp@ce8784b…`) is not this one's, and beside a pull request a sha is not read.
    shas = [hashlib.sha1(str(i).encode()).hexdigest() for i in range(5)]  # letters and digits, as real ones
    span = [replace(c, sha=s) for c, s in zip(span_of([1371, None, None, None, None]), shas, strict=True)]
    text = (
        "## [0.2.77]\n\n"
        f"- feat: Update llama.cpp to ggerganov/llama.cpp@{span[4].sha}\n"
        f"- fix: string value kv_overrides by @abetlen in {span[1].sha}\n"
        f"- fix: Fix speculative decoding by @abetlen in {span[2].sha[:7]} and {span[3].sha[:10]}\n"
        f"- feat: Add `llama-3` chat format by @andreabak in #1371, after {span[4].sha}\n"
    )
    notes = parse(text)
    assert notes.prs == {1371: F}
    assert notes.commits == {span[1].sha: X, span[2].sha[:7]: X, span[3].sha[:10]: X}
    key = notes_key(notes, span)
    assert [key.answers[c.sha] for c in span] == ["feature", "fix", "fix", "fix", None]
    # numbers, words, versions and anchors are no shas
    plain = parse("## 1.0\n\n- fix: defaced 20240506 v1.2.3abcdef #a1b2c3d4 550e8400-e29b-41d4 build\n")
    assert plain.commits == {}


def test_notes_that_list_none_of_the_span():
    key = notes_key(parse("### Fixes\n- a (#9999)\n"), span_of([1, 2, 3]))
    assert key.listed == 0 and set(key.answers.values()) == {None}
    assert key.reason == "the notes list none of the span's pull requests"


def test_hostile_lines_do_not_stall_the_parser():
    # Each of these made a backtracking pattern rescan the rest of the line from every start (seconds
    # to minutes per line); the parser's patterns are linear, and the real entry after them still counts.
    hostile = ["[" * 30000, "[a" * 30000, "[a](" * 30000, "# " + " " * 30000 + "x", "**" + " **" * 10000,
               ":pr:`" * 10000, "<!--" * 10000 + "-->"]  # fmt: skip
    text = "\n".join(hostile) + "\n### Fixes\n" + "\n".join(hostile[:3]) + "\n- the real one (#7)\n"
    assert parse(text).prs == {7: X}


def test_a_run_of_digits_too_long_for_a_pull_request_is_no_reference():
    huge = "9" * 5000
    text = f"## 1.0\n\n### Fixes\n\n- Fix a crash (#{huge})\n- Fix a leak (#12)\n- See acme/widgets#{huge}\n"
    assert parse(text, "acme/widgets").prs == {12: X}


def test_news_fragments_make_a_key_by_the_pull_request_that_adds_them():
    from analysis.evaluation.notes_fragments import fragment_notes

    span = [
        (11, ["src/a.py", "changes/11.feature.md"]),
        (12, ["src/b.py", "newsfragments/12.bugfix.rst", "newsfragments/12.removal.rst"]),  # the strongest
        (13, ["src/c.py"]),  # no fragment: not listed
        (14, ["docs/x.md", "changes/14.doc.md"]),
        # a release deleting the fragments touches them again: they stay their first commit's
        (15, ["CHANGELOG.md", "changes/11.feature.md"]),
        # a release compiling many fragments declares none of them
        (16, ["CHANGELOG.md", *(f"changes/{n}.feature.md" for n in range(90, 94))]),
        (None, ["changes/17.feature.md", "src/d.py"]),  # no pull request to key it by
    ]
    notes = fragment_notes(span)
    assert notes.prs == {11: F, 12: B, 14: DOC}


# A per-release docs page: sections divided by topic, whose subheadings name an area, not a kind.
DOCS_RELEASE_PAGE = """\
What's new in Widget 5.1
========================

Minor features
--------------

Tests
~~~~~

* The test runner supports a ``--screenshots`` option (#1).

Security
~~~~~~~~

* Tokens are compared in constant time (#2).

Backwards incompatible changes in 5.1
=====================================

Miscellaneous
-------------

* The admin's filter is rendered in a ``<nav>`` tag (#3).

Features deprecated in 5.1
==========================

Miscellaneous
-------------

* ``Reader.open()`` is deprecated (#4).
"""


def test_a_subheading_under_an_umbrella_kind_is_a_topic():
    assert parse(DOCS_RELEASE_PAGE).prs == {1: F, 2: F, 3: B, 4: D}


def test_a_generic_title_is_no_umbrella():
    # a file titled "Changes" divides by kind below it
    text = (
        "# Changes\n\n## 1.2\n\n### Fixed\n\n- Crash on empty input (#5)\n\n### Removed\n\n- `old()` (#6)\n"
    )
    assert parse(text).prs == {5: X, 6: B}


# Notes in the shape Pallets projects (and many others) write: a version heading, a release line, plain items
# led by a verb, issue and pull-request roles, lists of numbers in a role (rewritten, not quoted).
VERSION_ITEMS = """\
.. currentmodule:: widgets

Version 3.2.0
-------------

Unreleased

-   Drop support for Python 3.9. :pr:`501`
-   Add a ``timeout`` parameter to ``Client.open``. :issue:`480`
    :pr:`502`
-   Fix the reloader missing files in nested folders. :issue:`481`
-   Deprecate the ``legacy`` argument. :pr:`503, 504`
-   Make JSON the default output format. :pr:`505`
-   Improve performance of routing with many rules. :pr:`506`
-   Document how to run behind a proxy. :pr:`507`
-   Add tests for the CLI loader. :pr:`508`
-   ``Client.close`` is idempotent. :pr:`509`


Version 3.1.0
-------------

Released 2025-11-13

-   Remove previously deprecated code. :pr:`490`

    -   ``old_name`` is removed, use ``new_name``.

-   Support async handlers. :issue:`470`, :pr:`491`
-   Fixed a crash on empty input. :pr:`492`
"""


def test_plain_items_under_version_headings_take_their_leading_verb():
    notes = parse(VERSION_ITEMS)
    assert notes.prs == {
        501: B,  # a supported version dropped: a removal
        502: F,  # on the item's second line: the item's category
        503: D,
        504: D,  # a list of numbers in one role
        505: C,  # a changed default
        506: P,
        507: DOC,
        508: INT,  # what an "Add" adds decides
        509: OTH,  # led by no verb: no category
        490: B,
        491: F,
        492: X,
        # :issue: numbers are listed too: GitHub numbers issues and pull requests alike, and an issue landed
        # no commit, so it matches nothing in a span
        480: F,
        481: X,
        470: F,
    }
    assert "Released 2025-11-13" not in str(notes.unclassified_headings) and notes.unclassified_headings == ()


def test_an_item_keys_its_pull_request_whichever_line_names_it():
    # "Add … :issue:`480`" on the first line and ":pr:`502`" on the next: the commit landing #502 is keyed by
    # the item; a fix whose item names only its issue (#481, landed as #620) is not guessed at
    notes = parse(VERSION_ITEMS)
    span = span_of([502, 620, 491])
    key = notes_key(notes, span)
    assert [key.answers[c.sha] for c in span] == ["feature", None, "feature"]


@pytest.mark.parametrize(
    ("item", "category"),
    [
        ("Add a ``--json`` flag.", F),
        ("Adds a repr to ``Command``.", F),
        ("Allow passing a list of commands.", F),
        ("Introduce the ``Pool`` class.", F),
        ("New class attributes customise the core objects.", F),
        ("Newlines in help text are kept.", None),
        ("Fix the order of callbacks.", X),
        ("Fix a typo in the tutorial.", DOC),
        ("Drop support for Python 2.", B),
        ("Removed the unused ``mix`` parameter.", B),
        ("Deprecate ``before_first_request``.", D),
        ("Change the default port to 8080.", C),
        ("Make ``strict`` the default.", C),
        ("Make the warning clearer.", None),
        ("Speed up parsing of large files.", P),
        ("Faster startup.", P),
        ("Document the ``--env-file`` option.", DOC),
        ("Add documentation for ``ignore_unknown``.", DOC),
        ("Add tests for Windows paths.", INT),
        ("Enabled TP=3 with INT4 checkpoint for Weight Only Quantization", F),
        ("Enable chunked prefill by default.", C),
        ("Enable v1 metrics tests", INT),
        ("Enable `PERF` (Perflint) Ruff rules", INT),
        ("Disable the legacy loader by default.", C),
        ("Added user guide for running DeepSeek-R1 and multimodal models", DOC),
        ("Add a tutorial on custom loop factories.", DOC),
        ("Add guidance scale to the sampler.", F),  # a word that starts like "guide" is not one
        ("``Client.close`` is idempotent.", None),
        ("Add the flag by @ann in https://github.com/acme/tool/pull/41", None),  # a generated title
    ],
)
def test_an_items_leading_verb(item, category):
    from analysis.release_verbs import verb_category

    assert verb_category(item) == category


def test_notes_with_category_headings_do_not_read_verbs():
    # the same verb-led items, but most of the file stands under category headings: read as before
    text = (
        "## 2.0\n\n### Added\n\n- Add X (#1)\n- Add Y (#2)\n- Z works (#3)\n\n### Fixed\n\n- Fix W (#4)\n\n"
        "## 1.0\n\n- Add V (#5)\n- Fix U (#6)\n"
    )
    assert parse(text).prs == {1: F, 2: F, 3: F, 4: X, 5: OTH, 6: OTH}


def test_a_flat_list_of_generated_titles_is_not_read_by_verb():
    text = "".join(f"* Add thing {n} by @ann in https://github.com/acme/tool/pull/{n}\n" for n in range(1, 6))
    assert set(parse("## What's Changed\n" + text).prs.values()) == {OTH}


# Fragments whose type is in their text (rewritten shapes of reno notes, changesets and `.. change::` blocks).
RENO_UPGRADE = "---\nupgrade:\n  - |\n    The ``ZoneFilter`` was deprecated and is now removed.\n"
RENO_FEATURE = "---\nfeatures:\n  - |\n    A new ``[scheduler] spread`` option.\n"
CHANGESET_MINOR = '---\n"@acme/cli": minor\n---\n\nAllow comma-separated names in `--only`.\n'
CHANGESET_PATCH_NAMED = "---\n'@acme/core': patch\n---\n\nFix the retry loop (#31).\n"
CHANGE_BLOCK = ".. change::\n    :tags: bug, orm\n    :tickets: 32, 9001\n\n    Fixed a leak on close.\n"
CHANGE_BLOCK_ISSUE = (
    ".. change::\n    :tags: usecase, postgresql\n    :tickets: 9002\n\n    Added host lists.\n"
)


def test_fragments_typed_by_their_text_key_the_pull_request_they_name_else_the_one_adding_them():
    from analysis.evaluation.notes_fragments import fragment_notes, fragments_to_read

    span = [
        ("a", 21, ["nova/filters.py", "releasenotes/notes/zone-filter-removal-587f7337.yaml"]),
        ("b", 22, ["nova/scheduler.py", "releasenotes/notes/spread-option-0a1b2c3d.yaml"]),
        ("c", 23, ["packages/cli/src/args.ts", ".changeset/brave-lions-sing.md"]),
        # written by a follow-up for the pull request it names, which landed in the span
        ("d", 24, [".changeset/quiet-owls-nod.md", "packages/core/src/retry.ts"]),
        ("e", 31, ["packages/core/src/retry.ts"]),
        # `:tickets:` names #32 (a landed pull request) and #9001 (an issue: matches nothing)
        ("f", 25, ["lib/orm/session.py", "doc/build/changelog/unreleased_20/9001.rst"]),
        ("g", 32, ["lib/orm/session.py"]),
        # an issue's number only: the pull request adding the fragment
        ("h", 26, ["lib/dialects/pg.py", "doc/build/changelog/unreleased_20/9002.rst"]),
        ("i", 27, ["src/x.py", "changes/27.feature.md"]),  # typed by its name: not read
    ]
    texts = {
        "releasenotes/notes/zone-filter-removal-587f7337.yaml": RENO_UPGRADE,
        "releasenotes/notes/spread-option-0a1b2c3d.yaml": RENO_FEATURE,
        ".changeset/brave-lions-sing.md": CHANGESET_MINOR,
        ".changeset/quiet-owls-nod.md": CHANGESET_PATCH_NAMED,
        "doc/build/changelog/unreleased_20/9001.rst": CHANGE_BLOCK,
        "doc/build/changelog/unreleased_20/9002.rst": CHANGE_BLOCK_ISSUE,
    }
    wanted = fragments_to_read((sha, paths) for sha, _, paths in span)
    assert wanted == [(sha, p) for sha, _, paths in span for p in paths if p in texts]
    notes = fragment_notes([(pr, paths) for _, pr, paths in span], texts)
    assert notes.prs == {21: B, 22: F, 23: F, 31: X, 32: X, 26: F, 27: F}
    # without their texts only the name-typed fragment says anything
    assert fragment_notes([(pr, paths) for _, pr, paths in span]).prs == {27: F}


def test_a_compiled_notes_file_in_a_fragment_folder_is_no_fragment():
    from analysis.evaluation.notes_fragments import fragment_notes, fragments_to_read

    span = [("a", 40, ["lib/x.py", "doc/build/changelog/changelog_20.rst"])]
    assert fragments_to_read((sha, paths) for sha, _, paths in span) == []
    assert (
        fragment_notes([(40, span[0][2])], {"doc/build/changelog/changelog_20.rst": CHANGE_BLOCK}).prs == {}
    )


# A plugin's notes (the shape of an inference-engine plugin's release page): deprecations and breaking changes
# under one heading, each item saying which it is; topics as bold lines under "Highlights".
MIXED_DEPRECATION_AND_BREAKING = """\
# Release Notes
## v2.0.0 - 2026.01.10

### Highlights

**Model Support**
- **Whisper**: Added support for cross-attention and Whisper models. [#21](https://github.com/o/plugin/pull/21)

### Hardware and Operator Support

- **Custom Operators**: l2norm kernel [#22](https://github.com/o/plugin/pull/22)

### Deprecation & Breaking Changes

- **Old Scheduler** has been dropped. [#11](https://github.com/o/plugin/pull/11)
- `PLUGIN_ENABLE_X` is disabled for float weights. Set it to 2 to keep it. [#12](https://github.com/o/plugin/pull/12)
- `dump_config` is renamed to `dump_config_path`. [#13](https://github.com/o/plugin/pull/13)
- **--task parameter** for embedding models is deprecated. [#14](https://github.com/o/plugin/pull/14)
- **Offload connector** is deprecated. We'll remove it in the next release. [#15](https://github.com/o/plugin/pull/15)
- Removed the deprecated `legacy_mode` option. [#16](https://github.com/o/plugin/pull/16)
"""


def test_a_heading_of_deprecations_and_breaking_changes_lets_each_item_say_which():
    prs = parse(MIXED_DEPRECATION_AND_BREAKING).prs
    assert {pr: prs[pr] for pr in (11, 12, 13, 16)} == {11: B, 12: B, 13: B, 16: B}
    assert (prs[14], prs[15]) == (D, D)


def test_support_headings_list_new_capabilities():
    prs = parse(MIXED_DEPRECATION_AND_BREAKING).prs
    assert (prs[21], prs[22]) == (F, F)


def test_removed_deprecated_names_under_a_breaking_heading_stay_breaking():
    text = "## 3.0\n\n### Breaking changes\n\n- `old()` (deprecated since 2.1) is gone (#7)\n"
    assert parse(text).prs == {7: B}


# A binding library's notes (its 3.0 release): sections are plain lines ending with a colon, no heading markup.
# Read as one block of unclassified items, they were classified by each item's leading verb ("Fix Buffer type
# hint" under "New Features / fixes (typing)" a fix, "Support and test iOS in CI" a feature, 21 items "other").
COLON_NOTES = """# Changelog

## Version 3.0.0 (July 10, 2025)

Pybind-style 3.0 includes an ABI bump. Please check our upgrade guide:

New Features:

- Support `kit::numpy_scalar<>` for NumPy types.
  [#5726](https://github.com/acme/kit/pull/5726)

New Features / fixes (typing):

- Fix Buffer type hint.
  [#5662](https://github.com/acme/kit/pull/5662)

Removals:

- Remove `make_simple_namespace` (added in 2.8.0, deprecated in 2.8.1).
  [#5597](https://github.com/acme/kit/pull/5597)

Bug fixes (free-threading):
- Fix data race when accessing a shared static variable. [#5494](https://github.com/acme/kit/pull/5494)

New and removed platforms:

- Support Python 3.14 (beta 1+).
  [#5646](https://github.com/acme/kit/pull/5646)
- Support for PyPy 3.8 and 3.9 was dropped.
  [#5578](https://github.com/acme/kit/pull/5578)

Internals:

- Use CPython macros to construct the version hex.
  [#5683](https://github.com/acme/kit/pull/5683)

Tests:

- Run pytest under Python devmode.
  [#5715](https://github.com/acme/kit/pull/5715)
"""


def test_plain_lines_ending_with_a_colon_are_section_headings():
    assert parse(COLON_NOTES, "acme/kit").prs == {
        5726: F,
        5662: F,  # the section's kind, not the item's verb
        5597: B,
        5494: X,
        5646: F,  # "New and removed": each item says which it is
        5578: B,
        5683: INT,
        5715: INT,
    }


def test_a_colon_line_that_ends_a_paragraph_is_no_heading():
    # A release's introduction ends "…new features, performance\nimprovements and bug fixes. You can install
    # it as follows:": read as a heading of features, it stood over every section below and keyed the crash
    # fixes features.
    text = (
        "## Tool 1.20\n\nThis release includes new features, performance\n"
        "improvements and bug fixes. You can install it as follows:\n\n    pip install -U tool\n\n"
        "### Drop Support for Python 3.9\n\nTool no longer runs on 3.9.\n\n"
        "Contributed by Ann (PR [5](https://github.com/acme/kit/pull/5)).\n\n"
        "### Fixes to Crashes\n\n- Fix crash on star import (Ann, PR [7](https://github.com/acme/kit/pull/7))\n\n"
        "### Improvements to Redefinitions\n\n- Allow redefining arguments (Bo, PR [8](https://github.com/acme/kit/pull/8))\n"
    )
    assert parse(text, "acme/kit").prs == {5: B, 7: X, 8: F}


def test_a_fix_under_a_heading_of_improvements_to_a_topic_is_a_fix():
    # "Improvements to X" gathers fixes and additions; a heading that names features decides for its items
    text = (
        "## 2.0\n\n### Improvements to Redefinitions\n\n"
        "- Allow redefining arguments (Ann, PR [1](https://github.com/acme/kit/pull/1))\n"
        "- Fix loop convergence with redefinitions (Ann, PR [2](https://github.com/acme/kit/pull/2))\n\n"
        "### Incremental Checking Improvements\n\n"
        "- Fix staleness on changed options (Bo, PR [3](https://github.com/acme/kit/pull/3))\n\n"
        "### New Features and Improvements\n\n- Fix-up: a new `--x` flag (PR [4](https://github.com/acme/kit/pull/4))\n"
        "- Fix the CLI to accept `-y` (PR [5](https://github.com/acme/kit/pull/5))\n"
    )
    assert parse(text, "acme/kit").prs == {1: F, 2: X, 3: X, 4: F, 5: F}


def test_a_colon_line_that_names_no_category_or_runs_on_into_prose_is_no_heading():
    # "Usage:" names no kind; "Fixes for the release:" continued by a line of prose is a sentence
    text = (
        "## 1.2\n\nFeatures:\n\n- New `run` command (#1)\n\nUsage:\n\n- Pass `--fast` (#2)\n\n"
        "## 1.1\n\nFixes for the release:\nwere all backported.\n\n- Old thing (#3)\n"
    )
    assert parse(text).prs == {1: F, 2: F, 3: OTH}


# A web framework's compiled changelog: Sphinx `.. change::` blocks, each with its kind in a `:type:` field and
# a `:breaking:` flag (none of the 41 pull requests of two months were read: the fields are no reST roles).
BLOCK_NOTES = """:orphan:

2.x Changelog
=============

.. changelog:: 2.7.0
    :date: 2024-03-10

    .. change:: Remove deprecated ``contrib.jwt`` module
        :type: feature
        :breaking:
        :pr: 4333
        :issue: 4304

        Remove the deprecated module. Code still using it should switch.

    .. change:: Allow reusable ``Router`` instances
        :type: feature
        :pr: 3103
        :issue: 3012

        It was not possible to re-attach a router; a regression from #2751 made it worse (see PR #2960).

    .. change:: missing cors headers in response
        :type: bugfix
        :pr: 3179, 3180

        Set CORS Middleware headers as per spec.

    .. change:: Improve performance of threaded synchronous execution
        :type: misc
        :pr: 2937

.. changelog:: 2.6.0
    :date: 2024/02/06

    .. change:: Add structlog plugin
        :type: feature
        :pr: 2943
"""


def test_change_blocks_key_their_pull_requests_by_their_fields():
    notes = parse(BLOCK_NOTES)
    assert notes.prs == {4333: B, 4304: B, 3103: F, 3012: F, 3179: X, 3180: X, 2937: OTH, 2943: F}
    assert 2751 not in notes.prs and 2960 not in notes.prs  # a block's prose names other changes


def test_removal_fragments_are_read_for_whether_they_deprecate_or_remove():
    # towncrier's default `removal` type is titled "Deprecations and Removals": the text says which
    from analysis.evaluation.notes_fragments import fragment_notes, fragments_to_read

    span = [
        ("a", 41, ["aiohttp/streams.py", "CHANGES/41.removal"]),
        ("b", 42, ["aiohttp/connector.py", "CHANGES/42.removal"]),
        ("c", 43, ["aiohttp/client.py", "CHANGES/43.feature"]),
    ]
    texts = {
        "CHANGES/41.removal": "Deprecate ``stream.unread_data()``\n",
        "CHANGES/42.removal": "Drop dead ``Connection.detach()`` and ``Connection.writer``.\n",
    }
    wanted = fragments_to_read((sha, paths) for sha, _, paths in span)
    assert wanted == [("a", "CHANGES/41.removal"), ("b", "CHANGES/42.removal")]
    notes = fragment_notes([(pr, paths) for _, pr, paths in span], texts)
    assert notes.prs == {41: D, 42: B, 43: F}
    # unread, the type word alone names the stronger kind
    assert fragment_notes([(pr, paths) for _, pr, paths in span]).prs == {41: B, 42: B, 43: F}


# A compiler's notes: "Other changes" holds the support withdrawn and the deprecations (no section of their own).
OTHER_CHANGES = """3.3.0a1 (2026-06-24)
====================

Other changes
-------------

* Support for Python 3.8 has been removed.
  (Github issue :issue:`7271`)

* Coroutines no longer provide the legacy ``_is_coroutine`` property.
  (Github issue :issue:`7709`)

* The ``old_flag`` option is deprecated; use ``new_flag``.
  (Github issue :issue:`7710`)

* ``Shadow.pyi`` has been merged into ``Shadow.py``.
  (Github issue :issue:`7376`)

* Remove the runtime warning for experimental features.
  (Github issue :issue:`7377`)

Bugs fixed
----------

* ``x()`` no longer crashes on empty input.
  (Github issue :issue:`7400`)
"""


def test_an_item_under_other_changes_says_what_was_taken_away_or_deprecated():
    prs = parse(OTHER_CHANGES).prs
    assert {pr: prs[pr] for pr in (7271, 7709, 7710)} == {7271: B, 7709: B, 7710: D}
    # a merge, a warning removed: changes like any other
    assert (prs[7376], prs[7377]) == (C, C)
    assert prs[7400] == X  # a section of one kind decides
