"""The flood caps (bot/chat/floods.py) on a clock the test moves: windows checked together, a refusal that
costs no slot, one notice a minute, and the settings that size them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bot.chat.floods import AnswerFloods, Caps, CardFloods, Refusal, ThreadLimiter, refusal_text
from bot.config.settings import Settings
from tests.fakes.clock import ManualClock


def test_a_channel_gets_its_cards_then_one_notice_a_minute():
    clock = ManualClock()
    floods = CardFloods(3, clock=clock)
    assert [floods.admit("slack:C1") for _ in range(3)] == [None] * 3
    refusals = [floods.admit("slack:C1") for _ in range(50)]
    assert all(r is not None and r.reason == "channel" and r.limit == 3 for r in refusals)
    assert [r.notice for r in refusals if r is not None] == [True] + [False] * 49
    assert floods.admit("slack:C2") is None  # another channel: its own rate
    clock.now += 61
    assert floods.admit("slack:C1") is None  # a minute later: room again, and a notice again when past it
    assert [floods.admit("slack:C1") for _ in range(2)] == [None, None]
    refused = floods.admit("slack:C1")
    assert refused is not None and refused.notice


def test_the_window_that_holds_longest_is_said_and_a_refusal_counts_nowhere():
    clock = ManualClock()
    thread, asker = ThreadLimiter(2, clock=clock), ThreadLimiter(5, clock=clock)
    caps = Caps({"thread": thread, "asker": asker})
    assert caps.admit({"thread": "T1", "asker": "U1"}) is None
    clock.now += 10
    assert caps.admit({"thread": "T1", "asker": "U1"}) is None
    refused = caps.admit({"thread": "T1", "asker": "U1"})
    assert refused == Refusal("thread", 2, 50.0)  # the first of T1's two answers leaves in 50 s
    assert asker.wait("U1") == 0 and len(asker._calls["U1"]) == 2  # the refusal took no slot of U1's


def test_answers_are_capped_per_thread_per_asker_and_in_all():
    clock = ManualClock()
    floods = AnswerFloods(per_thread=10, per_asker=6, in_all=12, clock=clock)
    one_asker = [floods.admit("T1", "U1") for _ in range(8)]
    assert one_asker[:6] == [None] * 6 and {r.reason for r in one_asker[6:] if r} == {"asker"}
    many = [floods.admit("T1", f"U{i}") for i in range(2, 10)]
    assert many[:4] == [None] * 4 and {r.reason for r in many[4:] if r} == {"thread"}  # 10 in T1
    others = [floods.admit(f"T{i}", f"V{i}") for i in range(2, 6)]
    assert others[:2] == [None] * 2 and {r.reason for r in others[2:] if r} == {"all"}  # 12 in all
    notices = [r.notice for r in [*one_asker, *many] if r is not None]
    assert notices.count(True) == 1  # T1 was told once, whichever cap held it


def test_a_question_given_back_costs_no_answer():
    floods = AnswerFloods(per_thread=1, per_asker=1, in_all=1, clock=ManualClock())
    assert floods.admit("T1", "U1") is None
    floods.give_back("T1", "U1")  # not our thread after all
    assert floods.admit("T2", "U1") is None


def test_the_refusal_says_when_to_retry_in_whole_seconds():
    text = refusal_text("en", Refusal("channel", 20, 41.2))
    assert "20 were asked for in the last minute" in text and "Ask again in 42 s." in text
    assert "abc1234 again in 1 s" in refusal_text("en", Refusal("model", 30, 0.1), "abc1234")
    assert "10 个问题" in refusal_text("zh", Refusal("thread", 10, 5))


@pytest.mark.parametrize(
    "name",
    [
        "chat_channel_cards_per_minute",
        "chat_model_cards_per_minute",
        "qa_answers_per_minute",
        "qa_asker_answers_per_minute",
        "qa_answers_per_minute_all",
    ],
)
def test_the_caps_are_settings_and_zero_is_refused(name, monkeypatch):
    monkeypatch.setenv(name.upper(), "7")
    assert getattr(Settings(_env_file=None), name) == 7
    monkeypatch.setenv(name.upper(), "0")
    with pytest.raises(ValidationError):
        Settings(_env_file=None)


def test_the_defaults():
    s = Settings(_env_file=None)
    assert (s.chat_channel_cards_per_minute, s.chat_model_cards_per_minute) == (20, 30)
    assert (s.qa_answers_per_minute, s.qa_asker_answers_per_minute, s.qa_answers_per_minute_all) == (
        10,
        6,
        60,
    )
