"""Floods of `/digest` against the fake Slack and the fake LLM on 127.0.0.1: many people asking for the
same new commit, or the same day, at once. Every one is acknowledged and answered; the model is asked
about each commit once, not once per person (each would otherwise miss the cache: nothing is stored
until the first answer arrives)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from adapters.slack.runtime import build_app
from analysis.models import Commit
from bot.app import chat_service
from bot.chat.card_turns import REPEAT_WINDOW
from bot.store.db import Store, utcnow
from tests.adapters.slack.test_slack_app import (  # noqa: F401  (fixtures)
    CHANNEL,
    _clean_env,
    day_commits,
    make_service,
    make_settings,
    send_command,
    slack,
)
from tests.fakes.digests import make_commit
from tests.fakes.openai_server import FakeLLM
from tests.fakes.sources import MemorySource


def llm_app(tmp_path, slack, fake):  # noqa: F811
    settings = make_settings(tmp_path, slack, digest_model=fake.model, openai_base_url=fake.base_url)
    service = make_service(settings, analyzer=None)  # the LLM analyser the settings name
    service.clock = lambda: datetime(2026, 1, 28, tzinfo=ZoneInfo("UTC"))
    return build_app(settings, service)


async def test_ten_asking_for_the_same_new_commit_cost_one_model_call(tmp_path, slack):  # noqa: F811
    sha = day_commits()[0].sha
    with FakeLLM(latency=0.3) as fake:
        app = llm_app(tmp_path, slack, fake)
        try:
            acks = await asyncio.gather(
                *[send_command(app, slack, sha[: 7 + i], user=f"U{i}") for i in range(10)]
            )
            await app.bot.tasks.drain(30)
        finally:
            await app.bot.tasks.close(5)
        purposes = [call.purpose for call in fake.log]
    assert [a.status for a in acks] == [200] * 10
    assert purposes == ["analysis"]
    # One card in the channel; each of the nine others hears privately where it is, with its link.
    [card] = slack.channel_messages(CHANNEL)
    notices = [r["text"] for r in slack.responses]
    assert len(notices) == 9
    link = f"https://fake.slack.test/archives/{CHANNEL}/p{card.ts}"
    assert all(sha[:7] in n and "not posted again" in n and link in n for n in notices), notices


async def test_a_card_asked_for_again_after_the_window_is_posted_again(tmp_path, slack):  # noqa: F811
    sha = day_commits()[0].sha
    with FakeLLM() as fake:
        app = llm_app(tmp_path, slack, fake)
        try:
            await send_command(app, slack, sha[:9], user="U1")
            await app.bot.tasks.drain(30)
            store = app.bot.service.store
            store.db.execute("UPDATE posts SET created_at = ?", [(utcnow() - REPEAT_WINDOW).isoformat()])
            await send_command(app, slack, sha[:9], user="U2")
            await app.bot.tasks.drain(30)
        finally:
            await app.bot.tasks.close(5)
    assert len(slack.channel_messages(CHANNEL)) == 2
    assert slack.responses == []


async def test_three_asking_for_the_same_day_cost_one_call_per_commit(tmp_path, slack):  # noqa: F811
    with FakeLLM(latency=0.3) as fake:
        app = llm_app(tmp_path, slack, fake)
        try:
            await asyncio.gather(*[send_command(app, slack, "2026-01-26", user=f"U{i}") for i in range(3)])
            await app.bot.tasks.drain(30)
        finally:
            await app.bot.tasks.close(5)
        purposes = [call.purpose for call in fake.log]
    assert purposes == ["analysis"] * len(day_commits())
    assert len(slack.channel_messages(CHANNEL)) == 1  # the digest, once
    assert [r["text"] for r in slack.responses] == [
        "That digest is already in this channel; nothing was missing."
    ] * 2


async def test_without_a_link_from_slack_the_pointer_says_see_above(tmp_path, slack):  # noqa: F811
    sha = day_commits()[0].sha
    slack.fail("chat.getPermalink", "message_not_found", times=5)
    with FakeLLM() as fake:
        app = llm_app(tmp_path, slack, fake)
        try:
            for user in ("U1", "U2"):
                await send_command(app, slack, sha[:8], user=user)
                await app.bot.tasks.drain(30)
        finally:
            await app.bot.tasks.close(5)
    assert len(slack.channel_messages(CHANNEL)) == 1
    [notice] = [r["text"] for r in slack.responses]
    assert "not posted again: see above" in notice


async def test_one_person_asking_for_many_new_commits_is_held_to_the_rate(tmp_path, slack):  # noqa: F811
    """CHAT_CARDS_PER_MINUTE counts the new model analyses a person asks for: past it, a private line
    says when to ask again; a commit analysed before (for anyone) still comes at once."""
    shas = [c.sha for c in day_commits()[:3]]
    with FakeLLM() as fake:
        settings = make_settings(
            tmp_path, slack, digest_model=fake.model, openai_base_url=fake.base_url, chat_cards_per_minute=2
        )
        service = make_service(settings, analyzer=None)
        service.clock = lambda: datetime(2026, 1, 28, tzinfo=ZoneInfo("UTC"))
        app = build_app(settings, service)
        try:
            for sha in shas:
                await send_command(app, slack, sha[:10], user="U1")
                await app.bot.tasks.drain(30)
            await send_command(app, slack, shas[2][:10], user="U2")  # another person: their own rate
            await app.bot.tasks.drain(30)
            service.store.db.execute("DELETE FROM posts")  # the repeat pointer aside: a fresh channel
            await send_command(app, slack, shas[0][:10], user="U1")  # analysed before: no model call
            await app.bot.tasks.drain(30)
        finally:
            await app.bot.tasks.close(5)
        purposes = [call.purpose for call in fake.log]
    assert purposes == ["analysis"] * 3
    [refusal] = [r["text"] for r in slack.responses]
    assert "limit on new commit analyses here (2 a minute)" in refusal and shas[2][:7] in refusal
    assert len(slack.channel_messages(CHANNEL)) == 4  # U1's two, U2's one, U1's cached one


def two_days() -> list[Commit]:
    """day_commits() on 2026-01-26 and the same changes a day earlier (other SHAs): two new days."""
    today = day_commits()
    earlier = [
        make_commit(
            c.title.replace("(#1", "(#2"),
            repo=c.repo,
            committed_at=c.committed_at - timedelta(days=1),
            files=list(c.files),
        )
        for c in today
    ]
    return [*today, *earlier]


async def test_one_person_asking_for_many_new_days_is_held_to_the_rate(tmp_path, slack):  # noqa: F811
    """CHAT_DAYS_PER_HOUR counts the days a person has built anew (each costs its fetch and a model call
    per commit): past it, a private line says when to ask again; a day built before comes at once and
    does not count, and another person has their own rate."""
    commits = two_days()
    with FakeLLM() as fake:
        settings = make_settings(
            tmp_path, slack, digest_model=fake.model, openai_base_url=fake.base_url, chat_days_per_hour=1
        )
        service = chat_service(
            settings, Store(settings.digest_db), source_factory=lambda repo: MemorySource(repo, commits)
        )
        service.clock = lambda: datetime(2026, 1, 28, tzinfo=ZoneInfo("UTC"))
        app = build_app(settings, service)
        try:
            for day, user in [
                ("2026-01-26", "U1"),  # new: counted
                ("2026-01-25", "U1"),  # new, past U1's rate: refused before any fetch or model call
                ("2026-01-26", "U1"),  # built before: free, answered ("already in this channel")
                ("2026-01-25", "U2"),  # another person: their own rate
            ]:
                await send_command(app, slack, day, user=user)
                await app.bot.tasks.drain(30)
        finally:
            await app.bot.tasks.close(5)
        purposes = [call.purpose for call in fake.log]
    assert purposes == ["analysis"] * len(commits)  # each day's commits once, none for the refusal
    refusal, again = [r["text"] for r in slack.responses]
    assert "1 new days digested in the last hour" in refusal and "2026-01-25 again in 60 min" in refusal
    assert again == "That digest is already in this channel; nothing was missing."
    headings = [m.text for m in slack.channel_messages(CHANNEL)]
    assert len(headings) == 2 and "2026-01-26" in headings[0] and "2026-01-25" in headings[1]
