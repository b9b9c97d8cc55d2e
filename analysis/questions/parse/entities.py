"""What a question names, found by shape: commits (`#123`, a SHA — hex with a digit and a letter —, a commit
or pull-request URL, owner/name@sha), paths (a '/' or a file extension) and a "top 3" limit; chat markup
(Slack's <url|label>, mentions) is taken out first."""

from __future__ import annotations

import re
from collections.abc import Iterable

from analysis.questions.parse.question import SHORT_SHA, NamedCommit

# Chat markup first: Slack wraps links as <url|label> and mentions as <@U123>; Discord writes <@123>.
_CHAT_LINK = re.compile(r"<(https?://[^>|\s]+)(?:\|[^>]*)?>")
_CHAT_MENTION = re.compile(r"<[@#!][^>]*>")
_COMMIT_URL = re.compile(
    r"https?://[^\s/]+/(?P<repo>[\w.-]+/[\w.-]+)/(?:-/)?commits?/(?P<sha>[0-9a-fA-F]{7,64})\b[^\s]*"
)
_PR_URL = re.compile(
    r"https?://[^\s/]+/(?P<repo>[\w.-]+/[\w.-]+)/(?:pull|pulls|merge_requests)/(?P<num>\d{1,9})\b[^\s]*"
)
_ANY_URL = re.compile(r"https?://\S+")
_REPO_AT_SHA = re.compile(r"(?<![\w./-])(?P<repo>[\w.-]+/[\w.-]+)@(?P<sha>[0-9a-fA-F]{7,64})\b")
_PR_NUMBER = re.compile(
    r"(?<![\w&])#\s?(\d{1,9})\b|\b(?:PR|pull request|pull|MR)\s*(?:#|no\.?|number)?\s*(\d{2,9})\b",
    re.IGNORECASE,
)
_HEX = re.compile(r"(?<![\w/#.@-])([0-9a-fA-F]{4,64})(?![\w/@-]|\.\w)")
SURE_SHORT = 6  # a short SHA of fewer characters may as well be a name ("c10d")
# One run of letters and one of digits ("a100", "bf16", "405b"): as often a product or a size as a SHA.
_TWO_RUNS = re.compile(r"[a-f]+\d+|\d+[a-f]+", re.IGNORECASE)
_PATH = re.compile(
    r"(?<![\w@:/.-])((?:[\w.-]+/)+[\w.*-]*|[\w-]+\.(?:py|pyi|pyx|cu|cuh|c|cc|cpp|h|hpp|rs|go|java|kt|js|jsx|ts|"
    r"tsx|rb|php|swift|cs|sh|md|rst|txt|toml|ya?ml|json|cfg|ini|proto|sql|html|css|cmake|lock|ipynb))(?![\w/])"
)
# Slashes that are prose, not paths.
_NOT_PATHS = frozenset(
    {"and/or", "i/o", "n/a", "w/o", "w/", "tcp/ip", "input/output", "read/write", "on/off"}
)


CJK = re.compile(r"[\u4e00-\u9fff]")

NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
    "十": 10,
}  # fmt: skip
_NUM = r"(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|[一两二三四五六七八九十])"
_LIMIT = (
    re.compile(rf"\b(?:top|first)\s+{_NUM}\b", re.IGNORECASE),
    re.compile(
        r"\bthe\s+(\d{1,3}|two|three|four|five|six|seven|eight|nine|ten)\b", re.IGNORECASE
    ),  # not "the one"
    re.compile(rf"\b{_NUM}\s+(?:most|riskiest|biggest|largest|highest|worst|top|main)\b", re.IGNORECASE),
    re.compile(rf"前\s*{_NUM}\s*(?:个|条|名|项)?"),
    re.compile(rf"最[\u4e00-\u9fff]{{1,4}}的\s*{_NUM}\s*(?:个|条|项)"),
)


def clean_markup(text: str) -> str:
    text = _CHAT_LINK.sub(r" \1 ", text)
    text = _CHAT_MENTION.sub(" ", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def named_commits(text: str, words: Iterable[str] = ()) -> tuple[list[NamedCommit], str]:
    """The commits a text names, in order, and the text with URLs and references taken out (so a SHA
    inside a URL is not read again as a path). `words`: hex tokens to read as words, not SHAs (weak ones
    no commit has: "a100" in "which commits touch a100 kernels?")."""
    as_words = {w.lower() for w in words}
    found: list[NamedCommit] = []
    rest = text

    def take(pattern: re.Pattern[str], make) -> None:
        nonlocal rest
        for m in pattern.finditer(rest):
            found.append(make(m))
        rest = pattern.sub(" ", rest)

    take(_COMMIT_URL, lambda m: NamedCommit("sha", m.group("sha").lower(), _repo(m.group("repo"))))
    take(_PR_URL, lambda m: NamedCommit("pr", m.group("num"), _repo(m.group("repo"))))
    rest = _ANY_URL.sub(" ", rest)  # other links name nothing we can read
    take(_REPO_AT_SHA, lambda m: NamedCommit("sha", m.group("sha").lower(), m.group("repo")))
    take(_PR_NUMBER, lambda m: NamedCommit("pr", str(int(m.group(1) or m.group(2)))))

    def hex_token(m: re.Match[str]) -> str:
        token = m.group(1)
        if token.lower() in as_words:
            return token
        has_digit, has_letter = any(c.isdigit() for c in token), any(c.isalpha() for c in token)
        if len(token) < SHORT_SHA:
            # Short: a digit and a letter, or it is a year, a count or a word ("2025", "cafe"). Under six
            # characters or one run of each ("c10d", "a100", "bf16") it is weak (a SHA only if a commit has
            # it), and stays in the text as the word it may be.
            if not (has_digit and has_letter):
                return token
            weak = len(token) < SURE_SHORT or bool(_TWO_RUNS.fullmatch(token))
            found.append(NamedCommit("sha", token.lower(), weak=weak))
            return token if weak else " "
        if has_digit and has_letter:
            found.append(NamedCommit("sha", token.lower()))
        elif has_digit and not _looks_like_date(token):
            found.append(NamedCommit("sha", token, weak=True))
        # all letters ("defaced", "facade"): a word, not a SHA
        return " "

    rest = _HEX.sub(hex_token, rest)
    unique = list(dict.fromkeys(found))
    return unique, rest


def _repo(name: str) -> str:
    return name[:-4] if name.endswith(".git") else name


def _looks_like_date(token: str) -> bool:
    return bool(re.fullmatch(r"(19|20)\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])", token))


def named_paths(text: str) -> list[str]:
    out = []
    for m in _PATH.finditer(text):
        token = m.group(1).strip(".").rstrip("*").lower()
        if token.lower() in _NOT_PATHS or len(token.strip("/")) < 2:
            continue
        if "/" in token and all(len(p) <= 1 for p in token.split("/") if p):
            continue
        out.append(token[2:] if token.startswith("./") else token)
    return out


def named_limit(text: str) -> int | None:
    for pattern in _LIMIT:
        m = pattern.search(text)
        if m:
            raw = m.group(1).lower()
            value = int(raw) if raw.isdigit() else NUMBER_WORDS.get(raw)
            if value:
                return max(1, min(value, 50))
    return None
