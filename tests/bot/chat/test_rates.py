"""What counts against a person's rates (bot/chat/rates.py): a day built anew counts, a day built before
with every analysis cached under the current analyser does not; a day whose analyses were made by another
model (the model changed since) would call the model again, and counts."""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

import pytest

from analysis.errors import OverLimit
from bot.chat.floods import ThreadLimiter
from bot.digest.analyzers import HeuristicAnalyzer
from tests.bot.chat.test_qa import DAY, REPO, PaidAnalyzer, make_service, settings  # noqa: F401

SH = ZoneInfo("Asia/Shanghai")


async def test_a_day_counts_until_it_is_built_with_this_analyser(settings, store):  # noqa: F811
    service = make_service(settings.model_copy(update={"chat_days_per_hour": 5}), store)
    rates, paid = service.rates, PaidAnalyzer()
    service._analyzer = paid

    async def counted(analyzer) -> int:
        before = len(rates.days._calls.get("slack:U1", ()))
        await rates.admit_day("slack:U1", analyzer, REPO, "main", DAY, SH, "en")
        return len(rates.days._calls["slack:U1"]) - before

    assert await counted(paid) == 1  # never built
    await service.day_digest(REPO, DAY, "en", "Asia/Shanghai")
    assert await counted(paid) == 0  # built, every analysis cached
    assert await counted(HeuristicAnalyzer()) == 0  # the heuristic's analyses are free to redo
    other = PaidAnalyzer()
    other.model = "another-model"
    assert await counted(other) == 1  # the model changed: each commit would be asked again
    assert await counted(paid) == 0
    # no asker (the CLI): never counted
    await rates.admit_day("", paid, REPO, "main", date(2026, 1, 1), SH, "en")


async def test_past_the_rate_the_refusal_says_in_how_many_minutes(settings, store):  # noqa: F811
    service = make_service(settings.model_copy(update={"chat_days_per_hour": 1}), store)
    now = [1000.0]
    service.rates.days = ThreadLimiter(1, window=3600, clock=lambda: now[0])
    await service.rates.admit_day("slack:U1", service.analyzer, REPO, "main", date(2026, 1, 1), SH, "zh")
    now[0] += 600
    with pytest.raises(OverLimit, match="请 50 分钟后再要 2026-01-02"):
        await service.rates.admit_day("slack:U1", service.analyzer, REPO, "main", date(2026, 1, 2), SH, "zh")
    now[0] += 3000
    await service.rates.admit_day("slack:U1", service.analyzer, REPO, "main", date(2026, 1, 2), SH, "zh")
