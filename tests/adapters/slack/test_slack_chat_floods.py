"""Floods against the fake Slack on 127.0.0.1 (bot/chat/floods.py): 500 `/digest <sha>` in one channel a
minute, 1,000 replies in one digest thread. The channel gets its cards and the thread its answers up to
their caps; past them the channel or thread is told once a minute when to retry, and nothing else is sent
to Slack for the refusals (the refused /digest hear it in the acknowledgement Slack waits for anyway)."""

from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo

from adapters.slack.runtime import build_app
from bot.app import chat_service
from bot.chat.floods import AnswerFloods, CardFloods
from bot.delivery.posting import post_digest
from bot.store.db import Store
from tests.adapters.slack.test_slack_app import (  # noqa: F401  (fixtures)
    CHANNEL,
    REPO,
    TZ,
    _clean_env,
    body_text,
    build_day,
    day_commits,
    make_service,
    make_settings,
    send_command,
    send_event,
    slack,
)
from tests.fakes.clock import ManualClock
from tests.fakes.digests import many_commits
from tests.fakes.openai_server import FakeLLM
from tests.fakes.sources import MemorySource

PAUSED = "Card requests are paused in this channel: 20 were asked for in the last minute"


async def test_500_card_requests_in_a_minute_give_20_cards_and_one_notice(tmp_path, slack):  # noqa: F811
    commits = many_commits(60)
    settings = make_settings(tmp_path, slack)
    service = chat_service(
        settings, Store(settings.digest_db), source_factory=lambda repo: MemorySource(repo, commits)
    )
    clock = ManualClock()
    service.card_floods = CardFloods(settings.chat_channel_cards_per_minute, clock=clock)
    app = build_app(settings, service)
    acks = []
    try:
        for minute in range(2):
            for i in range(500):
                sha = commits[(minute * 500 + i) % len(commits)].sha
                acks.append(await send_command(app, slack, sha[:10], user=f"U{i % 7}"))
            await app.bot.tasks.drain(60)
            assert len(slack.channel_messages(CHANNEL)) == 20 * (minute + 1)
            clock.now += 61
    finally:
        await app.bot.tasks.close(5)
    assert {a.status for a in acks} == {200}
    bodies = [json.loads(a.body) for a in acks]
    public = [b for b in bodies if b.get("response_type") == "in_channel"]
    private = [b for b in bodies if b.get("response_type") == "ephemeral" and PAUSED in b["text"]]
    assert len(public) == 2 and all(PAUSED in b["text"] and "Ask again in" in b["text"] for b in public)
    assert len(private) == 2 * 479  # every other refused request hears it, privately, in its ack
    assert sum("Analysing" in b.get("text", "") for b in bodies) == 40
    assert slack.responses == [] and slack.ephemerals == []  # no call to Slack for any refusal


async def posted_thread(app, service) -> str:
    digest = await build_day(service)
    result = await post_digest(app.bot.poster, service.store, CHANNEL, digest)
    assert result.thread_id
    return result.thread_id


def ask(thread: str, i: int, user: str) -> dict:
    ts = f"{1769400000 + i}.000100"
    return {
        "type": "message",
        "user": user,
        "text": "what are the riskiest commits?",
        "ts": ts,
        "thread_ts": thread,
    }


async def test_1000_replies_in_one_thread_give_10_answers_and_one_notice(tmp_path, slack):  # noqa: F811
    settings = make_settings(tmp_path, slack)
    service = make_service(settings)
    clock = ManualClock()
    service.answer_floods = AnswerFloods(10, 6, 60, clock=clock)
    loads = []
    load = service.thread_context
    service.thread_context = lambda *a, **kw: loads.append(a) or load(*a, **kw)
    app = build_app(settings, service)
    try:
        thread = await posted_thread(app, service)
        before = len(slack.thread(CHANNEL, thread))
        for i in range(1000):
            await send_event(app, ask(thread, i, f"U{i}"))
        await app.bot.tasks.drain(60)
        first = [body_text(m) for m in slack.thread(CHANNEL, thread)[before:]]
        clock.now += 61  # a minute later: ten more, one more notice
        for i in range(1000, 1030):
            await send_event(app, ask(thread, i, f"U{i}"))
        await app.bot.tasks.drain(60)
        second = [body_text(m) for m in slack.thread(CHANNEL, thread)[before + len(first) :]]
    finally:
        await app.bot.tasks.close(5)
    told = "I've answered 10 questions in this thread in the last minute"
    for replies in (first, second):
        notices = [r for r in replies if told in r]
        assert len(notices) == 1 and "new ones in" in notices[0]
        answers = [r for r in replies if told not in r]
        assert len(answers) == 10 and all("Commits carrying the most risk" in a for a in answers)
    assert len(loads) == 22  # the refused questions past the notice never load the digest
    claimed = service.store.query("SELECT COUNT(*) AS n FROM answered_questions")[0]["n"]
    assert claimed == 20  # nor are they claimed: a restart has nothing of the flood to answer


async def test_one_asker_gets_6_answers_a_minute_and_the_thread_is_told_once(tmp_path, slack):  # noqa: F811
    settings = make_settings(tmp_path, slack)
    service = make_service(settings)
    app = build_app(settings, service)
    try:
        thread = await posted_thread(app, service)
        before = len(slack.thread(CHANNEL, thread))
        for i in range(40):
            await send_event(app, ask(thread, i, "UFLOOD"))
        await app.bot.tasks.drain(60)
        replies = [body_text(m) for m in slack.thread(CHANNEL, thread)[before:]]
    finally:
        await app.bot.tasks.close(5)
    [notice] = [r for r in replies if "from one person" in r]
    assert "6 questions from one person in the last minute" in notice and "ask again in" in notice
    assert len(replies) == 7


async def test_the_models_card_budget_is_shared_by_everyone(tmp_path, slack):  # noqa: F811
    """CHAT_MODEL_CARDS_PER_MINUTE: three people, each within their own rate, ask for three new commits; the
    model analyses two and the third hears privately when to ask again. A refusal costs the asker no slot."""
    shas = [c.sha for c in day_commits()[:3]]
    with FakeLLM() as fake:
        settings = make_settings(
            tmp_path,
            slack,
            digest_model=fake.model,
            openai_base_url=fake.base_url,
            chat_model_cards_per_minute=2,
        )
        service = make_service(settings, analyzer=None)
        service.clock = lambda: datetime(2026, 1, 28, tzinfo=ZoneInfo("UTC"))
        app = build_app(settings, service)
        try:
            for user, sha in zip(("U1", "U2", "U3"), shas, strict=True):
                await send_command(app, slack, sha[:10], user=user)
                await app.bot.tasks.drain(30)
        finally:
            await app.bot.tasks.close(5)
        purposes = [call.purpose for call in fake.log]
    assert purposes == ["analysis"] * 2
    [refusal] = [r["text"] for r in slack.responses]
    assert "analysed 2 new commits for cards in the last minute" in refusal and shas[2][:7] in refusal
    assert "again in" in refusal and len(slack.channel_messages(CHANNEL)) == 2
    assert service.rates.cards.wait("slack:U3") == 0 and not service.rates.cards._calls.get("slack:U3")
