"""GitHubSource against a FakeGitHub that misbehaves, over real HTTP on 127.0.0.1: pagination that never
ends, answers of the wrong shape, answers that trickle in, absurd rate-limit headers."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest

from analysis.errors import RateLimited, SourceError
from tests.adapters.conftest import NOW
from tests.adapters.test_github import END, REPO, START, detail_requests, list_requests
from tests.fakes.github import FakeGitHub, linear_history, make_commit, make_file

LIST = r"/commits$"
DETAIL = r"/commits/"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(REPO, linear_history(3, START + timedelta(hours=3))) as gh:
        yield gh
        gh.check()


def big_commit(files: int, title: str = "many files") -> dict[str, Any]:
    return make_commit(
        title, START + timedelta(hours=1), files=[make_file(f"f{i:03}.py") for i in range(files)]
    )


# -- pagination that does not end ------------------------------------------------------------------
async def test_file_pages_linking_back_to_themselves_stop_and_mark_the_commit_incomplete(
    store, source_for, caplog
):
    caplog.set_level(logging.WARNING)
    with FakeGitHub(REPO, [big_commit(3)], files_per_page=2) as gh:
        gh.loop_pages(DETAIL, "self")
        [got] = await source_for(gh).commits_in_window("main", START, END)
        assert len(detail_requests(gh)) == 1  # the looping link is never requested
    assert [f.path for f in got.files] == ["f000.py", "f001.py"]
    assert got.files_total == 3 and got.files_truncated  # no pull request to count them: "more than 2"
    assert "file list of commit" in caplog.text and "does not end" in caplog.text


async def test_file_pages_that_never_end_stop_at_the_first_page_adding_nothing(store, source_for):
    # The pull request states the real count: every file was read, so the commit is complete.
    with FakeGitHub(REPO, [big_commit(3, "many files (#12)")], files_per_page=2) as gh:
        gh.loop_pages(DETAIL, "endless")
        [got] = await source_for(gh).commits_in_window("main", START, END)
        assert len(detail_requests(gh)) == 3  # pages 1 and 2, then an empty page 3
    assert len(got.files) == 3 and got.files_total == 3 and not got.files_truncated


async def test_file_pages_stop_at_the_page_cap(store, source_for):
    with FakeGitHub(REPO, [big_commit(40, "many files (#12)")], files_per_page=1) as gh:
        [got] = await source_for(gh).commits_in_window("main", START, END)
        assert len(detail_requests(gh)) == 30
    assert len(got.files) == 30 and got.files_total == 40 and got.files_truncated


async def test_a_commit_list_linking_back_to_itself_is_an_error_not_10000_commits(fake, source_for):
    fake.loop_pages(LIST, "self")
    with pytest.raises(SourceError, match="pagination of the commit list of octo/demo@main loops"):
        await source_for(fake).commits_in_window("main", START, END)
    assert len(list_requests(fake)) == 1


async def test_a_commit_list_that_never_ends_is_not_called_a_busy_window(fake, source_for):
    fake.loop_pages(LIST, "endless")
    with pytest.raises(SourceError, match=r"did not end after 100 pages \(only 3 distinct commits\)"):
        await source_for(fake).commits_in_window("main", START, END)
    assert len(list_requests(fake)) == 100


async def test_history_keeps_what_a_looping_list_gave(fake, source_for, caplog):
    caplog.set_level(logging.WARNING)
    fake.loop_pages(LIST, "self")
    got = await source_for(fake, token="t").history("main", START, END, detail_budget=0)
    assert len(got) == 3 and len(list_requests(fake)) == 1
    assert "loops: using the 3 commits read" in caplog.text


# -- answers of the wrong shape --------------------------------------------------------------------
def edit(change: Callable[[Any], None]) -> Callable[[Any], Any]:
    def apply(data: Any) -> Any:
        change(data)
        return data

    return apply


@pytest.mark.parametrize(
    ("pattern", "change", "said"),
    [
        (LIST, lambda _: ["a", "b"], "[0] is str, not an object"),
        (LIST, lambda items: [{**items[0], "commit": "x"}], "[0].commit is str, not an object"),
        (LIST, lambda items: [{k: v for k, v in items[0].items() if k != "sha"}], "[0].sha is missing"),
        (LIST, lambda items: [{**items[0], "parents": ["abc"]}], "[0].parents[0] is str, not an object"),
        (LIST, edit(lambda items: items[0]["commit"]["committer"].update(date="yesterday")), "not a date"),
        (DETAIL, edit(lambda d: d.update(files=["a.py"])), "files[0] is str, not an object"),
        (DETAIL, edit(lambda d: d.update(files=[{"status": "added"}])), "files[0].filename is missing"),
        (DETAIL, edit(lambda d: d.update(files="a.py")), "files is str, not a list"),
        (DETAIL, edit(lambda d: d.update(stats="x")), "stats is str, not an object"),
        (
            DETAIL,
            edit(lambda d: d["files"][0].update(additions="many")),
            "files[0].additions is str, not int",
        ),
        (
            DETAIL,
            edit(lambda d: d["commit"]["committer"].update(date="yesterday")),
            "'yesterday' is not a date",
        ),
        (DETAIL, edit(lambda d: d.update(author="bob")), "author is str, not an object"),
        (DETAIL, edit(lambda d: d.update(commit="x")), "commit is str, not an object"),
        (DETAIL, lambda _: ["not", "a", "commit"], "not an object"),
    ],
)
async def test_a_wrongly_shaped_answer_is_one_source_error_naming_the_endpoint(
    fake, source_for, pattern, change, said
):
    fake.reshape(pattern, change)
    with pytest.raises(SourceError) as caught:
        await source_for(fake).commits_in_window("main", START, END)
    message = str(caught.value)
    endpoint = "/repos/octo/demo/commits" + ("/" if pattern == DETAIL else " (")
    assert message.startswith(f"GitHub sent an unexpected answer for {endpoint}")
    assert said in message and "\n" not in message


async def test_a_commit_list_of_no_objects_is_never_an_empty_day(fake, source_for):
    fake.reshape(LIST, lambda _: [1, None])
    with pytest.raises(SourceError, match="unexpected answer"):
        await source_for(fake).commits_in_window("main", START, END)


async def test_a_wrongly_shaped_commit_asked_by_sha_is_a_source_error(fake, source_for):
    commit = make_commit("one", START + timedelta(hours=1))
    fake.set_commits([commit])
    fake.reshape(DETAIL, edit(lambda d: d.update(parents=[{"url": "no sha"}])))
    with pytest.raises(SourceError, match=r"commits/[0-9a-f]{40} \(parents\[0\]\.sha is missing\)"):
        await source_for(fake).get_commit(commit["sha"])


# -- an answer that trickles in ---------------------------------------------------------------------
async def test_an_answer_that_trickles_in_times_out_as_a_whole_and_is_retried(fake, source_for, sleeps):
    fake.set_commits([make_commit("one", START + timedelta(hours=1))])
    fake.trickle(DETAIL, seconds=30.0)  # a byte every 0.05 s: no single read waits 0.3 s, the whole 1.2 s
    with pytest.raises(SourceError, match=r"cannot reach GitHub at .*: no complete answer within 1\.2 s"):
        await source_for(fake, timeout=0.3).commits_in_window("main", START, END)
    assert len(detail_requests(fake)) == 4  # retried as any timeout is
    assert sleeps.calls == [1.0, 2.0, 4.0]


# -- absurd rate-limit headers ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "headers",
    [
        {"Retry-After": "99999999999999999999"},
        {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW * 1000))},  # milliseconds
    ],
)
async def test_an_absurd_rate_limit_wait_is_reported_not_a_crash(fake, source_for, sleeps, headers):
    fake.fail_next(403, headers=headers, body={"message": "API rate limit exceeded"})
    with pytest.raises(
        RateLimited, match="asks to wait a day or more, longer than the allowed wait of 300 s"
    ):
        await source_for(fake, token="t").commits_in_window("main", START, END)
    assert sleeps.calls == []


@pytest.mark.parametrize("value", ["soon", "-5", "nan", "inf", "1e400"])
async def test_an_unreadable_retry_after_falls_back_to_githubs_advice(fake, source_for, sleeps, value):
    fake.fail_next(429, headers={"Retry-After": value}, body={"message": "secondary rate limit"})
    got = await source_for(fake).commits_in_window("main", START, END)
    assert len(got) == 3 and sleeps.calls == [60.0]  # a minute, as GitHub advises when it gives no time


async def test_a_fractional_retry_after_is_waited(fake, source_for, sleeps):
    fake.fail_next(429, headers={"Retry-After": "1.5"}, body={"message": "secondary rate limit"})
    assert len(await source_for(fake).commits_in_window("main", START, END)) == 3
    assert sleeps.calls == [1.5]
