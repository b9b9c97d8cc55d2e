"""A commit named by a phrase, not by #N or SHA: its place in the thread's last list ("the second one",
"第二个") or words of its title ("the bump version commit", "the scheduler revert")."""

from __future__ import annotations

import re

from analysis.questions.parse.areas import NOT_AREA, STOP
from analysis.questions.parse.entities import NUMBER_WORDS
from analysis.questions.parse.keywords import (
    ANY,
    ASPECT,
    COUNT,
    DAY,
    FOLLOWUP,
    NEW,
    OVERVIEW,
    RISK,
    SUPERLATIVE,
    SURFACE,
    THIS_COMMIT,
    TIER,
    wordset,
)

# "the second one", "the 2nd commit", "the last one", "第二个", "number 2": a commit of the thread's last
# list. Not when the words place it in time or relation: "the last commit today", "the first commit of the
# day", "the last change before the release", "今天的第一个提交" are the day's, not the list's.
_ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5,
    "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8, "ninth": 9, "9th": 9,
    "tenth": 10, "10th": 10, "last": -1,
}  # fmt: skip
_LIST_WORDS = r"(?:the|your|that|this|my)\s+(?:list|answer|reply|message)\b"
# Words after "the last commit" that place it in time or relation: then it is the day's, not the list's.
_PLACED = (
    r"\s+(?:today|tonight|yesterday|ever|this\s+(?:morning|afternoon|evening|week|month|year)\b"
    rf"|(?:of|on|in|from|for|at)\s+(?!{_LIST_WORDS})|before|after|since|until|till|to\s|by\s|that\s"
    r"|which\s|merged|landed|pushed|made|committed)"
)
_ORDINAL = re.compile(
    rf"\b(?:the\s+)?(?P<n>{'|'.join(_ORDINALS)})\s+(?P<noun>one|commit|change|pr|item|entry|patch)\b(?!s)"
    rf"(?!{_PLACED})"
    r"|\bnumber\s+(?P<num>\d{1,2})\b(?!\s*(?:commits|changes|prs|files|lines|%))"
    r"|(?<!今天的)(?<!昨天的)(?<!今天)(?<!昨天)(?<!当天的)(?<!本周的)"
    r"(?:第\s*(?P<zh>\d{1,2}|[一二两三四五六七八九十])\s*(?:个|条|项|次提交)|最后(?:一|那)个)"
)
# "the bump version commit", "the scheduler revert", "the preempt PR": words of one commit's title.
_TITLE_PHRASE = re.compile(
    r"\b(?:the|that|this)\s+(?P<words>(?:[\w.-]+\s+){0,3}?[\w.-]+?)\s+"
    r"(?P<noun>commit|change|pr|patch|one|revert|fix|bugfix|rewrite|refactor|rename|bump)\b(?!s)",
    re.IGNORECASE,
)
_NOT_TITLE = wordset(
    "big small large huge tiny same other new old first last next previous second third risky riskiest "
    "scary important high medium low breaking reverted latest recent earlier later main whole entire "
    "one only most biggest largest smallest worst best top risk risks scary dangerous critical major minor "
    "trivial medium-risk high-risk low-risk"
)


def named_ordinal(low: str, listed: bool = True) -> int | None:
    """The place in the thread's last list the question names. Without a list (`listed=False`) only a
    phrase that can be nothing else ("the second one", "number 2", "第二个") is one: "the last commit" is
    then read as words."""
    m = _ORDINAL.search(low)
    if m is None:
        return None
    if m.group("n"):
        if not listed and m.group("noun") not in ("one", "item", "entry"):
            return None
        return _ORDINALS[m.group("n")]
    if m.group("num"):
        return int(m.group("num")) or None
    zh = m.group("zh")
    if zh is None:
        return -1  # 最后一个
    return int(zh) if zh.isdigit() else NUMBER_WORDS.get(zh)


def named_title(low: str) -> tuple[tuple[str, ...], str]:
    """The title words of "the bump version commit", and the question with that phrase read as "the
    commit" (so "who wrote the scheduler revert?" asks who wrote a commit, not about reverts)."""
    text = " ".join(re.sub(r"[\[\]\"“”]", " ", low).split())  # "the [doc] typo commit", quoted titles
    # Each "the" in turn: "the risks of the scheduler rewrite" holds its phrase after the second one.
    for start in (m.start() for m in re.finditer(r"\b(?:the|that|this)\b", text)):
        m = _TITLE_PHRASE.match(text, start)
        if m is None:
            continue
        phrase = m.group("words").split()
        if any(w in STOP for w in phrase):
            continue  # "the risks of this change": a phrase, not a title
        words = [w for w in phrase if w not in _NOT_TITLE]
        noun = m.group("noun")
        if noun not in ("commit", "change", "pr", "patch", "one"):
            words.append(noun)  # "the scheduler revert": a revert of the scheduler
        if words and any(w != noun for w in words):
            return tuple(words), f"{text[: m.start()]}the commit{text[m.end() :]}"
    return (), low


# Words of a question that say what it asks or how, never which commit: "is xxhash safe to use?" names
# a commit by "xxhash" alone.
_ASKING = wordset(
    "use used using deploy deploying ship shipping release releasing upgrade upgrading run running roll "
    "rolling merge merged merging okay ok fine good bad really actually still yet enough should would could "
    "can will may might look looks seem seems think you your we i"
)
_KEYWORDS = (
    RISK,
    SUPERLATIVE,
    FOLLOWUP,
    SURFACE,
    COUNT,
    OVERVIEW,
    DAY,
    ANY,
    THIS_COMMIT,
    NEW,
    *TIER.values(),
)


def loose_words(low: str) -> tuple[str, ...]:
    """The words of a question that are neither question words nor keywords: a title may hold them all
    ("is xxhash safe?" → "xxhash"). Latin words only, Chinese runs its words together."""
    out: list[str] = []
    for word in re.findall(r"[a-z0-9][\w+-]*(?:\.\w+)*", low):
        word = word.strip("'-")
        if len(word) < 3 or not re.search(r"[a-z]", word) or word in out:
            continue
        if word in STOP or word in NOT_AREA or word in _NOT_TITLE or word in _ASKING:
            continue
        if any(p.search(word) for p in (*_KEYWORDS, *ASPECT.values())):
            continue
        out.append(word)
    return tuple(out)
