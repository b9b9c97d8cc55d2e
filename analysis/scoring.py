"""Scoring ranks against the repository's own answer key: did the commits we flagged later need a
revert or a fix? Pure: judged commits in, figures out (`digestbot eval` prints them).

A commit is *followed up* when a later commit reverted or fixed it within the horizon. For a tier
cut (high, or medium and above): recall is the share of followed-up commits at or above the cut,
flagged share the share of all commits there, lift recall ÷ flagged share (1.0 is chance), precision
the share of flagged commits that were followed up. Sampled runs weight each unsampled commit's
stand-in so that every figure estimates the full population's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from analysis.models import Importance


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

    @property
    def followed(self) -> bool:
        return self.followed_by is not None


@dataclass(frozen=True, slots=True)
class Cut:
    name: str  # "high" or "medium+high"
    recall: float
    flagged_share: float
    precision: float
    hits: float  # followed-up commits at or above the cut (weighted)

    @property
    def lift(self) -> float:
        return self.recall / self.flagged_share if self.flagged_share else 0.0


@dataclass(frozen=True, slots=True)
class Score:
    commits: float  # weighted: the population size
    followed: float
    cuts: tuple[Cut, ...]
    tiers: dict[str, float] = field(default_factory=dict)  # share of commits per tier

    def cut(self, name: str) -> Cut:
        return next(c for c in self.cuts if c.name == name)


CUTS = (
    ("medium+high", frozenset({Importance.HIGH, Importance.MEDIUM})),
    ("high", frozenset({Importance.HIGH})),
)


def score(judged: Iterable[Judged]) -> Score:
    items = list(judged)
    total = sum(j.weight for j in items)
    followed = sum(j.weight for j in items if j.followed)
    cuts = []
    for name, tiers in CUTS:
        flagged = [j for j in items if j.importance in tiers]
        flagged_weight = sum(j.weight for j in flagged)
        hits = sum(j.weight for j in flagged if j.followed)
        cuts.append(
            Cut(
                name=name,
                recall=hits / followed if followed else 0.0,
                flagged_share=flagged_weight / total if total else 0.0,
                precision=hits / flagged_weight if flagged_weight else 0.0,
                hits=hits,
            )
        )
    tiers = {
        level.value: (sum(j.weight for j in items if j.importance == level) / total if total else 0.0)
        for level in Importance
    }
    return Score(commits=total, followed=followed, cuts=tuple(cuts), tiers=tiers)


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
