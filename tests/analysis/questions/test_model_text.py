"""The model's Markdown as chat spans: headings and tables readable on every surface, links only to the
thread's commits, nothing that can ping a channel."""

from analysis.questions.document import Answer, Link, Strong
from analysis.questions.model_text import add_model_text
from analysis.render.answer import discord_chunks, slack_mrkdwn
from tests.fakes.digests import make_commit

COMMIT = make_commit("[Perf] Use xxhash for the prefix cache (#33193)", repo="acme/widgets")
OTHER = make_commit("[Doc] typo (#33194)", repo="acme/widgets")


def model(text: str) -> Answer:
    a = Answer("en", source="llm")
    add_model_text(a, text, [COMMIT, OTHER])
    return a


def test_headings_and_bold_become_our_bold_and_a_table_one_line_per_row():
    a = model(
        "## Risk summary\n"
        "The **hash change** matters.\n\n"
        f"| Commit | Risk |\n|:---|---:|\n| {COMMIT.short_sha} | cache misses |\n| #33194 | none |\n"
        "---\n"
        "- check the hit rate"
    )
    assert a.lines[0] == (Strong("Risk summary"),)
    assert a.lines[1] == ("The ", Strong("hash change"), " matters.")
    assert (Strong("Commit · Risk"),) in a.lines
    assert ("• ", COMMIT.short_sha, " · ", "cache misses") in a.lines and (
        "• ",
        "#33194",
        " · ",
        "none",
    ) in a.lines
    slack = slack_mrkdwn(a)
    for raw in ("##", "|", "---", "**"):
        assert raw not in slack, raw
    assert "*Risk summary*" in slack and "• check the hit rate" in slack


def test_links_stay_only_to_the_threads_commits_and_outside_urls_are_dropped():
    a = model(
        f"See [the PR](https://github.com/acme/widgets/pull/33193), [a blog](https://evil.example/x) and "
        f"https://evil.example/y, or https://github.com/acme/widgets/commit/{OTHER.sha}. "
        "[Unknown](https://github.com/acme/widgets/pull/1) too."
    )
    [line] = a.lines
    assert Link(COMMIT.short_sha, COMMIT.url) in line and Link(OTHER.short_sha, OTHER.url) in line
    assert a.cites == [COMMIT.sha, OTHER.sha]
    for text in (slack_mrkdwn(a), "\n".join(discord_chunks(a))):
        assert "evil.example" not in text and "pull/1)" not in text
    assert a.plain() == f"See the PR ({COMMIT.short_sha}), a blog and, or {OTHER.short_sha}. Unknown too."


def test_mentions_in_the_models_markdown_never_ping():
    a = model("# @channel\n**@here** look, <!everyone> and @everyone")
    for text in (slack_mrkdwn(a), "\n".join(discord_chunks(a))):
        assert "@channel" not in text and "@here" not in text and "@everyone" not in text
        assert "<!everyone>" not in text
