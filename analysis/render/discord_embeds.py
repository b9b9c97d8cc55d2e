"""Discord rendering: embed dicts (`discord.Embed.from_dict` shape) and content strings.

Pure: dicts and strings in and out, no discord import. Every message produced here respects Discord's
limits (content 2000; embed title 256, description 4096, 25 fields of name 256 / value 1024, footer 2048,
author 256, 6000 characters across a message's embeds, 10 embeds per message; Discord counts code
points, like Python's len). Long text is split into more fields, embeds or messages, never cut.

Untrusted text (commit titles, authors, analyses) goes through `dc_text`: mentions neutralised, the
Markdown that could break our layout escaped (emphasis, code, spoilers, quotes, headings, masked
links) and bare URLs defused, so the only live links are the ones we build from checked URLs.

Over 400 lines because it is one renderer: every Discord message we build shares the same limits and splitting
rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from zoneinfo import ZoneInfo

from analysis.labels import (
    change_type_label,
    check_lang,
    importance_label,
    label,
    note_sentence,
    quote_elided,
    stats_lines,
    zone_name,
)
from analysis.models import Analysis, Commit, Digest, Importance
from analysis.render.followups import entry_parts
from analysis.render.followups import word as followup_word
from analysis.render.markdown import analyzer_name, inline, safe_url
from analysis.text import (
    CODE_SPAN,
    ZWSP,
    display_author,
    display_title,
    escape_block_start,
    neutralize_mentions,
    one_line,
    redact,
)

CONTENT_MAX = 2000
TITLE_MAX = 256
DESCRIPTION_MAX = 4096
FIELDS_MAX = 25
FIELD_NAME_MAX = 256
FIELD_VALUE_MAX = 1024
FOOTER_MAX = 2048
AUTHOR_MAX = 256
EMBED_TOTAL_MAX = 6000  # across every embed of one message
EMBEDS_MAX = 10
THREAD_NAME_MAX = 100
CARD_TITLE_MAX = 1000
CARD_AUTHOR_MAX = 200
ONE_LINER_MAX = 120  # a title in a one-line list entry; the full title is in the card
MEDIUM_TITLE_MAX = 300  # a title in the medium list, elided beyond with its size stated (the report has it)
HIGH_LIST_TITLE_MAX = 120  # the list of high commits past the cap on cards: one short line each

COLORS = {
    Importance.HIGH: 0xE74C3C,
    Importance.MEDIUM: 0xF1C40F,
    Importance.LOW: 0x2ECC71,
}
PARENT_COLOR = 0x5865F2
ICONS = {Importance.HIGH: "🔴", Importance.MEDIUM: "🟡", Importance.LOW: "🟢"}

Message = dict[str, Any]  # {"content"?: str, "embeds": [embed dict, …]}
Embed = dict[str, Any]

# Read left to right as Discord does: an escape pair, a code span, or a run of unmatched backticks.
_TOKEN = re.compile(r"\\.|(`+)(.+?)\1|`+", re.DOTALL)
# What opens a heading, quote or list at the start of a field; Discord also lists "* ".
_BLOCK_START = re.compile(r"^(\s*)(?:([#>+=*-])|(\d+)([.)]))")
_ESCAPED_NUMBER = re.compile(r"^(\s*)\\(\d+)([.)])")
_AUTOLINK = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*):(//)")


# --- safe text ----------------------------------------------------------------------------------------


def dc_text(text: str) -> str:
    """Untrusted text as one line of Discord Markdown that renders literally and links nowhere."""
    # `inline` redacts e-mail addresses, neutralises mentions and escapes Markdown; Discord also
    # turns bare URLs into links, so a zero-width space after the scheme keeps them inert.
    text = _AUTOLINK.sub(lambda m: f"{m.group(1)}:{ZWSP}{m.group(2)}", inline(text))
    # `inline` writes "\1." for a leading "1."; Discord only honours escapes of punctuation: "1\.".
    return _ESCAPED_NUMBER.sub(r"\1\2\\\3", text, count=1)


def dc_plain(text: str) -> str:
    """Untrusted text where Discord renders no Markdown (footer, author, thread name): one line, no
    e-mail addresses, no mentions. Escaping here would show the backslashes."""
    return neutralize_mentions(one_line(redact(text)))


def shorten(text: str, limit: int) -> str:
    """Raw text to at most limit characters with an ellipsis: only for display copies whose full text
    appears elsewhere (list one-liners, titles, thread names). Escape after shortening, never before."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# --- splitting ----------------------------------------------------------------------------------------


def _protected(text: str) -> list[tuple[int, int]]:
    """Spans a cut must not fall inside: backslash escapes and code spans."""
    return [(m.start(), m.end()) for m in _TOKEN.finditer(text) if m.end() - m.start() > 1]


def _cut_at(text: str, limit: int) -> int:
    """Where to cut text (len > limit) so the head has at most limit chars: the last line break, else
    the last space, else the last allowed position, outside protected spans. 0: a protected span
    covers the whole window."""
    inside = bytearray(limit + 1)  # 1: a cut before this index would split a protected span
    for start, end in _protected(text):
        if start >= limit:
            break
        for i in range(start + 1, min(end, limit + 1)):
            inside[i] = 1
    for pattern in ("\n", " "):
        at = max((i for i in range(1, limit + 1) if text[i - 1] == pattern and not inside[i]), default=0)
        if at:
            return at
    return max((i for i in range(1, limit + 1) if not inside[i]), default=0)


def _split_code_span(text: str, limit: int) -> tuple[str, str]:
    """text starts with a code span longer than limit: close it at the limit and reopen it after."""
    m = CODE_SPAN.match(text)
    if m is None or limit <= 2 * len(m.group(1)) + 1:  # a run of bare backticks: any cut is harmless
        return text[:limit], text[limit:]
    fence = m.group(1)
    room = limit - 2 * len(fence)
    body = m.group(2)
    return fence + body[:room] + fence, fence + body[room:] + fence + text[m.end() :]


def split_markdown(text: str, limit: int) -> list[str]:
    """Escaped Markdown in pieces of at most limit characters, cut at line breaks or spaces, never
    inside an escape or a code span (one too long is closed and reopened). Each piece is non-empty and
    cannot start a heading, quote or list. Nothing is dropped but the whitespace at the cuts."""
    if limit < 16:
        raise ValueError("limit too small to split Markdown safely")
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        cut = _cut_at(rest, limit)
        if cut:
            head, rest = rest[:cut].rstrip(), rest[cut:].lstrip()
        else:
            head, rest = _split_code_span(rest, limit)
        if head:
            pieces.append(head)
        # The piece now starts a field: it must not open a heading, quote or list.
        rest = escape_block_start(rest, _BLOCK_START)
    if rest:
        pieces.append(rest)
    return pieces or ["\u200b"]


def pack_lines(lines: Iterable[str], limit: int) -> list[str]:
    """Lines joined with newlines into chunks of at most limit characters; a line longer than limit is
    split across chunks (`split_markdown`)."""
    chunks: list[str] = []
    current = ""
    for line in lines:
        for part in split_markdown(line, limit) if len(line) > limit else [line]:
            if current and len(current) + 1 + len(part) <= limit:
                current += "\n" + part
                continue
            if current:
                chunks.append(current)
            current = part
    if current:
        chunks.append(current)
    return chunks


# --- embeds -------------------------------------------------------------------------------------------


def embed_chars(embed: Embed) -> int:
    """The characters Discord counts towards the 6000 of a message."""
    total = len(embed.get("title", "")) + len(embed.get("description", ""))
    total += sum(len(f["name"]) + len(f["value"]) for f in embed.get("fields", []))
    total += len(embed.get("footer", {}).get("text", "")) + len(embed.get("author", {}).get("name", ""))
    return total


def message_problems(message: Message) -> list[str]:
    """Every Discord limit a message breaks (empty when it is valid); the tests and the fake use it."""
    problems: list[str] = []
    content = message.get("content") or ""
    embeds = message.get("embeds") or []
    if len(content) > CONTENT_MAX:
        problems.append(f"content has {len(content)} > {CONTENT_MAX} characters")
    if len(embeds) > EMBEDS_MAX:
        problems.append(f"{len(embeds)} > {EMBEDS_MAX} embeds")
    for i, embed in enumerate(embeds):
        problems += [f"embed {i}: {p}" for p in _embed_problems(embed)]
    total = sum(embed_chars(e) for e in embeds)
    if total > EMBED_TOTAL_MAX:
        problems.append(f"embeds total {total} > {EMBED_TOTAL_MAX} characters")
    return problems


def _embed_problems(embed: Embed) -> list[str]:
    checks = [
        ("title", embed.get("title"), TITLE_MAX),
        ("description", embed.get("description"), DESCRIPTION_MAX),
        ("footer", embed.get("footer", {}).get("text"), FOOTER_MAX),
        ("author", embed.get("author", {}).get("name"), AUTHOR_MAX),
    ]
    problems = [
        f"{name} has {len(value)} > {limit}" for name, value, limit in checks if value and len(value) > limit
    ]
    problems += [f"{name} is empty" for name, value, _ in checks if value is not None and not value.strip()]
    fields = embed.get("fields", [])
    if len(fields) > FIELDS_MAX:
        problems.append(f"{len(fields)} > {FIELDS_MAX} fields")
    for j, f in enumerate(fields):
        for part, limit in (("name", FIELD_NAME_MAX), ("value", FIELD_VALUE_MAX)):
            text = f.get(part) or ""
            if not text.strip():
                problems.append(f"field {j} {part} is empty")
            elif len(text) > limit:
                problems.append(f"field {j} {part} has {len(text)} > {limit}")
    return problems


def _field(name: str, value: str, inline_: bool = False) -> dict[str, Any]:
    return {"name": name, "value": value, "inline": inline_}


def _fields(lang: str, name: str, lines: list[str], *, continued: bool = False) -> list[dict[str, Any]]:
    """A field of lines, continued in more fields ("name (cont.)") when it is longer than 1024."""
    chunks = pack_lines(lines, FIELD_VALUE_MAX) or [label(lang, "none_stated")]
    more = label(lang, "discord_continued", name=name)
    return [_field(more if i or continued else name, chunk) for i, chunk in enumerate(chunks)]


def pack_embeds(head: Embed, fields: list[dict[str, Any]], footer: str | None = None) -> list[Message]:
    """The head embed (title, url, description, colour…) followed by fields, spread over as many embeds
    (≤ 25 fields each) and messages (≤ 10 embeds, ≤ 6000 characters) as they need. The footer goes on
    the last embed; its length is reserved in every message so it always fits."""
    reserve = len(footer or "")
    messages: list[Message] = []
    embeds: list[Embed] = []
    current: Embed = {**head, "fields": []}
    used = embed_chars(current)  # characters of the message so far, current embed included
    for f in fields:
        size = len(f["name"]) + len(f["value"])
        if len(current["fields"]) < FIELDS_MAX and used + size + reserve <= EMBED_TOTAL_MAX:
            current["fields"].append(f)
            used += size
            continue
        embeds.append(current)
        current = {"color": head.get("color"), "fields": [f]} if "color" in head else {"fields": [f]}
        if len(embeds) == EMBEDS_MAX or used + size + reserve > EMBED_TOTAL_MAX:
            messages.append({"embeds": embeds})
            embeds, used = [], 0
        used += size
    if footer:
        current["footer"] = {"text": footer}
    embeds.append(current)
    messages.append({"embeds": embeds})
    for message in messages:
        for embed in message["embeds"]:
            if not embed["fields"]:
                del embed["fields"]
    return messages


def _titled(prefix: str, title: str) -> tuple[str, str | None]:
    """An embed title of prefix + escaped title within 256 characters; when the title must be shortened
    there, the full escaped title is returned too, for the description."""
    full = prefix + dc_text(title)
    if len(full) <= TITLE_MAX:
        return full, None

    def fits(n: int) -> bool:
        return len(prefix + dc_text(shorten(title, n))) <= TITLE_MAX

    # Escaping lengthens text unevenly: find the longest raw prefix whose escaped form fits.
    lo, hi = 1, len(title)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    while lo > 1 and not fits(lo):
        lo -= 1
    return prefix + dc_text(shorten(title, lo)), dc_text(title)


def _url(url: str | None) -> str | None:
    safe = safe_url(url)
    return safe if safe and len(safe) <= 2048 else None


def _short(commit: Commit) -> str:
    return re.sub(r"[^0-9a-fA-F]", "", commit.sha)[:7] or "?"


def _sha_link(commit: Commit) -> str:
    url = _url(commit.url)
    return f"[`{_short(commit)}`]({url})" if url else f"`{_short(commit)}`"


# --- the digest's parent message ----------------------------------------------------------------------


def parent_embed(digest: Digest) -> Embed:
    """The parent message's one embed: repository and day, counts by tier, the high items as linked
    one-liners (as many as fit; the rest are named by count: every one has its card in the thread)."""
    lang = check_lang(digest.lang)
    title, full_title = _titled(
        "📰 ", f"{digest.repo} · {label(lang, 'report_title', date=digest.day.isoformat())}"
    )
    stats = digest.stats
    lines = [f"**{full_title}**"] if full_title else []
    lines += [
        *stats_lines(lang, stats, digest),
        _window_line(digest),
    ]
    highs = digest.by_importance(Importance.HIGH)
    if not digest.commits:
        lines.append(label(lang, "no_commits"))
    elif highs:
        lines += ["", f"**{label(lang, 'tier_high')}**"]
    extra = followup_fields(digest)
    # Follow-ups take their room from the description: one embed holds at most 6000 characters.
    room = EMBED_TOTAL_MAX - 1000 - sum(len(f["name"]) + len(f["value"]) for f in extra)
    description = _fill(lines, [_one_liner(c) for c in highs], lang, min(DESCRIPTION_MAX, room))
    footer = f"{label(lang, 'analyzer')}: {analyzer_name(digest.analyzers)}"
    embed: Embed = {
        "title": title,
        "description": description,
        "color": PARENT_COLOR,
        "fields": [
            _field(importance_label(lang, level), str(stats[level.value]), True)
            for level in (Importance.HIGH, Importance.MEDIUM, Importance.LOW)
        ]
        + extra,
        "footer": {"text": footer},
        "timestamp": digest.generated_at.isoformat(),
    }
    url = _repo_url(digest)
    if url:
        embed["url"] = url
    return embed


FOLLOWUP_FIELDS_MAX = 2  # fields of the parent embed given to Follow-ups (25 in all, 6000 characters)


def followup_fields(digest: Digest) -> list[dict[str, Any]]:
    """The parent's Follow-ups: what today's commits revert or fix of earlier days, as embed fields."""
    if not digest.followups:
        return []
    lang, tz = digest.lang, ZoneInfo(digest.timezone)
    lines = []
    for entry in digest.followups:
        p = entry_parts(lang, entry, tz)
        follow_up = dc_text(p.follow_up_ref)
        url = _url(entry.follow_up.url)
        follow_up = f"[{follow_up}]({url})" if url else follow_up
        original = dc_text(shorten(p.original_title, ONE_LINER_MAX))
        url = _url(entry.original_url)
        original = f"[{original}]({url})" if url else original
        lines.append(f"{p.icon} {follow_up} {dc_text(p.verb)} {original} ({dc_text(p.aside)})")
    name = followup_word(lang, "section")
    for shown in range(len(lines), 0, -1):  # as many as fit; the report in the thread lists every one
        fields = _fields(lang, name, lines[:shown])
        if len(fields) <= FOLLOWUP_FIELDS_MAX:
            break
    if shown < len(lines):
        fields.append(_field("…", label(lang, "discord_more_in_thread", count=len(lines) - shown)))
    return fields


def _window_line(digest: Digest) -> str:
    start, end = digest.window_start, digest.window_end
    return (
        f"{label(digest.lang, 'window')}: {start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M} "
        f"{dc_text(zone_name(digest.timezone))}"
    )


def _fill(head: list[str], items: list[str], lang: str, limit: int = DESCRIPTION_MAX) -> str:
    """head lines plus as many items as fit in a description, then "… and N more in the thread"."""
    text = "\n".join(head)
    for i, item in enumerate(items):
        left_after = len(items) - i - 1
        # Keep room for the "N more" line this item would need if the next one does not fit.
        tail = 1 + len(label(lang, "discord_more_in_thread", count=left_after)) if left_after else 0
        if len(text) + 1 + len(item) + tail > limit:
            return text + "\n" + label(lang, "discord_more_in_thread", count=len(items) - i)
        text += "\n" + item
    return text


def _one_liner(commit: Commit) -> str:
    title = dc_text(shorten(display_title(commit), ONE_LINER_MAX))
    url = _url(commit.url)
    return f"• [{title}]({url}) `{_short(commit)}`" if url else f"• {title} `{_short(commit)}`"


def _repo_url(digest: Digest) -> str | None:
    """The repository's web page, derived from its commits' URLs (only ever a URL the source gave)."""
    for commit in digest.commits:
        if commit.url and "/commit/" in commit.url:
            return _url(commit.url.split("/commit/", 1)[0])
    return None


def thread_name(digest: Digest) -> str:
    """The digest thread's name (≤ 100 characters, plain text)."""
    day = digest.day.isoformat()
    repo = dc_plain(digest.repo)
    room = THREAD_NAME_MAX - len(day) - 3
    return f"{day} · {shorten(repo, room)}"


# --- cards --------------------------------------------------------------------------------------------


def card_messages(commit: Commit, analysis: Analysis, lang: str) -> list[Message]:
    """One commit's card: title linked to the commit, type, importance and why, short SHA, summary,
    risks and recommendations (medium and high), notes. Usually one message; a long analysis spills
    into more fields, embeds and messages, in order, with nothing cut."""
    check_lang(lang)
    level = analysis.importance
    # A card quotes at most CARD_TITLE_MAX of a title, its size stated (a "title" can be a 190 KB line).
    title, full_title = _titled(f"{ICONS[level]} ", quote_elided(lang, display_title(commit), CARD_TITLE_MAX))
    summary = dc_text(analysis.summary) or label(lang, "none_stated")
    description_lines = [f"**{full_title}**", summary] if full_title else [summary]
    description, *overflow = pack_lines(description_lines, DESCRIPTION_MAX)
    head: Embed = {"title": title, "description": description, "color": COLORS[level]}
    if url := _url(commit.url):
        head["url"] = url
    author_name = quote_elided(lang, display_author(commit), CARD_AUTHOR_MAX)  # a name can be 190 KB too
    author = dc_plain(author_name)
    if author and len(author) <= AUTHOR_MAX:
        head["author"] = {"name": author}
    head["timestamp"] = commit.committed_at.isoformat()

    summary_key = "summary_low" if level == Importance.LOW else "summary"
    fields: list[dict[str, Any]] = []
    for chunk in overflow:
        fields += _fields(lang, label(lang, summary_key), [chunk], continued=True)
    fields.append(_field(label(lang, "change_type"), change_type_label(lang, analysis.change_type), True))
    fields.append(_field(label(lang, "view_commit"), _sha_link(commit), True))
    if author and len(author) > AUTHOR_MAX:  # too long for the author line: a field keeps it whole
        fields += _fields(lang, label(lang, "col_author"), [dc_text(author_name)])
    reason = dc_text(analysis.importance_reason)
    importance = importance_label(lang, level) + (f" — {reason}" if reason else "")
    fields += _fields(lang, label(lang, "importance"), [importance])
    if level != Importance.LOW:
        fields += _fields(lang, label(lang, "risks"), _bullets(analysis.risks))
        fields += _fields(lang, label(lang, "recommendations"), _bullets(analysis.recommendations))
    notes = _bullets([note_sentence(lang, n) for n in analysis.notes if n.strip()])
    if notes:
        fields += _fields(lang, label(lang, "notes"), notes)
    footer = dc_plain(f"{commit.repo} · {analysis.analyzer}")
    return pack_embeds(head, fields, shorten(footer, AUTHOR_MAX))  # short: its room is kept in every message


def _bullets(items: list[str]) -> list[str]:
    return [f"• {dc_text(item)}" for item in items if item.strip()]


# --- the medium list ----------------------------------------------------------------------------------


def medium_list_messages(digest: Digest, commits: list[Commit]) -> list[Message]:
    """The compact list of medium commits: one line each (linked SHA, title, change type)."""
    lang = check_lang(digest.lang)
    heading = f"{label(lang, 'medium_list')} ({len(commits)})"
    return _commit_list(digest, commits, heading, Importance.MEDIUM, MEDIUM_TITLE_MAX)


def high_list_messages(digest: Digest, commits: list[Commit]) -> list[Message]:
    """The high commits past a post's cap, listed like the medium ones: no card of their own."""
    lang = check_lang(digest.lang)
    heading = label(lang, "high_list", n=len(commits))
    return _commit_list(digest, commits, heading, Importance.HIGH, HIGH_LIST_TITLE_MAX)


def _commit_list(
    digest: Digest, commits: list[Commit], heading: str, tier: Importance, title_max: int
) -> list[Message]:
    lang = check_lang(digest.lang)
    lines = []
    for commit in commits:
        analysis = digest.analyses.get(commit.sha)
        kind = f" · {change_type_label(lang, analysis.change_type)}" if analysis else ""
        title = dc_text(quote_elided(lang, display_title(commit), title_max))
        lines.append(f"{_sha_link(commit)} {title}{kind}")
    chunks = pack_lines(lines, DESCRIPTION_MAX) or [label(lang, "none_stated")]
    embeds: list[Embed] = [
        {"title": heading, "description": chunk, "color": COLORS[tier]} for chunk in chunks
    ]
    return _group(embeds)


def _group(embeds: list[Embed]) -> list[Message]:
    """Consecutive embeds into messages of ≤ 10 embeds and ≤ 6000 characters (each embed fits alone)."""
    messages: list[Message] = []
    current: list[Embed] = []
    used = 0
    for embed in embeds:
        size = embed_chars(embed)
        if current and (len(current) == EMBEDS_MAX or used + size > EMBED_TOTAL_MAX):
            messages.append({"embeds": current})
            current, used = [], 0
        current.append(embed)
        used += size
    if current:
        messages.append({"embeds": current})
    return messages


# --- content ------------------------------------------------------------------------------------------


def report_content(digest: Digest, filename: str, part: int = 1, parts: int = 1) -> str:
    """The text of the message carrying the report file."""
    lang = check_lang(digest.lang)
    suffix = f" ({part}/{parts})" if parts > 1 else ""
    return shorten(f"📎 {label(lang, 'full_report')}: {dc_text(filename)}{suffix}", CONTENT_MAX)


def split_utf8(text: str, max_bytes: int) -> list[str]:
    """Text in pieces of at most max_bytes UTF-8 bytes, cut at line ends when possible (attachments)."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        encoded = len(line.encode("utf-8"))
        if current and size + encoded > max_bytes:
            pieces.append("".join(current))
            current, size = [], 0
        while encoded > max_bytes:  # one enormous line: cut it by characters
            head = line.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
            pieces.append(head)
            line = line[len(head) :]
            encoded = len(line.encode("utf-8"))
        current.append(line)
        size += encoded
    if current:
        pieces.append("".join(current))
    return pieces or [""]


def content_chunks(text: str) -> list[str]:
    """Free text we send as message content (answers, help): mentions neutralised, masked links made
    impossible, and split at line breaks into messages of at most 2000 characters."""
    safe = neutralize_mentions(text).replace("[", "\\[").replace("]", "\\]")
    chunks = pack_lines(safe.splitlines(), CONTENT_MAX)
    return chunks or ["\u200b"]


HELP = {
    "en": (
        "**/digest** — commit digests\n"
        "• `/digest ref:<sha>` · `ref:#12345` · `ref:<commit URL>` · `ref:owner/name@<sha>` — analyse one commit"
        " (add `repo:owner/name` to pick the repository)\n"
        "• `/digest date:YYYY-MM-DD [repo:owner/name]` — post that day's digest here, with a thread\n"
        "• `/digest ref:subscribe owner/name [HH:MM] [Zone/Name] [zh|en]` · `ref:unsubscribe owner/name`"
        " · `ref:list` — daily digests in this channel\n"
        "• In a digest thread, mention me with a question about a commit's risks."
    ),
    "zh": (
        "**/digest** — 提交摘要\n"
        "• `/digest ref:<sha>` · `ref:#12345` · `ref:<提交链接>` · `ref:owner/name@<sha>` — 分析单个提交"
        "（可加 `repo:owner/name` 指定仓库）\n"
        "• `/digest date:YYYY-MM-DD [repo:owner/name]` — 在本频道发布当天的摘要（附讨论串）\n"
        "• `/digest ref:subscribe owner/name [HH:MM] [时区] [zh|en]` · `ref:unsubscribe owner/name`"
        " · `ref:list` — 本频道的每日摘要订阅\n"
        "• 在摘要讨论串中提及我并提问，即可询问某个提交的风险。"
    ),
}


def help_text(lang: str) -> str:
    return HELP.get(lang, HELP["en"])
