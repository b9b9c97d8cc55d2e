"""Issue 18 item 7: trying the service. `run --console` is the service with the console as its channel
(the schedule fires, digests print: no token, no network with a local clone); and a chat platform down
at start-up is retried with backoff while the other one serves."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import time_machine

from analysis.errors import ConfigError, ServiceError
from bot.app import serve
from bot.config.settings import Settings
from bot.config.subscriptions import Destination, Subscription
from bot.ports.protocols import Posted
from bot.service import runner as service
from bot.store.db import Store
from tests.bot.cli.test_cli import repo  # noqa: F401  (the throw-away clone fixture)
from tests.bot.cli.test_cli_process import child_env

SH = ZoneInfo("Asia/Shanghai")


def test_run_console_prints_the_caught_up_digest(repo, tmp_path):  # noqa: F811
    db = tmp_path / "d.db"
    store = Store(db)  # the service has known this clone's subscription for a few days
    seen = (datetime.now(UTC) - timedelta(days=3)).isoformat()
    store.db["subscription_seen"].insert({"name": "console:acme/widgets", "first_seen": seen})
    store.close()
    # At 00:00 both missed days are due whatever the hour the test runs (at 09:00, yesterday's is not
    # before 09:00 UTC).
    command = ["run", "--console", "--git-dir", str(repo.path), "--schedule", "00:00"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "--db", str(db), *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(DIGEST_LANG="en", DIGEST_TZ="UTC", DIGEST_CATCHUP_DAYS="2"),
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            done = Store(db).query("SELECT count(*) AS n FROM runs WHERE status = 'done'")[0]["n"]
            if done >= 2:
                break
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    text = out.decode("utf-8")
    assert proc.returncode == 0, err.decode()
    days = [(datetime.now(UTC).date() - timedelta(days=n)).isoformat() for n in (2, 1)]
    for day in days:
        assert f"──── acme/widgets {day} (UTC): 0 commits" in text
        assert f"# Daily Update Report ({day})" in text
    assert "Traceback" not in err.decode() and "error" not in err.decode().lower()
    # Each day printed once, recorded like any post: a restart prints nothing again.
    assert text.count("──── acme/widgets") == 2
    rows = Store(db).query("SELECT DISTINCT platform, channel FROM posts")
    assert rows == [{"platform": "console", "channel": "stdout"}]


def test_run_console_needs_no_token_and_console_options_need_console(repo, tmp_path):  # noqa: F811
    from click.testing import CliRunner

    from bot.cli.main import cli

    result = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "d.db"), "run", "--git-dir", str(repo.path)], catch_exceptions=False
    )
    assert result.exit_code == 2 and "--git-dir and --schedule go with --console" in result.stderr
    bad = CliRunner().invoke(
        cli,
        [
            "--db",
            str(tmp_path / "d.db"),
            "run",
            "--console",
            "--git-dir",
            str(repo.path),
            "--schedule",
            "25:99",
        ],
        catch_exceptions=False,
    )
    assert bad.exit_code == 2 and "--schedule '25:99'" in bad.stderr


class Recording:
    """A poster that records what it was asked to post."""

    def __init__(self, platform: str):
        self.platform = platform
        self.parents: list[str] = []

    async def post_parent(self, channel, digest):
        self.parents.append(channel)
        return Posted(f"{self.platform}-{len(self.parents)}", f"t{len(self.parents)}")

    async def post_card(self, channel, thread, digest, commit, analysis):
        return Posted("card", thread)

    async def post_medium_list(self, channel, thread, digest, commits):
        return Posted("medium", thread)

    async def post_report(self, channel, thread, digest, filename, markdown):
        return Posted("report", thread)


class FlakyRuntime:
    """A platform that is down for its first `failures` starts (or refuses the token)."""

    def __init__(
        self,
        platform: str,
        failures: int,
        error: Exception | None = None,
        up_after: Callable[[], bool] | None = None,
    ):
        self.poster = Recording(platform)
        self.failures = failures
        self.error = error or ServiceError(f"cannot reach {platform}: connection refused")
        self.attempts = 0
        self.up_after = up_after

    async def start(self):
        self.attempts += 1
        if self.attempts <= self.failures:
            raise self.error
        # The start that succeeds finishes only once `up_after()` holds, so what was posted while the
        # platform was down does not depend on how fast this machine runs the digest.
        while self.up_after is not None and not self.up_after():
            await asyncio.sleep(0.01)

    async def stop(self):
        pass


class SlackRuntime(FlakyRuntime):
    pass


class DiscordRuntime(FlakyRuntime):
    pass


@contextlib.asynccontextmanager
async def serving(settings: Settings, store: Store, subs: list[Subscription], runtimes: list[Any]):
    """`serve` at 2026-01-27 10:00 Asia/Shanghai (the 09:00 schedule's day 2026-01-26 is caught up) with
    these runtimes, stopped when the block ends."""
    stop = asyncio.Event()
    with time_machine.travel(datetime(2026, 1, 27, 10, 0, tzinfo=SH), tick=True):
        task = asyncio.create_task(
            serve(settings, store, subs, stop=stop, make_runtimes=lambda s, svc: runtimes)
        )
        try:
            yield task
        finally:
            stop.set()
            await asyncio.wait_for(task, 30)


async def until(task: asyncio.Task, done: Callable[[], bool], tries: int = 200) -> None:
    """Polls every 50 ms until `done()` (at most `tries` times); the service must not end meanwhile."""
    for _ in range(tries):
        await asyncio.sleep(0.05)
        assert not task.done(), task.exception()
        if done():
            return


def two_platform_sub(git_dir) -> Subscription:
    return Subscription(
        name="both",
        repo="acme/widgets",
        timezone="Asia/Shanghai",
        schedule="09:00",
        lang="en",
        destinations=(Destination("slack", "C1"), Destination("discord", "123")),
        git_dir=git_dir,
    )


async def test_a_platform_down_at_start_is_retried_while_the_other_serves(
    repo,  # noqa: F811
    tmp_path,
    monkeypatch,
    caplog,
):
    monkeypatch.setattr(service, "STARTUP_RETRY_FIRST", 0.05)
    caplog.set_level(logging.INFO)
    slack = SlackRuntime("slack", failures=0)
    store = Store(tmp_path / "d.db")

    def day_run_ended() -> bool:
        ended = "SELECT 1 FROM runs WHERE subscription = 'both' AND status IN ('done', 'partial', 'failed')"
        return bool(store.query(ended))

    discord = DiscordRuntime("discord", failures=3, up_after=day_run_ended)
    store.db["subscription_seen"].insert({"name": "both", "first_seen": "2026-01-20T00:00:00+08:00"})
    settings = Settings(digest_db=tmp_path / "d.db", digest_catchup_days=1)
    async with serving(settings, store, [two_platform_sub(repo.path)], [slack, discord]) as task:
        await until(task, lambda: "Discord started after retrying" in caplog.text)
    assert slack.poster.parents == ["C1"]  # Slack served the caught-up day while Discord was down
    assert discord.attempts == 4  # three failures, then up
    waits = [r.getMessage() for r in caplog.records if "Discord is unavailable at start-up" in r.getMessage()]
    assert [w.rsplit("retrying in ", 1)[1] for w in waits] == ["0s", "0s", "0s"]  # 0.05, 0.1, 0.2
    assert "Discord started after retrying" in caplog.text
    run = store.query("SELECT status, error FROM runs WHERE subscription = 'both'")[0]
    assert run["status"] == "partial" and "discord:123: no discord adapter running" in run["error"]


async def test_a_rejected_token_still_stops_the_start(tmp_path):
    slack = SlackRuntime(
        "slack", failures=1, error=ConfigError("Slack rejected SLACK_BOT_TOKEN (invalid_auth)")
    )
    with pytest.raises(ConfigError, match="invalid_auth"):
        await serve(
            Settings(digest_db=tmp_path / "d.db"),
            Store(tmp_path / "d.db"),
            [],
            stop=asyncio.Event(),
            make_runtimes=lambda s, svc: [slack],
        )


async def test_the_console_takes_the_services_notices_and_a_repost(repo, tmp_path):  # noqa: F811
    """The console is a poster like Slack and Discord: a failed run's notice (pending work, issue 17)
    prints once, and a re-post of a day prints its new heading instead of failing."""
    from adapters.console import ConsoleRuntime
    from bot.delivery.posting import post_digest
    from tests.fakes.digests import make_digest

    printed: list[str] = []
    runtime = ConsoleRuntime(printed.append)
    store = Store(tmp_path / "d.db")
    store.db["subscription_seen"].insert({"name": "gone", "first_seen": "2026-01-20T00:00:00+08:00"})
    gone = Subscription(
        name="gone",
        repo="acme/widgets",
        timezone="Asia/Shanghai",
        schedule="09:00",
        lang="en",
        destinations=(Destination("console", "stdout"),),
        git_dir=tmp_path / "no-such-clone",
    )
    settings = Settings(digest_db=tmp_path / "d.db", digest_catchup_days=1)
    async with serving(settings, store, [gone], [runtime]) as task:
        await until(task, lambda: any("failed" in p for p in printed))
    notices = [p for p in printed if p.startswith("⚠️ The digest of acme/widgets for 2026-01-26 failed")]
    assert len(notices) == 1, printed
    assert store.pending_work() == []  # done, not left to retry

    old = make_digest(("low", "high", "medium"), lang="en")
    new = make_digest(("high", "high", "medium"), lang="en")
    printed.clear()
    await post_digest(runtime.poster, store, "stdout", old)
    reposted = await post_digest(runtime.poster, store, "stdout", new, repost=True)
    assert reposted.edited == ["parent"] and reposted.posted == ["card:" + new.commits[0].sha]
    assert printed[-1].endswith(" (re-posted)") and printed[-1].startswith(printed[0])
