"""The figures `digestbot eval` prints, against hand computations: recall beside size and chance, ROC
AUC with ties and weights, bootstrap intervals, and the release-notes key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from analysis.evaluation.scoring import Judged, _Data, auc, notes_score, score, versus_size
from analysis.models import Importance

H, M, L = Importance.HIGH, Importance.MEDIUM, Importance.LOW
T0 = datetime(2025, 9, 1, tzinfo=UTC)


def judged(n: int, tier: Importance, lines: int, *, followed: bool = False, **kw) -> Judged:
    return Judged(
        sha=f"{n:040x}",
        title=f"c{n}",
        committed_at=T0 + timedelta(hours=n),
        importance=tier,
        reason="",
        followed_by="f" * 40 if followed else None,
        kind="fix" if followed else None,
        changed_lines=lines,
        **kw,
    )


def test_auc_by_hand_with_ties_and_weights():
    # Positives score 2 and 1, negatives 1 and 0: pairs won 1, 1, 0.5 (tie), 1 of 4.
    assert auc([2, 1, 0, 1], [True, False, False, True]) == pytest.approx(3.5 / 4)
    # The negative scoring 1 weighs 2: (1·2 + 1·1 + 0.5·2 + 1·1) / (2 · 3) = 5 / 6.
    assert auc([2, 1, 0, 1], [True, False, False, True], [1, 2, 1, 1]) == pytest.approx(5 / 6)
    assert auc([1, 1, 1], [True, False, False]) == 0.5  # no separation at all
    assert auc([0, 5, 9], [False, True, True]) == 1.0


def test_size_recall_splits_a_tie_at_the_boundary():
    # Flag 40 % (2 of 5) by size: the 100-line commit, then one of the three 50-line commits (one of
    # them positive): expected hits 1/3 of the 2 positives.
    data = _Data(
        np.ones(5),
        np.array([False, True, False, False, True]),
        np.zeros(5, int),
        np.array([100, 50, 50, 50, 10.0]),
    )
    assert data.size_recall(data.w, 0.4)[0] == pytest.approx(1 / 6)
    assert data.size_recall(data.w, 0.8)[0] == pytest.approx(0.5)  # all 50s, not the 10-line positive
    assert data.size_recall(data.w, 1.0)[0] == pytest.approx(1.0)


@pytest.fixture
def ranked() -> list[Judged]:
    """40 commits: every 8th followed up; tiers track size loosely; the followed-up ones rank higher
    than their size says."""
    items = []
    for n in range(40):
        lines = 10 + 37 * ((n * 7) % 40)
        followed = n % 8 == 0
        tier = H if followed and n % 16 == 0 else M if followed or lines > 900 else L
        items.append(judged(n, tier, lines, followed=followed))
    return items


def test_recall_beside_size_and_chance(ranked):
    key = versus_size("follow-ups", ranked, lambda j: j.followed)
    assert key is not None and (key.commits, key.positives) == (40, 5)
    high, mh = key.cut("high"), key.cut("medium+high")
    assert (high.flagged, high.hits) == (3, 3) and high.recall == pytest.approx(3 / 5)
    assert high.flagged_share == pytest.approx(3 / 40) and high.chance == high.flagged_share
    # By size, the same 3 commits flagged are the 3 largest: which of them are followed up?
    largest = sorted(ranked, key=lambda j: -j.changed_lines)[:3]
    assert high.size_recall == pytest.approx(sum(j.followed for j in largest) / 5)
    assert isinstance(mh.flagged, int) and isinstance(mh.hits, int)
    assert mh.difference is not None and mh.difference.low <= mh.recall - mh.size_recall <= mh.difference.high
    assert key.auc is not None and key.size_auc is not None and key.auc > key.size_auc


def test_bootstrap_is_reproducible_with_its_seed(ranked):
    first = versus_size("k", ranked, lambda j: j.followed, seed=7)
    again = versus_size("k", ranked, lambda j: j.followed, seed=7)
    other = versus_size("k", ranked, lambda j: j.followed, seed=8)
    assert first == again
    assert first.auc_difference != other.auc_difference
    assert first.auc == other.auc  # the point figures do not depend on the seed


def test_bootstrap_resamples_within_each_weight_class():
    # A sampled run: 3 followed-up commits (weight 1) and 4 others each standing for 5.
    items = [judged(n, M, 10 * n, followed=n < 3, weight=1.0 if n < 3 else 5.0) for n in range(7)]
    data = _Data.of(items, [j.followed for j in items])
    rows = data.resampled(200, seed=1)
    assert np.allclose(rows[:, :3].sum(axis=1), 3) and np.allclose(rows[:, 3:].sum(axis=1), 20)
    key = versus_size("k", items, lambda j: j.followed)
    assert key.positive_share == pytest.approx(3 / 23)  # weighted: the population's share


def test_unknown_answers_are_left_out_and_a_key_without_positives_is_none(ranked):
    key = versus_size("k", ranked, lambda j: None if j.changed_lines < 500 else j.followed)
    assert key is not None and key.commits == sum(1 for j in ranked if j.changed_lines >= 500)
    assert versus_size("k", ranked, lambda j: False) is None
    everything = versus_size("k", ranked, lambda j: True)
    assert everything is not None and everything.auc is None  # no negative: no AUC


def test_impact_and_risk_scores_get_an_auc_when_every_commit_has_them(ranked):
    scored = [
        Judged(
            **{
                **{f: getattr(j, f) for f in j.__slots__},
                "risk_score": float(j.followed),
                "impact_score": 0.5,
            }
        )
        for j in ranked
    ]
    key = versus_size("k", scored, lambda j: j.followed)
    assert key.score_auc == {"impact": 0.5, "risk": 1.0}
    assert versus_size("k", ranked, lambda j: j.followed).score_auc == {}


def test_follow_up_score_counts_are_integers_beside_weighted_shares(ranked):
    s = score(ranked)
    assert (s.commits, s.followed) == (40, 5) and isinstance(s.cut("high").hits, int)
    assert s.cut("high").size_recall == versus_size("k", ranked, lambda j: j.followed).cut("high").size_recall


def notes_judged() -> list[Judged]:
    """Two breaking (high, medium), three features (high, medium, low), four docs (one medium), two
    internal (low), a change, and six unlisted (one high)."""
    spec = [
        ("breaking", H, 900), ("breaking", M, 40), ("feature", H, 500), ("feature", M, 300),
        ("feature", L, 20), ("docs", M, 600), ("docs", L, 5), ("docs", L, 8), ("docs", L, 3),
        ("internal", L, 12), ("internal", L, 700), ("change", M, 50), ("unlisted", H, 800),
        *[("unlisted", L, 10 + n) for n in range(5)], (None, H, 1000),
    ]  # fmt: skip
    return [judged(n, tier, lines, notes=cat) for n, (cat, tier, lines) in enumerate(spec)]


def test_release_notes_rows_targets_and_keys():
    ns = notes_score(notes_judged(), lists_changes=True)
    rows = {r.label: (r.commits, r.high, r.medium_or_high) for r in ns.rows}
    assert rows == {
        "breaking": (2, 1, 2),
        "feature": (3, 1, 2),
        "change": (1, 0, 1),
        "docs": (4, 0, 1),
        "internal": (2, 0, 0),
        "unlisted": (6, 1, 1),
    }
    targets = {t.name: (t, k) for t, k in ns.targets}
    target, key = targets["breaking at high"]
    assert key.cut("high").recall == 0.5 and not target.met(0.5)
    target, key = targets["breaking+feature at medium+high"]
    assert key.cut("medium+high").recall == pytest.approx(4 / 5) and not target.met(0.8)
    target, key = targets["docs/internal at medium+high"]
    assert (
        key.cut("medium+high").recall == pytest.approx(1 / 6) and not target.met(1 / 6) and target.met(0.15)
    )
    # breaking/feature vs the rest leaves the change out; listed vs unlisted counts every listed commit.
    assert ns.keys["breaking/feature"]["all"].commits == 17 and ns.keys["listed"]["all"].commits == 18
    assert ns.keys["breaking/feature"]["all"].positives == 5 and ns.keys["listed"]["all"].positives == 12
    assert ns.shipped_known == 0 and ns.keys["listed"]["shipped"] is None


def test_release_notes_without_a_listing_repository_and_with_shipped_paths():
    items = [
        Judged(**{**{f: getattr(j, f) for f in j.__slots__}, "shipped": j.changed_lines > 100})
        for j in notes_judged()
        if j.notes != "unlisted"
    ]
    ns = notes_score(items, lists_changes=False)
    assert "listed" not in ns.keys and "unlisted" not in {r.label for r in ns.rows}
    assert ns.shipped_known == 12
    shipped = ns.keys["breaking/feature"]["shipped"]
    assert shipped is not None and shipped.commits == sum(
        1 for j in items if j.shipped and j.notes not in (None, "change", "other")
    )
