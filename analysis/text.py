"""Turning untrusted text (commit messages, diffs, model output) into safe text.

Commit text never pings a channel, never breaks our Markdown, never carries an e-mail address
or a trailer into a report.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from analysis.titles import TRAILER

ZWSP = "\u200b"
# Zero-width characters, direction marks and the byte-order mark: invisible in a chat, yet characters to a
# parser ("#1\u200b01" read as #1) and an answer of nothing but them looks empty.
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
# Two words: what prose (a comment, a docstring, a message) has and most code, keys and identifiers lack.
TWO_WORDS = re.compile(r"[A-Za-z]{2,}[^\w\n]+[A-Za-z]{2,}")

if TYPE_CHECKING:
    from analysis.models import Commit

# A real address needs an alphabetic top-level domain, so "lodash@4.17.21" or "torch@2.5" survive.
EMAIL = re.compile(r"<?\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b>?")
# Slack (<!channel>, <@U123>, <!subteam^S1>) and Discord (<@123>, <@!123>, <@&123>) mention syntax,
# and the bare words both platforms turn into mass mentions.
_MENTION_SYNTAX = re.compile(r"<([!@#])")
_MASS_MENTION = re.compile(r"@(everyone|here|channel|all)\b", re.IGNORECASE)
# A code span as CommonMark sees it: a whole run of N backticks closed by a whole run of exactly N
# (else "``<img …>`" would be kept raw while Markdown renders the <img> as live HTML).
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_MD_SPECIAL = re.compile(r"([\\*_\[\]<>~|&])")  # & too: an entity (&lt;, &#64;) shows as typed
_BLOCK_START = re.compile(r"^(\s*)(?:([#>+=-])|(\d+)([.)]))")


_NOT_IN_FILE_NAME = re.compile(r"[^\w.-]+")


def file_name_part(name: str) -> str:
    """A repository's name as part of a file we upload: `owner/repo` → `owner-repo`. A local clone's name is
    its folder's, which may hold spaces, quotes, a newline or control characters (an upload's file name goes
    into a multipart header): every run of characters but letters, digits, `.`, `_` and `-` becomes one `-`."""
    return _NOT_IN_FILE_NAME.sub("-", name).strip("-.") or "repo"


def strip_trailers(message: str) -> str:
    """The message without sign-off style trailers and e-mail addresses."""
    text = TRAILER.sub("", message)
    text = EMAIL.sub("", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


# GitHub's body of a pull request squash-merged from several commits: each commit as a "* title" paragraph,
# then a "---------" rule before the co-authors.
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_RULE = re.compile(r"([-=_*])\1{2,}")


def without_squash_list(body: str) -> str:
    """A message body without the list a squash merge writes of the commits it squashed ("* address review",
    "* fix lint") and without rules ("---------"): commit titles one after another are no description of the
    change. A list is a squash's when its items stand one paragraph each, at least two of them or one before a
    rule; an author's own list (items on consecutive lines) is kept."""
    paragraphs = _PARAGRAPH_BREAK.split(body)
    rules = [i for i, p in enumerate(paragraphs) if _RULE.fullmatch(p.strip())]
    items = [i for i, p in enumerate(paragraphs) if p.startswith("* ") and "\n* " not in p]
    squashed = len(items) >= 2 or (items and rules and items[0] < rules[-1])
    dropped = set(rules) | (set(items) if squashed else set())
    if not dropped:
        return body
    return "\n\n".join(p for i, p in enumerate(paragraphs) if i not in dropped).strip()


# Terminal escapes (ESC, other C0/C1 controls) and bidi overrides ("Trojan source") in commit text
# would act on a console or reorder what a reader sees; tab and newline are kept.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Whole terminal sequences go first, or removing their ESC leaves "[31m" in the text: CSI (ESC [ or
# 0x9b, parameters, final byte), OSC (ESC ] … BEL / ESC \\), two-byte escapes; then SGR remnants whose ESC
# was lost upstream ("[31mred[0m"), but not a bracketed "[5m]" or "[5min]".
_TERMINAL = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]"
    r"|\[\d{1,3}(?:;\d{1,3})*m(?![\w-]*\])"
)


def printable(text: str) -> str:
    """The text without terminal escapes, other control characters and bidi overrides (tab and newline
    kept): what a console may show of a model's reply or a server's error."""
    return _CONTROLS.sub("", _TERMINAL.sub("", text))


def neutralize_mentions(text: str) -> str:
    """Break @everyone / @here / @channel and <@…> / <!…> so no chat platform treats them as mentions.
    A zero-width space keeps the text readable while defeating the parser. Control characters and
    bidi overrides go too: every untrusted text passes here on its way out."""
    text = printable(text)
    text = _MASS_MENTION.sub(lambda m: "@" + ZWSP + m.group(1), text)
    return _MENTION_SYNTAX.sub(lambda m: "<" + ZWSP + m.group(1), text)


_ONE = re.compile(
    r"(?<![\d,.+/−-])1 (commit|author|file|line|folder|changed line|test file|binary file|other folder)s\b"
)


def singular_ones(text: str) -> str:
    """English plurals after a count of one: "1 commits today" → "1 commit today". "(+1/−1 lines)" stays:
    it counts two lines."""
    return _ONE.sub(r"1 \1", text)


def filled(lang: str, template: str, fmt: dict[str, object]) -> str:
    """A phrase template of `lang` filled in (labels, reasons, answers), English counts of one singular."""
    text = template.format(**fmt) if fmt else template
    return singular_ones(text) if lang == "en" else text


def one_line(text: str) -> str:
    return " ".join(text.split())


def code_text(text: str) -> str:
    """Untrusted text to put between backticks: one line, no backtick (it would end the span), no mention."""
    return neutralize_mentions(one_line(text).replace("`", "'"))


def md_inline(text: str) -> str:
    """Untrusted text as one line of Markdown: balanced `code spans` survive, every other character
    that could open emphasis, links, HTML or a table cell is escaped, and mentions are neutralised."""
    text = neutralize_mentions(one_line(text))
    out: list[str] = []
    pos = 0
    for m in CODE_SPAN.finditer(text):
        out.append(_MD_SPECIAL.sub(r"\\\1", text[pos : m.start()]).replace("`", "\\`"))
        out.append(m.group(0))
        pos = m.end()
    out.append(_MD_SPECIAL.sub(r"\\\1", text[pos:]).replace("`", "\\`"))
    return escape_block_start("".join(out))


def escape_block_start(text: str, syntax: re.Pattern[str] = _BLOCK_START) -> str:
    """Text that cannot open a heading, quote or list: a leading '#', '>', '-' or the dot of '1.'
    escaped. `syntax` says what opens one (Discord also takes '*'); its groups are those of _BLOCK_START."""
    return syntax.sub(_escaped_block_start, text, count=1)


def _escaped_block_start(m: re.Match[str]) -> str:
    # "1." is an ordered list only because of the dot: escape the punctuation, not the digit
    # (a backslash before a digit is not an escape and would show).
    if m.group(2):
        return m.group(1) + "\\" + m.group(2)
    return m.group(1) + m.group(3) + "\\" + m.group(4)


def md_cell(text: str) -> str:
    """Untrusted text inside a Markdown table cell: also no unescaped pipe, even in code spans."""
    return re.sub(r"(?<!\\)\|", r"\\|", md_inline(text))


NO_MESSAGE = "(no message)"


def redact(text: str) -> str:
    """Untrusted text without e-mail addresses (a report never carries one, DESIGN.md §4)."""
    return EMAIL.sub("", text)


def display_title(commit: Commit) -> str:
    """The commit's title (its first line; a pull request's merge commit: the pull request's title, see
    `analysis.titles.message_title`) without e-mail addresses, never a trailer (a message made only of
    trailers has no title)."""
    title = commit.title
    if not TRAILER.match(title):
        return " ".join(redact(title).split()) or NO_MESSAGE
    # TRAILER, not strip_trailers: a title keeps its own line structure.
    for line in TRAILER.sub("", commit.message).splitlines():
        if line.strip():
            return " ".join(redact(line).split()) or NO_MESSAGE
    return NO_MESSAGE


def display_author(commit: Commit) -> str:
    """The author's name without any e-mail address; "" when nothing is left."""
    return " ".join(redact(commit.author).split())
