"""Which commits a question means: by the words of a title, a path or area, an author, a tier."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from analysis.models import Analysis, Commit
from analysis.questions.document import QAData
from analysis.questions.parse import Intent, Question


def term_in(texts: Iterable[str], term: str) -> bool:
    """Every word of the term (any of its '|' alternatives) starts a word in one of the texts:
    "sched" finds "pkg/core/sched/x.py" and "scheduler.py", never "rescheduled". A plural's singular is a
    whole word: "docs" finds "doc/x.md", never "docker/"."""
    texts = list(texts)
    for word in term.split():
        options = [o for o in word.split("|") if o]
        found = False
        for option in options:
            forms = {option: ""}
            if len(option) > 3 and option.endswith("s"):
                forms[option[:-1]] = "(?![a-z])"
            for form, end in forms.items():
                if re.search(r"[\u4e00-\u9fff]", form):
                    hit = any(form in t for t in texts)
                else:
                    hit = any(re.search(rf"(?<![a-z0-9]){re.escape(form)}{end}", t) for t in texts)
                if hit:
                    found = True
                    break
            if found:
                break
        if not found:
            return False
    return True


def path_like(term: str) -> bool:
    return "/" in term or bool(re.search(r"\.\w{1,6}$", term))


def touches(commit: Commit, analysis: Analysis | None, term: str) -> bool:
    """Whether a commit touches a path or area: a path term matches changed paths (as a prefix or a
    folder inside); an area term matches paths, the title and the analysis's scope."""
    paths = [f.path.lower() for f in commit.files] + [
        f.previous_path.lower() for f in commit.files if f.previous_path
    ]
    if path_like(term):
        wanted = term.strip("/")
        return any(
            p == wanted or p.startswith(wanted + "/") or f"/{wanted}/" in f"/{p}/" or p.endswith("/" + wanted)
            for p in paths
        )
    texts = [*paths, commit.title.lower()]
    if analysis is not None:
        texts += [s.lower() for s in analysis.scope]
    return term_in(texts, term)


def author_matches(name: str, commit: Commit) -> bool:
    """A name as people type it against the commit's author and login: "woosuk", "Woosuk Kwon", "kwon"."""
    wanted = name.lower().split()
    author = commit.author.lower().split()
    login = (commit.author_login or "").lower()
    if " ".join(wanted) in (" ".join(author), login):
        return True
    if all(any(a == w or (len(w) >= 3 and a.startswith(w)) for a in author) for w in wanted):
        return True
    return len(wanted) == 1 and len(wanted[0]) >= 3 and bool(login) and login.startswith(wanted[0])


def titled(q: Question, data: QAData) -> list[Commit]:
    """The day's commits (a card's thread: its commit) whose title holds every word the question calls a
    commit by ("the bump version commit")."""
    if not q.title_words:
        return []
    pool = data.commits or ([data.focus] if data.focus else [])
    return [c for c in pool if term_in([c.title.lower()], " ".join(q.title_words))]


def filtered(q: Question, data: QAData, *, use_terms: bool = True) -> list[Commit]:
    out = []
    for commit in data.commits:
        an = data.analyses.get(commit.sha)
        if q.tiers and (an is None or an.importance not in q.tiers):
            continue
        if q.author and not author_matches(q.author, commit):
            continue
        if use_terms and q.terms and not all(touches(commit, an, term) for term in q.terms):
            continue
        out.append(commit)
    return out


def _only_loose_words(q: Question) -> bool:
    """Words that are no keyword, and nothing else that says what the question is about."""
    if not q.loose_words or q.commits or q.title_words or q.ordinal is not None or q.scope is not None:
        return False
    return not (q.terms or q.author or q.tiers or q.count or q.limit or q.authors_ranked)


def loosely_titled(q: Question, data: QAData) -> Commit | None:
    """The one commit of the day whose title holds every word of the question that is no keyword ("is
    xxhash safe?"), when nothing else names a commit, the question is not plainly about the day and no
    other commit touches those words."""
    if not _only_loose_words(q):
        return None
    if q.intent not in (Intent.RISKIEST, Intent.EXPLAIN, Intent.FOLLOWUPS, Intent.SURFACE):
        return None
    words = " ".join(q.loose_words)
    hits = [c for c in data.commits if term_in([c.title.lower()], words)]
    if len(hits) != 1:
        return None
    # Words other commits' paths or scope hold too name an area ("are the kernels safe?"), not one commit.
    others = [c for c in data.commits if c is not hits[0] and touches(c, data.analyses.get(c.sha), words)]
    return None if others else hits[0]


def loosely_area(q: Question, data: QAData) -> Question | None:
    """Words that are no keyword ("are the kernels safe?"), held by several commits' titles, paths or scope,
    name an area: the question with them as its filter (the riskiest among those commits), or None."""
    if not _only_loose_words(q) or q.intent not in (Intent.RISKIEST, Intent.LIST, Intent.SURFACE):
        return None
    words = " ".join(q.loose_words)
    hits = [c for c in data.commits if touches(c, data.analyses.get(c.sha), words)]
    return replace(q, terms=(words,)) if len(hits) >= 2 else None
