"""Eval's day-by-day index, slid from the day before: every count and fact equals a fresh count's."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from analysis.history.followups import FollowUpKind, FollowUpLink, PastCommit, find_links
from analysis.history.index import OWN_TREE_MIN, BranchCommit, HistoryIndex
from analysis.history.sliding import SlidingHistory
from analysis.models import Commit, FileChange

START = datetime(2025, 1, 1, tzinfo=UTC)
PATHS = [
    "core/sched.py", "core/cache.py", "api/server.py", "api/routes.py", "docs/a.md", "tests/test_x.py",
    "third_party/fastops/op.cu", "third_party/fastops/gen.py", "requirements.txt", "kernels/attn.cu",
]  # fmt: skip


def history(seed: int) -> tuple[list[PastCommit], list[FollowUpLink]]:
    """A year of commits at random hours (several at the same instant), some by automated accounts, a
    vendored-looking tree edited often (owned in some windows, not others) and once with a dependency
    update; reverts found by the link rules, and fix-forwards known days or months after their original."""
    rng = random.Random(seed)
    commits: list[PastCommit] = []
    when = START
    for n in range(1500):
        when += timedelta(hours=rng.choice([0, 1, 3, 7]))
        files = tuple((p, rng.randint(1, 300)) for p in rng.sample(PATHS, rng.randint(1, 4)))
        message = f"Change {n} (#{n + 1})"
        if n > 10 and rng.random() < 0.04:
            message = f"Revert #{rng.randint(n - 10, n)}"
        commits.append(BranchCommit(f"{n:040x}", when, message, files, automated=rng.random() < 0.15))
    links = find_links(commits)
    for _ in range(60):  # fixes whose follow-up lands later: a commit becomes followed up mid-window
        original, later = sorted(rng.sample(range(len(commits)), 2))
        a, b = commits[original], commits[later]
        links.append(FollowUpLink(a.sha, b.sha, FollowUpKind.FIX, "fix", a.committed_at, b.committed_at))
    return commits, links


def probes() -> list[Commit]:
    return [
        Commit("o/r", f"{9000 + i:040x}", f"Probe {i}", "A", START, tuple(FileChange(p, "modified", 40, 3) for p in ps))
        for i, ps in enumerate(
            [["core/sched.py"], ["api/server.py", "core/cache.py"], ["third_party/fastops/op.cu"], ["docs/a.md"]]
        )
    ]  # fmt: skip


def assert_same(slid: HistoryIndex, fresh: HistoryIndex) -> None:
    assert slid.state() == fresh.state()
    assert slid.own == fresh.own and slid.followed == fresh.followed
    assert slid.past_scores() == fresh.past_scores()  # the same floats, not close ones
    for probe in probes():
        assert slid.facts(probe) == fresh.facts(probe)


def test_each_days_slid_index_is_the_fresh_count_of_its_window():
    for seed in (1, 2, 3):
        past, links = history(seed)
        windows = SlidingHistory(past, links, 60)
        cutoff = START + timedelta(days=20)
        steps = [timedelta(days=1)] * 40 + [timedelta(hours=5), timedelta(0), timedelta(days=75)]
        steps += [timedelta(days=d) for d in (2, 3, 1, 30, 1, 1)]
        for step in steps:  # consecutive days, the same day twice, gaps wider than the window
            cutoff += step
            assert_same(windows.at(cutoff), HistoryIndex(past, links, cutoff, 60))
        assert any(HistoryIndex(past, links, START + timedelta(days=d), 60).own for d in range(20, 250, 10))


def test_an_earlier_day_is_counted_again_and_a_short_window_keeps_its_churn():
    past, links = history(7)
    windows = SlidingHistory(past, links, 20)  # shorter than the churn's 30 days
    for day in (90, 91, 40, 41, 120):
        cutoff = START + timedelta(days=day)
        assert_same(windows.at(cutoff), HistoryIndex(past, links, cutoff, 20))


def test_a_vendored_tree_becomes_and_stops_being_the_branchs_own_as_the_window_moves():
    edits = [
        PastCommit(f"{i:040x}", START + timedelta(days=i), f"Tune {i}", (("third_party/fastops/op.cu", 5),))
        for i in range(OWN_TREE_MIN)
    ]
    windows = SlidingHistory(edits, [], OWN_TREE_MIN)  # a window of as many days as edits needed
    inside = START + timedelta(days=OWN_TREE_MIN)
    assert windows.at(inside).own == {"third_party/fastops/"}
    assert windows.at(inside + timedelta(days=1)).own == frozenset()  # the first edit left the window
    later = inside + timedelta(days=3)
    assert_same(windows.at(later), HistoryIndex(edits, [], later, OWN_TREE_MIN))
