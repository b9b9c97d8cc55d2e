"""A question in a digest's (or a card's) thread after the store lost its commit rows (deleted by hand, a
database restored without them). The post and the digest's record say which day it is: the commits are
fetched again from GitHub (the fake on 127.0.0.1) and the question is answered; a thread whose commits
cannot be fetched, or whose digest record is gone, hears which digest it is and what to ask for, never
"I don't know which digest this thread belongs to" (nor, for a plain question, silence)."""

from __future__ import annotations

from datetime import date

import pytest

from adapters.slack.runtime import build_app
from bot.app import chat_service
from bot.delivery.posting import post_digest
from bot.digest.analyzers import HeuristicAnalyzer
from bot.store.db import Store
from tests.adapters.slack.test_slack_app import (  # noqa: F401  (fixtures)
    CHANNEL,
    _clean_env,
    ask_in_thread,
    body_text,
    make_settings,
    send_command,
    slack,
)
from tests.fakes.github import FakeGitHub, make_file
from tests.fakes.github import make_commit as api_commit

REPO = "octo/demo"
DAY = date(2026, 1, 26)


@pytest.fixture
def github():
    commits = [
        api_commit(
            "[Core] Rewrite the scheduler (#7)",
            "2026-01-26T03:00:00Z",
            files=[make_file(f"src/core/m{i}.py", status="modified", additions=300) for i in range(4)],
            repo=REPO,
        ),
        api_commit("[CI] Tweak (#8)", "2026-01-26T05:00:00Z", files=[make_file(".github/ci.yml")], repo=REPO),
    ]
    with FakeGitHub(REPO, commits) as gh:
        yield gh


@pytest.fixture
async def posted(tmp_path, slack, github):  # noqa: F811
    """(app, service, thread) with the day's digest posted in CHANNEL."""
    settings = make_settings(
        tmp_path, slack, github_api_url=github.base_url, digest_repo=REPO, digest_tz="UTC"
    )
    service = chat_service(settings, Store(settings.digest_db), analyzer=HeuristicAnalyzer())
    app = build_app(settings, service)
    digest = await service.day_digest(REPO, DAY, "en", "UTC")
    result = await post_digest(app.bot.poster, service.store, CHANNEL, digest)
    assert result.thread_id
    yield app, service, result.thread_id
    await app.bot.tasks.close(5)


async def test_a_digest_thread_whose_commits_were_deleted_is_answered_again(posted, github, slack):  # noqa: F811
    app, service, thread = posted
    before = await ask_in_thread(app, slack, thread, "Which commits are the riskiest?")
    service.store.db.execute("DELETE FROM commits")
    requests = github.requests
    after = await ask_in_thread(app, slack, thread, "Which commits are the riskiest?")
    assert after == before and "Rewrite the scheduler" in after  # a plain question: answered, not silence
    assert github.requests - requests == 2  # the two commits' details, nothing else
    assert len(service.store.query("SELECT sha FROM commits")) == 2  # stored again
    again = github.requests
    await ask_in_thread(app, slack, thread, "Which commits are the riskiest?")
    assert github.requests == again  # the next question needs no fetch


async def test_commits_that_cannot_be_fetched_again_are_named_with_what_to_do(posted, github, slack):  # noqa: F811
    app, service, thread = posted
    service.store.db.execute("DELETE FROM commits")
    github.fail_next(404, count=10)  # gone from the repository (a force-push), or the repository itself
    answer = await ask_in_thread(app, slack, thread, "Which commits are the riskiest?")
    assert "don't know which digest" not in answer
    assert answer.startswith("This thread is the digest of octo/demo for 2026-01-26, but 2 of its commits")
    assert "Ask /digest 2026-01-26 octo/demo in the channel" in answer


async def test_a_thread_whose_digest_record_was_deleted_says_so_and_is_rebuilt_by_digest_day(
    posted,
    slack,  # noqa: F811
):
    app, service, thread = posted
    service.store.db.execute("DELETE FROM digests")
    answer = await ask_in_thread(app, slack, thread, "Which commits are the riskiest?")
    assert answer.startswith(
        "This thread is the digest of octo/demo for 2026-01-26, but that digest's record"
    )
    await send_command(app, slack, "2026-01-26")  # what the answer says to do
    await app.bot.tasks.drain(10)
    assert slack.responses[-1]["text"] == "That digest is already in this channel; nothing was missing."
    assert "Rewrite the scheduler" in await ask_in_thread(
        app, slack, thread, "Which commits are the riskiest?"
    )


async def test_a_card_thread_whose_commit_was_deleted_is_answered_again(posted, slack):  # noqa: F811
    app, service, _ = posted
    sha = service.store.query("SELECT sha FROM commits WHERE message LIKE '[CI]%'")[0]["sha"]
    await send_command(app, slack, sha[:10])
    await app.bot.tasks.drain(10)
    card = slack.channel_messages(CHANNEL)[-1]
    service.store.db.execute("DELETE FROM commits")
    answer = await ask_in_thread(app, slack, card.ts, "what does it change?")
    assert "[CI] Tweak (#8)" in answer and "changes 1 file" in answer
    assert "don't know which digest" not in body_text(slack.thread(CHANNEL, card.ts)[-1])
