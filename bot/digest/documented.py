"""The docs read of the surface step: each code name a batch's commits remove or rename without an alias is
marked with whether the repository's documentation mentioned it before the batch (analysis/surface/
doc_mentions.py), so that the rubric tells a name users call from one only the package's own code calls.

The docs are read at the parent of the batch's first commit: their blob ids from one tree listing, then only
the blobs not seen before, each reduced to the words it mentions and kept in the store by blob id (a day's
docs are read once; the next day, only the files that changed). A source that cannot list blob ids, a listing
cut short, a request budget that cannot cover the docs, or a read that fails leaves the changes unmarked
(not known): never the facts, never the digest.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from analysis.errors import RateLimited, SourceError
from analysis.models import Commit
from analysis.surface.doc_mentions import DocWords, doc_words, is_doc_text, marked, mentions, needs_docs
from bot.digest.inherited import BUDGET_RESERVE
from bot.store.db import Store

log = logging.getLogger(__name__)

MAX_DOC_FILES = 3000  # more documentation files than this at a revision: a data set, not docs (not read)
MAX_DOC_BYTES = 1_000_000  # a larger documentation file is generated: left out
KEPT_REVISIONS = 8  # revisions whose docs are kept for the next batches of the same run
KEPT_BLOBS = 20_000  # docs files' words kept in memory for the same run (each a few thousand words at most)

Mentioned = tuple[frozenset[str], int]  # the words a file mentions, and its length

# Which paths are docs, asked of every path of each revision's tree: most come back the next batch.
_is_doc_path = lru_cache(maxsize=1 << 16)(is_doc_text)


@dataclass(slots=True)
class DocsSeen:
    """What the docs read so far said, for the next batches of the same run."""

    blobs: dict[str, Mentioned] = field(default_factory=dict)
    revisions: OrderedDict[str, DocWords | None] = field(default_factory=OrderedDict)
    # the docs of the last revision by their blob ids: the next batch's docs are mostly the same files
    last: tuple[frozenset[str], DocWords] | None = None

    def remember(self, sha: str, docs: DocWords | None) -> None:
        self.revisions[sha] = docs
        while len(self.revisions) > KEPT_REVISIONS:
            self.revisions.popitem(last=False)


async def mark_documented(
    source: Any, store: Store, batches: Sequence[Sequence[Commit]], found: dict[str, Any], seen: DocsSeen
) -> None:
    """Mark, in `found` (sha → (surface, shipped, prose), changed in place), the code names each batch's
    commits remove or rename without an alias, by the docs before the batch."""
    if getattr(source, "list_blobs", None) is None or getattr(source, "read_blobs", None) is None:
        return
    for commits in batches:
        asking = [c.sha for c in commits if _asks(found.get(c.sha))]
        first = min(commits, key=lambda c: c.committed_at, default=None)
        if not asking or first is None or not first.parents:
            continue
        try:
            docs = await docs_at(source, store, first.parents[0], seen)
        except (SourceError, RateLimited, OSError) as exc:
            log.warning(
                "docs of %s unreadable at %s (names left unmarked): %s",
                source.repo,
                first.parents[0][:12],
                exc,
            )
            continue
        if docs is None or not docs.is_reference:
            continue
        for sha in asking:
            surface, shipped, prose = found[sha]
            found[sha] = (marked(surface, docs), shipped, prose)


def _asks(facts: Any) -> bool:
    return facts is not None and bool(facts[0]) and needs_docs(facts[0])


async def docs_at(source: Any, store: Store, sha: str, seen: DocsSeen) -> DocWords | None:
    """What the docs at a commit mention; None when they cannot be read whole."""
    if sha in seen.revisions:
        return seen.revisions[sha]
    listed = await source.list_blobs(sha)
    docs = None
    if listed is not None:
        blobs = frozenset(blob for path, blob in listed.items() if _is_doc_path(path))
        if len(blobs) <= MAX_DOC_FILES:
            docs = await _words(source, store, blobs, seen)
    seen.remember(sha, docs)
    return docs


async def _words(source: Any, store: Store, blobs: frozenset[str], seen: DocsSeen) -> DocWords | None:
    if seen.last is not None and seen.last[0] == blobs:
        return seen.last[1]
    unknown = [b for b in blobs if b not in seen.blobs]
    if unknown:
        seen.blobs.update(await asyncio.to_thread(store.doc_mentions, unknown))
        unread = [b for b in unknown if b not in seen.blobs]
        if unread:
            left = getattr(source, "surface_reads_left", None)  # a source with a request budget (an API's)
            if isinstance(left, int) and left - len(unread) < BUDGET_RESERVE:
                return None  # the budget is for the commits' own files
            texts = await source.read_blobs(unread, max_bytes=MAX_DOC_BYTES)
            if any(b not in texts for b in unread):
                return None  # read in part: a missing file may be the one that mentions a name
            fresh = await asyncio.to_thread(_mentioned, texts)
            seen.blobs.update(fresh)
            await asyncio.to_thread(store.save_doc_mentions, fresh)
    docs = doc_words(seen.blobs[b] for b in blobs)
    seen.last = (blobs, docs)
    if len(seen.blobs) > KEPT_BLOBS:  # a long run's oldest go first (the store keeps them all)
        for old in [b for b in seen.blobs if b not in blobs][: len(seen.blobs) - KEPT_BLOBS]:
            del seen.blobs[old]
    return docs


def _mentioned(texts: Mapping[str, str | None]) -> dict[str, Mentioned]:
    """Each blob's mentions and length (a blob not text, or too large, mentions nothing)."""
    return {b: (mentions(t), len(t)) if t is not None else (frozenset(), 0) for b, t in texts.items()}
