"""The summary (what changed where, what a revert takes out, the body quoted as untrusted prose), the
scope (the folders touched and what kind of files) and the notes."""

from __future__ import annotations

from analysis.heuristic.facts import Area, Facts
from analysis.heuristic.phrases import KIND_NAMES, t
from analysis.heuristic.prose.fact_phrases import count_status
from analysis.heuristic.prose.wording import code_span, num, untrusted
from analysis.models import ChangeType, Importance
from analysis.titles import REVERTS_SHA, reverted_title

_MAX_AREAS = 6  # folders listed in a scope before "N other folders"


def _area_name(area: Area, lang: str) -> str:
    return code_span(area.name) if area.name else t(lang, "root")


# -- summary ----------------------------------------------------------------------------------


def summary(facts: Facts, change: ChangeType, importance: Importance, lang: str) -> str:
    sentences = [_files_sentence(facts, lang)]
    if change == ChangeType.REVERT:
        sentences.append(_revert_sentence(facts, lang))
    if importance == Importance.HIGH:
        sentences.append(added_deleted(facts, lang))
    if importance != Importance.LOW:
        body = untrusted(facts.body, 240, lang)
        sentences.append(t(lang, "body", text=body) if body else "")
    return (" " if lang == "en" else "").join(s for s in sentences if s)


def added_deleted(facts: Facts, lang: str) -> str:
    parts = [
        t(lang, key, n=num(n))
        for key, n in (("adds", count_status(facts, "added")), ("deletes", count_status(facts, "removed")))
        if n
    ]
    if not parts:
        return ""
    text = t(lang, "and").join(parts)
    return text[0].upper() + text[1:] + t(lang, "end")


def _revert_sentence(facts: Facts, lang: str) -> str:
    """What the revert takes out, named from its title, never the commit's own title: `Revert "Revert
    "X""` restores X; a title cut by GitHub keeps its ellipsis."""
    sha = REVERTS_SHA.search(facts.commit.message)
    target = reverted_title(facts.commit.title)
    if target is None:
        return t(lang, "reverts_commit", sha=sha.group(1)[:10]) if sha else t(lang, "reverts_unnamed")
    what = untrusted(target.text, 160, lang) + ("…" if target.cut else "")
    sha_text = t(lang, "reverts_sha", sha=sha.group(1)[:10]) if sha else ""
    return t(lang, "restores" if target.restores else "reverts", what=what, sha=sha_text)


def _files_sentence(facts: Facts, lang: str) -> str:
    subject = untrusted(facts.subject, 200, lang) or t(lang, "empty_subject")
    if not facts.commit.file_count:
        return t(lang, "summary_no_files", subject=subject)
    areas = facts.areas
    if not areas:
        where = ""
    elif len(areas) == 1:
        where = (
            t(lang, "where_one", area=code_span(areas[0].name)) if areas[0].name else t(lang, "where_root")
        )
    else:
        names = t(lang, "list_sep").join(_area_name(a, lang) for a in areas[:2])
        where = t(lang, "where_many", areas=names)
    return t(
        lang,
        "summary",
        subject=subject,
        files=num(facts.commit.file_count),
        add=num(facts.commit.total_additions),
        dele=num(facts.commit.total_deletions),
        where=where,
    )


def scope(facts: Facts, lang: str) -> list[str]:
    areas = facts.areas
    lines = [
        t(
            lang,
            "scope_line",
            area=_area_name(a, lang),
            n=num(a.files),
            kinds=t(lang, "list_sep").join(KIND_NAMES[lang][k] for k in a.kinds)
            + (t(lang, "not_shipped") if a.unshipped else ""),
        )
        for a in areas[:_MAX_AREAS]
    ]
    rest = areas[_MAX_AREAS:]
    if rest:
        lines.append(t(lang, "scope_more", areas=num(len(rest)), n=num(sum(a.files for a in rest))))
    if facts.commit.files_truncated:
        lines.append(t(lang, "truncated", shown=num(len(facts.files)), total=num(facts.commit.file_count)))
    return lines or [t(lang, "scope_none")]


def notes(facts: Facts, lang: str) -> list[str]:
    # That the analysis is heuristic is said once per report or card by the renderers, not per commit.
    found = []
    if facts.commit.files_truncated:
        found.append(
            t(lang, "note_truncated", shown=num(len(facts.files)), total=num(facts.commit.file_count))
        )
    return found
