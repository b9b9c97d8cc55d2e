"""The author a question names: a known name or login of the thread's commits, else a name in a "by X",
"X's commits", "did X land" or "X 的提交" pattern."""

from __future__ import annotations

import re
from collections.abc import Iterable

from analysis.questions.parse.areas import NOT_AREA, STOP
from analysis.questions.parse.entities import CJK
from analysis.questions.parse.keywords import wordset

# Authors: "commits by X", "X's commits", "did X land", "X 的提交".
_BY_AUTHOR = re.compile(
    r"\b(?i:by|from|authored by|written by|committed by|landed by|made by)\s+@?(?P<name>[A-Za-z][\w.-]*(?:\s+[A-Z][\w.-]*)?)",
)
# Case-sensitive names (a second word must be capitalised: "Grace Hopper's", not "ship today's");
# the keywords around them are matched in any case.
POSSESSIVE = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z][\w.-]*(?:\s+[A-Z][\w.-]*)?)'s\s+(?i:commits?|changes?|prs?|work|patches)\b"
)
_DID_AUTHOR = re.compile(
    r"\b(?i:did|has|have)\s+@?(?P<name>[A-Za-z][\w.-]*(?:\s+[A-Z][\w.-]*)?)\s+(?i:commit|land|merge|push|write|"
    r"author|change|ship|contribute|submit|do\b|work)\w*"
)
ZH_AUTHOR = re.compile(
    r"(?:作者(?:是|为)|由)\s*(?P<a>[A-Za-z][A-Za-z0-9_.-]*(?:\s[A-Za-z][A-Za-z0-9_.-]*)?|[\u4e00-\u9fff]{2,4})"
    r"|(?<![A-Za-z0-9_.-])(?P<b>[A-Za-z][A-Za-z0-9_.-]*(?:\s[A-Za-z][A-Za-z0-9_.-]*)?)\s*(?:今天|今日|昨天)?\s*(?:的提交|提交了|写的|做的|做了|干了|的改动|的PR|合入了|贡献了|的修改)"
)
_NOT_NAMES = wordset(
    "the a an what which who whom whose me us them it this that those these default risk size date time tier "
    "importance type path file files area today yesterday now pr commit commits anyone someone somebody anybody "
    "one ones hand mistake accident design far all any each"
)


def named_author(text: str, authors: Iterable[str]) -> str | None:
    """An author the question names: a known name or login of the thread's commits, else a name in an
    "by X" / "X's commits" / "X 的提交" pattern."""
    low = f" {' '.join(text.lower().split())} "
    known = sorted(
        {a.strip() for a in authors if a and len(a.strip()) >= (2 if CJK.search(a) else 3)},
        key=len,
        reverse=True,
    )
    for name in known:
        if CJK.search(name):  # "李明今天提交了什么": Chinese runs words together
            if name.lower() in low:
                return name
        elif re.search(rf"(?<![\w@]){re.escape(name.lower())}(?![\w])", low):
            return name
    for pattern in (_BY_AUTHOR, POSSESSIVE, _DID_AUTHOR):
        for m in pattern.finditer(text):
            name = _trim_name(m.group("name"))
            if name:
                return _known_by_part(name, known)
    for m in ZH_AUTHOR.finditer(text):
        name = _trim_name(m.group("a") or m.group("b") or "")
        if name:
            return _known_by_part(name, known)
    return None


def _known_by_part(name: str, known: Iterable[str]) -> str:
    """The one known author a first name, a last name or the start of a login is part of ("Grace" →
    "Grace Hopper"); else the name as asked."""
    wanted = name.lower().split()
    hits = [
        k
        for k in known
        if all(any(part.startswith(w) for part in re.split(r"[\s_.-]+", k.lower()) if part) for w in wanted)
    ]
    return hits[0] if len(hits) == 1 else name


def _trim_name(name: str) -> str | None:
    words = [w for w in name.split() if w.lower() not in _NOT_NAMES and w.lower() not in STOP]
    if not words or words[0].lower() in NOT_AREA:
        return None
    # "by Cyrus Leung" keeps both words; "by alice today" stops at the first non-name.
    kept = [words[0]] + [w for w in words[1:2] if w[:1].isupper()]
    value = " ".join(kept).strip(".-")
    return value if len(value) >= 2 and not value.isdigit() else None
