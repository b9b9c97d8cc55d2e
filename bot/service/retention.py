"""LLM_LOG_PROMPTS: how long the prompts and replies of LLM calls stay in the database. They hold the
full diffs of possibly private code, so by default they are kept 30 days (`days:30`); `off` stores
none, `on` keeps them. The call itself (tokens, latency, cost, outcome) is always kept.

The purge runs whenever a CLI command opens the database to write, and once a day in the service.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from bot.config.settings import Settings
from bot.store.db import Store

log = logging.getLogger(__name__)

DAY_SECONDS = 86400.0


def apply_prompt_policy(store: Store, settings: Settings, now: datetime | None = None) -> int:
    """Set the store to keep or drop new prompts, and forget those older than the policy allows.
    Returns the number of calls whose text was forgotten."""
    days = settings.prompt_days
    store.keep_prompts = days != 0
    if days is None:
        return 0
    purged = store.purge_prompts((now or datetime.now(UTC)) - timedelta(days=days))
    if purged:
        log.info(
            "forgot the prompts and replies of %d LLM call(s) (LLM_LOG_PROMPTS=%s)",
            purged,
            settings.llm_log_prompts,
        )
    return purged


async def purge_daily(store: Store, settings: Settings, every: float = DAY_SECONDS) -> None:
    """The service's purge: once every `every` seconds until cancelled; a failure is logged and retried
    the next time."""
    while True:
        await asyncio.sleep(every)
        try:
            await asyncio.to_thread(apply_prompt_policy, store, settings)
        except Exception as exc:  # a busy database must not stop the service
            log.warning("purging old LLM prompts failed: %s: %s", type(exc).__name__, exc)
