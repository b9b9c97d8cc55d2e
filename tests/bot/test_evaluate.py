"""`digestbot eval` and the digest's history step, on throw-away repositories with known answers."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from adapters.local_git import LocalGitSource
from analysis.models import Commit, FileChange, Importance
from bot.analyzers import HeuristicAnalyzer
from bot.cli import cli
from bot.evaluate import evaluate
from bot.pipeline import build_digest
from bot.store import Store
from tests.fakes.gitrepo import GitRepo, isolate_git_env
from tests.fakes.sources import MemorySource

UTCZ = ZoneInfo("UTC")


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git_env(monkeypatch, tmp_path / "home")


@pytest.fixture
def known(tmp_path: Path) -> tuple[GitRepo, dict[str, str]]:
    """Six commits from 09-01 to 09-04: #1 (big) is reverted two days later, #3 (small) fixed forward
    the next day; #4 is fixed only 46 days later, past the 30-day horizon."""
    repo = GitRepo.init(tmp_path / "widgets")
    shas = {
        "big": repo.commit(
            "[Core] Big rework (#1)", files={"src/core.py": "x = 1\n" * 800}, when="2025-09-01T08:00:00+00:00"
        ),
        "docs": repo.commit(
            "[Doc] Readme (#2)", files={"README.md": "hello\n"}, when="2025-09-01T09:00:00+00:00"
        ),
        "small": repo.commit(
            "[Misc] Small tweak (#3)", files={"src/x.py": "a = 1\n" * 5}, when="2025-09-02T08:00:00+00:00"
        ),
        "medium": repo.commit(
            "[Feature] Widgets (#4)", files={"src/y.py": "b = 2\n" * 100}, when="2025-09-02T09:00:00+00:00"
        ),
        "revert": repo.commit(
            'Revert "[Core] Big rework (#1)" (#5)', delete=["src/core.py"], when="2025-09-03T08:00:00+00:00"
        ),
        "fix": repo.commit(
            "[Misc] Fix a crash after #3 (#6)",
            files={"src/x.py": "a = 2\n" * 5},
            when="2025-09-04T08:00:00+00:00",
        ),
        "late": repo.commit(
            "Fix typo from #4 (#7)", files={"src/y.py": "b = 3\n" * 100}, when="2025-10-18T08:00:00+00:00"
        ),
    }
    return repo, shas


async def run_eval(repo: GitRepo, store: Store, **kw):
    """The known repository's first four days, ranked by the heuristic, scored in UTC."""
    return await evaluate(
        LocalGitSource(repo.path),
        store,
        HeuristicAnalyzer(),
        branch="main",
        since=date(2025, 9, 1),
        until=date(2025, 9, 4),
        tz=UTCZ,
        lang="en",
        **kw,
    )


async def test_eval_scores_ranks_against_the_branchs_own_follow_ups(known, store):
    repo, shas = known
    result = await run_eval(repo, store)
    ranks = {j.sha: j.importance for j in result.judged}
    assert len(ranks) == 6 and shas["late"] not in ranks
    assert (ranks[shas["big"]], ranks[shas["small"]], ranks[shas["medium"]], ranks[shas["docs"]]) == (
        Importance.HIGH,
        Importance.LOW,
        Importance.MEDIUM,
        Importance.LOW,
    )
    followed = {j.sha: (j.followed_by, j.kind) for j in result.judged if j.followed}
    assert followed == {shas["big"]: (shas["revert"], "revert"), shas["small"]: (shas["fix"], "fix")}
    mh, high = result.score.cut("medium+high"), result.score.cut("high")
    assert (result.score.commits, result.score.followed) == (6, 2)
    assert (mh.recall, high.recall) == (0.5, 0.5)
    flagged = sum(1 for r in ranks.values() if r != Importance.LOW) / 6
    assert mh.flagged_share == pytest.approx(flagged) and mh.lift == pytest.approx(0.5 / flagged)
    assert [j.sha for j in result.missed] == [shas["small"]]
    # The links are stored for the radar and later runs.
    assert [link.follow_up for link in store.followups_of(result.repo, shas["big"])] == [shas["revert"]]


async def test_a_horizon_long_enough_counts_the_late_fix(known, store):
    repo, shas = known
    result = await run_eval(repo, store, horizon_days=60)
    assert {j.sha for j in result.judged if j.followed} == {shas["big"], shas["small"], shas["medium"]}


async def test_a_sample_scores_every_followed_up_commit_and_weights_the_others(known, store):
    repo, shas = known
    result = await run_eval(repo, store, sample=1)
    assert len(result.judged) == 3
    assert {shas["big"], shas["small"]} <= {j.sha for j in result.judged}
    # One of the four others stands for all four: the population's figures stay unbiased.
    assert (result.score.commits, result.score.followed) == (6, 2)
    assert sorted(j.weight for j in result.judged) == [1.0, 1.0, 4.0]


def test_eval_cli_prints_the_table_and_json(known, tmp_path):
    repo, shas = known
    args = [
        "--db",
        str(tmp_path / "e.db"),
        "eval",
        "--git-dir",
        str(repo.path),
        "--tz",
        "UTC",
        "--since",
        "2025-09-01",
        "--until",
        "2025-09-04",
    ]
    table = CliRunner().invoke(cli, args)
    assert table.exit_code == 0, table.output
    assert "medium+high" in table.output and "missed (followed up, ranked low): 1" in table.output
    assert "2025-09" in table.output and "[Misc] Small tweak (#3)" in table.output
    data = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).output)
    assert data["cuts"]["medium+high"]["recall"] == 0.5
    assert {(c["sha"], c["follow_up"], c["kind"], c["rank"]) for c in data["followed_up_commits"]} == {
        (shas["big"], shas["revert"], "revert", "high"),
        (shas["small"], shas["fix"], "fix", "low"),
    }
    bad = CliRunner().invoke(cli, [*args[:-4], "--since", "2025-09-04", "--until", "2025-09-01"])
    assert bad.exit_code == 2 and "before" in bad.output


# -- the digest's history step ----------------------------------------------------------------------

DAY = date(2025, 11, 5)


class HistorySource(MemorySource):
    """MemorySource that can also list its history, as the git and GitHub sources do."""

    def __init__(self, repo: str, commits: list[Commit]):
        super().__init__(repo, commits)
        self.history_reads: list[tuple[datetime, datetime]] = []

    async def history(self, branch: str, since: datetime, until: datetime):
        from analysis.history import as_past

        self.history_reads.append((since, until))
        return sorted(
            (as_past(c) for c in self.commits if since <= c.committed_at < until),
            key=lambda c: c.committed_at,
        )


def synthetic_branch() -> list[Commit]:
    """300 commits over 150 days before DAY; every sixth touches core/sched.py and the first eight of
    those were reverted an hour later. Then DAY's commits."""
    commits: list[Commit] = []
    start = datetime(2025, 11, 5, tzinfo=UTC) - timedelta(days=150)

    def add(n: int, when: datetime, message: str, path: str, lines: int = 10) -> None:
        commits.append(
            Commit(
                repo="acme/w",
                sha=f"{n:040x}",
                message=message,
                author="A",
                committed_at=when,
                files=(FileChange(path, "modified", lines, 0),),
            )
        )

    sched = 0
    for i in range(300):
        when = start + timedelta(hours=12 * i)
        if i % 6 == 0:
            add(i + 1, when, f"[Core] Scheduler change (#{1000 + i})", "core/sched.py", 40)
            sched += 1
            if sched <= 8:
                add(5000 + i, when + timedelta(hours=1), f"Revert #{1000 + i}", "core/sched.py", 40)
        else:
            add(i + 1, when, f"[Doc] Page {i} (#{1000 + i})", f"docs/p{i}.md", 3)
    day = datetime(2025, 11, 5, 8, tzinfo=UTC)
    add(9001, day, "[Core] Scheduler tweak (#2001)", "core/sched.py", 30)
    add(9002, day + timedelta(hours=1), "[Doc] Typo (#2002)", "docs/typo.md", 2)
    add(9003, day + timedelta(days=1), "[Misc] Next day (#2003)", "src/next.py", 5)
    return commits


async def test_the_digest_ranks_with_history_and_says_so(store: Store):
    source = HistorySource("acme/w", synthetic_branch())
    digest = await build_digest(
        source, store, HeuristicAnalyzer(), branch="main", day=DAY, tz=UTCZ, lang="en"
    )
    tweak = digest.analyses[f"{9001:040x}"]
    assert "of the last 180 days'" in tweak.importance_reason
    assert "`core/sched.py`: 8 of its last " in tweak.importance_reason
    assert tweak.importance != Importance.LOW
    assert any("history of follow-ups" in r for r in tweak.risks)
    assert digest.analyses[f"{9002:040x}"].importance == Importance.LOW
    assert (
        len(
            store.followups_landed(
                "acme/w", datetime(2025, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, tzinfo=UTC)
            )
        )
        == 8
    )
    # A second day reads only the history it lacks.
    source.history_reads.clear()
    await build_digest(
        source, store, HeuristicAnalyzer(), branch="main", day=DAY + timedelta(days=1), tz=UTCZ, lang="en"
    )
    assert source.history_reads == [(datetime(2025, 11, 5, tzinfo=UTC), datetime(2025, 11, 6, tzinfo=UTC))]


async def test_history_days_zero_ranks_by_size_alone(store: Store):
    source = HistorySource("acme/w", synthetic_branch())
    digest = await build_digest(
        source, store, HeuristicAnalyzer(), branch="main", day=DAY, tz=UTCZ, lang="en", history_days=0
    )
    assert "size prior" in digest.analyses[f"{9001:040x}"].importance_reason
    assert source.history_reads == []
