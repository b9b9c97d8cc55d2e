"""Which changed files change only prose: comments, docstrings and message text (DESIGN.md §3c:
docstrings are prose, not code). A typo fixed in a docstring changes nothing users run.

A patch shows only a few lines around each change, so a hunk may start in the middle of a long
docstring or block comment, with no opening quote in sight. Each hunk side is therefore scanned from
every state it may start in (outside, or inside a triple-quoted string or block comment) and the most
plausible reading is kept: the one under which the fewest lines read as code look like prose, a
reading that leaves a string open at the hunk's end counting against it, and "outside" winning ties.
A line is prose when, under that reading, nothing of it is code: a comment, a docstring line, or a
string literal of several words (a one-word literal such as `"bar",` in a list is data, not prose).

Conservative by design: a file is prose-only only when every changed line on both sides is prose; a
file of an unknown language, or with more than PROSE_MAX_LINES changed lines, is read as code.
"""

from __future__ import annotations

import keyword
import re
import warnings
from collections.abc import Iterator
from functools import lru_cache

from analysis.heuristic.code_lines import knows, open_states, scan
from analysis.text import TWO_WORDS

PROSE_MAX_LINES = 400  # changed lines of one file: beyond that, reading it as code is cheaper and safer
_HUNK = re.compile(r"^@@", re.M)
_HUNK_LINES = re.compile(r"^ -(?P<old>\d+)(?:,\d+)? \+(?P<new>\d+)")  # after the split's "@@"
_LEFTOVER = re.compile(r'^[\s"\'),\]}+;]*$')  # what remains of a line that is only a string (and closers)
# Comment lines by language family: "#", or "//", "/*" and the "* " lines inside a block comment.
_HASH_COMMENT_LINE = re.compile(r"^\s*#")
_C_COMMENT_LINE = re.compile(r"^\s*(?://|/\*|\*(?:\s|/|$))")
_STRING = re.compile(r"""^\s*[rRbBuUfF]{0,2}(["'])(?P<body>.*)\1\s*[,)\]}+;]*\s*$""")
# Marks of code that prose seldom has: a call, an assignment or comparison, a line ending in an opener
# or a comma, a leading keyword. A line with one is taken for code without parsing it.
_CODE_HINT = re.compile(
    r"\w\(|[^=!<>]=[^=]|==|[(\[{,\\]\s*$|^\s*[)\]}]|^\s*(?:def|class|return|import|from|raise|if|elif|else|for|while|with"
    r"|try|except|finally|assert|yield|async|await|lambda|self\.|@)\b"
)
# Two whole words in a string literal: a message. "int max_tokens, " is a piece of a signature a schema string
# spells out (an op's declaration), its words identifiers: code.
_WHOLE_WORDS = re.compile(r"(?<!\w)[A-Za-z]{2,}[^\w\n]+[A-Za-z]{2,}(?!\w)")
Side = tuple[tuple[str, str], ...]  # a hunk side's lines (sign, text), its context included
_START_PENALTY = 0.5  # a reading that assumes the hunk starts inside a string: prefer "outside" on ties


def prose_only(patch: str, language: str | None) -> bool:
    """True when every changed line of the patch, on both sides, is comment, docstring or message text."""
    if not knows(language) or not patch:
        return False
    changed = 0
    for lines, sides in _hunks(patch):
        changed += sum(1 for sign, _ in lines if sign != " ")
        if changed > PROSE_MAX_LINES:
            return False
        prose = all(_side_is_prose(mine, language, at_top) for _, mine, at_top in sides)  # type: ignore[arg-type]
        if not prose and not _comments_differ(sides, language):  # type: ignore[arg-type]  # knows() checked it
            return False
    return changed > 0


def _comments_differ(sides: tuple[tuple[str, Side, bool], ...], language: str) -> bool:
    """Whether a hunk's two sides are the same code, line by line, once their comments are cut: a trailing
    comment reworded on a line of code (`#define SHR(a, b) ((a) >> (b))  // Shift Right Algebaic`), beside
    comment lines. Read from outside any string or comment; a side that begins or ends a multi-line string or
    comment on a changed line, or leaves one open, is not told this way (its strings may hold what looks like
    a comment)."""
    marks = ("#",) if _comment_line(language) is _HASH_COMMENT_LINE else ("//", "/*", "*")
    if not any(m in text for _, mine, _ in sides for sign, text in mine if sign != " " for m in marks):
        return False  # no comment among the changed lines: the code changed (and no scan is spent on it)
    sides_code: list[list[str]] = []
    for side, mine, _ in sides:
        scanned, left_open = scan([text for _, text in mine], language, keep_strings=True)
        if left_open is not None:
            return False
        if any(
            began or ended for (sign, _), (_, began, ended) in zip(mine, scanned, strict=True) if sign == side
        ):
            return False
        # the whole side, context included (a line moved is no comment changed), and the spaces inside each line
        # as written (inside a string they are data)
        sides_code.append([code.strip() for code, _, _ in scanned if code.strip()])
    return sides_code[0] == sides_code[1]


def changed_code_lines(patch: str, language: str | None, limit: int) -> int:
    """How many changed lines (both sides) hold code, not comment, docstring or message text, under each hunk
    side's most plausible reading; an unknown language's changed lines all count but blank ones. Counting
    stops once past `limit`."""
    count = 0
    comment = _comment_line(language)
    for _, sides in _hunks(patch):
        for side, mine, at_top in sides:
            changed = [(sign, text) for sign, text in mine if sign == side]
            if not knows(language):
                count += sum(1 for _, text in changed if text.strip())
            else:
                scanned = _most_plausible(mine, language, at_top)[1]  # type: ignore[arg-type]
                count += sum(
                    1
                    for (sign, text), (code, began, ended) in zip(mine, scanned, strict=True)
                    if sign == side and not _is_prose_line(text, code, began or ended, comment)
                )
            if count > limit:
                return count
    return count


def _hunks(patch: str) -> Iterator[tuple[Side, tuple[tuple[str, Side, bool], ...]]]:
    """Each hunk's lines (sign, text) and its two sides: (sign, the side's lines with the context, whether the
    side starts at the file's first line, outside any string)."""
    for hunk in _HUNK.split(patch)[1:] or ["\n" + patch]:
        header = _HUNK_LINES.match(hunk)
        lines = tuple((line[:1], line[1:]) for line in hunk.split("\n")[1:] if line[:1] in (" ", "+", "-"))
        sides = []
        for side, first in (("-", header and header["old"]), ("+", header and header["new"])):
            mine = tuple((sign, text) for sign, text in lines if sign in (" ", side))
            sides.append((side, mine, first is not None and int(first) <= 1))
        yield lines, tuple(sides)


def _comment_line(language: str | None) -> re.Pattern[str]:
    return _HASH_COMMENT_LINE if language in ("python", "shell", "ruby") else _C_COMMENT_LINE


# start, scanned, left open, prose
Reading = tuple[str | None, list[tuple[str, bool, bool]], str | None, bool]


# The facts ask whether a file is prose only, the signals how many of its lines are code: a side read twice a
# commit is scanned and weighed once (immutable results, keyed by the side's lines).
@lru_cache(maxsize=256)
def _readings(lines: Side, language: str, at_top: bool) -> tuple[Reading, ...]:
    texts = [text for _, text in lines]
    comment = _comment_line(language)
    readings = []
    for start in open_states(language)[:1] if at_top else open_states(language):
        if start is not None and not any(start in text for text in texts):
            # nothing closes the string it starts in: every line is inside it, prose, and the string stays open
            readings.append((start, [("", True, True)] * len(texts), start, True))
            continue
        scanned, left_open = scan(texts, language, start)
        prose = all(
            _is_prose_line(text, code, began or ended, comment)
            for (sign, text), (code, began, ended) in zip(lines, scanned, strict=True)
            if sign != " "
        )
        readings.append((start, scanned, left_open, prose))
    return tuple(readings)


def _side_is_prose(lines: Side, language: str, at_top: bool = False) -> bool:
    readings = _readings(lines, language, at_top)
    if not any(prose for *_, prose in readings):
        return False  # code under every reading: no need to weigh them
    first = readings[0]
    if first[3] and first[2] is None:
        return True  # read from outside, balanced, and all prose: the plain reading stands
    return _most_plausible(lines, language, at_top)[3]


@lru_cache(maxsize=256)
def _most_plausible(lines: Side, language: str, at_top: bool) -> Reading:
    readings = _readings(lines, language, at_top)
    texts = [text for _, text in lines]
    best, least = readings[0], _cost(*readings[0][:3], texts)
    for reading in readings[1:]:
        cost = _cost(*reading[:3], texts, least)
        if cost < least:
            best, least = reading, cost
    return best


def _cost(
    start: str | None,
    scanned: list[tuple[str, bool, bool]],
    left_open: str | None,
    texts: list[str],
    limit: float = float("inf"),
) -> float:
    """How implausible a reading is: lines it takes for code that read like sentences, lines it takes
    for the inside of a string that bear the marks of code, a string it leaves open at the hunk's end,
    and assuming a start inside a string at all. Counting stops once past `limit`."""
    cost = (left_open is not None) + (_START_PENALTY if start is not None else 0.0)
    for (code, inside, _), text in zip(scanned, texts, strict=True):
        if cost >= limit:
            break
        if _LEFTOVER.match(code):
            cost += inside and bool(_CODE_HINT.search(text))
        else:
            cost += _sentence(text)
    return cost


@lru_cache(maxsize=8192)
def _sentence(text: str) -> bool:
    """Reads like a sentence: two words, no mark of code, and no Python statement."""
    return bool(TWO_WORDS.search(text)) and not _CODE_HINT.search(text) and not _looks_like_code(text.strip())


def _is_prose_line(text: str, code: str, inside: bool, comment: re.Pattern[str]) -> bool:
    """`inside`: the line began or ended inside a multi-line string or comment."""
    if not text.strip() or comment.match(text):
        return True  # a blank line changes nothing; a comment line is prose
    if not _LEFTOVER.match(code):
        return False  # anything with code left in it is code
    if inside:
        return True  # a line of a docstring or block comment, its first and last included
    string = _STRING.match(text)
    return bool(string and _WHOLE_WORDS.search(string.group("body")))


# Two names in a row, neither a keyword (`the input`): no Python statement has that, whatever is put around it.
# The second is not a string's prefix (`r"..."`).
_NAME_PAIR = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z0-9_]*)[ \t]+(?=([A-Za-z_][A-Za-z0-9_]*)(?![\w\"']))")
# Soft keywords of later Pythons and the old print statement counted too: a pair with one is left to compile.
_NOT_PLAIN_NAMES = frozenset((*keyword.kwlist, *keyword.softkwlist, "type", "print", "exec"))
# What opens a string, a comment or a line continuation: the words after it may be anything.
_OPENS_TEXT = re.compile(r"[\"'#\\]")
_TRIPLE_QUOTES = ('"""', "'''")


@lru_cache(maxsize=4096)
def _looks_like_code(line: str) -> bool:
    """Whether one stripped line parses as (part of) a Python statement: the prose of a docstring
    (`Validate the input and return a model.`, `Args:`) does not."""
    return not _never_parses(line) and _parses(line)


def _never_parses(line: str) -> bool:
    """Whether no context `_parses` tries can make the line compile, told without its dozen compiles: before
    anything that opens a string or comment, two plain names in a row (which no statement has), or a
    triple-quoted string opened and not closed on the line (as a docstring's first line of prose is)."""
    opens = _OPENS_TEXT.search(line)
    end = opens.start() if opens else len(line)
    for pair in _NAME_PAIR.finditer(line):
        if pair.end(2) > end:
            break
        if pair.group(1) not in _NOT_PLAIN_NAMES and pair.group(2) not in _NOT_PLAIN_NAMES:
            return True
    delimiter = line[end : end + 3]
    return delimiter in _TRIPLE_QUOTES and delimiter not in line[end + 3 :]


def _parses(line: str) -> bool:
    """Whether the line compiles alone or in one of the contexts a line cut from a statement needs."""
    attempts = (
        line,
        line + " pass",
        f"f({line})",
        f"({line})",
        f"[{line}]",
        line + ")",
        line + "]",
        line + "}",
        f"if 1: pass\n{line} pass",
        f"try: pass\n{line} pass",
        f"{line}\n def f(): pass",
        f"def f():\n {line}",
        f"def f(\n{line} pass",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences in prose are not our concern
        for attempt in attempts:
            try:
                compile(attempt, "<line>", "exec")
            except (SyntaxError, ValueError):
                continue
            return True
    return False
