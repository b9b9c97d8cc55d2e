"""Discord embeds and content: limits always respected, long text split and never cut, untrusted text
inert (no mentions, no layout-breaking Markdown, no links but ours)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from analysis.models import Importance
from analysis.render.discord_embeds import (
    CONTENT_MAX,
    DESCRIPTION_MAX,
    FIELD_VALUE_MAX,
    THREAD_NAME_MAX,
    card_messages,
    content_chunks,
    dc_text,
    embed_chars,
    high_list_messages,
    medium_list_messages,
    message_problems,
    pack_embeds,
    parent_embed,
    split_markdown,
    split_utf8,
    thread_name,
)
from analysis.text import ZWSP
from tests.fakes.digests import (
    HOSTILE_TEXTS,
    LONG_TEXT,
    hostile_digest,
    make_analysis,
    make_commit,
    make_digest,
)
from tests.fakes.discord_api import FakeDiscord

LIVE_MENTION = re.compile(r"@(everyone|here)\b|<@!?\d+>|<@&\d+>|<#\d+>")
URL = "https://github.com/acme/widgets/commit/"


def texts(message: dict[str, Any], *, markdown_only: bool = False) -> list[str]:
    """Every string Discord would display from a message (only those it renders as Markdown: footer and
    author name are plain text)."""
    out = [message.get("content") or ""]
    for e in message.get("embeds", []):
        out += [e.get("title", ""), e.get("description", "")]
        if not markdown_only:
            out += [e.get("footer", {}).get("text", ""), e.get("author", {}).get("name", "")]
        out += [t for f in e.get("fields", []) for t in (f["name"], f["value"])]
    return [t for t in out if t]


def bodies(message: dict[str, Any]) -> list[str]:
    """Descriptions and field values in order: where split text continues."""
    out = []
    for e in message.get("embeds", []):
        out += [e.get("description", "")] + [f["value"] for f in e.get("fields", [])]
    return out


def assert_valid(messages: list[dict[str, Any]]) -> None:
    fake = FakeDiscord()  # Discord's checks as written in the fake, independently of the renderer
    for message in messages:
        assert message_problems(message) == []
        assert fake.validate_message(message, []) == {}


def squash(text: str) -> str:
    return "".join(text.split())


# --- parent -------------------------------------------------------------------------------------------


def test_parent_embed_has_repo_day_counts_and_linked_high_items():
    digest = make_digest(lang="en")
    embed = parent_embed(digest)
    assert "acme/widgets" in embed["title"] and "2026-01-26" in embed["title"]
    counts = {f["name"]: f["value"] for f in embed["fields"]}
    assert counts == {"🔴 High": "2", "🟡 Medium": "2", "🟢 Low": "3"}
    for commit in digest.by_importance(Importance.HIGH):
        assert f"]({URL}{commit.sha})" in embed["description"]  # the one-liner links to the commit
        assert commit.short_sha in embed["description"]
    for commit in digest.by_importance(Importance.LOW):
        assert commit.sha not in embed["description"]
    assert embed["url"] == "https://github.com/acme/widgets"
    assert_valid([{"embeds": [embed]}])


def test_parent_embed_with_hundreds_of_long_high_items_stays_within_limits():
    commits = [make_commit(f"[Perf] {'very long title ' * 30} {i}") for i in range(300)]
    digest = make_digest(["high"] * 300, commits=commits)
    embed = parent_embed(digest)
    assert len(embed["description"]) <= DESCRIPTION_MAX
    shown = embed["description"].count("\n• ")
    assert 0 < shown < 300
    assert f"另有 {300 - shown} 项，见讨论串" in embed["description"]  # the rest are counted, not lost
    assert_valid([{"embeds": [embed]}])


def test_parent_embed_of_an_empty_day():
    digest = make_digest([], lang="en")
    embed = parent_embed(digest)
    assert "No commits in this window." in embed["description"]
    assert_valid([{"embeds": [embed]}])


def test_thread_name_fits_and_is_plain():
    digest = make_digest(repo="o" * 39 + "/" + "n" * 100)
    name = thread_name(digest)
    assert len(name) <= THREAD_NAME_MAX and name.startswith("2026-01-26 · ooo") and name.endswith("…")
    assert thread_name(hostile_digest()) == "2026-01-26 · evil|org/<script>*repo*"  # no Markdown there


# --- cards --------------------------------------------------------------------------------------------


def test_card_has_linked_title_type_importance_summary_risks_and_recommendations():
    commit = make_commit("[Bugfix] Fix the widget cache (#1234)")
    analysis = make_analysis(
        commit,
        "high",
        change_type="bugfix",
        summary="Fixes a stale cache.",
        risks=["Cache misses on cold start"],
        recommendations=["Watch p99 latency"],
        reason="touches the hot path",
    )
    [message] = card_messages(commit, analysis, "en")
    [embed] = message["embeds"]
    assert embed["title"] == "🔴 \\[Bugfix\\] Fix the widget cache (#1234)"
    assert embed["url"] == URL + commit.sha
    assert embed["description"] == "Fixes a stale cache."
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert fields["🎯 Change type"] == "Bug fix"
    assert fields["View commit"] == f"[`{commit.short_sha}`]({URL}{commit.sha})"
    assert fields["⚡ Importance"] == "🔴 High — touches the hot path"
    assert fields["⚠️ Potential risks"] == "• Cache misses on cold start"
    assert fields["💡 Recommendations"] == "• Watch p99 latency"
    assert embed["footer"]["text"] == "acme/widgets · heuristic"
    assert_valid([message])


def test_low_card_has_no_risk_fields():
    commit = make_commit("docs: typo")
    [message] = card_messages(commit, make_analysis(commit, "low"), "zh")
    names = [f["name"] for f in message["embeds"][0]["fields"]]
    assert "⚠️ 潜在风险" not in names and "💡 关注建议" not in names


def test_huge_analysis_is_split_across_fields_embeds_and_messages_never_cut():
    commit = make_commit("Huge " + "title " * 100)
    risks = [f"risk-{i} {LONG_TEXT}" for i in range(40)]
    analysis = make_analysis(
        commit,
        "high",
        summary="summary " * 1500 + "SUMMARY-END",
        risks=risks,
        recommendations=["advice " * 700 + "ADVICE-END"],
        reason="reason " * 400,
    )
    messages = card_messages(commit, analysis, "en")
    assert len(messages) > 1
    assert_valid(messages)
    everything = squash(" ".join(t for m in messages for t in bodies(m)))
    for text in [*risks, analysis.summary, analysis.recommendations[0], analysis.importance_reason]:
        assert squash(dc_text(text)) in everything  # every word, in order
    assert everything.count("THE-END") == 40
    names = [f["name"] for m in messages for e in m["embeds"] for f in e.get("fields", [])]
    assert "⚠️ Potential risks (cont.)" in names
    # The title is one embed field that cannot be split: shortened there, whole in the description.
    assert messages[0]["embeds"][0]["title"].endswith("…")
    assert squash(dc_text(commit.title)) in squash(messages[0]["embeds"][0]["description"])
    # The footer closes the card: on the last embed only.
    footers = [e for m in messages for e in m["embeds"] if "footer" in e]
    assert footers == [messages[-1]["embeds"][-1]]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_hostile_cards_have_no_live_mentions_markdown_or_foreign_links(lang):
    digest = hostile_digest()
    for commit in digest.commits:
        messages = card_messages(commit, digest.analyses[commit.sha], lang)
        assert_valid(messages)
        for text in (t for m in messages for t in texts(m)):
            assert not LIVE_MENTION.search(text), text
            assert "<@" not in text.replace(f"<{ZWSP}@", "")
        for text in (t for m in messages for t in texts(m, markdown_only=True)):
            # Masked links: only ours, to the commit's checked URL.
            for target in re.findall(r"(?<!\\)\]\(([^)]*)\)", text):
                assert target.startswith("https://github.com/evil/repo/commit/"), target
            assert not re.search(r"https?://", _without_our_links(text)), text


def _without_our_links(text: str) -> str:
    return re.sub(r"\]\(https://github\.com/evil/repo/commit/[^)]*\)", "](…)", text)


def test_markdown_from_commit_text_is_escaped():
    out = dc_text("**bold** __u__ ~~s~~ ||spoiler|| > quote [x](https://evil.example) `code` @here <@&456>")
    for bare in ("**", "__", "~~", "||"):
        assert bare not in re.sub(r"\\.", "", out)
    assert "\\[x\\]" in out and "](" not in out.replace("\\](", "")
    assert "https:" + ZWSP + "//evil.example" in out  # a bare URL cannot auto-link
    assert "`code`" in out and "@" + ZWSP + "here" in out and "<@&456>" not in out
    assert dc_text("# not a heading").startswith("\\#")
    assert dc_text("1. not a list") == "1\\. not a list"
    assert dc_text("-# not subtext").startswith("\\-")


# --- splitting ----------------------------------------------------------------------------------------


def test_split_markdown_never_cuts_escapes_or_code_spans():
    text = " ".join(["\\*\\*x\\*\\*", "`code span here`", "word"] * 200)
    pieces = split_markdown(text, 100)
    assert all(len(p) <= 100 for p in pieces)
    for piece in pieces:
        assert not piece.endswith("\\") or piece.endswith("\\\\")
        assert piece.count("`") % 2 == 0
    assert squash("".join(pieces)) == squash(text)


def test_split_markdown_reopens_a_code_span_longer_than_the_limit():
    pieces = split_markdown("`" + "x" * 250 + "` after", 100)
    assert all(len(p) <= 100 and p.startswith("`") for p in pieces[:-1])
    assert all(p.count("`") == 2 for p in pieces[:-1])
    assert "".join(pieces).replace("`", "").replace(" after", "") == "x" * 250


def test_split_markdown_escapes_block_starts_of_continuations():
    pieces = split_markdown("a " * 40 + "# heading - list > quote 1. item", 80)
    assert all(not re.match(r"[#>-]|\d+\.", p) for p in pieces)


def test_pack_embeds_respects_every_limit():
    fields = [{"name": f"n{i}", "value": "v" * 1000, "inline": False} for i in range(60)]
    messages = pack_embeds({"title": "t", "description": "d" * 4000, "color": 1}, fields, footer="f" * 500)
    assert_valid(messages)
    assert sum(len(e.get("fields", [])) for m in messages for e in m["embeds"]) == 60
    assert all(sum(embed_chars(e) for e in m["embeds"]) <= 6000 for m in messages)


# --- medium list, content, files -------------------------------------------------------------------


def test_medium_list_keeps_every_commit_within_limits():
    commits = [make_commit(f"[Misc] medium change number {i} " + "x" * 150) for i in range(200)]
    digest = make_digest(["medium"] * 200, commits=commits, lang="en")
    messages = medium_list_messages(digest, digest.commits)
    assert_valid(messages)
    text = "\n".join(t for m in messages for t in texts(m))
    for commit in commits:
        assert f"[`{commit.short_sha}`]({URL}{commit.sha})" in text
    assert messages[0]["embeds"][0]["title"] == "🟡 Medium importance (200)"
    assert all(len(e["description"]) <= DESCRIPTION_MAX for m in messages for e in m["embeds"])


def test_the_high_list_past_the_cap_keeps_every_commit_within_limits_and_short():
    commits = [make_commit(f"[Feature] high change number {i} " + "x" * 400) for i in range(600)]
    digest = make_digest(["high"] * 600, commits=commits, lang="en")
    messages = high_list_messages(digest, digest.commits)
    assert_valid(messages)
    text = "\n".join(t for m in messages for t in texts(m))
    assert all(f"[`{c.short_sha}`]({URL}{c.sha})" in text for c in commits)
    assert messages[0]["embeds"][0]["title"].startswith("🔴 More high-importance commits (600,")
    assert "x" * 200 not in text  # a line each: long titles elided (the report has them whole)


def test_content_chunks_split_long_answers_and_defuse_them():
    answer = "\n".join(f"line {i}: @everyone see [x](https://evil.example) <@123>" for i in range(200))
    chunks = content_chunks(answer)
    assert len(chunks) > 1 and all(len(c) <= CONTENT_MAX for c in chunks)
    joined = "\n".join(chunks)
    assert not LIVE_MENTION.search(joined) and "](" not in joined.replace("\\](", "")
    assert joined.count("line ") == 200


def test_split_utf8_keeps_every_byte():
    text = "报告 ✅ line\n" * 5000
    parts = split_utf8(text, 10_000)
    assert len(parts) > 1 and all(len(p.encode()) <= 10_000 for p in parts)
    assert "".join(parts) == text


def test_every_hostile_text_survives_as_a_field():
    for text in HOSTILE_TEXTS:
        commit = make_commit("t")
        messages = card_messages(commit, make_analysis(commit, "medium", risks=[text]), "en")
        assert_valid(messages)
        values = [f["value"] for m in messages for e in m["embeds"] for f in e.get("fields", [])]
        assert squash(dc_text(text)) in squash(" ".join(values))
        assert all(len(v) <= FIELD_VALUE_MAX for v in values)


def test_card_time_is_the_commit_time():
    commit = make_commit("t")
    [message] = card_messages(commit, make_analysis(commit), "en")
    assert message["embeds"][0]["timestamp"] == commit.committed_at.isoformat()


def test_a_huge_title_takes_one_medium_line_with_its_size_stated():
    commit = make_commit("Refactor " + "the scheduler " * 4300 + " (#7)")
    messages = medium_list_messages(make_digest(["medium"], commits=[commit], lang="en"), [commit])
    assert len(messages) == 1 and len(messages[0]["embeds"]) == 1
    text = messages[0]["embeds"][0]["description"]
    assert commit.short_sha in text and "more characters" in text and len(text) < 1000
