"""What the branch's history says about one commit (`HistoryFacts`) and about one touched path
(`PathRecord`): what analysis/history/index.py works out, the rubric weighs and the LLM prompt states. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis.history.followups import FollowUpLink


@dataclass(frozen=True, slots=True)
class PathRecord:
    path: str  # a file, or a folder ending in "/"
    touches: int  # commits that touched it in the window
    followed: int  # of those, later reverted or fixed forward (known before the cutoff)
    rate: float  # smoothed share followed up

    @property
    def is_folder(self) -> bool:
        return self.path.endswith("/")


@dataclass(frozen=True, slots=True)
class HistoryFacts:
    """What history says about one commit, as of its day's cutoff."""

    window_days: int
    commits_seen: int  # commits of the branch in the trailing window
    followed_seen: int  # of those, followed up before the cutoff
    risky_paths: tuple[PathRecord, ...] = ()  # the touched paths with the highest smoothed rate, best first
    churn: int = 0  # commits in the last CHURN_DAYS that touched one of the same files
    follows_up: tuple[FollowUpLink, ...] = ()  # earlier commits this one reverts or fixes
    source_without_tests: bool = False
    areas: int = 0  # top-level areas (first two folder levels) with runtime code
    score: float = 0.0  # risk score (see `risk_score`)
    percentile: float | None = (
        None  # share of the window's past commits scoring below; None: too little history
    )
    baseline: int = 0  # the past commits the percentile is taken among (automated ones left out)
    own_trees: tuple[str, ...] = ()  # vendored-looking trees it touches that the branch maintains itself

    @property
    def base_rate(self) -> float:
        return self.followed_seen / self.commits_seen if self.commits_seen else 0.0

    @property
    def path_lift(self) -> float:
        """The riskiest touched path's smoothed rate over the base rate (1.0: no different)."""
        if not self.risky_paths or not self.base_rate:
            return 1.0
        return self.risky_paths[0].rate / self.base_rate

    def as_prompt(self) -> dict[str, object]:
        """Compact data for an LLM prompt: figures and paths only, no commit text."""
        data: dict[str, object] = {
            "history_days": self.window_days,
            "branch_commits": self.commits_seen,
            "branch_followed_up_pct": round(100 * self.base_rate, 1),
        }
        if self.risky_paths:
            data["touched_paths_history"] = [
                {"path": p.path, "changes": p.touches, "later_reverted_or_fixed": p.followed}
                for p in self.risky_paths
            ]
        if self.churn:
            data["recent_changes_to_same_files"] = self.churn
        if self.follows_up:
            data["this_commit_follows_up"] = [
                {"kind": link.kind.value, "original": link.original[:12]} for link in self.follows_up
            ]
        if self.own_trees:  # a vendored-looking folder the branch edits as its own: read it as its code
            data["vendored_looking_folders_maintained_here"] = list(self.own_trees)
        if self.source_without_tests:
            data["source_changed_without_tests"] = True
        if self.areas > 1:
            data["areas_spanned"] = self.areas
        if self.percentile is not None:
            data["risk_percentile_vs_past_commits"] = round(100 * self.percentile)
        return data
