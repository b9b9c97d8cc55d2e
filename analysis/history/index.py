"""History signals: what the branch's own past says about the paths a commit touches (DESIGN.md §3b).

For a day, only commits that landed before the day's window count, and a past commit counts as
"later reverted or fixed" only when that follow-up also landed before the window: a backfilled
day ranks the same as it would have on the morning after. Pure: past commits and links in, facts out.

Per file and per folder, over a trailing window: how many commits touched it and how many of those
were followed up, smoothed towards the branch's base rate (`SMOOTHING` pseudo-commits) so that one
event on a rarely touched file does not dominate; recent churn; whether the commit is itself a
follow-up; whether source changed without any test changing; how many separate areas it spans; which
vendored-looking trees the branch edits as its own code (`OWN_TREE_MIN`).
Nothing here is specific to one repository, and nothing looks at which person wrote a commit; commits
of automated accounts (analysis/history/automation.py: a fact about the change) are left out of the baseline
a commit's risk score is placed in, so that a branch where half the commits are one-line bot updates
does not push every human change into its top half.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from itertools import repeat
from math import log, log1p

from analysis.history.automation import is_automated
from analysis.history.facts import HistoryFacts, PathRecord
from analysis.history.followups import FollowUpLink, Mined, PastCommit, mine
from analysis.history.keys import FOLDER_DEPTH, file_keys, path_keys, people_trees
from analysis.models import Commit
from analysis.paths import PathKind, is_low_value, kind_in, vendored_tree

WINDOW_DAYS = 180  # trailing window of history, a setting (HISTORY_DAYS)
CHURN_DAYS = 30
SMOOTHING = 20.0  # pseudo-commits at the base rate added to every path's record
MIN_TOUCHES = 5  # a path touched fewer times says nothing on its own
TOP_PATHS = 3
MIN_DISTRIBUTION = 200  # past commits needed before tiers follow the branch's own score distribution
_STATE_FORMAT = 1  # of `HistoryIndex.state`: bump when what it keeps changes

# Risk score weights (natural logs). Size and spread are the strongest single predictors of a later
# revert or fix on real history; the touched paths' own record and recent churn add to them; a commit
# that is itself a follow-up is fixed again far more often than others (on two real histories, 14x and
# 9x the branch's rate). The count of runtime files says more than the count of lines once both are in
# (rubric h7 halved the lines' weight and doubled the follow-up's: BENCHMARKS.md, "Risk weights").
W_LINES = 0.5
W_FILES = 0.75
W_PATH_LIFT = 0.5
W_CHURN = 0.15
W_FOLLOW_UP = 2.0
LIFT_FLOOR = 0.3
# A vendored-looking tree (third_party/<name>/) that people edited in at least this many commits of the window,
# none of them updating dependencies (`updates_dependencies`), is the branch's own code: a copy of someone
# else's project changes with its dependency updates, not in edits of its own week after week.
OWN_TREE_MIN = 12
# What a kept distribution of past scores was computed with, beside the rubric's version (which changes
# with the path rules): a change to any of these scores the past again.
SCORE_PARAMS = (
    f"w{W_LINES},{W_FILES},{W_PATH_LIFT},{W_CHURN},{W_FOLLOW_UP};f{LIFT_FLOOR};s{SMOOTHING},{MIN_TOUCHES};"
    f"d{FOLDER_DEPTH};c{CHURN_DAYS};o{OWN_TREE_MIN}"
)

_NON_RUNTIME = frozenset(
    {PathKind.DOCS, PathKind.EXAMPLE, PathKind.TESTS, PathKind.BENCHMARK, PathKind.CI, PathKind.TOOLING}
)


@dataclass(frozen=True, slots=True)
class BranchCommit(PastCommit):
    """A past commit of the branch with whether an automated account wrote it (the history readers
    fill it in; a plain PastCommit counts as written by a person)."""

    automated: bool = False


def automated(commit: PastCommit) -> bool:
    return isinstance(commit, BranchCommit) and commit.automated


class HistoryIndex:
    """Per-path counts over a trailing window ending at `cutoff`; built once per day, asked per commit."""

    def __init__(
        self,
        past: Sequence[PastCommit],
        links: Iterable[FollowUpLink],
        cutoff: datetime,
        window_days: int = WINDOW_DAYS,
    ):
        self.cutoff = cutoff
        self.window_days = window_days
        start = cutoff - timedelta(days=window_days)
        churn_start = cutoff - timedelta(days=CHURN_DAYS)
        known = [link for link in links if link.follow_up_at < cutoff]
        self.followed = {link.original for link in known}
        self._links_by_follow_up: dict[str, list[FollowUpLink]] = {}
        for link in known:
            self._links_by_follow_up.setdefault(link.follow_up, []).append(link)
        self.touches: Counter[str] = Counter()
        self.hits: Counter[str] = Counter()
        self.recent: Counter[str] = Counter()
        self.commits_seen = 0
        self.followed_seen = 0
        self._window: list[PastCommit] = []  # the baseline: the window's commits but automated ones
        self._scores: list[float] | None = None
        self._rates: dict[str, float] | None = None  # see `_path_rates`
        edited: Counter[str | None] = Counter()  # commits by people per vendored-looking tree
        for commit in past:
            if not (start <= commit.committed_at < cutoff):
                continue
            if not automated(commit):
                self._window.append(commit)
                edited.update(people_trees(commit.files))
            self.commits_seen += 1
            hit = commit.sha in self.followed
            self.followed_seen += hit
            keys = file_keys(commit.files)
            self.touches.update(keys)
            if hit:
                self.hits.update(keys)
            if commit.committed_at >= churn_start:
                self.recent.update(path for path, _ in commit.files)
        self.own = _own(edited)
        self._baseline = len(self._window)
        self._links_key = links_key(known)

    @classmethod
    def counted(
        cls,
        known: Sequence[FollowUpLink],
        cutoff: datetime,
        window_days: int,
        *,
        seen: tuple[int, int],
        counts: tuple[Counter[str], Counter[str], Counter[str]],
        window: list[PastCommit],
        edited: Counter[str | None],
    ) -> HistoryIndex:
        """The index a window's counts make, kept by the caller as the window moves (analysis/history/
        sliding.py): `known`, the links known before the cutoff; `seen`, (commits, followed up); `counts`,
        (touches, hits, recent); `window`, its commits but automated ones; `edited`, `people_trees` counted."""
        index = cls((), known, cutoff, window_days)
        index.commits_seen, index.followed_seen = seen
        index.touches, index.hits, index.recent = counts
        index._window, index._baseline = window, len(window)
        index.own = _own(edited)
        return index

    # -- kept between runs: a card or an LLM day on a digested day's span reads the counts instead of
    # months of history (issue 21) ------------------------------------------------------------------------

    def state(self) -> dict[str, object]:
        """What `restored` needs to answer as this index does, JSON-able: the counts, not the commits.
        Call after `past_scores` (the scores are kept beside it, not in it)."""
        return {
            "format": _STATE_FORMAT,
            "links": self._links_key,
            "commits_seen": self.commits_seen,
            "followed_seen": self.followed_seen,
            "baseline": self._baseline,
            "touches": dict(self.touches),
            "hits": dict(self.hits),
            "recent": dict(self.recent),
            "own": sorted(self.own),
        }

    @classmethod
    def restored(
        cls,
        state: dict[str, object],
        links: Iterable[FollowUpLink],
        cutoff: datetime,
        window_days: int,
        scores: Sequence[float] | None,
    ) -> HistoryIndex | None:
        """The index `state` was taken from, for the same span, links and rules; None when the state
        cannot stand for it (another format, other links known before the cutoff, or a distribution
        that was not kept): then the caller builds it from the commits."""
        known = [link for link in links if link.follow_up_at < cutoff]
        if state.get("format") != _STATE_FORMAT or state.get("links") != links_key(known):
            return None
        baseline = state["baseline"]
        if not isinstance(baseline, int) or (baseline >= MIN_DISTRIBUTION) != (scores is not None):
            return None
        if scores is not None and len(scores) != baseline:
            return None
        index = cls((), known, cutoff, window_days)  # the links' bookkeeping as a count sets it up
        try:
            index.commits_seen = int(state["commits_seen"])  # type: ignore[call-overload]
            index.followed_seen = int(state["followed_seen"])  # type: ignore[call-overload]
            index.touches, index.hits, index.recent = (
                Counter({str(k): int(v) for k, v in state[name].items()})  # type: ignore[attr-defined]
                for name in ("touches", "hits", "recent")
            )
            index.own = frozenset(str(tree) for tree in state["own"])  # type: ignore[attr-defined]
        except (KeyError, TypeError, ValueError, AttributeError):  # a damaged state: counted again
            return None
        index._baseline = baseline
        index._scores = list(scores) if scores is not None else None
        return index

    @property
    def base_rate(self) -> float:
        return self.followed_seen / self.commits_seen if self.commits_seen else 0.0

    def record(self, path: str) -> PathRecord:
        touches, hits = self.touches[path], self.hits[path]
        rate = (hits + SMOOTHING * self.base_rate) / (touches + SMOOTHING)
        return PathRecord(path, touches, hits, rate)

    def records(self, paths: Iterable[str]) -> list[PathRecord]:
        """Records of the paths and their folders with enough history, riskiest first; among equally
        risky ones the most specific (a file before its folder)."""
        records = [self.record(k) for k in path_keys(paths)]
        records = [r for r in records if r.touches >= MIN_TOUCHES]
        records.sort(key=lambda r: (-r.rate, r.is_folder, -r.path.count("/"), r.path))
        return records

    def lift(self, records: Sequence[PathRecord]) -> float:
        return records[0].rate / self.base_rate if records and self.base_rate else 1.0

    def facts(self, commit: Commit, links: Iterable[FollowUpLink] = ()) -> HistoryFacts:
        """`links`: what this commit itself follows up (mined with the history it can see)."""
        files = [(f.path, f.changes) for f in commit.files]
        paths = [p for p, _ in files]
        records = self.records(paths)
        follows = tuple(links)
        kinds = [kind_in(p, self.own) for p in paths]
        source = any(k == PathKind.SOURCE for k in kinds)
        tests = any(k == PathKind.TESTS for k in kinds)
        churn = max((self.recent[p] for p in paths), default=0)
        score = risk_score(files, self.lift(records), churn, bool(follows), self.own)
        return HistoryFacts(
            window_days=self.window_days,
            commits_seen=self.commits_seen,
            followed_seen=self.followed_seen,
            risky_paths=tuple(records[:TOP_PATHS]),
            churn=churn,
            follows_up=follows,
            source_without_tests=source and not tests,
            areas=len({_area(p) for p, k in zip(paths, kinds, strict=True) if k == PathKind.SOURCE}),
            score=score,
            percentile=self.percentile(score),
            baseline=self._baseline,
            own_trees=tuple(sorted({t for p in paths if (t := vendored_tree(p)) in self.own})),
        )

    def percentile(self, score: float) -> float | None:
        """Share of the window's past commits, automated ones left out, that scored below `score`
        (scored with this index: only what was known before the cutoff)."""
        scores = self.past_scores()
        if scores is None:
            return None
        return bisect_left(scores, score) / len(scores)

    def past_scores(self) -> list[float] | None:
        """The window's past commits' scores, sorted (None: too few for a distribution); computed once
        per index (a day), each commit then bisects."""
        if self._baseline < MIN_DISTRIBUTION:
            return None
        if self._scores is None:
            self._scores = sorted(self._window_scores())
        return self._scores

    def _window_scores(self) -> list[float]:
        """`risk_score` of each of the window's past commits as this index sees it: the same floats as through
        `records` and `lift`, without building and sorting records (the lift needs only the highest rate among
        the paths with enough history), the terms that depend on the files alone cached, and what every commit
        looks up bound once (a replay scores the window's thousands of commits every day)."""
        rate_of, recent_of = self._path_rates().get, self.recent.get
        follow_ups, base, own = self._links_by_follow_up, self.base_rate, self.own
        scores = []
        for commit in self._window:
            keys, paths, size = _past_terms(commit.files, own)
            churn = max(map(recent_of, paths, repeat(0)), default=0)  # a Counter's missing key is 0
            best = max(map(rate_of, keys, repeat(_NO_RATE)), default=_NO_RATE)
            lift = best / base if best != _NO_RATE and base else 1.0  # as `lift` computes it
            scores.append(_scored(size, lift, churn, commit.sha in follow_ups))  # its lists are never empty
        return scores

    def _path_rates(self) -> dict[str, float]:
        """The smoothed rate (as `record` computes it) of every path touched at least MIN_TOUCHES times: each
        past commit's lift is the highest among its paths'. Worked out once per index, when first asked."""
        if self._rates is None:
            hits, prior = self.hits, SMOOTHING * self.base_rate
            self._rates = {
                path: (hits.get(path, 0) + prior) / (touches + SMOOTHING)
                for path, touches in self.touches.items()
                if touches >= MIN_TOUCHES
            }
        return self._rates


_NO_RATE = -1.0  # below any rate: no path of the commit has enough history


def risk_score(
    files: Sequence[tuple[str, int]],
    lift: float,
    churn: int,
    follows_up: bool,
    own: frozenset[str] = frozenset(),
) -> float:
    """Higher is riskier: log size in counted lines and runtime files, the riskiest touched path's
    lift over the base rate, recent churn on the same files, and being a follow-up itself. `own`: the
    vendored-looking trees the branch maintains (their files count as what they are)."""
    lines, runtime = _size_terms(tuple(files), own)
    return _scored(lines + runtime, lift, churn, follows_up)


def _scored(size: float, lift: float, churn: int, follows_up: bool) -> float:
    """`risk_score` from its size terms' sum: added in the same order, the same float."""
    return size + W_PATH_LIFT * log(max(lift, LIFT_FLOOR)) + W_CHURN * log1p(churn) + W_FOLLOW_UP * follows_up


@lru_cache(maxsize=1 << 16)
def _past_terms(
    files: tuple[tuple[str, int], ...], own: frozenset[str]
) -> tuple[tuple[str, ...], tuple[str, ...], float]:
    """What a past commit's score takes from its files alone, asked every day of a replay: the paths and
    folders its record is kept under (`file_keys`), its files' paths, and the sum of its size terms."""
    lines, runtime = _size_terms(files, own)
    return tuple(file_keys(files)), tuple(path for path, _ in files), lines + runtime


@lru_cache(maxsize=1 << 16)
def _size_terms(files: tuple[tuple[str, int], ...], own: frozenset[str]) -> tuple[float, float]:
    """The size terms of `risk_score`, which depend on the files alone (a past commit's, every day)."""
    counted = runtime = 0
    for path, lines in files:
        kind = kind_in(path, own)
        if is_low_value(kind):
            continue
        counted += lines
        runtime += kind not in _NON_RUNTIME
    return W_LINES * log1p(counted), W_FILES * log1p(runtime)


def facts_for_day(
    commits: Sequence[Commit],
    past: Sequence[PastCommit],
    links: Iterable[FollowUpLink],
    cutoff: datetime,
    window_days: int = WINDOW_DAYS,
    *,
    index: HistoryIndex | None = None,
) -> dict[str, HistoryFacts]:
    """HistoryFacts for each of a day's commits, from history strictly before `cutoff` (the window's
    start). `links` are mined from the past and the day's commits together (see `day_links`): a link
    counts for the past only when its follow-up landed before the cutoff, while what a day's commit
    itself follows up is read from its own message, so a same-day revert is known as such. `index`:
    the HistoryIndex of these past commits, links and cutoff, when the caller built it."""
    links = list(links)
    index = index or HistoryIndex(past, links, cutoff, window_days)
    shas = {c.sha for c in commits}
    mine: dict[str, list[FollowUpLink]] = {}
    for link in links:
        if link.follow_up in shas:
            mine.setdefault(link.follow_up, []).append(link)
    return {c.sha: index.facts(c, mine.get(c.sha, ())) for c in commits}


def day_links(
    commits: Sequence[Commit], past: Sequence[PastCommit], mined: Mined | None = None
) -> list[FollowUpLink]:
    """Links among the past and the day's commits: the input `facts_for_day` expects. `mined`: what
    mining `past` alone found (`mine(past)`, kept in the store): then only the day's commits are read."""
    known = {c.sha for c in past}
    new = [as_past(c) for c in commits if c.sha not in known]
    return list(mine(new, past=past, known=mined).links)


def as_past(commit: Commit) -> PastCommit:
    return BranchCommit(
        commit.sha,
        commit.committed_at,
        commit.message,
        tuple((f.path, f.changes) for f in commit.files),
        automated=is_automated(commit.author, commit.author_login),
    )


def links_key(links: Iterable[FollowUpLink]) -> str:
    """A fingerprint of the follow-up links an index counts (which commits were followed up, by what)."""
    rows = sorted(f"{link.original} {link.follow_up} {link.kind.value}" for link in links)
    return hashlib.sha1("\n".join(rows).encode()).hexdigest()


def _own(edited: Counter[str | None]) -> frozenset[str]:
    """The trees the branch edits as its own code: edited in at least OWN_TREE_MIN commits by people."""
    return frozenset(tree for tree, n in edited.items() if tree is not None and n >= OWN_TREE_MIN)


def _area(path: str) -> str:
    return "/".join(path.split("/")[:-1][:2])
