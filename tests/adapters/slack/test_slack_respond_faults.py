"""A slash command's response_url that cannot be reached (connection refused, an expired URL): the reply
the person asked for, or the error they must see, still reaches them through chat.postEphemeral; one
warning line, never a traceback. Against the fake Slack on 127.0.0.1 and a port nobody listens on."""

from __future__ import annotations

import logging
import socket

import pytest

from tests.adapters.slack.test_slack_app import (  # noqa: F401  (fixtures)
    CHANNEL,
    _clean_env,
    app,
    day_commits,
    send_command,
    service,
    settings,
    slack,
)


@pytest.fixture
def refused_url() -> str:
    """A URL on 127.0.0.1 whose port was just freed: connecting is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/commands/T0/1/secret"


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


async def test_a_refused_response_url_replies_through_chat_post_ephemeral(
    app,  # noqa: F811
    slack,  # noqa: F811
    refused_url,
    monkeypatch,
    caplog,
):
    monkeypatch.setattr(slack, "response_url", lambda name="cmd": refused_url)
    await send_command(app, slack, "subscribe acme/widgets 08:30 Europe/Berlin en")
    await app.bot.tasks.drain(20)
    assert slack.responses == []
    [reply] = slack.ephemerals
    assert reply["channel"] == CHANNEL and reply["user"] == "UASKER"
    assert reply["text"].startswith("Subscribed to acme/widgets")
    [line] = warnings_of(caplog)
    assert "response_url failed (ClientConnectorError" in line and "replied with chat.postEphemeral" in line
    assert "secret" not in caplog.text


async def test_an_error_the_user_must_see_survives_an_expired_response_url(app, slack, monkeypatch, caplog):  # noqa: F811
    gone = slack.server.url_for("/no-such-response-url")  # the fake answers 404, as an expired URL does
    monkeypatch.setattr(slack, "response_url", lambda name="cmd": gone)
    await send_command(app, slack, "0123456789abcdef0123456789abcdef01234567")  # no such commit
    await app.bot.tasks.drain(20)
    [reply] = slack.ephemerals
    assert reply["user"] == "UASKER" and reply["text"]
    [line] = warnings_of(caplog)
    assert "response_url failed (HTTP 404" in line


async def test_when_chat_post_ephemeral_fails_too_the_reply_is_lost_in_one_line(
    app,  # noqa: F811
    slack,  # noqa: F811
    refused_url,
    monkeypatch,
    caplog,
):
    slack.not_in_channel.add(CHANNEL)  # the card cannot be posted, nor the ephemeral saying why
    monkeypatch.setattr(slack, "response_url", lambda name="cmd": refused_url)
    await send_command(app, slack, day_commits()[0].short_sha)
    await app.bot.tasks.drain(20)
    assert slack.responses == [] and slack.ephemerals == [] and slack.messages == []
    [line] = warnings_of(caplog)
    assert f"the /digest reply to UASKER in {CHANNEL} is lost" in line
    assert "response_url failed (ClientConnectorError" in line
    assert f"then Slack chat.postEphemeral failed: the bot is not in channel {CHANNEL}" in line
