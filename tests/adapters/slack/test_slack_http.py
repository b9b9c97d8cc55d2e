"""Slack HTTP mode's front door over real HTTP: authenticate before parsing, bounded read times,
no replays, Slack's event retries taken once."""

from __future__ import annotations

import asyncio
import logging
import time

import aiohttp
import pytest

import adapters.slack.front_door
from adapters.slack.front_door import FRONT_DOOR
from adapters.slack.runtime import SlackRuntime
from tests.adapters.slack.test_slack_app import (  # noqa: F401  (fixtures)
    _clean_env,
    command_body,
    event_body,
    make_service,
    make_settings,
    signed_headers,
    slack,
)

FORM = "application/x-www-form-urlencoded"


@pytest.fixture
async def runtime(tmp_path, slack, monkeypatch):  # noqa: F811
    monkeypatch.setattr(adapters.slack.front_door, "BODY_TIMEOUT", 0.5)
    monkeypatch.setattr(adapters.slack.front_door, "HEADER_TIMEOUT", 0.5)
    settings = make_settings(tmp_path, slack)
    rt = SlackRuntime(settings, make_service(settings), host="127.0.0.1", port=0)
    await rt.start()
    yield rt
    await rt.stop()


def url(rt: SlackRuntime) -> str:
    return f"http://127.0.0.1:{rt.http_port}/slack/events"


async def post(rt: SlackRuntime, body: str, headers: dict[str, str]) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.post(url(rt), data=body, headers=headers) as r:
        return r.status, await r.text()


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        ("{not json", {"content-type": "application/json"}),
        ("{not json", {"content-type": "application/json", "x-slack-request-timestamp": "soon",
                       "x-slack-signature": "v0=00"}),
        ("payload=%7Bbroken", {"content-type": FORM, "x-slack-request-timestamp": "9" * 5000,
                               "x-slack-signature": "v0=00"}),
        ("a=1", {"content-type": FORM, "x-slack-request-timestamp": "１２３", "x-slack-signature": "v0=00"}),
    ],
)  # fmt: skip
async def test_unsigned_or_malformed_requests_get_401_without_a_traceback(runtime, caplog, body, headers):
    caplog.set_level(logging.DEBUG)
    status, _ = await post(runtime, body, headers)
    assert status == 401
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


async def test_a_signed_but_malformed_body_is_a_400_not_a_500(runtime, caplog):
    body = "{not json"
    status, _ = await post(runtime, body, signed_headers(body, "application/json"))
    assert status == 400
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_replayed_slash_command_is_refused(runtime, slack):  # noqa: F811
    body = command_body(slack, "help")
    headers = signed_headers(body, FORM)
    first = await post(runtime, body, headers)
    again = await post(runtime, body, headers)
    assert first[0] == 200 and "/digest" in first[1]
    assert again[0] == 401 and "/digest" not in again[1]


async def test_an_event_slack_retries_is_taken_once(runtime, monkeypatch):
    dispatched = []
    door = runtime._runner.app[FRONT_DOOR]
    real = door.app.async_dispatch

    async def counting(request):
        dispatched.append(request.body)
        return await real(request)

    monkeypatch.setattr(door.app, "async_dispatch", counting)
    body = event_body({"type": "message", "user": "UHUMAN1", "text": "hello", "ts": "9.1"})
    now = int(time.time())
    first = await post(runtime, body, signed_headers(body, "application/json", ts=now - 2))
    # Slack's retry: the same event, signed afresh, with X-Slack-Retry-Num.
    retry = {**signed_headers(body, "application/json", ts=now), "X-Slack-Retry-Num": "1",
             "X-Slack-Retry-Reason": "http_timeout"}  # fmt: skip
    second = await post(runtime, body, retry)
    assert first[0] == 200 and second[0] == 200
    assert len(dispatched) == 1


async def _raw(rt: SlackRuntime, data: bytes) -> tuple[bytes, float]:
    """Send data and stall: what the server answers, and after how long it gave up on us."""
    reader, writer = await asyncio.open_connection("127.0.0.1", rt.http_port)
    began = time.monotonic()
    try:
        writer.write(data)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), timeout=10)
        return answer, time.monotonic() - began
    finally:
        writer.close()


async def test_a_stalled_body_is_cut_off(runtime):
    head = b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n"
    answer, _ = await _raw(runtime, head + b'{"a":')
    assert answer.startswith(b"HTTP/1.1 408")


async def test_stalled_headers_are_cut_off(runtime):
    answer, _ = await _raw(runtime, b"POST /slack/events HTTP/1.1\r\nHost: x\r\nContent-Le")
    assert answer == b""  # closed without a response, well before the 10 s the test waits
