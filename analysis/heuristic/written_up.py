"""Docs a commit writes for users beside its change of code they run: the author tells users what changed,
which a maintainer does for what users get (a header now sent, a value now accepted, an option now honoured)
and seldom for a fix or an internal change, even where the change is a function body no surface fact names.
On pydantic's history 15 of 28 features changed docs beside the code, 4 of 115 fixes. Pure: facts in, paths out.
"""

from __future__ import annotations

import re

from analysis.heuristic.facts import Facts
from analysis.release_headings import Category
from analysis.surface.doc_mentions import is_doc_text

# What the commit's own release-notes entry may call it and still be written up for users: not a fix, a docs
# change or an internal one (the author filed the docs beside it as that).
_NOT_WRITTEN_UP = frozenset({Category.FIX, Category.DOCS, Category.INTERNAL})
# A title that names the docs ("Hide deprecated options in README", "Document X", "Updated docs/ci for Y"): the
# docs are what the commit is about, the code it changes serves them.
_NAMES_DOCS = re.compile(
    r"\b(?:readme|docs?|documentation|docstrings?|document(?:s|ed|ing)?)\b", re.IGNORECASE
)


def written_up_docs(facts: Facts) -> list[str]:
    """The documentation text files (READMEs and docs pages, not release notes nor their fragments) to which
    the commit adds lines with words, in its order; none where its own release-notes entry files it as a fix,
    docs or internal change, or its title names the docs."""
    if _NAMES_DOCS.search(facts.subject) or any(entry.category in _NOT_WRITTEN_UP for entry in facts.entries):
        return []
    found = []
    for change in facts.files:
        if not change.additions or not is_doc_text(change.path):
            continue
        diff = facts.diffs.get(change.path)
        if diff is not None and any(any(ch.isalpha() for ch in line) for line in diff.added.split("\n")):
            found.append(change.path)
    return found
