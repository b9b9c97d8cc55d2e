import pytest

from analysis.errors import InputError
from analysis.questions.parse import question_lang
from bot.chat.commands import parse_command


@pytest.mark.parametrize("text", ["", "help", "  HELP ", "?"])
def test_help(text):
    assert parse_command(text).action == "help"


def test_card_and_day():
    cmd = parse_command("abc1234", "o/n")
    assert (cmd.action, cmd.ref.value, cmd.repo) == ("card", "abc1234", "o/n")
    day = parse_command("2026-01-29", "o/n")
    assert (day.action, day.ref.value, day.repo) == ("day", "2026-01-29", "o/n")
    named = parse_command("2026-01-29 a/b", "o/n")
    assert (named.action, named.repo) == ("day", "a/b")


def test_subscribe_options():
    cmd = parse_command("subscribe vllm-project/vllm 08:30 Asia/Shanghai en")
    assert cmd.action == "subscribe" and cmd.repo == "vllm-project/vllm"
    assert cmd.options == {"time": "08:30", "tz": "Asia/Shanghai", "lang": "en"}
    # a whole-hour offset as people write it
    assert parse_command("subscribe o/n 09:00 UTC+8").options == {"time": "09:00", "tz": "Etc/GMT-8"}


@pytest.mark.parametrize(
    "text",
    [
        "subscribe",
        "subscribe notarepo",
        "subscribe o/n 25:00",
        "subscribe o/n Mars/X",
        "subscribe o/n UTC+05:30",
        "unsubscribe",
        "abc1234 def5678",
        "what is this",
    ],
)
def test_bad_commands_are_clear(text):
    with pytest.raises(InputError):
        parse_command(text, "o/n")


def test_question_language():
    assert question_lang("这个提交有什么风险？") == "zh"
    assert question_lang("what are the risks?") == "en"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what could this break?", True),
        ("Which commit is riskiest", True),
        ("这个提交有什么风险", True),
        ("会影响旧的检查点吗", True),
        ("thanks!", False),
        ("+1", False),
        ("谢谢", False),
        ("lgtm", False),
    ],
)
def test_replies_that_are_questions(text, expected):
    from analysis.questions.parse import is_question

    assert is_question(text) is expected


@pytest.mark.parametrize(("word", "tz"), [("EST", "EST"), ("est5edt", "EST5EDT"), ("cet", "CET")])
def test_subscribe_takes_any_zone_the_tz_database_knows(word, tz):
    """EST and EST5EDT were "cannot read" in chat though DIGEST_TZ and the config file take them: now
    taken (the reply warns about them, bot/chat/service.py)."""
    assert parse_command(f"subscribe o/n 09:00 {word}").options == {"time": "09:00", "tz": tz}
