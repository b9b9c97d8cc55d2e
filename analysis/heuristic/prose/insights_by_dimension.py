"""The high tier's insights, one per dimension: architecture, performance, security, maintainability,
compatibility, resources."""

from __future__ import annotations

import re
from collections.abc import Iterable

from analysis.heuristic.facts import Facts, common_kinds
from analysis.heuristic.phrases import KIND_NAMES, t
from analysis.heuristic.prose.fact_phrases import signal_phrases, signals_by_key, status_phrases
from analysis.heuristic.prose.summaries import added_deleted
from analysis.heuristic.prose.surface_changes import changes_text
from analysis.heuristic.prose.wording import join_clauses, listed_items, num, untrusted
from analysis.heuristic.signals import BREAKING_KEYS, Signal
from analysis.models import INSIGHT_DIMENSIONS
from analysis.paths import PathKind

_PERF_CLAIM = re.compile(
    r"\b(perf|performance|throughput|latency|faster|slower|speed ?up|optimi[sz]\w*|tpot|ttft|memory usage)\b",
    re.I,
)


def _signal_text(signal: Signal, lang: str) -> str:
    if signal.key == "mechanical":
        names = [t(lang, f"mech_{k}") for k in signal.items]
        return t(lang, "mechanical", items=t(lang, "list_sep").join(names))
    if signal.changes:
        return t(lang, signal.key, items=changes_text(signal.changes, lang))
    return t(lang, signal.key, items=listed_items(lang, signal.items))


def insights(facts: Facts, signals: list[Signal], lang: str) -> dict[str, str]:
    sig = signals_by_key(signals)
    builders = {
        "architecture": _ins_architecture,
        "performance": _ins_performance,
        "security": _ins_security,
        "maintainability": _ins_maintainability,
        "compatibility": _ins_compatibility,
        "resources": _ins_resources,
    }
    return {dim: builders[dim](facts, sig, lang) for dim in INSIGHT_DIMENSIONS if dim in builders}


# What a dimension's builder says when it found nothing to go on (a model's judgement is needed).
_NOTHING_FOUND = ("ins_perf_none", "ins_sec_none", "ins_compat_none", "ins_res_none")


def found_insights(facts: Facts, signals: list[Signal], lang: str) -> dict[str, str]:
    """The insights whose dimension the rules found facts for: what may stand in an LLM card's row the model
    left unknown ("90 test files changed against 8,105 lines of source"), not "not assessable without a model"."""
    nothing = {t(lang, key) for key in _NOTHING_FOUND}
    return {dim: text for dim, text in insights(facts, signals, lang).items() if text not in nothing}


def _ins_architecture(facts: Facts, sig: dict[str, Signal], lang: str) -> str:
    areas = facts.areas
    names = [a.name or "." for a in areas]
    text = t(lang, "ins_arch_areas", areas=num(len(areas)), list=listed_items(lang, names))
    changed_set = added_deleted(facts, lang).rstrip("。.")
    if changed_set:
        text += t(lang, "ins_arch_files", text=changed_set[0].lower() + changed_set[1:])
    elif facts.files:
        text += t(lang, "ins_arch_modify")
    if "new_model" in sig:
        text += t(lang, "ins_arch_new_model", items=listed_items(lang, sig["new_model"].items))
    return text


def _ins_performance(facts: Facts, sig: dict[str, Signal], lang: str) -> str:
    claim = _perf_claim(facts, lang)
    parts = []
    if claim:
        parts.append(t(lang, "ins_perf_claim", text=claim))
    if "kernel" in sig:
        parts.append(t(lang, "ins_perf_kernel", items=listed_items(lang, sig["kernel"].items)))
    return join_clauses(parts, lang) if parts else t(lang, "ins_perf_none")


def _perf_claim(facts: Facts, lang: str) -> str:
    """The first title or body sentence that talks about performance, quoted as the author's claim."""
    for sentence in re.split(r"(?<=[.!?。])\s+|\n+", facts.subject + "\n" + facts.body):
        if _PERF_CLAIM.search(sentence):
            return untrusted(sentence, 160, lang)
    return ""


def _ins_security(facts: Facts, sig: dict[str, Signal], lang: str) -> str:
    if "security" in sig:
        return t(lang, "ins_sec", items=listed_items(lang, sig["security"].items))
    return t(lang, "ins_sec_none")


def _ins_maintainability(facts: Facts, sig: dict[str, Signal], lang: str) -> str:
    tests = facts.files_of(PathKind.TESTS)
    source_lines = facts.lines_of(PathKind.SOURCE)
    if tests:
        text = t(
            lang,
            "ins_maint_tests" if source_lines else "ins_maint_tests_only",
            tests=num(len(tests)),
            tlines=num(sum(f.changes for f in tests)),
            slines=num(source_lines),
        )
    elif source_lines:
        text = t(lang, "ins_maint_no_tests", slines=num(source_lines))
    else:
        kinds = common_kinds(facts.kinds)
        text = t(
            lang, "ins_maint_no_source", kinds=t(lang, "list_sep").join(KIND_NAMES[lang][k] for k in kinds)
        )
    text += t(
        lang, "ins_maint_net", add=num(facts.commit.total_additions), dele=num(facts.commit.total_deletions)
    )
    if "mechanical" in sig:
        text += t(lang, "sep") + _signal_text(sig["mechanical"], lang)
    return text


# What each finding makes of compatibility, in this order.
_COMPATIBILITY = {
    "breaking": "compat_breaking",
    "breaking_deep": "compat_breaking_callers",
    "breaking_undocumented": "compat_breaking_callers",
    "declared_breaking": "compat_declared",
    "notes_breaking": "compat_notes",
    "supported_dropped": "compat_breaking",
    "setting_renamed": "compat_breaking",
    "setting_dropped": "compat_breaking",
    "behaviour": "compat_behaviour",
    "behaviour_deep": "compat_behaviour",
    "switch": "compat_behaviour",
    "host_patch": "compat_behaviour",
    "foreign_setting": "compat_behaviour",
    "setting_default": "compat_defaults",
    "public_api": "compat_api",
    "config_default": "compat_defaults",
    "dependency": "compat_deps",
}


def _ins_compatibility(facts: Facts, sig: dict[str, Signal], lang: str) -> str:
    items = signal_phrases(sig, lang, _COMPATIBILITY)
    items += status_phrases(facts, lang, {"removed": "compat_removed", "renamed": "compat_renamed"})
    if not items:
        return t(lang, "ins_compat_none")
    return t(lang, "ins_compat", items=t(lang, "sep").join(items))


def breaking_compatibility(signals: Iterable[Signal], lang: str) -> str | None:
    """The compatibility insight of the findings that break users alone (None: no such finding)."""
    sig = signals_by_key(signals)
    items = signal_phrases(sig, lang, {k: _COMPATIBILITY[k] for k in BREAKING_KEYS})
    return t(lang, "ins_compat", items=t(lang, "sep").join(items)) if items else None


def _ins_resources(facts: Facts, sig: dict[str, Signal], lang: str) -> str:
    items = []
    if "dependency" in sig:
        items.append(t(lang, "res_deps", items=listed_items(lang, sig["dependency"].items)))
    binary = len(facts.files_of(PathKind.BINARY))
    if binary:
        items.append(t(lang, "res_binary", n=num(binary)))
    if "kernel" in sig:
        items.append(t(lang, "res_kernel", items=listed_items(lang, sig["kernel"].items)))
    if not items:
        return t(lang, "ins_res_none")
    return t(lang, "ins_res", items=t(lang, "sep").join(items))
