"""Block Kit rendering: limits always respected (split, never cut), untrusted text always inert."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from analysis.models import Importance
from analysis.render.slack_blocks import (
    SECTION_TEXT_MAX,
    card_messages,
    escape,
    high_list_messages,
    medium_list_messages,
    parent_message,
    split_mrkdwn,
    tame_backticks,
    text_message,
    text_messages,
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
from tests.fakes.slack_api import message_error

MASS = re.compile(r"<!(channel|here|everyone|subteam)|<@[UW]|<#C")
BARE = re.compile(r"(?<!@" + ZWSP + r")@(channel|here|everyone)\b")
LINK = re.compile(r"<([^<>|]*)(?:\|[^<>]*)?>")


def texts(value: Any) -> list[str]:
    """Every string under a "text" key, depth first (what Slack renders)."""
    if isinstance(value, dict):
        return [
            t for k, v in value.items() for t in ([v] if k == "text" and isinstance(v, str) else texts(v))
        ]
    if isinstance(value, list):
        return [t for v in value for t in texts(v)]
    return []


def assert_valid(messages: list[dict[str, Any]]) -> None:
    """Each message is one Slack would accept (the fake's validator applies Slack's limits)."""
    assert messages
    for message in messages:
        assert message["text"], "a text fallback is always there"
        assert message_error(message) == (None, [])


def assert_inert(messages: list[dict[str, Any]], allowed_link: str) -> None:
    for text in texts(messages):
        assert not MASS.search(text), text
        assert not BARE.search(text), text
        for target in LINK.findall(text):
            assert target.startswith(allowed_link), f"unexpected link {target!r}"


def squashed(messages: list[dict[str, Any]]) -> str:
    """All rendered text with whitespace removed (continuation notes left out): a split never loses a
    character."""
    content = [m["blocks"][1:] if i else m["blocks"] for i, m in enumerate(messages)]
    return re.sub(r"\s+", "", "".join(texts(content)))


def test_escape_defeats_mentions_and_links():
    out = escape("<!channel> <@U123> <!subteam^S1> <https://evil|x> @everyone @here a & b")
    assert "<" not in out and ">" not in out
    assert "&lt;" in out and "&amp; b" in out
    assert not BARE.search(out)


def test_parent_message_has_counts_and_linked_high_one_liners():
    digest = make_digest()
    message = parent_message(digest)
    assert_valid([message])
    body = "\n".join(texts(message["blocks"]))
    assert "acme/widgets" in body and "2026-01-26" in body
    assert "🔴 高 2" in body and "🟡 中 2" in body and "🟢 低 3" in body
    for commit in digest.by_importance(Importance.HIGH):
        assert f"<{commit.url}|{commit.title}>" in body and commit.short_sha in body
    for commit in digest.by_importance(Importance.LOW):
        assert commit.short_sha not in body
    assert "acme/widgets" in message["text"]


def test_parent_message_with_a_hundred_high_commits_stays_one_valid_message():
    digest = make_digest(["high"] * 100, lang="en")
    message = parent_message(digest)
    assert_valid([message])
    body = "\n".join(texts(message["blocks"]))
    shown = sum(c.short_sha in body for c in digest.commits)
    assert 0 < shown < 100
    assert f"and {100 - shown} more high-importance commits in the thread" in body


def test_parent_message_of_an_empty_day():
    digest = make_digest([], lang="en")
    message = parent_message(digest)
    assert_valid([message])
    assert "No commits in this window." in "\n".join(texts(message["blocks"]))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_card_has_every_field_of_its_tier(lang):
    commit = make_commit("[Bugfix] Fix the widget (#77)")
    analysis = make_analysis(commit, "high", change_type="bugfix", lang=lang)
    messages = card_messages(commit, analysis, lang, tz="Asia/Shanghai")
    assert len(messages) == 1
    assert_valid(messages)
    body = "\n".join(texts(messages))
    assert f"<{commit.url}|[Bugfix] Fix the widget (#77)>" in body
    assert f"`{commit.short_sha}`" in body
    for part in ("risk of", "check ", "Summary of", "缺陷修复" if lang == "zh" else "Bug fix"):
        assert part in body
    assert "scope A" not in body and "architecture of" not in body  # thread cards stay compact
    detailed = "\n".join(texts(card_messages(commit, analysis, lang, detail=True)))
    assert "scope A" in detailed and "architecture of" in detailed


def test_low_card_is_short_and_says_summary():
    commit = make_commit("[Docs] Typo")
    messages = card_messages(commit, make_analysis(commit, "low", lang="en"), "en")
    body = "\n".join(texts(messages))
    assert "📋 Summary" in body and "Potential risks" not in body


def test_card_refuses_another_commits_analysis():
    a, b = make_commit("a"), make_commit("b")
    with pytest.raises(ValueError):
        card_messages(a, make_analysis(b), "en")


def test_huge_hostile_analysis_is_split_never_cut():
    commit = make_commit(LONG_TEXT + " <!channel>", author="<@U123> @everyone")
    risks = [f"risk {i} <!here> @channel " + " ".join(f"w{i}x{j}" for j in range(420)) for i in range(60)]
    recommendations = [f"rec {i} <https://evil.example|click> " + LONG_TEXT for i in range(12)]
    insights = {d: f"{d} " + LONG_TEXT for d in ("architecture", "performance", "security")}
    analysis = make_analysis(
        commit, "high", risks=risks, recommendations=recommendations, insights=insights, summary=LONG_TEXT
    )
    for detail in (False, True):
        messages = card_messages(commit, analysis, "zh", detail=detail)
        assert len(messages) > 3
        assert_valid(messages)
        assert_inert(messages, "https://github.com/acme/widgets/commit/")
        everything = squashed(messages)
        for text in [*risks, *recommendations, LONG_TEXT]:
            assert re.sub(r"\s+", "", escape(text)) in everything
        for later in messages[1:]:  # continuation parts say which commit they belong to
            assert commit.short_sha in later["blocks"][0]["elements"][0]["text"]


def test_one_enormous_word_is_split_between_characters_not_inside_escapes():
    word = "&<>" * 4000
    pieces = split_mrkdwn(escape(word), SECTION_TEXT_MAX)
    assert len(pieces) > 1
    assert all(re.fullmatch(r"(&amp;|&lt;|&gt;)+", p) for p in pieces)
    assert "".join(pieces) == escape(word)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_hostile_digest_renders_inert_everywhere(lang):
    digest = hostile_digest()
    digest.lang = lang
    for a in digest.analyses.values():
        a.lang = lang
    messages = [parent_message(digest)]
    messages += medium_list_messages(digest, digest.by_importance(Importance.MEDIUM))
    for commit in digest.commits:
        messages += card_messages(commit, digest.analysis_of(commit), lang, tz=digest.timezone, detail=True)
    assert_valid(messages)
    assert_inert(messages, "https://github.com/evil/repo/commit/")
    for text in texts(messages) + [m["text"] for m in messages]:
        assert "mallory" not in text  # no e-mail address, no trailer
        assert "<script>" not in text


def test_medium_list_covers_every_commit_in_as_many_messages_as_needed():
    digest = make_digest(["medium"] * 150, lang="en")
    for commit in digest.commits:
        digest.analyses[commit.sha].summary = "A fairly long summary sentence. " * 12
    messages = medium_list_messages(digest, digest.by_importance(Importance.MEDIUM))
    assert len(messages) > 1
    assert_valid(messages)
    body = "\n".join(texts(messages))
    assert all(c.short_sha in body for c in digest.commits)
    assert "(150)" in messages[0]["blocks"][0]["text"]["text"]
    assert medium_list_messages(digest, []) == []


def test_the_high_list_past_the_cap_covers_every_commit_a_short_line_each():
    commits = [make_commit(f"[Feature] high change number {i} " + "x" * 400) for i in range(600)]
    digest = make_digest(["high"] * 600, commits=commits, lang="en")
    messages = high_list_messages(digest, digest.commits)
    assert_valid(messages)
    body = "\n".join(texts(messages))
    assert all(c.short_sha in body and c.url in body for c in commits)
    assert "More high-importance commits (600," in messages[0]["blocks"][0]["text"]["text"]
    assert "x" * 200 not in body and high_list_messages(digest, []) == []


def test_commit_without_a_web_page_has_no_link():
    commit = make_commit("Local only", url=None)
    body = "\n".join(texts(card_messages(commit, make_analysis(commit, "medium"), "en")))
    assert "Local only" in body and "<" not in body


def test_text_messages_escape_and_split():
    hostile = "\n".join(HOSTILE_TEXTS) * 10
    messages = text_messages(hostile)
    assert len(messages) > 1
    assert_valid(messages)
    assert_inert(messages, "(no links)")
    assert re.sub(r"\s+", "", escape(tame_backticks(hostile))) in squashed(messages)
    assert "```" not in squashed(messages) and "back`ticks`and'''fences" in squashed(messages)
    assert (
        text_message("*usage*: `/digest <sha>`")["blocks"][0]["text"]["text"]
        == "*usage*: `/digest &lt;sha&gt;`"
    )
    with pytest.raises(ValueError):
        text_message(hostile)


def test_cards_use_the_time_zone_given():
    digest = make_digest(["high"])
    commit = digest.commits[0]
    shanghai = "\n".join(texts(card_messages(commit, digest.analysis_of(commit), "en", tz="Asia/Shanghai")))
    utc = "\n".join(texts(card_messages(commit, digest.analysis_of(commit), "en", tz="UTC")))
    local = commit.committed_at.strftime("%Y-%m-%d %H:%M")
    assert local in shanghai and "Asia/Shanghai" in shanghai
    assert (commit.committed_at - timedelta(hours=8)).strftime("%H:%M") in utc


def test_a_hostile_branch_name_stays_one_code_span_without_mentions():
    # git allows backticks and "@here" in a ref name; the context line's code span broke on the backtick
    message = parent_message(make_digest(branch="rel`@here`<!channel>|x", lang="en"))
    assert_valid([message])
    body = "\n".join(texts(message["blocks"]))
    assert f"`rel'@{ZWSP}here'&lt;{ZWSP}!channel&gt;|x`" in body


def test_a_fence_or_lone_backtick_in_a_title_cannot_turn_our_lines_into_code():
    # mrkdwn has no escape: the first title's "```" opened a code block that ran over the next one-liner and
    # its SHA to the second title's "```"; a lone backtick paired with the code span of the SHA after it
    titles = ["Add ``` fence", "Fix `parse_args` crash", "Drop a lone ` tick", "Close ```python fence"]
    commits = [
        make_commit(t, committed_at=datetime(2026, 1, 26, 12 - i, tzinfo=UTC)) for i, t in enumerate(titles)
    ]
    digest = make_digest(["high"] * 4, commits=commits, lang="en")
    messages = [parent_message(digest)]
    for commit in commits:
        messages += card_messages(commit, digest.analysis_of(commit), "en", detail=True)
    assert_valid(messages)
    body = "\n".join(texts(messages))
    assert "```" not in body
    for line in body.splitlines():
        assert line.count("`") % 2 == 0, line  # every code span on a line is closed on it
    assert "Add ''' fence" in body and "Close '''python fence" in body and "Drop a lone ' tick" in body
    assert "Fix `parse_args` crash" in body  # a balanced code span stays one
    assert all(f"`{c.short_sha}`" in body for c in commits)


def test_emphasis_characters_in_a_title_cannot_format_our_lines():
    # mrkdwn has no escape for * _ ~: "Fix *args and **kwargs*" made half the title bold, and a title's "*"
    # could close the bold of our own labels; snake_case and code spans stay exactly as written
    commit = make_commit("Fix *args and **kwargs* in ~/cfg, _private_ and enable_foo, `a*b` (#7)")
    digest = make_digest(["high"], commits=[commit], lang="en")
    messages = [parent_message(digest), *card_messages(commit, digest.analysis_of(commit), "en", detail=True)]
    assert_valid(messages)
    body = "\n".join(texts(messages))
    visible = body.replace(ZWSP, "")
    assert "Fix *args and **kwargs* in ~/cfg, _private_ and enable_foo, `a*b`" in visible
    title_lines = [line for line in body.splitlines() if "kwargs" in line]
    assert title_lines
    for line in title_lines:
        plain = line.split("`a*b`")[0]  # what mrkdwn may format: outside the code span
        assert not re.search(r"(?<![\u200b])[*~]|(?<![\w\u200b])_", plain.split("Fix", 1)[1]), line
    assert "enable_foo" in body and "`a*b`" in body


def test_a_huge_title_or_summary_takes_one_medium_line_with_its_size_stated():
    # a 60,000-character title was posted whole, twice (title and summary), in 14 messages
    huge = "Refactor " + "the scheduler " * 4300
    commit = make_commit(huge + " (#7)")
    digest = make_digest(["medium"], commits=[commit], lang="en")
    digest.analyses[commit.sha].summary = f'Commit "{huge}" changes 1 file.'
    messages = medium_list_messages(digest, [commit])
    assert len(messages) == 1
    assert_valid(messages)
    body = "\n".join(texts(messages))
    assert commit.short_sha in body and body.count("more characters") == 2 and len(body) < 2000
