"""`digestbot run` with a chat platform slow to connect: the platforms start side by side and the schedule
at once. Slack's Socket Mode connect may take its 30 s (tests/adapters/slack/test_slack_socket.py bounds
it); `run` started Slack first and waited, so Discord and the day's digest waited with it. Real HTTP on
127.0.0.1: the fake Slack Web API, a WebSocket endpoint that accepts and never answers, the fake Discord
REST API and the fake GitHub."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime

import pytest
import time_machine

from adapters.slack import runtime as slack_runtime
from bot.app import serve
from bot.config.settings import Settings
from bot.store.db import Store
from tests.bot.cli.test_cli import repo  # noqa: F401  (the throw-away clone fixture)
from tests.bot.service.test_run_console import Recording, serving, two_platform_sub, until
from tests.bot.service.test_run_failures import (  # noqa: F401  (fixtures)
    DISCORD_CHANNEL,
    SH,
    SLACK_CHANNEL,
    RestDiscord,
    fakes,
    runs,
    sub,
)


async def silent_websocket() -> tuple[asyncio.Server, list[asyncio.StreamWriter]]:
    """A TCP endpoint that accepts a WebSocket's connection and never answers its handshake."""
    conns: list[asyncio.StreamWriter] = []

    async def accept_and_say_nothing(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conns.append(writer)

    return await asyncio.start_server(accept_and_say_nothing, "127.0.0.1", 0), conns


async def test_a_slack_socket_that_never_connects_delays_neither_discord_nor_the_schedule(
    fakes,  # noqa: F811
    tmp_path,
    caplog,
):
    gh, slack, dc = fakes
    caplog.set_level(logging.INFO)
    server, conns = await silent_websocket()
    slack.socket_url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}/link"
    settings = Settings(
        _env_file=None,
        github_api_url=gh.base_url,
        slack_bot_token=slack.token,
        slack_app_token=slack.app_token,  # Socket Mode
        slack_api_url=slack.api_url,
        discord_bot_token=dc.token,
        discord_api_url=dc.base_url,
        digest_db=tmp_path / "digest.db",
    )
    slack_runtimes: list[slack_runtime.SlackRuntime] = []

    def runtimes(settings, service):
        slack_runtimes.append(slack_runtime.SlackRuntime(settings, service, grace=1, connect_timeout=120))
        return [slack_runtimes[0], RestDiscord(settings, service)]

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    try:
        # half a second before the 09:00 schedule of yesterday's digest
        with time_machine.travel(datetime(2026, 1, 29, 8, 59, 59, 500000, tzinfo=SH), tick=True):
            began = loop.time()
            task = asyncio.create_task(
                serve(settings, Store(settings.digest_db), [sub()], stop=stop, make_runtimes=runtimes)
            )
            try:
                # 30 s: a loaded machine is slow, and still far short of Slack's 120 s connect bound
                while loop.time() - began < 30 and not dc.messages_in(DISCORD_CHANNEL):
                    await asyncio.sleep(0.05)
                    assert not task.done(), task.exception()
                fired = loop.time() - began
                assert dc.messages_in(DISCORD_CHANNEL), "Discord waited for Slack's connection"
                assert conns and "Slack adapter running" not in caplog.text  # Slack is still connecting
                assert not slack.channel_messages(SLACK_CHANNEL)
            finally:
                stop.set()
                await asyncio.wait_for(task, 30)  # the connect in progress is cancelled, not waited out
    finally:
        server.close()
        for writer in conns:
            writer.close()
    assert fired < 30
    assert loop.time() - began < 60
    run = runs(settings)["2026-01-28"]  # fired on schedule; Slack's part is left for the sweeps
    assert run["status"] == "partial" and "slack:C0DIGEST: no slack adapter running" in run["error"]
    assert slack_runtimes[0]._socket is None and slack_runtimes[0]._session is None  # nothing left behind
    assert not [r.getMessage() for r in caplog.records if r.exc_info]


class Ordered(Recording):
    """A poster recording, in a list it shares with the others, which platform got each parent."""

    def __init__(self, platform: str, order: list[str]):
        super().__init__(platform)
        self.order = order

    async def post_parent(self, channel, digest):
        self.order.append(self.platform)
        return await super().post_parent(channel, digest)


class LateRuntime:
    """A platform that connects once `connected` is set (at once without one), then serves."""

    def __init__(self, platform: str, order: list[str], connected: asyncio.Event | None = None):
        self.poster = Ordered(platform, order)
        self.connected = connected

    async def start(self):
        if self.connected is not None:
            await self.connected.wait()

    async def stop(self):
        pass


class SlackRuntime(LateRuntime):  # named for its platform: runtime_name() reads the class name
    pass


class DiscordRuntime(LateRuntime):
    pass


async def test_a_platform_connecting_when_the_digest_is_ready_gets_it_once_it_is_up(repo, tmp_path):  # noqa: F811
    """The digest does not wait for a slow platform, and that platform's post is not lost to "no adapter
    running" (and the sweep 10 minutes later): it is made once the platform is up, after the platforms
    already up have theirs."""
    order: list[str] = []
    slack_connected = asyncio.Event()
    slack, discord = SlackRuntime("slack", order, slack_connected), DiscordRuntime("discord", order)
    store = Store(tmp_path / "d.db")
    store.db["subscription_seen"].insert({"name": "both", "first_seen": "2026-01-20T00:00:00+08:00"})

    def both_posted() -> bool:
        if order == ["discord"]:  # the digest is out to Discord while Slack is connecting
            slack_connected.set()
        return len(order) == 2

    settings = Settings(_env_file=None, digest_db=tmp_path / "d.db", digest_catchup_days=1)
    async with serving(settings, store, [two_platform_sub(repo.path)], [slack, discord]) as task:
        await until(task, both_posted, tries=600)
    assert order == ["discord", "slack"]  # Discord at once, Slack once connected: waited for, not failed
    run = store.query("SELECT status, error FROM runs WHERE subscription = 'both'")[0]
    assert run["status"] == "done" and run["error"] is None


async def test_a_configuration_error_met_while_connecting_still_ends_the_service(tmp_path):
    """Slack refusing the app token comes after the connection is tried (not before any network): the
    service serves meanwhile, then ends with that one error, as when the platforms started in turn."""
    from analysis.errors import ConfigError

    class RefusedLater(LateRuntime):
        async def start(self):
            await asyncio.sleep(0.2)
            raise ConfigError("Slack refused Socket Mode (invalid_auth): check SLACK_APP_TOKEN")

    class SlackRuntime(RefusedLater):
        pass

    order: list[str] = []
    with pytest.raises(ConfigError, match="refused Socket Mode"):
        await asyncio.wait_for(
            serve(
                Settings(_env_file=None, digest_db=tmp_path / "d.db"),
                Store(tmp_path / "d.db"),
                [],
                stop=asyncio.Event(),  # never set: the error alone ends it
                make_runtimes=lambda s, svc: [SlackRuntime("slack", order), DiscordRuntime("discord", order)],
            ),
            30,
        )
