"""The model's answer as lines of an Answer: the Markdown a small model writes despite being asked for plain
text, in forms every chat surface shows. A heading or a **bold** phrase becomes our bold, a table becomes
one line per row, a list marker a bullet; a link stays a link only to a page of a commit the thread knows
(cited as every answer cites commits), any other URL is dropped with its label kept. The text stays
untrusted: the renderers escape every span that is not our own link or bold."""

from __future__ import annotations

import re
from collections.abc import Sequence

from analysis.models import Commit
from analysis.questions.document import Answer, Span, Strong
from analysis.text import INVISIBLE

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<text>.*?)\s*#*\s*$")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_RULE = re.compile(r"^\s*(?:[-*_]\s*){3,}$")
_BULLET = re.compile(r"^\s*[-*+]\s+")
_QUOTE = re.compile(r"^\s*>\s?")
_BOLD = re.compile(r"\*\*(?P<a>[^*\n]+?)\*\*|__(?P<b>[^_\n]+?)__")
_LINK = re.compile(r"!?\[(?P<label>[^\]\n]*)\]\((?P<url><[^>\s]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\)")
_URL = re.compile(r"<?https?://[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'\"]>?")  # not its sentence's stop
_INLINE = re.compile(f"{_LINK.pattern}|{_BOLD.pattern}|{_URL.pattern}")
_PAGE = re.compile(
    r"/(?:-/)?(?:commits?/(?P<sha>[0-9a-fA-F]{7,64})|(?:pull|pulls|merge_requests)/(?P<pr>\d{1,9}))\b"
)


# A thread answer is asked for in 150 words; a reply past this is a model looping (or a server ignoring
# max_tokens): cut, so the fact check stays fast and the thread gets a few messages, not fifty.
MODEL_REPLY_CHARS = 4000


def bounded_reply(text: str, limit: int = MODEL_REPLY_CHARS) -> tuple[str, bool]:
    """The model's reply at most `limit` characters, cut at the last line or sentence end before it, and
    whether it was cut; "" when nothing in it is visible (zero-width characters, marks, blanks)."""
    if not INVISIBLE.sub("", text).strip():
        return "", False
    if len(text) <= limit:
        return text, False
    head = text[:limit]
    ends = [head.rfind(mark) for mark in ("\n", ". ", "。", "! ", "? ")]
    end = max(ends)
    return (head[: end + 1] if end > limit // 2 else head).rstrip(), True


def add_model_text(a: Answer, text: str, commits: Sequence[Commit]) -> None:
    """The model's (checked) text added to `a` line by line, its Markdown in our spans; `commits`: those the
    answer may link to."""
    rows: list[list[str]] = []
    for raw in text.splitlines():
        if _TABLE_ROW.match(raw):
            if not _TABLE_RULE.match(raw):
                rows.append([cell.strip() for cell in raw.strip().strip("|").split("|")])
            continue
        if rows:
            _table(a, rows, commits)
            rows = []
        if _FENCE.match(raw) or _RULE.match(raw):
            continue  # a code fence or a horizontal rule: markup with nothing to say
        heading = _HEADING.match(raw)
        if heading:
            if heading.group("text"):
                a.add(Strong(_plain(heading.group("text"))))
            continue
        line = _QUOTE.sub("", raw)
        lead: list[Span] = []
        if _BULLET.match(line):
            lead, line = ["• "], _BULLET.sub("", line)
        a.add(*lead, *_spans(a, line, commits))
    if rows:
        _table(a, rows, commits)


def _table(a: Answer, rows: list[list[str]], commits: Sequence[Commit]) -> None:
    """A table as lines: its header in bold, each row a bullet of its cells."""
    head, *body = rows
    if body:
        a.add(Strong(" · ".join(_plain(cell) for cell in head if cell)))
    for row in body or [head]:
        spans: list[Span] = ["• "]
        for i, cell in enumerate(c for c in row if c):
            spans += ([" · "] if i else []) + _spans(a, cell, commits)
        a.add(*spans)


def _spans(a: Answer, text: str, commits: Sequence[Commit]) -> list[Span]:
    """One line's spans: bold as ours, links to known commits cited, other URLs dropped."""
    out: list[Span] = []
    pos = 0
    dropped = False  # a URL was left out: no double space where it stood
    for m in _INLINE.finditer(text):
        out.append(_after(out, text[pos : m.start()], dropped))
        pos, dropped = m.end(), False
        if m.group("label") is not None:
            label = _plain(m.group("label"))
            commit = _page_of(m.group("url").strip("<>"), commits)
            out.append(label)
            if commit is not None and commit.short_sha not in label:
                out += [" (", a.cite(commit), ")"] if label else [a.cite(commit)]
        elif m.group("a") is not None or m.group("b") is not None:
            out.append(Strong(_plain(m.group("a") or m.group("b") or "")))
        else:
            commit = _page_of(m.group(0).strip("<>"), commits)
            if commit is not None:
                out.append(a.cite(commit))
            dropped = commit is None
    out.append(_after(out, text[pos:], dropped))
    return [span for span in out if span != ""]


def _after(out: list[Span], text: str, dropped: bool) -> str:
    """The text after a dropped URL, without the space it leaves ("and , or")."""
    if dropped and out and isinstance(out[-1], str) and out[-1].endswith(" "):
        if text[:1] in (",", ".", ";", ":", "!", "?", ")"):
            out[-1] = out[-1].rstrip(" ")
        return text.lstrip(" ")
    return text


def _page_of(url: str, commits: Sequence[Commit]) -> Commit | None:
    """The known commit a URL is the commit or pull-request page of, on the repository's own host."""
    m = _PAGE.search(url)
    if m is None:
        return None
    base = url[: m.start()]
    for commit in commits:
        if not commit.url or "/commit/" not in commit.url or commit.url.split("/commit/", 1)[0] != base:
            continue
        sha, pr = m.group("sha"), m.group("pr")
        if (sha and commit.sha.lower().startswith(sha.lower())) or (pr and commit.pr_number == int(pr)):
            return commit
    return None


def _plain(text: str) -> str:
    """Words without their markup: bold markers, a link's URL (its label kept), bare URLs."""
    text = _URL.sub("", _LINK.sub(lambda m: m.group("label"), text))
    return " ".join(_BOLD.sub(lambda m: m.group("a") or m.group("b") or "", text).split())
