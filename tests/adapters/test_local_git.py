"""LocalGitSource against throw-away repositories with fixed committer/author dates."""

from __future__ import annotations

import hashlib
import itertools
import logging
import subprocess
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from adapters.local_git import (
    LocalGitSource,
    big_files,
    git_cli,
    history_reads,
    parse_remote_url,
    patch_reads,
    redact,
)
from adapters.local_git import source as local_git_source
from analysis.errors import AmbiguousRef, InputError, RefNotFound, SourceError
from analysis.history.index import automated
from analysis.models import Commit
from analysis.refs import Ref, parse_ref
from analysis.window import day_window
from tests.fakes.gitrepo import AUTHOR, GitRepo, isolate_git_env

SHANGHAI = ZoneInfo("Asia/Shanghai")
NEW_YORK = ZoneInfo("America/New_York")
DAY = date(2026, 1, 26)
SECRET = "ghp_s3cr3tT0ken"


@pytest.fixture(autouse=True)
def _isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git_env(monkeypatch, tmp_path / "home")


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")


def titles(commits: list[Commit]) -> list[str]:
    return [c.title for c in commits]


async def day_commits(
    path: Path, day: date = DAY, tz: ZoneInfo = SHANGHAI, branch: str = "main"
) -> list[Commit]:
    start, end = day_window(day, tz)
    return await LocalGitSource(path).commits_in_window(branch, start, end)


# --- the day window ---------------------------------------------------------------------------------


async def test_window_edges_are_start_inclusive_end_exclusive_to_the_second(repo: GitRepo) -> None:
    repo.commit("one second early", files={"a": "1"}, when="2026-01-25T23:59:59+08:00")
    repo.commit("at start", files={"a": "2"}, when="2026-01-26T00:00:00+08:00")
    repo.commit("noon, recorded in UTC", files={"a": "3"}, when="2026-01-26T04:00:00+00:00")
    repo.commit("last second", files={"a": "4"}, when="2026-01-26T23:59:59+08:00")
    repo.commit("at end", files={"a": "5"}, when="2026-01-27T00:00:00+08:00")

    commits = await day_commits(repo.path)

    assert titles(commits) == ["last second", "noon, recorded in UTC", "at start"]
    noon = commits[1]
    assert noon.committed_at == datetime.fromisoformat("2026-01-26T12:00:00+08:00")
    assert noon.committed_at.utcoffset() == timedelta(0)  # the commit's own offset is kept
    assert commits[2].committed_at.utcoffset() == timedelta(hours=8)


async def test_committer_date_decides_not_author_date(repo: GitRepo) -> None:
    repo.commit("authored yesterday, committed today", files={"a": "1"},
                author_when="2026-01-25T10:00:00+08:00", when="2026-01-26T10:00:00+08:00")  # fmt: skip
    repo.commit("authored today, committed tomorrow", files={"a": "2"},
                author_when="2026-01-26T11:00:00+08:00", when="2026-01-27T09:00:00+08:00")  # fmt: skip

    assert titles(await day_commits(repo.path, date(2026, 1, 25))) == []
    assert titles(await day_commits(repo.path)) == ["authored yesterday, committed today"]
    assert titles(await day_commits(repo.path, date(2026, 1, 27))) == ["authored today, committed tomorrow"]


async def test_daylight_saving_day_is_23_hours(repo: GitRepo) -> None:
    start, end = day_window(date(2026, 3, 8), NEW_YORK)
    assert end.timestamp() - start.timestamp() == timedelta(hours=23).total_seconds()  # aware, not wall time
    repo.commit("late on the 7th", files={"a": "0"}, when="2026-03-07T23:30:00-05:00")
    repo.commit("00:30 EST", files={"a": "1"}, when="2026-03-08T00:30:00-05:00")
    repo.commit("03:30 EDT", files={"a": "2"}, when="2026-03-08T03:30:00-04:00")
    repo.commit("23:30 EDT", files={"a": "3"}, when="2026-03-08T23:30:00-04:00")
    repo.commit("00:30 on the 9th", files={"a": "4"}, when="2026-03-09T00:30:00-04:00")

    commits = await LocalGitSource(repo.path).commits_in_window("main", start, end)

    assert titles(commits) == ["23:30 EDT", "03:30 EDT", "00:30 EST"]


async def test_non_monotonic_committer_dates_do_not_stop_the_walk(repo: GitRepo) -> None:
    repo.commit("in the window, behind a skewed commit", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")
    repo.commit("skewed clock: two days early", files={"a": "2"}, when="2026-01-24T08:00:00+08:00")
    repo.commit("in the window, on top", files={"a": "3"}, when="2026-01-26T12:00:00+08:00")

    assert titles(await day_commits(repo.path)) == [
        "in the window, on top",
        "in the window, behind a skewed commit",
    ]


async def test_a_skew_past_the_margin_hides_nothing_either(repo: GitRepo) -> None:
    # The margin only saves calls: past where the --since walk stopped, the history is read on.
    repo.commit("in the window, behind a skewed commit", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")
    repo.commit("skewed clock: two days early", files={"a": "2"}, when="2026-01-24T08:00:00+08:00")
    repo.commit("in the window, on top", files={"a": "3"}, when="2026-01-26T12:00:00+08:00")
    start, end = day_window(DAY, SHANGHAI)

    narrow = LocalGitSource(repo.path, since_margin=timedelta(hours=1))

    assert titles(await narrow.commits_in_window("main", start, end)) == [
        "in the window, on top",
        "in the window, behind a skewed commit",
    ]


async def test_a_1970_commit_inside_the_day_hides_no_other_commit(repo: GitRepo) -> None:
    repo.commit("base", files={"a": "0"}, when="2025-12-01T10:00:00+08:00")
    repo.commit("first of the day", files={"a": "1"}, when="2026-01-26T01:00:00+08:00")
    repo.commit_raw("broken clock", {"a": "2"}, date="86400 +0000")  # 1970-01-02
    repo.commit("last of the day", files={"a": "3"}, when="2026-01-26T03:00:00+08:00")

    # the skewed commit is not of the day by its committer date: it stays out, and hides nothing
    assert titles(await day_commits(repo.path)) == ["last of the day", "first of the day"]


async def test_a_1970_commit_at_the_tip_empties_no_day(repo: GitRepo) -> None:
    repo.commit("base", files={"a": "0"}, when="2025-12-01T10:00:00+08:00")
    repo.commit("first of the day", files={"a": "1"}, when="2026-01-26T01:00:00+08:00")
    repo.commit("last of the day", files={"a": "2"}, when="2026-01-26T03:00:00+08:00")
    repo.commit_raw("next morning, broken clock", {"a": "3"}, date="86400 +0000")
    source = LocalGitSource(repo.path)

    assert titles(await day_commits(repo.path)) == ["last of the day", "first of the day"]
    past = await source.history("main", datetime(2025, 11, 1, tzinfo=UTC), datetime(2026, 1, 27, tzinfo=UTC))
    assert [c.message for c in past] == ["base", "first of the day", "last of the day"]


async def test_a_long_run_behind_a_skewed_commit_is_read_page_by_page(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_git_source, "SKEW_PAGE", 2)  # pages of 2, 4, 8: several pages, one past the run
    repo.commit("a month before", files={"a": "0"}, when="2025-12-20T10:00:00+08:00")
    for n in range(9):
        repo.commit(f"behind {n}", files={"a": f"{n}"}, when=f"2026-01-26T0{n}:00:00+08:00")
    repo.commit_raw("broken clock", {"a": "x"}, date="86400 +0000")
    repo.commit("on top", files={"a": "y"}, when="2026-01-26T12:00:00+08:00")

    assert titles(await day_commits(repo.path)) == ["on top", *(f"behind {n}" for n in reversed(range(9)))]


async def test_the_walk_past_the_bound_costs_one_small_call(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(40):  # older commits than a page: the check reads one page of them, no more
        repo.commit(f"old {n}", files={"a": f"{n}"}, when=f"2025-10-{n % 28 + 1:02d}T10:00:00+08:00")
    repo.commit("of the day", files={"a": "x"}, when="2026-01-26T10:00:00+08:00")
    calls: list[list[str]] = []
    spawn = LocalGitSource._spawn

    def counting(self: LocalGitSource, args: list[str], *rest: object, **kw: object) -> object:
        calls.append(args)
        return spawn(self, args, *rest, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(LocalGitSource, "_spawn", counting)

    assert titles(await day_commits(repo.path)) == ["of the day"]
    walks = [args for args in calls if args[0] == "rev-list"]
    assert len(walks) == 2 and any(a.startswith("--since=") for a in walks[0])
    assert "--max-count=16" in walks[1] and "--skip=1" in walks[1]


async def test_a_time_zone_offset_past_a_day_keeps_the_instant_in_utc(repo: GitRepo) -> None:
    # git fsck lets offsets such as +2500 or -9959 be (old importers wrote them); Python has no such zone.
    repo.commit("base", files={"a": "0"}, when="2025-12-01T10:00:00+08:00")
    repo.commit("normal", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")
    plus = repo.commit_raw("offset +2500", {"a": "2"}, date="1769396400 +2500")  # 11:00 in Shanghai
    repo.commit_raw("offset -9959", {"a": "3"}, date="1769400000 -9959")  # 12:00 in Shanghai
    source = LocalGitSource(repo.path)

    commits = await day_commits(repo.path)

    assert titles(commits) == ["offset -9959", "offset +2500", "normal"]
    assert [c.committed_at.astimezone(SHANGHAI).hour for c in commits] == [12, 11, 10]
    assert [c.committed_at.utcoffset() for c in commits] == [timedelta(0), timedelta(0), timedelta(hours=8)]
    assert (await source.get_commit(plus)).committed_at == datetime(2026, 1, 26, 3, tzinfo=UTC)
    past = await source.history("main", datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 2, 1, tzinfo=UTC))
    assert [c.committed_at.hour for c in past] == [2, 3, 4]


async def test_a_reset_clock_west_of_utc_is_read(repo: GitRepo) -> None:
    # 1970-01-01 01:00 UTC at -0800 is a local time before 1970, which git cannot print as %cI
    repo.commit_raw("reset clock", {"a": "1"}, date="3600 -0800")

    commits = await day_commits(repo.path, date(1969, 12, 31), ZoneInfo("America/Los_Angeles"))

    assert titles(commits) == ["reset clock"]
    assert commits[0].committed_at == datetime(1970, 1, 1, 1, tzinfo=UTC)
    assert commits[0].committed_at.utcoffset() == timedelta(hours=-8)


async def test_a_committer_date_past_year_9999_is_a_clear_error_and_hides_no_day(repo: GitRepo) -> None:
    repo.commit("of the day", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")
    far = repo.commit_raw("far future", {"a": "2"}, date="253402400800 +0000")  # 10000-01-02
    source = LocalGitSource(repo.path)

    assert titles(await day_commits(repo.path)) == ["of the day"]
    with pytest.raises(SourceError, match=f"commit {far[:12]} has a committer date past year 9999"):
        await source.get_commit(far)


async def test_a_committer_date_git_cannot_read_is_said_so(repo: GitRepo) -> None:
    # a negative date (git fsck: badDateOverflow) was called "past year 9999 (@)"
    repo.commit("of the day", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")
    bad = repo.commit_raw("before 1970", {"a": "2"}, date="-86400 -0800")

    assert titles(await day_commits(repo.path)) == ["of the day"]
    with pytest.raises(SourceError, match=f"^commit {bad[:12]} has a committer date git cannot read"):
        await LocalGitSource(repo.path).get_commit(bad)


async def test_newest_first_by_committer_date_and_ties_keep_history_order(repo: GitRepo) -> None:
    repo.commit("first at noon", files={"a": "1"}, when="2026-01-26T12:00:00+08:00")
    repo.commit("second at noon", files={"a": "2"}, when="2026-01-26T12:00:00+08:00")
    repo.commit("earlier clock", files={"a": "3"}, when="2026-01-26T09:00:00+08:00")
    repo.commit("evening", files={"a": "4"}, when="2026-01-26T20:00:00+08:00")

    assert titles(await day_commits(repo.path)) == [
        "evening",
        "second at noon",
        "first at noon",
        "earlier clock",
    ]


async def test_first_parent_history_only(repo: GitRepo) -> None:
    base = repo.commit("base", files={"README": "hi\n"}, when="2026-01-26T09:00:00+08:00")
    repo.branch("feature")
    repo.checkout("feature")
    repo.commit("feature part 1 (#56)", files={"f1.txt": "one\n"}, when="2026-01-26T10:00:00+08:00")
    tip = repo.commit("feature part 2", files={"f2.txt": "two\n"}, when="2026-01-26T11:00:00+08:00")
    repo.checkout("main")
    main_tip = repo.commit("on main", files={"README": "hello\n"}, when="2026-01-26T12:00:00+08:00")
    merge = repo.merge("feature", when="2026-01-26T13:00:00+08:00",
                       message="Merge pull request #34 from acme/feature")  # fmt: skip

    commits = await day_commits(repo.path)

    assert [c.sha for c in commits] == [merge, main_tip, base]
    merged = commits[0]
    assert merged.parents == (main_tip, tip)
    # a merge's diff is what it brought into the branch: against its first parent
    assert {f.path: f.status for f in merged.files} == {"f1.txt": "added", "f2.txt": "added"}
    assert merged.files[0].patch == "@@ -0,0 +1 @@\n+one"


# --- repositories and branches -------------------------------------------------------------------


async def test_bare_clone_and_a_path_inside_a_work_tree(repo: GitRepo, tmp_path: Path) -> None:
    repo.commit("add src", files={"src/pkg/mod.py": "x = 1\n"}, when="2026-01-26T10:00:00+08:00")
    bare = repo.clone(tmp_path / "gadgets.git", bare=True)

    from_bare = LocalGitSource(bare)
    from_subdir = LocalGitSource(repo.path / "src" / "pkg")

    assert from_bare.repo == "gadgets"  # its remote is a local path: the folder name, without .git
    assert from_subdir.repo == "acme/widgets"
    start, end = day_window(DAY, SHANGHAI)
    bare_commits = await from_bare.commits_in_window("main", start, end)
    sub_commits = await from_subdir.commits_in_window("main", start, end)
    assert [c.sha for c in bare_commits] == [c.sha for c in sub_commits] == [repo.head()]
    assert bare_commits[0].files == sub_commits[0].files


async def test_remote_tracking_branch_and_tag(repo: GitRepo, tmp_path: Path) -> None:
    base = repo.commit("base", files={"a": "1"}, when="2026-01-26T09:00:00+08:00")
    repo.branch("release")
    repo.checkout("release")
    released = repo.commit("release only", files={"a": "2"}, when="2026-01-26T10:00:00+08:00")
    repo.tag("v1.0")
    repo.checkout("main")
    clone = repo.clone(tmp_path / "checkout")
    assert GitRepo(clone).git("branch", "--list", "release") == ""  # only origin/release in the clone

    assert [c.sha for c in await day_commits(clone, branch="release")] == [released, base]
    assert [c.sha for c in await day_commits(clone, branch="main")] == [base]
    assert [c.sha for c in await day_commits(repo.path, branch="v1.0")] == [released, base]


async def test_unknown_branch_lists_known_ones(repo: GitRepo, tmp_path: Path) -> None:
    repo.commit("base", files={"a": "1"}, when="2026-01-26T09:00:00+08:00")
    repo.branch("dev")
    clone = repo.clone(tmp_path / "checkout")

    with pytest.raises(InputError) as caught:
        await day_commits(clone, branch="nope")

    with pytest.raises(InputError, match="unknown branch '--all'"):
        await day_commits(clone, branch="--all")  # never an option to git
    message = str(caught.value)
    assert message.startswith("unknown branch 'nope' in checkout; known branches: ")
    assert "main" in message and "origin/dev" in message and "HEAD" not in message


async def test_empty_repository_has_no_branches(tmp_path: Path) -> None:
    empty = GitRepo.init(tmp_path / "empty")

    with pytest.raises(InputError, match=r"known branches: \(none\)"):
        await day_commits(empty.path)


def test_not_a_repository_or_missing_path(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()

    with pytest.raises(SourceError, match=f"^{plain} is not a git repository$"):
        LocalGitSource(plain)
    with pytest.raises(SourceError, match=r"missing is not a git repository$"):
        LocalGitSource(tmp_path / "missing")


def test_a_work_trees_gitdir_file_is_its_repository_and_any_other_file_is_none(
    repo: GitRepo, tmp_path: Path
) -> None:
    # git takes a linked work tree's (or a submodule's) ".git" file, "gitdir: <path>"; we said "not a repository"
    repo.commit("root", files={"a": "0"}, when="2026-01-26T10:00:00+08:00")
    repo.git("worktree", "add", "--quiet", str(tmp_path / "linked"))
    note = tmp_path / "notes.txt"
    note.write_text("gitdir: nowhere\n")

    assert LocalGitSource(tmp_path / "linked" / ".git").repo == "acme/widgets"
    with pytest.raises(SourceError, match=f"^{note} is not a git repository$"):
        LocalGitSource(note)


def test_git_not_installed(repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-binaries-here"))

    with pytest.raises(SourceError, match="git is not installed"):
        LocalGitSource(repo.path)


# --- commit contents --------------------------------------------------------------------------------


async def test_statuses_counts_renames_binary_and_patches(repo: GitRepo) -> None:
    body = "".join(f"line {n}\n" for n in range(20))
    repo.commit("root", when="2026-01-26T09:00:00+08:00", files={
        "a.txt": "hello\nworld\n",
        "old.txt": "same content\n",
        "moved.py": body,
        "logo.png": b"\x89PNG\x00\x01\x02",
        "dir with space/ünï côde.txt": "unicode\n",
        "tab\there.txt": "tab\n",
    })  # fmt: skip
    second = repo.commit("second", when="2026-01-26T10:00:00+08:00",
                         rename={"old.txt": "new.txt", "moved.py": "pkg/moved.py"},
                         delete=["tab\there.txt"],
                         files={"a.txt": "hello\nthere\nworld\n", "pkg/moved.py": body + "line 20\n",
                                "logo.png": b"\x89PNG\x00\x03"})  # fmt: skip

    commits = await day_commits(repo.path)

    latest, root = commits
    assert latest.sha == second
    files = {f.path: f for f in latest.files}
    assert {p: f.status for p, f in files.items()} == {
        "a.txt": "modified",
        "new.txt": "renamed",
        "pkg/moved.py": "renamed",
        "logo.png": "modified",
        "tab\there.txt": "removed",
    }
    assert files["a.txt"].patch == "@@ -1,2 +1,3 @@\n hello\n+there\n world"
    assert (files["a.txt"].additions, files["a.txt"].deletions) == (1, 0)
    assert files["new.txt"].previous_path == "old.txt"
    assert files["new.txt"].patch is None  # a pure rename has no hunks, as on GitHub
    assert files["pkg/moved.py"].previous_path == "moved.py"
    assert files["pkg/moved.py"].patch is not None and files["pkg/moved.py"].patch.startswith(
        "@@ -18,3 +18,4 @@"
    )
    assert (files["logo.png"].additions, files["logo.png"].deletions, files["logo.png"].patch) == (0, 0, None)
    assert files["tab\there.txt"].patch == "@@ -1 +0,0 @@\n-tab"
    assert files["tab\there.txt"].deletions == 1
    assert latest.parents == (root.sha,)

    # the root commit diffs against the empty tree
    root_files = {f.path: f for f in root.files}
    assert root.parents == ()
    assert {f.status for f in root.files} == {"added"}
    assert root_files["dir with space/ünï côde.txt"].patch == "@@ -0,0 +1 @@\n+unicode"
    assert root_files["moved.py"].additions == 20
    assert root_files["logo.png"].patch is None


def numstat(repo: GitRepo, sha: str) -> dict[str, tuple[str, str]]:
    """git's own count of a commit's lines added and removed, per path ('-' for a binary file)."""
    out = repo.git("log", "-1", "-M", "--numstat", "--format=", sha)
    rows = [line.split("\t") for line in out.splitlines() if line]
    return {row[-1].split(" => ")[-1].rstrip("}"): (row[0], row[1]) for row in rows}


async def test_lines_added_and_removed_are_counted_as_git_numstat_counts_them(repo: GitRepo) -> None:
    repo.commit("root", when="2026-01-26T09:00:00+08:00", files={
        "dashes.txt": "--flag\n++plus\nkeep\n-- sql comment\n",
        "open.txt": "no newline at the end",
        "same.bin": b"\x00binary\x01",
        "grows.bin": b"\x00a",
        "empty.txt": "",
    })  # fmt: skip
    second = repo.commit("second", when="2026-01-26T10:00:00+08:00", rename={"same.bin": "moved.bin"},
                         files={"dashes.txt": "+++x\nkeep\n---y\n", "open.txt": "no newline at the end\nnow\n",
                                "grows.bin": b"\x00ab", "new.txt": "@@ -1 +1 @@\n+- not a hunk\n"})  # fmt: skip

    latest, root = await day_commits(repo.path)

    for commit in (latest, root):
        ours = {f.path: f for f in commit.files}
        git = numstat(repo, commit.sha)
        assert ours.keys() == git.keys()
        for path, (added, removed) in git.items():
            found = (ours[path].additions, ours[path].deletions)
            if added == "-":  # binary: no count and no patch
                assert (*found, ours[path].patch) == (0, 0, None), path
            else:
                assert found == (int(added), int(removed)), path
    files = {f.path: f for f in latest.files}
    assert latest.sha == second
    assert (files["dashes.txt"].additions, files["dashes.txt"].deletions) == (2, 3)
    assert (files["open.txt"].additions, files["open.txt"].deletions) == (2, 1)
    assert (files["new.txt"].additions, files["new.txt"].deletions) == (2, 0)
    assert (files["moved.bin"].status, files["moved.bin"].patch, files["moved.bin"].additions) == (
        "renamed",
        None,
        0,
    )


async def test_counts_come_from_git_numstat_when_patches_do_not_pair_with_files(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.commit("root", files={"a.txt": "a\n", "b.txt": "b\n"}, when="2026-01-26T09:00:00+08:00")
    repo.commit("change", files={"a.txt": "a\nA\n", "b.txt": "B\n"}, when="2026-01-26T10:00:00+08:00")
    calls: list[list[str]] = []
    spawn = LocalGitSource._spawn

    def counting(self: LocalGitSource, args: list[str], *rest: object, **kw: object) -> object:
        calls.append(list(args))
        return spawn(self, args, *rest, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(LocalGitSource, "_spawn", counting)
    for parse in ("parse_patches", "parse_tree_patches"):  # as if git had listed no section
        monkeypatch.setattr(patch_reads, parse, lambda out, shas: {})

    latest, root = await day_commits(repo.path)

    assert sum("--numstat" in args for args in calls) == 1  # asked once, for the batch
    assert [(f.path, f.additions, f.deletions, f.patch) for f in latest.files] == [
        ("a.txt", 1, 0, None),
        ("b.txt", 1, 1, None),  # never a patch paired with the wrong file
    ]
    assert [(f.path, f.additions) for f in root.files] == [("a.txt", 1), ("b.txt", 1)]


async def test_commit_fields(repo: GitRepo) -> None:
    message = "[Bugfix] Fix the widget (#12)\n\nLonger body.\n\nSigned-off-by: Ada <ada@example.com>\n"
    sha = repo.commit(message, files={"src/w.py": "fixed = True\n"}, when="2026-01-26T10:00:00+08:00")

    (commit,) = await day_commits(repo.path)

    assert commit.sha == sha
    assert commit.repo == "acme/widgets"
    assert commit.message == message
    assert commit.title == "[Bugfix] Fix the widget (#12)"
    assert commit.pr_number == 12
    assert commit.author == AUTHOR[0]  # the author, not the committer
    assert commit.url == f"https://github.com/acme/widgets/commit/{sha}"


async def test_hostile_messages_and_contents_do_not_confuse_parsing(repo: GitRepo) -> None:
    forged = "Looks like output\n\n:100644 100644 abc def M\n1\t2\tforged.txt\ndiff --git a/evil b/evil\n@@ -1 +1 @@\n"
    late_nul = "a\n" * 5000 + "nul \x00 here\n"  # git sees text: the NUL is past the first 8000 bytes
    odd_name = "new\nline.txt"
    repo.commit(forged, when="2026-01-26T10:00:00+08:00",
                files={"real.txt": "diff --git a/x b/x\n@@ -1 +1 @@\n", "late.txt": late_nul, odd_name: "x\n"})  # fmt: skip

    (commit,) = await day_commits(repo.path)

    assert commit.message == forged
    files = {f.path: f for f in commit.files}
    assert set(files) == {"real.txt", "late.txt", odd_name}
    assert files["real.txt"].patch == "@@ -0,0 +1,2 @@\n+diff --git a/x b/x\n+@@ -1 +1 @@"
    assert files["late.txt"].additions == 5001
    assert files["late.txt"].patch is not None and files["late.txt"].patch.endswith("+nul \x00 here")
    assert files[odd_name].patch == "@@ -0,0 +1 @@\n+x"


async def test_non_utf8_messages_and_diffs(repo: GitRepo) -> None:
    repo.commit(b"Caf\xe9 without a declared encoding\n", files={"l1.txt": b"caf\xe9\n"},
                when="2026-01-26T10:00:00+08:00")  # fmt: skip
    repo.commit("Café declared".encode("latin-1"), encoding="ISO-8859-1", files={"l2.txt": "x\n"},
                when="2026-01-26T11:00:00+08:00")  # fmt: skip

    declared, undeclared = await day_commits(repo.path)

    assert declared.title == "Café declared"  # git re-encodes to UTF-8
    assert undeclared.title == "Caf\ufffd without a declared encoding"
    assert undeclared.files[0].patch == "@@ -0,0 +1 @@\n+caf\ufffd"


async def test_user_git_config_does_not_change_the_result(repo: GitRepo) -> None:
    repo.commit("root", files={"a.txt": "one\n\ntwo\n", "b.txt": "bee\n", "c.txt": "c\n" * 10},
                when="2026-01-26T09:00:00+08:00")  # fmt: skip
    repo.branch("side")
    repo.checkout("side")
    repo.commit("side", files={"s.txt": "side\n"}, when="2026-01-26T09:30:00+08:00")
    repo.checkout("main")
    repo.commit("change", rename={"c.txt": "d.txt"}, files={"a.txt": "one\n\n2\n", "b.txt": "B\n"},
                when="2026-01-26T10:00:00+08:00")  # fmt: skip
    repo.merge("side", when="2026-01-26T11:00:00+08:00")
    clean = await day_commits(repo.path)

    for setting, value in {
        "diff.noprefix": "true",
        "diff.mnemonicPrefix": "true",
        "log.showSignature": "true",
        "color.ui": "always",
        "core.quotepath": "true",
        "diff.renames": "false",
        "diff.context": "8",
        "diff.suppressBlankEmpty": "true",
        "diff.external": "/bin/false",
        "diff.orderFile": "order.txt",
        "log.diffMerges": "combined",
        "log.showRoot": "false",
        "i18n.logOutputEncoding": "ISO-8859-1",
    }.items():
        repo.git("config", setting, value)
    (repo.path / "order.txt").write_text("b.txt\n", encoding="utf-8")

    assert await day_commits(repo.path) == clean
    assert clean[0].files[0].path == "s.txt"  # the merge: its first-parent diff
    assert {f.path: f.previous_path for f in clean[1].files}["d.txt"] == "c.txt"


async def test_one_batched_git_log_per_batch_not_per_commit(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(45):
        repo.commit(f"commit {n}", files={f"f{n % 5}.txt": f"{n}\n"}, when=f"2026-01-26T10:{n:02d}:00+08:00")
    calls: list[str] = []
    spawn, popen = LocalGitSource._spawn, LocalGitSource._popen

    def counting(self: LocalGitSource, args: list[str], *rest: object, **kw: object) -> object:
        calls.append(args[0])
        return spawn(self, args, *rest, **kw)  # type: ignore[arg-type]

    def started(self: LocalGitSource, args: list[str], **kw: object) -> object:
        calls.append(args[0])
        return popen(self, args, **kw)  # type: ignore[arg-type]

    source = LocalGitSource(repo.path)
    monkeypatch.setattr(LocalGitSource, "_spawn", counting)
    monkeypatch.setattr(LocalGitSource, "_popen", started)
    start, end = day_window(DAY, SHANGHAI)
    seen: list[tuple[int, int]] = []

    commits = await source.commits_in_window("main", start, end, progress=lambda d, t: seen.append((d, t)))
    await source.aclose()

    assert titles(commits) == [f"commit {n}" for n in reversed(range(45))]
    assert calls.count("log") == 1  # the metadata of all 45 commits
    assert calls.count("diff-tree") == 1  # and their patches
    assert len(calls) <= 5  # and the branch, the walk, one page past the walk
    assert seen == [(0, 45), (45, 45)]


async def test_small_batches_report_progress_and_give_the_same_commits(repo: GitRepo) -> None:
    for n in range(5):
        repo.commit(f"commit {n}", files={"a.txt": f"{n}\n"}, when=f"2026-01-26T10:0{n}:00+08:00")
    start, end = day_window(DAY, SHANGHAI)
    seen: list[tuple[int, int]] = []

    small = await LocalGitSource(repo.path, batch_size=2).commits_in_window(
        "main", start, end, progress=lambda d, t: seen.append((d, t))
    )

    assert seen == [(0, 5), (2, 5), (4, 5), (5, 5)]
    assert small == await day_commits(repo.path)


async def test_a_file_past_the_big_file_bound_is_counted_but_its_patch_is_not_read(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a commit adding a 500 MB data file had its whole patch read into memory (a few times over) and stored;
    # then, bounded, a 58 MB generated source read as "+0/-0 lines" and ranked as the day's smallest change
    monkeypatch.setattr(git_cli, "BIG_FILE_BYTES", 100_000)
    monkeypatch.setattr(big_files, "COUNT_CAP", 1_000_000)
    big = "".join(f"row {i}, some data\n" for i in range(10_000))  # ~200 KB of text
    files = {
        "data.csv": big,
        "huge.csv": big * 6,  # ~1.3 MB: past the count's own bound too
        "weights.bin": big,  # a binary name: no lines to count
        "src/a.py": "x = 1\n",
    }
    repo.commit("Add data", files=files, when="2026-01-26T10:00:00+08:00")

    [commit] = await day_commits(repo.path)
    read = {f.path: (f.status, f.patch, f.additions, f.deletions) for f in commit.files}

    assert read == {
        "data.csv": ("added", None, 10_000, 0),
        "huge.csv": ("added", None, 0, 0),
        "weights.bin": ("added", None, 0, 0),
        "src/a.py": ("added", "@@ -0,0 +1 @@\n+x = 1", 1, 0),
    }
    past = await LocalGitSource(repo.path).history("main", *day_window(DAY, SHANGHAI))
    # the history pass stays bounded: listed, its size unknown
    assert [dict(p.files) for p in past] == [{"data.csv": 0, "huge.csv": 0, "weights.bin": 0, "src/a.py": 1}]


# --- shallow clones ----------------------------------------------------------------------------------


async def test_a_shallow_clone_is_said_once_and_its_cut_commit_claims_no_files(
    repo: GitRepo, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    repo.commit(
        "base", files={"pkg/a.py": "x = 1\n", "pkg/b.py": "y = 2\n"}, when="2026-01-20T10:00:00+08:00"
    )
    repo.commit("readme", files={"README": "hi\n"}, when="2026-01-26T09:00:00+08:00")
    cut = repo.commit("typo", files={"README": "hi!\n"}, when="2026-01-26T10:00:00+08:00")
    repo.commit("more", files={"pkg/a.py": "x = 2\n"}, when="2026-01-26T11:00:00+08:00")
    shallow = tmp_path / "shallow"
    repo.git("clone", "--quiet", "--depth=2", f"file://{repo.path}", str(shallow))
    start, end = day_window(DAY, SHANGHAI)
    source = LocalGitSource(shallow)

    with caplog.at_level(logging.WARNING, logger="adapters.local_git"):
        commits = await source.commits_in_window("main", start, end)
        past = await source.history("main", start - timedelta(days=30), end)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]

    assert titles(commits) == ["more", "typo"]  # "readme" is past the cut: the warning says so
    assert commits[1].sha == cut and commits[1].files == ()  # not the whole repository as added
    assert [f.path for f in commits[0].files] == ["pkg/a.py"]
    assert [(c.message, c.files) for c in past] == [("typo", ()), ("more", (("pkg/a.py", 2),))]
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert "shallow clone" in warnings[0] and "git fetch --unshallow" in warnings[0]
    assert "--shallow-since=" in warnings[0]


async def test_a_day_wholly_before_a_shallow_clones_cut_is_refused_not_reported_empty(
    repo: GitRepo, tmp_path: Path
) -> None:
    # the clone holds nothing of the day: it was reported as a day with no commits, the warning aside
    repo.commit("base", files={"a": "0"}, when="2026-01-20T10:00:00+08:00")
    repo.commit("on the day", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")
    repo.commit("the day after", files={"a": "2"}, when="2026-01-27T10:00:00+08:00")
    shallow = tmp_path / "shallow"
    repo.git("clone", "--quiet", "--depth=1", f"file://{repo.path}", str(shallow))

    with pytest.raises(SourceError) as raised:
        await day_commits(shallow)

    message = str(raised.value)
    assert "\n" not in message and "shallow clone" in message
    assert "starts at 2026-01-27 02:00 UTC" in message and "git fetch --shallow-since=2026-01-24" in message
    assert titles(await day_commits(shallow, date(2026, 1, 27))) == [
        "the day after"
    ]  # what it holds: as before


async def test_a_shallow_clones_cut_inside_the_day_is_where_its_history_of_the_day_starts(
    repo: GitRepo, tmp_path: Path
) -> None:
    # the day's "readme" is behind the cut: the clone lists the day from "typo" on, and says where that is
    repo.commit("base", files={"a": "0"}, when="2026-01-20T10:00:00+08:00")
    repo.commit("readme", files={"a": "1"}, when="2026-01-26T09:00:00+08:00")
    repo.commit("typo", files={"a": "2"}, when="2026-01-26T10:00:00+08:00")
    repo.commit("more", files={"a": "3"}, when="2026-01-26T11:00:00+08:00")
    repo.commit("the day after", files={"a": "4"}, when="2026-01-27T10:00:00+08:00")
    shallow = tmp_path / "shallow"
    repo.git("clone", "--quiet", "--depth=3", f"file://{repo.path}", str(shallow))
    day, after = day_window(DAY, SHANGHAI), day_window(date(2026, 1, 27), SHANGHAI)
    source = LocalGitSource(shallow)

    assert titles(await source.commits_in_window("main", *day)) == ["more", "typo"]
    assert await source.history_start("main", *day) == datetime(2026, 1, 26, 2, 0, tzinfo=UTC)
    assert await LocalGitSource(shallow).history_start("main", *day) == datetime(
        2026, 1, 26, 2, 0, tzinfo=UTC
    )
    assert await source.history_start("main", *after) is None  # the cut is before that day: it is whole
    assert await LocalGitSource(repo.path).history_start("main", *day) is None  # not shallow


async def test_a_work_tree_of_a_shallow_clone_is_shallow_too(
    repo: GitRepo, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    repo.commit("base", files={"a": "0"}, when="2026-01-20T10:00:00+08:00")
    cut = repo.commit("cut", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")
    shallow = tmp_path / "shallow"
    repo.git("clone", "--quiet", "--depth=1", f"file://{repo.path}", str(shallow))
    GitRepo(shallow).git("worktree", "add", "--quiet", str(tmp_path / "linked"))

    with caplog.at_level(logging.WARNING, logger="adapters.local_git"):
        commit = await LocalGitSource(tmp_path / "linked").get_commit(cut)

    assert commit.files == () and "shallow clone" in caplog.text


async def test_a_full_clone_gives_no_shallow_warning(repo: GitRepo, caplog: pytest.LogCaptureFixture) -> None:
    repo.commit("root", files={"a": "0"}, when="2026-01-26T10:00:00+08:00")

    with caplog.at_level(logging.WARNING, logger="adapters.local_git"):
        commits = await day_commits(repo.path)

    assert [f.path for f in commits[0].files] == ["a"]  # a true root commit keeps its files
    assert "shallow" not in caplog.text


async def test_a_sha256_repositorys_full_object_names_are_commit_shas(tmp_path: Path) -> None:
    # `git init --object-format=sha256`: its commits are 64 hex digits; the full SHA was refused as "not a
    # commit SHA (use 4 to 40 hex digits)", though the digest printed it
    path = tmp_path / "sha256"
    path.mkdir()
    repo = GitRepo(path)
    repo.git("init", "--quiet", "--object-format=sha256", "--initial-branch=main")
    sha = repo.commit("Add a", files={"a.py": "x = 1\n"}, when="2026-01-26T10:00:00+08:00")
    source = LocalGitSource(path)

    assert len(sha) == 64
    assert [c.sha for c in await day_commits(path)] == [sha]
    for ref in (sha, sha[:50].upper(), sha[:7]):
        assert (await source.get_commit(ref)).sha == sha
    assert parse_ref(sha) == Ref("sha", sha, None)


# --- single commits ---------------------------------------------------------------------------------


def make_ambiguous_pair(repo: GitRepo) -> tuple[str, str]:
    """Two commits whose SHAs share their first 4 hex digits: hash candidate commit objects in Python
    until two collide (a birthday search, a few hundred tries), then write exactly those two."""
    tree, parent = repo.git("rev-parse", "HEAD^{tree}"), repo.head()
    seen: dict[str, bytes] = {}
    for n in itertools.count():
        ident = "Ada Lovelace <ada@example.com> 1769392800 +0800"
        body = f"tree {tree}\nparent {parent}\nauthor {ident}\ncommitter {ident}\n\nCandidate {n}\n".encode()
        sha = hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest()
        if sha[:4] in seen:
            shas = [
                repo.git("hash-object", "-t", "commit", "-w", "--stdin", input=b)
                for b in (seen[sha[:4]], body)
            ]
            assert shas[1] == sha
            for i, written in enumerate(shas):
                repo.git("update-ref", f"refs/heads/candidate-{i}", written)
            return shas[0], shas[1]
        seen[sha[:4]] = body
    raise AssertionError("unreachable")


async def test_get_commit_by_full_short_and_upper_case_sha(repo: GitRepo) -> None:
    sha = repo.commit("target", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")
    repo.commit("later", files={"a": "2"}, when="2026-01-26T11:00:00+08:00")
    source = LocalGitSource(repo.path)

    for ref in (sha, sha[:7], sha[:10].upper(), f"  {sha[:8]}\n"):
        commit = await source.get_commit(ref)
        assert (commit.sha, commit.title) == (sha, "target")
    assert (await source.get_commit(sha)).files[0].patch == "@@ -0,0 +1 @@\n+1\n\\ No newline at end of file"


async def test_get_commit_rejects_bad_unknown_and_non_commit_refs(repo: GitRepo) -> None:
    repo.commit("target", files={"a.txt": "content\n"}, when="2026-01-26T10:00:00+08:00")
    source = LocalGitSource(repo.path)
    blob = repo.git("rev-parse", "HEAD:a.txt")

    for bad in ("abc", "main", "HEAD~1", "-v", "g123456", "a" * 65, ""):
        with pytest.raises(InputError) as caught:
            await source.get_commit(bad)
        assert not isinstance(caught.value, RefNotFound)
    for unknown in ("0000000000000000000000000000000000000001", "a" * 41):  # 41 to 64: SHA-256 names
        with pytest.raises(RefNotFound, match="no commit"):
            await source.get_commit(unknown)
    with pytest.raises(RefNotFound):
        await source.get_commit(blob)  # an object, but not a commit


async def test_get_commit_ambiguous_prefix_lists_candidates(repo: GitRepo) -> None:
    repo.commit("base", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")
    first, second = make_ambiguous_pair(repo)
    source = LocalGitSource(repo.path)

    with pytest.raises(AmbiguousRef) as caught:
        await source.get_commit(first[:4])

    assert first[:12] in str(caught.value) and second[:12] in str(caught.value)
    assert (await source.get_commit(first[:12])).sha == first
    assert (await source.get_commit(second[:12])).sha == second


async def test_commit_for_pr(repo: GitRepo) -> None:
    squash = repo.commit("Add widgets (#12)", files={"a": "1"}, when="2026-01-26T09:00:00+08:00")
    repo.commit("Fix gadgets (#123)", files={"a": "2"}, when="2026-01-26T10:00:00+08:00")
    repo.commit("Docs\n\nFollow-up to (#12) and (#56).", files={"a": "3"}, when="2026-01-26T11:00:00+08:00")
    repo.branch("feature")
    repo.checkout("feature")
    repo.commit("Part of the feature (#56)", files={"f": "1"}, when="2026-01-26T12:00:00+08:00")
    repo.checkout("main")
    merge = repo.merge("feature", when="2026-01-26T13:00:00+08:00",
                       message="Merge pull request #34 from acme/feature\n\nPart of the feature")  # fmt: skip
    source = LocalGitSource(repo.path)

    assert (await source.commit_for_pr(12, "main")).sha == squash
    assert (await source.commit_for_pr(34, "main")).sha == merge
    assert (await source.commit_for_pr(123, "main")).title == "Fix gadgets (#123)"
    for missing in (1, 56, 99):  # (#1) is a prefix of nothing; #56 is only in a body and off first-parent
        with pytest.raises(RefNotFound, match=f"#{missing}"):
            await source.commit_for_pr(missing, "main")
    with pytest.raises(InputError, match="unknown branch"):
        await source.commit_for_pr(12, "nope")


async def test_a_lookup_named_for_another_repository_says_which_clone_it_searched(repo: GitRepo) -> None:
    """`analyze https://github.com/other/project/pull/12 --git-dir .`: the clone is not that repository, so
    the not-found message names the clone searched beside the name the URL gave."""
    repo.commit("Add widgets (#12)", files={"a": "1"}, when="2026-01-26T09:00:00+08:00")
    named = LocalGitSource(repo.path, repo="other/project")
    with pytest.raises(RefNotFound) as caught:
        await named.commit_for_pr(99, "main")
    assert f"in other/project (looked up in the clone at {named.git_dir}, which is " in str(caught.value)
    with pytest.raises(RefNotFound) as caught:
        await named.get_commit("abc1234")
    assert "looked up in the clone at" in str(caught.value)
    # a name that is the clone's own (its folder here) reads as before
    own = LocalGitSource(repo.path, repo=f"acme/{repo.path.name}")
    with pytest.raises(RefNotFound, match=rf"^no commit abc1234 in acme/{repo.path.name}$"):
        await own.get_commit("abc1234")


# --- repository names and credentials -------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "name", "web"),
    [
        ("https://github.com/acme/widgets.git", "acme/widgets", "https://github.com/acme/widgets"),
        ("https://github.com/acme/widgets", "acme/widgets", "https://github.com/acme/widgets"),
        ("https://github.com/acme/widgets/", "acme/widgets", "https://github.com/acme/widgets"),
        ("git@github.com:acme/widgets.git", "acme/widgets", "https://github.com/acme/widgets"),
        ("ssh://git@github.com/acme/widgets.git", "acme/widgets", "https://github.com/acme/widgets"),
        ("ssh://git@ssh.github.com:443/acme/widgets.git", "acme/widgets", "https://github.com/acme/widgets"),
        ("ssh://git@git.example.org:2222/team/app.git", "team/app", "https://git.example.org/team/app"),
        ("git@gitlab.example.com:team/app.git", "team/app", "https://gitlab.example.com/team/app"),
        ("https://git.example.org:8443/team/app.git", "team/app", "https://git.example.org:8443/team/app"),
        (f"https://x-access-token:{SECRET}@github.com/acme/widgets.git", "acme/widgets", "https://github.com/acme/widgets"),
        (f"https://{SECRET}@GitHub.com/acme/widgets", "acme/widgets", "https://github.com/acme/widgets"),
    ],
)  # fmt: skip
def test_parse_remote_url(url: str, name: str, web: str) -> None:
    parsed = parse_remote_url(url)

    assert parsed is not None
    assert (parsed.name, parsed.web_url) == (name, web)
    assert SECRET not in repr(parsed)


@pytest.mark.parametrize(
    "url",
    ["/srv/git/widgets.git", "../widgets", "file:///srv/git/acme/widgets.git", "https://gitlab.com/a/b/c.git",
     "https://github.com/acme", "", "C:\\repos\\widgets", "https://github.com:notaport/acme/widgets"],
)  # fmt: skip
def test_parse_remote_url_rejects_non_hosted(url: str) -> None:
    assert parse_remote_url(url) is None


def test_redact() -> None:
    text = f"fatal: unable to access 'https://user:{SECRET}@github.com/acme/widgets.git/'"
    assert redact(text) == "fatal: unable to access 'https://github.com/acme/widgets.git/'"


async def test_credentials_in_the_remote_never_leak(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    repo = GitRepo.init(tmp_path / "widgets", remote=f"https://user:{SECRET}@github.com/acme/widgets.git")
    sha = repo.commit("base", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")

    source = LocalGitSource(repo.path)
    (commit,) = await day_commits(repo.path)
    with pytest.raises(InputError) as caught:
        await day_commits(repo.path, branch="nope")

    assert source.repo == "acme/widgets"
    assert commit.url == f"https://github.com/acme/widgets/commit/{sha}"
    for text in (repr(commit), str(caught.value), caplog.text, repr(vars(source))):
        assert SECRET not in text


def test_repo_name_fallbacks(tmp_path: Path) -> None:
    no_remote = GitRepo.init(tmp_path / "gizmo")
    no_remote.commit("base", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")
    other_remote = GitRepo.init(tmp_path / "gadget", remote="git@github.com:acme/gadget.git")
    other_remote.git("remote", "add", "upstream", "https://github.com/upstream/gadget")

    assert LocalGitSource(no_remote.path).repo == "gizmo"
    assert LocalGitSource(no_remote.path, repo="acme/gizmo").repo == "acme/gizmo"
    assert LocalGitSource(other_remote.path).repo == "acme/gadget"
    assert LocalGitSource(other_remote.path, remote="upstream").repo == "upstream/gadget"
    assert LocalGitSource(no_remote.path / ".git").repo == "gizmo"


async def test_no_hosted_remote_means_no_url(tmp_path: Path) -> None:
    local = GitRepo.init(tmp_path / "gizmo", remote=str(tmp_path / "elsewhere.git"))
    local.commit("base", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")

    (commit,) = await day_commits(local.path)

    assert (commit.repo, commit.url) == ("gizmo", None)


async def test_aclose_is_a_no_op(repo: GitRepo) -> None:
    repo.commit("base", files={"a": "1"}, when="2026-01-26T10:00:00+08:00")
    source = LocalGitSource(repo.path)

    await source.aclose()

    assert len(await source.commits_in_window("main", *day_window(DAY, SHANGHAI))) == 1


def test_git_repo_helper_is_deterministic(tmp_path: Path) -> None:
    shas = []
    for name in ("one", "two"):
        helper = GitRepo.init(tmp_path / name)
        shas.append(helper.commit("same", files={"a": "1"}, when="2026-01-26T10:00:00+08:00"))
    assert shas[0] == shas[1]
    with pytest.raises(subprocess.CalledProcessError):
        GitRepo.init(tmp_path / "three").checkout("no-such-branch")


async def test_default_branch_follows_head(tmp_path):
    repo = GitRepo.init(tmp_path / "r", branch="trunk")
    repo.commit("first", {"a.txt": "1"}, when="2026-01-26T10:00:00+00:00")
    assert await LocalGitSource(repo.path).default_branch() == "trunk"
    bare = repo.clone(tmp_path / "r.git", bare=True)
    assert await LocalGitSource(bare).default_branch() == "trunk"


# -- history (the judgment signals) -----------------------------------------------------------------


async def test_history_lists_messages_and_touched_paths_oldest_first(repo: GitRepo) -> None:
    first = repo.commit("[Core] Add (#1)", files={"src/a.py": "x = 1\n"}, when="2025-09-01T10:00:00+00:00")
    repo.commit(
        "[Doc] Notes\n\nLonger body.", files={"docs/n.md": "a\nb\n"}, when="2025-09-02T10:00:00+00:00"
    )
    third = repo.commit("Revert #1", delete=["src/a.py"], when="2025-09-03T10:00:00+00:00")
    src = LocalGitSource(repo.path)
    start = datetime.fromisoformat("2025-09-01T10:00:00+00:00")
    got = await src.history("main", start, datetime.fromisoformat("2025-09-03T10:00:00+00:00"))
    assert [c.sha for c in got] == [first, repo.rev_parse("HEAD~1")]  # [since, until): the revert is out
    assert got[0].files == (("src/a.py", 1),) and got[1].message == "[Doc] Notes\n\nLonger body."
    everything = await src.history("main", start, datetime.fromisoformat("2025-09-04T00:00:00+00:00"))
    assert everything[-1].sha == third and everything[-1].files == (("src/a.py", 1),)


async def test_history_knows_the_commits_of_automated_accounts(repo: GitRepo) -> None:
    bot = repo.commit(
        "Bump actions/checkout from 4 to 5 (#9)",
        files={".github/workflows/ci.yml": "v5\n"},
        when="2025-09-01T10:00:00+00:00",
        author="dependabot[bot]",
        email="49699333+dependabot[bot]@users.noreply.github.com",
    )
    person = repo.commit(
        "[Core] Add (#10)",
        files={"src/a.py": "x = 1\n"},
        when="2025-09-02T10:00:00+00:00",
        author="Ada Lovelace",
        email="12345+ada@users.noreply.github.com",
    )
    src = LocalGitSource(repo.path)
    got = await src.history(
        "main", datetime.fromisoformat("2025-09-01T00:00:00+00:00"), datetime(2026, 1, 1, tzinfo=UTC)
    )
    assert [(c.sha, automated(c)) for c in got] == [(bot, True), (person, False)]
    # The day's commits name the GitHub login a noreply address carries (subscription filters read it).
    day = await src.get_commit(person)
    assert (day.author, day.author_login) == ("Ada Lovelace", "ada")
    assert (await src.get_commit(bot)).author_login == "dependabot[bot]"


# --- files at the branch tip ------------------------------------------------------------------------


async def test_files_at_the_branch_tip(repo: GitRepo) -> None:
    repo.commit(
        "one",
        files={"CHANGELOG.md": "## 1.0\n- first (#1)\n", "docs/a b.md": "x"},
        when="2026-01-26T01:00:00+08:00",
    )
    first = repo.head()
    repo.commit("two", files={"CHANGELOG.md": "## 1.1\n- ünïcode (#2)\n"}, when="2026-01-26T02:00:00+08:00")
    source = LocalGitSource(repo.path)
    tip = await source.branch_tip("main")
    assert tip == repo.head()
    assert await source.paths_at(tip) == ["CHANGELOG.md", "docs/a b.md"]
    assert await source.text_at(tip, "CHANGELOG.md") == "## 1.1\n- ünïcode (#2)\n"
    assert await source.text_at(first, "CHANGELOG.md") == "## 1.0\n- first (#1)\n"
    assert await source.text_at(tip, "missing.md") is None
    with pytest.raises(InputError, match="unknown branch"):
        await source.branch_tip("nope")


async def test_history_reads_exactly_the_spans_commits_and_reports_them_as_read(repo: GitRepo) -> None:
    """The span's commits are listed first, then read in one streamed pass: commits before and after the
    span are left out, a merge counts its first parent's changes, and the progress ends at (n, n)."""
    repo.commit("[Core] Before (#1)", files={"src/a.py": "x = 1\n"}, when="2025-08-01T10:00:00+00:00")
    inside = [
        repo.commit(f"[Core] In {i} (#{10 + i})", files={f"src/m{i}.py": "y\n" * (i + 1)},
                    when=f"2025-09-0{i + 1}T10:00:00+00:00")
        for i in range(3)
    ]  # fmt: skip
    repo.branch("side", inside[0])
    repo.checkout("side")
    repo.commit("[Core] Side (#30)", files={"src/side.py": "s\n" * 4}, when="2025-09-05T09:00:00+00:00")
    repo.checkout("main")
    merge = repo.merge("side", when="2025-09-05T10:00:00+00:00")
    repo.commit("[Core] After (#20)", files={"src/z.py": "z\n"}, when="2025-10-01T10:00:00+00:00")
    seen: list[tuple[int, int]] = []
    got = await LocalGitSource(repo.path).history(
        "main",
        datetime(2025, 9, 1, tzinfo=UTC),
        datetime(2025, 9, 30, tzinfo=UTC),
        progress=lambda done, total: seen.append((done, total)),
    )
    assert [c.sha for c in got] == [*inside, merge]  # first parent only: the side commit is not listed
    assert [c.files for c in got] == [*(((f"src/m{i}.py", i + 1),) for i in range(3)), (("src/side.py", 4),)]
    assert seen[-1] == (4, 4) and all(d <= t == 4 for d, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


async def test_history_of_an_empty_span_starts_no_log(repo: GitRepo) -> None:
    repo.commit("[Core] Before (#1)", files={"src/a.py": "x = 1\n"}, when="2025-08-01T10:00:00+00:00")
    src = LocalGitSource(repo.path)
    assert await src.history("main", datetime(2025, 9, 1, tzinfo=UTC), datetime(2025, 9, 2, tzinfo=UTC)) == []


async def test_a_long_span_read_in_several_passes_is_the_same_history(repo: GitRepo, monkeypatch) -> None:
    """One `git log` per part of the span (parts of at least MIN_COMMITS_PER_PASS commits, here 1): the
    commits, their order and files are those of one pass, and the progress is one running total."""
    shas = [
        repo.commit(f"[Core] Change {i} (#{i + 1})", files={f"src/m{i % 3}.py": "y\n" * (i + 1)},
                    when=f"2025-09-{i + 1:02d}T10:00:00+00:00")
        for i in range(7)
    ]  # fmt: skip
    span = ("main", datetime(2025, 9, 1, tzinfo=UTC), datetime(2025, 9, 30, tzinfo=UTC))
    one = await LocalGitSource(repo.path, history_passes=1).history(*span)
    monkeypatch.setattr(history_reads, "MIN_COMMITS_PER_PASS", 1)
    seen: list[tuple[int, int]] = []
    three = await LocalGitSource(repo.path, history_passes=3).history(
        *span, progress=lambda done, total: seen.append((done, total))
    )
    assert [c.sha for c in one] == shas and three == one
    assert seen[-1] == (7, 7) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_parts_are_contiguous_runs_of_nearly_equal_length() -> None:
    from adapters.local_git.history_reads import _parts

    items = [str(i) for i in range(10)]
    assert _parts(items, 3) == [items[0:4], items[4:7], items[7:10]]
    assert _parts(items, 1) == [items] and _parts(items[:2], 5) == [["0"], ["1"]]


def test_the_read_count_reports_a_few_times_a_second_and_always_the_total(monkeypatch) -> None:
    """A history pass reports per chunk of git's output (thousands for months of history), each report
    waking the event loop: the running total goes out at most every REPORT_EVERY seconds, and its end
    always, whichever pass reaches it."""
    now = [100.0]
    monkeypatch.setattr(git_cli.time, "monotonic", lambda: now[0])
    seen: list[tuple[int, int]] = []
    counter = git_cli.ReadCount(1000, lambda done, total: seen.append((done, total)))
    for _ in range(998):
        counter.add(1)  # all within the same instant
    assert seen == [(1, 1000)]
    now[0] += git_cli.ReadCount.REPORT_EVERY
    counter.add(1)
    counter.add(1)  # the total: reported although the last report was just now
    assert seen == [(1, 1000), (999, 1000), (1000, 1000)]
