"""History signals: per-path follow-up rates, smoothed, never from the future; the risk percentile."""

from __future__ import annotations

import json
from bisect import bisect_left
from datetime import UTC, datetime, timedelta

from analysis.history.followups import PastCommit, find_links
from analysis.history.index import (
    MIN_DISTRIBUTION,
    OWN_TREE_MIN,
    SMOOTHING,
    BranchCommit,
    HistoryIndex,
    day_links,
    facts_for_day,
    risk_score,
)
from analysis.models import Commit, FileChange

DAY = datetime(2025, 11, 5, tzinfo=UTC)


def commit_at(n: int, when: datetime, message: str, *paths: str, lines: int = 10) -> PastCommit:
    return PastCommit(f"{n:040x}", when, message, tuple((p, lines) for p in paths))


def today(message: str, *paths: str, lines: int = 10) -> Commit:
    return Commit(
        repo="acme/widgets",
        sha="f" * 40,
        message=message,
        author="A",
        committed_at=DAY + timedelta(hours=3),
        files=tuple(FileChange(p, "modified", lines, 0) for p in paths),
    )


def branch_history() -> list[PastCommit]:
    """240 commits over 120 days: `core/sched.py` is touched 40 times and 6 of those were reverted;
    `docs/` changes never were."""
    commits: list[PastCommit] = []
    n = 0
    for i in range(240):
        when = DAY - timedelta(days=120) + timedelta(hours=12 * i)
        n += 1
        if i % 6 == 0:
            commits.append(commit_at(n, when, f"[Core] Scheduler change {i} (#{1000 + n})", "core/sched.py"))
        else:
            commits.append(commit_at(n, when, f"[Doc] Page {i} (#{1000 + n})", f"docs/p{i}.md"))
    reverted = [c for c in commits if c.files[0][0] == "core/sched.py"][:6]
    for original in reverted:
        n += 1
        commits.append(
            commit_at(
                n,
                original.committed_at + timedelta(hours=1),
                f"Revert #{original.pr_number}",
                "core/sched.py",
            )
        )
    return sorted(commits, key=lambda c: c.committed_at)


def test_a_path_with_a_history_of_follow_ups_is_named_with_its_counts():
    past = branch_history()
    links = find_links(past)
    facts = facts_for_day([today("[Core] Scheduler tweak", "core/sched.py")], past, links, DAY)["f" * 40]
    worst = facts.risky_paths[0]
    assert worst.path == "core/sched.py"
    assert (worst.touches, worst.followed) == (46, 6)  # 40 changes + 6 reverts touched it
    assert facts.path_lift > 2
    # Smoothed towards the branch's base rate: 6/46 is pulled down, never above the raw share.
    assert facts.base_rate < worst.rate < 6 / 46
    assert "touched_paths_history" in facts.as_prompt()


def test_one_event_on_a_rarely_touched_file_does_not_dominate():
    past = branch_history()
    when = DAY - timedelta(days=3)
    past += [
        commit_at(900, when, "[Misc] Rare (#900)", "misc/rare.py"),
        commit_at(901, when + timedelta(hours=1), "Revert #900", "misc/other.py"),
    ]
    index = HistoryIndex(past, find_links(past), DAY)
    rare = index.record("misc/rare.py")
    assert (rare.touches, rare.followed) == (1, 1)
    assert rare.rate < (1 + SMOOTHING * index.base_rate) / (1 + SMOOTHING) + 1e-9 < 0.2
    facts = index.facts(today("[Misc] Rare again", "misc/rare.py"))
    assert all(r.path != "misc/rare.py" for r in facts.risky_paths)  # too few touches to be named


def test_a_days_signals_never_change_when_later_commits_are_added():
    past = branch_history()
    commit = today("[Core] Scheduler tweak", "core/sched.py")
    before = facts_for_day([commit], past, day_links([commit], past), DAY)
    # Later history: more reverts of the scheduler, landing after the day's window starts.
    later = [
        commit_at(5000 + i, DAY + timedelta(days=1, hours=i), f"Revert #{c.pr_number}", "core/sched.py")
        for i, c in enumerate(c for c in past if c.message.startswith("[Core]"))
    ]
    everything = past + later
    after = facts_for_day([commit], everything, find_links(everything), DAY)
    assert after == before


def test_a_commit_that_is_itself_a_follow_up_says_so():
    past = branch_history()
    original = next(c for c in past if c.message.startswith("[Core]"))
    commit = today(f"[Bugfix] Fix scheduler regression from #{original.pr_number}", "core/sched.py")
    facts = facts_for_day([commit], past, day_links([commit], past), DAY)["f" * 40]
    assert [(link.original, link.kind.value) for link in facts.follows_up] == [(original.sha, "fix")]
    assert facts.as_prompt()["this_commit_follows_up"] == [{"kind": "fix", "original": original.sha[:12]}]


def test_percentile_needs_enough_history_and_orders_by_risk():
    past = branch_history()
    assert len(past) >= MIN_DISTRIBUTION
    index = HistoryIndex(past, find_links(past), DAY)
    small = index.facts(today("[Doc] Typo", "docs/x.md", lines=2))
    big = index.facts(
        today("[Core] Rework", "core/sched.py", "core/a.py", "core/b.py", "api/c.py", lines=400)
    )
    assert small.percentile is not None and big.percentile is not None
    assert small.percentile < 0.5 < 0.9 < big.percentile
    thin = HistoryIndex(past[:50], [], DAY)
    assert thin.facts(today("[Core] Rework", "core/sched.py")).percentile is None


def test_a_restored_index_answers_as_the_one_it_was_taken_from():
    """A card or an LLM day on a digested day's span restores the index from its kept counts and scores
    instead of reading months of file lists: every fact, percentile included, is the same float."""
    past = branch_history()
    past += [  # an automated account's commits (left out of the baseline) and a vendored tree edited as own
        BranchCommit(f"{900 + i:040x}", DAY - timedelta(days=3, hours=i), f"Bump version {i}", (("VERSION", 1),),
                     automated=True)
        for i in range(5)
    ] + [
        commit_at(950 + i, DAY - timedelta(days=4, hours=i), f"[Kernel] Tune {i} (#{950 + i})",
                  f"third_party/fastops/op{i % 3}.cu", lines=30 + i)
        for i in range(OWN_TREE_MIN + 1)
    ]  # fmt: skip
    past.sort(key=lambda c: c.committed_at)
    links = find_links(past)
    built = HistoryIndex(past, links, DAY)
    scores = built.past_scores()
    assert scores is not None and built.own == {"third_party/fastops/"}
    state = json.loads(json.dumps(built.state()))  # as the store keeps it
    restored = HistoryIndex.restored(state, links, DAY, 180, scores)
    assert restored is not None
    for commit in (
        today("[Core] Rework", "core/sched.py", "core/a.py", lines=120),
        today("[Kernel] Tune again", "third_party/fastops/op1.cu", lines=12),
        today("[Doc] Typo", "docs/x.md", lines=2),
        today(f"Revert #{past[0].pr_number}", "core/sched.py"),
    ):
        mine = [link for link in day_links([commit], past) if link.follow_up == commit.sha]
        assert restored.facts(commit, mine) == built.facts(commit, mine)

    # Not the same inputs: the caller builds the index from the commits.
    assert HistoryIndex.restored(state, links[:-1], DAY, 180, scores) is None  # other links known
    assert HistoryIndex.restored(state, links, DAY, 180, None) is None  # the distribution was not kept
    assert HistoryIndex.restored(state, links, DAY, 180, scores[:-1]) is None  # not this window's
    assert HistoryIndex.restored({**state, "format": 0}, links, DAY, 180, scores) is None
    for damaged in ({k: v for k, v in state.items() if k != "hits"}, {**state, "touches": [1, 2]}):
        assert HistoryIndex.restored(damaged, links, DAY, 180, scores) is None
    thin = HistoryIndex(past[:50], [], DAY)  # too few commits for a distribution: none kept, none needed
    again = HistoryIndex.restored(thin.state(), [], DAY, 180, thin.past_scores())
    assert again is not None and again.facts(today("x", "core/sched.py")) == thin.facts(
        today("x", "core/sched.py")
    )


def test_source_without_tests_and_areas():
    index = HistoryIndex([], [], DAY)
    facts = index.facts(today("x", "src/a/x.py", "src/b/y.py", "lib/c/z.py"))
    assert facts.source_without_tests and facts.areas == 3
    assert not index.facts(today("x", "src/a/x.py", "tests/test_x.py")).source_without_tests


def test_the_days_score_array_is_each_past_commits_risk_score_through_its_records():
    """The sorted array a day's percentiles bisect holds, for every past commit but automated ones, the
    very float `risk_score` gives from that commit's records, lift and churn (how it was computed before
    the array was cached per day): same numbers, not close ones."""
    past = branch_history()
    past += [  # folders deep and shallow, churn, a follow-up, low-value files the size terms skip
        commit_at(
            700 + i,
            DAY - timedelta(days=2, hours=i),
            f"[Misc] Change {i} (#{700 + i})",
            f"pkg/sub{i % 3}/deep/mod{i % 4}.py",
            "core/sched.py" if i % 2 else "uv.lock",
            lines=7 * i + 1,
        )
        for i in range(12)
    ]
    past.append(commit_at(799, DAY - timedelta(hours=5), "Revert #701", "pkg/sub1/deep/mod1.py"))
    past.sort(key=lambda c: c.committed_at)
    index = HistoryIndex(past, find_links(past), DAY)
    commit = today("[Core] Rework", "core/sched.py", "pkg/sub0/deep/mod0.py", lines=120)
    percentile = index.facts(commit).percentile

    def before(c: PastCommit) -> float:
        paths = [p for p, _ in c.files]
        churn = max((index.recent[p] for p in paths), default=0)
        follows = any(link.follow_up == c.sha for link in find_links(past) if link.follow_up_at < DAY)
        return risk_score(c.files, index.lift(index.records(paths)), churn, follows)

    expected = sorted(before(c) for c in past if c.committed_at < DAY)
    assert index._scores == expected
    assert percentile == bisect_left(expected, index.facts(commit).score) / len(expected)


def test_each_past_score_is_the_risk_score_its_records_give():
    """The distribution's scores are worked out per path once and per commit from cached terms: each is the
    float that `records`, `lift` and `risk_score` give the commit's files (churn and follow-up included)."""
    from analysis.history.index import risk_score

    past = branch_history()
    past.append(commit_at(990, DAY - timedelta(days=1), "[Core] Two places", "core/sched.py", "lib/new.py"))
    past.sort(key=lambda c: c.committed_at)
    links = find_links(past)
    index = HistoryIndex(past, links, DAY)
    followed_up = {link.follow_up for link in links}
    expected = []
    for commit in past:
        paths = [p for p, _ in commit.files]
        churn = max(index.recent[p] for p in paths)
        lift = index.lift(index.records(paths))
        expected.append(risk_score(commit.files, lift, churn, commit.sha in followed_up, index.own))
    assert index.past_scores() == sorted(expected)
    assert any(score != expected[0] for score in expected)  # lifts, churn and follow-ups differ among them
