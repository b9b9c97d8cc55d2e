"""The branch's history for the judgment signals: read from the source into the store (only what the
store lacks), follow-up links mined and stored, and each day's commits given their HistoryFacts.

A source without a `history` method, or one that fails, costs the ranking its history, never the
digest: the rubric falls back to its size prior and the failure is logged once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from analysis.errors import RateLimited, SourceError
from analysis.history.followups import PastCommit
from analysis.history.index import HistoryFacts, day_links, facts_for_day
from analysis.models import Commit
from bot.store.db import Store

log = logging.getLogger(__name__)


async def sync_history(source: Any, store: Store, branch: str, since: datetime, until: datetime) -> bool:
    """Make the stored history of `branch` complete over [since, until); False when the source
    cannot read history. Only the parts outside the stored range are read."""
    reader = getattr(source, "history", None)
    if reader is None:
        return False
    covered = store.history_range(source.repo, branch)
    if covered is None or covered[1] < since or covered[0] > until:
        spans = [(since, until)]  # nothing stored next to it: a new range
        oldest, newest = since, until
    else:
        spans = [span for span in ((since, covered[0]), (covered[1], until)) if span[0] < span[1]]
        oldest, newest = min(since, covered[0]), max(until, covered[1])
    for start, end in spans:
        past: list[PastCommit] = await reader(branch, start, end)
        store.save_history(source.repo, branch, past)
    if spans:
        store.set_history_range(source.repo, branch, oldest, newest)
    return True


async def day_history(
    source: Any,
    store: Store,
    branch: str,
    commits: Sequence[Commit],
    cutoff: datetime,
    window_days: int,
) -> dict[str, HistoryFacts]:
    """HistoryFacts for the day's commits, from history strictly before `cutoff`. Links mined on the
    way (the day's commits included) are stored for the radar and `digestbot eval`."""
    if not commits or window_days <= 0:
        return {}
    since = cutoff - timedelta(days=window_days)
    try:
        if not await sync_history(source, store, branch, since, cutoff):
            return {}
    except (SourceError, RateLimited) as exc:
        log.warning("history of %s@%s unavailable, ranking without it: %s", source.repo, branch, exc)
        return {}
    past = store.history(source.repo, branch, since, cutoff)
    links = day_links(commits, past)
    store.save_followups(source.repo, links)
    return facts_for_day(commits, past, links, cutoff, window_days)
