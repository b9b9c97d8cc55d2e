"""The digest pipeline: a day's commits in, a complete Digest out.

fetch (source, store-backed) → analyse what the cache lacks → make sure every commit has an
analysis → record the digest. Rendering and delivery are the caller's business.

Over 400 lines because it is one flow: every verb that ranks commits (digest, card, eval) goes through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from analysis import heuristic
from analysis.errors import InputError
from analysis.heuristic.bands import band_day
from analysis.history.facts import HistoryFacts
from analysis.history.index import WINDOW_DAYS
from analysis.history.reverts import mark_reverted
from analysis.models import Analysis, Commit, Digest, Importance, key_of
from analysis.refs import Ref
from analysis.window import day_window, window_after
from bot.digest.analyzers import Analyzer, HeuristicAnalyzer
from bot.digest.history import day_history, history_synced
from bot.digest.in_flight import Flight
from bot.digest.radar import attach_followups, learn_followups_of, with_original_notes
from bot.digest.surface import fill_surface, with_stored_surface
from bot.ports.protocols import CommitSource
from bot.store.db import Store, utcnow

log = logging.getLogger(__name__)
_UTC = ZoneInfo("UTC")

# (stage, done, total): stage is "fetch", "history" or "analyse"
StageProgress = Callable[[str, int, int], None]
# A day's history facts, or how to get them when they are needed (every analysis cached: never).
HistoryFor = Mapping[str, HistoryFacts] | Callable[[], Awaitable[Mapping[str, HistoryFacts]]]


@dataclass(slots=True)
class RunStats:
    """What one digest run cost: the service logs it, the benchmark prints it."""

    commits: int = 0
    cached_analyses: int = 0
    new_analyses: int = 0
    fallbacks: int = 0
    seconds: float = 0.0
    extra: dict[str, object] = field(default_factory=dict)


def counts_text(counts: dict[str, int]) -> str:
    """{"high": 1, "medium": 2, ...} as "high 1, medium 2, ..." for a log line people read."""
    return ", ".join(f"{k} {v}" for k, v in counts.items() if k != "total") or "none"


async def build_digest(
    source: CommitSource,
    store: Store,
    analyzer: Analyzer,
    *,
    branch: str,
    day: date,
    tz: ZoneInfo,
    lang: str,
    refresh: bool = False,
    progress: StageProgress | None = None,
    stats: RunStats | None = None,
    keep: Callable[[Commit], bool] | None = None,
    history_days: int = WINDOW_DAYS,
    after: tuple[datetime, str] | None = None,
) -> Digest:
    """keep: a subscription's filters; commits it rejects are counted in the digest, not analysed.
    history_days: the trailing window of branch history the ranking learns from (0: none).
    after: where the window of the day before ended and its zone, when a subscription posted it: the window
    starts there (analysis/window.py window_after), and says so when the zone changed in between."""
    began = time.monotonic()
    stats = stats if stats is not None else RunStats()
    start, end = window_after(day, tz, after[0] if after else None)
    previous_zone = after[1] if after and (start, end) != day_window(day, tz) else None
    commits = await source.commits_in_window(
        branch, start, end, progress=(lambda d, t: progress("fetch", d, t)) if progress else None
    )
    history_start = await _history_start(source, branch, start, end)
    clone_newest = await _clone_newest(source, branch, start) if not commits else None
    # Store work runs in a worker thread (the store is thread-safe): in `digestbot run` the event loop
    # also serves chat, which must not wait behind a digest's SQLite writes.
    await asyncio.to_thread(keep_commits, store, commits)
    window_total = len(commits)
    if keep is not None:
        commits = [c for c in commits if keep(c)]
    # The history read (on a first run, one long `git log` or listing) runs while the surface step reads
    # and parses the day's files; the facts from it are worked out only if an analysis needs them.
    synced = None
    if commits and history_days > 0:
        bar = (lambda d, t: progress("history", d, t)) if progress else None
        since = start - timedelta(days=history_days)
        synced = asyncio.ensure_future(history_synced(source, store, branch, since, start, bar))
    try:
        commits = await fill_surface(source, store, commits)  # what each change does to its users
        ranked = commits

        def history() -> Awaitable[Mapping[str, HistoryFacts]]:
            return day_history(source, store, branch, ranked, start, history_days, synced=synced)

        analyses = await analyse_commits(
            store,
            analyzer,
            source.repo,
            commits,
            lang,
            refresh=refresh,
            progress=progress,
            stats=stats,
            history=history,
        )
        if synced is not None:
            await synced
    finally:
        if synced is not None and not synced.done():
            synced.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await synced
    analyses = await asyncio.to_thread(mark_reverted, analyses, commits, lang)
    # The originals of the day's follow-ups get the rank their own day's digest gives them, so the
    # Follow-ups line reads the same on any database ("not ranked by us" only when it cannot be read).
    shas = {c.sha for c in commits}
    for link in await asyncio.to_thread(store.followups_landed, source.repo, start, end):
        if link.follow_up in shas:
            await original_rank(
                source, store, analyzer, link.original, lang, branch=branch, tz=tz, history_days=history_days
            )
    digest = Digest(
        repo=source.repo,
        branch=branch,
        day=day,
        timezone=tz.key,
        window_start=start,
        window_end=end,
        generated_at=utcnow().astimezone(tz),
        commits=commits,
        analyses=analyses,
        lang=lang,
        filtered_out=window_total - len(commits),
        history_start=history_start.astimezone(tz) if history_start else None,
        clone_newest=clone_newest.astimezone(tz) if clone_newest else None,
        previous_zone=previous_zone,
    )
    # After the day's links are stored: the Follow-ups section and notes (store reads: off the loop).
    await asyncio.to_thread(attach_followups, store, digest)
    await asyncio.to_thread(save_digest, store, digest)
    stats.commits = len(commits)
    stats.seconds = time.monotonic() - began
    log.info(
        "digest %s %s: %d commits (%s), %d analyses cached, %d new, %d fallbacks, %.1fs",
        digest.repo,
        day,
        len(commits),
        counts_text(digest.stats),
        stats.cached_analyses,
        stats.new_analyses,
        stats.fallbacks,
        stats.seconds,
        extra={
            "repo": digest.repo,
            "day": day.isoformat(),
            "commits": len(commits),
            "counts": digest.stats,
            "cached": stats.cached_analyses,
            "new": stats.new_analyses,
            "fallbacks": stats.fallbacks,
            "seconds": round(stats.seconds, 3),
        },
    )
    return digest


async def analyse_commits(
    store: Store,
    analyzer: Analyzer,
    repo: str,
    commits: list[Commit],
    lang: str,
    *,
    refresh: bool = False,
    progress: StageProgress | None = None,
    stats: RunStats | None = None,
    history: HistoryFor | None = None,
) -> dict[str, Analysis]:
    """An analysis for every commit: from the cache unless refresh, else from the analyser. A commit
    the analyser did not return is given the heuristic analysis with the gap stated — never dropped.
    history: what the branch's past says about each commit, for the ranking (or how to work it out:
    asked only when a commit is analysed or an LLM day is banded, never when every analysis is cached).
    Each analysis is stored as soon as the analyser hands it over: Ctrl-C or SIGTERM part-way keeps
    every analysis already paid for, and the next run asks only for the rest. The heuristic's analyses
    cost nothing to redo: they are stored together at the end, in one transaction."""
    stats = stats if stats is not None else RunStats()
    analyses: dict[str, Analysis] = {}
    if not refresh:
        analyses = await asyncio.to_thread(_cached, store, analyzer, repo, commits, lang)
    stats.cached_analyses = len(analyses)
    todo = [c for c in commits if c.sha not in analyses]
    # A commit another call of this process is asking the model about already: its answer, not a second call.
    flight = Flight(
        (store, repo, analyzer.model, analyzer.prompt_version, lang),
        [c.sha for c in todo],
        share=_saves_each(analyzer) and not refresh,
    )
    try:
        return await _analyse(
            store, analyzer, repo, commits, lang, analyses, todo, flight, progress, stats, history
        )
    finally:
        flight.close()


def _saves_each(analyzer: Analyzer) -> bool:
    """Whether each analysis is stored as it lands (a model's, paid for) rather than all at the end (the
    heuristic's, free to redo)."""
    return not isinstance(analyzer, HeuristicAnalyzer)


async def _analyse(
    store: Store,
    analyzer: Analyzer,
    repo: str,
    commits: list[Commit],
    lang: str,
    analyses: dict[str, Analysis],
    todo: list[Commit],
    flight: Flight,
    progress: StageProgress | None,
    stats: RunStats,
    history: HistoryFor | None,
) -> dict[str, Analysis]:
    if callable(history):
        banded = any(a.analyzer == "llm" for a in analyses.values())  # band_day may re-tier with it
        history = await history() if todo or banded else {}
    saved: set[str] = set()
    writes: list[asyncio.Future[None]] = []
    held: list[Analysis] = []
    save_each = _saves_each(analyzer)
    asking = [c for c in todo if flight.asks(c.sha)]

    def keep(result: Analysis) -> None:
        if result.analyzer == "heuristic-fallback" or result.sha in saved:
            return  # a fallback is not cached: the next run tries the analyser again
        saved.add(result.sha)
        flight.landed(result.sha, result)
        if not save_each:
            held.append(result)
            return
        # Handed to the store's writer thread at once and committed with whatever else is waiting (the
        # day's answers come together: a few commits, not one each); an interrupted run keeps it even if
        # this task is cancelled, and the run ends only once every one is committed.
        writes.append(
            asyncio.wrap_future(
                store.save_analysis_soon(repo, result, analyzer.model, analyzer.prompt_version)
            )
        )

    async def ask(batch: list[Commit]) -> None:
        fresh = (
            await analyzer.analyze(
                batch,
                lang,
                progress=(lambda d, t: progress("analyse", d, t)) if progress else None,
                history=history,
                on_result=keep,
            )
            if batch
            else {}
        )
        for commit in batch:
            result = fresh.get(commit.sha) or missing_analysis(commit, lang, (history or {}).get(commit.sha))
            analyses[commit.sha] = result
            flight.landed(commit.sha, result)  # a fallback too: waiters do not ask a failing model again
            if result.analyzer == "heuristic-fallback":
                stats.fallbacks += 1
                continue
            stats.new_analyses += 1
            keep(result)  # an analyser that did not report it as it went

    await ask(asking)
    late: list[Commit] = []
    waited = await flight.waited()  # stored by the calls that asked
    for commit in todo:
        if commit.sha not in waited:
            continue
        theirs = waited[commit.sha]
        if theirs is None:
            late.append(commit)  # that call ended without it, or is slow (a batch): asked here
        else:
            analyses[commit.sha] = theirs
            stats.cached_analyses += 1
    await ask(late)
    # The day's view: LLM tiers follow the order of the model's scores within the rubric's bands
    # (analysis/heuristic/bands.py). What is stored stays each commit's own analysis. Worked out while
    # the store's writer commits the last answers (a sync to disk), not after.
    banded = band_day(commits, analyses, lang, history)
    await asyncio.gather(*writes)
    if held:
        await asyncio.to_thread(store.save_analyses, repo, held, analyzer.model, analyzer.prompt_version)
    return banded


async def original_rank(
    source: CommitSource,
    store: Store,
    analyzer: Analyzer,
    sha: str,
    lang: str,
    *,
    branch: str,
    tz: ZoneInfo,
    history_days: int = WINDOW_DAYS,
) -> Importance | None:
    """The tier we gave an earlier commit; when we never ranked it, the tier its own day's digest gives
    it now (from the history before that day, cached like any analysis). None when the source cannot
    read it (gone from the branch) or its analysis fell back: then "not ranked by us" is the truth."""
    stored = store.latest_analysis(source.repo, sha, lang) or store.latest_analysis(source.repo, sha)
    if stored is not None:
        return stored.importance
    try:
        commit = await source.get_commit(sha)
    except Exception as exc:  # gone from the branch, or the source refuses: unranked, said so
        log.warning("cannot read %s to rank it (%s: %s)", sha[:7], type(exc).__name__, exc)
        return None
    [commit] = await fill_surface(source, store, [commit])
    await asyncio.to_thread(keep_commits, store, [commit])
    cutoff = day_window(commit.committed_at.astimezone(tz).date(), tz)[0]
    history = await day_history(source, store, branch, [commit], cutoff, history_days)
    analyses = await analyse_commits(store, analyzer, source.repo, [commit], lang, history=history)
    ranked = analyses[commit.sha]
    return None if ranked.analyzer == "heuristic-fallback" else ranked.importance


def _cached(
    store: Store, analyzer: Analyzer, repo: str, commits: list[Commit], lang: str
) -> dict[str, Analysis]:
    found = {}
    for commit in commits:
        cached = store.get_analysis(repo, commit.sha, analyzer.model, analyzer.prompt_version, lang)
        if cached is not None:
            found[commit.sha] = cached
    return found


def keep_commits(store: Store, commits: list[Commit]) -> None:
    """Every digested commit is in the store (a GitHub source saved it already; a local clone did not),
    so thread questions and resumed posts can rebuild the digest later."""
    stored = store.stored_shas(commits[0].repo, (c.sha for c in commits)) if commits else set()
    store.save_commits(c for c in commits if c.sha not in stored)


def missing_analysis(commit: Commit, lang: str, history: HistoryFacts | None = None) -> Analysis:
    fallback = heuristic.analyze(commit, lang, history=history)
    note = (
        "分析器未返回结果，以下为启发式分析"
        if lang == "zh"
        else "The analyser returned nothing; heuristic analysis shown"
    )
    return fallback.model_copy(update={"analyzer": "heuristic-fallback", "notes": [*fallback.notes, note]})


async def _history_start(
    source: CommitSource, branch: str, start: datetime, end: datetime
) -> datetime | None:
    """Where the source's history of the branch starts, when inside [start, end) (a shallow clone's cut):
    the digest says that commits of the day before it may be missing. Sources without a cut (an API's)
    do not have the method."""
    ask = getattr(source, "history_start", None)
    return await ask(branch, start, end) if ask is not None else None


async def _clone_newest(source: CommitSource, branch: str, start: datetime) -> datetime | None:
    """The local clone's newest commit on the branch, when older than the day's start (asked of an empty
    day only): the digest says the clone may not be kept up to date. Sources that read the forge itself
    (an API's) do not have the method."""
    ask = getattr(source, "newest_before", None)
    return await ask(branch, start) if ask is not None else None


def _stated(digest: Digest) -> dict[str, Any]:
    """What the digest states beside its counts, stored with them."""
    return {
        "filtered_out": digest.filtered_out,
        "history_start": digest.history_start.isoformat() if digest.history_start else None,
        "clone_newest": digest.clone_newest.isoformat() if digest.clone_newest else None,
        "previous_zone": digest.previous_zone,
    }


def _moment(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def save_digest(store: Store, digest: Digest) -> int:
    return store.save_digest(
        key_of(digest),
        {
            "repo": digest.repo,
            "branch": digest.branch,
            "day": digest.day.isoformat(),
            "timezone": digest.timezone,
            "lang": digest.lang,
            "window_start": digest.window_start.isoformat(),
            "window_end": digest.window_end.isoformat(),
            "generated_at": digest.generated_at.isoformat(),
            "shas": json.dumps([c.sha for c in digest.commits]),
            "stats": json.dumps({**digest.stats, **_stated(digest)}),
            "analyzers": "+".join(digest.analyzers),
            "analyses": json.dumps({sha: a.model_dump(mode="json") for sha, a in digest.analyses.items()}),
        },
    )


def load_digest(store: Store, key: str) -> Digest | None:
    """A recorded digest rebuilt from the store (thread questions, resumed posts)."""
    row = store.get_digest(key)
    if row is None:
        return None
    stored = [store.get_commit(row["repo"], sha) for sha in json.loads(row["shas"])]
    if any(c is None for c in stored):
        return None
    commits = with_stored_surface(store, [c for c in stored if c is not None])
    analyses = {sha: Analysis.model_validate(a) for sha, a in json.loads(row["analyses"] or "{}").items()}
    stated = json.loads(row["stats"])  # a digest stored before history_start was kept has none
    digest = Digest(
        repo=row["repo"],
        branch=row["branch"],
        day=date.fromisoformat(row["day"]),
        timezone=row["timezone"],
        window_start=datetime.fromisoformat(row["window_start"]),
        window_end=datetime.fromisoformat(row["window_end"]),
        generated_at=datetime.fromisoformat(row["generated_at"]),
        commits=commits,
        analyses=analyses,
        lang=row["lang"],
        filtered_out=stated.get("filtered_out", 0),
        history_start=_moment(stated.get("history_start")),
        clone_newest=_moment(stated.get("clone_newest")),
        previous_zone=stated.get("previous_zone"),
    )
    return attach_followups(store, digest)  # as rendered when it was built, and what was learnt since


async def resolve_commit(source: CommitSource, ref: Ref, branch: str) -> Commit:
    """The commit a parsed reference names, on the source's repository."""
    if ref.kind == "pr":
        return await source.commit_for_pr(ref.pr_number, branch)
    if ref.kind == "sha":
        return await source.get_commit(ref.value)
    raise InputError(f"{ref.value} is a date, not a commit: use `digest --date {ref.value}`")


async def analyse_ref(
    source: CommitSource,
    store: Store,
    analyzer: Analyzer,
    ref: Ref,
    *,
    branch: str,
    lang: str,
    refresh: bool = False,
    history_days: int = WINDOW_DAYS,
    tz: ZoneInfo = _UTC,
    admit: Callable[[Commit], None] | None = None,
) -> tuple[Commit, Analysis]:
    """One commit's analysis, cache first: the core of `digestbot analyze` and `/digest <sha>`. Its
    history is what was known at the start of its day in `tz` (the digests' zone, DIGEST_TZ or the
    channel's): the history the digest of that day ranks it from, so card and digest agree. `admit`: asked
    before a commit with no cached analysis is analysed; it raises to refuse (a chat user's rate)."""
    commit = await resolve_commit(source, ref, branch)
    await asyncio.to_thread(keep_commits, store, [commit])
    [commit] = await fill_surface(source, store, [commit])
    history: dict[str, HistoryFacts] = {}
    cutoff = day_window(commit.committed_at.astimezone(tz).date(), tz)[0]
    if (
        refresh
        or store.get_analysis(source.repo, commit.sha, analyzer.model, analyzer.prompt_version, lang) is None
    ):
        if admit is not None:
            admit(commit)
        history = await day_history(source, store, branch, [commit], cutoff, history_days)
    analysing = asyncio.ensure_future(
        analyse_commits(store, analyzer, source.repo, [commit], lang, refresh=refresh, history=history)
    )

    async def radar() -> None:
        # The radar's read of the branch after the commit runs beside the card's call, not after it; from
        # the ranking's cutoff, so that both extend the stored history range. It starts once the call can
        # go out (an LLM's SDK imported) or the analysis is done: its work would delay the call (issue 21).
        await _ready_or_done(analyzer, analysing)
        await learn_followups_of(source, store, branch, commit, cutoff)

    analyses, _ = await asyncio.gather(analysing, radar())
    notes = await asyncio.to_thread(with_original_notes, store, source.repo, analyses[commit.sha], lang)
    return commit, notes


async def _ready_or_done(analyzer: Analyzer, analysing: asyncio.Future[Any]) -> None:
    """Until the analyser can send its call at once (`ready`, when it has one) or `analysing` is done."""
    ready = getattr(analyzer, "ready", None)
    if ready is None:
        return
    waiting = asyncio.ensure_future(ready())
    try:
        await asyncio.wait({waiting, analysing}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()


async def pick_branch(source: Any, branch: str | None, settings: Any) -> str:
    """--branch, else DIGEST_BRANCH when set, else the repository's own default branch."""
    if branch:
        return branch
    if "digest_branch" in settings.model_fields_set:
        return settings.digest_branch
    default = getattr(source, "default_branch", None)
    return await default() if default else settings.digest_branch
