"""The day after a subscription's zone changed says so in one line, in the summary (Slack's parent, Discord's
parent embed) and the report, naming both zones; a plain day says nothing of it."""

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from analysis.render.discord_embeds import parent_embed
from analysis.render.markdown import render_report
from analysis.render.slack_blocks import parent_message
from tests.fakes.digests import make_digest

SAID = {
    "en": "🕘 Time zone changed from UTC+08:00 to UTC: this digest starts at 2026-01-26 16:00 (UTC+00:00),"
    " where the previous day's digest ended, so no commit between the two is missed or posted twice.",
    "zh": "🕘 时区已由 UTC+08:00 改为 UTC：本期从 2026-01-26 16:00 (UTC+00:00) 开始，即上一期摘要结束之处，"
    "两期之间的提交不漏也不重。",
}


def moved(lang):
    plain = make_digest(tz="UTC", lang=lang)
    start = datetime(2026, 1, 26, 16, tzinfo=UTC)  # where the day before, in UTC+8, ended
    return plain, replace(plain, window_start=start, previous_zone="Etc/GMT-8")


def texts(digest):
    return [
        str(parent_message(digest)["blocks"]),
        str(parent_embed(digest)),
        render_report([digest], digest.lang),
    ]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_moved_day_says_it_once_in_summary_and_report(lang):
    plain, day = moved(lang)
    assert [text.count(SAID[lang]) for text in texts(day)] == [1, 1, 1]
    assert [SAID[lang][:6] in text for text in texts(plain)] == [False, False, False]
