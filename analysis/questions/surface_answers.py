"""Answers about what changes do to users (breaking changes, defaults, new options, environment variables):
one commit's surface facts, or the day's."""

from __future__ import annotations

from collections.abc import Sequence

from analysis.models import Commit, SurfaceChange, SurfaceKind, commit_ref
from analysis.paths import PathKind, classify_path
from analysis.questions.document import Answer, QAData, Strong
from analysis.questions.matching import filtered, term_in
from analysis.questions.parse import Facet, Question
from analysis.questions.wording import phrase, surface_fact
from analysis.text import display_title


def _facet_names(lang: str, facets: frozenset[Facet], env_vars: bool = False) -> str:
    if env_vars:
        return phrase(lang, "facet_env_new" if facets == {Facet.FEATURE} else "facet_env")
    chosen = [f for f in Facet if f in facets] or list(Facet)
    return ("、" if lang == "zh" else ", ").join(phrase(lang, f"facet_{f.value}") for f in chosen)


_ENV_KINDS = frozenset({SurfaceKind.ENV_ADDED, SurfaceKind.ENV_REMOVED, SurfaceKind.ENV_RENAMED})


def _wanted(
    change: SurfaceChange, facets: frozenset[Facet], terms: Sequence[str], env_vars: bool = False
) -> bool:
    if env_vars and change.kind not in _ENV_KINDS:
        return False
    if classify_path(change.path) == PathKind.VENDORED:
        return False  # read in case the branch maintains the tree; without its history, someone else's code
    kinds = (
        (Facet.BREAKING in facets and change.breaking)
        or (Facet.BEHAVIOUR in facets and change.behaviour)
        or (Facet.FEATURE in facets and change.feature)
    )
    if not kinds:
        return False
    if not terms:
        return True
    text = f"{change.name} {change.path} {change.old or ''} {change.new or ''}".lower()
    return any(term_in([text], term) for term in terms)


def commit_surface(a: Answer, q: Question, commit: Commit) -> None:
    lang, what = q.lang, _facet_names(q.lang, q.facets, q.env_vars)
    ref = commit_ref(commit)
    if commit.surface is None:
        a.add(phrase(lang, "surface_commit_unknown", ref=ref, what=what))
        return
    changes = [c for c in commit.surface if _wanted(c, q.facets or frozenset(Facet), (), q.env_vars)]
    if not changes:
        a.add(phrase(lang, "surface_commit_none", ref=ref, what=what))
    for change in changes:
        a.add("• ", surface_fact(change, lang))


def day_surface(a: Answer, q: Question, data: QAData) -> None:
    lang, what = q.lang, _facet_names(q.lang, q.facets, q.env_vars)
    facets = q.facets or frozenset(Facet)
    commits = filtered(q, data, use_terms=False)
    read = [c for c in commits if c.surface is not None]
    unknown = len(commits) - len(read)
    if not read:
        a.add(phrase(lang, "surface_unknown_all", what=what))
        return
    found = [(c, [s for s in c.surface or () if _wanted(s, facets, q.terms, q.env_vars)]) for c in read]
    found = [(c, changes) for c, changes in found if changes]
    if not found:
        a.add(phrase(lang, "surface_none", what=what, n=len(read)))
    else:
        n = sum(len(changes) for _, changes in found)
        a.add(Strong(phrase(lang, "surface_head", what=what, n=n, commits=len(found))))
        for commit, changes in found:
            a.add("• ", a.cite(commit), " ", display_title(commit))
            for change in changes:
                a.add("    ◦ ", surface_fact(change, lang))
    if unknown:
        a.add(phrase(lang, "surface_unknown_some", n=unknown, total=len(commits)))
