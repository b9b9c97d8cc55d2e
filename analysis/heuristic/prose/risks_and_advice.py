"""The risks (no tests, breaking or behaviour changes, dependencies, history, deleted and binary files…)
and the recommendations (where a reviewer starts, which tests to run, what to check)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from analysis.heuristic.facts import AREA_DEPTH, Facts, folder
from analysis.heuristic.phrases import t
from analysis.heuristic.prose.fact_phrases import signal_phrases, signals_by_key, status_phrases
from analysis.heuristic.prose.history_clauses import history_risks
from analysis.heuristic.prose.wording import MAX_ITEMS, code_span, listed_items, num
from analysis.heuristic.signals import BREAKING_KEYS, SIZE_MEDIUM_MAX, Signal
from analysis.models import FileChange
from analysis.paths import PathKind

if TYPE_CHECKING:
    from analysis.history.facts import HistoryFacts


# The risk each finding states, in this order.
_SIGNAL_RISKS = {
    "breaking": "risk_breaking",
    "breaking_deep": "risk_breaking_callers",
    "breaking_undocumented": "risk_breaking_callers",
    "declared_breaking": "risk_declared",
    "notes_breaking": "risk_notes",
    "supported_dropped": "risk_breaking",
    "setting_renamed": "risk_breaking",
    "setting_dropped": "risk_breaking",
    "behaviour": "risk_behaviour",
    "behaviour_deep": "risk_behaviour",
    "switch": "risk_behaviour",
    "host_patch": "risk_behaviour",
    "foreign_setting": "risk_behaviour",
    "setting_default": "risk_defaults",
    "public_api": "risk_api",
    "config_default": "risk_defaults",
    "dependency": "risk_deps",
    "build": "risk_build",
    "version_gate": "risk_version_gate",
    "security": "risk_security",
    "new_model": "risk_new_model",
}


def risks(facts: Facts, signals: list[Signal], lang: str, history: HistoryFacts | None = None) -> list[str]:
    sig = signals_by_key(signals)
    found: list[str] = []
    source_lines = facts.lines_of(PathKind.SOURCE)
    if source_lines >= 20 and not facts.files_of(PathKind.TESTS):
        found.append(t(lang, "risk_no_tests", lines=num(source_lines)))
    found += signal_phrases(sig, lang, _SIGNAL_RISKS)
    if "revert" in sig:
        found.append(t(lang, "risk_revert"))
    if history is not None:
        found.extend(history_risks(history, lang))
    found.extend(_file_risks(facts, sig, lang))
    if not found:
        found.append(t(lang, "risk_none", lines=num(facts.counted_lines)))
    return found


def breaking_risks(signals: Iterable[Signal], lang: str) -> list[str]:
    """The risks `risks` states for the findings that break users, alone."""
    return signal_phrases(signals_by_key(signals), lang, {k: _SIGNAL_RISKS[k] for k in BREAKING_KEYS})


def _file_risks(facts: Facts, sig: dict[str, Signal], lang: str) -> list[str]:
    found: list[str] = []
    if "kernel" in sig:
        found.append(t(lang, "risk_kernel", items=listed_items(lang, sig["kernel"].items)))
    found += status_phrases(facts, lang, {"removed": "risk_deleted", "renamed": "risk_renamed"})
    areas = facts.areas
    if facts.counted_lines > SIZE_MEDIUM_MAX and len(areas) >= 3:
        found.append(t(lang, "risk_large", lines=num(facts.counted_lines), areas=num(len(areas))))
    binary = len(facts.files_of(PathKind.BINARY))
    if binary:
        found.append(t(lang, "risk_binary", n=num(binary)))
    no_patch = sum(1 for f, k in facts.meaningful() if f.patch is None and f.changes > 0)
    if no_patch:
        found.append(t(lang, "risk_no_patch", n=num(no_patch)))
    return found


def recommendations(facts: Facts, signals: list[Signal], lang: str) -> list[str]:
    sig = signals_by_key(signals)
    recs: list[str] = []
    review = _review_areas(facts)
    if review:
        recs.append(t(lang, "rec_review_first", areas=listed_items(lang, review)))
    test_dirs = list(
        dict.fromkeys(f.path.rsplit("/", 1)[0] if "/" in f.path else f.path for f in _tests(facts))
    )
    removed_tests = [f for f in facts.files_of(PathKind.TESTS) if f.status == "removed"]
    if test_dirs:
        recs.append(t(lang, "rec_run_tests", items=listed_items(lang, test_dirs)))
    elif removed_tests:
        # Deleted tests are tests changed: say so, never "no tests changed".
        recs.append(
            t(lang, "rec_tests_removed", n=num(len(removed_tests)), areas=listed_items(lang, review or ["."]))
        )
    elif facts.lines_of(PathKind.SOURCE):
        recs.append(t(lang, "rec_add_tests", areas=listed_items(lang, review or ["."])))
    recs += signal_phrases(
        sig,
        lang,
        {
            "breaking": "rec_breaking",
            "breaking_deep": "rec_breaking_callers",
            "breaking_undocumented": "rec_breaking_callers",
            "declared_breaking": "rec_declared",
            "notes_breaking": "rec_notes",
            "behaviour": "rec_behaviour",
            "behaviour_deep": "rec_behaviour",
            "switch": "rec_behaviour",
            "public_api": "rec_api",
            "config_default": "rec_defaults",
            "dependency": "rec_deps",
            "build": "rec_build",
            "version_gate": "rec_version_gate",
            "new_model": "rec_new_model",
        },
    )
    if "security" in sig:
        # Review files, not CVE ids: the flagged paths, else the folders with runtime changes.
        paths = [i for i in sig["security"].items if i in facts.by_path] or review or ["."]
        recs.append(t(lang, "rec_security", items=listed_items(lang, paths)))
    if "revert" in sig:
        recs.append(t(lang, "rec_revert"))
    if "kernel" in sig:
        recs.append(t(lang, "rec_kernel"))
    if not recs and facts.files:
        largest = max(facts.files, key=lambda f: f.changes)
        recs.append(t(lang, "rec_largest", path=code_span(largest.path)))
    return recs or [t(lang, "rec_none")]


def _tests(facts: Facts) -> list[FileChange]:
    return [f for f in facts.files_of(PathKind.TESTS) if f.status != "removed"]


def _review_areas(facts: Facts) -> list[str]:
    """Folders with source or config changes, most changed lines first: where a reviewer starts."""
    runtime = {PathKind.SOURCE, PathKind.CONFIG, PathKind.DEPENDENCY_MANIFEST, PathKind.BUILD}
    lines: Counter[str] = Counter()
    for f, k in facts.meaningful():
        if k in runtime:
            lines[folder(f.path, AREA_DEPTH) or f.path] += f.changes + 1
    return [name for name, _ in lines.most_common(MAX_ITEMS)]
