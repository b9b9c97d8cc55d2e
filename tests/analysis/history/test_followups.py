"""Follow-up links mined from commit text: reverts and fix-forwards, title and body forms."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from analysis.history.followups import FollowUpKind, PastCommit, find_links, references
from analysis.titles import is_revert_title

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
        "Automated rollback of commit " + ORIGINAL.sha + ".\n\nPiperOrigin-RevId: 712345678",
        "[Revert] [Core] Faster scheduler (#105)",  # the tag says it
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
        "Follow-up to #100: fix the crash on empty batches",
        "Fix #100 (#106)",
        "Tidy up\n\nThe scheduler was broken by #100; this restores the old order.",
        "Tidy up\n\nRegression introduced in https://github.com/acme/widgets/pull/100 is fixed here.",
        # the kernel-style trailer, with an abbreviated sha (all digits here, as one in 280 are)
        "sched: keep the order on empty batches\n\nFixes: "
        + ORIGINAL.sha[:12]
        + ' ("[Core] Faster scheduler")',
    ],
)
def test_fix_forward_forms_link_to_the_original(message):
    assert links_of(ORIGINAL, past(2, message)) == {(ORIGINAL.sha, f"{2:040x}", "fix")}


# A compiler's history names what broke it by an abbreviated sha, with no "commit" or "#" before it.
HASHED = PastCommit("3f9a1c2b7d4e" + "0" * 28, T0, "[InstCombine] Fold selects of casts", ())


@pytest.mark.parametrize(
    "message",
    [
        "[InstCombine] Fix the build after 3f9a1c2b7d4e",
        "Fix -Wunused-variable warning after 3f9a1c2",
        "Silence a warning\n\nBroken since 3f9a1c2b7d4e.",
    ],
)
def test_a_fix_forward_may_name_its_original_by_a_bare_sha(message):
    fix = past(2, message)
    assert links_of(HASHED, fix) == {(HASHED.sha, fix.sha, "fix")}


def test_a_backed_out_changeset_reverts_it():
    backout = past(2, "Backed out changeset 3f9a1c2b7d4e for causing build bustages")
    assert links_of(HASHED, backout) == {(HASHED.sha, backout.sha, "revert")}


def test_a_bare_sha_that_is_only_mentioned_links_nothing():
    assert links_of(HASHED, past(2, "Update the submodule to 3f9a1c2b7d4e")) == set()


# The forms below come from the misjudged links the issue lists (held-out histories); neither bundle
# has a real commit of these shapes, so the labelled set (test_followup_labels.py) cannot cover them.
SHA_ORIGINAL = PastCommit("3f9a1c2b7d" + "0" * 30, T0, "[Core] Faster scheduler (#100)")


@pytest.mark.parametrize(
    "message",
    [
        "Undo the scheduler change\n\nDone with `git revert 3f9a1c2b7d`.",
        "[Core] Partial revert of 3f9a1c2b7d (#105)",
        "Keep the old queue\n\nThis is a partial revert of 3f9a1c2b7d: the queue goes back, the rest stays.",
        "Revert https://github.com/acme/widgets/commit/3f9a1c2b7d0 (#105)",
        "revert: faster scheduler\n\nRefs: 3f9a1c2b7d",
    ],
)
def test_revert_forms_naming_a_sha_link_to_it(message):
    assert links_of(SHA_ORIGINAL, past(2, message)) == {(SHA_ORIGINAL.sha, f"{2:040x}", "revert")}


@pytest.mark.parametrize(
    "message",
    [
        "Revert pr100 (#105)",
        "[TPU] Rollback PR-100. (#105)",
        "Back out PR 100",
        '⏪️ Revert "[Core] Faster scheduler (#100)" (#105)',  # gitmoji titles (a web framework's convention)
        ":rewind: Revert #100",
        'Revert "[Core] Faster scheduler (#105)',  # cut without an ellipsis: the quote is never closed
        "Revert #100\n\nIt broke the nightly build; see #4242 for the report.",
        "[Bugfix] Restore the default timeout removed in #100 (#105)",  # takes part of #100 back out
    ],
)
def test_more_revert_title_forms(message):
    assert links_of(ORIGINAL, past(2, message)) == {(ORIGINAL.sha, f"{2:040x}", "revert")}


def test_a_revert_of_several_prs_links_each():
    other = past(2, "[Docs] Move the guide (#101)")
    revert = past(3, "Revert PRs 100 and 101 (#105)")
    assert links_of(ORIGINAL, other, revert) == {
        (ORIGINAL.sha, revert.sha, "revert"),
        (other.sha, revert.sha, "revert"),
    }


def test_a_quoted_title_describes_the_pr_a_revert_names_first():
    # "(#7)" inside the quotes is part of #100's title (an RFC number), not a second reverted PR.
    seven = past(0, "[RFC] Scheduler overhaul (#7)")
    original = past(1, "[Core] Scheduler overhaul (#7): faster queue (#100)")
    revert = past(2, 'Revert #100 "[Core] Scheduler overhaul (#7): faster queue" (#105)')
    assert links_of(seven, original, revert) == {(original.sha, revert.sha, "revert")}


SQUASH_INTERNAL = """[Core] Faster queue (#120)

* [Core] Faster queue

* Revert "[Core] Faster queue"

This reverts commit 9e8d7c6b5a.

* [Core] Faster queue, without the lock"""


def test_a_squash_body_reverting_its_own_commit_reverts_nothing():
    # The PR reverted one of its own commits; an earlier, landed commit has the same title.
    landed = past(1, "[Core] Faster queue (#90)")
    assert links_of(landed, past(2, SQUASH_INTERNAL)) == set()


def test_a_squash_body_reverting_a_landed_commit_then_reapplying_it_reverts_nothing():
    message = (
        "[CI] Unblock the GPU job (#120)\n\n"
        '* Revert "[Core] Faster scheduler (#100)"\n\n'
        "* Fix the GPU job\n\n"
        '* Reapply "[Core] Faster scheduler (#100)"'
    )
    assert links_of(ORIGINAL, past(2, message)) == set()


def test_a_squash_body_reverting_a_landed_commit_reverts_it():
    message = (
        '[Core] Queue rewrite (#120)\n\n* Revert "[Core] Faster scheduler (#100)"\n\n* Rewrite the queue'
    )
    assert links_of(ORIGINAL, past(2, message)) == {(ORIGINAL.sha, f"{2:040x}", "revert")}


@pytest.mark.parametrize(
    "message",
    [
        "Fix pager crash (#106)\n\nPR #100 introduced a bug in the pager's bounds check.",
        "[CI] Fix test_sched (#106)\n\n#100 (Faster scheduler) caused this test failure.",
        "[Bugfix] Fix regression on pooling models from PR#100 (#106)",
        "Fix the queue test\n\nThe test has been failing after commit 0000000000000000000000000000000000000001.",
        "Guard empty input (#106)\n\nThe server crashes on empty input since #100.",
        "Fix pager (#106)\n\nFixes a crash in the pager. Introduced in #100.",
        "[Misc] Fix nits from #100",
        "[CI/Build] Fix typo in #100",
        "Address review comments on #100",
        "[FIX] Patch run.sh (fix for #100)",
    ],
)
def test_more_fix_forward_forms(message):
    assert links_of(ORIGINAL, past(2, message)) == {(ORIGINAL.sha, f"{2:040x}", "fix")}


def test_between_two_prs_the_one_that_landed_last_is_fixed():
    later = past(3, "[Multimodal] Drop legacy fields (#101)")
    fix = past(4, "[Bugfix] Fix incompatibility between #100 and #101 (#106)")
    assert links_of(ORIGINAL, later, fix) == {(later.sha, fix.sha, "fix")}


def test_in_a_paragraph_listing_thousands_of_prs_the_fixed_one_is_read_by_the_words_next_to_it():
    listed = ", ".join(f"#{n}" for n in range(1000, 6000))
    refs = references(f"Release 2.0\n\nIncludes {listed}, and fixes the crash from #100.")
    assert [(r.kind.value, r.pr) for r in refs] == [("fix", 100)]


def test_a_word_cut_where_the_look_back_starts_is_not_read_as_a_fix_word():
    # The look back (_NEAR characters) starts inside "prefix": its "fix" is no fix word.
    from analysis.history.followups import _NEAR

    tail = "fix" + " ok" * ((_NEAR - len("fix after")) // 3) + " after"
    tail = tail[:3] + " " * (_NEAR - len(tail)) + tail[3:]
    assert len(tail) == _NEAR
    assert references(f"Tidy up\n\nAdd a pre{tail} #100") == []
    assert [r.pr for r in references(f"Tidy up\n\nAdd a {tail} #100")] == [100]


def test_a_squash_body_listing_thousands_of_reverts_keeps_the_ones_it_does_not_reapply():
    listed = "\n".join(f'* Revert "Change {n}"' for n in range(3000))
    message = f'Squash (#120)\n\n{listed}\n* Reapply "Change 7"\n* Revert "Revert "Change 9""'
    reverted = {r.title for r in references(message) if r.kind == FollowUpKind.REVERT and not r.relands}
    assert len(reverted) == 2998 and {"Change 1", "Change 2999"} <= reverted
    assert not {"Change 7", "Change 9"} & reverted


@pytest.mark.parametrize(
    "message",
    [
        "Document the flag (#106)\n\nThe flag was introduced in PR #100.",
        "[Core] Tidy the scheduler (ref #100) (#106)",
        "Remove the old path (#106)\n\nAfter PR #100, the old path is unused.",
        "[Core] Follow up #100: batch support [2/3] (#106)",
        "Follow-up to #100: handle empty batches",
        "[Docs] Update the table to match #100 (#106)",
        "[CI] Skip docs-only PRs (#106)\n\nThe GPU job fails on PRs that only touch docs, e.g. #100, for an hour each.",
        "[Bugfix] Widget model compatibility with `tok_kwargs` (#100) (#106)",
        "Add a test (#106)\n\nAdds a regression test for the bug fixed in #100.",
        "[Model] Supplement to PR 100: pass the prefix to more heads (#106)",
        "Remove last references not removed in #100 (#106)",
        "Improve errors (#106)\n\nThe error handling from #100 is reused here.",
        "Rebuild fields (#106)\n\nThis applies the same logic from #100 to dataclasses.",
        "Fix pager (#106)\n\nFixes a crash in the pager. It also adds a test for #100.",
        "Cleaner queue (#106)\n\nReverting #100 would be simpler, but it is used by the pager.",
        "Fix pager (#106)\n\nFixes: 0000000",  # a short number in the trailer is an issue, not a sha
    ],
)
def test_mentions_are_not_fix_forwards(message):
    assert links_of(ORIGINAL, past(2, message)) == set()


LONG = past(1, "[Core] Faster scheduler for long prompts (#100)")
REVERT = past(2, 'Revert "[Core] Faster scheduler for long prompts (#100)" (#105)')


@pytest.mark.parametrize(
    "message",
    [
        'Reapply "[Core] Faster scheduler for long prompts (#100)" (#110)',
        "[Recover] [Core] Faster scheduler for long prompts (#110)",
        "[Redo] #100 (#110)",
        "[unrevert] Faster scheduler for long prompts (#110)",
        "[Core] Re-land the faster scheduler from #100 (#110)",
        "[Core] Faster scheduler for long prompts (take 2) (#110)",
        "[Core] Faster scheduler for long prompts. Attempt 2 (#110)",
        "Faster scheduler again (#110)\n\nThis PR restores #100 with the deadlock fixed.",
        'Recommit "[Core] Faster scheduler for long prompts (#100)"\n\nWith the deadlock fixed.',
    ],
)
def test_a_reland_undoes_the_revert_and_never_fixes_the_original(message):
    reland = past(3, message)
    assert links_of(LONG, REVERT, reland) == {
        (LONG.sha, REVERT.sha, "revert"),
        (REVERT.sha, reland.sha, "revert"),
    }


def test_a_title_that_merely_starts_like_a_reverted_one_is_no_reland():
    assert links_of(
        LONG, REVERT, past(3, "[Core] Faster scheduler for long prompts and MoE layers (#110)")
    ) == {(LONG.sha, REVERT.sha, "revert")}


def test_a_short_title_repeated_after_a_revert_is_no_reland():
    # "Update docs" recurs for unrelated reasons.
    docs = past(1, "Update docs (#100)")
    revert = past(2, 'Revert "Update docs (#100)" (#105)')
    assert links_of(docs, revert, past(3, "Update docs (#110)")) == {(docs.sha, revert.sha, "revert")}


def test_a_merge_commit_lands_its_pull_request():
    merge = past(1, "Merge pull request #100 from alice/faster\n\nFaster scheduler")
    assert merge.pr_number == 100
    assert links_of(merge, past(2, "Revert #100")) == {(merge.sha, f"{2:040x}", "revert")}


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
    # No revert of #100 is known: the re-land links nothing.
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
        # other toolchains' words, when they name what they take out
        ('Back out "[core] Add the pager"', True),
        ("Backed out changeset 3f9a1c2b7d4e for causing build bustages", True),
        ("Automated rollback of commit 3f9a1c2b7d4e", True),
        ("[TPU][Test] Rollback PR-21550.", True),
        ("[Revert] [Core] Faster scheduler", True),
        ("Rollback support for migrations", False),
        ("[CI] rollback lint-and-deploy pipeline using amd machine", False),
    ],
)
def test_revert_titles_are_recognised_behind_tags(title, revert):
    assert is_revert_title(title) is revert


# --- mining on top of a mined span ----------------------------------------------------------------------

SPAN = [
    past(1, "[Core] Faster scheduler for long prompts (#100)"),
    past(2, "[Perf] Cache widget lookups in the registry (#101)"),
    past(3, 'Revert "[Core] Faster scheduler for long prompts (#100)" (#102)'),
    past(4, f"Revert the widget cache\n\nThis reverts commit {2:040x}."),
    past(5, "[Docs] Widgets guide (#103)"),
]
LATER = [
    past(6, "[Core] Faster scheduler for long prompts (take 2) (#104)"),  # a re-land under the same title
    past(7, "Reapply [Perf] Cache widget lookups in the registry (#105)"),
    past(8, "[Bugfix] Fix the guide's example after #103 (#106)"),
    past(9, "[Misc] Nothing to follow up (#107)"),
]


def test_mining_the_commits_after_a_mined_span_finds_what_mining_everything_finds():
    from analysis.history.followups import mine

    known = mine(SPAN)
    assert known.reverts  # the span's reverts, which the later re-lands link to
    on_top = mine(LATER, past=SPAN, known=known)
    assert on_top == mine([*SPAN, *LATER])
    assert list(on_top.links) == find_links([*SPAN, *LATER])
    kinds = {(link.follow_up[-1], link.kind.value) for link in on_top.links if link.follow_up > f"{5:040x}"}
    assert kinds == {("6", "revert"), ("7", "revert"), ("8", "fix")}


def test_a_commit_older_than_the_mined_span_is_mined_with_the_rest():
    from analysis.history.followups import mine

    known = mine(SPAN[2:])  # a span that lacks the original
    assert mine([SPAN[0], *LATER], past=SPAN[2:], known=known) == mine([SPAN[0], *SPAN[2:], *LATER])


def test_the_title_maps_are_those_adding_each_commit_would_make_whenever_they_are_read():
    """The index normalises titles only when a title reference needs them: read between adds or at the
    end, its maps hold the same entries in the same order (the newest-first prefix search depends on it)
    as normalising each title as it is added."""
    from analysis.history.followups import _Index, _norm_title, _norm_untagged

    titles = [
        "[Bugfix] Fix A (#1)",
        "Fix A",
        "[Perf] Speed up B (#2)",
        "fix  a",
        "[Misc] Speed up B",
        "C (#3)",
    ]
    made = [past(i, title) for i, title in enumerate(titles)]
    eager_title: dict[str, PastCommit] = {}
    eager_untagged: dict[str, PastCommit] = {}
    lazy, read_at_end = _Index(), _Index()
    for c in made:
        eager_title[_norm_title(c.title)] = c
        eager_untagged[_norm_untagged(c.title)] = c
        lazy.add(c)
        read_at_end.add(c)
        assert list(lazy.by_title.items()) == list(eager_title.items())
        assert list(lazy.by_untagged.items()) == list(eager_untagged.items())
    for index in (lazy, read_at_end):
        assert list(index.by_title.items()) == list(eager_title.items())
        assert list(index.by_untagged.items()) == list(eager_untagged.items())
        assert [index.untagged(c.sha) for c in made] == [_norm_untagged(c.title) for c in made]
        assert index.untagged("f" * 40) is None and set(index.by_pr) == {1, 2, 3}


# ---------------------------------------------------------------- merge-commit workflows


def test_a_merge_commits_title_is_its_pull_requests():
    from analysis.titles import merge_pr, message_title

    assert message_title(
        "Merge pull request #7 from ada/fix-overflow\n\nFix overflow in the parser\n\nDetails."
    ) == (
        "Fix overflow in the parser (#7)",
        "\nDetails.",
    )
    assert message_title("Auto merge of #12345 - ada:fix, r=bob\n\n[Bugfix] Fix the parser\n")[0] == (
        "[Bugfix] Fix the parser (#12345)"
    )
    assert message_title("Merge pull request #7 from ada/x\n\nFix it (#7)")[0] == "Fix it (#7)"  # not twice
    # no pull request title to take: the merge line stays, and still names its pull request
    for message in (
        "Merge pull request #7 from ada/x",
        "Merge pull request #7 from ada/x\n\nSigned-off-by: A",
    ):
        title = message_title(message)[0]
        assert title == "Merge pull request #7 from ada/x" and merge_pr(title) == 7
    assert message_title("Merge branch 'main' into dev\n\nsomething")[0] == "Merge branch 'main' into dev"
    assert message_title("Fix x (#5)\n\nbody") == ("Fix x (#5)", "\nbody")


def test_in_a_merge_commit_workflow_a_revert_links_to_the_pull_request_it_reverts():
    # GitHub's merge commits name the branch first; the revert button's pull request is titled
    # 'Revert "<title>"' and its branch "revert-<N>-<branch>".
    original = past(1, "Merge pull request #100 from ada/faster-scheduler\n\n[Core] Faster scheduler")
    revert = past(
        5, 'Merge pull request #105 from bob/revert-100-faster-scheduler\n\nRevert "[Core] Faster scheduler"'
    )
    fix = past(6, "Merge pull request #106 from cy/fix\n\nFix the crash introduced by #100")
    assert original.title == "[Core] Faster scheduler (#100)" and original.pr_number == 100
    assert links_of(original, revert, fix) == {
        (original.sha, revert.sha, "revert"),
        (original.sha, fix.sha, "fix"),
    }


def test_a_run_of_digits_too_long_for_a_pull_request_names_none_and_breaks_nothing():
    # a message with "#" and 5,000 nines (a pasted number): int() refuses more than 4,300 digits, and the
    # digest, analyze and eval of every day whose history held it stopped with a ValueError
    huge = "9" * 5000
    messages = [
        f"Fix #{huge}",
        f"Something (#{huge})",
        f"Revert PR 100 and #{huge}",
        f"Fix the crash\n\nBroken by https://github.com/acme/widgets/pull/{huge} and acme/widgets#{huge}",
        f'Revert "Faster scheduler (#{huge})"',
        f"Merge pull request #{huge} from someone/branch",
    ]
    commits = [past(2 + i, m) for i, m in enumerate(messages)]
    assert links_of(ORIGINAL, *commits) == {(ORIGINAL.sha, commits[2].sha, "revert")}  # "100" still read
    assert all(c.pr_number is None for c in commits)


@pytest.mark.parametrize(
    ("body", "original"),
    [
        ("#106 changed the cache key layout for every request, which broke caching.", 106),
        ("MC2 became the default in #102, which crashes on older drivers.", 102),
        ("Builds on #55 (the new loader), which crashes when the path is empty.", 55),
    ],
)
def test_a_relative_clause_after_the_reference_says_what_it_broke(body, original):
    [ref] = [r for r in references("Fix the regression (#200)\n\n" + body) if r.kind == FollowUpKind.FIX]
    assert ref.pr == original


@pytest.mark.parametrize(
    "body",
    [
        "This follows #88, which added the option.",
        "Since #77, which broke nothing, we rename it.",
        "As proposed in #77, which crashes less often, we keep the default.",
    ],
)
def test_a_relative_clause_that_blames_nothing_links_nothing(body):
    assert not [
        r for r in references("Rename the option (#201)\n\nRename.\n\n" + body) if r.kind == FollowUpKind.FIX
    ]
