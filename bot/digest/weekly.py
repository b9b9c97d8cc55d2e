"""The weekly roll-up: a branch's ISO week from its seven daily digests (cached analyses are reused, so
a week the bot already digested costs no LLM call), the follow-ups that landed in it with how we had
ranked each original, and LLM usage (posting it is bot/delivery/weekly_post.py).

Follow-up links: the week and the FOLLOWUP_LOOKBACK_DAYS before it are read from the branch's history
(the source's history reader, synced into the store), or from its commits when the source has no such
reader, and the links among them are found with analysis.history.followups.find_links and stored; each day's
digest adds the links of its own commits to the rest of its history window.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from analysis.errors import RateLimited, SourceError
from analysis.history.followups import find_links
from analysis.history.index import WINDOW_DAYS, as_past
from analysis.models import Commit
from analysis.weekly import Usage, Week, WeekFollowUp, summarize, week_days, week_window
from analysis.window import day_window
from bot.digest.analyzers import Analyzer
from bot.digest.history import history_synced, sync_history
from bot.digest.pipeline import build_digest, original_rank
from bot.digest.radar import FOLLOWUP_HORIZON_DAYS, commit_title_ref
from bot.digest.surface import PARSER_VERSION, fill_surfaces
from bot.ports.protocols import CommitSource
from bot.store.db import Store, utcnow

log = logging.getLogger(__name__)

FOLLOWUP_LOOKBACK_DAYS = 28  # how far before the week an original may have landed, when we mine ourselves


async def build_week(
    source: CommitSource,
    store: Store,
    analyzer: Analyzer,
    *,
    branch: str,
    year: int,
    week: int,
    tz: ZoneInfo,
    lang: str,
    keep: Callable[[Commit], bool] | None = None,
    refresh: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    history_days: int = WINDOW_DAYS,
) -> Week:
    """refresh: analyse the week's commits again instead of reusing cached analyses."""
    start, end = week_window(year, week, tz)
    # "Reverted or fixed" counts the follow-ups that landed up to FOLLOWUP_HORIZON_DAYS after the week
    # (or until now): that span of history is read and mined first, so any database gives the same count.
    until = min(end + timedelta(days=FOLLOWUP_HORIZON_DAYS), utcnow())
    # One read of all the history the week needs: each day's ranking window, the ranking windows of the
    # originals its follow-ups name (up to FOLLOWUP_LOOKBACK_DAYS earlier), and the follow-ups after it.
    oldest = start - timedelta(days=history_days + FOLLOWUP_LOOKBACK_DAYS)
    await history_synced(source, store, branch, oldest, max(end, until))
    await ensure_links(source, store, branch, start - timedelta(days=FOLLOWUP_LOOKBACK_DAYS), max(end, until))
    await _fill_week(source, store, branch, year, week, tz, keep)
    digests = []
    for number, day in enumerate(week_days(year, week), start=1):
        digests.append(
            await build_digest(
                source,
                store,
                analyzer,
                branch=branch,
                day=day,
                tz=tz,
                lang=lang,
                keep=keep,
                refresh=refresh,
                history_days=history_days,
            )
        )
        if progress:
            progress("days", number, 7)
    shas = [c.sha for d in digests for c in d.commits]
    followups = await week_followups(source, store, analyzer, branch, start, end, tz, lang)
    return summarize(
        digests,
        followups,
        followed_up_among(store, source.repo, shas, until),
        followed_up_until=until.astimezone(tz),
        year=year,
        week=week,
        usage=llm_usage(store, source.repo, shas),
        generated_at=utcnow().astimezone(tz),
    )


async def _fill_week(
    source: CommitSource,
    store: Store,
    branch: str,
    year: int,
    week: int,
    tz: ZoneInfo,
    keep: Callable[[Commit], bool] | None,
) -> None:
    """The surface facts of the week's days read and parsed in one pass (in worker processes when there are
    enough, as eval does), each day batched as its digest below batches it: the same commits in the same
    order, so the same facts, which the digests then find stored (issue 21: a first run parsed day by day).
    A day whose commits (by the stored history) all have their facts already, or that has none, is not
    listed again."""
    covered = await asyncio.to_thread(store.history_range, source.repo, branch)
    days = []
    for day in week_days(year, week):
        start, end = day_window(day, tz)
        known = covered is not None and covered[0] <= start and end <= covered[1]  # the history knows the day
        if known and await _facts_stored(store, source.repo, branch, start, end):
            continue
        commits = await source.commits_in_window(branch, start, end)
        days.append([c for c in commits if keep is None or keep(c)])
    await fill_surfaces(source, store, days)


async def _facts_stored(store: Store, repo: str, branch: str, start: datetime, end: datetime) -> bool:
    """Whether every commit the stored history has for the day (none included) has its facts stored."""
    shas = [c.sha for c in await asyncio.to_thread(store.history, repo, branch, start, end)]
    found = await asyncio.to_thread(store.surfaces, repo, shas, PARSER_VERSION) if shas else {}
    return len(found) == len(shas)


async def ensure_links(source: CommitSource, store: Store, branch: str, since: Any, until: Any) -> int:
    """Find and store the follow-up links among the commits of [since, until): from the stored history,
    synced from the source's history reader (bot/digest/history.py), else from the commits themselves."""

    try:
        synced = await sync_history(source, store, branch, since, until)
    except (SourceError, RateLimited) as exc:
        log.warning("weekly: history of %s unavailable (%s): reading the commits instead", source.repo, exc)
        synced = False
    if synced:
        past = store.history(source.repo, branch, since, until)
    else:
        past = [as_past(c) for c in await source.commits_in_window(branch, since, until)]
        store.save_history(source.repo, branch, past)  # titles of originals; the range stays unclaimed
    links = find_links(past)
    store.save_followups(source.repo, links)
    log.info("weekly: %d follow-up links among %d commits of %s", len(links), len(past), source.repo)
    return len(links)


async def week_followups(
    source: CommitSource,
    store: Store,
    analyzer: Analyzer,
    branch: str,
    start: Any,
    end: Any,
    tz: ZoneInfo,
    lang: str,
) -> list[WeekFollowUp]:
    """The links whose follow-up landed in the week, each with the rank we gave (or its own day's
    digest gives now, when we never analysed it) its original: the same rank a digest's Follow-ups
    line shows."""
    out = []
    repo = source.repo
    for link in store.followups_landed(repo, start, end):
        title, ref = commit_title_ref(store, repo, link.follow_up)
        original_title, original_ref = commit_title_ref(store, repo, link.original)
        rank = await original_rank(source, store, analyzer, link.original, lang, branch=branch, tz=tz)
        follow_up = store.get_commit(repo, link.follow_up)
        original = store.get_commit(repo, link.original)
        out.append(
            WeekFollowUp(
                link=link,
                follow_up_title=title,
                follow_up_ref=ref,
                original_title=original_title,
                original_ref=original_ref,
                original_rank=rank,
                original_url=original.url if original else None,
                follow_up_url=follow_up.url if follow_up else None,
            )
        )
    return out


def followed_up_among(store: Store, repo: str, shas: list[str], until: datetime) -> set[str]:
    """The commits among `shas` that a commit landed before `until` reverted or fixed."""
    rows = store.query(
        "SELECT DISTINCT original FROM followups WHERE repo = ? AND follow_up_at < ?"
        " AND original IN (SELECT value FROM json_each(?))",
        [repo, until.astimezone(UTC).isoformat(), json.dumps(shas)],
    )
    return {r["original"] for r in rows}


def llm_usage(store: Store, repo: str, shas: list[str]) -> Usage:
    """What analysing these commits cost, whenever it happened (a cached analysis was paid for once)."""
    [row] = store.query(
        "SELECT count(*) AS calls, coalesce(sum(tokens_in), 0) AS tin, coalesce(sum(tokens_out), 0) AS tout,"
        " sum(cost_usd) AS cost FROM llm_calls WHERE repo = ? AND sha IN (SELECT value FROM json_each(?))",
        [repo, json.dumps(shas)],
    )
    return Usage(row["calls"], row["tin"], row["tout"], row["cost"])
