"""An LLM card's insight rows the model left unknown, filled with what the rules found for them.

A small model often fills two or three of a high card's six rows and leaves the rest empty (shown as
"Unknown"); the rules have facts for some of those (the tests beside the source, the dependencies touched),
which say more than "Unknown". Rows the rules have no facts for either stay unknown.
"""

from __future__ import annotations

from analysis.labels import label
from analysis.models import Analysis


def with_known_insights(analysis: Analysis, found: dict[str, str], lang: str) -> tuple[Analysis, list[str]]:
    """A copy with each unknown insight row that `found` (the rules' facts by dimension) has filled from it, and
    the dimensions filled (the same analysis and [] when none was)."""
    unknown = label(lang, "unknown")
    filled = [dim for dim, text in analysis.insights.items() if text == unknown and found.get(dim)]
    if not filled:
        return analysis, []
    insights = {dim: found[dim] if dim in filled else text for dim, text in analysis.insights.items()}
    return analysis.model_copy(update={"insights": insights}), filled
