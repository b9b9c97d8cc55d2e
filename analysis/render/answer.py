"""A thread answer (analysis/questions/document.py) in each platform's markup: Slack mrkdwn in Block Kit messages,
Discord Markdown in message contents. Every piece of text is treated as untrusted (commit titles, the
model's words): escaped so it cannot mention, link or format; only our own links and labels are markup.
Long answers are split over messages at line breaks, never cut."""

from __future__ import annotations

from analysis.questions.document import Answer, Line, Link, Span, Strong
from analysis.render.discord_embeds import CONTENT_MAX, dc_text, pack_lines
from analysis.render.markdown import safe_url
from analysis.render.slack_blocks import (
    FALLBACK_MAX,
    Message,
    elide,
    escape,
    link,
    pack,
    safe,
    sections,
)
from analysis.text import code_text, redact

# --- Slack -------------------------------------------------------------------------------------------


def _slack_span(span: Span) -> str:
    # A heading or a link's label can quote the asker ("commits titled ```x"): as untrusted as plain text,
    # or its "```" opened a code block over the rest of the answer.
    if isinstance(span, Link):
        return link(span.url, safe(span.text))
    if isinstance(span, Strong):
        return f"*{safe(span.text)}*"
    return safe(span)


def slack_mrkdwn(answer: Answer) -> str:
    return "\n".join("".join(_slack_span(s) for s in line) for line in _lines(answer))


def slack_messages(answer: Answer) -> list[Message]:
    """Block Kit messages (split when long) with a plain-text notification fallback."""
    body = slack_mrkdwn(answer) or "…"
    fallback = elide(" ".join(escape(answer.plain()).split()), FALLBACK_MAX) or "…"
    return pack(sections(body), fallback, lambda part, parts: f"({part}/{parts})")


# --- Discord -----------------------------------------------------------------------------------------


def _discord_span(span: Span) -> str:
    if isinstance(span, Link):
        url = safe_url(span.url)
        label = code_text(redact(span.text))  # between backticks: escapes would show, a backtick would end it
        # <url> inside the link: no preview embed under every answer.
        return f"[`{span.text}`](<{url}>)" if url and span.text.isalnum() else f"`{label}`"
    if isinstance(span, Strong):
        return f"**{dc_text(span.text)}**"
    if not span.strip():
        return span
    # dc_text makes one trimmed line: keep the spaces that join this span to its neighbours.
    lead, trail = span[: len(span) - len(span.lstrip())], span[len(span.rstrip()) :]
    return f"{' ' if lead else ''}{dc_text(span)}{' ' if trail else ''}"


def discord_chunks(answer: Answer) -> list[str]:
    """Message contents of at most 2000 characters, split between lines."""
    lines = ["".join(_discord_span(s) for s in line) for line in _lines(answer)]
    return pack_lines([line or "\u200b" for line in lines], CONTENT_MAX) or ["\u200b"]


def _lines(answer: Answer) -> list[Line]:
    return [line for line in answer.lines if line] or [("…",)]
