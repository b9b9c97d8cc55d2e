"""Issue 17 items 2 and 3: the weekly roll-up runs under the same posting lease as a day's digest (two
services on one database post one roll-up, on Discord too once its nonces have expired), and the chart
upload looks before it re-uploads after a 500 that came after Slack had taken the file."""

from __future__ import annotations

import asyncio

from adapters.discord.poster import open_discord_poster
from adapters.slack.client import make_client
from adapters.slack.poster import SlackPoster
from bot.app import render_chart
from bot.config.settings import Settings
from bot.delivery.weekly_post import post_weekly
from bot.store.db import Store
from tests.bot.digest.test_weekly import repo, week_of  # noqa: F401  (repo is a fixture)
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.slack_api import FakeSlack

CHANNEL = "C0WEEK"


def charts(slack: FakeSlack, channel: str = CHANNEL) -> list[str]:
    return [f["name"] for m in slack.messages if m.channel == channel for f in m.files]


async def test_two_services_on_one_database_post_one_roll_up(repo, store, tmp_path):  # noqa: F811
    week = await week_of(repo, store)
    other = Store(store.path)  # the second service's connection to the same file
    with FakeSlack(latency=0.05) as slack:  # slow enough that the two posts overlap
        settings = Settings(_env_file=None, slack_bot_token=slack.token, slack_api_url=slack.api_url)
        results = await asyncio.gather(
            post_weekly(SlackPoster(make_client(settings)), store, CHANNEL, week, chart=render_chart),
            post_weekly(SlackPoster(make_client(settings)), other, CHANNEL, week, chart=render_chart),
        )
        slack.check()
        parents = slack.channel_messages(CHANNEL)
    assert len(parents) == 1 and len(charts(slack)) == 1
    assert sorted(len(r.posted) for r in results) == [0, 2]

    with FakeDiscord(latency=0.05) as dc:
        dc.nonce_window = 0.0  # Discord no longer remembers nonces: only the lease keeps it once
        channel = str(next(iter(dc.channels)))
        settings = Settings(_env_file=None, discord_bot_token=dc.token, discord_api_url=dc.base_url)
        async with open_discord_poster(settings) as one, open_discord_poster(settings) as two:
            await asyncio.gather(
                post_weekly(one, store, channel, week, chart=render_chart),
                post_weekly(two, other, channel, week, chart=render_chart),
            )
        dc.check()
        messages = dc.messages_in(channel)
    assert len(messages) == 2  # one summary, one chart
    other.close()


async def test_a_500_after_slack_took_the_chart_gives_one_chart(repo, store):  # noqa: F811
    week = await week_of(repo, store)
    with FakeSlack() as slack:
        settings = Settings(_env_file=None, slack_bot_token=slack.token, slack_api_url=slack.api_url)
        poster = SlackPoster(make_client(settings))
        slack.fail_after_accept("files.completeUploadExternal")  # stored, then answered 500
        first = await post_weekly(poster, store, CHANNEL, week, chart=render_chart)
        retry = await post_weekly(
            poster, store, CHANNEL, week, chart=render_chart
        )  # the service's next sweep
        slack.check()
    assert first.posted == ["parent", "chart"] and retry.posted == []
    assert charts(slack) == ["weekly-acme-widgets-2026-W05.en.png"]


async def test_a_chart_upload_that_failed_is_looked_for_again_not_taken_from_memory(repo, store):  # noqa: F811
    """Two 500s after acceptance: the first call gives up, the thread is not trusted from memory, and
    the retry finds the chart instead of uploading a second one."""
    week = await week_of(repo, store)
    with FakeSlack() as slack:
        settings = Settings(_env_file=None, slack_bot_token=slack.token, slack_api_url=slack.api_url)
        poster = SlackPoster(make_client(settings))
        slack.fail_after_accept("files.completeUploadExternal")
        slack.fail("conversations.replies", times=1, status=500)  # the check after it fails too
        slack.fail("conversations.replies", times=2, status=500)
        try:
            await post_weekly(poster, store, CHANNEL, week, chart=render_chart)
        except Exception as exc:  # the first sweep ends in an error, as it may
            assert "Slack" in str(exc)
        await post_weekly(poster, store, CHANNEL, week, chart=render_chart)
        slack.check()
    assert len(charts(slack)) == 1


async def test_a_roll_up_part_that_failed_is_pending_work_the_service_finishes(repo, store):  # noqa: F811
    from adapters.local_git import LocalGitSource
    from bot.app import digest_runner
    from bot.config.subscriptions import Destination, Subscription
    from bot.delivery import outbox
    from bot.service.status import status_data
    from tests.bot.digest.test_weekly import FixedAnalyzer

    sub = Subscription("w", "acme/widgets", "Asia/Shanghai", "09:00", "en",
                       (Destination("slack", CHANNEL),), weekly="mon 09:00")  # fmt: skip
    with FakeSlack() as slack:
        settings = Settings(_env_file=None, slack_bot_token=slack.token, slack_api_url=slack.api_url)
        posters = {"slack": SlackPoster(make_client(settings))}
        runner = digest_runner(settings, store, posters, analyzer=FixedAnalyzer(),
                              source_factory=lambda s: LocalGitSource(repo.path))  # fmt: skip
        slack.fail("files.getUploadURLExternal", "fatal_error", times=1)  # the chart's upload fails once
        outcome = await runner.weekly(sub, 2026, 5)
        assert outcome.status == "done" and "pending, retried by the service" in outcome.error
        [pending] = status_data(settings, store, [sub])["pending"]
        assert pending["kind"] == "weekly" and pending["what"] == "weekly roll-up 2026-W05 of w"
        assert len(slack.channel_messages(CHANNEL)) == 1 and charts(slack) == []
        # the service's worker, later (a restart included): the week is built again from the store
        worker = outbox.Worker(
            store, posters, clock=lambda: 2e9, extra={"weekly": runner.weekly_handler(lambda: [sub])}
        )
        assert await worker.run_due() == 1
        slack.check()
    assert len(slack.channel_messages(CHANNEL)) == 1 and len(charts(slack)) == 1
    assert store.pending_work() == []
