"""The heuristic analyser: change type, importance and a full tier-shaped analysis without an LLM.

Everything here is derived from facts in the commit (paths, statuses, line counts, the title, the
message body without trailers, patch lines) by fixed, documented rules, so a reader can check every
statement. It is the embedded default and the fallback when an LLM call fails.

Importance rubric (RUBRIC_VERSION is part of the analysis cache key: bump it when a rule changes):

- Size prior on changed lines, not counting lockfile / generated / vendored / minified / binary
  files: <= SIZE_LOW_MAX low, <= SIZE_MEDIUM_MAX medium, else high (the reference's only rule).
- Then one tier per signal, capped at high and low:
  up:   public API surface, changed config defaults, security relevance (CVE / advisory id, security
        words in the title, security-sensitive paths, added deserialisation / eval / shell=True calls), a new
        model / backend / platform file, GPU kernel code (CUDA / Triton / csrc: hardware-dependent
        behaviour and speed, hard to review), a revert, changed dependency versions;
  down: only docs / tests / CI / examples / dev tooling; big but mechanical (formatting-only,
        annotation-only, rename-only, proven from the patches).
  Files whose changed lines are all comments raise nothing.

Change type: a revert first, then a CVE / GHSA id in the message, title tags (the most meaningful
of several wins), a conventional-commit prefix, security words, the paths when they are all of one kind, the
title's first word and keywords, weak tags ([Chore], [Model]), new source files; else `other`.

Patches are read within a budget (whole patches, most reviewable files first) so that a 3000-file
commit stays fast; what is not read is counted but not inspected. Text is built only from the
commit's facts, in Chinese or English; untrusted commit text is cut, stripped of trailers, e-mails,
mentions and Markdown constructs before use.

Modules: `title` (what a title states by convention), `facts` (what the rules look at), `change_type`,
`signals` (the size prior and importance signals), `phrases` and `prose` (the zh / en text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis.heuristic import prose
from analysis.heuristic.change_type import classify, classify_change
from analysis.heuristic.facts import commit_facts
from analysis.heuristic.signals import SIZE_LOW_MAX, SIZE_MEDIUM_MAX, size_prior, weigh
from analysis.labels import LANGS
from analysis.models import Analysis, Commit, Importance

if TYPE_CHECKING:
    from analysis.history import HistoryFacts
RUBRIC_VERSION = "h3"  # h3: a revert of a revert is summarised as restoring the change


def counted_lines(commit: Commit) -> int:
    """Changed lines for the size prior: commit totals minus lines in low-value files."""
    return commit_facts(commit).counted_lines


def rank(commit: Commit, lang: str = "zh", history: HistoryFacts | None = None) -> tuple[Importance, str]:
    """Importance and the reason for it, naming the facts used, in the report language."""
    facts = commit_facts(commit)
    importance, prior, signals = weigh(facts, history)
    return importance, prose.reason(facts, prior, signals, _lang(lang), history)


def analyze(
    commit: Commit, lang: str = "zh", tier: Importance | None = None, history: HistoryFacts | None = None
) -> Analysis:
    """A complete analysis for the commit's tier (DESIGN.md §3), built only from its facts. `tier`
    overrides the rubric's rank (an LLM ranked the commit but could not analyse it): the fields of
    that tier are filled all the same."""
    lang = _lang(lang)
    facts = commit_facts(commit)
    change = classify(facts)
    importance, prior, signals = weigh(facts, history)
    reason = prose.reason(facts, prior, signals, lang, history)
    importance = tier or importance
    analysis = Analysis(
        sha=commit.sha,
        importance=importance,
        importance_reason=reason,
        change_type=change,
        summary=prose.summary(facts, change, importance, lang),
        analyzer="heuristic",
        model="heuristic",
        prompt_version=RUBRIC_VERSION,
        lang=lang,
        notes=prose.notes(facts, lang),
    )
    if importance != Importance.LOW:
        analysis.scope = prose.scope(facts, lang)
        analysis.risks = prose.risks(facts, signals, lang, history)
        analysis.recommendations = prose.recommendations(facts, signals, lang)
    if importance == Importance.HIGH:
        analysis.insights = prose.insights(facts, signals, lang)
    return analysis


def _lang(lang: str) -> str:
    return lang if lang in LANGS else "en"


__all__ = [
    "RUBRIC_VERSION",
    "SIZE_LOW_MAX",
    "SIZE_MEDIUM_MAX",
    "analyze",
    "classify_change",
    "counted_lines",
    "rank",
    "size_prior",
]
