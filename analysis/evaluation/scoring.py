"""Scoring ranks against the repository's own answer keys, beside the baselines. Pure: judged commits in,
figures out (`digestbot eval` prints them).

Two keys (DESIGN.md §3c): *follow-ups* — a commit is positive when a later commit reverted or fixed it
within the horizon (risk); *release notes* — a commit is positive when the maintainers listed its pull
request in a category (impact; analysis/evaluation/release_notes.py). A key may leave a commit unknown: it is then
left out of that key's figures.

For a tier cut (high, or medium and above): recall is the share of positives at or above the cut, flagged
share the share of all commits there, lift recall ÷ flagged share, precision the share of flagged commits
that are positive. Every recall stands beside two baselines at the same flagged share: *size* (flag the
commits with the most changed lines; commits tied at the boundary count in proportion) and *chance*
(recall = flagged share). The difference ours − size gets a 95 % percentile bootstrap interval
(commits resampled with replacement, within each sampling weight class, fixed seed), and the tier's ROC
AUC (ties count half) stands beside the AUC of changed lines.

Sampled runs weight each unsampled commit's stand-in so that every share estimates the full
population's; counts (commits, positives, hits) are raw counts of the commits ranked.

Over 400 lines because it is one method: every figure of `digestbot eval` shares the same baselines, intervals
and AUC.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from analysis.evaluation.release_notes import UNLISTED, Category
from analysis.models import Importance

RESAMPLES = 1000
SEED = 16  # fixed: the same intervals on every run of the same ranks


@dataclass(frozen=True, slots=True)
class Judged:
    sha: str
    title: str
    committed_at: datetime
    importance: Importance
    reason: str
    followed_by: str | None = None  # sha of the first follow-up within the horizon
    kind: str | None = None  # revert | fix
    weight: float = 1.0  # commits this one stands for (sampling)
    changed_lines: int = 0
    impact_score: float | None = None
    risk_score: float | None = None
    shipped: bool | None = None  # touches a path the packaging ships; None: unknown
    notes: str | None = None  # release-notes category, "unlisted", or None (the notes say nothing)

    @property
    def followed(self) -> bool:
        return self.followed_by is not None


@dataclass(frozen=True, slots=True)
class Cut:
    name: str  # "high" or "medium+high"
    recall: float
    flagged_share: float
    precision: float
    hits: int  # positives at or above the cut (raw count)
    size_recall: float = 0.0  # a rank by changed lines flagging the same share

    @property
    def lift(self) -> float:
        return self.recall / self.flagged_share if self.flagged_share else 0.0


@dataclass(frozen=True, slots=True)
class Score:
    commits: int  # ranked (raw count)
    followed: int  # of them, followed up (raw count)
    cuts: tuple[Cut, ...]
    tiers: dict[str, float] = field(default_factory=dict)  # share of commits per tier (weighted)
    population: float = 0.0  # the commits they stand for (= commits unless sampled)

    def cut(self, name: str) -> Cut:
        return next(c for c in self.cuts if c.name == name)


CUTS = (
    ("medium+high", frozenset({Importance.HIGH, Importance.MEDIUM})),
    ("high", frozenset({Importance.HIGH})),
)
_LEVEL = {Importance.HIGH: 2, Importance.MEDIUM: 1, Importance.LOW: 0}
_CUT_LEVEL = {"medium+high": 1, "high": 2}


def score(judged: Iterable[Judged]) -> Score:
    """The follow-up key's figures (no intervals: see versus_size)."""
    items = list(judged)
    total = sum(j.weight for j in items)
    followed = sum(j.weight for j in items if j.followed)
    data = _Data.of(items, [j.followed for j in items]) if items else None
    cuts = []
    for name, tiers in CUTS:
        flagged = [j for j in items if j.importance in tiers]
        flagged_weight = sum(j.weight for j in flagged)
        hits = sum(j.weight for j in flagged if j.followed)
        share = flagged_weight / total if total else 0.0
        cuts.append(
            Cut(
                name=name,
                recall=hits / followed if followed else 0.0,
                flagged_share=share,
                precision=hits / flagged_weight if flagged_weight else 0.0,
                hits=sum(1 for j in flagged if j.followed),
                size_recall=float(data.size_recall(data.w, share)[0]) if data and followed else 0.0,
            )
        )
    tiers = {
        level.value: (sum(j.weight for j in items if j.importance == level) / total if total else 0.0)
        for level in Importance
    }
    return Score(
        commits=len(items),
        followed=sum(1 for j in items if j.followed),
        cuts=tuple(cuts),
        tiers=tiers,
        population=total,
    )


def by_month(judged: Sequence[Judged]) -> dict[str, Score]:
    months: dict[str, list[Judged]] = {}
    for j in judged:
        months.setdefault(j.committed_at.strftime("%Y-%m"), []).append(j)
    return {month: score(items) for month, items in sorted(months.items())}


def missed(judged: Iterable[Judged]) -> list[Judged]:
    """Followed-up commits ranked low, oldest first."""
    return sorted(
        (j for j in judged if j.followed and j.importance == Importance.LOW), key=lambda j: j.committed_at
    )


# -- beside the baselines --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Interval:
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class Versus:
    """One recall figure beside a rank by size at the same flagged share, and chance."""

    cut: str  # "high" | "medium+high"
    flagged: int  # commits at or above the cut (raw count)
    flagged_share: float  # weighted; also chance's recall
    hits: int  # positives at or above the cut (raw count)
    recall: float
    size_recall: float
    difference: Interval | None  # 95 % bootstrap interval of recall − size_recall

    @property
    def chance(self) -> float:
        return self.flagged_share


@dataclass(frozen=True, slots=True)
class KeyScore:
    """How well the tiers find one key's positives, beside size and chance."""

    name: str
    commits: int  # commits the key answers for (raw count)
    positives: int  # raw count
    positive_share: float  # weighted
    cuts: tuple[Versus, ...]
    auc: float | None  # the tier's ROC AUC; None without both positives and negatives
    size_auc: float | None
    auc_difference: Interval | None  # 95 % bootstrap interval of auc − size_auc
    score_auc: dict[str, float] = field(
        default_factory=dict
    )  # impact / risk scores, when every commit has one

    def cut(self, name: str) -> Versus:
        return next(c for c in self.cuts if c.cut == name)


Answer = Callable[[Judged], bool | None]  # positive, negative, or unknown (left out)


def versus_size(
    name: str,
    judged: Iterable[Judged],
    answer: Answer,
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> KeyScore | None:
    """The key's recall at each cut and its AUC, beside size and chance, with bootstrap intervals of
    (ours − size). None when the key answers for no commit or has no positive."""
    known = [(j, a) for j in judged if (a := answer(j)) is not None]
    if not known or not any(a for _, a in known):
        return None
    items = [j for j, _ in known]
    data = _Data.of(items, [a for _, a in known])
    both = bool(data.y.any() and not data.y.all())
    weights = data.resampled(resamples, seed) if resamples > 0 else np.empty((0, len(items)))
    cuts = []
    for cut, level in _CUT_LEVEL.items():
        share = data.share(data.w, level)[0]
        recall = data.recall(data.w, level)[0]
        size = data.size_recall(data.w, share)[0]
        difference = None
        if len(weights):
            shares = data.share(weights, level)
            difference = _interval(data.recall(weights, level) - data.size_recall(weights, shares))
        flagged = data.tier >= level
        cuts.append(
            Versus(
                cut=cut,
                flagged=int(flagged.sum()),
                flagged_share=float(share),
                hits=int((flagged & data.y).sum()),
                recall=float(recall),
                size_recall=float(size),
                difference=difference,
            )
        )
    auc = size_auc = None
    auc_difference = None
    scores: dict[str, float] = {}
    if both:
        auc = float(data.auc(data.w, data.tier)[0])
        size_auc = float(data.auc(data.w, data.lines)[0])
        if len(weights):
            auc_difference = _interval(data.auc(weights, data.tier) - data.auc(weights, data.lines))
        for label in ("impact", "risk"):
            values = [getattr(j, f"{label}_score") for j in items]
            if all(v is not None for v in values):
                scores[label] = float(data.auc(data.w, np.asarray(values, dtype=float))[0])
    return KeyScore(
        name=name,
        commits=len(items),
        positives=int(data.y.sum()),
        positive_share=float(data.w[data.y].sum() / data.w.sum()),
        cuts=tuple(cuts),
        auc=auc,
        size_auc=size_auc,
        auc_difference=auc_difference,
        score_auc=scores,
    )


def auc(scores: Sequence[float], positive: Sequence[bool], weights: Sequence[float] | None = None) -> float:
    """ROC AUC of scores for positive vs the rest (ties count half), weighted: the chance that a random
    positive scores above a random negative."""
    y = np.asarray(positive, dtype=bool)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    return float(_Data(w, y, np.zeros(len(y), int), np.zeros(len(y))).auc(w, np.asarray(scores, float))[0])


def _interval(values: np.ndarray) -> Interval | None:
    values = values[np.isfinite(values)]
    if not len(values):
        return None
    low, high = np.percentile(values, [2.5, 97.5])
    return Interval(float(low), float(high))


@dataclass(frozen=True, slots=True)
class _Data:
    """The commits of one key as arrays. Every figure takes weight rows (R × n): the judged weights
    (one row) or bootstrap resamples (weight × times drawn), so one code path computes both."""

    w: np.ndarray  # sampling weights
    y: np.ndarray  # positive
    tier: np.ndarray  # 2 high, 1 medium, 0 low
    lines: np.ndarray  # changed lines

    @classmethod
    def of(cls, items: Sequence[Judged], positive: Sequence[bool]) -> _Data:
        return cls(
            np.asarray([j.weight for j in items], dtype=float),
            np.asarray(positive, dtype=bool),
            np.asarray([_LEVEL[j.importance] for j in items], dtype=int),
            np.asarray([j.changed_lines for j in items], dtype=float),
        )

    def resampled(self, resamples: int, seed: int) -> np.ndarray:
        """Bootstrap weight rows: n draws with replacement within each weight class (a sampled run's
        followed-up commits and its random others are resampled apart, as they were drawn apart)."""
        rng = np.random.default_rng(seed)
        counts = np.zeros((resamples, len(self.w)))
        for value in np.unique(self.w):
            members = np.flatnonzero(self.w == value)
            counts[:, members] = rng.multinomial(
                len(members), np.full(len(members), 1 / len(members)), resamples
            )
        return counts * self.w

    def share(self, rows: np.ndarray, level: int) -> np.ndarray:
        rows = np.atleast_2d(rows)
        return rows[:, self.tier >= level].sum(axis=1) / rows.sum(axis=1)

    def recall(self, rows: np.ndarray, level: int) -> np.ndarray:
        rows = np.atleast_2d(rows)
        with np.errstate(invalid="ignore", divide="ignore"):
            return rows[:, (self.tier >= level) & self.y].sum(axis=1) / rows[:, self.y].sum(axis=1)

    def size_recall(self, rows: np.ndarray, shares: np.ndarray | float) -> np.ndarray:
        """Recall of flagging the largest commits up to each row's share; a tie group at the boundary
        counts in proportion (the expected recall of breaking ties at random)."""
        rows = np.atleast_2d(rows)
        order = np.argsort(-self.lines, kind="stable")
        lines = self.lines[order]
        starts = np.flatnonzero(np.r_[True, lines[1:] != lines[:-1]])
        group_w = np.add.reduceat(rows[:, order], starts, axis=1)
        group_p = np.add.reduceat(rows[:, order] * self.y[order], starts, axis=1)
        before = np.cumsum(group_w, axis=1) - group_w
        target = np.asarray(shares, dtype=float).reshape(-1, 1) * rows.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            taken = np.where(group_w > 0, np.clip((target - before) / group_w, 0.0, 1.0), 0.0)
            return (taken * group_p).sum(axis=1) / rows[:, self.y].sum(axis=1)

    def auc(self, rows: np.ndarray, scores: np.ndarray) -> np.ndarray:
        rows = np.atleast_2d(rows)
        order = np.argsort(scores, kind="stable")
        values = scores[order]
        starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
        pos = np.add.reduceat(rows[:, order] * self.y[order], starts, axis=1)
        neg = np.add.reduceat(rows[:, order] * ~self.y[order], starts, axis=1)
        below = np.cumsum(neg, axis=1) - neg
        with np.errstate(invalid="ignore", divide="ignore"):
            return (pos * (below + 0.5 * neg)).sum(axis=1) / (pos.sum(axis=1) * neg.sum(axis=1))


# -- the release-notes key -------------------------------------------------------------------------

USER_FACING = (Category.BREAKING, Category.FEATURE)  # "release-worthy" in the targets' strict sense
AMBIGUOUS = (Category.CHANGE, Category.OTHER)  # neither clearly user-facing nor clearly not: left out


@dataclass(frozen=True, slots=True)
class TierRow:
    """How one release-notes category was ranked."""

    label: str
    commits: int
    high: int
    medium_or_high: int
    high_share: float  # weighted
    medium_or_high_share: float


@dataclass(frozen=True, slots=True)
class Target:
    """A goal of the issue that asked for this key: the share of some categories at a cut."""

    name: str
    categories: tuple[str, ...]
    cut: str
    bound: float
    at_least: bool  # True: the share must reach bound; False: it must stay at or under it

    def met(self, share: float) -> bool:
        return share >= self.bound if self.at_least else share <= self.bound

    @property
    def goal(self) -> str:
        return f"{'≥' if self.at_least else '≤'} {100 * self.bound:.0f}%"


TARGETS = (
    Target("breaking at high", ("breaking",), "high", 0.80, True),
    Target("breaking+feature at medium+high", ("breaking", "feature"), "medium+high", 0.85, True),
    Target("docs/internal at medium+high", ("docs", "internal"), "medium+high", 0.15, False),
)


@dataclass(frozen=True, slots=True)
class NotesScore:
    rows: tuple[TierRow, ...]  # per category, most significant first, then "unlisted"
    targets: tuple[tuple[Target, KeyScore | None], ...]
    # "breaking/feature" and "listed" (when unlisted PRs count) → {"all": …, "shipped": …}
    keys: dict[str, dict[str, KeyScore | None]]
    shipped_known: int  # commits with a notes answer whose shipped paths are known (0: "unknown")


def notes_score(
    judged: Sequence[Judged], lists_changes: bool, *, resamples: int = RESAMPLES, seed: int = SEED
) -> NotesScore:
    """The release-notes key: each category's tiers, the targets' rows beside size and chance, and the
    tier's AUC for breaking/feature vs the rest and (when unlisted PRs count) for listed vs unlisted,
    over every commit and over those touching the shipped package."""
    known = [j for j in judged if j.notes is not None]
    labels = dict.fromkeys(
        [c.value for c in Category if any(j.notes == c for j in known)] + [UNLISTED] * lists_changes
    )
    rows = tuple(_row(label, [j for j in known if j.notes == label]) for label in labels)
    targets = tuple(
        (
            target,
            versus_size(
                target.name,
                known,
                lambda j, cats=target.categories: j.notes in cats,
                resamples=resamples,
                seed=seed,
            ),
        )
        for target in TARGETS
    )

    def user_facing(j: Judged) -> bool | None:
        return None if j.notes is None or j.notes in AMBIGUOUS else j.notes in USER_FACING

    def listed(j: Judged) -> bool | None:
        return None if j.notes is None else j.notes != UNLISTED

    answers = {"breaking/feature": user_facing, **({"listed": listed} if lists_changes else {})}
    shipped = [j for j in known if j.shipped]
    shipped_known = sum(1 for j in known if j.shipped is not None)
    keys = {
        name: {
            "all": versus_size(name, known, answer, resamples=resamples, seed=seed),
            "shipped": (
                versus_size(name, shipped, answer, resamples=resamples, seed=seed) if shipped_known else None
            ),
        }
        for name, answer in answers.items()
    }
    return NotesScore(rows, targets, keys, shipped_known)


def _row(label: str, items: list[Judged]) -> TierRow:
    total = sum(j.weight for j in items)
    high = [j for j in items if j.importance == Importance.HIGH]
    flagged = [j for j in items if j.importance != Importance.LOW]
    return TierRow(
        label=label,
        commits=len(items),
        high=len(high),
        medium_or_high=len(flagged),
        high_share=sum(j.weight for j in high) / total if total else 0.0,
        medium_or_high_share=sum(j.weight for j in flagged) / total if total else 0.0,
    )
