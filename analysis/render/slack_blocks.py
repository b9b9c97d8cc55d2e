"""Slack Block Kit messages (plain dicts) for digests, commit cards and replies.

Every builder returns messages that respect Slack's limits whatever the input: a long analysis is
split over several sections and, past one message's budget, over several messages — never cut.
Every piece of untrusted text (commit titles, authors, analyses, answers) is escaped for mrkdwn
(`&`, `<`, `>`), so it can never form a mention (`<!channel>`, `<@U…>`, `<!subteam^…>`) or a link;
bare @channel/@here/@everyone are broken with a zero-width space. Links exist only where we build
them from a commit's URL. Text objects are `verbatim` so Slack does not auto-parse names either.

Over 400 lines because it is one renderer: every Slack message we build shares the same escaping, limits and
packing rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from analysis.labels import (
    change_type_label,
    check_lang,
    dimension_label,
    importance_label,
    join_notes,
    label,
    quote_elided,
    stats_lines,
    zone_name,
)
from analysis.models import INSIGHT_DIMENSIONS, Analysis, Commit, Digest, Importance
from analysis.render.followups import entry_parts
from analysis.render.followups import word as followup_word
from analysis.render.markdown import analyzer_name, format_time, safe_url, same_commit
from analysis.text import ZWSP, code_text, display_author, display_title, neutralize_mentions, redact

Block = dict[str, Any]
Message = dict[str, Any]  # {"text": fallback, "blocks": [...]}: the keyword arguments of chat.postMessage

# Block Kit limits (docs.slack.dev/reference/block-kit), counted in UTF-16 code units (see slack_len).
BLOCKS_MAX = 50
SECTION_TEXT_MAX = 3000
FIELD_TEXT_MAX = 2000
FIELDS_MAX = 10
HEADER_TEXT_MAX = 150
CONTEXT_ELEMENTS_MAX = 10
TEXT_MAX = 40_000  # chat.postMessage `text`
# Slack also rejects a message whose blocks hold too much text in total (`msg_blocks_too_long`); the
# limit is undocumented (~12,000 characters, lower with many blocks), so we stay well below it.
MESSAGE_TEXT_BUDGET = 8_000
FALLBACK_MAX = 300  # the notification text; the blocks carry the content
ONE_LINER_TITLE_MAX = 200  # titles in the parent's one-liners (the card shows them whole)
CARD_AUTHOR_MAX = 200  # likewise for an author's name
CARD_TITLE_MAX = 1000  # a card quotes at most this much of a title (a "title" can be a 190 KB line)
# A title and a summary in the medium list, elided beyond with their size stated (the report has them whole).
MEDIUM_TITLE_MAX = 300
MEDIUM_SUMMARY_MAX = 600
HIGH_LIST_TITLE_MAX = 120  # the list of high commits past the cap on cards: one short line each
LINK_LABEL_MAX = 1000  # a longer title is shown next to a short link instead of inside it

_CONTINUATION_RESERVE = 200  # room kept in every message for the "continued i/n" context block
_TOKEN = re.compile(r"<[^<>]*>|&(?:amp|lt|gt);|\s+|[^\s<&]+|.", re.DOTALL)
# A code span mrkdwn renders as one: one backtick, something, one backtick, on one line.
_CODE_SPAN = re.compile(r"(?<!`)`[^`\n]+`(?!`)")
# Emphasis delimiters mrkdwn may pair: every `*` and `~`, a `_` at a word's edge.
_EMPHASIS = re.compile(r"[*~]|(?<!\w)_|_(?!\w)")


# --- text ------------------------------------------------------------------------------------------


def slack_len(text: str) -> int:
    """Length as Slack may count it (UTF-16 code units): never less than the number of characters."""
    return len(text.encode("utf-16-le")) // 2


def escape(text: str) -> str:
    """Untrusted text as inert mrkdwn: no mention, no link, no special syntax can survive."""
    text = neutralize_mentions(text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def inert_emphasis(text: str) -> str:
    """mrkdwn has no escape for `*`, `_` and `~` either: "Fix *args and **kwargs*" turned bold half a title,
    and a title's `*` closed the bold we put around a header. A zero-width space beside each delimiter that
    could open or close emphasis keeps the character visible and copyable; `_` inside a word (snake_case)
    and code spans (rendered verbatim) are left as written."""
    return _outside_code(text, lambda part: _EMPHASIS.sub(ZWSP + r"\g<0>" + ZWSP, part))


def safe(text: str) -> str:
    """Untrusted commit or model text: e-mail addresses removed, backticks tamed, then escaped."""
    return escape(inert_emphasis(tame_backticks(redact(text))))


def tame_backticks(text: str) -> str:
    """mrkdwn has no escape: a "```" in a title opened a code block that ran over the next lines of our
    message (the other one-liners, their SHAs) up to the next "```", and a lone backtick paired with the
    code span of our SHA. A balanced `code span` on one line stays; every other backtick becomes "'", as
    in the code spans we quote untrusted text in (analysis.text.code_text)."""
    return _outside_code(text, lambda part: part.replace("`", "'"))


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    """`change` applied to the text between the balanced one-line code spans, the spans kept as they are."""
    out: list[str] = []
    pos = 0
    for m in _CODE_SPAN.finditer(text):
        out += [change(text[pos : m.start()]), m.group(0)]
        pos = m.end()
    out.append(change(text[pos:]))
    return "".join(out)


def elide(text: str, limit: int) -> str:
    """At most `limit` characters with an ellipsis: only for previews whose full text is shown elsewhere."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def link(url: str | None, text: str) -> str:
    """`<url|text>` for an http(s) URL we trust the shape of (text already mrkdwn), else text alone."""
    target = safe_url(url)
    if not target:
        return text
    return f"<{target.replace('&', '&amp;')}|{text}>"


def split_mrkdwn(text: str, limit: int = SECTION_TEXT_MAX) -> list[str]:
    """Pieces of at most `limit` units, split between lines, else between words, else between
    characters — never inside an escape (`&amp;`) or a link we built. Nothing is dropped but the
    whitespace at a split."""
    pieces: list[str] = []
    current = ""
    for line in text.split("\n"):
        candidate = f"{current}\n{line}" if current else line
        if slack_len(candidate) <= limit:
            current = candidate
            continue
        if current:
            pieces.append(current)
        current = ""
        for part in _split_line(line, limit):
            if current:
                pieces.append(current)
            current = part
    pieces.append(current)
    return [p for p in pieces if p.strip()]  # Slack rejects empty text objects


def _split_line(line: str, limit: int) -> list[str]:
    parts: list[str] = []
    current = ""
    for token in _tokens(line, limit):
        if slack_len(current) + slack_len(token) > limit and current:
            parts.append(current.rstrip())
            current = token.lstrip()
        else:
            current += token
    if current.strip():
        parts.append(current)
    return parts


def _tokens(line: str, limit: int) -> Iterable[str]:
    for token in _TOKEN.findall(line):
        if slack_len(token) <= limit:
            yield token
        else:  # one enormous word: cut it by characters (two units at most each)
            step = max(1, limit // 2)
            yield from (token[i : i + step] for i in range(0, len(token), step))


# --- blocks ----------------------------------------------------------------------------------------


def mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def section(text: str) -> Block:
    return {"type": "section", "text": mrkdwn(text)}


def sections(text: str) -> list[Block]:
    return [section(piece) for piece in split_mrkdwn(text)]


def context(texts: Iterable[str]) -> list[Block]:
    """Context blocks (≤ 10 elements each) holding these mrkdwn texts, long ones split."""
    elements = [mrkdwn(piece) for text in texts if text for piece in split_mrkdwn(text)]
    return [
        {"type": "context", "elements": elements[i : i + CONTEXT_ELEMENTS_MAX]}
        for i in range(0, len(elements), CONTEXT_ELEMENTS_MAX)
    ]


def header(plain: str) -> Block:
    """A header block when the text fits and needs no escaping, else a bold section (a header can
    neither be split nor hold an escape)."""
    plain = neutralize_mentions(" ".join(plain.split()))
    if 0 < slack_len(plain) <= HEADER_TEXT_MAX and not any(c in plain for c in "&<>"):
        return {"type": "header", "text": {"type": "plain_text", "text": plain, "emoji": True}}
    return section(f"*{escape(plain)}*")


def fields_section(texts: list[str]) -> list[Block]:
    """Two-column fields; texts must each fit a field (short labels and values only)."""
    assert all(slack_len(t) <= FIELD_TEXT_MAX for t in texts)
    return [
        {"type": "section", "fields": [mrkdwn(t) for t in texts[i : i + FIELDS_MAX]]}
        for i in range(0, len(texts), FIELDS_MAX)
    ]


def block_text_len(value: Any) -> int:
    """Total text a block holds (what counts against the per-message budget)."""
    if isinstance(value, dict):
        return sum(
            slack_len(v) if k == "text" and isinstance(v, str) else block_text_len(v)
            for k, v in value.items()
        )
    if isinstance(value, list):
        return sum(block_text_len(v) for v in value)
    return 0


def pack(blocks: list[Block], fallback: str, continuation: Callable[[int, int], str]) -> list[Message]:
    """Blocks into as few messages as the limits allow. Parts after the first start with a context
    line from continuation(part, parts) so a reader can tell they belong together."""
    groups: list[list[Block]] = [[]]
    used = 0
    for block in blocks:
        size = block_text_len(block)
        full = len(groups[-1]) + 2 > BLOCKS_MAX or used + size + _CONTINUATION_RESERVE > MESSAGE_TEXT_BUDGET
        if groups[-1] and full:
            groups.append([])
            used = 0
        groups[-1].append(block)
        used += size
    parts = len(groups)
    messages = []
    for number, group in enumerate(groups, start=1):
        if number == 1:
            messages.append({"text": fallback, "blocks": group})
            continue
        note = continuation(number, parts)
        messages.append({"text": elide(note, FALLBACK_MAX), "blocks": [*context([note]), *group]})
    return messages


# --- shared pieces ---------------------------------------------------------------------------------


def _zone(tz: tzinfo | str | None) -> tzinfo | None:
    return ZoneInfo(tz) if isinstance(tz, str) else tz


def _title(commit: Commit, *, max_len: int | None = None, bold: bool = True, lang: str | None = None) -> str:
    """The commit's title as mrkdwn, linked to the commit. A title too long for a link label keeps
    a short linked SHA and is shown whole beside it. With `lang`, a title over `max_len` is elided
    with its size stated (a card); without, with an ellipsis (a preview)."""
    title = display_title(commit)
    if max_len and lang:
        title = quote_elided(lang, title, max_len)
    shown = safe(elide(title, max_len) if max_len and not lang else title)
    star = "*" if bold else ""
    if slack_len(shown) <= LINK_LABEL_MAX:
        return f"{star}{link(commit.url, shown)}{star}"
    return f"{star}{link(commit.url, commit.short_sha)}{star} {shown}"


def _sha(commit: Commit) -> str:
    return f"`{escape(commit.short_sha)}`"


def _field(lang: str, key: str, value: str) -> str:
    return f"*{label(lang, key)}*{label(lang, 'field_sep')}{value}"


def _list(lang: str, key: str, items: list[str]) -> list[Block]:
    shown = [safe(i.strip()) for i in items if i.strip()]
    if not shown:
        return sections(_field(lang, key, label(lang, "none_stated")))
    return sections(f"*{label(lang, key)}*\n" + "\n".join(f"• {i}" for i in shown))


def _insights(lang: str, insights: dict[str, str]) -> list[Block]:
    keys = [*INSIGHT_DIMENSIONS, *sorted(k for k in insights if k not in INSIGHT_DIMENSIONS)]
    lines = [
        f"• *{escape(dimension_label(lang, k))}*{label(lang, 'field_sep')}"
        + (safe(insights[k].strip()) if insights.get(k, "").strip() else label(lang, "none_stated"))
        for k in keys
    ]
    return sections(f"*{label(lang, 'insights')}*\n" + "\n".join(lines))


# --- the digest's parent message -------------------------------------------------------------------


def parent_message(digest: Digest) -> Message:
    """One message: repository, date, counts by tier, the high commits as linked one-liners (as many
    as fit; the thread has a card for every one) and how to ask questions."""
    lang = check_lang(digest.lang)
    stats = digest.stats
    day = digest.day.isoformat()
    top = [
        header(f"📰 {digest.repo} · {label(lang, 'report_title', date=day)}"),
        section("\n".join(stats_lines(lang, stats, digest))),
        *context([_window_line(digest, lang)]),
    ]
    if digest.followups:
        top += followup_blocks(digest, lang)
    bottom = context([label(lang, "slack_ask")])
    highs = digest.by_importance(Importance.HIGH)
    if not digest.commits:
        middle = context([label(lang, "no_commits")])
    elif not highs:
        middle = context([label(lang, "slack_no_high")])
    else:
        middle = _high_one_liners(digest, highs, lang, budget=_budget_left(top + bottom))
    fallback = f"{escape(digest.repo)} {day}: {label(lang, 'stats_line', **stats)}"
    return {"text": elide(fallback, FALLBACK_MAX), "blocks": top + middle + bottom}


FOLLOWUPS_SHOWN = 10  # in the parent; the report lists every one


def followup_blocks(digest: Digest, lang: str) -> list[Block]:
    """The parent's Follow-ups: what today's commits revert or fix of earlier days (DESIGN.md §3b)."""
    tz = ZoneInfo(digest.timezone)
    lines = [f"*{followup_word(lang, 'section')}* ({len(digest.followups)})"]
    for entry in digest.followups[:FOLLOWUPS_SHOWN]:
        p = entry_parts(lang, entry, tz)
        follow_up = link(entry.follow_up.url, safe(elide(p.follow_up_ref, ONE_LINER_TITLE_MAX)))
        original = link(entry.original_url, safe(elide(p.original_title, ONE_LINER_TITLE_MAX)))
        lines.append(f"{p.icon} {follow_up} {safe(p.verb)} {original} ({safe(p.aside)})")
    more = len(digest.followups) - FOLLOWUPS_SHOWN
    return sections("\n".join(lines)) + (
        context([label(lang, "slack_more_high", n=more)]) if more > 0 else []
    )


def _window_line(digest: Digest, lang: str) -> str:
    tz = ZoneInfo(digest.timezone)
    start = format_time(digest.window_start, tz)[:16]
    end = format_time(digest.window_end, tz)[:16]
    return " · ".join(
        [
            f"`{escape(code_text(digest.branch))}`",
            f"{label(lang, 'window')} {start} – {end} ({escape(zone_name(digest.timezone))})",
            f"{label(lang, 'analyzer')} {escape(analyzer_name(digest.analyzers))}",
        ]
    )


def _budget_left(blocks: list[Block]) -> tuple[int, int]:
    return BLOCKS_MAX - len(blocks), MESSAGE_TEXT_BUDGET - block_text_len(blocks)


def _high_one_liners(digest: Digest, highs: list[Commit], lang: str, budget: tuple[int, int]) -> list[Block]:
    lines = [
        f"• {_title(c, max_len=ONE_LINER_TITLE_MAX, bold=False)} {_sha(c)} · "
        f"{change_type_label(lang, digest.analysis_of(c).change_type)}"
        for c in highs
    ]
    # Keep room for the "…and N more" line; show as many one-liners as the message allows.
    blocks_left, chars_left = budget[0] - 1, budget[1] - 300
    heading = f"*{label(lang, 'tier_high')}* ({len(highs)})"
    for shown in range(len(lines), 0, -1):
        blocks = sections("\n".join([heading, *lines[:shown]]))
        if len(blocks) <= blocks_left and block_text_len(blocks) <= chars_left:
            more = len(lines) - shown
            return blocks + (context([label(lang, "slack_more_high", n=more)]) if more else [])
    return sections(heading) + context([label(lang, "slack_more_high", n=len(lines))])


# --- commit cards ----------------------------------------------------------------------------------


def card_messages(
    commit: Commit, analysis: Analysis, lang: str, *, tz: tzinfo | str | None = None, detail: bool = False
) -> list[Message]:
    """One commit's card: linked title, short SHA, type, importance and why, summary, risks and
    recommendations (medium and high), notes. `detail` adds scope and technical insights (the
    standalone /digest card, which has no report beside it). Usually one message; a long analysis
    continues in more."""
    check_lang(lang)
    if not same_commit(commit.sha, analysis.sha):
        raise ValueError(f"analysis {analysis.sha[:12]} does not belong to commit {commit.sha[:12]}")
    blocks = [
        *sections(_title(commit, max_len=CARD_TITLE_MAX, lang=lang)),
        *context([_commit_line(commit, lang, _zone(tz))]),
    ]
    blocks += fields_section(
        [
            f"*{label(lang, 'change_type')}*\n{change_type_label(lang, analysis.change_type)}",
            f"*{label(lang, 'importance')}*\n{importance_label(lang, analysis.importance)}",
        ]
    )
    if analysis.importance_reason.strip():
        blocks += context([safe(analysis.importance_reason.strip())])
    blocks += _card_body(analysis, lang, detail)
    notes = [safe(n.strip()) for n in analysis.notes if n.strip()]
    if notes:
        blocks += sections(_field(lang, "notes", join_notes(lang, notes)))
    title = safe(display_title(commit))
    fallback = f"{importance_label(lang, analysis.importance)} {title} ({escape(commit.short_sha)})"
    return pack(blocks, elide(fallback, FALLBACK_MAX), _continued(commit, lang))


def _card_body(analysis: Analysis, lang: str, detail: bool) -> list[Block]:
    summary = safe(analysis.summary.strip()) or label(lang, "none_stated")
    if analysis.importance == Importance.LOW:
        return sections(_field(lang, "summary_low", summary))
    blocks = sections(f"*{label(lang, 'summary')}*\n{summary}")
    if detail:
        blocks += _list(lang, "scope", analysis.scope)
        if analysis.importance == Importance.HIGH:
            blocks += _insights(lang, analysis.insights)
    blocks += _list(lang, "risks", analysis.risks)
    blocks += _list(lang, "recommendations", analysis.recommendations)
    return blocks


def _commit_line(commit: Commit, lang: str, tz: tzinfo | None) -> str:
    author = safe(quote_elided(lang, display_author(commit), CARD_AUTHOR_MAX)) or label(lang, "unknown")
    moment = commit.committed_at.astimezone(tz) if tz is not None else commit.committed_at
    zone = zone_name(getattr(tz, "key", None) or moment.strftime("UTC%z"))
    sha = link(commit.url, _sha(commit))
    return f"{sha} · {label(lang, 'col_author')} {author} · {format_time(moment)} ({escape(zone)})"


def _continued(commit: Commit, lang: str) -> Callable[[int, int], str]:
    title = safe(elide(display_title(commit), 80))
    return lambda part, parts: (
        f"{_sha(commit)} {title} · {label(lang, 'slack_continued', part=part, parts=parts)}"
    )


# --- the list of medium commits --------------------------------------------------------------------


def medium_list_messages(digest: Digest, commits: list[Commit]) -> list[Message]:
    """A compact list: one line per commit (linked title, SHA, type, summary). [] when empty."""
    if not commits:
        return []
    lang = check_lang(digest.lang)
    heading = f"*{label(lang, 'medium_list')}* ({len(commits)})"
    lines = [_medium_line(c, digest.analysis_of(c), lang) for c in commits]
    fallback = (
        f"{label(lang, 'medium_list')} ({len(commits)}) · {escape(digest.repo)} {digest.day.isoformat()}"
    )
    return pack(
        sections("\n".join([heading, *lines])),
        elide(fallback, FALLBACK_MAX),
        lambda part, parts: (
            f"{label(lang, 'medium_list')} · {label(lang, 'slack_continued', part=part, parts=parts)}"
        ),
    )


def high_list_messages(digest: Digest, commits: list[Commit]) -> list[Message]:
    """The high commits past a post's cap: one line each (linked title, SHA, type), no card. [] when empty."""
    if not commits:
        return []
    lang = check_lang(digest.lang)
    heading = f"*{label(lang, 'high_list', n=len(commits))}*"
    lines = [
        f"• {_title(c, max_len=HIGH_LIST_TITLE_MAX, bold=False, lang=lang)} {_sha(c)} · "
        f"{change_type_label(lang, digest.analysis_of(c).change_type)}"
        for c in commits
    ]
    fallback = f"{label(lang, 'high_list', n=len(commits))} · {escape(digest.repo)} {digest.day.isoformat()}"
    return pack(
        sections("\n".join([heading, *lines])),
        elide(fallback, FALLBACK_MAX),
        lambda part, parts: (
            f"{label(lang, 'tier_high')} · {label(lang, 'slack_continued', part=part, parts=parts)}"
        ),
    )


def _medium_line(commit: Commit, analysis: Analysis, lang: str) -> str:
    # elided with their size stated: one 60,000-character title took 14 messages; the report has it whole
    summary = safe(quote_elided(lang, " ".join(analysis.summary.split()), MEDIUM_SUMMARY_MAX))
    title = _title(commit, max_len=MEDIUM_TITLE_MAX, bold=False, lang=lang)
    line = f"• {title} {_sha(commit)} · {change_type_label(lang, analysis.change_type)}"
    return f"{line} — {summary}" if summary else line


# --- plain replies ---------------------------------------------------------------------------------


def text_messages(text: str) -> list[Message]:
    """Any text (an answer, an error, usage) as safe messages: escaped, split, never cut.
    Our own formatting (*bold*, `code`) survives escaping; mentions, links and the backticks of
    tame_backticks do not."""
    body = escape(tame_backticks(text.strip())) or "…"
    fallback = elide(" ".join(body.split()), FALLBACK_MAX)
    return pack(sections(body), fallback, lambda part, parts: f"({part}/{parts})")


def text_message(text: str) -> Message:
    """One message for a short text (usage, errors, acknowledgements); raises ValueError when the
    text needs more than one message, so nothing is ever cut silently: use text_messages then."""
    messages = text_messages(text)
    if len(messages) != 1:
        raise ValueError(f"text of {len(text)} characters needs {len(messages)} messages: use text_messages")
    return messages[0]
