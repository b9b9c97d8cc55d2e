"""The history step keeps what it mines: the follow-up links of a span of history are mined once and read
from the store by every later run over the same span, until the span's commits change."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import bot.digest.history as history_step
from adapters.local_git import LocalGitSource
from analysis.history.followups import find_links
from analysis.history.index import as_past
from analysis.refs import parse_ref
from bot.digest.history import day_history, sync_history
from bot.digest.pipeline import analyse_ref, build_digest
from bot.store.db import Store
from tests.fakes.digests import make_analysis, make_commit
from tests.fakes.gitrepo import GitRepo, isolate_git_env
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


class Recording:
    """An analyser that keeps the history facts each commit was ranked from."""

    model = "recording"
    prompt_version = "1"

    def __init__(self) -> None:
        self.seen: dict[str, Any] = {}

    async def analyze(self, commits, lang, progress=None, history=None, on_result=None):
        self.seen.update({c.sha: (history or {}).get(c.sha) for c in commits})
        return {c.sha: make_analysis(c, "low", lang=lang) for c in commits}

    async def aclose(self) -> None:
        return None


async def test_a_card_is_ranked_from_the_history_its_days_digest_ranks_it_from(store, tmp_path):
    """The card's cutoff is the start of the commit's day in the digests' zone, not of its UTC day: a
    revert that landed between the two (here 8 hours apart) counts for neither."""
    zone = ZoneInfo("Asia/Shanghai")
    landed = datetime(2026, 1, 26, 9, tzinfo=zone)  # 01:00 UTC: its UTC day starts 8 h after its zone day
    original = make_commit(
        "[Core] Batch the scheduler's queue (#200)", committed_at=landed - timedelta(days=3)
    )
    # 04:00 in the zone (2026-01-25 20:00 UTC): within the commit's zone day, before its UTC day.
    revert = make_commit(
        'Revert "[Core] Batch the scheduler\'s queue (#200)" (#201)',
        committed_at=landed - timedelta(hours=5),
    )
    commit = make_commit("[Core] Scheduler tweak (#121)", committed_at=landed)
    source = HistorySource(REPO, [*PAST, original, revert, commit])

    in_digest = Recording()
    await build_digest(source, store, in_digest, branch="main", day=landed.date(), tz=zone, lang="en")
    on_card = Recording()
    other = Store(tmp_path / "card.db")  # nothing cached from the digest
    try:
        await analyse_ref(source, other, on_card, parse_ref(commit.sha), branch="main", lang="en", tz=zone)
    finally:
        other.close()
    assert on_card.seen[commit.sha] == in_digest.seen[commit.sha]
    assert in_digest.seen[commit.sha].followed_seen == 1  # PAST's revert only: #201 is of the same day
    # The commit's UTC day starts after the revert, so a UTC cutoff would have counted it as history.
    utc = await day_history(source, store, "main", [commit], datetime(2026, 1, 26, tzinfo=UTC), 180)
    assert utc[commit.sha] != in_digest.seen[commit.sha]


async def test_the_spans_counts_and_past_scores_are_kept_and_read_by_the_next_run(store, monkeypatch):
    """Counting months of history per path and scoring every past commit is done once per span (and
    rules); a card or an LLM day on the same span reads the counts and scores from the store and the
    messages only, never the file lists."""
    from analysis.history.index import MIN_DISTRIBUTION, HistoryIndex
    from analysis.models import FileChange

    def file(n: int) -> tuple[FileChange, ...]:
        return (
            FileChange(f"src/widgets/part{n % 7}.py", "modified", n % 40 + 1, n % 9, "@@ -1 +1 @@\n-a\n+b"),
        )

    many = [
        make_commit(f"[Core] Change number {n} (#{300 + n})", committed_at=CUTOFF - timedelta(hours=n + 1),
                    files=file(n))
        for n in range(MIN_DISTRIBUTION + 20)
    ]  # fmt: skip
    scored: list[str] = []
    real = HistoryIndex._window_scores

    def scoring(self: HistoryIndex) -> list[float]:
        scored.extend(c.sha for c in self._window)
        return real(self)

    monkeypatch.setattr(HistoryIndex, "_window_scores", scoring)
    reads: list[bool] = []
    history = store.history
    monkeypatch.setattr(
        store, "history", lambda *a, files=True: reads.append(files) or history(*a, files=files)
    )
    source = HistorySource(REPO, [*many, *DAY])

    first = await day_history(source, store, "main", DAY, CUTOFF, 180)
    assert len(scored) == len(many) and reads == [False, True]
    assert all(facts.percentile is not None for facts in first.values())
    reads.clear()
    second = await day_history(source, store, "main", DAY, CUTOFF, 180)
    assert len(scored) == len(many) and reads == [False]  # counts and scores read from the store
    assert second == first

    # Other rules (a new rubric) count and score the past again, as does another span.
    monkeypatch.setattr(history_step, "RUBRIC_VERSION", "another")
    third = await day_history(source, store, "main", DAY, CUTOFF, 180)
    assert len(scored) == 2 * len(many) and third == first
    await day_history(source, store, "main", DAY, CUTOFF + timedelta(hours=1), 180)
    assert len(scored) == 3 * len(many)


async def test_other_link_rules_mine_a_kept_span_again(store, monkeypatch):
    """An upgrade whose rules find other follow-up links must not read the links the old rules kept."""
    mined: list[int] = []
    real = history_step.mine
    monkeypatch.setattr(history_step, "mine", lambda past: mined.append(len(past)) or real(past))
    source = HistorySource(REPO, [*PAST, *DAY])
    first = await day_history(source, store, "main", DAY, CUTOFF, 180)
    await day_history(source, store, "main", DAY, CUTOFF, 180)
    assert len(mined) == 1  # the span's links read from the store
    monkeypatch.setattr(history_step, "LINK_RULES", "links-next")
    again = await day_history(source, store, "main", DAY, CUTOFF, 180)
    assert len(mined) == 2 and again == first


def test_a_span_mined_again_forgets_the_counts_and_scores_of_its_old_commits(store):
    from analysis.history.followups import Mined

    since = CUTOFF - timedelta(days=180)
    state = {"format": 1, "touches": {"src/a.py": 3}}
    store.save_mined_span(REPO, "main", since, CUTOFF, "old-commits", Mined())
    store.save_span_index(REPO, "main", since, CUTOFF, "old-commits", "v1", [0.5, 1.5, 2.25], state)
    assert store.span_index(REPO, "main", since, CUTOFF, "old-commits", "v1") == ([0.5, 1.5, 2.25], state)
    assert store.span_index(REPO, "main", since, CUTOFF, "old-commits", "v2") is None  # other rules
    store.save_span_index(REPO, "main", since, CUTOFF, "old-commits", "v3", None, state)  # no distribution
    assert store.span_index(REPO, "main", since, CUTOFF, "old-commits", "v3") == (None, state)
    with store.transaction():
        store.db.execute("UPDATE mined_spans SET index_state = '{\"format\": 1,'")  # a damaged row
    assert store.span_index(REPO, "main", since, CUTOFF, "old-commits", "v3") is None  # counted again
    store.save_span_index(REPO, "main", since, CUTOFF, "old-commits", "v3", None, state)
    store.save_mined_span(REPO, "main", since, CUTOFF, "new-commits", Mined())
    assert store.span_index(REPO, "main", since, CUTOFF, "new-commits", "v3") is None
    assert store.span_index(REPO, "main", since, CUTOFF, "old-commits", "v3") is None


async def test_a_stored_history_that_is_no_longer_the_branchs_is_read_again(store, tmp_path, monkeypatch):
    # a local clone is named by its folder: another repository cloned there (or the branch rewritten) had
    # the old one's stored history and follow-ups stand for its own (eval scored commits the clone did not
    # have, the weekly roll-up listed a revert it never had)
    isolate_git_env(monkeypatch, tmp_path / "home")
    since, until = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 26, tzinfo=UTC)
    first = GitRepo.init(tmp_path / "app")
    reverted = first.commit("feature", files={"f": "1"}, when="2026-01-01T08:00:00+00:00")
    revert = first.commit('Revert "feature"', files={"f": "0"}, when="2026-01-02T08:00:00+00:00")
    assert await sync_history(LocalGitSource(first.path), store, "main", since, until)
    assert [c.sha for c in store.history("app", "main", since, until)] == [reverted, revert]
    store.save_followups("app", find_links(store.history("app", "main", since, until)))
    assert [link.original for link in store.followups_landed("app", since, until)] == [reverted]

    shutil.rmtree(first.path)
    second = GitRepo.init(tmp_path / "app")
    new_shas = [
        second.commit(f"new {i}", files={"b": str(i)}, when=f"2026-01-1{i}T10:00:00+00:00") for i in range(2)
    ]
    source = LocalGitSource(second.path)
    assert source.repo == "app"
    assert await sync_history(source, store, "main", since, until)

    assert [c.sha for c in store.history("app", "main", since, until)] == new_shas
    assert store.followups_landed("app", since, until) == []  # the old revert is not this repository's
    assert await sync_history(source, store, "main", since, until)  # kept now: nothing read again
    assert [c.sha for c in store.history("app", "main", since, until)] == new_shas


async def test_progress_bars_that_show_nothing_ask_no_source_for_progress(tmp_path):
    """Bars off (stderr not a terminal) are no progress callback at all: a history read reported every
    chunk of git's output to the event loop for nothing (issue 21)."""
    from bot.cli.common import StageBars

    asked: list[object] = []

    class Watching(HistorySource):
        async def commits_in_window(self, branch, start, end, progress=None):
            asked.append(progress)
            return await super().commits_in_window(branch, start, end)

        async def history(self, branch, start, end, progress=None, **kw):
            asked.append(progress)
            return await super().history(branch, start, end)

    source = Watching(REPO, [*PAST, *DAY])
    given = {}
    for shown in (False, True):
        bars, fresh = StageBars(shown), Store(tmp_path / f"{shown}.db")
        asked.clear()
        try:
            await build_digest(
                source, fresh, Recording(), branch="main", day=CUTOFF.date(), tz=ZoneInfo("UTC"), lang="en",
                progress=bars, refresh=True,
            )  # fmt: skip
        finally:
            bars.close()
            fresh.close()
        given[shown] = list(asked)
    assert len(given[False]) >= 2 and all(p is None for p in given[False])  # the day's commits, its history
    assert len(given[True]) >= 2 and all(callable(p) for p in given[True][:2])
