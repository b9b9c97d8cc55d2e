"""The Markdown daily report and commit card, checked with synthetic digests and the strict validator."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from analysis.errors import InputError
from analysis.labels import label
from analysis.models import INSIGHT_DIMENSIONS, Digest, Importance
from analysis.render.markdown import inline, render_commit, render_report
from tests.analysis.reportcheck import check_report
from tests.fakes.digests import (
    HOSTILE_TEXTS,
    LONG_TEXT,
    hostile_digest,
    make_analysis,
    make_commit,
    make_digest,
)

LANGS = ("zh", "en")
ANCHOR = re.compile(r'<a id="([^"]*)"></a>')
HEADING = re.compile(r"^(#+) (.*)$", re.MULTILINE)


def card_of(markdown: str, sha: str) -> str:
    """The text of one commit's card in a report, from its anchor to its closing rule."""
    start = markdown.index(f'<a id="c-{sha[:12]}"></a>')
    return markdown[start : markdown.index("\n---\n", start)]


def headings(markdown: str) -> list[tuple[int, str]]:
    return [(len(m.group(1)), m.group(2)) for m in HEADING.finditer(markdown)]


# --- a normal day -------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_day_with_every_tier_passes_the_validator(lang: str) -> None:
    digest = make_digest(("low", "high", "medium", "low", "medium", "high", "low"))
    markdown = render_report([digest], lang)

    assert check_report(markdown, [digest], lang) == []
    assert markdown.endswith("\n") and not markdown.endswith("\n\n")
    assert markdown.startswith(f"# {label(lang, 'report_title', date='2026-01-26')}\n")
    stats = label(lang, "stats_line", total=7, high=2, medium=2, low=3)
    assert f"\n> {stats}\n" in markdown
    for commit in digest.commits:  # once in the table, once as a card heading, once in the contents
        title = inline(commit.title)
        assert markdown.count(f"| {title} |") == 1
        assert markdown.count(f"#### {title}\n") == 1
        assert markdown.count(f"[{title}](#c-{commit.sha[:12]})") == 1


@pytest.mark.parametrize("lang", LANGS)
def test_heading_levels_are_fixed_and_fields_are_bold_labels(lang: str) -> None:
    digest = make_digest(("high", "medium", "low"))
    found = headings(render_report([digest], lang))
    tier_titles = {label(lang, f"tier_{t}") for t in ("high", "medium", "low")}

    assert [lvl for lvl, _ in found] == [1, 2, 2, 3, 3, 4, 3, 4, 3, 4]
    assert found[1] == (2, label(lang, "toc"))
    assert found[2] == (2, digest.repo)
    assert found[3] == (3, label(lang, "stats"))
    assert {text.rsplit(" (", 1)[0] for lvl, text in found if lvl == 3} - {
        label(lang, "stats")
    } == tier_titles
    field_labels = [label(lang, k) for k in ("change_type", "importance", "summary", "scope", "risks")]
    assert not any(text.startswith(f) for _, text in found for f in field_labels)


@pytest.mark.parametrize("lang", LANGS)
def test_each_tier_shows_exactly_its_fields(lang: str) -> None:
    digest = make_digest(("high", "medium", "low"))
    markdown = render_report([digest], lang)
    high, medium, low = (card_of(markdown, c.sha) for c in digest.commits)

    def shown(card: str) -> list[str]:
        return re.findall(r"^\*\*(.+?)\*\*", card, re.MULTILINE)[1:]  # after the SHA line

    base = [label(lang, "change_type"), label(lang, "importance")]
    mid = [label(lang, k) for k in ("summary", "scope")]
    tail = [label(lang, k) for k in ("risks", "recommendations")]
    assert shown(high) == [*base, *mid, label(lang, "insights"), *tail]
    assert shown(medium) == [*base, *mid, *tail]
    assert shown(low) == [*base, label(lang, "summary_low")]
    for dim in INSIGHT_DIMENSIONS:
        text = digest.analyses[digest.commits[0].sha].insights[dim]
        assert re.search(rf"^\| [^|]+ \| {re.escape(text)} \|$", high, re.MULTILINE)


def test_importance_line_states_the_reason() -> None:
    commit = make_commit()
    analysis = make_analysis(commit, "high", reason="touches the public API")
    card = render_commit(commit, analysis, "zh")
    assert "**⚡ 重要程度**：🔴 高 — touches the public API\n" in card


def test_empty_list_fields_say_none_and_notes_appear_only_when_present() -> None:
    commit = make_commit()
    bare = render_commit(commit, make_analysis(commit, "medium", scope=[], risks=[" "], notes=[]), "en")
    noted = render_commit(
        commit,
        make_analysis(commit, "medium", notes=["heuristic", "covered 12 of 14 files"], analyzer="llm"),
        "en",
    )

    assert "**🎯 Impact scope**: None identified\n" in bare
    assert "**⚠️ Potential risks**: None identified\n" in bare
    assert label("en", "notes") not in bare
    assert noted.rstrip("\n").endswith("**ℹ️ Notes**: Heuristic. Covered 12 of 14 files.")


def test_missing_insight_dimension_says_none_and_table_keeps_its_shape() -> None:
    commit = make_commit()
    card = render_commit(
        commit, make_analysis(commit, "high", insights={"security": "No new input paths."}), "zh"
    )
    rows = [line for line in card.splitlines() if line.startswith("| ") and "维度" not in line]
    assert len(rows) == len(INSIGHT_DIMENSIONS)
    assert "| 安全考虑 | No new input paths. |" in rows
    assert "| 架构影响 | 未发现 |" in rows


@pytest.mark.parametrize("lang", LANGS)
def test_empty_day_prints_the_section_and_a_zero_stats_line(lang: str) -> None:
    digest = make_digest(())
    markdown = render_report([digest], lang)

    assert check_report(markdown, [digest], lang) == []
    assert f"\n{label(lang, 'no_commits')}\n" in markdown
    assert f"\n> {label(lang, 'stats_line', total=0, high=0, medium=0, low=0)}\n" in markdown
    assert [lvl for lvl, _ in headings(markdown)] == [1, 2, 2, 3]
    assert not any(line.startswith("|") for line in markdown.splitlines())  # no commit table


def test_tiers_without_commits_are_omitted_but_counted() -> None:
    digest = make_digest(("low", "low"))
    markdown = render_report([digest], "en")

    assert check_report(markdown, [digest], "en") == []
    assert label("en", "tier_high") not in markdown and label("en", "tier_medium") not in markdown
    assert "(#high-" not in markdown and "(#medium-" not in markdown
    assert "🔴 High 0 | 🟡 Medium 0 | 🟢 Low 2" in markdown


def test_commits_keep_digest_order_in_table_and_tiers() -> None:
    digest = make_digest(("medium", "low", "medium", "medium"))
    markdown = render_report([digest], "zh")
    mediums = [c for c in digest.commits if digest.analyses[c.sha].importance == Importance.MEDIUM]

    card_positions = [markdown.index(f'<a id="c-{c.sha[:12]}"></a>') for c in mediums]
    row_positions = [markdown.index(f"| {inline(c.title)} |") for c in digest.commits]
    assert card_positions == sorted(card_positions)
    assert row_positions == sorted(row_positions)


def test_times_are_shown_in_the_digest_zone() -> None:
    utc_moment = datetime(2026, 1, 26, 15, 19, 57, tzinfo=UTC)  # 23:19:57 in Shanghai
    commit = make_commit(committed_at=utc_moment)
    digest = make_digest(commits=[commit], analyses=[make_analysis(commit)])
    markdown = render_report([digest], "zh")

    assert "| 2026-01-26 23:19:57 | Ada Lovelace |" in markdown
    assert "提交时间 2026-01-26 23:19:57 (UTC+08:00)" in markdown
    assert "时间窗口 2026-01-26 00:00 – 2026-01-27 00:00 Asia/Shanghai (UTC+08:00)" in markdown


def test_a_daylight_saving_day_shows_both_offsets() -> None:
    digest = make_digest(("low",), tz="America/New_York", day=datetime(2026, 3, 8).date())
    markdown = render_report([digest], "en")
    assert "2026-03-08 00:00 – 2026-03-09 00:00 America/New\\_York (UTC-05:00 / UTC-04:00)" in markdown
    assert check_report(markdown, [digest], "en") == []


# --- hostile text --------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_hostile_text_cannot_break_the_layout_or_ping(lang: str) -> None:
    digest = hostile_digest()
    markdown = render_report([digest], lang)

    assert check_report(markdown, [digest], lang) == []
    assert "\\<script\\>alert(1)\\</script\\>" in markdown  # escaped, so it shows as text
    # An unbalanced backtick run opens no code span, so what follows it must be escaped too.
    assert "\\`\\`\\<img src=x onerror=alert(1)\\>\\` unbalanced run" in markdown
    assert not re.search(r"@(everyone|here|channel)\b", markdown)
    assert not re.search(r"<[!@]", markdown)
    assert not re.search(r"(?<!\\)\]\(javascript:", markdown)  # the escaped "\](" is plain text
    assert "\\[x\\](javascript:alert(1))" in markdown
    assert "Signed-off-by" not in markdown and "@evil.example.com" not in markdown
    assert all(
        len(re.split(r"(?<!\\)\|", row)) == 5 for row in markdown.splitlines() if row.startswith("| 2026")
    )
    # Only our own headings: untrusted "# heading" text is escaped wherever it lands.
    assert all(
        text.startswith(("🔴", "🟡", "🟢", "📊", "📋")) for lvl, text in headings(markdown) if lvl == 3
    )
    assert "\n# heading" not in markdown and "\n> quote" not in markdown


def test_long_text_is_never_cut() -> None:
    digest = hostile_digest()
    markdown = render_report([digest], "zh")
    long_commit = next(c for c in digest.commits if c.title == LONG_TEXT)

    assert f"#### {LONG_TEXT}\n" in markdown
    assert f"[{LONG_TEXT}](#c-{long_commit.sha[:12]})" in markdown
    assert f"| {LONG_TEXT} |" in markdown
    assert f"**📋 变更摘要**：{LONG_TEXT}\n" in markdown
    assert "…" not in markdown and "..." not in markdown


def test_multi_line_title_shows_only_its_first_line_and_no_trailers() -> None:
    commit = make_commit(
        "Fix the widget (#7)",
        author="Bob <bob@example.com>",
        body="Details here.\n\nSigned-off-by: Bob <bob@example.com>\nCo-authored-by: Eve <eve@example.org>",
    )
    digest = make_digest(commits=[commit], analyses=[make_analysis(commit, "medium")])
    markdown = render_report([digest], "en")

    assert check_report(markdown, [digest], "en") == []
    assert "Details here" not in markdown
    assert "| Bob | Fix the widget (#7) |" in markdown
    assert "bob@" not in markdown and "Signed-off-by" not in markdown


def test_titles_keep_version_pins_but_lose_addresses_and_trailers() -> None:
    pinned = make_commit("Bump lodash@4.17.21 and torch@2.5 (#9)")
    address_only = make_commit("ops@example.com")
    trailer_only = make_commit("Signed-off-by: Bot <bot@example.com>")
    commits = [pinned, address_only, trailer_only]
    digest = make_digest(commits=commits, analyses=[make_analysis(c) for c in commits])
    markdown = render_report([digest], "en")

    assert check_report(markdown, [digest], "en") == []
    assert "#### Bump lodash@4.17.21 and torch@2.5 (#9)\n" in markdown
    assert markdown.count("#### (no message)\n") == 2
    assert "example.com" not in markdown and "Signed-off-by" not in markdown


def test_an_empty_summary_says_none() -> None:
    commit = make_commit()
    card = render_commit(commit, make_analysis(commit, "low", summary="  "), "zh")
    assert "**📋 摘要**：未发现\n" in card


def test_commit_links_only_for_safe_http_urls() -> None:
    def link_line(url: str | None) -> str:
        commit = make_commit(url=url)
        card = render_commit(commit, make_analysis(commit), "en")
        return next(line for line in card.splitlines() if line.startswith("**SHA**"))

    assert link_line(None).count("](") == 0
    assert link_line("javascript:alert(1)").count("](") == 0
    assert link_line("https://user:pw@example.com/c/1").count("](") == 0
    assert "[View commit](https://x.example/commit/a%20b%28c%29%40everyone)" in link_line(
        "https://x.example/commit/a b(c)@everyone"
    )
    assert "[View commit](https://github.com/o/r/commit/abc)" in link_line(
        "https://github.com/o/r/commit/abc"
    )


# --- several repositories ------------------------------------------------------------------------


def test_two_repos_have_unique_anchors_even_when_they_slug_alike_and_share_commits() -> None:
    upstream = make_digest(("high", "low"), repo="acme/widgets")
    same_slug = make_digest(("medium",), repo="Acme-Widgets")
    # A fork listing the very same commits: equal SHAs must still get distinct anchors.
    fork_commits = [
        make_commit(c.message, repo="fork/widgets", sha=c.sha, committed_at=c.committed_at)
        for c in upstream.commits
    ]
    fork = make_digest(("high", "low"), repo="fork/widgets", commits=fork_commits)
    digests = [upstream, same_slug, fork]
    markdown = render_report(digests, "zh")

    ids = ANCHOR.findall(markdown)
    assert len(ids) == len(set(ids))
    assert {"repo-acme-widgets", "repo-acme-widgets-2", "repo-fork-widgets"} <= set(ids)
    assert all(re.fullmatch(r"[a-z0-9-]+", i) for i in ids)
    assert set(re.findall(r"\]\(#([^)]+)\)", markdown)) == set(ids)
    assert check_report(markdown, digests, "zh") == []
    assert [text for lvl, text in headings(markdown) if lvl == 2][1:] == [
        "acme/widgets",
        "Acme-Widgets",
        "fork/widgets",
    ]


def test_repos_with_different_windows_state_each_window() -> None:
    shanghai = make_digest(("low",))
    berlin = make_digest(("low",), repo="acme/other", tz="Europe/Berlin")
    markdown = render_report([shanghai, berlin], "en")

    assert check_report(markdown, [shanghai, berlin], "en") == []
    assert markdown.count("> Window ") == 2
    assert "Europe/Berlin (UTC+01:00)" in markdown and "Asia/Shanghai (UTC+08:00)" in markdown


# --- the standalone card -------------------------------------------------------------------------


def test_standalone_card_uses_the_given_level_and_zone() -> None:
    commit = make_commit(
        "[Bugfix] Fix overflow (#12)", committed_at=datetime(2026, 1, 26, 1, 2, 3, tzinfo=UTC)
    )
    analysis = make_analysis(commit, "high", change_type="bugfix")
    card = render_commit(commit, analysis, "en", heading_level=2, tz=ZoneInfo("Asia/Shanghai"))
    own_zone = render_commit(commit, analysis, "en")

    assert card.startswith("## \\[Bugfix\\] Fix overflow (#12)\n\n**SHA**: `")  # no anchor before the heading
    assert "Committed 2026-01-26 09:02:03 (UTC+08:00)" in card
    assert "Committed 2026-01-26 01:02:03 (UTC+00:00)" in own_zone
    assert "**🎯 Change type**: Bug fix\n" in card
    assert own_zone.startswith("#### ") and card.endswith("\n") and "<a id" not in card
    assert "\n---" not in card


def test_card_escapes_a_hostile_title() -> None:
    commit = make_commit("# Title | with <b>pipes</b> @here")
    card = render_commit(commit, make_analysis(commit), "zh", heading_level=3)
    assert card.startswith("### \\# Title \\| with \\<b\\>pipes\\</b\\> @\u200bhere\n")


# --- programming errors --------------------------------------------------------------------------


def test_commit_without_analysis_is_an_error() -> None:
    digest = make_digest(("low", "high"))
    del digest.analyses[digest.commits[1].sha]
    with pytest.raises(ValueError, match=digest.commits[1].sha[:12]):
        render_report([digest], "zh")


def test_card_refuses_another_commits_analysis() -> None:
    one, other = make_commit("one"), make_commit("other")
    with pytest.raises(ValueError, match="does not belong"):
        render_commit(one, make_analysis(other), "zh")


def test_bad_arguments_are_rejected() -> None:
    commit = make_commit()
    with pytest.raises(InputError):
        render_report([make_digest()], "fr")
    with pytest.raises(ValueError):
        render_report([], "zh")
    with pytest.raises(ValueError):
        render_commit(commit, make_analysis(commit), "zh", heading_level=7)


# --- the validator is not vacuous ----------------------------------------------------------------


def _sample() -> tuple[Digest, str]:
    digest = make_digest(("high", "medium", "low", "low"))
    return digest, render_report([digest], "zh")


def _drop_card(md: str, digest: Digest) -> str:
    card = card_of(md, digest.commits[2].sha)
    return md.replace(card + "\n---\n", "")


def _swap_low_cards(md: str, digest: Digest) -> str:
    first, second = (card_of(md, c.sha) for c in digest.commits[2:4])
    return md.replace(first, "\0").replace(second, first).replace("\0", second)


MUTATIONS: list[tuple[str, Callable[[str, Digest], str], str]] = [
    ("missing section", _drop_card, "appears in 0 tier sections"),
    ("missing section, table row left", _drop_card, "holds 1 commits, the digest has 2"),
    ("dead link", lambda md, d: md.replace('<a id="stats-acme-widgets">', '<a id="stats">'), "dead link"),
    ("wrong stats", lambda md, d: md.replace("🟢 低 2", "🟢 低 3"), "stats line says"),
    ("label drift", lambda md, d: md.replace("🟢 低 2", "🟢低 2"), "stats line missing or malformed"),
    ("heading level", lambda md, d: md.replace("\n#### ", "\n### ", 1), "unexpected section"),
    (
        "field as heading",
        lambda md, d: md.replace("**🎯 影响范围**：", "##### 🎯 影响范围", 1),
        "heading level 5",
    ),
    ("renamed field", lambda md, d: md.replace("**💡 关注建议**", "**✅ 建议**", 1), "fields"),
    ("missing field", lambda md, d: md.replace("**💡 关注建议**：", "", 1), "fields"),
    (
        "cut title",
        lambda md, d: md.replace("of the day (#2000)](#", "of the…](#"),
        "differs from its heading",
    ),
    ("ellipsis", lambda md, d: md.replace("Summary of", "Summ…", 1), "ellipsis"),
    ("trailer", lambda md, d: md.replace("Summary of", "Signed-off-by: A", 1), "trailer"),
    ("e-mail", lambda md, d: md.replace("Dev 1", "dev@example.com"), "e-mail address"),
    ("live mention", lambda md, d: md.replace("Dev 1", "@everyone"), "live mass mention"),
    ("slack mention", lambda md, d: md.replace("Dev 1", "<!here>"), "live chat mention"),
    ("raw html", lambda md, d: md.replace("Summary of", "<img src=x>", 1), "raw HTML"),
    ("html after a lone run", lambda md, d: md.replace("Summary of", "``<img src=x>`", 1), "raw HTML"),
    ("html after an escape", lambda md, d: md.replace("Summary of", "\\`<b>x</b>`", 1), "raw HTML"),
    ("js link", lambda md, d: md.replace("](https://", "](javascript:", 1), "only #anchors and http(s)"),
    (
        "duplicate id",
        lambda md, d: md.replace('<a id="high-acme-widgets">', '<a id="repo-acme-widgets">'),
        "dup",
    ),
    ("table row lost", lambda md, d: re.sub(r"\n\| [^\n]*Dev 3 [^\n]*", "", md), "table has 3 rows"),
    ("order", _swap_low_cards, "not in digest order"),
    ("mojibake", lambda md, d: md.replace("统计", "ç»Ÿè®¡ðŸ"), "mojibake"),
    ("hard breaks", lambda md, d: md.replace("**⚡", "  \n**⚡", 1), "trailing double spaces"),
    ("no newline", lambda md, d: md.rstrip("\n"), "newline"),
]


@pytest.mark.parametrize(("mutate", "expected"), [m[1:] for m in MUTATIONS], ids=[m[0] for m in MUTATIONS])
def test_validator_catches_broken_reports(mutate: Callable[[str, Digest], str], expected: str) -> None:
    digest, markdown = _sample()
    broken = mutate(markdown, digest)
    assert broken != markdown, "the mutation did not apply"
    problems = check_report(broken, [digest], "zh")
    assert any(expected in p for p in problems), problems


def test_validator_catches_a_report_of_the_wrong_digest_and_bad_bytes() -> None:
    digest, markdown = _sample()
    other = make_digest(("high", "medium", "low"))
    assert any("table has 4 rows, the digest 3 commits" in p for p in check_report(markdown, [other], "zh"))
    assert check_report(markdown.encode("utf-8"), [digest], "zh") == []
    assert any("UTF-8" in p for p in check_report(markdown.encode("utf-16"), [digest], "zh"))


def test_hostile_texts_cover_the_brief() -> None:
    # The fixture itself must keep the cases the brief names, or the hostile tests lose their point.
    joined = "\n".join(HOSTILE_TEXTS)
    for needle in ("|", "`", "<script>", "**", "[x](javascript:alert(1))", "\n", "# heading", "@everyone"):
        assert needle in joined
    for needle in ("<!here>", "<@U123>"):
        assert needle in joined
    assert len(LONG_TEXT) > 2000


def test_notes_are_sentences_with_one_full_stop_each():
    from analysis.labels import join_notes

    assert join_notes("zh", ["LLM 分析失败：超出长度；以下为启发式分析。", "启发式分析"]) == (
        "LLM 分析失败：超出长度；以下为启发式分析。启发式分析。"
    )
    # A note written to follow other words ("covered …") starts a sentence here; "(…)" is not its end.
    assert join_notes("en", ["Heuristic analysis shown.", "covered 3 of 4 files (1 left out)"]) == (
        "Heuristic analysis shown. Covered 3 of 4 files (1 left out)."
    )
    assert join_notes("en", ["(See the docs.)", "pkg.mod was read", "iOS build", "pkg/x.py is new"]) == (
        "(See the docs.) pkg.mod was read. iOS build. pkg/x.py is new."
    )
    assert join_notes("zh", ["已覆盖 14 个文件中的 12 个（未包含 2 个——锁文件：uv.lock）"]) == (
        "已覆盖 14 个文件中的 12 个（未包含 2 个——锁文件：uv.lock）。"
    )


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_commits_left_out_by_filters_are_stated_everywhere(lang):
    from dataclasses import replace

    from analysis.render import discord_embeds as render_discord
    from analysis.render import json_report as render_json
    from analysis.render import slack_blocks as render_slack

    digest = replace(make_digest(("high", "low"), lang=lang), filtered_out=3)
    report = render_report([digest], lang)
    assert check_report(report, [digest], lang) == []
    assert ("另有 3 个提交" if lang == "zh" else "3 more commit(s) of the day left out") in report
    assert check_report(
        render_report([replace(digest, filtered_out=0)], lang).replace("x", "x"), [digest], lang
    )
    assert render_json.render_json(digest)["filtered_out"] == 3
    slack_text = str(render_slack.parent_message(digest)["blocks"])
    discord_text = str(render_discord.parent_embed(digest))
    for text in (slack_text, discord_text):
        assert "3" in text and ("过滤" in text if lang == "zh" else "filters" in text)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_history_starting_inside_the_day_is_stated_everywhere(lang):
    from dataclasses import replace

    from analysis.render import discord_embeds as render_discord
    from analysis.render import json_report as render_json
    from analysis.render import slack_blocks as render_slack

    whole = make_digest(("high", "low"), lang=lang)
    cut = replace(whole, history_start=datetime(2026, 1, 26, 15, 30, tzinfo=ZoneInfo("Asia/Shanghai")))
    report = render_report([cut], lang)
    assert check_report(report, [cut], lang) == []
    assert check_report(render_report([whole], lang), [cut], lang)  # the reader's check misses it
    assert check_report(report, [whole], lang)
    said = (
        "从 2026-01-26 15:30 (UTC+08:00) 开始" if lang == "zh" else "starts at 2026-01-26 15:30 (UTC+08:00)"
    )
    assert (
        said in report and "`git fetch --shallow-since=2026-01-24`" in report
    )  # the window starts 01-25 16:00 UTC
    assert render_json.render_json(cut)["history_start"] == "2026-01-26T15:30:00+08:00"
    assert render_json.render_json(whole)["history_start"] is None
    for text in (str(render_slack.parent_message(cut)["blocks"]), str(render_discord.parent_embed(cut))):
        assert said in text and "git fetch --unshallow" in text
    for text in (str(render_slack.parent_message(whole)), str(render_discord.parent_embed(whole))):
        assert "git fetch" not in text


def test_a_fixed_offset_zone_is_shown_as_its_offset_everywhere():
    """DIGEST_TZ=UTC+8 is stored as Etc/GMT-8, whose sign POSIX counts the other way round: no surface
    shows that name."""
    import json

    from analysis.render.discord_embeds import parent_embed
    from analysis.render.slack_blocks import parent_message

    digest = make_digest(tz="Etc/GMT-8", lang="en")
    meta = next(line for line in render_report([digest], "en").splitlines() if line.startswith("> Window"))
    assert " UTC+08:00 · " in meta and "GMT" not in meta
    slack = json.dumps(parent_message(digest), default=str, ensure_ascii=False)
    assert "(UTC+08:00)" in slack and "Etc/GMT" not in slack
    discord = json.dumps(parent_embed(digest), default=str, ensure_ascii=False)
    assert "UTC+08:00" in discord and "Etc/GMT" not in discord


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_an_empty_day_after_the_clones_newest_commit_is_stated_everywhere(lang):
    from dataclasses import replace

    from analysis.render import discord_embeds as render_discord
    from analysis.render import json_report as render_json
    from analysis.render import slack_blocks as render_slack

    quiet = make_digest((), lang=lang)
    stale = replace(quiet, clone_newest=datetime(2026, 1, 24, 9, 5, tzinfo=ZoneInfo("Asia/Shanghai")))
    report = render_report([stale], lang)
    assert check_report(report, [stale], lang) == []
    assert check_report(render_report([quiet], lang), [stale], lang)  # the reader's check misses it
    said = "2026-01-24 09:05 (UTC+08:00)"
    assert said in report and "--repost" in report and "2026-01-24" not in render_report([quiet], lang)
    assert render_json.render_json(stale)["clone_newest"] == "2026-01-24T09:05:00+08:00"
    assert render_json.render_json(quiet)["clone_newest"] is None
    for text in (str(render_slack.parent_message(stale)["blocks"]), str(render_discord.parent_embed(stale))):
        assert said in text and "git fetch" in text
