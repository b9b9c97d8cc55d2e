"""A Discord thread question taken and then lost to a crash is answered after the restart, once: a real
service process (tests/adapters/discord/question_child.py) killed (kill -9) after it claimed the question
and before it posted the answer, or after Discord took the answer and before it was marked; then the
runtime started again against the same database and the fake Discord on 127.0.0.1. The gateway does not
replay a message missed while down: only the store remembers the question."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import discord

from adapters.discord.handlers import DigestBot
from adapters.discord.runtime import DiscordRuntime
from adapters.discord.thread_answers import question_of
from bot.app import chat_service
from bot.chat.pending import Claimant, record_of
from bot.config.settings import Settings
from bot.store.db import Store
from tests.adapters.discord.test_discord_bot import REPO
from tests.adapters.discord.test_discord_events import answers, me
from tests.bot.store.test_pending_questions import claim_state, dead_pid, settled
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.slack_api import eventually

ROOT = Path(__file__).resolve().parents[3]
HISTORY = "GET /channels/{channel_id}/messages"  # the thread read for context: claimed, nothing posted
POST = "POST /channels/{channel_id}/messages"  # the answer, taken by Discord


def asked(bot: DigestBot, fake: FakeDiscord, where: str) -> dict[str, Any]:
    """A question mentioning us in the thread, as the gateway delivers it (stored in the fake)."""
    return fake.message_payload(where, f"<@{bot.user.id}> what are the risks?", mentions=(me(bot),))


def killed_while_answering(fake: FakeDiscord, settings: Settings, message: dict, at: str, tmp: Path) -> None:
    """The service process killed (kill -9) as its request to `at` arrives (Discord still carries it out)."""
    spec = {
        "token": fake.token,
        "api": fake.base_url,
        "guild_id": fake.guild_id,
        "repo": REPO,
        "db": str(settings.digest_db),
        "guild": fake.guild_payload(),
        "message": message,
    }
    path = tmp / "question.json"
    path.write_text(json.dumps(spec))
    child: list[subprocess.Popen[bytes]] = []

    def kill(route: str, payload: Any) -> None:
        if route == at and child:
            os.kill(child[0].pid, signal.SIGKILL)
            fake.on_call = None

    fake.on_call = kill
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp), "PYTHONPATH": str(ROOT)}
    child.append(
        subprocess.Popen(
            [sys.executable, "-m", "tests.adapters.discord.question_child", str(path)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
    )
    try:
        code = child[0].wait(60)
        assert code == -signal.SIGKILL, child[0].stderr.read().decode() if child[0].stderr else code
    finally:
        fake.on_call = None
        if child[0].poll() is None:
            child[0].kill()
            child[0].wait()


async def restarted(settings: Settings, monkeypatch, claimant: Claimant | None = None) -> DiscordRuntime:
    """The service's Discord side started again (the fake has no gateway: connected until stopped)."""

    async def connect(self, *, reconnect: bool = True) -> None:
        while not self.is_closed():
            await asyncio.sleep(0.01)

    monkeypatch.setattr(DigestBot, "connect", connect)
    service = chat_service(settings, Store(settings.digest_db))
    if claimant is not None:
        service.claimant = claimant
    runtime = DiscordRuntime(settings, service)
    await runtime.start()
    return runtime


async def test_a_question_claimed_by_a_killed_service_is_answered_once_by_the_restart(
    bot,
    fake,
    thread,
    settings,
    monkeypatch,
    tmp_path,
):
    message = asked(bot, fake, thread)
    await asyncio.to_thread(killed_while_answering, fake, settings, message, HISTORY, tmp_path)
    assert answers(fake, thread) == []
    assert claim_state(settings.digest_db, message["id"]) == "answering"
    await settled(await restarted(settings, monkeypatch), settings.digest_db, message["id"])
    [answer] = answers(fake, thread)
    assert str(answer["message_reference"]["message_id"]) == message["id"]
    assert "Commits carrying the most risk" in answer["content"]  # the question answered from its digest
    assert answer["allowed_mentions"]["parse"] == []


async def test_an_answer_posted_but_not_marked_before_the_kill_is_not_posted_again(
    bot,
    fake,
    thread,
    settings,
    monkeypatch,
    tmp_path,
    caplog,
):
    message = asked(bot, fake, thread)
    await asyncio.to_thread(killed_while_answering, fake, settings, message, POST, tmp_path)
    assert len(answers(fake, thread)) == 1  # Discord has it; the store does not know
    assert claim_state(settings.digest_db, message["id"]) == "answering"
    fake.nonce_window = 0  # Discord has forgotten the nonce: only the thread read back can tell
    with caplog.at_level(logging.INFO):
        await settled(await restarted(settings, monkeypatch), settings.digest_db, message["id"])
    assert len(answers(fake, thread)) == 1
    assert "was answered before its process stopped: not again" in caplog.text


async def test_two_services_starting_at_once_answer_a_left_question_once(
    bot,
    fake,
    thread,
    settings,
    monkeypatch,
):
    message = asked(bot, fake, thread)
    channel, _ = bot._connection._get_guild_channel(message)
    q = question_of(discord.Message(state=bot._connection, channel=channel, data=message), mentioned=True)
    store = Store(settings.digest_db)  # the claim a killed process left (its pid is gone)
    assert store.begin_answer(
        "discord", q.channel, q.message_id, record=record_of(q, Claimant(pid=dead_pid()))
    )
    store.close()
    fake.nonce_window = 0  # only the claim keeps the second service from answering
    first, second = await asyncio.gather(
        restarted(settings, monkeypatch),
        restarted(settings, monkeypatch, Claimant(pid=os.getppid())),  # another process: running
    )
    try:
        await eventually(lambda: claim_state(settings.digest_db, message["id"]) == "answered", timeout=20)
        await asyncio.sleep(0.5)  # a second answer, were one coming, would be posted by now
    finally:
        await asyncio.gather(first.stop(), second.stop())
    assert len(answers(fake, thread)) == 1
