"""bot/chat/pending.py's recovery of a question a dead process left: whatever goes wrong while it is
answered after the restart, its claim is ended, never held (and renewed) for ever with the asker's words."""

from __future__ import annotations

import asyncio
import logging

from adapters.slack.thread_answers import ThreadAnswers
from tests.adapters.slack.test_slack_app import _clean_env, settings, slack  # noqa: F401  (fixtures)
from tests.adapters.slack.test_slack_pending import plant_claim, question_in_a_thread, restarted
from tests.bot.store.test_pending_questions import claim_state
from tests.fakes.slack_api import eventually


async def test_a_bug_while_recovering_a_question_ends_its_claim(settings, slack, monkeypatch, caplog):  # noqa: F811
    """Only a DigestError ended the claim: any other exception from reading the thread back was logged, the
    claim stayed "answering", this process renewed it every 20 s for ever, and the question, never
    answered nor dropped, kept the asker's words in the store."""
    _, event = await question_in_a_thread(settings, slack)
    plant_claim(settings, event)

    async def broken(self, question):  # a bug, not a Slack error (those are DigestError)
        raise KeyError("messages")

    monkeypatch.setattr(ThreadAnswers, "answered", broken)
    with caplog.at_level(logging.INFO):
        runtime = await restarted(settings)
        try:
            await eventually(lambda: claim_state(settings.digest_db, event["ts"]) is None, timeout=20)
            await asyncio.sleep(0.2)
        finally:
            await runtime.stop()
    assert claim_state(settings.digest_db, event["ts"]) is None  # nothing left holding the question
    assert "answering it after the restart failed; not tried again" in caplog.text
