"""The reason line: the two scores' decisive facts (at most REASON_FACTS each, then how many more) and what
decided the tier."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from analysis.heuristic.facts import Facts
from analysis.heuristic.phrases import t
from analysis.heuristic.prose.history_clauses import history_text
from analysis.heuristic.prose.surface_changes import brief
from analysis.heuristic.prose.wording import code_span, num
from analysis.heuristic.scores import CAP_LEVELS, FLOOR_KEYS, Judgment
from analysis.heuristic.signals import BREAKING_KEYS, Signal
from analysis.labels import importance_word

if TYPE_CHECKING:
    from analysis.history.facts import HistoryFacts


def reason(facts: Facts, judgment: Judgment, lang: str, history: HistoryFacts | None = None) -> str:
    """The two scores' decisive facts and what decided the tier, short enough to read at a glance: at most
    REASON_FACTS facts per score, then how many more; names as users type them, no code expressions.
    "impact (high): breaks users: removes `Config.old` (no alias) and 4 more; risk (medium): 120 changed
    lines in 3 files, riskier than 70% of the last 180 days' commits; decided by impact"."""
    impact = _impact_clause(judgment.signals, lang)
    risk = _risk_clauses(facts, judgment, lang, history)
    return t(lang, "sep").join(
        [
            t(lang, "impact", tier=importance_word(lang, judgment.impact_tier), facts=impact),
            t(lang, "risk", tier=importance_word(lang, judgment.risk_tier), facts=risk),
            t(lang, f"decided_{judgment.decided_by}", path=code_span(judgment.documented_in or "")),
        ]
    )


def scoring_words(reason_line: str, lang: str) -> str:
    """The reason line without its impact clause (always its first part): the risk score's figures and what
    decided, words of our scoring a model copies as a risk or an insight ("203 changed lines in 4 files (size
    prior: medium); decided by impact"). The impact clause's facts are the change's and may be repeated."""
    return reason_line.partition(t(lang, "sep"))[2]


REASON_FACTS = 3  # facts stated per score in the reason line; the rest are counted
RISK_ITEMS = 1  # examples named per risk adjustment (new files, dependencies …); the rest are counted
# What the impact clause states: the findings of weight, else the facts stated in their place (public-API
# paths, new model files, a revert, prose-only files, nothing users run, a version bump).
_IMPACT_KEYS = (
    "breaking", "breaking_deep", "breaking_undocumented", "declared_breaking", "supported_dropped", "setting_renamed",
    "setting_dropped", "notes_breaking", "security", "behaviour",
    "config_default", "switch", "user_impact", "title_default", "host_patch", "foreign_setting", "setting_default", "notice",
    "setting_added", "feature", "notes_entry", "title_feature", "title_perf", "title_notice", "written_up", "supported_added", "behaviour_deep", "notice_deep",
    "feature_deep", "public_api", "new_model", "moved_names", "internal_names", "revert", "prose", "non_runtime",
    "version_bump",
)  # fmt: skip


def _impact_clause(signals: Iterable[Signal], lang: str) -> str:
    """The findings of weight, heaviest first, else the statements without weight (a finding makes
    "only docstrings changed in x" beside it noise); REASON_FACTS facts in all, grouped under their finding,
    and how many more."""
    mine = [s for s in signals if s.key in _IMPACT_KEYS]
    # A revert weighs what it undoes but never "breaks users" (scores.judge caps it): its removals are what
    # it takes back, said so, or the reason would call a medium commit breaking.
    reverting = any(s.key == "revert" for s in mine)
    weighed = sorted((s for s in mine if s.impact), key=lambda s: -s.impact)
    ordered = weighed or mine
    groups: list[str] = []
    budget, hidden = REASON_FACTS, 0
    for signal in ordered:
        items = _reason_items(signal, lang)
        if not items:  # a statement without items (a revert, nothing users run changed)
            if budget > 0:
                groups.append(t(lang, signal.key, items=""))
                budget -= 1
            else:
                hidden += 1
            continue
        shown, rest = items[:budget], items[budget:]
        hidden += len(rest)
        budget -= len(shown)
        if shown:
            key = "takes_back" if reverting and signal.key in BREAKING_KEYS else signal.key
            groups.append(t(lang, key, items=t(lang, "list_sep").join(shown)))
    text = t(lang, "clause_sep").join(groups) or t(lang, "impact_none")
    total = REASON_FACTS - budget + hidden
    return text + (t(lang, "more", total=num(total), rest=num(hidden)) if hidden else "")


def _reason_items(signal: Signal, lang: str) -> list[str]:
    if signal.key == "mechanical":
        return [t(lang, f"mech_{k}") for k in signal.items]
    if signal.changes:
        # Short names; different changes that read the same (`write` added in four modules, a class and
        # its re-export) are said once with how many modules. The same change found twice is said once.
        changes = {(c.kind, c.name, c.old, c.new): c for c in signal.changes}.values()
        texts = Counter(brief(c, lang) for c in changes)
        return [text + (t(lang, "in_modules", n=num(n)) if n > 1 else "") for text, n in texts.items()]
    return [code_span(i) for i in signal.items]


def _risk_clauses(facts: Facts, judgment: Judgment, lang: str, history: HistoryFacts | None) -> str:
    """Size and where it places the commit, then the adjustments that moved the risk tier and what the
    history shows, REASON_FACTS facts in all, and how many more."""
    ranked_by_history = history is not None and history.percentile is not None
    size = t(
        lang,
        "size_only" if ranked_by_history else "size",
        lines=num(facts.counted_lines),
        files=num(facts.commit.file_count),
        prior=importance_word(lang, judgment.prior),
    )
    # "0 changed lines in 1 file" beside 242 in its lockfile
    if facts.ignored_lines and not facts.counted_lines:
        size = t(lang, "size_ignored_only", n=num(facts.ignored_lines), files=num(facts.commit.file_count))
    elif facts.ignored_lines:
        size += t(lang, "ignored", n=num(facts.ignored_lines))
    parts = [size]
    if ranked_by_history:
        parts[0] += t(lang, "clause_sep") + t(
            lang, "hist_prior", pct=num(round(100 * history.percentile)), days=num(history.window_days)
        )
    extra: list[str] = []
    for signal in judgment.signals:
        if signal.risk:
            step = "nudge" if ranked_by_history and signal.risk > 0 else "up" if signal.risk > 0 else "down"
            extra.append(_risk_signal_text(signal, lang) + t(lang, step))
        elif signal.key in CAP_LEVELS:
            capped = "capped" if CAP_LEVELS[signal.key] else "capped_low"
            extra.append(_risk_signal_text(signal, lang) + t(lang, capped))
        elif signal.key in FLOOR_KEYS:
            extra.append(_risk_signal_text(signal, lang) + t(lang, "floor"))
    if history is not None:
        extra.extend(history_text(history, lang))
    shown = extra[: REASON_FACTS - 1]
    text = t(lang, "clause_sep").join(parts + shown)
    hidden = len(extra) - len(shown)
    return text + (t(lang, "more", total=num(1 + len(extra)), rest=num(hidden)) if hidden else "")


def _risk_signal_text(signal: Signal, lang: str) -> str:
    items = _reason_items(signal, lang)
    text = t(lang, "list_sep").join(items[:RISK_ITEMS])
    if len(items) > RISK_ITEMS:
        text += t(lang, "more", total=num(len(items)), rest=num(len(items) - RISK_ITEMS))
    return t(lang, signal.key, items=text)
