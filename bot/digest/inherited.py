"""The second read of the surface step: a member removal whose class has bases imported from the repository's
other modules is checked against those modules at the commit, and dropped when a base still defines the name
(users still reach it, inherited). The parsers said which removals to check and where the bases are
(analysis/surface/inherited.py); this reads the modules through the source, a few per commit at most.

Bounded: at most MAX_READS files read per commit beyond what the batch read, over at most MAX_HOPS rounds (a
base's own imported base, a package's __init__ re-exporting it), each round one read call for the whole
batch. The texts read and the modules parsed are kept for the next batches (a base module changes seldom).
A read that fails, or a request budget nearly spent, leaves the facts as the parsers said them.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from analysis.errors import RateLimited, SourceError

if TYPE_CHECKING:  # the parsers load with the first run that reads files (bot/digest/surface.py)
    from analysis.surface.inherited import BaseRef, Query

log = logging.getLogger(__name__)

MAX_READS = 4  # files read per commit to follow its removals' bases
MAX_HOPS = 3  # rounds: the base's module, its own base's, a re-export's source
# A source with a request budget is asked only while this many reads remain after the round's: the
# commits' own files come first (without them a commit has no facts at all).
BUDGET_RESERVE = 100
KEPT_TEXTS = 256  # texts read, by (sha, path), kept for the next batches


@dataclass(slots=True)
class BaseTexts:
    """The base modules read so far, for the next batches of the same run (a base module is mostly the same
    text from one commit to the next)."""

    texts: OrderedDict[tuple[str, str], str | None] = field(default_factory=OrderedDict)
    parsed: dict[Any, Any] = field(default_factory=dict)  # analysis.surface.inherited's parsed modules

    def remember(self, found: dict[tuple[str, str], str | None]) -> None:
        self.texts.update(found)
        while len(self.texts) > KEPT_TEXTS:
            self.texts.popitem(last=False)


@dataclass(slots=True)
class _Open:
    """One removal being followed: the bases still to look in, and those looked in already."""

    sha: str
    query: Query
    frontier: tuple[BaseRef, ...]
    seen: set[BaseRef] = field(default_factory=set)


async def drop_inherited(
    source: Any,
    commits_texts: list[tuple[Any, Any, Any]],
    found: dict[str, Any],
    asked: dict[str, list[Query]],
    kept: BaseTexts,
    max_bytes: int,
) -> None:
    """Drop from `found` (sha → facts, changed in place) the removals `asked` that a base still defines.
    commits_texts: each batch's (commits, FileTexts, tree) as read."""
    for commits, texts, tree in commits_texts:
        opened = [_Open(c.sha, q, q.bases) for c in commits for q in asked.get(c.sha, ())]
        if not opened:
            continue
        paths = frozenset(tree) if tree is not None else None
        reads: dict[str, set[str]] = {}  # sha → paths read for it
        inherited: dict[str, list[Any]] = {}
        for _ in range(MAX_HOPS):
            wanted = _wanted(opened, texts, kept, reads)
            left = getattr(source, "surface_reads_left", None)  # a source with a request budget (an API's)
            if wanted and isinstance(left, int) and left - len(wanted) < BUDGET_RESERVE:
                break  # its budget is for the commits' own files: a removal unchecked stays one
            if wanted:
                try:
                    got = await source.read_files(sorted(wanted), max_bytes=max_bytes)
                except (SourceError, RateLimited, OSError) as exc:
                    log.warning("base classes of %d removals unread: %s", len(opened), exc)
                    break
                kept.remember({k: got.texts.get(k) for k in wanted})
            opened = await asyncio.to_thread(_step, opened, texts, kept, paths, inherited)
            if not opened:
                break
        for sha, changes in inherited.items():
            surface, *rest = found[sha]
            if surface is not None:
                found[sha] = (tuple(c for c in surface if c not in changes), *rest)


def _wanted(
    opened: list[_Open], texts: Any, kept: BaseTexts, reads: dict[str, set[str]]
) -> set[tuple[str, str]]:
    """The (sha, path) pairs this round reads: each open removal's bases' modules not read yet, within each
    commit's MAX_READS."""
    wanted: set[tuple[str, str]] = set()
    for o in opened:
        done = reads.setdefault(o.sha, set())
        for ref in o.frontier:
            for path in ref.paths:
                key = (o.sha, path)
                if key in texts.texts or key in kept.texts or path in done:
                    continue
                if len(done) >= MAX_READS:
                    break
                done.add(path)
                wanted.add(key)
    return wanted


def _step(
    opened: list[_Open],
    texts: Any,
    kept: BaseTexts,
    tree: frozenset[str] | None,
    inherited: dict[str, list[Any]],
) -> list[_Open]:
    """One round: each open removal's bases looked up in the texts read; those a base defines go to
    `inherited`, the others go on with the bases found next (none: it stays a removal)."""
    from analysis.surface.inherited import lookup

    left = []
    for o in opened:
        following: list[BaseRef] = []
        for ref in o.frontier:
            o.seen.add(ref)
            text, path = _text_of(o.sha, ref, texts, kept)
            if text is None:
                continue
            answer = lookup(text, path, ref.name, o.query.member, tree, kept.parsed)
            if answer is True:
                inherited.setdefault(o.sha, []).append(o.query.change)
                following = []
                break
            following += [r for r in answer if r not in o.seen and r not in following]
        if following:
            o.frontier = tuple(following)
            left.append(o)
    return left


def _text_of(sha: str, ref: BaseRef, texts: Any, kept: BaseTexts) -> tuple[str | None, str]:
    """The module's text at the commit (the batch's own read first), and its path."""
    for path in ref.paths:
        key = (sha, path)
        text = texts.texts.get(key) if key in texts.texts else kept.texts.get(key)
        if text is not None:
            return text, path
    return None, ""
