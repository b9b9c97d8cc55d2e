"""`digestbot eval` and the digest's history step, on throw-away repositories with known answers."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner
from pydantic import TypeAdapter

from adapters.local_git import LocalGitSource
from analysis.errors import SourceError
from analysis.models import Commit, FileChange, Importance
from bot.cli.main import cli
from bot.digest import evaluate as evaluate_module
from bot.digest.analyzers import HeuristicAnalyzer
from bot.digest.evaluate import evaluate
from bot.digest.history import sync_history
from bot.digest.pipeline import build_digest
from bot.json_schema import EvalJSON
from bot.store.db import Store
from tests.fakes.gitrepo import GitRepo, isolate_git_env
from tests.fakes.sources import MemorySource

UTCZ = ZoneInfo("UTC")


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git_env(monkeypatch, tmp_path / "home")


@pytest.fixture
def known(tmp_path: Path) -> tuple[GitRepo, dict[str, str]]:
    """Six commits from 09-01 to 09-04: #1 (a big rework of the core) is reverted two days later, #3
    (small) fixed forward the next day; #4 is fixed only 46 days later, past the 30-day horizon."""
    repo = GitRepo.init(tmp_path / "widgets")
    repo.commit("[Core] Core (#0)", files={"src/core.py": "x = 0\n" * 800}, when="2025-08-20T08:00:00+00:00")
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


async def run_eval(repo: GitRepo, store: Store, source=None, **kw):
    """The known repository's first four days, ranked by the heuristic, scored in UTC (source: another reader
    of the repository than its LocalGitSource)."""
    return await evaluate(
        source if source is not None else LocalGitSource(repo.path),
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


async def test_a_heuristic_eval_stores_each_days_analyses_in_one_transaction(known, store, monkeypatch):
    """The heuristic's analyses cost nothing to redo: a replayed day's are stored together (one commit to
    disk a day, not one a commit), and a second run finds them all."""
    repo, _ = known
    one: list[str] = []
    days: list[list[str]] = []
    real_many = store.save_analyses
    monkeypatch.setattr(store, "save_analysis", lambda repo, a, *rest: one.append(a.sha))
    monkeypatch.setattr(
        store,
        "save_analyses",
        lambda repo, got, *rest: days.append([a.sha for a in got]) or real_many(repo, got, *rest),
    )
    first = await run_eval(repo, store)
    assert one == [] and len(days) == 4
    assert sorted(sha for day in days for sha in day) == sorted(j.sha for j in first.judged)
    again = await run_eval(repo, store)
    assert len(days) == 4 and [j.importance for j in again.judged] == [j.importance for j in first.judged]


def test_eval_refresh_ranks_every_commit_again(known, tmp_path, monkeypatch):
    """`eval --refresh` analyses the replayed commits again (after a rule changed) instead of reading the
    analyses a first run cached; without it the second run asks the analyser nothing."""
    repo, _ = known
    asked: list[int] = []
    real = HeuristicAnalyzer.analyze

    async def counting(self, commits, *args, **kwargs):
        asked.append(len(commits))
        return await real(self, commits, *args, **kwargs)

    monkeypatch.setattr(HeuristicAnalyzer, "analyze", counting)
    args = ["--db", str(tmp_path / "e.db"), "eval", "--git-dir", str(repo.path), "--tz", "UTC"]
    args += ["--analyzer", "heuristic", "--since", "2025-09-01", "--until", "2025-09-04", "--format", "json"]
    runs = [CliRunner().invoke(cli, extra) for extra in (args, args, [*args, "--refresh"])]
    assert [r.exit_code for r in runs] == [0, 0, 0], [r.output for r in runs]
    assert sum(asked) == 12 and len({r.output for r in runs}) == 1  # 6 + 0 + 6, the same ranks each time


async def test_a_horizon_long_enough_counts_the_late_fix(known, store):
    repo, shas = known
    result = await run_eval(repo, store, horizon_days=60)
    assert {j.sha for j in result.judged if j.followed} == {shas["big"], shas["small"], shas["medium"]}


async def test_a_sample_scores_every_followed_up_commit_and_weights_the_others(known, store):
    repo, shas = known
    result = await run_eval(repo, store, sample=1)
    assert len(result.judged) == 3
    assert {shas["big"], shas["small"]} <= {j.sha for j in result.judged}
    # One of the four others stands for all four: the population's figures stay unbiased; counts are
    # of the commits ranked.
    assert (result.score.commits, result.score.followed, result.score.population) == (3, 2, 6.0)
    assert result.span_commits == 6
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
    assert "release notes: none (no release notes at the tip of main" in table.output
    out = CliRunner().invoke(cli, [*args, "--format", "json"]).output
    data = TypeAdapter(EvalJSON).validate_json(out, strict=True)  # the documented shape, counts as ints
    assert data.cuts["medium+high"].recall == 0.5 and data.cuts["medium+high"].hits == 1
    assert (data.span_commits, data.commits, data.followed_up) == (6, 6, 2)
    assert {(c.sha, c.follow_up, c.follow_up_kind, c.tier) for c in data.ranked_commits if c.follow_up} == {
        (shas["big"], shas["revert"], "revert", "high"),
        (shas["small"], shas["fix"], "fix", "low"),
    }
    assert len(data.ranked_commits) == 6 and data.release_notes is None
    bad = CliRunner().invoke(cli, [*args[:-4], "--since", "2025-09-04", "--until", "2025-09-01"])
    assert bad.exit_code == 2 and "before" in bad.output


# -- the digest's history step ----------------------------------------------------------------------

DAY = date(2025, 11, 5)


class HistorySource(MemorySource):
    """MemorySource that can also list its history, as the git and GitHub sources do."""

    def __init__(self, repo: str, commits: list[Commit]):
        super().__init__(repo, commits)
        self.history_reads: list[tuple[datetime, datetime]] = []

    async def history(self, branch: str, since: datetime, until: datetime, progress=None):
        from analysis.history.index import as_past

        self.history_reads.append((since, until))
        past = sorted(
            (as_past(c) for c in self.commits if since <= c.committed_at < until),
            key=lambda c: c.committed_at,
        )
        if progress is not None:
            progress(len(past), len(past))
        return past


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


def test_eval_table_shows_no_terminal_escape_or_bidi_override_from_a_commit(tmp_path):
    # a missed commit's title went to the terminal as it was: ESC[2J cleared the screen, OSC set the title
    repo = GitRepo.init(tmp_path / "widgets")
    repo.commit("base", files={"src/x.py": "a = 0\n"}, when="2025-09-01T08:00:00+00:00")
    hostile = "Tweak \x1b[2J\x1b[31mred\x1b[0m \x1b]0;pwned\x07 \u202etxt.exe (#3)"
    repo.commit(hostile, files={"src/x.py": "a = 1\n"}, when="2025-09-02T08:00:00+00:00")
    repo.commit("Fix a crash after #3 (#6)", files={"src/x.py": "a = 2\n"}, when="2025-09-03T08:00:00+00:00")
    args = ["--db", str(tmp_path / "e.db"), "eval", "--git-dir", str(repo.path), "--tz", "UTC"]
    table = CliRunner().invoke(cli, [*args, "--since", "2025-09-01", "--until", "2025-09-03"])
    assert table.exit_code == 0, table.output
    assert "missed (followed up, ranked low): 1" in table.output
    assert "Tweak red txt.exe (#3)" in table.output  # the words stay, the escapes go
    assert "\x1b" not in table.output and "\x07" not in table.output and "\u202e" not in table.output


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


async def test_a_day_whose_analyses_are_all_cached_works_out_no_history_facts(store: Store, monkeypatch):
    """The facts over months of history are what a warm digest spent its time on: they are worked out
    only when a commit is analysed, so a re-run of a cached day reads its report back unchanged."""
    from bot.digest import history as digest_history

    worked_out: list[int] = []
    real = digest_history.facts_for_day
    monkeypatch.setattr(
        digest_history,
        "facts_for_day",
        lambda commits, *a, **k: worked_out.append(len(commits)) or real(commits, *a, **k),
    )
    source = HistorySource("acme/w", synthetic_branch())
    stages: list[str] = []
    first = await build_digest(
        source, store, HeuristicAnalyzer(), branch="main", day=DAY, tz=UTCZ, lang="en",
        progress=lambda stage, done, total: stages.append(stage),
    )  # fmt: skip
    assert worked_out == [2] and "history" in stages
    again = await build_digest(source, store, HeuristicAnalyzer(), branch="main", day=DAY, tz=UTCZ, lang="en")
    assert worked_out == [2]
    assert {s: a.importance_reason for s, a in again.analyses.items()} == {
        s: a.importance_reason for s, a in first.analyses.items()
    }


async def test_history_days_zero_ranks_by_size_alone(store: Store):
    source = HistorySource("acme/w", synthetic_branch())
    digest = await build_digest(
        source, store, HeuristicAnalyzer(), branch="main", day=DAY, tz=UTCZ, lang="en", history_days=0
    )
    assert "size prior" in digest.analyses[f"{9001:040x}"].importance_reason
    assert source.history_reads == []


async def test_a_second_eval_reads_the_days_from_the_store_and_ranks_nothing_again(known, store, monkeypatch):
    """The README's promise: a second run of the same span costs no source reads for the days' commits
    and no history facts (every analysis is cached), and scores the same."""
    from bot.digest import evaluate as evaluate_module

    repo, _ = known
    first = await run_eval(repo, store)
    listed: list[object] = []
    worked_out: list[object] = []
    real_facts = evaluate_module.facts_for_day
    monkeypatch.setattr(
        evaluate_module, "facts_for_day", lambda *a: worked_out.append(a[0]) or real_facts(*a)
    )
    real_window = LocalGitSource.commits_in_window

    async def counting(self, *a, **kw):
        listed.append(a)
        return await real_window(self, *a, **kw)

    monkeypatch.setattr(LocalGitSource, "commits_in_window", counting)
    real_read = LocalGitSource.read_commits

    async def reading(self, *a, **kw):
        listed.append(a)
        return await real_read(self, *a, **kw)

    monkeypatch.setattr(LocalGitSource, "read_commits", reading)
    again = await run_eval(repo, store)
    assert listed == [] and worked_out == []
    assert [(j.sha, j.importance) for j in again.judged] == [(j.sha, j.importance) for j in first.judged]
    assert again.score == first.score


# -- the release-notes key ----------------------------------------------------------------------------

NOTES = """\
# Changelog

## [1.0.0] - 2025-09-10

### Removed
- The old API ([#1](https://github.com/acme/widgets/pull/1))

### Added
{features}

### Documentation
{docs}

### Internal
{internal}

### Fixed
{fixes}
"""


@pytest.fixture
def released(tmp_path: Path) -> tuple[GitRepo, dict[int, str]]:
    """30 squash-merged PRs on 2025-09-01..03, then (after the span) a CHANGELOG.md that lists 25 of them:
    #1 breaking, #2-5 features, #6-15 docs, #16-20 internal, #21-25 fixes; #26-30 (landed among them) are
    not listed."""
    repo = GitRepo.init(tmp_path / "widgets")
    # The API #1 removes already exists: a rewrite of it is not a change isolated in new files.
    repo.commit("Initial core", files={"src/core.py": "x = 0\n" * 100}, when="2025-08-20T08:00:00+00:00")
    order = [1, 2, 3, 4, 5, 26, 27, 28, 29, 30, *range(6, 26)]
    shas: dict[int, str] = {}
    start = datetime(2025, 9, 1, 1, tzinfo=UTC)
    for i, pr in enumerate(order):
        if pr == 1:
            title, files = "Remove the old API", {"src/core.py": "x = 1\n" * 800}
        elif pr <= 5:
            title, files = f"Add feature {pr}", {f"src/feature{pr}.py": "y = 2\n" * 300}
        elif pr <= 15:
            title, files = f"Docs page {pr}", {f"docs/page{pr}.md": "text\n" * 5}
        elif pr <= 20:
            title, files = f"CI tweak {pr}", {f".github/workflows/ci{pr}.yml": "on: push\n" * 3}
        elif pr <= 25:
            title, files = f"Fix bug {pr}", {f"src/fix{pr}.py": "z = 3\n" * 8}
        else:
            title, files = f"Tidy {pr}", {f"src/tidy{pr}.py": "w = 4\n" * 4}
        shas[pr] = repo.commit(f"{title} (#{pr})", files=files, when=start + timedelta(hours=2 * i))

    def items(prs: range) -> str:
        return "\n".join(f"- Change {n} (#{n})" for n in prs)

    text = NOTES.format(
        features=items(range(2, 6)),
        docs=items(range(6, 16)),
        internal=items(range(16, 21)),
        fixes=items(range(21, 26)),
    )
    repo.commit("Release 1.0.0", files={"CHANGELOG.md": text}, when="2025-09-10T08:00:00+00:00")
    return repo, shas


def eval_args(repo: GitRepo, tmp_path: Path, *extra: str) -> list[str]:
    return [
        "--db", str(tmp_path / "e.db"), "eval", "--git-dir", str(repo.path), "--tz", "UTC",
        "--since", "2025-09-01", "--until", "2025-09-03", *extra,
    ]  # fmt: skip


def test_eval_reads_the_release_notes_at_the_branch_tip(released, tmp_path):
    repo, shas = released
    table = CliRunner().invoke(cli, eval_args(repo, tmp_path))
    assert table.exit_code == 0, table.output
    text = table.output
    assert "release notes: CHANGELOG.md lists 25 pull requests; 25 of the 30 pull requests" in text
    assert "an unlisted pull request counts as not release-worthy" in text
    table_rows = text.split("category ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    rows = {line.split()[0]: line.split()[1] for line in table_rows}
    assert rows == {
        "breaking": "1",
        "feature": "4",
        "docs": "10",
        "internal": "5",
        "fix": "5",
        "unlisted": "5",
    }
    assert "breaking at high" in text and "docs/internal at medium+high" in text
    assert "ROC AUC, breaking/feature vs the rest: tier" in text and "ROC AUC, listed vs unlisted" in text
    assert "among commits touching the shipped package: unknown" in text

    out = CliRunner().invoke(cli, [*eval_args(repo, tmp_path), "--format", "json"]).output
    data = TypeAdapter(EvalJSON).validate_json(out, strict=True)
    notes = data.release_notes
    assert notes is not None and notes.file == "CHANGELOG.md" and notes.lists_changes
    assert (notes.listed_in_file, notes.listed_in_span, notes.pull_requests_covered) == (25, 25, 30)
    by_sha = {c.sha: c for c in data.ranked_commits}
    assert by_sha[shas[1]].release_notes == "breaking" and by_sha[shas[27]].release_notes == "unlisted"
    assert by_sha[shas[1]].tier == "high" and by_sha[shas[1]].changed_lines == 900
    categories = {row.category: (row.commits, row.high, row.medium_or_high) for row in notes.categories}
    assert categories["breaking"] == (1, 1, 1) and categories["docs"][0] == 10
    target = {t.name: t for t in notes.targets}["breaking at high"]
    assert target.met is True and target.score is not None and target.score.cuts["high"].hits == 1
    key = notes.keys["breaking/feature"].all
    assert key is not None and key.positives == 5 and key.commits == 30  # no change or other to leave out
    assert key.auc.tier is not None and key.auc.size is not None and key.auc.difference is not None
    assert notes.keys["breaking/feature"].shipped is None and notes.shipped_known == 0


def test_changelog_option_reads_a_local_file_instead(released, tmp_path):
    repo, shas = released
    mine = tmp_path / "notes.md"
    mine.write_text(
        "## 1.0\n\n### Bug Fixes\n\n* Fix it by @x in https://github.com/acme/widgets/pull/1\n", "utf-8"
    )
    out = CliRunner().invoke(cli, [*eval_args(repo, tmp_path, "--changelog", str(mine)), "--format", "json"])
    assert out.exit_code == 0, out.output
    data = TypeAdapter(EvalJSON).validate_json(out.output, strict=True)
    assert data.release_notes is not None and data.release_notes.file == str(mine)
    assert not data.release_notes.lists_changes  # one PR listed: an unlisted one says nothing
    answers = {c.sha: c.release_notes for c in data.ranked_commits}
    assert answers[shas[1]] == "fix" and answers[shas[2]] is None
    missing = CliRunner().invoke(cli, eval_args(repo, tmp_path, "--changelog", str(tmp_path / "nope.md")))
    assert missing.exit_code == 2 and "nope.md" in missing.output


def _fragment_key_answers(repo, tmp_path) -> dict[str, str | None]:
    """eval's JSON over the repository, its key drawn from the span's news fragments: each commit's category."""
    out = CliRunner().invoke(cli, [*eval_args(repo, tmp_path), "--format", "json"])
    assert out.exit_code == 0, out.output
    data = TypeAdapter(EvalJSON).validate_json(out.output, strict=True)
    assert (
        data.release_notes is not None and data.release_notes.file == "news fragments the span's commits add"
    )
    return {c.sha: c.release_notes for c in data.ranked_commits}


def test_news_fragments_are_the_key_when_they_list_more_than_the_notes_file(tmp_path):
    # towncrier: each pull request adds changes/<n>.<type>.md; the compiled notes cite issue numbers, which
    # match none of the pull requests.
    repo = GitRepo.init(tmp_path / "frag")
    repo.commit("Initial core", files={"src/core.py": "x = 0\n" * 50}, when="2025-08-20T08:00:00+00:00")
    start = datetime(2025, 9, 1, 1, tzinfo=UTC)
    types = {1: "removal", 2: "feature", 3: "feature", 4: "bugfix", 5: "doc"}
    shas = {}
    for i, (pr, kind) in enumerate(types.items()):
        files = {f"src/m{pr}.py": f"y = {pr}\n" * 5, f"changes/{pr}.{kind}.md": f"Entry {pr}.\n"}
        shas[pr] = repo.commit(f"Change {pr} (#{pr})", files=files, when=start + timedelta(hours=2 * i))
    notes = "# Changes\n\n## 1.0 (2025-09-10)\n\n### Features\n\n- Entry 2. (#9002)\n"
    repo.commit(
        "Release 1.0",
        files={"CHANGES.md": notes},
        delete=[f"changes/{pr}.{kind}.md" for pr, kind in types.items()],
        when="2025-09-10T08:00:00+00:00",
    )
    answers = _fragment_key_answers(repo, tmp_path)
    assert [answers[shas[pr]] for pr in types] == ["breaking", "feature", "feature", "fix", "docs"]


def test_release_notes_that_cannot_be_read_leave_the_follow_up_key_standing(released, tmp_path, monkeypatch):
    repo, _ = released

    async def broken(self, sha, path):
        raise SourceError("git cat-file failed")

    monkeypatch.setattr(LocalGitSource, "text_at", broken)
    out = CliRunner().invoke(cli, eval_args(repo, tmp_path))
    assert out.exit_code == 0, out.output
    assert (
        "release notes: none (cannot read the release notes at the tip of main: git cat-file failed"
        in out.output
    )
    assert "follow-ups: later reverted or fixed" in out.output
    empty = tmp_path / "empty.md"
    empty.write_text("# Changelog\n\nNothing yet.\n", "utf-8")
    out = CliRunner().invoke(cli, eval_args(repo, tmp_path, "--changelog", str(empty)))
    assert f"release notes: none ({empty}: none of the span's pull requests listed)" in out.output


async def test_days_filled_a_chunk_at_a_time_rank_as_day_by_day(known, tmp_path, monkeypatch):
    """eval fills the surfaces of several days at once (to parse them in parallel), each day batched as
    alone: the same facts, ranks and stored rows as a day at a time."""
    import bot.digest.evaluate as evaluation
    from bot.digest.surface import PARSER_VERSION

    repo, _ = known
    chunks: list[int] = []
    real = evaluation.fill_surfaces

    async def counting(source, store, groups, parsers):
        chunks.append(len(groups))
        return await real(source, store, groups, parsers)

    monkeypatch.setattr(evaluation, "fill_surfaces", counting)
    results = {}
    for days in (1, 3):
        monkeypatch.setattr(evaluation, "CHUNK_DAYS", days)
        results[days] = (await run_eval(repo, Store(tmp_path / f"{days}.db")), Store(tmp_path / f"{days}.db"))
    # four days one by one, then a chunk of three and one of one (read side by side: in either order)
    assert chunks[:4] == [1, 1, 1, 1] and sorted(chunks[4:]) == [1, 3]
    (one, one_store), (three, three_store) = results[1], results[3]
    assert one.judged == three.judged
    shas = [j.sha for j in one.judged]
    assert one_store.surfaces(one.repo, shas, PARSER_VERSION) == three_store.surfaces(
        one.repo, shas, PARSER_VERSION
    )


async def test_a_failing_day_leaves_no_chunk_being_read_behind(known, store, monkeypatch):
    """The next chunk's surfaces are filled while a chunk's days are ranked: when ranking fails, that
    read is stopped, not left running."""
    import asyncio

    import bot.digest.evaluate as evaluation

    repo, _ = known
    monkeypatch.setattr(evaluation, "CHUNK_DAYS", 1)

    async def failing(*args, **kwargs):
        raise RuntimeError("the analyser broke")

    monkeypatch.setattr(evaluation, "analyse_commits", failing)
    with pytest.raises(RuntimeError, match="analyser broke"):
        await run_eval(repo, store)
    assert asyncio.all_tasks() == {asyncio.current_task()}


async def test_a_chunks_days_are_read_by_their_shas_as_their_windows_would_read_them(
    known, tmp_path, monkeypatch
):
    """A source that reads commits by sha is asked once per chunk for the days the history listed, not once
    per day for its window (a first-parent walk each): the same commits, ranks and stored rows."""
    repo, shas = known
    windows: list[object] = []
    reads: list[list[str]] = []
    real_window, real_read = LocalGitSource.commits_in_window, LocalGitSource.read_commits

    async def window(self, *a, **kw):
        windows.append(a)
        return await real_window(self, *a, **kw)

    async def read(self, wanted, *a):
        reads.append(list(wanted))
        return await real_read(self, wanted, *a)

    monkeypatch.setattr(LocalGitSource, "commits_in_window", window)
    monkeypatch.setattr(LocalGitSource, "read_commits", read)
    by_sha_store = Store(tmp_path / "by_sha.db")
    by_sha = await run_eval(repo, by_sha_store)
    assert windows == [] and len(reads) == 1
    assert sorted(reads[0]) == sorted(shas[k] for k in ("big", "docs", "small", "medium", "revert", "fix"))

    class WindowsOnly:  # a source that cannot read commits by sha: each day's window is read
        def __init__(self, source: LocalGitSource) -> None:
            self._source = source

        def __getattr__(self, name: str):
            if name == "read_commits":
                raise AttributeError(name)
            return getattr(self._source, name)

    by_window_store = Store(tmp_path / "by_window.db")
    by_window = await run_eval(repo, by_window_store, WindowsOnly(LocalGitSource(repo.path)))
    assert len(windows) == 4 and len(reads) == 5  # the windows read their commits by sha
    assert by_sha.judged == by_window.judged
    judged = [j.sha for j in by_sha.judged]
    assert by_sha_store.get_commits(by_sha.repo, judged) == by_window_store.get_commits(by_sha.repo, judged)


def test_eval_reads_notes_written_as_verb_led_items_under_version_headings(tmp_path):
    # A Pallets-style CHANGES.rst: version headings, a release line, plain items led by their kind's verb.
    repo = GitRepo.init(tmp_path / "plain")
    repo.commit("Initial core", files={"src/core.py": "x = 0\n" * 100}, when="2025-08-20T08:00:00+00:00")
    start = datetime(2025, 9, 1, 1, tzinfo=UTC)
    verbs = {
        1: "Drop",
        2: "Add",
        3: "Add",
        4: "Support",
        **dict.fromkeys(range(5, 21), "Fix"),
        21: "Document",
    }
    shas = {}
    for i, pr in enumerate([1, 2, 3, 4, 22, 23, *range(5, 22)]):  # #22, #23 land among them, not listed
        files = {f"src/m{pr}.py": f"y = {pr}\n" * (200 if pr <= 4 else 8)}
        shas[pr] = repo.commit(f"Change {pr} (#{pr})", files=files, when=start + timedelta(hours=2 * i))
    items = "\n".join(
        f"-   {verb} thing number {pr}. :issue:`{900 + pr}` :pr:`{pr}`" for pr, verb in verbs.items()
    )
    notes = (
        f"Version 1.1.0\n-------------\n\nUnreleased\n\n{items}\n\n\n"
        "Version 1.0.0\n-------------\n\nReleased 2025-08-01\n"
    )
    repo.commit("Release 1.1.0", files={"CHANGES.rst": notes}, when="2025-09-10T08:00:00+00:00")
    table = CliRunner().invoke(cli, eval_args(repo, tmp_path))
    assert table.exit_code == 0, table.output
    assert "release notes: CHANGES.rst lists" in table.output
    rows = table.output.split("category ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert {line.split()[0]: line.split()[1] for line in rows} == {
        "breaking": "1",
        "feature": "3",
        "fix": "16",
        "docs": "1",
        "unlisted": "2",
    }
    assert (
        "breaking at high" in table.output and "ROC AUC, breaking/feature vs the rest: tier" in table.output
    )


def test_news_fragments_typed_by_their_text_make_the_key(tmp_path):
    # reno notes and changesets keep their type inside the file: read from the text each commit added
    repo = GitRepo.init(tmp_path / "reno")
    repo.commit("Initial core", files={"src/core.py": "x = 0\n" * 50}, when="2025-08-20T08:00:00+00:00")
    start = datetime(2025, 9, 1, 1, tzinfo=UTC)
    texts = {
        1: ("releasenotes/notes/old-filter-removal-5a6b7c8d.yaml", "---\nupgrade:\n  - |\n    Removed.\n"),
        2: ("releasenotes/notes/spread-option-1a2b3c4d.yaml", "---\nfeatures:\n  - |\n    New option.\n"),
        3: (".changeset/brave-lions-sing.md", '---\n"@acme/cli": minor\n---\n\nAllow names.\n'),
        4: (".changeset/quiet-owls-nod.md", "---\n'@acme/core': patch\n---\n\nFix the retry loop.\n"),
        5: ("releasenotes/notes/guide-9f8e7d6c.yaml", "---\nother:\n  - |\n    A guide.\n"),
    }
    shas = {}
    for i, (pr, (path, text)) in enumerate(texts.items()):
        files = {f"src/m{pr}.py": f"y = {pr}\n" * 5, path: text}
        shas[pr] = repo.commit(f"Change {pr} (#{pr})", files=files, when=start + timedelta(hours=2 * i))
    repo.commit(
        "Release 1.0", files={"src/core.py": "x = 1\n"}, delete=[p for p, _ in texts.values()],
        when="2025-09-10T08:00:00+00:00",
    )  # fmt: skip
    answers = _fragment_key_answers(repo, tmp_path)
    assert [answers[shas[pr]] for pr in texts] == ["breaking", "feature", "feature", "fix", "other"]


class CountsFirst:
    """A reader of the clone that cannot count a commit's lines after its history read (as an API source):
    the history is read counted throughout."""

    def __init__(self, source: LocalGitSource) -> None:
        self._source = source

    def __getattr__(self, name: str):
        if name in ("past_files", "history_counts"):
            raise AttributeError(name)
        return getattr(self._source, name)


WHOLE = (datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 12, 1, tzinfo=UTC))


async def test_the_span_counted_from_its_patches_ranks_and_stores_as_a_counted_history(known, tmp_path):
    """The span's history read with its paths alone and counted from the commits eval reads: the same ranks,
    the same stored history up to the span's end; the days after it (read for their follow-ups) are counted by
    the first read that needs them, as a digest after the eval reads its window."""
    repo, shas = known
    later_store, first_store = Store(tmp_path / "later.db"), Store(tmp_path / "first.db")
    later = await run_eval(repo, later_store, horizon_days=60)
    first = await run_eval(repo, first_store, CountsFirst(LocalGitSource(repo.path)), horizon_days=60)

    assert later.judged == first.judged and later.links == first.links
    to_span_end = (WHOLE[0], datetime(2025, 9, 5, tzinfo=UTC))
    assert later_store.history(later.repo, "main", *to_span_end) == first_store.history(
        later.repo, "main", *to_span_end
    )
    assert later_store.uncounted_history(later.repo, "main", *WHOLE) == [shas["late"]]
    assert first_store.uncounted_history(later.repo, "main", *WHOLE) == []

    assert await sync_history(LocalGitSource(repo.path), later_store, "main", *WHOLE)
    assert later_store.uncounted_history(later.repo, "main", *WHOLE) == []
    counted = first_store.history(later.repo, "main", *WHOLE)
    assert later_store.history(later.repo, "main", *WHOLE) == counted
    assert dict(next(c for c in counted if c.sha == shas["late"]).files) == {"src/y.py": 200}


async def test_history_left_uncounted_is_counted_by_the_next_read_that_needs_it(known, tmp_path):
    """An eval stopped before it read its span's days leaves their history uncounted: the next read counts it,
    reading nothing else again."""
    repo, shas = known
    counted, left = Store(tmp_path / "counted.db"), Store(tmp_path / "left.db")
    source = LocalGitSource(repo.path)
    assert await sync_history(source, counted, "main", *WHOLE)
    assert await sync_history(source, left, "main", *WHOLE, counted_before=datetime(2025, 9, 2, tzinfo=UTC))
    expected = [shas[k] for k in ("small", "medium", "revert", "fix", "late")]
    assert left.uncounted_history(source.repo, "main", *WHOLE) == expected
    assert left.history(source.repo, "main", *WHOLE) != counted.history(source.repo, "main", *WHOLE)

    assert await sync_history(source, left, "main", datetime(2025, 9, 3, tzinfo=UTC), WHOLE[1])
    assert left.uncounted_history(source.repo, "main", *WHOLE) == [shas["small"], shas["medium"]]
    assert await sync_history(source, left, "main", *WHOLE)
    assert left.history(source.repo, "main", *WHOLE) == counted.history(source.repo, "main", *WHOLE)


async def test_each_replayed_day_sees_the_counts_of_the_days_before_it(known, tmp_path, monkeypatch):
    """The span's days are counted as they are read, before any later day is ranked: every day's window holds
    its commits with the counts a counted history read gives them."""
    repo, _ = known
    first_store = Store(tmp_path / "first.db")
    await run_eval(repo, first_store, CountsFirst(LocalGitSource(repo.path)))
    counted = {c.sha: c.files for c in first_store.history("widgets", "main", *WHOLE)}
    seen: list[tuple[datetime, list[bool]]] = []

    class Watched(evaluate_module.SlidingHistory):
        def at(self, cutoff: datetime):
            before = [c for c in self._history if c.committed_at < cutoff]
            seen.append((cutoff, [c.files == counted[c.sha] for c in before]))
            return super().at(cutoff)

    monkeypatch.setattr(evaluate_module, "SlidingHistory", Watched)
    await run_eval(repo, Store(tmp_path / "later.db"))

    assert len(seen) == 4 and all(all(same) for _, same in seen)
    assert [len(same) for _, same in seen] == [1, 3, 5, 6]
