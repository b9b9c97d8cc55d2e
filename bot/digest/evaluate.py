"""`digestbot eval`: replay a span of days as the bot would have seen each one, rank its commits, and
score the ranks against two answer keys (analysis/evaluation/scoring.py): the follow-ups mined from the whole span,
and the release notes at the branch tip (analysis/evaluation/release_notes.py), each beside a rank by size.

Each day is ranked with the history known before that day's window (as a digest run the next
morning would have), while the answer keys read history up to the horizon past the last day and the
notes as they are now. Analyses are cached like a digest's, so a second run with the same analyser
costs nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from analysis.errors import InputError
from analysis.evaluation.scoring import (
    RESAMPLES,
    SEED,
    Judged,
    KeyScore,
    NotesScore,
    Score,
    by_month,
    missed,
    notes_score,
    score,
    versus_size,
)
from analysis.history.facts import HistoryFacts
from analysis.history.followups import FollowUpLink, PastCommit, find_links
from analysis.history.index import facts_for_day
from analysis.history.sliding import SlidingHistory
from analysis.models import Analysis, Commit
from analysis.window import day_window
from bot.digest.analyzers import Analyzer
from bot.digest.history import SpanCounts, sync_history
from bot.digest.notes_source import FoundNotes, find_release_notes
from bot.digest.pipeline import analyse_commits, keep_commits
from bot.digest.surface import Parsers, fill_surfaces
from bot.store.db import Store, utcnow

Progress = Callable[[int, int], None]
CHUNK_COMMITS = 250  # eval fills the surfaces of this many commits' days at once (in parallel)
CHUNK_DAYS = 14
# Chunks read and parsed ahead of the one being ranked: with one, the parsing workers stood idle while the
# next chunk's commits were read (about 8 % of a four-month eval's time); each costs its batches' texts.
CHUNKS_AHEAD = 2
SAMPLE_SEED = 20250601  # a fixed seed: the same sample on every run, so cached analyses are reused


@dataclass(slots=True)
class EvalResult:
    repo: str
    branch: str
    since: date
    until: date
    timezone: str
    horizon_days: int
    analyzer: str
    sample: int | None
    judged: list[Judged]
    score: Score
    months: dict[str, Score]
    missed: list[Judged]
    links: list[FollowUpLink]
    span_commits: int = 0  # commits in the span (more than judged when sampled)
    resamples: int = RESAMPLES  # of the bootstrap intervals
    follow_ups: KeyScore | None = None  # the follow-up key beside size and chance; None: no follow-up
    notes: FoundNotes | None = None
    notes_status: str = ""  # why there is no release-notes key, when there is none
    notes_score: NotesScore | None = None


async def evaluate(
    source,
    store: Store,
    analyzer: Analyzer,
    *,
    branch: str,
    since: date,
    until: date,
    tz: ZoneInfo,
    lang: str,
    horizon_days: int = 30,
    history_days: int = 180,
    sample: int | None = None,
    changelog: tuple[str, str] | None = None,
    resamples: int = RESAMPLES,
    progress: Progress | None = None,
    refresh: bool = False,
) -> EvalResult:
    """changelog: (its name, its text) to use instead of the release notes at the branch tip. refresh:
    analyse every replayed commit again instead of reading its cached analysis."""
    if until < since:
        raise InputError(f"--until {until} is before --since {since}")
    if sample is not None and sample < 0:
        raise InputError("--sample must be 0 or more")
    start, end = day_window(since, tz)[0], day_window(until, tz)[1]
    history_start = start - timedelta(days=history_days)
    truth_end = min(end + timedelta(days=horizon_days), utcnow())
    # The span's line counts come from the patches its days are read with (unless sampled: not every day is
    # read), the days after it need none (their follow-ups are read from the messages): their history is
    # read with its paths alone, and a later read that needs the counts counts what is left.
    later = sample is None and getattr(source, "past_files", None) is not None
    synced = sync_history(
        source, store, branch, history_start, max(truth_end, end), counted_before=start if later else None
    )
    if not await synced:
        raise InputError(f"{source.repo}: this source cannot read the branch's history")
    history = store.history(source.repo, branch, history_start, max(truth_end, end))
    counts = SpanCounts(source, store, branch, history, start, end) if later else None
    links = find_links(history)
    store.save_followups(source.repo, links)
    answer = _answer_key(links, timedelta(days=horizon_days))
    span = [c for c in history if start <= c.committed_at < end]
    found, notes_status = await find_release_notes(source, branch, span, changelog, tz)
    notes_answers = found.key.answers if found else {}
    chosen, weights = _sample(span, answer, sample)
    days = _by_day(chosen, tz)
    windows = SlidingHistory(history, links, history_days)  # each day's index slid from the day before
    judged: list[Judged] = []
    done = 0
    if progress:
        progress(0, len(chosen))
    with Parsers() as parsers:  # worker processes for the parsing, reused chunk after chunk
        filled_days = _filled_days(source, store, branch, sorted(days.items()), tz, sample, parsers, counts)
        async with contextlib.aclosing(filled_days):
            async for day, commits in filled_days:
                window_start = day_window(day, tz)[0]

                # Worked out only when a commit has no cached analysis: a second run ranks nothing again.
                def facts(commits=commits, window_start=window_start):
                    return asyncio.to_thread(_day_facts, windows, commits, links, window_start, history_days)

                analyses = await analyse_commits(
                    store, analyzer, source.repo, commits, lang, refresh=refresh, history=facts
                )
                judged += [
                    _judged(c, analyses[c.sha], answer.get(c.sha), weights, notes_answers.get(c.sha), tz)
                    for c in commits
                ]
                done += len(commits)
                if progress:
                    progress(done, len(chosen))
    if counts is not None:
        await counts.count_rest()
    return EvalResult(
        repo=source.repo,
        branch=branch,
        since=since,
        until=until,
        timezone=tz.key,
        horizon_days=horizon_days,
        analyzer=analyzer.model,
        sample=sample,
        judged=judged,
        score=score(judged),
        months=by_month(judged),
        missed=missed(judged),
        links=links,
        span_commits=len(span),
        resamples=resamples,
        follow_ups=versus_size("follow-ups", judged, lambda j: j.followed, resamples=resamples, seed=SEED),
        notes=found,
        notes_status=notes_status,
        notes_score=notes_score(judged, found.key.lists_changes, resamples=resamples) if found else None,
    )


def _day_facts(
    windows: SlidingHistory,
    commits: list[Commit],
    links: list[FollowUpLink],
    window_start: datetime,
    history_days: int,
) -> dict[str, HistoryFacts]:
    """A replayed day's history facts, from the window's index slid to the day."""
    index = windows.at(window_start)
    return facts_for_day(commits, (), links, window_start, history_days, index=index)


def _judged(
    commit: Commit,
    analysis: Analysis,
    link: FollowUpLink | None,
    weights: dict[str, float],
    notes: str | None,
    tz: ZoneInfo,
) -> Judged:
    """One replayed commit's rank beside what the answer keys say of it."""
    return Judged(
        sha=commit.sha,
        title=commit.title,
        committed_at=commit.committed_at.astimezone(tz),
        importance=analysis.importance,
        reason=analysis.importance_reason,
        followed_by=link.follow_up if link else None,
        kind=link.kind.value if link else None,
        weight=weights.get(commit.sha, 1.0),
        changed_lines=commit.changed_lines,
        impact_score=analysis.impact_score,
        risk_score=analysis.risk_score,
        shipped=None if commit.shipped is None else bool(commit.shipped),
        notes=notes,
    )


async def _filled_days(
    source,
    store: Store,
    branch: str,
    days: list[tuple[date, list[PastCommit]]],
    tz: ZoneInfo,
    sample: int | None,
    parsers: Parsers,
    counts: SpanCounts | None = None,
) -> AsyncIterator[tuple[date, list[Commit]]]:
    """Each day and its commits with their surfaces, in order. The surfaces are filled a chunk of days at
    a time (about CHUNK_COMMITS commits, at most CHUNK_DAYS days): enough batches to parse them in
    parallel, each day still batched as a digest of that day would batch it (the same facts); few enough
    days that the progress moves and a stop loses little. The next CHUNKS_AHEAD chunks are read and
    parsed while the caller ranks this one's days; `counts` counts their history's lines meanwhile."""

    async def fill(chunk: list[tuple[date, list[PastCommit]]]) -> list[tuple[date, list[Commit]]]:
        read = await _chunk_commits(source, store, branch, chunk, tz, sample)
        counted = counts.count([c for day in read for c in day]) if counts else asyncio.sleep(0)
        filled, _ = await asyncio.gather(fill_surfaces(source, store, read, parsers), counted)
        return [(day, commits) for (day, _), commits in zip(chunk, filled, strict=True)]

    waiting = deque(_chunks(days))
    ahead: deque[asyncio.Future[list[tuple[date, list[Commit]]]]] = deque()

    def top_up() -> None:
        while waiting and len(ahead) < CHUNKS_AHEAD:
            ahead.append(asyncio.ensure_future(fill(waiting.popleft())))

    try:
        top_up()
        while ahead:
            done = await ahead.popleft()
            top_up()  # before the caller ranks this chunk's days
            for day, commits in done:
                yield day, commits
    finally:
        for future in ahead:  # the caller stopped (an error, Ctrl-C): the chunks ahead are not wanted
            future.cancel()
        for future in ahead:  # what they raised, if anything, is not what stopped the caller
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await future


def _chunks(days: list[tuple[date, list[PastCommit]]]) -> list[list[tuple[date, list[PastCommit]]]]:
    chunks: list[list[tuple[date, list[PastCommit]]]] = []
    size = CHUNK_COMMITS
    for day, members in days:
        if size >= CHUNK_COMMITS or len(chunks[-1]) >= CHUNK_DAYS:
            chunks.append([])
            size = 0
        chunks[-1].append((day, members))
        size += len(members)
    return chunks


async def _chunk_commits(
    source,
    store: Store,
    branch: str,
    chunk: list[tuple[date, list[PastCommit]]],
    tz: ZoneInfo,
    sample: int | None,
) -> list[list[Commit]]:
    """Each replayed day's commits, newest first (ties by sha, whatever the source's order): from the store
    when a run before read them all, else from the source (and then kept). A source that reads commits by
    sha (read_commits) reads the history's members of the chunk's days at once: a day's window walked again
    (a first-parent walk from the tip per day) found the same commits."""
    stored = await asyncio.to_thread(store.get_commits, source.repo, [c.sha for _, day in chunk for c in day])
    unread = [members for _, members in chunk if any(c.sha not in stored for c in members)]
    fresh: dict[str, Commit] = {}
    if unread and getattr(source, "read_commits", None) is not None:
        read = await source.read_commits([c.sha for members in unread for c in members])
        fresh = {c.sha: c for c in read}
        await asyncio.to_thread(keep_commits, store, read)
    days: list[list[Commit]] = []
    for day, members in chunk:
        if all(c.sha in stored for c in members):
            commits = [stored[c.sha] for c in members]
        elif fresh:
            commits = [fresh[c.sha] for c in members]
        else:
            commits = await _day_commits(source, store, branch, members, *day_window(day, tz), sample)
        days.append(sorted(commits, key=lambda c: (-c.committed_at.timestamp(), c.sha)))
    return days


async def _day_commits(
    source, store: Store, branch: str, members: list[PastCommit], start, end, sample: int | None
) -> list[Commit]:
    """A replayed day's commits read from the source (and then kept): the day's window, or its members one
    by one when sampled."""
    if sample is None:
        commits = await source.commits_in_window(branch, start, end)
    else:
        commits = [await source.get_commit(c.sha) for c in members]
    await asyncio.to_thread(keep_commits, store, commits)
    return commits


def _answer_key(links: list[FollowUpLink], horizon: timedelta) -> dict[str, FollowUpLink]:
    """{original sha: its first follow-up within the horizon}."""
    first: dict[str, FollowUpLink] = {}
    for link in links:
        if link.follow_up_at - link.original_at <= horizon:
            current = first.get(link.original)
            if current is None or link.follow_up_at < current.follow_up_at:
                first[link.original] = link
    return first


def _sample(
    span: list[PastCommit], answer: dict[str, FollowUpLink], n: int | None
) -> tuple[list[PastCommit], dict[str, float]]:
    """Every followed-up commit plus n others at random; each other stands for others ÷ n commits."""
    if n is None:
        return span, {}
    positives = [c for c in span if c.sha in answer]
    others = [c for c in span if c.sha not in answer]
    picked = random.Random(SAMPLE_SEED).sample(others, min(n, len(others)))
    weight = len(others) / len(picked) if picked else 1.0
    chosen = sorted([*positives, *picked], key=lambda c: c.committed_at)
    return chosen, {c.sha: weight for c in picked}


def _by_day(commits: list[PastCommit], tz: ZoneInfo) -> dict[date, list[PastCommit]]:
    days: dict[date, list[PastCommit]] = {}
    for commit in commits:
        days.setdefault(commit.committed_at.astimezone(tz).date(), []).append(commit)
    return days
