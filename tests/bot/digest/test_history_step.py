"""The history step keeps what it mines: the follow-up links of a span of history are mined once and read
from the store by every later run over the same span, until the span's commits change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import bot.digest.history as history_step
from analysis.history.index import as_past
from bot.digest.history import day_history
from tests.fakes.digests import make_commit
from tests.fakes.sources import MemorySource

REPO = "acme/widgets"
CUTOFF = datetime(2026, 1, 26, tzinfo=UTC)


def old(n: int, title: str):
    return make_commit(title, committed_at=CUTOFF - timedelta(days=30 - n))


PAST = [
    old(1, "[Core] Faster scheduler for long prompts (#100)"),
    old(2, 'Revert "[Core] Faster scheduler for long prompts (#100)" (#101)'),
    *(old(3 + k, f"[Misc] Chore number {k} (#{110 + k})") for k in range(5)),
]
DAY = [
    make_commit("[Bugfix] Fix the chores after #110 (#120)", committed_at=CUTOFF + timedelta(hours=2)),
    make_commit(
        "[Core] Faster scheduler for long prompts (take 2) (#121)", committed_at=CUTOFF + timedelta(hours=3)
    ),
]


class HistorySource(MemorySource):
    async def history(self, branch: str, start: datetime, end: datetime, **_: Any):
        return [as_past(c) for c in self.commits if start <= c.committed_at < end]


async def test_a_second_run_over_the_same_span_reads_the_mined_links_instead_of_mining_again(
    store, monkeypatch
):
    mined: list[int] = []  # how many past commits each mining of the span read
    real_mine = history_step.mine
    monkeypatch.setattr(
        history_step, "mine", lambda past, **kw: mined.append(len(past)) or real_mine(past, **kw)
    )
    source = HistorySource(REPO, [*PAST, *DAY])

    first = await day_history(source, store, "main", DAY, CUTOFF, 180)
    assert mined == [len(PAST)]
    second = await day_history(source, store, "main", DAY, CUTOFF, 180)
    assert mined == [len(PAST)]  # read from the store
    assert second == first
    fix, reland = (first[c.sha].follows_up for c in DAY)
    assert [link.kind.value for link in fix] == ["fix"] and [link.kind.value for link in reland] == ["revert"]

    # A commit of the span that the store did not have before: the span's commits changed, so mined again.
    store.save_history(REPO, "main", [as_past(old(9, "[Docs] Late arrival (#130)"))])
    await day_history(source, store, "main", DAY, CUTOFF, 180)
    assert mined == [len(PAST), len(PAST) + 1]
    # Another span (the next day's) is mined for itself.
    await day_history(source, store, "main", DAY, CUTOFF + timedelta(days=1), 180)
    assert len(mined) == 3
