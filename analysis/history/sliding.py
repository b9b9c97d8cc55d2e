"""The history index of each of a run's days in turn, each slid from the day before (issue 21).

`digestbot eval` replays months day by day, and each day's index counts the trailing window (180 days of
commits) before it. Counted afresh every day, the window's commits were visited once per day: four months
of a busy branch, 600,000 visits. Here a day's index takes the one before it and moves the window: the
commits that left it are taken out of the counts, those that entered are put in, and a commit of the
window whose follow-up has become known since counts as followed up from then on. The counts are exactly
those a fresh `HistoryIndex` of the same commits, links and cutoff has (a test compares them day after
day); the distribution of past scores is computed per day as before (every past commit's score moves with
the paths' rates).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from analysis.history.followups import FollowUpLink, PastCommit
from analysis.history.index import CHURN_DAYS, HistoryIndex, automated
from analysis.history.keys import file_keys, people_trees


class SlidingHistory:
    """HistoryIndex(past, links, cutoff, window_days) for cutoffs asked in order, from one sorted history
    that covers every window asked (oldest first). A cutoff earlier than the last one is counted afresh."""

    def __init__(self, history: Sequence[PastCommit], links: Iterable[FollowUpLink], window_days: int):
        self._history = history
        self._stamps = [c.committed_at for c in history]
        self._links = sorted(links, key=lambda link: link.follow_up_at)
        self._link_times = [link.follow_up_at for link in self._links]
        self._window_days = window_days
        self._position = {c.sha: i for i, c in enumerate(history)}
        self._reset()

    def _reset(self) -> None:
        self._cutoff: datetime | None = None
        self._lo = self._hi = self._recent_lo = 0  # the window [lo, hi) and its churn days [recent_lo, hi)
        self._followed: set[str] = set()
        self._touches: Counter[str] = Counter()
        self._hits: Counter[str] = Counter()
        self._recent: Counter[str] = Counter()
        self._edited: Counter[str | None] = Counter()  # people's commits per vendored-looking tree
        self._people: deque[PastCommit] = deque()  # the window's commits but automated ones
        self._seen = self._followed_seen = 0

    def at(self, cutoff: datetime) -> HistoryIndex:
        if self._cutoff is not None and cutoff < self._cutoff:
            self._reset()
        known = self._links[: bisect_left(self._link_times, cutoff)]
        followed = {link.original for link in known}
        lo = bisect_left(self._stamps, cutoff - timedelta(days=self._window_days))
        hi = bisect_left(self._stamps, cutoff)
        recent_lo = max(lo, bisect_left(self._stamps, cutoff - timedelta(days=CHURN_DAYS)))
        # A commit that stays in the window and whose follow-up became known since: followed up from now.
        for sha in followed - self._followed:
            at = self._position.get(sha)
            if at is not None and max(lo, self._lo) <= at < self._hi:
                self._count(self._hits, file_keys(self._history[at].files), 1)
                self._followed_seen += 1
        for at in range(self._lo, min(lo, self._hi)):  # left the window: counted as it was counted
            self._move(self._history[at], -1, self._history[at].sha in self._followed)
        for at in range(max(self._hi, lo), hi):  # entered it
            self._move(self._history[at], 1, self._history[at].sha in followed)
        for at in range(self._recent_lo, min(recent_lo, self._hi)):
            self._count(self._recent, (path for path, _ in self._history[at].files), -1)
        for at in range(max(self._hi, recent_lo), hi):
            self._count(self._recent, (path for path, _ in self._history[at].files), 1)
        self._cutoff, self._followed = cutoff, followed
        self._lo, self._hi, self._recent_lo = lo, hi, recent_lo
        return HistoryIndex.counted(
            known,
            cutoff,
            self._window_days,
            seen=(self._seen, self._followed_seen),
            counts=(Counter(self._touches), Counter(self._hits), Counter(self._recent)),
            window=list(self._people),
            edited=self._edited,
        )

    def _move(self, commit: PastCommit, step: int, hit: bool) -> None:
        self._seen += step
        keys = file_keys(commit.files)
        self._count(self._touches, keys, step)
        if hit:
            self._count(self._hits, keys, step)
            self._followed_seen += step
        if automated(commit):
            return
        if step > 0:
            self._people.append(commit)
        else:
            self._people.popleft()  # the oldest: commits leave in the order they entered
        self._count(self._edited, people_trees(commit.files), step)

    @staticmethod
    def _count(counter: Counter, keys: Iterable, step: int) -> None:
        """Add step to each key's count; a count back at zero is dropped, as a fresh count never has it."""
        for key in keys:
            left = counter[key] + step
            if left:
                counter[key] = left
            else:
                del counter[key]
