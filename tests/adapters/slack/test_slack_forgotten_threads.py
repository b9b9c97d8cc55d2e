"""A reply in an old digest thread after the database was wiped (or on another host): the store has no record
of the post, but the parent message's metadata (set by the poster) names the digest. The asker hears which day
it is and to ask `/digest <sha>`, once, instead of silence; the parent is read once per thread."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.slack.runtime import build_app
from bot.app import chat_service
from bot.digest.analyzers import HeuristicAnalyzer
from bot.store.db import Store
from tests.adapters.slack.test_slack_app import (  # noqa: F401  (fixtures)
    BOT_USER,
    CHANNEL,
    _clean_env,
    ask_in_thread,
    body_text,
    make_settings,
    send_command,
    send_event,
    slack,
)
from tests.adapters.slack.test_slack_lost_commits import REPO, github, posted  # noqa: F401  (fixtures)

NOTICE = "This thread is the digest of octo/demo for 2026-01-26, which my database no longer holds"


@pytest.fixture
async def wiped(posted, tmp_path, slack, github):  # noqa: F811
    """(app, thread, parent reads): the digest posted by `posted`, then a service on an empty database."""
    _, _, thread = posted
    settings = make_settings(
        tmp_path,
        slack,
        github_api_url=github.base_url,
        digest_repo=REPO,
        digest_tz="UTC",
        digest_db=tmp_path / "new.db",
    )
    service = chat_service(settings, Store(settings.digest_db), analyzer=HeuristicAnalyzer())
    app = build_app(settings, service)
    reads: list[str] = []

    def count(method: str, args: dict[str, Any]) -> None:
        if method == "conversations.replies" and str(args.get("limit")) == "1":
            reads.append(str(args.get("ts")))

    slack.on_call = count
    yield app, thread, reads
    slack.on_call = None
    await app.bot.tasks.close(5)


async def test_a_reply_in_a_forgotten_digest_thread_gets_the_notice_once(wiped, slack):  # noqa: F811
    app, thread, reads = wiped
    before = len(slack.thread(CHANNEL, thread))
    question = slack.add_user_message(CHANNEL, "Which commits are the riskiest?", thread_ts=thread)
    event = {
        "type": "message",
        "user": "UHUMAN1",
        "text": question.text,
        "ts": question.ts,
        "thread_ts": thread,
    }
    await send_event(app, event)
    await send_event(app, event)  # Slack delivers it again
    await app.bot.tasks.drain(10)
    replies = slack.thread(CHANNEL, thread)
    assert len(replies) == before + 2  # the question and one answer
    notice = body_text(replies[-1])
    assert notice.startswith(NOTICE) and "/digest &lt;sha&gt;" in notice and "/digest 2026-01-26" in notice
    assert "don't know which digest" not in notice
    again = await ask_in_thread(app, slack, thread, "what changed in the scheduler?")
    assert again.startswith(NOTICE)
    assert reads == [thread]  # the parent read once for the thread, then remembered


async def test_the_day_posted_again_after_the_notice_answers_from_the_data(wiped, slack):  # noqa: F811
    app, thread, _ = wiped
    assert (await ask_in_thread(app, slack, thread, "Which commits are the riskiest?")).startswith(NOTICE)
    posted_before = len(slack.messages)
    await send_command(app, slack, "2026-01-26")  # what the notice suggests
    await app.bot.tasks.drain(10)
    assert len(slack.messages) == posted_before  # found in the channel by its metadata: nothing twice
    assert "Rewrite the scheduler" in await ask_in_thread(
        app, slack, thread, "Which commits are the riskiest?"
    )


async def test_threads_not_ours_stay_silent_and_a_mention_is_told_what_to_ask(wiped, slack):  # noqa: F811
    app, _, _ = wiped
    foreign = slack.add_user_message(CHANNEL, "lunch?")
    await send_event(
        app, {"type": "message", "user": "UHUMAN1", "text": "where to?", "ts": "9.1", "thread_ts": foreign.ts}
    )
    await app.bot.tasks.drain(10)
    assert slack.thread(CHANNEL, foreign.ts) == []
    mention = {"user": "UHUMAN1", "text": f"<@{BOT_USER}> risks?", "ts": "9.2", "thread_ts": foreign.ts}
    await send_event(app, {"type": "app_mention", **mention})
    await app.bot.tasks.drain(10)
    [reply] = slack.thread(CHANNEL, foreign.ts)
    assert "don't know which digest" in body_text(reply)


async def test_a_forgotten_card_thread_is_answered_from_the_commit_fetched_again(posted, wiped, slack):  # noqa: F811
    _, service, _ = posted
    app, _, _ = wiped
    sha = service.store.query("SELECT sha FROM commits WHERE message LIKE '[CI]%'")[0]["sha"]
    old = build_app(service.settings, service)  # the card posted by the first host, before the wipe
    await send_command(old, slack, sha[:10])
    await old.bot.tasks.drain(10)
    await old.bot.tasks.close(5)
    card = slack.channel_messages(CHANNEL)[-1]
    answer = await ask_in_thread(app, slack, card.ts, "what does it change?")
    assert "[CI] Tweak (#8)" in answer and "changes 1 file" in answer
