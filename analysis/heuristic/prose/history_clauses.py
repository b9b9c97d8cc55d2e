"""What the branch's history shows, in words, once it is worth saying: a path whose changes were often
followed up, the commits this one follows up, recent churn, several areas."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis.heuristic.phrases import t
from analysis.heuristic.prose.wording import code_span, listed_items, num

if TYPE_CHECKING:
    from analysis.history.facts import HistoryFacts


# What history must show before the reason names it: a path at least this many times the branch's
# follow-up rate, recent churn on the same files, several areas.
_PATH_LIFT_SHOWN = 2.0
_FOLLOWED_SHOWN = 2
_CHURN_SHOWN = 10
_AREAS_SHOWN = 3


def history_risks(history: HistoryFacts, lang: str) -> list[str]:
    """What the branch's past says might break: paths whose changes were often followed up, and
    a commit that is itself a fix (fixes get fixed again)."""
    found = []
    worst = history.risky_paths[0] if history.risky_paths else None
    if worst is not None and worst.followed >= _FOLLOWED_SHOWN and history.path_lift >= _PATH_LIFT_SHOWN:
        found.append(
            t(lang, "risk_hist_path", path=code_span(worst.path), k=num(worst.followed), n=num(worst.touches))
        )
    if history.follows_up:
        shas = listed_items(lang, [link.original[:7] for link in history.follows_up])
        found.append(t(lang, "risk_hist_follow_up", items=shas))
    return found


def history_text(history: HistoryFacts, lang: str) -> list[str]:
    """What history shows beside the percentile, as short clauses."""
    parts = []
    worst = history.risky_paths[0] if history.risky_paths else None
    if worst is not None and worst.followed >= _FOLLOWED_SHOWN and history.path_lift >= _PATH_LIFT_SHOWN:
        parts.append(
            t(lang, "hist_path", path=code_span(worst.path), k=num(worst.followed), n=num(worst.touches))
        )
    for link in history.follows_up[:2]:
        parts.append(t(lang, f"hist_follows_{link.kind.value}", sha=code_span(link.original[:7])))
    if history.churn >= _CHURN_SHOWN:
        parts.append(t(lang, "hist_churn", n=num(history.churn)))
    if history.areas >= _AREAS_SHOWN:
        parts.append(t(lang, "hist_areas", n=num(history.areas)))
    return parts
