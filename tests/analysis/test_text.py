import re

from analysis.text import (
    ZWSP,
    md_cell,
    md_inline,
    neutralize_mentions,
    singular_ones,
    strip_trailers,
    without_squash_list,
)


def test_strip_trailers_and_emails():
    msg = (
        "[Bugfix] Fix x (#1)\n\nBody line, ask bob@example.com.\n\n"
        "Signed-off-by: Alice <alice@example.com>\nCo-authored-by: Bob <bob@x.org>\nReviewed-by: C <c@d.io>"
    )
    out = strip_trailers(msg)
    assert "Signed-off-by" not in out and "Co-authored-by" not in out and "Reviewed-by" not in out
    assert "@" not in out
    assert out.startswith("[Bugfix] Fix x (#1)") and "Body line" in out


def test_mentions_are_neutralised_for_both_platforms():
    text = "hi @everyone @here @channel <!channel> <!here> <@U123> <@&42> <#C1>"
    out = neutralize_mentions(text)
    for bad in ("@everyone", "@here", "@channel", "<!channel>", "<!here>", "<@U123>", "<@&42>", "<#C1>"):
        assert bad not in out
    assert out.replace(ZWSP, "") == text  # readable: only invisible characters added


def test_md_inline_escapes_structure_but_keeps_code_spans():
    out = md_inline("# Title with **bold** [link](javascript:alert(1)) <script> and `a_b|c`\nsecond line")
    assert "\n" not in out
    assert out.startswith("\\#")
    assert "**" not in out.replace("\\*", "")
    assert "<script>" not in out and "\\<script\\>" in out
    assert not re.search(r"(?<!\\)\]\(", out)  # no live link syntax
    assert "`a_b|c`" in out  # code span intact


def test_md_inline_unbalanced_backtick_is_escaped():
    assert md_inline("a ` b") == "a \\` b"


def test_md_cell_has_no_bare_pipe():
    out = md_cell("a | b `c|d` e")
    assert not re.search(r"(?<!\\)\|", out)


def test_leading_list_markers_are_escaped():
    assert md_inline("- item").startswith("\\-")
    assert md_inline("1. item").startswith("1\\.")
    assert md_inline("12) item").startswith("12\\)")


def test_terminal_escapes_and_bidi_overrides_never_come_out():
    hostile = "Fix \x1b[2J\x1b[31mred\x1b[0m \u202eevil\u202c bell\x07 nul\x00 kept\ttab"
    for out in (neutralize_mentions(hostile), md_inline(hostile), md_cell(hostile)):
        assert not any(c in out for c in "\x1b\u202e\u202c\x07\x00")
        assert "red" in out and "evil" in out
    assert "\t" in neutralize_mentions(hostile)


def test_a_count_of_one_takes_the_singular_in_english_reports_and_answers():
    from analysis.labels import label

    assert label("en", "stats_line", total=1, high=0, medium=1, low=0).startswith("1 commit today |")
    assert label("en", "stats_line", total=11, high=0, medium=1, low=10).startswith("11 commits today |")
    assert singular_ones("1 authors landed 1 commits; 21 commits; (+1/−1 lines)") == (
        "1 author landed 1 commit; 21 commits; (+1/−1 lines)"
    )
    assert label("zh", "stats_line", total=1, high=0, medium=1, low=0).startswith("本日共 1 个提交")


def test_html_entities_in_untrusted_text_show_as_typed_not_as_what_they_encode():
    # a title "Remove foo: &lt;!channel&gt; &#64;here" rendered as "<!channel> @here" in Markdown viewers
    out = md_inline("Remove foo: &lt;!channel&gt; &amp; &#64;here")
    assert out == "Remove foo: \\&lt;!channel\\&gt; \\&amp; \\&#64;here"
    assert md_cell("a & b | c") == "a \\& b \\| c"


def test_file_name_part_keeps_letters_digits_and_dots_only():
    from analysis.text import file_name_part

    assert file_name_part("acme/widgets") == "acme-widgets"
    assert file_name_part("vllm-project/vllm.git") == "vllm-project-vllm.git"
    assert file_name_part("数据 仓库") == "数据-仓库"  # letters of any script stay
    assert file_name_part("a\r\nb\x00c;'d\"/../e") == "a-b-c-d-..-e"
    assert file_name_part("../..") == "repo"  # nothing but dots and dashes left: a name still


def test_a_squash_merge_list_and_rules_leave_the_body_and_an_authors_list_stays() -> None:
    squash = "* Add examples\n\n* address review\n\n---------\n"
    assert without_squash_list(squash) == ""
    assert without_squash_list("* Add examples\n\n---------\n") == ""  # one item before the rule
    assert (
        without_squash_list("Why it changed.\n\n" + squash + "\nMore words.")
        == "Why it changed.\n\nMore words."
    )
    for kept in (
        "Steps:\n* one\n* two",
        "* one\n* two",
        "* a single item of its own",
        "Title\n---\nunderlined",
    ):
        assert without_squash_list(kept) == kept
