"""A commit's own release-notes entry is what its author declares it to be (issue 16): breaking → high,
a feature, change, deprecation or speed-up → at least medium, a fix, docs or internal entry → nothing added."""

from __future__ import annotations

from analysis.heuristic import analyze, rank
from analysis.models import Importance, SurfaceChange, SurfaceKind
from tests.analysis.heuristic.test_heuristic import fc, make
from tests.analysis.heuristic.test_judgment import hunk

LOW, MEDIUM, HIGH = Importance.LOW, Importance.MEDIUM, Importance.HIGH

# A small change to code users run that no rule finds anything in: its size alone says low.
CODE = fc(
    "src/widget/engine.py", 2, 2, hunk(["    limit = 10", "    step = 1"], ["    limit = 12", "    step = 2"])
)


def changelog(section: str, item: str) -> str:
    return (
        "@@ -7,6 +7,7 @@ The format follows Keep a Changelog.\n"
        " ## [Unreleased]\n"
        " \n"
        f" ### {section}\n"
        f"+- {item}\n"
        " \n"
        " ## [2.3.0] - 2026-01-05\n"
    )


def with_entry(section: str, item: str, title: str = "Rework the engine loop (#77)"):
    notes = fc("CHANGELOG.md", 1, 0, changelog(section, item))
    return make(title, CODE, notes)


def test_without_an_entry_the_change_is_low():
    assert rank(make("Rework the engine loop (#77)", CODE), "en")[0] == LOW


def test_a_breaking_entry_is_high_and_named_in_the_reason_compatibility_and_risks():
    commit = with_entry("Removed", "The `Engine.legacy_step` method; use `Engine.step` (#77)")
    importance, reason = rank(commit, "en")
    assert importance == HIGH
    assert reason.startswith(
        "impact (high): its release-notes entry: `breaking: The 'Engine.legacy_step' method; use 'Engine.step' (#77)`"
    ), reason
    assert reason.endswith("decided by impact")
    a = analyze(commit, "en")
    assert "its release-notes entry declares a breaking change" in a.insights["compatibility"]
    assert any(r.startswith("Its release-notes entry declares it breaking") for r in a.risks)
    zh = analyze(commit, "zh")
    assert zh.importance_reason.startswith("影响（高）：其发布说明条目：")
    # the same by a towncrier fragment added with the code
    fragment = fc("changes/77.removal.md", 1, 0, "@@ -0,0 +1 @@\n+Removed `Engine.legacy_step`.\n", "added")
    importance, reason = rank(make("Rework the engine loop (#77)", CODE, fragment), "en")
    assert (
        importance == HIGH and "its release-notes entry: `breaking: Removed 'Engine.legacy_step'.`" in reason
    )


def test_a_feature_change_deprecation_or_performance_entry_is_at_least_medium():
    for section, category in (
        ("Added", "feature"),
        ("Changed", "change"),
        ("Deprecated", "deprecation"),
        ("Performance", "performance"),
    ):
        importance, reason = rank(with_entry(section, "`Engine.run` takes a `limit` (#77)"), "en")
        assert importance == MEDIUM, section
        assert f"its release-notes entry: `{category}: 'Engine.run' takes a 'limit' (#77)`" in reason, reason


def test_a_fix_docs_or_internal_entry_adds_nothing_and_lowers_nothing():
    for section in ("Fixed", "Documentation", "Internal"):
        importance, reason = rank(with_entry(section, "Loop ends on empty input (#77)"), "en")
        assert importance == LOW and "release-notes entry" not in reason, section
    # a breaking fact the code states stands beside a fix entry
    removed = SurfaceChange(SurfaceKind.REMOVED, "widget.engine.legacy_step", "src/widget/engine.py")
    commit = make("Fix the loop (#77)", CODE, fc("CHANGELOG.md", 1, 0, changelog("Fixed", "Loop (#77)")))
    commit = make(commit.message, *commit.files, surface=(removed,))
    assert rank(commit, "en")[0] == HIGH


def test_an_entry_without_code_users_run_changes_nothing():
    # a docs-only commit that adds the entry for an earlier change describes that change, not itself
    notes = fc("CHANGELOG.md", 1, 0, changelog("Removed", "The `Engine.legacy_step` method (#70)"))
    assert rank(make("Add a changelog entry for #70", notes, fc("docs/engine.md", 3, 1)), "en")[0] == LOW
    tests_only = fc("tests/test_engine.py", 5, 0)
    assert rank(make("Test the engine (#78)", tests_only, notes), "en")[0] == LOW


def test_a_release_moving_entries_declares_nothing():
    patch = (
        "@@ -7,8 +7,10 @@\n"
        " ## [Unreleased]\n"
        " \n"
        "+## [2.4.0] - 2026-01-29\n"
        "+\n"
        " ### Removed\n"
        "-- The `Engine.legacy_step` method (#70)\n"
        "+- The `Engine.legacy_step` method (#70)\n"
    )
    version = fc("src/widget/__init__.py", 1, 1, hunk(['__version__ = "2.3.0"'], ['__version__ = "2.4.0"']))
    assert rank(make("Release 2.4.0", version, fc("CHANGELOG.md", 3, 1, patch)), "en")[0] == LOW


def test_a_code_finding_of_weight_speaks_for_itself():
    # a feature the code states: the entry's claim is not repeated beside it
    added = SurfaceChange(SurfaceKind.ADDED, "widget.Engine.run_batch", "src/widget/engine.py")
    commit = with_entry("Added", "`Engine.run_batch` (#77)")
    commit = make(commit.message, *commit.files, surface=(added,))
    importance, reason = rank(commit, "en")
    assert importance == MEDIUM and "release-notes entry" not in reason and "Engine.run_batch" in reason


def test_a_release_that_writes_the_notes_of_other_pull_requests_declares_nothing():
    # "Prepare release 2.11.0b2 (#11569)": the version bumped, and HISTORY.md items for other pull requests
    patch = (
        "@@ -1,3 +1,8 @@\n"
        " ## Unreleased\n"
        "+\n"
        "+## v2.4.0b2 (2026-01-29)\n"
        "+\n"
        "+### New Features\n"
        "+- Add experimental support for free threading by @ada in [#70](https://github.com/acme/widget/pull/70)\n"
    )
    version = fc("src/widget/version.py", 1, 1, hunk(["VERSION = '2.4.0b1'"], ["VERSION = '2.4.0b2'"]))
    commit = make("Prepare release 2.4.0b2 (#71)", version, fc("HISTORY.md", 5, 0, patch))
    assert rank(commit, "en")[0] == LOW


def test_the_entrys_section_sets_the_change_type_where_the_title_declares_none():
    from analysis.heuristic.change_type import classify_change
    from analysis.models import ChangeType

    assert classify_change(make("Rework the engine loop (#77)", CODE)) != ChangeType.BUGFIX
    assert classify_change(with_entry("Fixed", "A crash when the loop is empty (#77)")) == ChangeType.BUGFIX
    assert classify_change(with_entry("Added", "`Engine.step(n)` runs n steps (#77)")) == ChangeType.FEATURE
    assert (
        classify_change(with_entry("Performance", "The loop no longer copies (#77)"))
        == ChangeType.PERFORMANCE
    )
    # a breaking or changed entry may be a feature, a fix or a refactor: the title's words decide
    assert classify_change(with_entry("Removed", "`Engine.legacy_step` (#77)")) == classify_change(
        make("Rework the engine loop (#77)", CODE)
    )
    # what the title declares stays the author's first word on it
    tagged = with_entry("Added", "`Engine.step(n)` (#77)", title="[Perf] Rework the engine loop (#77)")
    assert classify_change(tagged) == ChangeType.PERFORMANCE
