"""A thread question is answered once, whatever Slack does around it, against the fake Slack on 127.0.0.1:
the same event delivered again after a restart (its in-memory dedupe gone), a multi-part answer whose part
Slack took but answered 500 or dropped, and a flood of questions acked before any digest is loaded."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time

import pytest

import adapters.slack.thread_answers
from adapters.slack.runtime import build_app
from analysis.render.slack_blocks import text_messages
from bot.store.db import Store
from tests.adapters.slack.test_slack_app import (  # noqa: F401  (fixtures)
    CHANNEL,
    _clean_env,
    make_service,
    make_settings,
    posted_day,
    send_event,
    settings,
    slack,
)
from tests.fakes.slack_api import BOT_USER, FakeSlack, Fault, Message


def _answers(fake: FakeSlack, thread: str, after: str) -> list[Message]:
    return [m for m in fake.thread(CHANNEL, thread) if m.bot_id and float(m.ts) > float(after)]


async def delivered(app, event: dict) -> None:
    """The event sent to the app, its answer's work done, and the app's work closed (as a process ends)."""
    try:
        await send_event(app, event)
        await app.bot.tasks.drain(10)
    finally:
        await app.bot.tasks.close(5)


@pytest.mark.parametrize("kind", ["message", "app_mention"])
async def test_a_question_delivered_again_after_a_restart_is_answered_once(settings, slack, kind):  # noqa: F811
    service = make_service(settings)
    first = build_app(settings, service)
    _, thread = await posted_day(first, service)
    text = "Which commits carry the most risk?"
    if kind == "app_mention":
        text = f"<@{BOT_USER}> {text}"
    question = slack.add_user_message(CHANNEL, text, thread_ts=thread)
    event = {"type": kind, "user": "UHUMAN1", "text": question.text, "ts": question.ts, "thread_ts": thread}
    await delivered(first, event)
    assert len(_answers(slack, thread, question.ts)) == 1
    again = build_app(settings, make_service(settings))  # a restart: a new process, the same database
    await delivered(again, event)  # Slack's retry of the same event
    assert len(_answers(slack, thread, question.ts)) == 1


async def test_a_question_whose_answer_failed_may_be_answered_by_a_later_delivery(settings, slack):  # noqa: F811
    service = make_service(settings)
    app = build_app(settings, service)
    _, thread = await posted_day(app, service)
    question = slack.add_user_message(CHANNEL, "Which commits carry the most risk?", thread_ts=thread)
    event = {
        "type": "message",
        "user": "UHUMAN1",
        "text": question.text,
        "ts": question.ts,
        "thread_ts": thread,
    }
    slack.fail("chat.postMessage", error="is_archived", times=2)
    await delivered(app, event)
    assert _answers(slack, thread, question.ts) == []
    slack.clear_faults()
    again = build_app(settings, make_service(settings))
    await delivered(again, event)
    assert len(_answers(slack, thread, question.ts)) == 1


def _long_answer(answer) -> list:
    """An answer long enough for several messages."""
    return text_messages("\n\n".join(f"Paragraph {i}: " + "the scheduler work " * 18 for i in range(60)))


@pytest.mark.parametrize("fault", ["500", "drop"])
@pytest.mark.parametrize("part", [0, 1])
async def test_a_part_slack_took_but_did_not_confirm_is_not_lost_nor_posted_twice(
    settings,  # noqa: F811
    slack,  # noqa: F811
    monkeypatch,
    caplog,
    fault,
    part,
):
    monkeypatch.setattr(adapters.slack.thread_answers, "slack_messages", _long_answer)
    service = make_service(settings)
    app = build_app(settings, service)
    _, thread = await posted_day(app, service)
    parts = _long_answer(None)
    assert len(parts) >= 3
    question = slack.add_user_message(CHANNEL, "What is the theme of the day?", thread_ts=thread)
    event = {"type": "message", "user": "UHUMAN1", "text": question.text, "ts": question.ts}
    target = parts[part]["text"]
    slack._queue(  # the chosen part is taken, then answered 500 or its connection dropped
        "chat.postMessage",
        1,
        Fault(
            500 if fault == "500" else 0,
            "internal_error" if fault == "500" else None,
            accepted=True,
            when=lambda args: args.get("text") == target,
        ),
    )
    try:
        with caplog.at_level(logging.INFO):
            await send_event(app, {**event, "thread_ts": thread})
            await app.bot.tasks.drain(10)
    finally:
        await app.bot.tasks.close(5)
    posted = [m.text for m in _answers(slack, thread, question.ts)]
    assert posted == [p["text"] for p in parts]  # every part, once, in order
    assert not any("could not answer" in r.getMessage() for r in caplog.records)


async def test_questions_are_acked_before_their_digest_is_loaded_off_the_event_loop(settings, slack):  # noqa: F811
    """Loading a big digest for each of many questions at once held the event loop, so Slack's acks came
    past 3 s: the listener only claims and spawns, the load runs in a worker thread."""
    service = make_service(settings)
    app = build_app(settings, service)
    _, thread = await posted_day(app, service)
    load, loaders = service.thread_context, []

    def slow_load(*args, **kwargs):  # a digest of hundreds of commits
        loaders.append(threading.current_thread())
        time.sleep(0.3)
        return load(*args, **kwargs)

    service.thread_context = slow_load
    questions = [
        slack.add_user_message(CHANNEL, f"Which commits are risky? ({i})", thread_ts=thread) for i in range(5)
    ]
    worst, beats = 0.0, asyncio.Event()

    async def heartbeat() -> None:
        nonlocal worst
        loop = asyncio.get_running_loop()
        while not beats.is_set():
            start = loop.time()
            await asyncio.sleep(0.01)
            worst = max(worst, loop.time() - start)

    ticker = asyncio.create_task(heartbeat())
    started = time.monotonic()
    try:
        for q in questions:
            await send_event(
                app, {"type": "message", "user": "UHUMAN1", "text": q.text, "ts": q.ts, "thread_ts": thread}
            )
        acked = time.monotonic() - started
        await app.bot.tasks.drain(10)
    finally:
        beats.set()
        await ticker
        await app.bot.tasks.close(5)
    assert acked < 0.5  # five acks, not five loads
    assert worst < 0.25  # the loop kept turning while the digests loaded
    assert len(loaders) == 5 and threading.main_thread() not in loaders
    assert all(len(_answers(slack, thread, q.ts)) >= 1 for q in questions)


async def test_a_busy_database_does_not_hold_the_loop_for_the_answered_record(settings, slack):  # noqa: F811
    """Another process in a long write: recording the question as answered waited SQLite's 30 s busy
    timeout holding the store's connection, and the loop's own reads waited with it."""
    service = make_service(settings)
    app = build_app(settings, service)
    _, thread = await posted_day(app, service)
    question = slack.add_user_message(CHANNEL, "what does #101 change?", thread_ts=thread)
    other = sqlite3.connect(service.store.path, timeout=0)
    other.execute("BEGIN IMMEDIATE")  # another digestbot process in a write transaction
    try:
        began = time.monotonic()
        event = {"type": "message", "user": "UHUMAN1", "text": question.text, "ts": question.ts}
        await send_event(app, {**event, "thread_ts": thread})
        await app.bot.tasks.drain(10)
        took = time.monotonic() - began
    finally:
        other.rollback()
        other.close()
        await app.bot.tasks.close(5)
    assert took < 3
    assert len(_answers(slack, thread, question.ts)) == 1  # answered all the same


def test_a_claim_left_by_a_stopped_run_lapses_and_an_answered_one_never_does(tmp_path):
    store = Store(tmp_path / "d.db")
    assert store.begin_answer("slack", CHANNEL, "1.1")
    assert not store.begin_answer("slack", CHANNEL, "1.1")  # being answered
    assert store.begin_answer("slack", CHANNEL, "1.1", stale_after=0)  # its answerer stopped: lapsed
    store.end_answer("slack", CHANNEL, "1.1", answered=True)
    assert not store.begin_answer("slack", CHANNEL, "1.1", stale_after=0)
    assert store.begin_answer("slack", "C0OTHER", "1.1")  # a message is known by its channel and ts
    store.end_answer("slack", "C0OTHER", "1.1", answered=False)  # failed: a later delivery may try
    assert store.begin_answer("slack", "C0OTHER", "1.1")
