"""The surface step: fill Commit.surface and Commit.shipped for the commits a verb works on (digest, post,
analyze, chat /digest, weekly, eval), from the store when this parser version already read them, else
from the source: each touched file before and after, the packaging files and the tree, read in batches.

A source that cannot read files, a request budget spent or a failure costs the facts (surface None, one
warning per call), never the digest.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

from analysis.errors import RateLimited, SourceError
from analysis.models import Commit, FileTexts
from analysis.surface.packaging import packaging_paths
from bot.digest.collector import collector_paused
from bot.store.db import Store

log = logging.getLogger(__name__)

# Bump when the parsers find something new or differently: the stored facts of older versions are
# then read again (they stay in the store, unused).
PARSER_VERSION = "surface-3"
BATCH = 25  # commits whose files are read in one go (one cat-file pair locally)
MAX_FILE_BYTES = 1_000_000  # a larger file is generated or data: not read


async def fill_surface(source: Any, store: Store, commits: Sequence[Commit]) -> list[Commit]:
    """The commits with surface and shipped filled where they could be (the others unchanged)."""
    commits = list(commits)
    if not commits:
        return commits
    repo = source.repo
    found = await asyncio.to_thread(store.surfaces, repo, [c.sha for c in commits], PARSER_VERSION)
    todo = [c for c in commits if c.sha not in found]
    reader = getattr(source, "read_files", None)
    if todo and reader is not None:
        fresh: dict[str, tuple[Any, Any]] = {}
        try:
            for i in range(0, len(todo), BATCH):
                fresh.update(await _read_batch(source, todo[i : i + BATCH]))
        except (SourceError, RateLimited, OSError) as exc:
            log.warning(
                "surface facts of %s unavailable for %d commits: %s", repo, len(todo) - len(fresh), exc
            )
        complete = {sha: facts for sha, facts in fresh.items() if facts[0] is not None}
        await asyncio.to_thread(store.save_surfaces, repo, PARSER_VERSION, complete)
        found.update(fresh)
    out = []
    for commit in commits:
        facts = found.get(commit.sha)
        out.append(dataclasses.replace(commit, surface=facts[0], shipped=facts[1]) if facts else commit)
    return out


def with_stored_surface(store: Store, commits: Sequence[Commit]) -> list[Commit]:
    """Commits rebuilt from the store (a recorded digest) with the facts stored for them; no reading."""
    if not commits:
        return list(commits)
    found = store.surfaces(commits[0].repo, [c.sha for c in commits], PARSER_VERSION)
    return [
        dataclasses.replace(c, surface=found[c.sha][0], shipped=found[c.sha][1]) if c.sha in found else c
        for c in commits
    ]


async def _read_batch(source: Any, commits: list[Commit]) -> dict[str, tuple[Any, Any]]:
    """{sha: (surface or None, shipped or None)} for a batch: the tree and the packaging files at its
    newest commit, every wanted file before and after, in one read."""
    # The parsers are loaded by the first run that reads files: a run whose facts are all stored (an
    # LLM day after the heuristic one, a card) does not load them before its first model call.
    from analysis.surface.commit import commit_facts, file_specs

    newest = max(commits, key=lambda c: c.committed_at)
    lister = getattr(source, "list_paths", None)
    tree = await lister(newest.sha) if lister is not None else None
    changed = {f.path for c in commits for f in c.files}
    packaging = [(newest.sha, p) for p in packaging_paths(changed, tree)]
    specs = [spec for c in commits for spec in file_specs(c)]
    texts: FileTexts = await source.read_files([*packaging, *specs], max_bytes=MAX_FILE_BYTES)
    packaging_files = {p: texts.texts[(sha, p)] for sha, p in packaging if texts.texts.get((sha, p))}

    def facts() -> dict[str, tuple[Any, Any]]:
        cache: dict = {}  # the batch's commits mostly share one packaging
        found: dict[str, tuple[Any, Any]] = {}
        with collector_paused():  # parsing allocates many trees, no cycles
            for commit in commits:
                try:
                    found[commit.sha] = commit_facts(commit, texts, packaging_files, tree, cache)
                except Exception:
                    # a parser bug on code nobody foresaw costs this commit's facts, not the digest
                    log.exception(
                        "surface facts of %s %s failed; the commit is ranked without them",
                        source.repo,
                        commit.short_sha,
                    )
                    found[commit.sha] = (None, None)
        return found

    return await asyncio.to_thread(facts)  # parsing is CPU work: off the event loop
