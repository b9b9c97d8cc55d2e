"""Chat faults found by the service-side adversarial round, against the fake Slack on 127.0.0.1: a zone
typed in lower case is stored under its canonical name, `/digest <day>` refuses a day that has not
ended (a posted day is frozen in the channel), and a long Slack rate limit fails the post in one line
instead of sleeping it out silently."""

from __future__ import annotations

import logging
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

import adapters.slack.client
from adapters.slack.poster import open_slack_poster
from analysis.errors import ServiceError
from bot.delivery.posting import post_digest
from tests.adapters.slack.test_slack_app import (  # noqa: F401  (fixtures)
    CHANNEL,
    TZ,
    _clean_env,
    app,
    build_app,
    build_day,
    make_service,
    make_settings,
    send_command,
    service,
    settings,
    slack,
)

SH = ZoneInfo(TZ)


async def test_a_lower_case_zone_is_stored_canonically_and_answered_in_the_language_asked(
    tmp_path,
    slack,  # noqa: F811
):
    settings = make_settings(tmp_path, slack, digest_lang="zh")  # noqa: F811
    service = make_service(settings)  # noqa: F811
    bolt = build_app(settings, service)
    try:
        await send_command(bolt, slack, "subscribe acme/widgets 09:00 europe/berlin en")
        await bolt.bot.tasks.drain(10)
    finally:
        await bolt.bot.tasks.close(5)
    reply = slack.responses[-1]["text"]
    assert reply.startswith("Subscribed to acme/widgets") and "(Europe/Berlin)" in reply
    [row] = service.store.query("SELECT timezone FROM subscriptions")
    assert row["timezone"] == "Europe/Berlin"  # what ZoneInfo finds on any file system


async def test_digest_of_a_day_that_has_not_ended_is_refused_privately(app, service, slack):  # noqa: F811
    service.clock = lambda: datetime(2026, 1, 26, 15, 0, tzinfo=SH)  # the afternoon of the day
    await send_command(app, slack, "2099-01-01")
    await app.bot.tasks.drain(10)
    await send_command(app, slack, "2026-01-26")
    await app.bot.tasks.drain(10)
    future, today = slack.responses[-2:]
    assert future["response_type"] == today["response_type"] == "ephemeral"
    assert "2099-01-01 is in the future (today in Asia/Shanghai is 2026-01-26)" in future["text"]
    assert "2026-01-26 has not ended yet in Asia/Shanghai" in today["text"]
    assert slack.messages == [] and service.store.query("SELECT * FROM posts") == []
    service.clock = lambda: datetime(2026, 1, 27, 0, 0, 1, tzinfo=SH)  # over: every commit of it
    await send_command(app, slack, "2026-01-26")
    await app.bot.tasks.drain(10)
    [parent] = slack.channel_messages(CHANNEL)
    assert len(slack.thread(CHANNEL, parent.ts)) == 4  # two cards, the list, the report


async def test_a_long_rate_limit_fails_the_post_at_once_and_a_retry_posts_it_once(settings, service, slack):  # noqa: F811
    digest = await build_day(service)
    slack.rate_limit("chat.postMessage", times=1, retry_after=3600)
    async with open_slack_poster(settings) as poster:
        with pytest.raises(ServiceError) as raised:
            await post_digest(poster, service.store, CHANNEL, digest)
    assert str(raised.value) == (
        "Slack rate-limited chat.postMessage for 3600 s, longer than the 120 s a call waits: try again later"
    )
    assert slack.calls["chat.postMessage"] == 1 and slack.messages == []
    async with open_slack_poster(settings) as poster:  # what the service's retry does later
        result = await post_digest(poster, service.store, CHANNEL, digest)
    assert len(result.posted) == 5 and len(slack.channel_messages(CHANNEL)) == 1


async def test_rate_limit_waits_are_bounded_per_call(settings, service, slack, monkeypatch, caplog):  # noqa: F811
    monkeypatch.setattr(adapters.slack.client, "LOUD_WAIT", -1.0)  # log every wait
    monkeypatch.setattr(adapters.slack.client, "MAX_RATE_LIMIT_WAIT", 1.5)  # room for one wait
    digest = await build_day(service)
    slack.rate_limit("chat.postMessage", times=2, retry_after=0)
    async with open_slack_poster(settings) as poster:
        with (
            caplog.at_level(logging.WARNING, logger="adapters.slack.client"),
            pytest.raises(ServiceError, match=r"kept rate-limiting chat\.postMessage after several"),
        ):
            await post_digest(poster, service.store, CHANNEL, digest)
    assert [r.getMessage() for r in caplog.records] == [
        "Slack rate-limited chat.postMessage: waiting 0 s as it asks (at most 2 s per call)"
    ]
    assert slack.calls["chat.postMessage"] == 2 and slack.messages == []
