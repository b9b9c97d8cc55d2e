"""The LLM's judgment kept within the rubric's: one tier's move at most, and a day's tiers in its bands.

A model may move a commit one tier from the rubric's tier (analysis/heuristic), never two, and the
reason line says so with the model's own reason beside the rubric's. A small model that calls most
commits medium or high would still flood the cards, so a day's tiers follow the *order* of the scores
the model states (0-100), not its words: among the day's scored commits, those ranked in the top
HIGH_SHARE are high, down to FLAGGED_SHARE medium, the rest low (the rubric's own bands), each then kept
within one tier of the rubric's. Ties in the model's scores are broken by the rubric's tier and scores.
A day with fewer than BAND_MIN scored commits keeps the model's tiers (a share of three is no band).

Pure: analyses in, analyses out. The banded analyses are the day's view (digest, eval); the stored
per-commit analyses keep the model's own tier, so `/digest <sha>` shows the commit on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from analysis import heuristic
from analysis.heuristic.scores import TIERS, percentile_tier
from analysis.labels import importance_word
from analysis.models import Analysis, Commit, Importance

if TYPE_CHECKING:
    from analysis.history.facts import HistoryFacts

BAND_MIN = 8

_TEXT = {
    "en": {
        "same": "{reason} — rubric: {rubric}",
        "agreed": "rubric, kept by the model: {rubric}",
        "moved": "{reason} — the model moves the rubric's {old} to {new}; rubric: {rubric}",
        "capped": "{reason} — the model asked for {asked}, one tier from the rubric's {old} at most: {new};"
        " rubric: {rubric}",
        "pinned": "{reason} — the model asked for {asked}, but nothing users run changed: it stays {new};"
        " rubric: {rubric}",
        "held": "{reason} — the model asked for {asked}, but the change breaks users: it stays {new}; rubric: {rubric}",
        "banded": "; the day's bands put it at {new}: its score {score} ranks {rank} of the day's {n}",
        "filled": "Filled in by the rules for the day's tier: {fields}",
    },
    "zh": {
        "same": "{reason}——规则判断：{rubric}",
        "agreed": "规则判断（模型维持）：{rubric}",
        "moved": "{reason}——模型将规则判断的{old}调为{new}；规则判断：{rubric}",
        "capped": "{reason}——模型给出{asked}，但最多只能比规则判断的{old}调整一级，定为{new}；规则判断：{rubric}",
        "pinned": "{reason}——模型给出{asked}，但用户运行的内容没有变化，保持{new}；规则判断：{rubric}",
        "held": "{reason}——模型给出{asked}，但该改动破坏兼容，保持{new}；规则判断：{rubric}",
        "banded": "；按当天各提交的得分排序定为{new}：得分 {score}，在当天 {n} 个提交中排第 {rank}",
        "filled": "按当天的重要程度由规则补全：{fields}",
    },
}


def _t(lang: str, key: str, **fmt: object) -> str:
    return _TEXT["zh" if lang == "zh" else "en"][key].format(**fmt)


def within_one_tier(
    tier: Importance, rubric: Importance, ceiling: Importance | None = None, floor: Importance | None = None
) -> Importance:
    """`tier` moved back to within one tier of the rubric's, to no more than `ceiling` when there is one (what
    changes nothing users run stays low: the rubric's `Judgment.ceiling`) and to no less than `floor` (what
    breaks users stays high: `Judgment.floor`)."""
    level, base = TIERS.index(tier), TIERS.index(rubric)
    top = base + 1 if ceiling is None else min(base + 1, TIERS.index(ceiling))
    bottom = base - 1 if floor is None else max(base - 1, TIERS.index(floor))
    return TIERS[max(bottom, min(top, level))]


def judged_reason(
    lang: str,
    rubric_reason: str,
    rubric: Importance,
    tier: Importance,
    reason: str,
    asked: Importance,
    ceiling: Importance | None = None,
    floor: Importance | None = None,
) -> str:
    """The model's reason with the rubric's beside it, saying when the model moved the tier (and when
    it asked for more than one tier's move). An empty reason: the rubric's alone, said once."""
    words = {
        "old": importance_word(lang, rubric),
        "new": importance_word(lang, tier),
        "asked": importance_word(lang, asked),
    }
    key = "capped" if asked != tier else "moved" if tier != rubric else "same"
    if asked != tier and ceiling is not None and tier == ceiling and asked.rank < ceiling.rank:
        key = "pinned"
    elif asked != tier and floor is not None and tier == floor and asked.rank > floor.rank:
        key = "held"
    reason = reason.rstrip(" .。")
    if not reason:  # the model said nothing of its own (its reason only repeated the rubric's)
        if key == "same":
            return _t(lang, "agreed", rubric=rubric_reason)
        return _t(lang, key, reason="", rubric=rubric_reason, **words).lstrip(" —")
    return _t(lang, key, reason=reason, rubric=rubric_reason, **words)


def band_day(
    commits: Sequence[Commit],
    analyses: Mapping[str, Analysis],
    lang: str,
    history: Mapping[str, HistoryFacts] | None = None,
) -> dict[str, Analysis]:
    """The day's analyses with the LLM-scored ones banded by the order of their scores (see the module
    docstring); every other analysis, and a day with fewer than BAND_MIN scored commits, as given."""
    scored = [c for c in commits if _scored(analyses.get(c.sha))]
    if len(scored) < BAND_MIN:
        return dict(analyses)
    ranked = sorted(scored, key=lambda c: _order(analyses[c.sha], c.sha))  # lowest first
    out = dict(analyses)
    for position, commit in enumerate(ranked):
        analysis = analyses[commit.sha]
        assert analysis.rubric_importance is not None  # _scored
        tier = within_one_tier(
            percentile_tier(position / len(ranked)),
            analysis.rubric_importance,
            analysis.ceiling,
            analysis.floor,
        )
        if tier != analysis.importance:
            rank = len(ranked) - position
            out[commit.sha] = _retiered(
                commit, analysis, tier, lang, (history or {}).get(commit.sha), rank, len(ranked)
            )
    return out


def day_order(commits: Sequence[Commit], analyses: Mapping[str, Analysis]) -> list[Commit]:
    """The commits most important first, by the order band_day ranks a day: the model's score where it
    stated one, then the rubric's tier, the impact and risk scores, the sha (so the order is stable: a
    re-run picks the same top commits). What a day can show of its high commits only in part (a chat
    post's cards) is chosen by it."""

    def key(commit: Commit) -> tuple[float, int, float, float, str]:
        score, rubric, impact, risk, _ = _order(analyses[commit.sha], commit.sha)
        return (-score, -rubric, -impact, -risk, commit.sha)  # the sha only breaks ties, the same every run

    return sorted(commits, key=key)


def _scored(analysis: Analysis | None) -> bool:
    return (
        analysis is not None
        and analysis.analyzer == "llm"
        and analysis.model_score is not None
        and analysis.rubric_importance is not None
    )


def _order(a: Analysis, sha: str) -> tuple[float, int, float, float, str]:
    return (
        float(a.model_score or 0),
        -(a.rubric_importance or Importance.LOW).rank,
        a.impact_score or 0.0,
        a.risk_score or 0.0,
        sha,
    )


def _retiered(
    commit: Commit,
    analysis: Analysis,
    tier: Importance,
    lang: str,
    history: HistoryFacts | None,
    rank: int,
    n: int,
) -> Analysis:
    """The analysis at the day's tier: deeper fields dropped, or what the tier needs filled by the rules."""
    update: dict[str, object] = {
        "importance": tier,
        "importance_reason": analysis.importance_reason
        + _t(lang, "banded", new=importance_word(lang, tier), score=analysis.model_score, rank=rank, n=n),
    }
    if tier == Importance.LOW:
        update.update(scope=[], risks=[], recommendations=[], insights={})
    else:
        rules = heuristic.analyze(commit, lang, tier=tier, history=history)
        wanted = ["scope", "risks", "recommendations"] + (["insights"] if tier == Importance.HIGH else [])
        filled = [name for name in wanted if not getattr(analysis, name)]
        update.update({name: getattr(rules, name) for name in filled})
        if tier == Importance.MEDIUM:
            update["insights"] = {}
        if filled:
            update["notes"] = [*analysis.notes, _t(lang, "filled", fields=", ".join(filled))]
    return analysis.model_copy(update=update)
