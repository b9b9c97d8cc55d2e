"""The heuristic analysis's text in Chinese or English: the importance reason, summary, scope,
risks, recommendations, insights and notes. Everything here only formats facts computed by the
other modules; untrusted commit text is cut, stripped of trailers, e-mails, mentions and Markdown
constructs before use (wording.py).

The parts: the shared wording (wording.py), surface changes in words (surface_changes.py), what history
shows (history_clauses.py), the phrases of a commit's facts (fact_phrases.py); the fields written from
them: the reason line (reason_line.py), summary, scope and notes (summaries.py), risks and
recommendations (risks_and_advice.py), the high tier's insights (insights_by_dimension.py).
"""

from analysis.heuristic.prose.insights_by_dimension import breaking_compatibility, found_insights, insights
from analysis.heuristic.prose.reason_line import REASON_FACTS, RISK_ITEMS, reason, scoring_words
from analysis.heuristic.prose.risks_and_advice import breaking_risks, recommendations, risks
from analysis.heuristic.prose.summaries import notes, scope, summary
from analysis.heuristic.prose.surface_changes import brief, describe

__all__ = [
    "REASON_FACTS",
    "RISK_ITEMS",
    "breaking_compatibility",
    "breaking_risks",
    "brief",
    "describe",
    "found_insights",
    "insights",
    "notes",
    "reason",
    "recommendations",
    "risks",
    "scope",
    "scoring_words",
    "summary",
]
