"""GitHubSource against FakeGitHub over real HTTP on 127.0.0.1, with a temporary Store."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from adapters.github import GitHubSource, commit_from_detail
from analysis.errors import AmbiguousRef, InputError, RateLimited, RefNotFound, SourceError
from analysis.window import day_window
from tests.adapters.conftest import NOW
from tests.fakes.github import FakeGitHub, linear_history, make_commit, make_file

REPO = "octo/demo"
START, END = day_window(date(2026, 1, 29), ZoneInfo("Asia/Shanghai"))  # [01-28 16:00Z, 01-29 16:00Z)
TOKEN = "ghp_secretTOKEN1234567890"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(REPO) as gh:
        yield gh
        gh.check()


def list_requests(gh: FakeGitHub) -> list[Any]:
    return [r for r in gh.log if r.path == f"/repos/{REPO}/commits"]


def detail_requests(gh: FakeGitHub) -> list[Any]:
    return [r for r in gh.log if r.path.startswith(f"/repos/{REPO}/commits/")]


# -- listing and the window ------------------------------------------------------------------------
async def test_list_follows_pagination_and_returns_newest_first(fake, source_for):
    history = linear_history(250, END - timedelta(minutes=1), step=timedelta(minutes=1))
    fake.set_commits(history)
    progress: list[tuple[int, int]] = []

    commits = await source_for(fake).commits_in_window(
        "main", START, END, lambda d, t: progress.append((d, t))
    )

    assert [c.sha for c in commits] == [c["sha"] for c in history]
    assert len(list_requests(fake)) == 3  # 100 + 100 + 50
    assert [r.query.get("page") for r in list_requests(fake)] == [None, "2", "3"]
    assert len(detail_requests(fake)) == 250
    assert progress[0] == (0, 250) and progress[-1] == (250, 250)
    assert [d for d, _ in progress] == sorted(d for d, _ in progress)


async def test_window_includes_start_and_excludes_end(fake, source_for):
    times = {
        "after-end": END + timedelta(seconds=1),
        "at-end": END,
        "just-before-end": END - timedelta(seconds=1),
        "at-start": START,
        "before-start": START - timedelta(seconds=1),
    }
    oldest_first = list(times.items())[::-1]
    parent: list[str] = []
    by_name: dict[str, str] = {}
    commits = []
    for name, when in oldest_first:
        c = make_commit(name, when, parents=parent)
        commits.append(c)
        parent = [c["sha"]]
        by_name[name] = c["sha"]
    fake.set_commits(commits)

    got = await source_for(fake).commits_in_window("main", START, END)

    assert [c.title for c in got] == ["just-before-end", "at-start"]
    query = list_requests(fake)[0].query
    assert query["since"] == "2026-01-28T16:00:00Z" and query["until"] == "2026-01-29T16:00:00Z"
    assert query["sha"] == "main" and query["per_page"] == "100"


async def test_maps_github_json_to_the_domain_commit(fake, source_for):
    files = [
        make_file("src/core.py", additions=10, deletions=2, patch="@@ -1 +1 @@\n-a\n+b"),
        make_file("img/logo.png", status="added", additions=0, deletions=0, patch=None),
        make_file("src/new.py", status="renamed", previous_filename="src/old.py", additions=1, deletions=1),
    ]
    c = make_commit("[Bugfix] Fix it (#123)\n\nbody text", START + timedelta(hours=2), parents=["f" * 40])
    c["files"] = files
    c["author"] = None  # e-mail not linked to any GitHub account
    c["stats"] = {"additions": 11, "deletions": 3, "total": 14}
    fake.set_commits([c])

    [got] = await source_for(fake).commits_in_window("main", START, END)

    assert got.sha == c["sha"] and got.repo == REPO
    assert got.message == "[Bugfix] Fix it (#123)\n\nbody text" and got.pr_number == 123
    assert got.author == "Ada Lovelace" and got.author_login is None
    assert got.committed_at == START + timedelta(hours=2) and got.committed_at.tzinfo is not None
    assert got.parents == ("f" * 40,)
    assert got.url == c["html_url"]
    assert (got.additions, got.deletions, got.files_total) == (11, 3, 3)
    assert [f.path for f in got.files] == ["src/core.py", "img/logo.png", "src/new.py"]
    assert got.files[0].patch == "@@ -1 +1 @@\n-a\n+b"
    assert got.files[1].patch is None and got.files[1].status == "added"
    assert got.files[2].previous_path == "src/old.py"


async def test_author_login_comes_from_the_top_level_author(fake, source_for):
    fake.set_commits([make_commit("x", START + timedelta(hours=1), login="octocat")])
    [got] = await source_for(fake).commits_in_window("main", START, END)
    assert got.author_login == "octocat"


async def test_empty_window_makes_only_the_list_request(fake, source_for):
    fake.set_commits([make_commit("old", START - timedelta(days=2))])
    assert await source_for(fake).commits_in_window("main", START, END) == []
    assert fake.requests == 1


# -- files ----------------------------------------------------------------------------------------------
async def test_file_pages_are_followed(store, source_for):
    files = [make_file(f"pkg/f{i:04}.py", additions=1) for i in range(650)]
    with FakeGitHub(REPO, [make_commit("big", START + timedelta(hours=1), files=files)]) as gh:
        [got] = await source_for(gh).commits_in_window("main", START, END)
        details = detail_requests(gh)
    assert len(details) == 3 and [r.query.get("page") for r in details] == [None, "2", "3"]
    assert [f.path for f in got.files] == [f["filename"] for f in files]
    assert got.files_total == 650 and not got.files_truncated


@pytest.mark.parametrize(
    ("title", "expected_total"), [("huge vendored drop (#77)", 3200), ("huge vendored drop", 3001)]
)
async def test_file_cap_marks_the_commit_truncated(store, source_for, title, expected_total):
    files = [make_file(f"vendor/f{i:05}.c", additions=2) for i in range(3200)]
    with FakeGitHub(
        REPO, [make_commit(title, START + timedelta(hours=1), files=files)], files_per_page=1000
    ) as gh:
        [got] = await source_for(gh).commits_in_window("main", START, END)
    assert len(got.files) == 3000
    assert got.additions == 6400  # whole-commit totals survive the cap
    # With a pull request GitHub states the real count; without one we know only that more exist.
    assert got.files_total == expected_total
    assert got.files_truncated


# -- ETag cache and the store -----------------------------------------------------------------------
async def test_rerun_revalidates_the_list_and_fetches_no_stored_commit(fake, source_for):
    fake.set_commits(linear_history(5, END - timedelta(hours=1)))
    first_src = source_for(fake)
    first = await first_src.commits_in_window("main", START, END)
    sent_etag = next(r for r in fake.log if r.path.endswith("/commits"))
    assert first_src.requests_made == 6 and first_src.not_modified == 0
    fake.reset_counters()

    second_src = source_for(fake)
    second = await second_src.commits_in_window("main", START, END)

    assert [c.sha for c in second] == [c.sha for c in first]
    [revalidation] = fake.log
    assert revalidation.status == 304
    assert revalidation.headers.get("if-none-match", "").startswith('W/"')
    assert "if-modified-since" in revalidation.headers
    assert sent_etag.status == 200
    assert detail_requests(fake) == []
    assert (second_src.requests_made, second_src.not_modified) == (1, 1)


async def test_new_commit_changes_the_list_and_only_it_is_fetched(fake, source_for):
    history = linear_history(3, START + timedelta(hours=3))
    fake.set_commits(history)
    await source_for(fake).commits_in_window("main", START, END)
    newer = make_commit("late arrival", START + timedelta(hours=5), parents=[history[0]["sha"]])
    fake.add_commits([newer])
    fake.reset_counters()

    got = await source_for(fake).commits_in_window("main", START, END)

    assert got[0].sha == newer["sha"] and len(got) == 4
    assert [r.status for r in list_requests(fake)] == [200]
    assert [r.path.rsplit("/", 1)[1] for r in detail_requests(fake)] == [newer["sha"]]


# -- rate limits, retries, errors --------------------------------------------------------------------
async def test_429_with_retry_after_waits_that_long_then_succeeds(fake, source_for, sleeps):
    fake.set_commits(linear_history(2, START + timedelta(hours=2)))
    fake.rate_limit(retry_after=7, status=429)
    got = await source_for(fake).commits_in_window("main", START, END)
    assert len(got) == 2
    assert sleeps.calls == [7.0]


async def test_primary_limit_waits_until_the_reset(fake, source_for, sleeps):
    fake.set_commits(linear_history(1, START + timedelta(hours=2)))
    fake.rate_limit(status=403, reset_at=NOW + 30, path_contains="/commits/")
    src = source_for(fake)
    got = await src.commits_in_window("main", START, END)
    assert len(got) == 1
    assert sleeps.calls == [31.0]  # until the reset, plus one second of clock slack
    assert src.rate_limit_waits == [31.0]


async def test_limit_resetting_too_late_raises_rate_limited_with_the_reset_time(fake, source_for, sleeps):
    fake.set_commits(linear_history(1, START + timedelta(hours=2)))
    fake.rate_limit(status=403, reset_at=NOW + 3600)
    with pytest.raises(RateLimited) as err:
        await source_for(fake, max_wait=300).commits_in_window("main", START, END)
    resets = datetime.fromtimestamp(NOW + 3601, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert resets in str(err.value) and "GITHUB_TOKEN" in str(err.value)
    assert sleeps.calls == []


async def test_plain_403_is_a_permission_error_not_a_wait(fake, source_for, sleeps):
    fake.fail_next(403, body={"message": "Resource not accessible by integration"})
    with pytest.raises(SourceError) as err:
        await source_for(fake).commits_in_window("main", START, END)
    assert not isinstance(err.value, RateLimited)
    assert "403" in str(err.value) and "Resource not accessible" in str(err.value)
    assert sleeps.calls == []


async def test_server_errors_are_retried_with_backoff(fake, source_for, sleeps):
    fake.set_commits(linear_history(1, START + timedelta(hours=2)))
    fake.fail_next(502, count=2)
    assert len(await source_for(fake).commits_in_window("main", START, END)) == 1
    assert sleeps.calls == [1.0, 2.0]


async def test_persistent_server_errors_give_up_with_a_source_error(fake, source_for, sleeps):
    fake.fail_next(500, count=100)
    with pytest.raises(SourceError, match=r"kept failing \(500\)"):
        await source_for(fake).commits_in_window("main", START, END)
    assert len(sleeps.calls) == 3 and fake.requests == 4


async def test_wrong_token_is_401_and_never_shown(store, source_for, caplog):
    caplog.set_level(logging.DEBUG)
    with FakeGitHub(REPO, linear_history(1, START + timedelta(hours=1)), token="the-right-one") as gh:
        with pytest.raises(SourceError) as err:
            await source_for(gh, token=TOKEN).commits_in_window("main", START, END)
        assert gh.log[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert str(err.value) == "GitHub rejected the token (401): check GITHUB_TOKEN"
    assert TOKEN not in caplog.text and TOKEN not in repr(err.value)


async def test_right_token_is_sent_and_headers_are_githubs(store, source_for):
    with FakeGitHub(REPO, linear_history(2, START + timedelta(hours=1)), token=TOKEN) as gh:
        assert len(await source_for(gh, token=TOKEN).commits_in_window("main", START, END)) == 2
        headers = gh.log[0].headers
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["accept"] == "application/vnd.github+json"
    assert headers["x-github-api-version"] == "2022-11-28"
    assert headers["user-agent"] == "digestbot"


@pytest.mark.parametrize("pasted", [f"token {TOKEN}", f"Bearer {TOKEN}", f"  {TOKEN}\n"])
async def test_a_token_pasted_with_its_scheme_or_spaces_is_sent_as_the_token(store, source_for, pasted):
    with FakeGitHub(REPO, linear_history(1, START + timedelta(hours=1)), token=TOKEN) as gh:
        assert len(await source_for(gh, token=pasted).commits_in_window("main", START, END)) == 1
        assert gh.log[0].headers["authorization"] == f"Bearer {TOKEN}"


async def test_no_token_sends_no_authorization(fake, source_for):
    fake.set_commits(linear_history(1, START + timedelta(hours=1)))
    await source_for(fake).commits_in_window("main", START, END)
    assert all("authorization" not in r.headers for r in fake.log)


async def test_rate_limit_message_never_contains_the_token(fake, source_for, caplog):
    caplog.set_level(logging.DEBUG)
    fake.rate_limit(status=429, retry_after=10_000)
    with pytest.raises(RateLimited) as err:
        await source_for(fake, token=TOKEN).commits_in_window("main", START, END)
    assert TOKEN not in str(err.value) and TOKEN not in caplog.text
    assert "GITHUB_MAX_WAIT" in str(err.value)  # with a token, the advice is to allow a longer wait


async def test_unknown_repository_is_a_404_source_error(fake, source_for):
    with pytest.raises(SourceError) as err:
        await source_for(fake, repo="octo/missing").commits_in_window("main", START, END)
    assert "octo/missing" in str(err.value) and "404" in str(err.value)
    assert "GITHUB_TOKEN" in str(err.value)


async def test_unknown_branch_is_named(fake, source_for):
    with pytest.raises(SourceError, match="branch 'nope' not found in octo/demo"):
        await source_for(fake).commits_in_window("nope", START, END)


async def test_unreachable_server_is_one_clear_source_error(store, source_for, sleeps):
    with FakeGitHub(REPO) as gh:
        dead_url = gh.base_url  # the port is closed once the server stops
    with pytest.raises(SourceError, match=f"cannot reach GitHub at {dead_url}"):
        await source_for(gh, base_url=dead_url).commits_in_window("main", START, END)
    assert len(sleeps.calls) == 3


@pytest.mark.parametrize("bad", ["nope", "a/b/c", "../x", "owner/", "o w/n"])
def test_repository_must_be_owner_slash_name(store, bad):
    with pytest.raises(InputError, match="OWNER/NAME"):
        GitHubSource(bad, store=store)


# -- single commits and pull requests ----------------------------------------------------------------
async def test_get_commit_by_short_sha_fetches_once_then_uses_the_store(fake, source_for):
    c = make_commit("one", START + timedelta(hours=1))
    fake.set_commits([c])
    src = source_for(fake)

    got = await src.get_commit(c["sha"][:8].upper())
    again = await src.get_commit(c["sha"][:7])
    full = await src.get_commit(c["sha"])

    assert got.sha == again.sha == full.sha == c["sha"]
    assert fake.requests == 1


async def test_unknown_sha_is_ref_not_found(fake, source_for):
    fake.set_commits([make_commit("one", START, sha="1" * 40)])
    with pytest.raises(RefNotFound, match="no commit deadbeef in octo/demo"):
        await source_for(fake).get_commit("deadbeef")


async def test_ambiguous_short_sha_on_github(fake, source_for):
    fake.set_commits(
        [make_commit("a", START, sha="abcd1" + "0" * 35), make_commit("b", START, sha="abcd2" + "0" * 35)]
    )
    with pytest.raises(AmbiguousRef, match="abcd"):
        await source_for(fake).get_commit("abcd")


async def test_ambiguous_short_sha_in_the_store_needs_no_request(fake, source_for, store):
    for sha in ("beef1" + "0" * 35, "beef2" + "0" * 35):
        fake.set_commits([make_commit(sha, START, sha=sha)])
        await source_for(fake).get_commit(sha)
    fake.reset_counters()
    with pytest.raises(AmbiguousRef, match="beef1000000"):
        await source_for(fake).get_commit("beef")
    assert fake.requests == 0


@pytest.mark.parametrize("bad", ["abc", "xyz123", "a" * 41, "HEAD~1", ""])
async def test_bad_reference_is_an_input_error(fake, source_for, bad):
    with pytest.raises(InputError, match="bad commit reference"):
        await source_for(fake).get_commit(bad)
    assert fake.requests == 0


async def test_pull_request_resolves_to_its_merge_commit(fake, source_for):
    merged = make_commit("[Feature] Add a thing (#42)", START + timedelta(hours=1))
    fake.set_commits([merged, make_commit("other (#41)", START)])
    got = await source_for(fake).commit_for_pr(42, "main")
    assert got.sha == merged["sha"] and got.pr_number == 42


async def test_unknown_or_unmerged_pull_request_is_ref_not_found(fake, source_for):
    fake.add_pull(7, merged=False)
    src = source_for(fake)
    with pytest.raises(RefNotFound, match="#7 in octo/demo is not merged"):
        await src.commit_for_pr(7, "main")
    with pytest.raises(RefNotFound, match="#99 not found"):
        await src.commit_for_pr(99, "main")


async def test_pull_request_merged_into_another_branch(fake, source_for):
    fake.add_pull(8, merged=True, merge_commit_sha="8" * 40, base="release")
    with pytest.raises(RefNotFound, match="merged into 'release', not 'main'"):
        await source_for(fake).commit_for_pr(8, "main")


# -- deployment shapes -------------------------------------------------------------------------------
@pytest.mark.parametrize("trailing", ["", "/"])
async def test_enterprise_base_url_with_a_path_prefix(store, source_for, trailing):
    history = linear_history(3, START + timedelta(hours=1))
    with FakeGitHub(REPO, history, path_prefix="/api/v3", files_per_page=1) as gh:
        assert gh.base_url.endswith("/api/v3")
        got = await source_for(gh, base_url=gh.base_url + trailing).commits_in_window("main", START, END)
        assert gh.requests_to(f"/repos/{REPO}/commits") == 4
        assert gh.server.url_for("/") + "api/v3" == gh.base_url
    assert [c.sha for c in got] == [c["sha"] for c in history]


async def test_detail_requests_respect_the_concurrency_bound(store, source_for):
    with FakeGitHub(REPO, linear_history(12, START + timedelta(hours=3)), latency=0.05) as gh:
        got = await source_for(gh, concurrency=3).commits_in_window("main", START, END)
        peak = gh.max_in_flight
    assert len(got) == 12
    assert 2 <= peak <= 3  # overlapping, never above the bound


# -- first-parent history ----------------------------------------------------------------------------
async def test_merge_commit_side_branch_is_left_out(fake, source_for):
    t = START + timedelta(hours=1)
    base = make_commit("base", t, parents=["0" * 40])
    side1 = make_commit("side 1", t + timedelta(minutes=10), parents=[base["sha"]])
    main1 = make_commit("main 1", t + timedelta(minutes=20), parents=[base["sha"]])
    side2 = make_commit("side 2", t + timedelta(minutes=30), parents=[side1["sha"]])
    merge = make_commit(
        "Merge pull request #5", t + timedelta(minutes=40), parents=[main1["sha"], side2["sha"]]
    )
    fake.set_commits([base, side1, main1, side2, merge])

    got = await source_for(fake).commits_in_window("main", START, END)

    assert [c.title for c in got] == ["Merge pull request #5", "main 1", "base"]


async def test_side_commits_of_a_merge_after_the_window_are_left_out(fake, source_for):
    x = make_commit("main x", START + timedelta(hours=1), parents=["0" * 40])
    side = make_commit("feature wip", START + timedelta(hours=2), parents=[x["sha"]])
    y = make_commit("main y", START + timedelta(hours=3), parents=[x["sha"]])
    merge_in_window = make_commit("Merge #1", START + timedelta(hours=4), parents=[y["sha"], "9" * 40])
    later = make_commit("Merge #2", END + timedelta(hours=2), parents=[merge_in_window["sha"], side["sha"]])
    fake.set_commits([x, side, y, merge_in_window, later])

    got = await source_for(fake).commits_in_window("main", START, END)

    assert [c.title for c in got] == ["Merge #1", "main y", "main x"]
    above = [r for r in list_requests(fake) if "until" not in r.query]
    assert len(above) == 1 and above[0].query["since"] == "2026-01-29T16:00:00Z"


async def test_linear_history_with_an_out_of_window_parent_keeps_every_in_window_commit(fake, source_for):
    # Squash-merge history whose middle commit carries a skewed date outside the window.
    c1 = make_commit("one", START + timedelta(hours=1), parents=["0" * 40])
    c2 = make_commit("skewed", START - timedelta(days=3), parents=[c1["sha"]])
    c3 = make_commit("three", START + timedelta(hours=3), parents=[c2["sha"]])
    fake.set_commits([c1, c2, c3])

    got = await source_for(fake).commits_in_window("main", START, END)

    assert [c.title for c in got] == ["three", "one"]


async def test_squash_merge_history_needs_no_extra_listing(fake, source_for):
    fake.set_commits(linear_history(30, END - timedelta(minutes=5), step=timedelta(minutes=20)))
    got = await source_for(fake).commits_in_window("main", START, END)
    assert len(got) == 30
    assert len(list_requests(fake)) == 1


async def test_default_branch_is_read_once_then_revalidated(store):
    with FakeGitHub("octo/demo", branches=("trunk",)) as fake:
        for _ in range(2):
            source = GitHubSource("octo/demo", store=store, base_url=fake.base_url)
            assert await source.default_branch() == "trunk"
            await source.aclose()
        assert fake.not_modified == 1  # the second run cost a 304, no quota


async def test_default_branch_of_missing_repo(store):
    with FakeGitHub("octo/demo") as fake:
        source = GitHubSource("octo/nope", store=store, base_url=fake.base_url)
        with pytest.raises(SourceError, match="octo/nope not found"):
            await source.default_branch()
        await source.aclose()


# -- history (the judgment signals) -----------------------------------------------------------------


async def test_history_reads_list_pages_once_then_only_new_ones(fake, source_for, store):
    from bot.digest.history import sync_history

    newest = datetime(2026, 1, 20, tzinfo=UTC)
    fake.set_commits(linear_history(250, newest, step=timedelta(hours=1)))
    source = source_for(fake, token=TOKEN)
    since = newest - timedelta(days=30)
    await sync_history(source, store, "main", since, newest + timedelta(seconds=1))
    stored = store.history(REPO, "main", since, newest + timedelta(seconds=1))
    assert len(stored) == 250 and stored[0].message == "change 0"
    assert fake.requests_to("/commits") - fake.requests_to("/commits/") == 3  # 250 commits: 3 list pages
    # The details of up to HISTORY_DETAILS commits were fetched once for their paths and stored.
    assert stored[-1].files == (("src/app.py", 1),)

    fake.reset_counters()
    await sync_history(source, store, "main", since, newest + timedelta(seconds=1))
    assert fake.requests == 0  # all stored: nothing read again

    fake.add_commits(
        linear_history(
            5,
            newest + timedelta(hours=5),
            step=timedelta(hours=1),
            title="next",
            base_parent=fake._commits[0]["sha"],
        )
    )
    fake.reset_counters()
    later = newest + timedelta(hours=6)
    await sync_history(source, store, "main", since, later)
    assert fake.requests_to("/commits") - fake.requests_to("/commits/") == 1  # only the new page
    assert [c.message for c in store.history(REPO, "main", newest, later)][-5:] == [
        f"next {i}" for i in range(5)
    ]


async def test_history_without_a_token_spares_the_hourly_quota(fake, source_for, store):
    newest = datetime(2026, 1, 20, tzinfo=UTC)
    fake.set_commits(linear_history(450, newest, step=timedelta(hours=1)))
    history = await source_for(fake).history(
        "main", newest - timedelta(days=30), newest + timedelta(seconds=1)
    )
    assert len(history) == 300  # the newest three pages
    assert fake.requests == 3 and all(c.files == () for c in history)  # no detail requests


# -- files at the branch tip -----------------------------------------------------------------------
async def test_files_at_the_tip_are_listed_and_read_with_etags(fake, source_for):
    fake.set_commits(linear_history(3, END - timedelta(minutes=1)))
    notes = "# Changelog\n\n## 1.0\n\n### Fixed\n\n- ünïcode (#1)\n"
    fake.set_files({"CHANGELOG.md": notes, "docs/en/release-notes.md": "x" * 2000, "src/a.py": "a = 1\n"})
    fake.contents_limit = 1000  # the docs page is "too large" for the contents endpoint
    source = source_for(fake)
    tip = await source.branch_tip("main")
    assert tip == fake._tip()
    assert await source.paths_at(tip) == ["CHANGELOG.md", "docs/en/release-notes.md", "src/a.py"]
    assert await source.text_at(tip, "CHANGELOG.md") == notes
    assert await source.text_at(tip, "docs/en/release-notes.md") == "x" * 2000  # through the blob endpoint
    assert await source.text_at(tip, "missing.md") is None
    assert fake.requests_to("/git/blobs/") == 1
    # A second read revalidates: 304s, no body sent again.
    before = fake.not_modified
    assert await source.text_at(tip, "CHANGELOG.md") == notes
    assert fake.not_modified == before + 1
    with pytest.raises(SourceError, match="branch 'nope' not found"):
        await source.branch_tip("nope")


def test_a_saved_commit_detail_reads_with_its_files():
    """The benches read the saved GitHub days through commit_from_detail: files inline, renames kept."""
    data = make_commit(
        "Rename the loader (#12)",
        "2026-01-29T03:00:00Z",
        files=[
            make_file("src/new.py", status="renamed", previous_filename="src/old.py"),
            make_file("a.bin", patch=None),
        ],
    )
    commit = commit_from_detail(REPO, data)
    assert [f.path for f in commit.files] == ["src/new.py", "a.bin"]
    assert commit.files[0].previous_path == "src/old.py" and commit.files[1].patch is None
    assert commit.file_count == 2 and commit.pr_number == 12
    data["files"][1] = {"status": "added"}  # no filename
    with pytest.raises(ValueError, match=r"files\[1\]\.filename"):
        commit_from_detail(REPO, data)
