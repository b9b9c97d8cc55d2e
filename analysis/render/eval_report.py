"""`digestbot eval` output: a plain-text table for people and a JSON document for scripts (its shape:
bot/json_schema.py EvalJSON, docs/json.md). Every recall stands beside a rank by size at the same
flagged share and chance, with the 95 % bootstrap interval of (ours − size); counts are integers."""

from __future__ import annotations

from typing import Any

from analysis.evaluation.scoring import SEED, Interval, Judged, KeyScore, NotesScore, Score, Versus
from analysis.text import one_line, printable

MISSED_SHOWN = 40
HEADINGS_SHOWN = 8


def eval_table(result: Any) -> str:
    """result: bot.digest.evaluate.EvalResult (duck-typed: this module stays free of the application).
    The table goes to a terminal: the commit titles, reasons, paths and release-note headings in it are
    untrusted, so terminal escapes, other control characters and bidi overrides are taken out."""
    s: Score = result.score
    sampled = (
        f", sample {result.sample} + every followed-up commit (weighted)" if result.sample is not None else ""
    )
    ranked = f"{s.commits:,} ranked"
    if s.commits != result.span_commits:
        ranked += f" of the span's {result.span_commits:,}"
    lines = [
        f"{result.repo}@{result.branch} {result.since} .. {result.until} ({result.timezone}), "
        f"analyser {result.analyzer}, horizon {result.horizon_days} days{sampled}",
        f"commits {ranked}; tiers: high {_pct(s.tiers['high'])}, medium {_pct(s.tiers['medium'])},"
        f" low {_pct(s.tiers['low'])}",
        "",
        f"follow-ups: later reverted or fixed within the horizon: {s.followed:,}"
        f" ({_pct(result.follow_ups.positive_share if result.follow_ups else 0.0)})",
    ]
    if result.follow_ups is not None:
        lines += _versus_table(result.follow_ups, s)
        lines.append(_auc_line("ROC AUC", result.follow_ups))
    lines += [
        "",
        f"{'month':<8} {'commits':>8} {'followed':>9} {'recall M+H':>11} {'size':>6} {'flagged':>8}"
        f" {'recall H':>9} {'size':>6} {'high':>6}",
    ]
    for month, m in result.months.items():
        mh, high = m.cut("medium+high"), m.cut("high")
        lines.append(
            f"{month:<8} {m.commits:>8,} {m.followed:>9,} {_pct(mh.recall):>11} {_pct(mh.size_recall):>6}"
            f" {_pct(mh.flagged_share):>8} {_pct(high.recall):>9} {_pct(high.size_recall):>6}"
            f" {_pct(high.flagged_share):>6}"
        )
    lines += ["", *_notes_lines(result)]
    if result.missed:
        lines += ["", f"missed (followed up, ranked low): {len(result.missed)}"]
        for j in result.missed[:MISSED_SHOWN]:
            lines.append(f"  {j.sha[:10]} {j.committed_at:%Y-%m-%d} {one_line(printable(j.title))[:80]}")
            lines.append(
                f"      {j.kind} by {j.followed_by[:10] if j.followed_by else '?'}; reason: {one_line(printable(j.reason))[:300]}"
            )
        if len(result.missed) > MISSED_SHOWN:
            lines.append(f"  … and {len(result.missed) - MISSED_SHOWN} more (--format json lists them all)")
    lines += [
        "",
        "size: the same share of commits flagged by most lines changed; chance: recall = share flagged;"
        f" [95% CI]: bootstrap of ours − size ({result.resamples:,} resamples, seed {SEED})",
    ]
    return printable("\n".join(lines)) + "\n"


def _versus_table(key: KeyScore, s: Score | None = None) -> list[str]:
    lines = [
        f"{'cut':<12} {'recall (hits)':>20} {'flagged':>16} {'size':>6} {'chance':>7}  {'ours − size [95% CI]':<26}"
        + (f" {'lift':>5} {'precision':>9}" if s else "")
    ]
    for v in key.cuts:
        extra = ""
        if s is not None:
            cut = s.cut(v.cut)
            extra = f" {cut.lift:>5.2f} {_pct(cut.precision):>9}"
        lines.append(
            f"{v.cut:<12} {_pct(v.recall) + f' ({v.hits:,}/{key.positives:,})':>20}"
            f" {_pct(v.flagged_share) + f' ({v.flagged:,})':>16} {_pct(v.size_recall):>6} {_pct(v.chance):>7}"
            f"  {_points(v.recall - v.size_recall, v.difference):<26}{extra}"
        )
    return lines


def _auc_line(label: str, key: KeyScore | None, indent: str = "") -> str:
    if key is None:
        return f"{indent}{label}: no positive commit"
    if key.auc is None or key.size_auc is None:
        return f"{indent}{label}: n/a (every commit of the key is positive)"
    scores = "".join(f"; {name} score {value:.3f}" for name, value in key.score_auc.items())
    return (
        f"{indent}{label}: tier {key.auc:.3f}, size {key.size_auc:.3f}, tier − size"
        f" {_signed(key.auc - key.size_auc, key.auc_difference, 3)}{scores}"
        f"  ({key.commits:,} commits, {key.positives:,} positive)"
    )


def _notes_lines(result: Any) -> list[str]:
    found = result.notes
    if found is None or result.notes_score is None:
        return [f"release notes: none ({result.notes_status})"]
    ns: NotesScore = result.notes_score
    lines = [
        f"release notes: {found.path} lists {len(found.notes.prs):,} pull requests"
        + (f" and {len(found.notes.commits):,} commits by their link" if found.notes.commits else "")
        + f"; {found.key.reason}",
        f"{'category':<12} {'commits':>8} {'high':>16} {'medium+high':>16}",
    ]
    for row in ns.rows:
        lines.append(
            f"{row.label:<12} {row.commits:>8,} {_pct(row.high_share) + f' ({row.high:,})':>16}"
            f" {_pct(row.medium_or_high_share) + f' ({row.medium_or_high:,})':>16}"
        )
    lines += [
        "",
        f"{'':<34} {'ours (hits/n)':>20} {'flagged':>8} {'size':>6} {'chance':>7}  {'ours − size [95% CI]':<26} goal",
    ]
    for target, key in ns.targets:
        if key is None:
            lines.append(f"{target.name:<34} {'no such commit':>20}")
            continue
        v = key.cut(target.cut)
        verdict = "met" if target.met(v.recall) else "missed"
        lines.append(
            f"{target.name:<34} {_pct(v.recall) + f' ({v.hits:,}/{key.positives:,})':>20}"
            f" {_pct(v.flagged_share):>8} {_pct(v.size_recall):>6} {_pct(v.chance):>7}"
            f"  {_points(v.recall - v.size_recall, v.difference):<26} {target.goal} {verdict}"
        )
    names = {"breaking/feature": "breaking/feature vs the rest", "listed": "listed vs unlisted"}
    for name, keys in ns.keys.items():
        lines.append(_auc_line(f"ROC AUC, {names.get(name, name)}", keys["all"]))
        if not ns.shipped_known:
            lines.append(
                "  among commits touching the shipped package: unknown (no commit's shipped paths known)"
            )
        else:
            lines.append(_auc_line("among commits touching the shipped package", keys["shipped"], "  "))
    lines.append("  (change and other are neither: left out of breaking/feature vs the rest)")
    unclassified = found.notes.unclassified_headings
    if unclassified:
        shown = ", ".join(unclassified[:HEADINGS_SHOWN])
        more = f" and {len(unclassified) - HEADINGS_SHOWN} more" if len(unclassified) > HEADINGS_SHOWN else ""
        lines.append(
            f"headings listing pull requests under no category word (counted as other): {shown}{more}"
        )
    return lines


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
        "span_commits": result.span_commits,
        "commits": s.commits,
        "followed_up": s.followed,
        "tiers": s.tiers,
        "cuts": {c.name: _cut(c) for c in s.cuts},
        "follow_ups": _key(result.follow_ups),
        "months": {
            month: {
                "commits": m.commits,
                "followed_up": m.followed,
                "cuts": {c.name: _cut(c) for c in m.cuts},
            }
            for month, m in result.months.items()
        },
        "release_notes": _notes(result),
        "release_notes_status": result.notes_status or None,
        "bootstrap": {"resamples": result.resamples, "seed": SEED, "level": 0.95},
        "ranked_commits": [_ranked(j) for j in result.judged],
        "missed": [_ranked(j) for j in result.missed],
    }


def _cut(cut: Any) -> dict[str, Any]:
    return {
        "recall": cut.recall,
        "flagged_share": cut.flagged_share,
        "lift": cut.lift,
        "precision": cut.precision,
        "hits": cut.hits,
        "size_recall": cut.size_recall,
    }


def _key(key: KeyScore | None) -> dict[str, Any] | None:
    if key is None:
        return None
    return {
        "commits": key.commits,
        "positives": key.positives,
        "positive_share": key.positive_share,
        "cuts": {v.cut: _versus(v) for v in key.cuts},
        "auc": {
            "tier": key.auc,
            "size": key.size_auc,
            "difference": _interval(key.auc_difference),
            **{f"{name}_score": value for name, value in key.score_auc.items()},
        },
    }


def _versus(v: Versus) -> dict[str, Any]:
    return {
        "flagged": v.flagged,
        "flagged_share": v.flagged_share,
        "hits": v.hits,
        "recall": v.recall,
        "size_recall": v.size_recall,
        "chance": v.chance,
        "difference": _interval(v.difference),
    }


def _interval(interval: Interval | None) -> dict[str, float] | None:
    return {"low": interval.low, "high": interval.high} if interval else None


def _notes(result: Any) -> dict[str, Any] | None:
    found, ns = result.notes, result.notes_score
    if found is None or ns is None:
        return None
    key = found.key
    return {
        "file": found.path,
        "listed_in_file": len(found.notes.prs),
        "home": found.notes.home,
        "listed_in_span": key.listed,
        "pull_requests_covered": key.with_pr,
        "covered_from": key.covered_from.isoformat() if key.covered_from else None,
        "covered_to": key.covered_to.isoformat() if key.covered_to else None,
        "lists_changes": key.lists_changes,
        "reason": key.reason,
        "unclassified_headings": list(found.notes.unclassified_headings),
        "categories": [
            {
                "category": row.label,
                "commits": row.commits,
                "high": row.high,
                "medium_or_high": row.medium_or_high,
                "high_share": row.high_share,
                "medium_or_high_share": row.medium_or_high_share,
            }
            for row in ns.rows
        ],
        "targets": [
            {
                "name": target.name,
                "categories": list(target.categories),
                "cut": target.cut,
                "goal": target.goal,
                "met": target.met(key_score.cut(target.cut).recall) if key_score else None,
                "score": _key(key_score),
            }
            for target, key_score in ns.targets
        ],
        "shipped_known": ns.shipped_known,
        "keys": {name: {part: _key(k) for part, k in parts.items()} for name, parts in ns.keys.items()},
    }


def _ranked(j: Judged) -> dict[str, Any]:
    return {
        "sha": j.sha,
        "title": j.title,
        "committed_at": j.committed_at.isoformat(),
        "tier": j.importance.value,
        "impact_score": j.impact_score,
        "risk_score": j.risk_score,
        "changed_lines": j.changed_lines,
        "weight": j.weight,
        "follow_up": j.followed_by,
        "follow_up_kind": j.kind,
        "release_notes": j.notes,
        "shipped": j.shipped,
        "reason": j.reason,
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _points(difference: float, interval: Interval | None) -> str:
    """A difference of two shares in percentage points, with its interval."""
    shown = f"{round(100 * difference, 1) + 0.0:+.1f} pts"  # + 0.0: never "-0.0"
    if interval is None:
        return shown
    return f"{shown} [{100 * interval.low:+.1f}, {100 * interval.high:+.1f}]"


def _signed(difference: float, interval: Interval | None, digits: int) -> str:
    shown = f"{round(difference, digits) + 0.0:+.{digits}f}"
    if interval is None:
        return shown
    return f"{shown} [{interval.low:+.{digits}f}, {interval.high:+.{digits}f}]"
