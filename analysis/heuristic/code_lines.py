"""The code of changed lines without their string literals and comments, so that rules looking for
calls (`shell=True`, `eval(`) or kernel markers (`__global__`, `tl.load`) see what the code does, not
what a regex pattern, a prompt or a docstring talks about.

A small scanner, not a parser: it knows the comment and string syntax of a language family (see
`analysis.paths.language_of`) and carries open triple-quoted strings, block comments and template
strings from one line to the next. A hunk that starts inside a string cannot be told from its lines
alone; such lines are read as code (the old behaviour), never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Comment and string syntax by language family.
_HASH_COMMENT = frozenset({"python", "shell", "ruby"})
_C_LIKE = frozenset(
    {"c", "cpp", "cuda", "hip", "metal", "opencl", "javascript", "go", "rust", "java", "csharp", "swift"}
)
_BACKTICK_STRINGS = frozenset({"javascript", "go"})  # multi-line template / raw strings
_TRIPLE_QUOTES = ('"""', "'''")
_CHAR_LITERAL = re.compile(r"'(?:\\.[^']{0,8}|[^\\'])'")  # 'a', '\n', '\x41': not a Rust lifetime 'a
_HASH_SPECIAL = re.compile(r"[#\"']")
_C_SPECIAL = re.compile(r"[/\"']")
_C_SPECIAL_BT = re.compile(r"[/\"'`]")
EMPTY_STRING = '""'  # what a literal becomes: calls keep their shape, eval("x") reads eval("")


def code_only(lines: Iterable[str], language: str | None) -> list[str]:
    """Each line with string literals emptied and comments removed, in order (state carries over).
    Unknown languages come back unchanged: nothing can be told about them."""
    if language in _HASH_COMMENT or language in _C_LIKE:
        return _Scanner(language, hash_comments=language in _HASH_COMMENT).run(lines)
    return list(lines)


def open_states(language: str | None) -> tuple[str | None, ...]:
    """What a hunk may start inside: nothing, or a multi-line string or comment of the language (a
    hunk cut from the middle of a long docstring starts inside one)."""
    # C-like block comments are not guessed: their middle lines start with "*", which says it already.
    return (None, '"""', "'''") if language == "python" else (None,)


def scan(
    lines: Iterable[str], language: str, start: str | None = None, *, keep_strings: bool = False
) -> tuple[list[tuple[str, bool, bool]], str | None]:
    """Each line's code (strings emptied, comments removed), whether the line began inside a string or
    comment and whether it ended inside one, scanning from `start` (what is open before the first line,
    see `open_states`); and what is still open after the last line. Only for languages `code_only` knows.
    `keep_strings`: string literals stay as written, only comments go (`x = 1  // the limit` → `x = 1  `), so
    that two lines whose code is the same and whose comments differ read the same."""
    scanner = _Scanner(language, hash_comments=language in _HASH_COMMENT, keep_strings=keep_strings)
    scanner.open = start
    out = []
    for line in lines:
        inside = scanner.open is not None
        code = scanner.line(line)
        out.append((code, inside, scanner.open is not None))
    return out, scanner.open


def knows(language: str | None) -> bool:
    return language in _HASH_COMMENT or language in _C_LIKE


class _Scanner:
    def __init__(self, language: str, *, hash_comments: bool, keep_strings: bool = False):
        self.hash_comments = hash_comments
        self.keep_strings = keep_strings  # string literals as written, not emptied
        self.shell = language == "shell"
        self.triple = language == "python"
        self.backtick = language in _BACKTICK_STRINGS
        self.single_quote_strings = language in ("python", "shell", "ruby", "javascript")
        self.special = _HASH_SPECIAL if hash_comments else (_C_SPECIAL_BT if self.backtick else _C_SPECIAL)
        self.open: str | None = None  # the delimiter that closes what the previous line left open

    def run(self, lines: Iterable[str]) -> list[str]:
        return [self.line(line) for line in lines]

    def line(self, text: str) -> str:
        if self.open is None and self.special.search(text) is None:
            return text  # most lines: nothing that opens a string or comment, all code
        out: list[str] = []
        i = 0
        if self.open is not None:
            end = text.find(self.open)
            if end < 0:  # the whole line is inside a string or comment
                return text if self.keep_strings and self.open != "*/" else ""
            i = end + len(self.open)
            if self.open != "*/":
                out.append(self._literal(text[:i]))
            self.open = None
        n = len(text)
        while i < n:
            # Jump to the next character that may open a string or comment: most of a line is plain.
            m = self.special.search(text, i)
            if m is None:
                out.append(text[i:])
                break
            out.append(text[i : m.start()])
            i = m.start()
            c = text[i]
            if self.hash_comments and c == "#" and not (self.shell and self.hash_is_code(text, i)):
                break
            if not self.hash_comments and text.startswith("//", i):
                break
            if not self.hash_comments and text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    self.open = "*/"
                    break
                out.append(" ")
                i = end + 2
                continue
            if self.triple and text.startswith(_TRIPLE_QUOTES, i):
                delim = text[i : i + 3]
                end = text.find(delim, i + 3)
                out.append(self._literal(text[i : end + 3] if end >= 0 else text[i:]))
                if end < 0:
                    self.open = delim
                    break
                i = end + 3
                continue
            if self.backtick and c == "`":
                end = text.find("`", i + 1)
                out.append(self._literal(text[i : end + 1] if end >= 0 else text[i:]))
                if end < 0:
                    self.open = "`"
                    break
                i = end + 1
                continue
            if c == '"' or (c == "'" and self.single_quote_strings):
                end = _string_end(text, i, c)
                out.append(self._literal(text[i:end]))
                i = end
                continue
            if c == "'":  # C, Rust, Go ...: a character literal, or a Rust lifetime left as code
                m = _CHAR_LITERAL.match(text, i)
                if m:
                    out.append(self._literal(m.group(0)))
                    i = m.end()
                    continue
            out.append(c)
            i += 1
        return "".join(out)

    def _literal(self, text: str) -> str:
        return text if self.keep_strings else EMPTY_STRING

    @staticmethod
    def hash_is_code(text: str, i: int) -> bool:
        # Shell: "#" starts a comment only at a word's start (${#x} and a#b are code).
        return i > 0 and not text[i - 1].isspace() and text[i - 1] not in ";|&("


def _string_end(text: str, start: int, quote: str) -> int:
    """Index after the closing quote; an unterminated literal runs to the end of the line."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return len(text)
