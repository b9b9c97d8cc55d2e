"""Fact-check notes say how many statements were removed, never what: an invented path or figure must
not reach a report or a chat card. The JSON output and the llm_calls table keep the details."""

from __future__ import annotations

import json

import pytest

from analysis.render.discord_embeds import card_messages as discord_card
from analysis.render.json_report import dumps, render_json
from analysis.render.markdown import render_report
from analysis.render.slack_blocks import card_messages as slack_card
from bot.digest.pipeline import build_digest
from tests.bot.digest.test_llm_analyzer import DAY, REPO, TZ, analyzer_for, calls, commit, rec  # noqa: F401
from tests.fakes.sources import MemorySource

INVENTED = ("vllm/nonexistent/canary_module.py", "37.5%")


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_removed_statements_are_counted_for_readers_and_detailed_for_tools(
    fake,
    store,
    analyzer_for,  # noqa: F811
    lang,
) -> None:
    c = commit("[Feature] Add a hub resolver (#7)", path="src/resolver.py")
    fake.force(
        importance="high",
        summary=f"Adds a hub resolver. It rewrites {INVENTED[0]}. Lookups are {INVENTED[1]} faster.",
        risks=["Check the resolver cache.", f"Watch {INVENTED[0]} for regressions."],
    )
    digest = await build_digest(
        MemorySource(REPO, [c]), store, analyzer_for(fake), branch="main", day=DAY, tz=TZ, lang=lang
    )
    analysis = digest.analyses[c.sha]
    assert analysis.analyzer == "llm"
    note = next(n for n in analysis.notes if "grounding" in n or "事实核查" in n)
    assert ("removed 3 statements" in note) if lang == "en" else ("删除了 3 处" in note)

    shown = [
        render_report([digest], lang),
        json.dumps(slack_card(c, analysis, lang), ensure_ascii=False),
        json.dumps(discord_card(c, analysis, lang), ensure_ascii=False),
    ]
    for text in shown:
        for invented in INVENTED:
            assert invented not in text

    out = json.loads(dumps(render_json(digest)))
    [entry] = [e for e in out["commits"] if e["sha"] == c.sha]
    assert entry["analysis"]["grounding_removed"] == list(INVENTED)
    [row] = [r for r in calls(store) if r["purpose"].startswith("analysis")]
    assert row["outcome"] == "ok" and f"grounding removed: {INVENTED[0]}, {INVENTED[1]}" in row["error"]
