"""Follow-up links mined from commit text: reverts and fix-forwards, title and body forms."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from analysis.followups import FollowUpKind, PastCommit, find_links, references
from analysis.heuristic.title import is_revert_title

T0 = datetime(2025, 9, 1, 12, tzinfo=UTC)


def past(n: int, message: str, files: tuple[tuple[str, int], ...] = ()) -> PastCommit:
    return PastCommit(f"{n:040x}", T0 + timedelta(hours=n), message, files)


def links_of(*commits: PastCommit) -> set[tuple[str, str, str]]:
    return {(link.original, link.follow_up, link.kind.value) for link in find_links(list(commits))}


ORIGINAL = past(1, "[Core] Faster scheduler (#100)")


@pytest.mark.parametrize(
    "message",
    [
        'Revert "[Core] Faster scheduler (#100)" (#105)',
        'Revert "[Core] Faster scheduler" (#105)',
        '[Frontend][Core] Revert "[Core] Faster scheduler (#100)" (#105)',
        "[Bugfix] Revert #100 (#105)",
        "Reverts #100",
        "Revert PR #100: it broke CI",
        "Partial revert of #100 (#105)",
        "Undo the scheduler change\n\nThis reverts commit " + ORIGINAL.sha[:12] + ".",
        "Roll back\n\nReverts acme/widgets#100",
        "Roll back\n\nReverts https://github.com/acme/widgets/pull/100",
        'Revert "[Core] Faster sched… (#105)',  # GitHub cut the long title inside the quotes
    ],
)
def test_revert_forms_link_to_the_original(message):
    assert links_of(ORIGINAL, past(2, message)) == {(ORIGINAL.sha, f"{2:040x}", "revert")}


@pytest.mark.parametrize(
    "message",
    [
        "[Bugfix] Fix DeepGEMM after #100 (#106)",
        "Fix spec decode memory regression from #100",
        "[ROCm] Fix build caused by #100",
        "Fix wrong selection introduced by #100",
        "Follow-up to #100: handle empty batches",
        "Fix #100 (#106)",
        "Tidy up\n\nThe scheduler was broken by #100; this restores the old order.",
        "Tidy up\n\nRegression introduced in https://github.com/acme/widgets/pull/100 is fixed here.",
    ],
)
def test_fix_forward_forms_link_to_the_original(message):
    assert links_of(ORIGINAL, past(2, message)) == {(ORIGINAL.sha, f"{2:040x}", "fix")}


def test_a_reference_to_an_issue_links_nothing():
    # #4242 is not a pull request that landed on the branch: an issue number, or another repository's.
    assert links_of(ORIGINAL, past(2, "[Bugfix] Fix crash on empty input (#4242)\n\nFixes #4242")) == set()
    assert links_of(ORIGINAL, past(2, "Fix the thing\n\nSee other/repo#100 for context")) == set()


def test_a_body_that_only_mentions_a_pr_links_nothing():
    assert links_of(ORIGINAL, past(2, "Add docs\n\nLike in #100, we use a table.")) == set()


def test_a_revert_of_a_revert_links_to_the_revert():
    revert = past(2, 'Revert "[Core] Faster scheduler (#100)" (#105)')
    again = past(3, 'Revert "Revert "[Core] Faster scheduler (#100)" (#105)" (#107)')
    assert links_of(ORIGINAL, revert, again) == {
        (ORIGINAL.sha, revert.sha, "revert"),
        (revert.sha, again.sha, "revert"),
    }


def test_a_reland_names_its_original_without_following_it_up():
    assert links_of(ORIGINAL, past(2, "[Core] Re-land faster scheduler from #100 (#108)")) == set()


def test_references_resolve_only_to_earlier_commits():
    # A follow-up never links to a commit that landed after it (or to itself).
    fix = past(1, "Fix regression from #200 (#201)")
    later = past(2, "[Core] Something (#200)")
    assert links_of(fix, later) == set()
    assert links_of(past(1, "Revert #5 (#5)")) == set()


def test_a_revert_beats_a_fix_for_the_same_pair():
    both = past(2, 'Revert "[Core] Faster scheduler (#100)" (#105)\n\nIt broke CI, regression from #100.')
    assert links_of(ORIGINAL, both) == {(ORIGINAL.sha, both.sha, "revert")}


def test_evidence_is_the_words_that_say_so():
    fix = past(2, "Refactor\n\nMisc cleanups.\nAlso fixes the crash introduced by #100 in the pager.")
    (link,) = find_links([ORIGINAL, fix])
    assert link.kind == FollowUpKind.FIX
    assert link.evidence == "Also fixes the crash introduced by #100 in the pager."
    assert (link.original_at, link.follow_up_at) == (ORIGINAL.committed_at, fix.committed_at)


def test_references_are_read_from_title_and_body_once_each():
    refs = references('Revert "X (#1)" (#9)\n\nReverts #1\nThis reverts commit abcdef1234.')
    assert [(r.kind, r.pr, r.sha) for r in refs] == [
        (FollowUpKind.REVERT, 1, None),
        (FollowUpKind.REVERT, None, "abcdef1234"),
    ]


@pytest.mark.parametrize(
    ("title", "revert"),
    [
        ('[Frontend][Core] Revert "x"', True),
        ("[Bugfix] Revert custom mask", True),
        ("Reverting re-direction", True),
        ("Partially revert the cache change", True),
        ("Make revert safer", False),
        ("[Revertible] Add switch", False),
    ],
)
def test_revert_titles_are_recognised_behind_tags(title, revert):
    assert is_revert_title(title) is revert
