"""A commit's facts as the phrases of its lists: each signal found with its items or surface changes, each
file status with how many files have it."""

from __future__ import annotations

from collections.abc import Iterable

from analysis.heuristic.facts import Facts
from analysis.heuristic.phrases import t
from analysis.heuristic.prose.surface_changes import changes_text
from analysis.heuristic.prose.wording import listed_items, num
from analysis.heuristic.signals import Signal


def count_status(facts: Facts, status: str) -> int:
    return sum(1 for f in facts.files if f.status == status)


def signals_by_key(signals: Iterable[Signal]) -> dict[str, Signal]:
    return {s.key: s for s in signals}


def signal_phrases(sig: dict[str, Signal], lang: str, phrases: dict[str, str]) -> list[str]:
    """{signal key: phrase key}: for each signal found, in that order, its phrase naming its facts."""
    return [t(lang, phrase, items=_facts_of(sig[key], lang)) for key, phrase in phrases.items() if key in sig]


def _facts_of(signal: Signal, lang: str) -> str:
    return changes_text(signal.changes, lang) if signal.changes else listed_items(lang, signal.items)


def status_phrases(facts: Facts, lang: str, phrases: dict[str, str]) -> list[str]:
    """{file status: phrase key}: for each status some files have, its phrase with their number."""
    counts = {status: count_status(facts, status) for status in phrases}
    return [t(lang, phrase, n=num(counts[status])) for status, phrase in phrases.items() if counts[status]]
