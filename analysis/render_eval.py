"""`digestbot eval` output: a plain-text table for people and a JSON document for scripts."""

from __future__ import annotations

from typing import Any

from analysis.scoring import Judged, Score
from analysis.text import one_line

MISSED_SHOWN = 40


def eval_table(result: Any) -> str:
    """result: bot.evaluate.EvalResult (duck-typed: this module stays free of the application)."""
    s: Score = result.score
    mh, high = s.cut("medium+high"), s.cut("high")
    sampled = (
        f", sample {result.sample} + every followed-up commit (weighted)" if result.sample is not None else ""
    )
    lines = [
        f"{result.repo}@{result.branch} {result.since} .. {result.until} ({result.timezone}), "
        f"analyser {result.analyzer}, horizon {result.horizon_days} days{sampled}",
        f"commits {s.commits:,.0f}; later reverted or fixed within the horizon: {s.followed:,.0f} "
        f"({_pct(s.followed / s.commits if s.commits else 0)})",
        f"tiers: high {_pct(s.tiers['high'])}, medium {_pct(s.tiers['medium'])}, low {_pct(s.tiers['low'])}",
        "",
        f"{'cut':<12} {'recall':>8} {'flagged':>8} {'lift':>6} {'precision':>10}",
    ]
    for cut in (mh, high):
        lines.append(
            f"{cut.name:<12} {_pct(cut.recall):>8} {_pct(cut.flagged_share):>8} {cut.lift:>6.2f} {_pct(cut.precision):>10}"
        )
    lines += [
        "",
        f"{'month':<8} {'commits':>8} {'followed':>9} {'recall M+H':>11} {'flagged':>8} {'recall H':>9} {'high':>6}",
    ]
    for month, m in result.months.items():
        lines.append(
            f"{month:<8} {m.commits:>8,.0f} {m.followed:>9,.0f} {_pct(m.cut('medium+high').recall):>11}"
            f" {_pct(m.cut('medium+high').flagged_share):>8} {_pct(m.cut('high').recall):>9}"
            f" {_pct(m.cut('high').flagged_share):>6}"
        )
    if result.missed:
        lines += ["", f"missed (followed up, ranked low): {len(result.missed)}"]
        for j in result.missed[:MISSED_SHOWN]:
            lines.append(f"  {j.sha[:10]} {j.committed_at:%Y-%m-%d} {one_line(j.title)[:80]}")
            lines.append(
                f"      {j.kind} by {j.followed_by[:10] if j.followed_by else '?'}; reason: {one_line(j.reason)[:300]}"
            )
        if len(result.missed) > MISSED_SHOWN:
            lines.append(f"  … and {len(result.missed) - MISSED_SHOWN} more (--format json lists them all)")
    return "\n".join(lines) + "\n"


def eval_json(result: Any) -> dict[str, Any]:
    s: Score = result.score
    return {
        "repo": result.repo,
        "branch": result.branch,
        "since": result.since.isoformat(),
        "until": result.until.isoformat(),
        "timezone": result.timezone,
        "horizon_days": result.horizon_days,
        "analyzer": result.analyzer,
        "sample": result.sample,
        "commits": s.commits,
        "followed_up": s.followed,
        "tiers": s.tiers,
        "cuts": {c.name: _cut(c) for c in s.cuts},
        "months": {
            month: {
                "commits": m.commits,
                "followed_up": m.followed,
                "cuts": {c.name: _cut(c) for c in m.cuts},
            }
            for month, m in result.months.items()
        },
        "followed_up_commits": [_judged(j) for j in result.judged if j.followed],
        "missed": [_judged(j) for j in result.missed],
    }


def _cut(cut: Any) -> dict[str, float]:
    return {
        "recall": cut.recall,
        "flagged_share": cut.flagged_share,
        "lift": cut.lift,
        "precision": cut.precision,
    }


def _judged(j: Judged) -> dict[str, Any]:
    return {
        "sha": j.sha,
        "title": j.title,
        "committed_at": j.committed_at.isoformat(),
        "follow_up": j.followed_by,
        "kind": j.kind,
        "rank": j.importance.value,
        "reason": j.reason,
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"
