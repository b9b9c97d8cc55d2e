"""A subscription whose local clone is gone fails its run in one line: no traceback from the scheduler."""

from __future__ import annotations

import logging
from datetime import date

from bot.app import digest_runner
from bot.config.settings import Settings
from bot.config.subscriptions import Destination, Subscription


async def test_a_missing_git_dir_fails_the_run_in_one_line(tmp_path, store, caplog):
    sub = Subscription(
        name="gone",
        repo="acme/gone",
        timezone="UTC",
        schedule="09:00",
        lang="en",
        destinations=(Destination("slack", "C1"),),
        git_dir=tmp_path / "nowhere",
    )
    runner = digest_runner(Settings(digest_db=tmp_path / "digest.db"), store, {})
    with caplog.at_level(logging.DEBUG):
        outcome = await runner(sub, date(2026, 1, 26))
    assert outcome.status == "failed"
    assert "nowhere is not a git repository" in outcome.error
    assert not any(r.exc_info for r in caplog.records)
