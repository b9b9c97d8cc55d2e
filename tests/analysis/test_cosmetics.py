"""What readers see of hostile text: a neutralised mention still reads as itself, a dropped link leaves
nothing behind, and terminal escapes go whole (not "[31m" without its ESC)."""

from __future__ import annotations

import json

import pytest

from analysis import heuristic
from analysis.llm.echo import tidy
from analysis.models import FileChange
from analysis.render.discord_embeds import card_messages as discord_card
from analysis.render.markdown import render_commit
from analysis.render.slack_blocks import card_messages as slack_card
from analysis.text import ZWSP, neutralize_mentions
from tests.fakes.digests import make_analysis, make_commit

FILES = [FileChange(f"src/m{i}.py", "modified", 40, 30, "@@ -1 +1 @@\n-a\n+b") for i in range(6)]


def test_a_neutralised_here_survives_tidying_whole():
    commit = make_commit()
    analysis = make_analysis(
        commit,
        "high",
        summary=neutralize_mentions("Ping <!here> now. Really?"),
        risks=[neutralize_mentions("<!here> check the cache")],
    )
    out = tidy(analysis, "Describe the change.", "en", reason_fallback="size")
    assert out.summary == f"Ping <{ZWSP}!here> now. Really?"
    assert out.risks == [f"<{ZWSP}!here> check the cache"]


def test_a_dropped_disguised_link_leaves_no_stray_bracket():
    body = "See <https://evil.example/a|the docs> and <https://evil.example/b> for details."
    commit = make_commit("[Feature] Add the exporter (#9)", body=body, files=FILES)
    analysis = heuristic.analyze(commit, "en")
    assert "See the docs and for details." in analysis.summary
    assert "<" not in analysis.summary and "evil.example" not in analysis.summary
    slack = json.dumps(slack_card(commit, analysis, "en"), ensure_ascii=False)
    assert "&lt; " not in slack and "&lt;the" not in slack


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[31mred\x1b[0m text", "red text"),
        ("\x1b[1;32mok\x1b[0m", "ok"),
        ("\x9b31mred", "red"),
        ("title\x1b]0;pwned\x07 here", "title here"),
        ("[31mred[0m left over", "red left over"),
        ("timeout [5m] and [5min] stay", "timeout [5m] and [5min] stay"),
    ],
)
def test_terminal_sequences_go_whole(raw, clean):
    assert neutralize_mentions(raw) == clean


def test_no_ansi_remnant_in_any_rendering():
    commit = make_commit("Fix \x1b[31mcolour\x1b[0m output (#3)", body="Now \x1b[1mbold\x1b[0m.", files=FILES)
    analysis = heuristic.analyze(commit, "en")
    texts = [
        render_commit(commit, analysis, "en"),
        json.dumps(slack_card(commit, analysis, "en"), ensure_ascii=False),
        json.dumps(discord_card(commit, analysis, "en"), ensure_ascii=False),
    ]
    for text in texts:
        assert "[31m" not in text and "[0m" not in text and "[1m" not in text
        assert "colour" in text
