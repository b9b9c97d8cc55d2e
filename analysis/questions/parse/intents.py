"""What a question asks, decided from its keywords and what it names: `parse_question`. Also whether a reply
is a question at all, and the language to answer in."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from analysis.models import Importance
from analysis.questions.parse.areas import area_terms
from analysis.questions.parse.authors import named_author
from analysis.questions.parse.commit_phrases import loose_words, named_ordinal, named_title
from analysis.questions.parse.entities import CJK, clean_markup, named_commits, named_limit, named_paths
from analysis.questions.parse.keywords import (
    ANY,
    ASPECT,
    AUTHORS,
    BIGGEST,
    COUNT,
    DAY,
    ENV_VARS,
    FACET_WORDS,
    FOLLOWUP,
    NEW,
    NOT_TIER,
    OVERVIEW,
    RISK,
    STRONG_ASPECTS,
    SUPERLATIVE,
    SURFACE,
    THIS_COMMIT,
    TIER,
    TOP_AUTHORS,
    UNTESTED,
    WHO_WROTE,
)
from analysis.questions.parse.question import Aspect, Facet, Intent, NamedCommit, Question
from analysis.questions.parse.slips import fix_slips
from analysis.text import INVISIBLE

READ_CHARS = 2000  # of a longer message (a pasted log), its start and its end are read as the question


def _readable(text: str) -> str:
    """A question of at most READ_CHARS, without invisible characters: its start and end when longer. A
    40 KB paste is read in milliseconds, not seconds on the event loop (several patterns look at every place
    in the text)."""
    text = INVISIBLE.sub("", text)  # a paste from a web page: "#1\u200b01" is #101
    if len(text) <= READ_CHARS:
        return text
    half = READ_CHARS // 2
    return f"{text[:half]} … {text[-half:]}"


def question_lang(text: str) -> str:
    """Answer in the asker's language: any CJK ideograph means Chinese."""
    return "zh" if CJK.search(text) else "en"


def parse_question(
    text: str, authors: Iterable[str] = (), *, listed: bool = True, words: Iterable[str] = ()
) -> Question:
    """Read a thread question. `authors` are the names and logins of the thread's commits: a question
    naming one of them is about that author's commits even when no pattern says so. `listed=False`: the
    thread has no list, so "the last commit" is read as words, not as a place in one. `words`: hex tokens
    read as words, not SHAs (weak ones no commit has)."""
    raw = clean_markup(_readable(text))
    lang = question_lang(raw)
    commits, rest = named_commits(raw, words)
    low = fix_slips(" ".join(rest.lower().replace("’", "'").split()))
    ordinal = None if commits else named_ordinal(low, listed)
    title_words: tuple[str, ...] = ()
    if not commits and ordinal is None:
        title_words, low = named_title(low)
    paths = named_paths(rest)
    aspects = frozenset(a for a, pattern in ASPECT.items() if pattern.search(low))
    tiers = _tiers(low)
    author = named_author(rest, authors)
    terms = area_terms(rest, low, paths, author)
    count = bool(COUNT.search(low))
    limit = named_limit(low)
    scope = "commit" if ordinal is not None or title_words else _scope(low, commits)
    if ordinal is not None:
        limit = None  # "the first one" is one commit, not "the top 1"
    env_vars = bool(re.search(ENV_VARS, low))
    common = dict(
        text=text, lang=lang, commits=tuple(commits), tiers=tiers, terms=terms, author=author, count=count,
        limit=limit, scope=scope, env_vars=env_vars,
        ordinal=ordinal, title_words=title_words, loose_words=loose_words(low),
    )  # fmt: skip

    if FOLLOWUP.search(low):
        if scope is None and ANY.search(low):  # "anything reverted?", "any reverts?": the day's
            common["scope"] = "day"
        return Question(intent=Intent.FOLLOWUPS, aspects=aspects, **common)
    if SURFACE.search(low):
        facets = frozenset(f for f, pattern in FACET_WORDS.items() if pattern.search(low))
        if env_vars:  # "env vars" says what, not which change: added, removed or renamed ones
            facets = facets & {Facet.FEATURE} if NEW.search(low) else frozenset()
        return Question(intent=Intent.SURFACE, facets=facets or frozenset(Facet), **common)
    if (TOP_AUTHORS.search(low) or (count and AUTHORS.search(low) and not author)) and not commits:
        return Question(intent=Intent.LIST, authors_ranked=True, **{**common, "scope": "day"})
    if WHO_WROTE.search(low) and (commits or scope == "commit" or not (terms or tiers)):
        return Question(
            intent=Intent.EXPLAIN, aspects=frozenset({Aspect.AUTHOR}), **{**common, "author": None}
        )
    risky = bool(RISK.search(low)) and not count
    if not commits and scope != "commit":  # the day's measures: lines, commits without tests, the biggest
        day = {**common, "scope": "day"}
        if UNTESTED.search(low):
            return Question(intent=Intent.LIST, untested=True, **day)
        if count and Aspect.SIZE in aspects:
            return Question(intent=Intent.LIST, lines_total=True, **day)
        if BIGGEST.search(low) and not RISK.search(low):
            return Question(intent=Intent.LIST, biggest=True, **day)
    if count and scope == "commit" and not DAY.search(low):  # "how many files did it change?": its size
        return Question(intent=Intent.EXPLAIN, aspects=aspects or frozenset({Aspect.SIZE}), **common)
    if terms or author or tiers:
        if commits and not count:  # "is #123 a high-risk change?": about that commit
            return Question(intent=Intent.EXPLAIN, aspects=aspects or frozenset({Aspect.SUMMARY}), **common)
        intent = Intent.RISKIEST if risky and SUPERLATIVE.search(low) and not tiers else Intent.LIST
        return Question(intent=intent, aspects=aspects, **{**common, "scope": "day"})
    if risky:
        if commits or scope == "commit":
            return Question(intent=Intent.EXPLAIN, aspects=aspects | {Aspect.RISKS}, **common)
        day = scope == "day" or bool(SUPERLATIVE.search(low)) or limit is not None
        return Question(
            intent=Intent.RISKIEST, aspects=aspects, **{**common, "scope": "day" if day else scope}
        )
    if count:
        return Question(intent=Intent.LIST, aspects=aspects, **{**common, "scope": "day"})
    if OVERVIEW.search(low) and not commits and scope != "commit":
        return Question(intent=Intent.OVERVIEW, **common)
    if aspects and (scope == "commit" or aspects & STRONG_ASPECTS):
        return Question(intent=Intent.EXPLAIN, aspects=aspects, **common)
    if commits or title_words or ordinal is not None:  # a bare reference ("and #123?", "the second one?")
        return Question(intent=Intent.EXPLAIN, aspects=frozenset({Aspect.SUMMARY}), vague=True, **common)
    return Question(intent=Intent.UNKNOWN, **common)


def _tiers(low: str) -> frozenset[Importance]:
    text = NOT_TIER.sub(" ", low)
    return frozenset(level for level, pattern in TIER.items() if pattern.search(text))


def _scope(low: str, commits: list[NamedCommit]) -> Literal["day", "commit"] | None:
    if commits or THIS_COMMIT.search(low):
        return "commit"
    if DAY.search(low):
        return "day"
    return None


_QUESTION = re.compile(
    r"[?？]|\b(what|why|how|which|who|when|where|should|could|would|can|does|do|is|are|will|risk\w*)\b"
    r"|什么|为什么|为何|怎么|怎样|如何|哪|吗|呢|是否|有没有|风险|影响|多少|几个",
    re.IGNORECASE,
)


def is_question(text: str) -> bool:
    """A reply worth an answer when nobody mentioned the bot: a question, not "thanks!" or "+1"."""
    return bool(_QUESTION.search(text))
