"""Answers in Slack mrkdwn and Discord Markdown: our links work, untrusted text stays inert, nothing is cut."""

import re

from analysis.questions.document import Answer, Link, Strong
from analysis.render.answer import discord_chunks, slack_messages, slack_mrkdwn
from analysis.render.discord_embeds import CONTENT_MAX, message_problems
from analysis.render.slack_blocks import SECTION_TEXT_MAX
from tests.fakes.digests import HOSTILE_TEXTS, make_commit

SLACK_LIVE = re.compile(r"<!(channel|here|everyone|subteam)|<@U|<https://evil|<javascript")
DISCORD_LIVE = re.compile(
    r"@(everyone|here)\b|<@!?\d+>|<@&\d+>|(?<!\\)\[[^\]`]*\]\((?!<https://github\.com/)"
)


def hostile_answer() -> tuple[Answer, list]:
    a = Answer("en")
    a.add(Strong("Commits carrying the most risk:"))
    commits = []
    for i, text in enumerate(HOSTILE_TEXTS):
        commit = make_commit(f"{text} (#{300 + i})")
        commits.append(commit)
        a.add("• ", a.cite(commit), " ", commit.title, " — risk: ", text)
    a.add("<!channel> <https://evil.example|click> [x](https://evil.example) @here")
    return a, commits


def test_slack_links_our_commits_and_nothing_else():
    a, commits = hostile_answer()
    body = slack_mrkdwn(a)
    assert body.startswith("*Commits carrying the most risk:*")
    for commit in commits:
        assert f"<{commit.url}|{commit.short_sha}>" in body
    assert not SLACK_LIVE.search(body)
    assert "&lt;\u200b!channel&gt;" in body


def test_slack_splits_long_answers_without_losing_a_line():
    a, commits = hostile_answer()
    messages = slack_messages(a)
    assert len(messages) > 1  # LONG_TEXT needs more than one message
    shown = "\n".join(b["text"]["text"] for m in messages for b in m["blocks"] if b["type"] == "section")
    assert all(commit.short_sha in shown for commit in commits) and "THE-END" in shown
    for m in messages:
        assert m["text"] and not SLACK_LIVE.search(m["text"])
        assert all(len(b["text"]["text"]) <= SECTION_TEXT_MAX for b in m["blocks"] if b["type"] == "section")


def test_discord_links_our_commits_and_nothing_else():
    a, commits = hostile_answer()
    chunks = discord_chunks(a)
    joined = "\n".join(chunks)
    assert joined.startswith("**Commits carrying the most risk:**")
    for commit in commits:
        assert f"[`{commit.short_sha}`](<{commit.url}>)" in joined
    assert not DISCORD_LIVE.search(joined)
    assert all(len(c) <= CONTENT_MAX and not message_problems({"content": c}) for c in chunks)
    assert "THE-END" in joined


def test_a_commit_without_a_web_page_is_named_not_linked():
    a = Answer("en")
    commit = make_commit("local (#1)", url=None)
    a.add(a.cite(commit), " local")
    assert slack_mrkdwn(a) == f"{commit.short_sha} local"
    assert discord_chunks(a) == [f"`{commit.short_sha}` local"]


def test_a_heading_quoting_the_asker_opens_no_code_block_in_slack():
    """`Strong` and link labels skipped the backtick taming of plain text: "commits titled ```x" from the
    question opened a code block over the rest of the answer (its SHAs, links and emphasis shown raw)."""
    a = Answer("en")
    commit = make_commit("Fix ```x parser (#9)")
    a.add(Strong("2 commits have “```x” in their title, by ada@example.com:"))
    a.add("• ", a.cite(commit), " ", commit.title)
    a.add(Link("ab```c", commit.url), " *done*")
    body = slack_mrkdwn(a)
    assert "`" not in body and "ada@example.com" not in body
    assert body.splitlines()[0] == "*2 commits have “'''x” in their title, by :*"
    assert f"<{commit.url}|{commit.short_sha}>" in body and f"<{commit.url}|ab'''c>" in body


def test_a_link_label_that_is_no_sha_stays_one_code_span_in_discord():
    a = Answer("en")
    a.add(Link("ab`c @everyone ada@example.com", None), " after")
    assert discord_chunks(a) == ["`ab'c @\u200beveryone` after"]
