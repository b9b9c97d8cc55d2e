"""Reading a title's leading tags (analysis/titles.py)."""

from __future__ import annotations

import pytest

from analysis.titles import leading_tags, title_text, without_revert_tag


@pytest.mark.parametrize(
    ("title", "tags", "rest"),
    [
        ("[CI/Build] [Bug_Fix]: fix the wheel", ("ci/build", "bugfix"), "fix the wheel"),
        ("[Docs](https://example.com/x) Remove the old API", (), "[Docs](https://example.com/x) Remove the old API"),
        ("[Click](https://evil.example) ||spoiler||", (), "[Click](https://evil.example) ||spoiler||"),
        ("[Core] [see here](https://example.com) Drop v1", ("core",), "[see here](https://example.com) Drop v1"),
        ("[Docs] (#12) typo", ("docs",), "(#12) typo"),  # a space before the parenthesis: a tag, then words
    ],
)  # fmt: skip
def test_a_markdown_link_at_the_start_is_words_not_a_tag(title, tags, rest):
    # read as a tag, `[Docs](url) …` would be a docs change by its title, and the summary would start with "(url"
    assert leading_tags(title) == (tags, rest)
    assert title_text(title) == rest


def test_a_revert_tag_beside_a_link_is_still_found():
    assert (
        without_revert_tag("[Revert] [the PR](https://example.com/pull/1)")
        == "[the PR](https://example.com/pull/1)"
    )
    assert without_revert_tag("[Revert](https://example.com/pull/1) the PR") is None
