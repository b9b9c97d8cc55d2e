"""The fact-check of a model's thread answer, with the rules that guard analyses (analysis/llm/grounding.py):
a sentence naming a SHA, a pull request, a file path or a figure that is not in the thread's commits,
its day or the store is removed. What was removed is counted, never shown (naming an invented SHA or
figure would publish it); an answer with nothing left falls back to the data's answer (bot/chat/answers.py).

Evidence is what we hold, not what anyone said: the commits' messages, paths and diffs, their stored
analyses, the figures we computed (sizes, counts, dates), and the SHAs and PR numbers the store knows.
A user's earlier message in the thread is not evidence: the model repeating a guess does not make it so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from analysis.llm.grounding import Evidence, evidence_of, plain_text, sentences, unsupported_items
from analysis.models import Analysis, Commit

# A SHA: 7-64 hex (64: a SHA-256 repository's) with a digit and a letter (the check below), anywhere, a URL's
# path included.
_SHA = re.compile(r"(?<![0-9A-Za-z])([0-9a-fA-F]{7,64})(?![0-9A-Za-z])")
_PR = re.compile(
    r"(?<![\w&])#\s?(\d{1,9})\b|\b(?:PR|pull request|MR)\s*#?\s*(\d{1,9})\b|/(?:pull|pulls|merge_requests)/(\d{1,9})\b",
    re.IGNORECASE,
)
# Figures grounding.py leaves alone that an answer may not invent: plain numbers of two digits or more
# and decimals. Single digits are prose ("2 commits", "one of 3"), and so are spans of time.
# Thousands separators only in groups of three: "4,327" is 4327, "(432,7)" is two numbers.
_NUMBER = re.compile(r"(?<![\w.])((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?!\w|\.\d|,\d)", re.ASCII)
_TIME_SPAN = re.compile(
    r"\s*(?:hours?|hrs?|days?|weeks?|months?|years?|minutes?|mins?|seconds?|secs?|小时|天|周|个月|年|分钟|秒)",
    re.IGNORECASE,
)
_TAKEN = re.compile(
    r"(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.[A-Za-z]{1,6}\b"  # paths and file names: grounding checks them
    r"|\d+(?:\.\d+)*\s*(?:%|％|[x×X](?!\w)|倍|percent\b)"  # percentages and multipliers: grounding too
    r"|\b[vV]?\d+\.\d+\.\d+(?:\.\d+)*\b"  # versions: grounding too
    r"|\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?",  # dates: checked as a whole below
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True, slots=True)
class AnswerEvidence:
    grounding: Evidence  # paths, figures, versions of the thread's commits
    numbers: frozenset[str]  # every number in the data, normalised
    dates: frozenset[str]  # YYYY-MM-DD of the day, the commits, the follow-ups
    shas: frozenset[str]  # full SHAs known: the thread's commits, follow-ups, the store's matches
    prs: frozenset[int]  # PR numbers known: titles, messages, follow-ups, the store's matches


@dataclass(slots=True)
class Checked:
    text: str
    removed: int = 0  # sentences and lines removed
    items: list[str] = field(default_factory=list)  # what they cited (logs only)


def data_text(commits: Iterable[Commit], analyses: Iterable[Analysis], extra: Iterable[str] = ()) -> str:
    """The figures we computed or stored, as text for the evidence: sizes, dates, analyses."""
    parts: list[str] = list(extra)
    for c in commits:
        parts.append(
            f"{c.total_additions} {c.total_deletions} {c.changed_lines} {c.file_count} {c.committed_at.isoformat()}"
            f" {c.committed_at.date().isoformat()}"
        )
        parts += [f"{f.additions} {f.deletions} {f.changes}" for f in c.files]
    for a in analyses:
        parts += [a.summary, a.importance_reason, *a.scope, *a.risks, *a.recommendations, *a.notes]
        parts += list(a.insights.values())
    return "\n".join(parts)


def answer_evidence(
    commits: Sequence[Commit], text: str, shas: Iterable[str] = (), prs: Iterable[int] = ()
) -> AnswerEvidence:
    """Evidence from the thread's commits (messages, paths, diffs), `text` (data_text and whatever else
    we showed the model from the store) and the SHAs / PR numbers the store knows."""
    source = "\n".join(
        [text, *(c.message for c in commits), *(f.patch or "" for c in commits for f in c.files)]
    )
    known_prs = {int(n) for m in _PR.finditer(source) for n in m.groups() if n}
    known_prs |= {c.pr_number for c in commits if c.pr_number}
    return AnswerEvidence(
        grounding=evidence_of(commits, text),
        numbers=frozenset(_norm(n) for n in _NUMBER.findall(source)),
        dates=frozenset(_DATE.findall(source)),
        shas=frozenset({c.sha.lower() for c in commits} | {s.lower() for s in shas}),
        prs=frozenset(known_prs | set(prs)),
    )


def cited_refs(text: str) -> tuple[set[str], set[int]]:
    """The SHA-like tokens and PR numbers a text names, for the caller to look up in the store."""
    shas = {m.group(1).lower() for m in _SHA.finditer(text) if _is_sha(m.group(1))}
    prs = {int(n) for m in _PR.finditer(text) for n in m.groups() if n}
    return shas, prs


def unsupported(sentence: str, ev: AnswerEvidence) -> list[str]:
    """What one sentence names that the evidence does not hold."""
    bad = list(unsupported_items(sentence, ev.grounding))
    for m in _SHA.finditer(sentence):
        token = m.group(1).lower()
        if _is_sha(token) and not any(s.startswith(token) for s in ev.shas):
            bad.append(token)
    for m in _PR.finditer(sentence):
        number = int(next(n for n in m.groups() if n))
        if number not in ev.prs:
            bad.append(f"#{number}")
    for date in _DATE.findall(sentence):
        if date not in ev.dates:
            bad.append(date)
    rest = _TAKEN.sub(" ", _PR.sub(" ", _SHA.sub(" ", sentence)))
    for m in _NUMBER.finditer(rest):
        raw = m.group(1)
        if len(raw.replace(",", "").replace(".", "")) < 2 and "." not in raw:
            continue  # a single digit is prose
        if _TIME_SPAN.match(rest, m.end()):
            continue
        if _norm(raw) not in ev.numbers:
            bad.append(raw)
    return bad


def check_answer(text: str, ev: AnswerEvidence) -> Checked:
    """The answer without the sentences (and list lines) that name something the evidence lacks."""
    out = Checked("")
    kept_lines: list[str] = []
    for line in plain_text(text).splitlines():
        joined = ""
        gap = False  # a sentence was removed since the last one kept
        for sentence in sentences(line):
            bad = unsupported(sentence, ev)
            if bad:
                out.removed += 1
                out.items += bad
                gap = True
                continue
            if gap and joined and not sentence[:1].isspace() and joined[-1] in ".!?;:":
                joined += " "  # the removed sentence took the space that followed the '.'
            joined += sentence
            gap = False
        joined = joined.strip()
        if joined.strip() or not line.strip():
            kept_lines.append(joined)
    out.text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept_lines)).strip()
    if not re.search(r"\w", out.text):
        out.text = ""
    out.items = list(dict.fromkeys(out.items))
    return out


def cited_commits(text: str, commits: Sequence[Commit]) -> list[Commit]:
    """The commits a text names by SHA (7+ characters) or pull-request number, in text order."""
    found: list[tuple[int, Commit]] = []
    for m in _SHA.finditer(text):
        token = m.group(1).lower()
        for c in commits:
            if c.sha.lower().startswith(token):
                found.append((m.start(), c))
    for m in _PR.finditer(text):
        number = int(next(n for n in m.groups() if n))
        for c in commits:
            if c.pr_number == number:
                found.append((m.start(), c))
    ordered = [c for _, c in sorted(found, key=lambda pair: pair[0])]
    return list({c.sha: c for c in ordered}.values())


def _is_sha(token: str) -> bool:
    return any(ch.isdigit() for ch in token) and any(ch.isalpha() for ch in token)


def _norm(raw: str) -> str:
    try:
        return format(Decimal(raw.replace(",", "")).normalize(), "f")
    except InvalidOperation:
        return raw
