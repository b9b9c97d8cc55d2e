"""Slack in Socket Mode, end to end over a WebSocket on 127.0.0.1 (tests/fakes/slack_socket.py) with
the Web API faked by FakeSlack: every envelope acknowledged, an event Slack redelivers or sends as both
`message` and `app_mention` answered once, edits, deletions and bot messages ignored, a reconnect
keeps serving, and an answer Slack refuses is one log line, not a traceback."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qsl

import pytest

from adapters.slack.runtime import SlackRuntime
from bot.delivery.posting import post_digest
from tests.adapters.slack.test_slack_app import (  # noqa: F401  (fixtures)
    CHANNEL,
    _clean_env,
    body_text,
    build_day,
    command_body,
    make_service,
    make_settings,
    slack,
)
from tests.fakes.slack_api import BOT_ID, BOT_USER, FakeSlack
from tests.fakes.slack_socket import FakeSocketMode


@pytest.fixture
async def socket(
    tmp_path,
    slack: FakeSlack,  # noqa: F811
) -> AsyncIterator[tuple[SlackRuntime, FakeSocketMode, str]]:
    """The runtime connected over Socket Mode, with a digest posted: (runtime, socket, thread ts)."""
    settings = make_settings(tmp_path, slack, slack_app_token=slack.app_token, slack_signing_secret=None)
    service = make_service(settings)
    async with FakeSocketMode() as fake_socket:
        slack.socket_url = fake_socket.url
        runtime = SlackRuntime(settings, service, grace=5)
        await runtime.start()
        try:
            await fake_socket.connected()
            digest = await build_day(service)
            result = await post_digest(runtime.poster, service.store, CHANNEL, digest)
            assert result.thread_id
            yield runtime, fake_socket, result.thread_id
        finally:
            await runtime.stop()


async def deliver(runtime: SlackRuntime, socket: FakeSocketMode, *envelopes: dict[str, Any]) -> None:
    """Send envelopes, wait for each acknowledgement, then for the work they started."""
    for envelope in envelopes:
        await socket.ack_for(await socket.send(envelope))
    assert runtime.app is not None
    await runtime.app.bot.tasks.drain(10)


def no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


async def test_a_mention_sent_as_message_app_mention_and_a_retry_is_answered_once(socket, slack, caplog):  # noqa: F811
    runtime, fake_socket, thread = socket
    before = len(slack.thread(CHANNEL, thread))
    asked = slack.add_user_message(CHANNEL, f"<@{BOT_USER}> which commits are riskiest?", thread_ts=thread)
    event = {"user": "UHUMAN1", "text": asked.text, "ts": asked.ts, "thread_ts": thread}
    mention = fake_socket.event({"type": "app_mention", **event})
    await deliver(
        runtime,
        fake_socket,
        fake_socket.event({"type": "message", **event}),
        mention,
        # Slack did not see the ack in time: the same event again, retry_attempt 1
        fake_socket.event(
            {"type": "app_mention", **event}, retry_attempt=1, event_id=mention["payload"]["event_id"]
        ),
    )
    assert len(slack.thread(CHANNEL, thread)) == before + 2  # the question and one answer
    no_traceback(caplog)


async def test_edits_deletions_and_bot_messages_are_acked_and_ignored(socket, slack):  # noqa: F811
    runtime, fake_socket, thread = socket
    before = len(slack.messages)
    edited = {"user": "UHUMAN1", "text": f"<@{BOT_USER}> risks?", "ts": "5.1", "thread_ts": thread}
    await deliver(
        runtime,
        fake_socket,
        fake_socket.event(
            {
                "type": "message",
                "subtype": "message_changed",
                "ts": "5.2",
                "message": edited,
                "previous_message": {},
            }
        ),
        fake_socket.event(
            {"type": "message", "subtype": "message_deleted", "ts": "5.3", "deleted_ts": "5.1"}
        ),
        fake_socket.event(
            {
                "type": "message",
                "subtype": "bot_message",
                "bot_id": "BOTHER",
                "text": "risks?",
                "ts": "5.4",
                "thread_ts": thread,
            }
        ),
        fake_socket.event(
            {
                "type": "message",
                "user": BOT_USER,
                "bot_id": BOT_ID,
                "text": "risks?",
                "ts": "5.5",
                "thread_ts": thread,
            }
        ),
    )
    assert len(slack.messages) == before


async def test_a_thread_that_is_not_ours_stays_silent(socket, slack):  # noqa: F811
    runtime, fake_socket, _ = socket
    foreign = slack.add_user_message("C0OTHER", "a thread elsewhere")
    reply = slack.add_user_message("C0OTHER", "any risks?", thread_ts=foreign.ts)
    event = {
        "type": "message",
        "channel": "C0OTHER",
        "user": "UHUMAN1",
        "text": reply.text,
        "ts": reply.ts,
        "thread_ts": foreign.ts,
    }
    await deliver(runtime, fake_socket, fake_socket.event(event))
    assert slack.thread("C0OTHER", foreign.ts) == [reply]


async def test_after_a_reconnect_the_bot_keeps_answering(socket, slack):  # noqa: F811
    runtime, fake_socket, thread = socket
    await fake_socket.disconnect()
    await fake_socket.connected(count=2)
    assert slack.calls["apps.connections.open"] == 2
    asked = slack.add_user_message(CHANNEL, f"<@{BOT_USER}> risks?", thread_ts=thread)
    before = len(slack.thread(CHANNEL, thread))
    event = {
        "type": "app_mention",
        "user": "UHUMAN1",
        "text": asked.text,
        "ts": asked.ts,
        "thread_ts": thread,
    }
    await deliver(runtime, fake_socket, fake_socket.event(event))
    assert len(slack.thread(CHANNEL, thread)) == before + 1


async def test_a_slash_command_over_the_socket_is_acked_then_answered_privately(socket, slack):  # noqa: F811
    runtime, fake_socket, _ = socket
    payload = dict(parse_qsl(command_body(slack, "list")))
    envelope_id = await fake_socket.send(fake_socket.command(payload))
    await fake_socket.ack_for(envelope_id)
    assert runtime.app is not None
    await runtime.app.bot.tasks.drain(10)
    assert "No subscriptions" in slack.responses[-1]["text"]


@pytest.mark.parametrize("error", ["is_archived", "channel_not_found", "thread_not_found", "not_in_channel"])
async def test_an_answer_slack_refuses_is_one_log_line(socket, slack, caplog, error):  # noqa: F811
    runtime, fake_socket, thread = socket
    asked = slack.add_user_message(CHANNEL, f"<@{BOT_USER}> risks?", thread_ts=thread)
    slack.fail("chat.postMessage", error)
    event = {
        "type": "app_mention",
        "user": "UHUMAN1",
        "text": asked.text,
        "ts": asked.ts,
        "thread_ts": thread,
    }
    caplog.set_level(logging.WARNING)
    await deliver(runtime, fake_socket, fake_socket.event(event))
    assert "could not answer" in caplog.text
    no_traceback(caplog)
    # and the next question is answered
    again = slack.add_user_message(CHANNEL, f"<@{BOT_USER}> risks?", thread_ts=thread)
    await deliver(runtime, fake_socket, fake_socket.event({**event, "ts": again.ts, "text": again.text}))
    assert "risk" in body_text(slack.thread(CHANNEL, thread)[-1]).lower()


@pytest.mark.parametrize("endpoint", ["silent", "refusing"])
async def test_a_socket_mode_endpoint_that_never_connects_fails_the_start_in_time(tmp_path, slack, endpoint):  # noqa: F811
    """slack_sdk retries its WebSocket connect for as long as the client is open: a WebSocket endpoint
    that accepts and never answers (or refuses: WebSockets blocked by a proxy) held the start for ever,
    and `run` with it (no schedule, no Discord). The start now fails in one line after the bound, so the
    service serves the rest and retries Slack with backoff."""
    import asyncio
    import time

    from analysis.errors import ServiceError

    conns: list[asyncio.StreamWriter] = []

    async def accept_and_say_nothing(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conns.append(writer)

    server = await asyncio.start_server(accept_and_say_nothing, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    if endpoint == "refusing":
        server.close()
        await server.wait_closed()
    slack.socket_url = f"ws://127.0.0.1:{port}/link"
    settings = make_settings(tmp_path, slack, slack_app_token=slack.app_token, slack_signing_secret=None)
    runtime = SlackRuntime(settings, make_service(settings), grace=1, connect_timeout=1.5)
    began = time.monotonic()
    try:
        with pytest.raises(ServiceError, match=r"Socket Mode WebSocket did not connect within 1.5 s"):
            await asyncio.wait_for(runtime.start(), 30)
    finally:
        server.close()
        for writer in conns:
            writer.close()
    assert time.monotonic() - began < 10
    assert runtime._socket is None and runtime._session is None  # stopped: nothing left retrying behind


async def test_a_revoked_app_token_fails_the_start_as_a_setting(tmp_path, slack):  # noqa: F811
    """slack_sdk retries apps.connections.open's refusal for as long as the client is open, so a revoked
    or wrong SLACK_APP_TOKEN read as an outage: retried with backoff for ever, /healthz 200. The refusal
    is a ConfigError now, which ends `run` with the line that names the setting."""
    import asyncio

    from analysis.errors import ConfigError

    settings = make_settings(tmp_path, slack, slack_app_token="xapp-1-revoked", slack_signing_secret=None)
    runtime = SlackRuntime(settings, make_service(settings), grace=1, connect_timeout=5)
    with pytest.raises(ConfigError, match=r"refused Socket Mode \(invalid_auth\): check SLACK_APP_TOKEN"):
        await asyncio.wait_for(runtime.start(), 30)
    assert slack.calls["apps.connections.open"] == 1
    assert runtime._socket is None and runtime._session is None


async def test_a_question_waiting_for_the_model_at_stop_is_answered_from_the_data(tmp_path, slack):  # noqa: F811
    """The shutdown's grace (30 s) is shorter than QA_ANSWER_TIMEOUT (60 s): a question still waiting for
    the model when `run` stopped was cancelled at the grace's end, unanswered and unlogged. Now the answers
    still waiting stop waiting shortly before the end and post the data's answer, saying why."""
    import asyncio

    from tests.fakes.openai_server import FakeLLM

    with FakeLLM() as llm:
        llm.delay(120, purpose="qa", times=None)  # a model that does not answer in time
        settings = make_settings(
            tmp_path,
            slack,
            slack_app_token=slack.app_token,
            slack_signing_secret=None,
            digest_model=llm.model,
            openai_base_url=llm.base_url,
            openai_api_key="sk-test-000000",
        )
        service = make_service(settings)
        async with FakeSocketMode() as fake_socket:
            slack.socket_url = fake_socket.url
            runtime = SlackRuntime(settings, service, grace=2)
            await runtime.start()
            stopped = False
            try:
                await fake_socket.connected()
                digest = await build_day(service)
                thread = (await post_digest(runtime.poster, service.store, CHANNEL, digest)).thread_id
                question = f"<@{BOT_USER}> so what should the on-call person expect tonight?"
                asked = slack.add_user_message(CHANNEL, question, thread_ts=thread)
                event = {"user": "UHUMAN1", "text": asked.text, "ts": asked.ts, "thread_ts": thread}
                await fake_socket.ack_for(
                    await fake_socket.send(fake_socket.event({"type": "app_mention", **event}))
                )
                for _ in range(100):  # until the answer waits for the model
                    if llm.calls:
                        break
                    await asyncio.sleep(0.05)
                assert llm.calls == 1
                await runtime.stop()
                stopped = True
            finally:
                if not stopped:
                    await runtime.stop()
    last = body_text(slack.thread(CHANNEL, thread)[-1])
    assert "No model answer (the bot is restarting)" in last and "From the stored data" in last
