"""The surface step: fill Commit.surface and Commit.shipped for the commits a verb works on (digest, post,
analyze, chat /digest, weekly, eval), from the store when this parser version already read them, else
from the source: each touched file before and after, the packaging files and the tree, read in batches.

Parsing is CPU work: with enough batches (a long eval, a big day) and more than one core, the batches are
parsed in worker processes while the next ones are read (issue 21); else in a thread, one after another.

After the parse, two more reads refine the facts: a member removal whose base class in another module still
defines it is dropped (inherited.py), and each code name removed or renamed is marked with whether the docs
before the batch mention it (documented.py).

A source that cannot read files, a request budget spent or a failure costs the facts (surface None, one
warning per call), never the digest; so does a worker process that dies (its batches parsed here then).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import traceback
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from analysis.errors import RateLimited, SourceError
from analysis.models import Commit, FileTexts
from analysis.surface.packaging_files import is_packaging_input, packaging_paths
from analysis.surface.release_entries import apart
from bot.digest.collector import collector_paused
from bot.digest.documented import DocsSeen, mark_documented
from bot.digest.inherited import BaseTexts, drop_inherited
from bot.store.db import Store

if TYPE_CHECKING:  # a digest day parses in a thread: the process machinery is imported when a pool starts
    from concurrent.futures import ProcessPoolExecutor

log = logging.getLogger(__name__)

# Bump when the parsers find something new or differently: the stored facts of older versions are
# then read again (they stay in the store, unused).
# surface-16 .. surface-26: see CHANGELOG.md (docs mentions, requirements, retyped defaults, reorders, prose,
#             packaging folders, moved definitions, registrations, vendored trees, computed setup.py packages)
# surface-27: setup.py keywords through named constants and setup(**metadata); a requirements file installing its
#             own checkout, or named for a maintainers' tool, is a dev file; a warning module __getattr__ deprecates
#             the names it serves; a .pyi stub merged into its module removes nothing; a towncrier `removal`
#             fragment's text says deprecation or removal; a conventional scope ci/tests/docs/examples decides;
#             a runtime requirement removed outright is dependency_dropped (Distribution reads requires-python);
#             one-word fragment types (`breakingchange`) and `_`-prefixed fragment folders are read
PARSER_VERSION = "surface-27"
BATCH = 25  # commits whose files are read in one go (one cat-file pair locally)
MAX_FILE_BYTES = 1_000_000  # a larger file is generated or data: not read
# Worker processes only from this many commits to read on (and two batches): a digest day (~45 commits)
# parses in a thread rather than wait for processes to start (a spawned worker imports the parsers).
POOL_MIN_COMMITS = 3 * BATCH
MAX_WORKERS = 4
# Consecutive batches a worker parses as one task: a file the batches touch one after another is parsed once
# per version, not once per batch (four months of vllm: about a tenth less parsing); each holds its texts.
TASK_BATCHES = 3

Facts = tuple[Any, Any, Any]  # (surface or None, shipped or None, prose files or None)


@dataclasses.dataclass(frozen=True, slots=True)
class Batch:
    """What one batch's parsing needs, read by the parent; pickled to a worker as it is."""

    commits: tuple[Commit, ...]
    texts: FileTexts
    packaging_files: dict[str, str]
    tree: Any  # every path at the batch's newest commit, or None


@dataclasses.dataclass(frozen=True, slots=True)
class Parsed:
    found: dict[str, Facts]
    failed: list[tuple[str, str]]  # (short sha, traceback): logged by the parent, which has the handlers
    # sha → the member removals whose class has bases imported from the repository's other modules, which
    # the parent reads before the facts are final (bot/digest/inherited.py)
    queries: dict[str, list[Any]] = dataclasses.field(default_factory=dict)


class ParserFailure(Exception):
    """A parser's exception as its traceback text (a worker's exception cannot cross with its traceback)."""


class Parsers:
    """The worker processes of the surface step, started at the first call with enough batches and kept
    for the next calls until closed: eval fills a long span chunk by chunk with one pool. A pool that broke
    is not used again (the parsing goes on in-process)."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers if workers is not None else min(usable_cores(), MAX_WORKERS)
        self._pool: ProcessPoolExecutor | None = None
        self.broken = False

    def pool(self) -> ProcessPoolExecutor | None:
        if self.broken or self.workers < 2:
            return None
        if self._pool is None:
            # spawn, not fork: the parent has threads (asyncio's, the store's) and an open SQLite database
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context)
        return self._pool

    def mark_broken(self) -> None:
        self.broken = True
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> Parsers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may run on (a container's share)
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


async def fill_surface(source: Any, store: Store, commits: Sequence[Commit]) -> list[Commit]:
    """The commits with surface and shipped filled where they could be (the others unchanged)."""
    [filled] = await fill_surfaces(source, store, [commits])
    return filled


async def fill_surfaces(
    source: Any, store: Store, groups: Sequence[Sequence[Commit]], parsers: Parsers | None = None
) -> list[list[Commit]]:
    """fill_surface for several groups at once (eval: a run of days), each group batched on its own as
    fill_surface would batch it alone — a batch's tree and packaging are read at its newest commit, so
    the batches, hence the facts, are the same — and all of them parsed in one pipeline. parsers: worker
    processes to reuse (else the call starts its own when it has enough batches, and stops them)."""
    groups = [list(group) for group in groups]
    everything = [c for group in groups for c in group]
    if not everything:
        return groups
    repo = source.repo
    found = await asyncio.to_thread(store.surfaces, repo, [c.sha for c in everything], PARSER_VERSION)
    if getattr(source, "read_files", None) is not None:
        todos, seen = [], set(found)
        for group in groups:
            todo = [c for c in group if c.sha not in seen]  # a commit twice: read with its first group
            seen.update(c.sha for c in todo)
            todos.append(todo)
        grouped = [batches_of(todo) for todo in todos]
        enough = sum(map(len, grouped)) >= 2 and sum(len(todo) for todo in todos) >= POOL_MIN_COMMITS
        own = parsers is None
        parsers = parsers if parsers is not None else Parsers()
        try:
            pool = parsers.pool() if enough else None
            found.update(await _read_and_parse(source, store, grouped, parsers if pool else None))
        finally:
            if own:
                parsers.close()
    return [[_with_facts(c, found[c.sha]) if c.sha in found else c for c in group] for group in groups]


async def _read_and_parse(
    source: Any, store: Store, grouped: list[list[list[Commit]]], parsers: Parsers | None
) -> dict[str, Facts]:
    """Each group's batches read in turn and parsed: in a thread one after another, or (parsers) in the
    workers while the next batches, of this group or the next, are read, TASK_BATCHES consecutive
    batches to a task: one task per worker in flight and the next one read meanwhile (their texts held).
    A group's complete facts are stored once its batches are parsed, as fill_surface stores its own."""
    repo = source.repo
    fresh: dict[str, Facts] = {}
    inflight: deque[tuple[tuple[Batch, ...], asyncio.Future[Parsed]]] = deque()
    unsaved: deque[tuple[int, list[Commit]]] = deque()  # (batches read when its reading ended, group)
    pending: list[Batch] = []  # read, not yet handed to a worker
    sent = settled = 0
    bases = BaseTexts()  # the base modules read for removals, kept from batch to batch
    docs = DocsSeen()  # what the docs mention, kept from batch to batch

    def send() -> None:
        nonlocal sent, pending
        pool = parsers.pool() if parsers else None
        if pool is None:  # parsing is CPU work: off the event loop, a batch at a time
            for batch in pending:
                inflight.append(((batch,), asyncio.ensure_future(asyncio.to_thread(parse_batch, batch))))
        else:
            task = _one_text_per_blob(pending)
            inflight.append((task, asyncio.wrap_future(_submit(pool, task))))
        sent += len(pending)
        pending = []

    async def settle_one() -> None:
        nonlocal settled
        batches, future = inflight.popleft()
        try:
            parsed = await future
        except Exception as exc:  # a worker died (BrokenProcessPool) or the batch did not pickle
            assert parsers is not None
            if not parsers.broken:
                log.warning("surface parsing workers failed (%s); parsing in this process instead", exc)
                parsers.mark_broken()
            parsed = await asyncio.to_thread(parse_batches, batches)
        _log_failures(repo, parsed)
        if parsed.queries:  # removals a base class of another module may still define: its module read
            read = [(b.commits, b.texts, b.tree) for b in batches]
            await drop_inherited(source, read, parsed.found, parsed.queries, bases, MAX_FILE_BYTES)
        # code names removed or renamed: whether the docs before each batch mention them
        await mark_documented(source, store, [b.commits for b in batches], parsed.found, docs)
        fresh.update(parsed.found)
        settled += len(batches)

    async def save_parsed_groups() -> None:
        while unsaved and unsaved[0][0] <= settled:
            _, todo = unsaved.popleft()
            complete = {c.sha: fresh[c.sha] for c in todo if c.sha in fresh and fresh[c.sha][0] is not None}
            await asyncio.to_thread(store.save_surfaces, repo, PARSER_VERSION, complete)

    for group_batches in grouped:
        if not group_batches:
            continue
        todo = [c for batch in group_batches for c in batch]
        done = 0
        try:
            for chunk in group_batches:
                pending.append(await _read_batch(source, chunk))
                done += len(pending[-1].commits)
                pool = parsers.pool() if parsers else None
                if pool is None or len(pending) >= TASK_BATCHES:
                    # sent once a worker (or the thread) is free: the next ones are read while they parse
                    while len(inflight) >= (parsers.workers if pool is not None else 1):
                        await settle_one()
                        await save_parsed_groups()
                    send()
        except (SourceError, RateLimited, OSError) as exc:
            log.warning("surface facts of %s unavailable for %d commits: %s", repo, len(todo) - done, exc)
        unsaved.append((sent + len(pending), todo))
        await save_parsed_groups()
    if pending:
        send()
    while inflight:
        await settle_one()
        await save_parsed_groups()
    return fresh


def batches_of(commits: Sequence[Commit]) -> list[list[Commit]]:
    """The commits in batches of at most BATCH, in the order they landed, a batch ending before a commit that
    changes a packaging file or a build description (meson.build): a batch's tree and packaging are read at
    its newest commit, and a commit must be judged with the packaging of its own time (a package renamed later
    the same day made an earlier removal from it "not shipped")."""
    batches: list[list[Commit]] = []
    for commit in sorted(commits, key=lambda c: c.committed_at):
        starts = not batches or len(batches[-1]) >= BATCH
        if starts or any(is_packaging_input(f.path) for f in commit.files):
            batches.append([])
        batches[-1].append(commit)
    return batches


def _one_text_per_blob(batches: list[Batch]) -> tuple[Batch, ...]:
    """The batches of one task with equal texts made one object (each batch read its own copy of a blob
    another one read too): `Collected` then finds a version collected for another batch."""
    seen: dict[str, str] = {}
    for batch in batches:
        texts = batch.texts.texts
        for key, text in texts.items():
            if text is not None:
                texts[key] = seen.setdefault(text, text)
    return tuple(batches)


def _submit(pool: ProcessPoolExecutor, batches: tuple[Batch, ...]) -> Future[Parsed]:
    try:
        return pool.submit(_work, batches)
    except Exception as exc:  # the pool broke before this task: the caller falls back as for a death
        failed: Future[Parsed] = Future()
        failed.set_exception(exc)
        return failed


def _log_failures(repo: str, parsed: Parsed) -> None:
    for short_sha, trace in parsed.failed:
        # a parser bug on code nobody foresaw costs this commit's facts, not the digest
        log.error(
            "surface facts of %s %s failed; the commit is ranked without them",
            repo,
            short_sha,
            exc_info=ParserFailure(trace),
        )


def with_stored_surface(store: Store, commits: Sequence[Commit]) -> list[Commit]:
    """Commits rebuilt from the store (a recorded digest) with the facts stored for them; no reading."""
    if not commits:
        return list(commits)
    found = store.surfaces(commits[0].repo, [c.sha for c in commits], PARSER_VERSION)
    return [_with_facts(c, found[c.sha]) if c.sha in found else c for c in commits]


def _with_facts(commit: Commit, facts: Facts) -> Commit:
    surface, entries = apart(facts[0])  # the notes' word, no fact of what the code does (release_entries.py)
    changed = {"surface": surface, "shipped": facts[1], "prose_files": facts[2], "release_entries": entries}
    return dataclasses.replace(commit, **changed)


async def _read_batch(source: Any, commits: list[Commit]) -> Batch:
    """A batch's texts: the tree and the packaging files at its newest commit, every wanted file before
    and after, in one read."""
    # The parsers are loaded by the first run that reads files: a run whose facts are all stored (an
    # LLM day after the heuristic one, a card) does not load them before its first model call.
    from analysis.surface.commit import file_specs, without_diffs

    newest = max(commits, key=lambda c: c.committed_at)
    lister = getattr(source, "list_paths", None)
    tree = await lister(newest.sha) if lister is not None else None
    changed = {f.path for c in commits for f in c.files}
    packaging = [(newest.sha, p) for p in packaging_paths(changed, tree)]
    specs = [spec for c in commits for spec in file_specs(c)]
    texts: FileTexts = await source.read_files([*packaging, *specs], max_bytes=MAX_FILE_BYTES)
    packaging_files = {p: texts.texts[(sha, p)] for sha, p in packaging if texts.texts.get((sha, p))}
    # the parsers hardly look at the diffs: a worker is not sent them
    return Batch(tuple(map(without_diffs, commits)), texts, packaging_files, tree)


_WORKER_RELATIVES: Any = None  # a worker's versions of the files it parsed last, for its next tasks


def _work(batches: tuple[Batch, ...]) -> Parsed:
    """What a worker runs (a name of its own: the tests make a worker die or fail here)."""
    global _WORKER_RELATIVES
    if _WORKER_RELATIVES is None:
        from analysis.surface.blanked_bodies import Relatives

        _WORKER_RELATIVES = Relatives()
    # What the worker keeps from task to task, and the task's result, are left out of every later collection:
    # re-enabled after a task, the collector would walk them all (they hold no cycles).
    with collector_paused(freeze=True):
        return parse_batches(batches, _WORKER_RELATIVES)


def parse_batch(batch: Batch) -> Parsed:
    """{sha: (surface or None, shipped or None, prose files or None)} of a batch's commits, in this process
    or a worker's."""
    return parse_batches((batch,))


def parse_batches(batches: Sequence[Batch], relatives: Any = None) -> Parsed:
    """parse_batch of consecutive batches, each Python version collected once for all of them (a file's
    version after one commit is its version before the next). relatives: the versions of files parsed
    before (analysis/surface/blanked_bodies.py: Relatives), kept by a worker from task to task."""
    from analysis.surface.blanked_bodies import Relatives
    from analysis.surface.commit import commit_facts, expect_versions
    from analysis.surface.inherited import queries, without_inherited
    from analysis.surface.python import Collected

    collected = Collected(relatives if relatives is not None else Relatives())
    for batch in batches:
        expect_versions(batch.commits, batch.texts, collected)
    found: dict[str, Facts] = {}
    failed: list[tuple[str, str]] = []
    asked: dict[str, list[Any]] = {}
    with collector_paused():  # parsing allocates many trees, no cycles
        for batch in batches:
            cache: dict = {}  # the batch's commits mostly share one packaging
            # a set: each commit asks, path by path, whether its files are in the tree
            tree = frozenset(batch.tree) if batch.tree is not None else None
            for commit in batch.commits:
                try:
                    surface, shipped, prose = commit_facts(
                        commit, batch.texts, batch.packaging_files, tree, cache, collected
                    )
                    if surface:  # a member removal its class still inherits is none (inherited.py)
                        after = {c.path: batch.texts.texts.get((commit.sha, c.path)) for c in surface}
                        inherited, asked[commit.sha] = queries(surface, after, tree, collected.tree_after)
                        surface = without_inherited(surface, inherited)
                    found[commit.sha] = (surface, shipped, prose)
                except Exception as exc:
                    failed.append((commit.short_sha, "".join(traceback.format_exception(exc)).rstrip()))
                    found[commit.sha] = (None, None, None)
    return Parsed(found, failed, {sha: q for sha, q in asked.items() if q})
