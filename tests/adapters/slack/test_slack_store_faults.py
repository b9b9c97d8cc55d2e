"""The database turning read-only under the running service (a remount, a full volume's permissions, a
backup tool's lock), against the fake Slack on 127.0.0.1. SQLite is made read-only through the live
connection (PRAGMA query_only), as an operator's change would make it mid-day."""

from __future__ import annotations

import logging

from analysis.models import Importance
from tests.adapters.slack.test_slack_app import (  # noqa: F401  (fixtures)
    CHANNEL,
    _clean_env,
    app,
    body_text,
    build_day,
    posted_day,
    send_command,
    send_event,
    service,
    settings,
    slack,
)


def read_only(store) -> None:
    store.db.execute("PRAGMA query_only = 1")


async def ask(app, slack, thread: str, text: str):  # noqa: F811
    question = slack.add_user_message(CHANNEL, text, thread_ts=thread)
    event = {"type": "message", "user": "UHUMAN1", "text": text, "ts": question.ts, "thread_ts": thread}
    await send_event(app, event)
    await app.bot.tasks.drain(10)
    return [m for m in slack.thread(CHANNEL, thread) if m.ts > question.ts]


async def test_a_read_only_database_still_answers_thread_questions(app, service, slack, caplog):  # noqa: F811
    digest, thread = await posted_day(app, service)
    high = digest.by_importance(Importance.HIGH)[0]
    read_only(service.store)
    with caplog.at_level(logging.WARNING):
        [about] = await ask(app, slack, thread, f"what does {high.short_sha} change?")  # sets the focus
        [riskiest] = await ask(app, slack, thread, "Which commits are the riskiest?")  # sets the list
    assert high.short_sha in body_text(about) and "Commits carrying the most risk" in body_text(riskiest)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert [w.split(":")[0] for w in warnings] == ["qa", "qa"]
    assert all(f"database {service.store.path} is read-only" in w for w in warnings)
    assert not any(r.exc_info for r in caplog.records)


async def test_a_card_on_a_read_only_database_is_refused_in_one_clear_line(app, service, slack, caplog):  # noqa: F811
    digest = await build_day(service)
    service.store.db.execute("DELETE FROM analyses")  # the card must be analysed (and saved) again
    read_only(service.store)
    with caplog.at_level(logging.WARNING):
        await send_command(app, slack, digest.commits[0].short_sha)
        await app.bot.tasks.drain(10)
    assert slack.messages == []
    [reply] = [r["text"] for r in slack.responses]
    assert (
        reply
        == "I can't write my database right now, so this was not done; my operator can see why in the service log."
    )
    [warning] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert warning.getMessage().startswith(f"/digest card: database {service.store.path} is read-only")
    assert warning.exc_info is None


async def test_an_answer_that_fails_unexpectedly_says_so_in_the_thread(app, service, slack, monkeypatch):  # noqa: F811
    _, thread = await posted_day(app, service)

    async def broken(ctx, question):
        raise RuntimeError("a bug")

    monkeypatch.setattr(service, "answer", broken)
    [reply] = await ask(app, slack, thread, "Which commits are the riskiest?")
    text = body_text(reply)  # in words: the class and its text are the log's, not the thread's
    assert (
        text.startswith("Something failed on my side") and "RuntimeError" not in text and "a bug" not in text
    )
    assert reply.thread_ts == thread
