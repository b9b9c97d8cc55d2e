"""A thread question acknowledged and then lost to a crash is answered after the restart, once: `digestbot run`
as a real subprocess, killed (kill -9) after it claimed the question and before it posted the answer, or
after Slack took the answer and before it was marked; then the service started again against the same
database and the fake Slack on 127.0.0.1. Two services starting at once answer it once; a question asked
too long ago is dropped, not answered late."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import httpx

from adapters.slack.runtime import SlackRuntime
from adapters.slack.thread_answers import question_of
from bot.chat.pending import Claimant, record_of
from bot.store.db import Store
from tests.adapters.slack.test_slack_app import (  # noqa: F401  (fixtures)
    CHANNEL,
    REPO,
    SECRET,
    TZ,
    _clean_env,
    build_app,
    event_body,
    make_service,
    make_settings,
    posted_day,
    send_event,
    settings,
    signed_headers,
    slack,
)
from tests.bot.monitoring.test_metrics import free_port
from tests.bot.store.test_pending_questions import claim_state, dead_pid, settled
from tests.fakes.slack_api import FakeSlack, Message, eventually

ROOT = Path(__file__).resolve().parents[3]
QUESTION = "Which commits carry the most risk?"


def answers(fake: FakeSlack, thread: str, question: str) -> list[Message]:
    """Our messages in the thread that answer `question` (their metadata names it)."""
    return [
        m
        for m in fake.thread(CHANNEL, thread)
        if (m.metadata or {}).get("event_payload", {}).get("key") == f"answer:{question}"
    ]


def service_process(tmp_path: Path, fake: FakeSlack, db: Path, port: int) -> subprocess.Popen[str]:
    """`digestbot run` in HTTP mode on `port`, with no subscriptions: it answers thread questions."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "SLACK_BOT_TOKEN": fake.token,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": fake.api_url,
        "SLACK_PORT": str(port),
        "DIGEST_REPO": REPO,
        "DIGEST_TZ": TZ,
        "DIGEST_LANG": "en",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "--db", str(db), "run", "--allow-empty"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def ask_process(port: int, event: dict, child: subprocess.Popen[str]) -> None:
    """Deliver the event to the service over HTTP as Slack does, once it listens."""
    deadline = time.monotonic() + 60
    while True:
        assert child.poll() is None, child.stderr.read() if child.stderr else ""
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "the service did not start"
        time.sleep(0.1)
    body = event_body(event)
    response = httpx.post(
        f"http://127.0.0.1:{port}/slack/events",
        content=body,
        headers=signed_headers(body, "application/json"),
        timeout=10,
    )
    assert response.status_code == 200  # acknowledged: Slack will not send it again


def killed_while_answering(tmp_path: Path, fake: FakeSlack, db: Path, event: dict, at: str) -> None:
    """The service killed (kill -9) the moment its answer reaches `at`: "history" (the thread read for
    context, after the claim, before any part is posted) or "post" (Slack takes the first part, the
    service never hears so and never marks the question answered)."""
    port = free_port()
    child: list[subprocess.Popen[str]] = []

    def kill(method: str, args: dict) -> None:
        hit = (
            method == "conversations.replies"
            if at == "history"
            else (method == "chat.postMessage" and "answer:" in str(args.get("metadata")))
        )
        if hit and child:
            os.kill(child[0].pid, signal.SIGKILL)
            fake.on_call = None

    fake.on_call = kill
    child.append(service_process(tmp_path, fake, db, port))
    try:
        ask_process(port, event, child[0])
        assert child[0].wait(60) == -signal.SIGKILL
    finally:
        fake.on_call = None
        if child[0].poll() is None:
            child[0].kill()
            child[0].wait()


async def restarted(config) -> SlackRuntime:
    """The service started again (Slack's side of `run`): it answers what the dead one left."""
    runtime = SlackRuntime(config, make_service(config), host="127.0.0.1", port=0)
    await runtime.start()
    return runtime


async def question_in_a_thread(config, fake: FakeSlack) -> tuple[str, dict]:
    """A day posted in the channel and a question asked in its thread: (thread, the message event)."""
    service = make_service(config)
    app = build_app(config, service)
    try:
        _, thread = await posted_day(app, service)
    finally:
        await app.bot.tasks.close(5)
        service.store.close()
    question = fake.add_user_message(CHANNEL, QUESTION, thread_ts=thread)
    event = {"type": "message", "channel": CHANNEL, "user": "UHUMAN1", "text": QUESTION, "ts": question.ts}
    event["thread_ts"] = thread
    return thread, event


async def test_a_question_claimed_by_a_killed_service_is_answered_once_by_the_restart(
    settings,  # noqa: F811
    slack,  # noqa: F811
    tmp_path,
):
    thread, event = await question_in_a_thread(settings, slack)
    await asyncio.to_thread(killed_while_answering, tmp_path, slack, settings.digest_db, event, "history")
    assert answers(slack, thread, event["ts"]) == []  # acknowledged, claimed, never answered
    assert claim_state(settings.digest_db, event["ts"]) == "answering"
    await settled(await restarted(settings), settings.digest_db, event["ts"])
    [answer] = answers(slack, thread, event["ts"])
    assert "Rewrite the scheduler" in str(answer.blocks)  # the question's answer, from the thread's digest
    runtime = await restarted(settings)  # and a later start leaves it be
    await asyncio.sleep(0.5)
    await runtime.stop()
    assert len(answers(slack, thread, event["ts"])) == 1


async def test_an_answer_posted_but_not_marked_before_the_kill_is_not_posted_again(
    settings,  # noqa: F811
    slack,  # noqa: F811
    tmp_path,
    caplog,
):
    thread, event = await question_in_a_thread(settings, slack)
    await asyncio.to_thread(killed_while_answering, tmp_path, slack, settings.digest_db, event, "post")
    assert len(answers(slack, thread, event["ts"])) == 1  # Slack has it; the store does not know
    assert claim_state(settings.digest_db, event["ts"]) == "answering"
    with caplog.at_level(logging.INFO):
        await settled(await restarted(settings), settings.digest_db, event["ts"])
    assert len(answers(slack, thread, event["ts"])) == 1
    assert "was answered before its process stopped: not again" in caplog.text


def plant_claim(config, event: dict, asked_ago: timedelta = timedelta(0)) -> None:
    """The claim a killed process leaves (its pid gone), as the subprocess tests leave it."""
    question = question_of(event, mentioned=False)
    question = replace(question, asked_at=question.asked_at - asked_ago)
    store = Store(config.digest_db)
    claimant = Claimant(pid=dead_pid())
    assert store.begin_answer("slack", CHANNEL, event["ts"], record=record_of(question, claimant))
    store.close()


async def test_two_services_starting_at_once_answer_a_left_question_once(settings, slack):  # noqa: F811
    thread, event = await question_in_a_thread(settings, slack)
    plant_claim(settings, event)
    first = SlackRuntime(settings, make_service(settings), host="127.0.0.1", port=0)
    second = SlackRuntime(settings, make_service(settings), host="127.0.0.1", port=0)
    second.service.claimant = Claimant(pid=os.getppid())  # another process: its own pid, running
    try:
        await asyncio.gather(first.start(), second.start())
        await eventually(lambda: claim_state(settings.digest_db, event["ts"]) == "answered", timeout=20)
        await asyncio.sleep(0.5)  # a second answer, were one coming, would be posted by now
    finally:
        await asyncio.gather(first.stop(), second.stop())
    assert len(answers(slack, thread, event["ts"])) == 1


async def test_a_question_left_too_long_ago_is_dropped_not_answered(settings, slack, caplog):  # noqa: F811
    thread, event = await question_in_a_thread(settings, slack)
    plant_claim(settings, event, asked_ago=timedelta(hours=3))
    with caplog.at_level(logging.INFO):
        await settled(await restarted(settings), settings.digest_db, event["ts"], "dropped")
    assert answers(slack, thread, event["ts"]) == []
    assert f"slack:{CHANNEL} message {event['ts']}" in caplog.text and "too old to answer now" in caplog.text
    assert QUESTION not in caplog.text  # the person's words stay in the thread


async def test_a_service_stopped_mid_answer_leaves_the_question_to_the_next_start(settings, slack):  # noqa: F811
    """A deploy: the answer still waiting when the grace ran out is cancelled; its claim stays, and the
    next start answers it (a failed post, by contrast, frees the claim for a later delivery)."""
    thread, event = await question_in_a_thread(settings, slack)
    service = make_service(settings)
    held = asyncio.Event()

    async def stuck(ctx, question):  # the model, never answering before the grace ends
        held.set()
        await asyncio.sleep(3600)

    service.answer = stuck
    runtime = SlackRuntime(settings, service, host="127.0.0.1", port=0, grace=0.2)
    await runtime.start()
    try:
        assert runtime.app is not None
        await send_event(runtime.app, event)
        await asyncio.wait_for(held.wait(), 10)
    finally:
        await runtime.stop()
    assert answers(slack, thread, event["ts"]) == []
    assert claim_state(settings.digest_db, event["ts"]) == "answering"
    await settled(await restarted(settings), settings.digest_db, event["ts"])
    assert len(answers(slack, thread, event["ts"])) == 1
