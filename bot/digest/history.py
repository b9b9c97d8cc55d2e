"""The branch's history for the judgment signals: read from the source into the store (only what the
store lacks), follow-up links mined and stored, and each day's commits given their HistoryFacts.

A source without a `history` method, or one that fails, costs the ranking its history, never the
digest: the rubric falls back to its size prior and the failure is logged once.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from analysis.errors import RateLimited, SourceError
from analysis.heuristic import RUBRIC_VERSION
from analysis.history.facts import HistoryFacts
from analysis.history.followups import LINK_RULES, PastCommit, mine
from analysis.history.index import SCORE_PARAMS, HistoryIndex, day_links, facts_for_day
from analysis.models import Commit
from bot.store.db import Store

log = logging.getLogger(__name__)


Progress = Callable[[int, int], None]  # (done, total), in what the source counts: commits read


async def sync_history(
    source: Any,
    store: Store,
    branch: str,
    since: datetime,
    until: datetime,
    progress: Progress | None = None,
    *,
    counted_before: datetime | None = None,
) -> bool:
    """Make the stored history of `branch` complete over [since, until); False when the source
    cannot read history. Only the parts outside the stored range are read (all of it again when the stored
    history is not the branch's any more, see _still_on_branch). `progress` is called on
    the event loop's thread, whichever thread the source reports from.

    counted_before: the files' line counts are wanted only before it. A source that can count them later
    (history_counts, past_files) reads the commits from then on with their paths alone, stored uncounted:
    eval counts its span from the patches it reads anyway (SpanCounts). Commits left uncounted (an eval
    stopped half way, the days after its span) are counted here when a later read wants them."""
    reader = getattr(source, "history", None)
    if reader is None:
        return False
    covered = store.history_range(source.repo, branch)
    if covered is not None and not await _still_on_branch(source, store, branch):
        log.warning(
            "%s@%s: the stored history is no longer the branch's (rewritten, or another repository of the"
            " same name): reading it again",
            source.repo, branch,
        )  # fmt: skip
        await asyncio.to_thread(store.forget_history, source.repo, branch)
        covered = None
    if covered is None or covered[1] < since or covered[0] > until:
        spans = [(since, until)]  # nothing stored next to it: a new range
        oldest, newest = since, until
    else:
        spans = [span for span in ((since, covered[0]), (covered[1], until)) if span[0] < span[1]]
        oldest, newest = min(since, covered[0]), max(until, covered[1])
    options: dict[str, Any] = {}
    if progress is not None:
        loop = asyncio.get_running_loop()
        options["progress"] = lambda done, total: loop.call_soon_threadsafe(progress, done, total)
    counts_later = getattr(source, "history_counts", None) is not None
    cut = until if counted_before is None or not counts_later else max(since, min(until, counted_before))
    for start, end in spans:
        for part_start, part_end, counted in ((start, min(end, cut), True), (max(start, cut), end, False)):
            if part_start < part_end:
                read = reader(
                    branch, part_start, part_end, **options, **({} if counted else {"counted": False})
                )
                past: list[PastCommit] = await read
                await asyncio.to_thread(store.save_history, source.repo, branch, past, counted=counted)
    if spans:
        store.set_history_range(source.repo, branch, oldest, newest)
    uncounted = await asyncio.to_thread(store.uncounted_history, source.repo, branch, since, cut)
    if uncounted and counts_later:
        files = await source.history_counts(uncounted[::-1])  # listed newest first, as the source lists them
        await asyncio.to_thread(store.count_history, source.repo, branch, files)
    elif uncounted:  # left by another source of the same name: read again, counted
        past = await reader(branch, since, cut, **options)
        await asyncio.to_thread(store.save_history, source.repo, branch, past)
    return True


async def _still_on_branch(source: Any, store: Store, branch: str) -> bool:
    """Whether the newest stored commit of the branch is still in its history: a source that can say
    (`on_branch`) catches a rewritten branch and a repository that took an old one's name (a local clone's
    name is its folder's), whose stored history would otherwise stand for theirs."""
    check = getattr(source, "on_branch", None)
    newest = await asyncio.to_thread(store.newest_history_sha, source.repo, branch) if check else None
    return newest is None or bool(await check(newest, branch))


async def history_synced(
    source: Any, store: Store, branch: str, since: datetime, until: datetime, progress: Progress | None = None
) -> bool:
    """Whether the stored history covers [since, until) (read now where it does not); False, logged once,
    when the source cannot read it: the ranking goes without, never the digest."""
    try:
        return await sync_history(source, store, branch, since, until, progress)
    except (SourceError, RateLimited) as exc:
        log.warning("history of %s@%s unavailable, ranking without it: %s", source.repo, branch, exc)
        return False


async def day_history(
    source: Any,
    store: Store,
    branch: str,
    commits: Sequence[Commit],
    cutoff: datetime,
    window_days: int,
    synced: Awaitable[bool] | None = None,
) -> dict[str, HistoryFacts]:
    """HistoryFacts for the day's commits, from history strictly before `cutoff`. Links mined on the
    way (the day's commits included) are stored for the radar and `digestbot eval`. `synced`: a
    `history_synced` of the window already under way (a digest starts the read early, beside the
    surface step)."""
    if not commits or window_days <= 0:
        return {}
    since = cutoff - timedelta(days=window_days)
    if not await (synced or history_synced(source, store, branch, since, cutoff)):
        return {}
    # CPU work over months of history: off the event loop, which also serves chat in `digestbot run`.
    return await asyncio.to_thread(_facts, store, source.repo, branch, list(commits), cutoff, window_days)


def _facts(
    store: Store, repo: str, branch: str, commits: list[Commit], cutoff: datetime, window_days: int
) -> dict[str, HistoryFacts]:
    since = cutoff - timedelta(days=window_days)
    # The messages first: the span's fingerprint and its links need no file lists.
    past = store.history(repo, branch, since, cutoff, files=False)
    # The months before the cutoff are mined once per span ("what it mines is kept"): a second run over
    # the same span (another verb, the LLM after the heuristic, a re-run) mines only the day's commits.
    # The link rules' version too: links kept from older rules are mined again after an upgrade.
    fingerprint = hashlib.sha1("\n".join([LINK_RULES, *(c.sha for c in past)]).encode()).hexdigest()
    mined = store.mined_span(repo, branch, since, cutoff, fingerprint)
    if mined is None:
        mined = mine(past)
        store.save_mined_span(repo, branch, since, cutoff, fingerprint, mined)
    links = day_links(commits, past, mined)
    store.save_followups(repo, links)
    # The span's per-path counts and past scores too (the day's commits are placed among them): reading
    # months of file lists, counting and scoring them is most of this step's CPU, before a card's or a
    # day's first call.
    version = f"{RUBRIC_VERSION};{SCORE_PARAMS}"
    kept = store.span_index(repo, branch, since, cutoff, fingerprint, version)
    index = HistoryIndex.restored(kept[1], links, cutoff, window_days, kept[0]) if kept else None
    if index is None:
        index = HistoryIndex(store.history(repo, branch, since, cutoff), links, cutoff, window_days)
        scores = index.past_scores()
        store.save_span_index(repo, branch, since, cutoff, fingerprint, version, scores, index.state())
    return facts_for_day(commits, past, links, cutoff, window_days, index=index)


class SpanCounts:
    """The line counts of eval's span, read with its paths alone (sync_history's counted_before), worked out
    from the commits as eval reads them (the source's past_files: from their patches), stored, and put in
    `history`, the list eval's SlidingHistory reads: it reads a commit's files when a day's window first
    holds it, after the commit's own day was read and counted (days are read in order, ranked after)."""

    def __init__(
        self,
        source: Any,
        store: Store,
        branch: str,
        history: list[PastCommit],
        since: datetime,
        until: datetime,
    ) -> None:
        self._source, self._store, self._branch = source, store, branch
        self._history = history
        self._position = {c.sha: i for i, c in enumerate(history)}
        self._uncounted = {
            sha for sha in store.uncounted_history(source.repo, branch, since, until) if sha in self._position
        }

    async def count(self, commits: Sequence[Commit]) -> None:
        """Count those of these commits (read in full) whose counts are missing."""
        todo = [c for c in commits if c.sha in self._uncounted]
        if todo:
            await self._keep(await self._source.past_files(todo))

    async def count_rest(self) -> None:
        """Count, with the source's history read, what no commit read counted (none when every day was read)."""
        if self._uncounted:
            by_age = sorted(self._uncounted, key=self._position.__getitem__, reverse=True)
            await self._keep(await self._source.history_counts(by_age))

    async def _keep(self, files: dict[str, tuple[tuple[str, int], ...]]) -> None:
        files = {sha: f for sha, f in files.items() if sha in self._uncounted}
        await asyncio.to_thread(self._store.count_history, self._source.repo, self._branch, files)
        for sha, counted in files.items():
            at = self._position[sha]
            self._history[at] = replace(self._history[at], files=counted)  # one item: atomic for a reader
            self._uncounted.discard(sha)
