"""One commit cannot flood a thread: a 190 KB commit message (in its body or as one endless title
line) still gives a card of at most 3 messages on Slack and Discord, with the quoted text elided and
its size stated."""

from __future__ import annotations

import re

import pytest

from analysis import heuristic
from analysis.labels import quote_elided
from analysis.models import FileChange, Importance
from analysis.render.discord_embeds import card_messages as discord_card
from analysis.render.discord_embeds import message_problems
from analysis.render.slack_blocks import card_messages as slack_card
from tests.fakes.digests import make_commit
from tests.fakes.slack_api import message_error

WORDS = ("alpha", "beta", "gamma,", "kernel", "x=1", "cache")
HUGE = " ".join(WORDS[i * 7 % len(WORDS)] for i in range(32_000))  # ~190 KB, no sentence end
FILES = [FileChange(f"src/m{i}.py", "modified", 400, 300, "@@ -1 +1 @@\n-a\n+b") for i in range(12)]


@pytest.mark.parametrize("where", ["body", "title", "author"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_190_kb_message_gives_a_card_of_at_most_3_messages(where, lang):
    commit = {
        "body": lambda: make_commit("[Feature] Huge change (#1)", body=HUGE, files=FILES),
        "title": lambda: make_commit("[Feature] " + HUGE, files=FILES),
        "author": lambda: make_commit("[Feature] Huge change (#1)", body=HUGE, author=HUGE, files=FILES),
    }[where]()
    analysis = heuristic.analyze(commit, lang)
    assert analysis.importance != Importance.LOW  # the summary quotes the message
    slack = slack_card(commit, analysis, lang)
    discord = discord_card(commit, analysis, lang)
    assert 1 <= len(slack) <= 3 and 1 <= len(discord) <= 3
    assert all(message_error(m)[0] is None for m in slack)
    assert all(message_problems(m) == [] for m in discord)
    stated = "more characters not quoted" if lang == "en" else "个字符未引用"
    assert stated in analysis.summary
    assert len(analysis.summary) < 2_000


def test_quote_elided_states_what_it_left_out():
    text = "word " * 1000
    short = quote_elided("en", text, 100)
    kept, left = re.match(r"(.*)… \(([\d,]+) more characters not quoted\)$", short).groups()
    assert len(kept) <= 100 and len(kept) + int(left.replace(",", "")) == len(text)
    assert quote_elided("en", "short", 100) == "short"


def test_a_long_first_sentence_below_the_hard_cap_is_still_quoted_whole():
    sentence = "This change rewrites the scheduler " + "and more " * 40 + "end."  # ~400 characters
    commit = make_commit("[Feature] Scheduler (#2)", body=sentence, files=FILES)
    analysis = heuristic.analyze(commit, "en")
    assert sentence.rstrip(".") in analysis.summary
