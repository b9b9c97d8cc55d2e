"""Follow-up links: which commit reverted or fixed forward which earlier one, read from commit text.

A repository's own reverts and fix-forwards are the answer key for risk (DESIGN.md §3b). This module
is pure: it parses what a message says it follows up (`references`) and resolves those references
against earlier commits of the same branch (`find_links`). Reading the history is the sources' job.

What counts:
- revert: a title that starts (after its tags and gitmoji) with "Revert", "Partial revert of", "Rollback" or
  "Back out" and names what it takes out — `Revert "<title>"` (cut titles and reverts of reverts
  included), `#N`, `PR N`, `PR#N`, `pr4214`, `PRs N and M`, a pull-request or commit URL, a sha; in the
  body, `This reverts commit <sha>`, `git revert <sha>`, or a sentence that starts with "Reverts" /
  "This PR reverts" / "Partial revert of" and names one. A squash body's list of branch commits
  that reverts one of its own listed commits (or re-applies it later in the list) reverts nothing.
- re-land: "Reapply", "Re-land", "Redo", "Recover", "Unrevert", "Restores" naming an earlier change,
  or a title equal to that of an earlier reverted commit, lands the change again: it undoes the
  revert, so it is linked to the revert (as a revert of it) and never to the original.
- fix forward: words saying the earlier change broke something or needed fixing, tied to its
  reference in the same sentence, within 300 characters of it: "Fix #N", "fix for #N", "broken by
  #N", "regression from #N", "crash since #N", "fails after commit <sha>", "caused by #N", "Fix typo
  in #N", "Fix nits from #N", "#N introduced a bug", "#N … caused this test failure"; for "between
  #A and #B", the one that landed last. A mere mention is none: "(ref #N)", "introduced in #N",
  "After #N, …", "follow up to #N", "[2/N]", "to match #N", "e.g. #N", "the bug fixed in #N".
Every `#N` must be a pull request that landed on the branch before the follow-up (GitHub numbers
issues and pull requests alike, so a reference to an issue resolves to nothing and links nothing);
every sha a unique prefix of an earlier commit's.

Over 400 lines because it is one grammar: revert, fix-forward and re-land references are told apart by rules
that must be read together.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from analysis.models import PR_IN_TITLE, FollowUpKind
from analysis.text import strip_trailers
from analysis.titles import (
    ELLIPSIS,
    PR_DIGITS,
    PR_SUFFIX,
    REVERT_LEAD,
    conventional_prefix,
    leading_tags,
    message_title,
    norm_tag,
    revert_quote,
    split_quote,
    title_text,
    without_gitmoji,
    without_revert_tag,
)

EVIDENCE_MAX = 160
# Raised whenever the rules find other links: what a span mined is kept in the store under it, so an upgrade
# mines each span again instead of reading links the old rules found.
LINK_RULES = "links-2"
_MERGE_PR = re.compile(rf"^Merge (?:pull request|PR) #({PR_DIGITS}) from ")


@dataclass(frozen=True, slots=True)
class PastCommit:
    """A commit of the branch's history as the signals need it: no patches, paths with their sizes."""

    sha: str
    committed_at: datetime  # timezone-aware
    message: str
    files: tuple[tuple[str, int], ...] = ()  # (path, changed lines)

    @property
    def title(self) -> str:
        return message_title(self.message)[0]

    @property
    def pr_number(self) -> int | None:
        """The pull request the commit landed: a squash merge's "(#N)" or a merge commit's
        "Merge pull request #N from …"."""
        return _pr_in(self.title)


def _pr_in(title: str) -> int | None:
    m = PR_IN_TITLE.search(title) or _MERGE_PR.match(title)
    return int(m.group(1)) if m else None


@dataclass(frozen=True, slots=True)
class Reference:
    """One thing a message says it follows up. `pr`, `sha` and `title` name the same commit (tried in
    that order); `latest_of` names several of which the last to land is meant; `relands` means the
    message lands the named change again, so the link goes to that change's revert."""

    kind: FollowUpKind
    pr: int | None = None
    sha: str | None = None  # a prefix, lower-case
    title: str | None = None  # an earlier commit's title, without its "(#N)"; ending in "…" when cut
    evidence: str = ""
    latest_of: tuple[int, ...] = ()
    relands: bool = False


@dataclass(frozen=True, slots=True)
class FollowUpLink:
    original: str  # full sha of the commit followed up
    follow_up: str  # full sha of the commit that reverts or fixes it
    kind: FollowUpKind
    evidence: str  # the words that say so, from the follow-up's message
    original_at: datetime
    follow_up_at: datetime


# --- what a piece of text names --------------------------------------------------------------------

_HOST_REPO = r"https?://[^\s/]+/[^\s/]+/[^\s/]+"
_SHA = r"[0-9a-f]{7,40}"
_REF = re.compile(
    rf"{_HOST_REPO}/pull/(?P<url_pr>{PR_DIGITS})\b"
    rf"|{_HOST_REPO}/commits?/(?P<url_sha>{_SHA})\b"
    # "PR 12", "PR#12", "PR-12", "pr4214", "pull request #12", "PRs 12, 13 and 14"
    rf"|(?<![\w/#&.-])(?:prs?|pull\s+requests?)\s*[-#:]?\s*(?P<word_pr>{PR_DIGITS})\b"
    rf"(?P<more>(?:\s*(?:,|&|\band\b)\s*#?{PR_DIGITS}\b)*)"
    # "owner/repo#12": only where a revert says so (elsewhere it usually names another repository)
    rf"|(?<![\w/])(?P<qualified>[\w.-]+/[\w.-]+)#(?P<qual_pr>{PR_DIGITS})\b"
    rf"|(?<![\w/#&])#(?P<pr>{PR_DIGITS})\b"
    rf"|\bcommits?\s+`?(?P<commit_sha>{_SHA})\b"
    rf"|(?<![\w/.-])`?(?P<bare_sha>{_SHA})\b",
    re.IGNORECASE,
)
_HEX_WITH_DIGIT_AND_LETTER = re.compile(r"(?=.*\d)(?=.*[a-f])", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Named:
    start: int
    end: int
    pr: int | None = None
    sha: str | None = None


def _named(text: str, *, qualified: bool = False, bare_shas: bool = False) -> list[_Named]:
    """Pull requests and commits named in text, in order. A qualified `owner/repo#N` counts only with
    `qualified`; a bare sha (no "commit" before it, no URL) only with `bare_shas`, and only when it
    mixes digits and letters (a date or a word is no sha)."""
    found: list[_Named] = []
    for m in _REF.finditer(text):
        if m["url_pr"] or m["pr"]:
            found.append(_Named(m.start(), m.end(), pr=int(m["url_pr"] or m["pr"])))
        elif m["word_pr"]:
            for n in [m["word_pr"], *re.findall(r"\d+", m["more"] or "")]:
                found.append(_Named(m.start(), m.end(), pr=int(n)))
        elif m["qual_pr"] and qualified:
            found.append(_Named(m.start(), m.end(), pr=int(m["qual_pr"])))
        elif m["url_sha"] or m["commit_sha"]:
            found.append(_Named(m.start(), m.end(), sha=(m["url_sha"] or m["commit_sha"]).lower()))
        elif m["bare_sha"] and bare_shas and _HEX_WITH_DIGIT_AND_LETTER.match(m["bare_sha"]):
            found.append(_Named(m.start(), m.end(), sha=m["bare_sha"].lower()))
    return found


def _refs(kind: FollowUpKind, named: Sequence[_Named], evidence: str) -> list[Reference]:
    return [Reference(kind, pr=n.pr, sha=n.sha, evidence=evidence) for n in named]


# --- fix-forward wording ----------------------------------------------------------------------------

# Words saying something was wrong. Nouns that also name ordinary things ("error handling", "issue
# template", "compatibility layer", "regression test") count only after a word that fixes them.
_WRONG = re.compile(
    r"\b(?:fix(?:es|ed|ing|up)?|hotfix(?:es)?|bugs?|buggy|regress(?:es|ed|ion|ions)?(?!\s+tests?)|broke|broken|"
    r"breakage|crash(?:es|ed|ing)?|fail(?:s|ed|ing|ure|ures)?|incompatib\w*|typos?|nits?|wrong|"
    r"incorrect(?:ly)?|hangs?|hung|deadlocks?|leaks?|mistakes?|accidental(?:ly)?|oversight|misprints?)\b"
    r"|\b(?:address|resolv|solv)\w*\b.*\b(?:comments?|reviews?|feedback|issues?|problems?|errors?)\b",
    re.IGNORECASE,
)
# What ties a reference to the wrong thing: "<fix words> after|since|from|by|in|on|of|for|due to|between #N".
_RELATION = re.compile(
    r"\b(?:after|since|from|by|in|on|of|for|due\s+to|related\s+to|between|following)\s+(?:the\s+)?"
    r"(?:(?:changes?|commits?)\s+)?$",
    re.IGNORECASE,
)
_FIX_DIRECTLY = re.compile(r"\b(?:fix(?:es|ed)?|hotfix(?:es)?)\s*:?\s+(?:the\s+)?$", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s+(?:the\s+)?$", re.IGNORECASE)
_AND = re.compile(r"\b(?:and|&)\s+$", re.IGNORECASE)
# "the bug fixed in #N", "as proposed in #N", "(ref #N)", "e.g. #N": the reference did the fixing,
# or is only cited.
_CITED = re.compile(
    r"\b(?:fixed|resolved|solved|addressed|handled|proposed|suggested|requested|discussed|described|"
    r"mentioned|noted|reported|tracked|like|as|see|cf\.?|ref|refs|"
    r"e\.g\.?|for\s+example|such\s+as|similar\s+to|same\s+as|to\s+match|match(?:es|ing)?)"
    r"\s+(?:\w+\s+)?$",
    re.IGNORECASE,
)
# "#N introduced a bug", "#N (its title) caused this test failure", "#N broke the build",
# "Follow-up to #N: fix the crash".
_BLAME_AFTER = re.compile(
    r"""^\s*(?:\([^)]*\)|"[^"]*"|`[^`]*`)?\s*(?:[\w,'-]+\s+){0,5}?(?:has\s+|had\s+|have\s+)?"""
    r"(?:introduced|caused|causes|broke|breaks|regressed)\b"
    r"|^\s*:\s*(?:fix(?:es)?|hotfix)\b",
    re.IGNORECASE,
)

# "#N changed the default, which crashes on …", "made default in #N, which broke caching": a relative clause
# right after the reference says what it broke.
_WHICH_BROKE = re.compile(
    r"""^\s*(?:\([^)]*\)|"[^"]*"|`[^`]*`)?\s*(?:[\w.'`-]+\s+){0,8}?[\w.'`)-]*,?\s*(?:which|that)\s+"""
    r"(?:(?:has|had|have|then|now|also|since)\s+)?"
    r"(?:broke|breaks|crash(?:es|ed)|caused|causes|regressed|fails|failed|hangs|hung|deadlocks)\b"
    r"(?!\s+(?:nothing|no\b|none))",
    re.IGNORECASE,
)

# How far from a reference its words are read: the words that decide ("fix", "broken by", "caused by",
# "ref", "introduced") sit next to it, and reading each reference's whole paragraph made a pasted list of
# thousands of pull requests take minutes (every reference read the text before it again).
_NEAR = 300
_WORD_RUN = re.compile(r"\w+")
_OPENERS = "`'\"([{"


def _before(text: str, start: int) -> str:
    """The text before `start`, at most _NEAR characters of it, never from inside a word (a cut "prefix"
    is no "fix")."""
    lo = max(0, start - _NEAR)
    if lo and (cut := _WORD_RUN.match(text, lo - 1)):
        lo = min(cut.end(), start)
    return text[lo:start]


def _after(text: str, end: int) -> str:
    """The text after `end`, at most _NEAR characters of it, never up to inside a word."""
    hi = end + _NEAR
    if hi < len(text) and _WORD_RUN.match(text, hi):
        while hi > end and _WORD_RUN.match(text, hi - 1):
            hi -= 1
    return text[end:hi]


def _opened_at(text: str, start: int) -> int:
    """Where the spaces, quotes and opening brackets right before `start` begin (they belong to the
    reference; each reference's are its own, so all of them are read once)."""
    while start and (text[start - 1].isspace() or text[start - 1] in _OPENERS):
        start -= 1
    return start


def _fix_refs(clause: str, evidence: str) -> list[Reference]:
    """The references a clause (a title, or one sentence of a body) says were wrong: a fix word right
    before one, a relation word ("after", "by", "from" …) before it with words of something wrong
    ahead of that, or a blame verb ("introduced", "caused", "broke") right after it."""
    found: list[Reference] = []
    between: list[int] = []
    # A bare sha counts ("Fix the build after 3f9a1c2b7d"): it resolves to a commit or to nothing.
    for n in _named(clause, bare_shas=True):
        before = _before(clause, _opened_at(clause, n.start)) + " "
        if between and _AND.search(before):
            if n.pr is not None:
                between.append(n.pr)
            continue
        if _FIX_DIRECTLY.search(before):
            blamed = True
        elif _CITED.search(before):
            blamed = False
        elif _RELATION.search(before):
            blamed = bool(_WRONG.search(before) or _WHICH_BROKE.match(_after(clause, n.end)))
        else:
            after = _after(clause, n.end)
            blamed = bool((_BLAME_AFTER.match(after) and _WRONG.search(after)) or _WHICH_BROKE.match(after))
        if not blamed:
            continue
        if _BETWEEN.search(before) and n.pr is not None:
            between.append(n.pr)
        else:
            found.append(Reference(FollowUpKind.FIX, pr=n.pr, sha=n.sha, evidence=evidence))
    if between:
        found.append(Reference(FollowUpKind.FIX, latest_of=tuple(between), evidence=evidence))
    return found


# --- reading a title ---------------------------------------------------------------------------------

# Words of a re-land, as a tag ("[Redo]", "[Recover]", "[unrevert]") or at the start of the title.
_RELAND_WORDS = (
    r"(?:re-?appl(?:y|ies|ied)|re-?land(?:s|ed|ing)?|re-?commit(?:s|ted)?|re-?do|recover|un-?revert(?:s|ed)?|restores?|re-?introduces?|"
    r"re-?adds?)"
)
_RELAND_TAG = re.compile(rf"^{_RELAND_WORDS}$", re.IGNORECASE)
_RELAND_LEAD = re.compile(rf"^\s*(?:\w+\s+and\s+)?{_RELAND_WORDS}\b\s*:?\s*", re.IGNORECASE)


def _title_refs(title: str) -> list[Reference]:
    bare = PR_SUFFIX.sub("", title.strip())
    tags, untagged = leading_tags(bare)
    untagged = without_gitmoji(untagged)  # "⏪️ Revert …" (gitmoji) reads as "Revert …"
    conventional = conventional_prefix(untagged)
    if conventional and conventional[0] != "revert":
        untagged = untagged.split(":", 1)[1].strip()
    evidence = _evidence(bare)
    if lead := REVERT_LEAD.match(untagged):
        return _revert_title_refs(untagged[lead.end() :], evidence)
    if (rest := without_revert_tag(bare)) is not None:  # "[Revert] [Core] X (#12)": the tag says it
        return _revert_title_refs(rest, evidence)
    lead = _RELAND_LEAD.match(untagged)
    if lead or any(_RELAND_TAG.match(norm_tag(t)) for t in tags):
        return _reland_title_refs(untagged[lead.end() :] if lead else untagged, evidence)
    return _fix_refs(bare, evidence)


def _revert_title_refs(rest: str, evidence: str) -> list[Reference]:
    """What follows a title's revert words: `"X (#12)"` → PR 12, else title X (a prefix when cut); `#12
    and #13`, `PRs 12 and 13`, `<URL or sha>` → those; `X` → title X."""
    found = _reverted(rest, evidence)
    if not found and '"' not in rest and rest.strip():
        found = [Reference(FollowUpKind.REVERT, title=rest.strip().strip("'`"), evidence=evidence)]
    return found


def _reverted(rest: str, evidence: str) -> list[Reference]:
    """What the words after a revert verb name. Commits named before any quote win: in `Revert #12
    "X (#7)"` the quoted title only describes #12; a cited one ("see #7") is not reverted."""
    quote_at = rest.find('"')
    outside = rest if quote_at < 0 else rest[:quote_at]
    named = [
        n
        for n in _named(outside, qualified=True, bare_shas=True)
        if not _CITED.search(_before(outside, n.start) + " ")
    ]
    if named:
        return _refs(FollowUpKind.REVERT, named, evidence)
    quote = split_quote(rest.strip())
    return [_quoted_ref(FollowUpKind.REVERT, *quote, evidence=evidence)] if quote else []


def _quoted_ref(
    kind: FollowUpKind, text: str, cut: bool, *, evidence: str, relands: bool = False
) -> Reference:
    """A quoted earlier title: its own trailing "(#N)" or "#N" names it; else the title itself."""
    m = re.search(rf"(?:\(#({PR_DIGITS})\)|(?<![\w/])#({PR_DIGITS}))\s*$", text)
    title = text + ELLIPSIS[0] if cut else text
    pr = int(m.group(1) or m.group(2)) if m else None
    return Reference(kind, pr=pr, title=title, evidence=evidence, relands=relands)


def _reland_title_refs(rest: str, evidence: str) -> list[Reference]:
    """What a re-land lands again: the commits it names, else the quoted or plain title after its words.
    "Restore X removed in #12" names what it takes back out of #12: a (partial) revert of #12."""
    rest = rest.strip()
    found = _relanded(rest.split('"', 1)[0], evidence)
    quote = split_quote(rest)
    if quote is not None:
        found.append(_quoted_ref(FollowUpKind.REVERT, *quote, evidence=evidence, relands=True))
    elif rest:
        found.append(Reference(FollowUpKind.REVERT, title=rest, evidence=evidence, relands=True))
    return found


_TAKEN_OUT_BY = re.compile(
    r"\b(?:removed|dropped|deleted|lost|disabled|reverted)\s+(?:in|by)\s+$", re.IGNORECASE
)


def _relanded(text: str, evidence: str) -> list[Reference]:
    found = []
    for n in _named(text, bare_shas=True):
        taken_out = bool(_TAKEN_OUT_BY.search(_before(text, n.start)))
        found.append(
            Reference(FollowUpKind.REVERT, pr=n.pr, sha=n.sha, evidence=evidence, relands=not taken_out)
        )
    return found


# --- reading a body ------------------------------------------------------------------------------------

_GIT_REVERT = re.compile(rf"\bgit\s+revert\s+(?:-\S+\s+)*`?({_SHA})\b", re.IGNORECASE)
_REVERTS_COMMIT = re.compile(rf"\bthis\s+reverts\s+commit\s+({_SHA})\b", re.IGNORECASE)
# The kernel-style trailer `Fixes: <sha> ("title")`: the commit it names was wrong. A short number there
# ("Fixes: 1234567") is an issue, not a commit; twelve digits are an abbreviated sha.
_FIXES_TRAILER = re.compile(rf"^\s*fixes\s*:\s*`?({_SHA})\b", re.IGNORECASE | re.MULTILINE)
_ISSUE_DIGITS_MAX = 9
# A sentence that states a revert: "Reverts #12", "This PR reverts …", "Partial revert of abc1234".
_REVERT_SENTENCE = re.compile(
    r"^(?:(?:this|the)\s+(?:pr|pull\s+request|commit|change|patch)\s+|this\s+|we\s+)?(?:is\s+)?(?:also\s+)?"
    r"(?:an?\s+)?(?:partial(?:ly)?\s+)?(?:revert(?:s|ed)?|rolls?\s+back|rolled\s+back|backs?\s+out)\b"
    r"(?:\s+of\b)?\s*:?\s*",
    re.IGNORECASE,
)
# A sentence that only blames, for what the one before it says went wrong: "Introduced in #12.",
# "It was caused by #12."
_CONTINUES = re.compile(
    r"^(?:(?:it|this|that|which)\s+(?:was|were|is|has\s+been|had\s+been)\s+)?(?:introduced|caused|broken|regressed)\b",
    re.IGNORECASE,
)
_RELAND_SENTENCE = re.compile(
    rf"^(?:(?:this|the)\s+(?:pr|pull\s+request|commit|change|patch)\s+|this\s+|we\s+)?{_RELAND_WORDS}\b",
    re.IGNORECASE,
)
_CONVENTIONAL_REFS = re.compile(r"^\s*refs?\s*:\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_LIST_ITEM = re.compile(r"^\s*[*-]\s+(.+)$")
_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|etc|vs|cf|approx|incl)\.", re.IGNORECASE)


def _body_refs(body: str, revert_title: bool) -> list[Reference]:
    body = _without_branch_reverts(body)
    found: list[Reference] = []
    for m in _REVERTS_COMMIT.finditer(body):
        found.append(Reference(FollowUpKind.REVERT, sha=m.group(1).lower(), evidence=_evidence(m.group(0))))
    for m in _GIT_REVERT.finditer(body):
        found.append(Reference(FollowUpKind.REVERT, sha=m.group(1).lower(), evidence=_evidence(m.group(0))))
    for m in _FIXES_TRAILER.finditer(body):
        if len(m.group(1)) > _ISSUE_DIGITS_MAX or not m.group(1).isdigit():
            found.append(Reference(FollowUpKind.FIX, sha=m.group(1).lower(), evidence=_evidence(m.group(0))))
    if revert_title:  # a conventional "revert: …" commit lists what it reverts as "Refs: <sha>, <sha>"
        for m in _CONVENTIONAL_REFS.finditer(body):
            found += _refs(FollowUpKind.REVERT, _named(m.group(1), bare_shas=True), _evidence(m.group(0)))
    sentences = _sentences(body)
    for i, sentence in enumerate(sentences):
        item = _LIST_ITEM.match(sentence)
        text = item.group(1) if item else sentence
        evidence = _evidence(text)
        if item and (lead := REVERT_LEAD.match(text)):  # a listed commit title
            found += _revert_title_refs(text[lead.end() :], evidence)
        elif revert := _REVERT_SENTENCE.match(text):
            found += _reverted(text[revert.end() :], evidence)
        elif _RELAND_SENTENCE.match(text):
            found += _relanded(text, evidence)
        else:
            if i and _CONTINUES.match(text):  # "Fixes a crash in the pager. Introduced in #12."
                text = sentences[i - 1] + " " + text
            found += _fix_refs(text, _evidence(text))
    return found


def _without_branch_reverts(body: str) -> str:
    """The body without the entries of a squash merge's commit list that revert another commit of the
    same branch: a listed revert of a title listed before it, or one re-applied later in the list,
    changes nothing the branch had landed. An entry is its "* title" line and the lines under it."""
    lines = body.splitlines()
    starts = [i for i, line in enumerate(lines) if _LIST_ITEM.match(line)]
    titles = [_LIST_ITEM.match(lines[i]).group(1).strip() for i in starts]  # type: ignore[union-attr]
    quotes = [revert_quote(title) for title in titles]
    # Indexed once, not compared pairwise: a squash of thousands of listed reverts took minutes.
    first_listed: dict[str, int] = {}
    for k, title in enumerate(titles):
        first_listed.setdefault(_norm_title(title), k)
    last_reverted: dict[str, int] = {_norm_title(q[0]): k for k, q in enumerate(quotes) if q is not None}
    relands = [
        (k, _norm_title(title))
        for k, (title, quote) in enumerate(zip(titles, quotes, strict=True))
        if quote is None and _RELAND_LEAD.match(title_text(title))
    ]
    dropped: set[int] = set()
    for k, (title, quote) in enumerate(zip(titles, quotes, strict=True)):
        if quote is None:
            continue
        target = _norm_title(quote[0])
        listed_before = first_listed.get(target, k) < k
        # re-applied later: a listed revert of this revert, or a re-land naming its target
        reapplied = last_reverted.get(_norm_title(title), k) > k or any(
            j > k and target in relanded for j, relanded in relands
        )
        if listed_before or reapplied:
            end = starts[k + 1] if k + 1 < len(starts) else len(lines)
            dropped.update(range(starts[k], end))
    return "\n".join(line for i, line in enumerate(lines) if i not in dropped)


def _sentences(text: str) -> list[str]:
    """Lines, split again at sentence ends (not at "e.g." and the like)."""
    out: list[str] = []
    for line in text.splitlines():
        masked = _ABBREVIATIONS.sub(lambda m: m.group(1) + "\0", line)
        for part in re.split(r"(?<=[.!?])\s+(?=[A-Z#\[`\"(])", masked):
            part = part.replace("\0", ".").strip()
            if part:
                out.append(part)
    return out


def references(message: str) -> list[Reference]:
    """What a message says it follows up, title first, then the body; each target once."""
    return list(_references(message))


# Every day of a digest or an eval mines the same months of history again: each message is read once.
@functools.lru_cache(maxsize=1 << 14)
def _references(message: str) -> tuple[Reference, ...]:
    title, body = message_title(message)
    found = _title_refs(title)
    said = title_text(PR_SUFFIX.sub("", title.strip()))
    found += _body_refs(strip_trailers(body), revert_title=bool(REVERT_LEAD.match(said)))
    return tuple(_unique(found))


# --- resolving against the branch ---------------------------------------------------------------------


def find_links(commits: Sequence[PastCommit]) -> list[FollowUpLink]:
    """Links among these commits, oldest first in, in landing order out. A reference resolves only
    to a commit that landed before the follow-up; a revert beats a fix for the same pair. A re-land
    links to the latest revert of what it lands again (none known: no link)."""
    return list(mine(commits).links)


@dataclass(frozen=True, slots=True)
class Mined:
    """What mining a run of commits leaves: its links (landing order) and each reverted commit's latest
    revert, (original sha, revert sha) in the order they were first reverted — what a later re-land
    links to. Kept in the store for a span of history, so that the commits after it are mined on top
    of it instead of mining the span again."""

    links: tuple[FollowUpLink, ...] = ()
    reverts: tuple[tuple[str, str], ...] = ()


def mine(
    commits: Sequence[PastCommit], *, past: Sequence[PastCommit] = (), known: Mined | None = None
) -> Mined:
    """`find_links` of `past` + `commits` with what mining `past` left (`known`) given: only `commits`
    are read, against an index of `past`. The same result as mining them all, which is what happens
    when `known` is None or a commit of `commits` landed before the last of `past`."""
    ordered = sorted(commits, key=lambda c: c.committed_at)
    earlier = sorted(past, key=lambda c: c.committed_at)
    if known is None or (earlier and ordered and ordered[0].committed_at < earlier[-1].committed_at):
        return _mine(sorted([*earlier, *ordered], key=lambda c: c.committed_at), _Index(), Mined())
    index = _Index()
    for commit in earlier:
        index.add(commit)
    return _mine(ordered, index, known)


def _mine(ordered: Sequence[PastCommit], index: _Index, known: Mined) -> Mined:
    links: dict[tuple[str, str], FollowUpLink] = {(k.original, k.follow_up): k for k in known.links}
    # original sha → its latest revert
    reverts_of: dict[str, PastCommit] = {sha: index.by_sha[revert] for sha, revert in known.reverts}

    def add(target: PastCommit, commit: PastCommit, kind: FollowUpKind, evidence: str) -> None:
        key = (target.sha, commit.sha)
        if target.sha == commit.sha or (key in links and links[key].kind == FollowUpKind.REVERT):
            return
        links[key] = FollowUpLink(
            target.sha, commit.sha, kind, evidence, target.committed_at, commit.committed_at
        )
        if kind == FollowUpKind.REVERT:
            reverts_of[target.sha] = commit

    for commit in ordered:
        resolved = False
        for ref in _references(commit.message):
            target = index.resolve(ref)
            if target is None:
                continue
            resolved = True
            if ref.relands:
                if (revert := reverts_of.get(target.sha)) is not None:
                    add(revert, commit, FollowUpKind.REVERT, ref.evidence)
            else:
                add(target, commit, ref.kind, ref.evidence)
        if not resolved and (again := index.repeated(commit, reverts_of)) is not None:
            add(reverts_of[again.sha], commit, FollowUpKind.REVERT, _evidence(commit.title))
        index.add(commit)
    ordered_links = sorted(
        links.values(), key=lambda link: (link.follow_up_at, link.follow_up, link.original)
    )
    return Mined(tuple(ordered_links), tuple((sha, c.sha) for sha, c in reverts_of.items()))


_RELAND_MIN_WORDS = 4  # a title this short ("Update docs") recurs without re-landing anything
_REMARK_MAX_WORDS = 5  # "(take 2)", ". Attempt 2", "(fix for reverted PR)" after a re-landed title
_REMARK = re.compile(r"^\s*[.,;:(\[–—-]|^\s+(?:again|take\s*\d+|attempt\s*\d+|v\d+|round\s*\d+)\b")
_PREFIX_MIN_CHARS = 15  # a cut title shorter than this names too many commits


class _Index:
    """The commits landed so far, by pull request, sha and title. The titles are normalised when a
    reference by title first needs them (a day's commits mined on top of stored months mostly name
    pull requests: 0.05 s of a day's start and of a card's, issue 21), in the order the commits came,
    so the maps are the ones adding them one by one would have made."""

    def __init__(self) -> None:
        self.by_pr: dict[int, PastCommit] = {}
        self.by_sha: dict[str, PastCommit] = {}
        self._by_title: dict[str, PastCommit] = {}
        self._by_untagged: dict[str, PastCommit] = {}
        self._unindexed: list[PastCommit] = []  # added, titles not yet in the two maps above

    def add(self, commit: PastCommit) -> None:
        pr = _pr_in(commit.title)
        if pr is not None:
            self.by_pr[pr] = commit
        self.by_sha[commit.sha] = commit
        self._unindexed.append(commit)

    @property
    def by_title(self) -> dict[str, PastCommit]:
        self._index_titles()
        return self._by_title

    @property
    def by_untagged(self) -> dict[str, PastCommit]:
        self._index_titles()
        return self._by_untagged

    def untagged(self, sha: str) -> str | None:
        """The normalised title without tags of an added commit (None: not added)."""
        commit = self.by_sha.get(sha)
        return None if commit is None else _norm_untagged(commit.title)

    def _index_titles(self) -> None:
        for commit in self._unindexed:
            title = commit.title  # worked out from the message once per commit
            self._by_title[_norm_title(title)] = commit
            self._by_untagged[_norm_untagged(title)] = commit
        self._unindexed.clear()

    def resolve(self, ref: Reference) -> PastCommit | None:
        if ref.latest_of:
            landed = [self.by_pr[n] for n in ref.latest_of if n in self.by_pr]
            return max(landed, key=lambda c: c.committed_at) if landed else None
        if ref.pr is not None and ref.pr in self.by_pr:
            return self.by_pr[ref.pr]
        if ref.sha is not None:
            matches = [c for s, c in self.by_sha.items() if s.lower().startswith(ref.sha)]
            return matches[0] if len(matches) == 1 else None
        if ref.title and ref.title.endswith(ELLIPSIS[0]):
            # The newest earlier commit whose title starts with what was kept.
            prefix = _norm_title(ref.title[: -len(ELLIPSIS[0])]).rstrip(" ([{-:,")
            if len(prefix) < _PREFIX_MIN_CHARS:
                return None
            return next((c for t, c in reversed(self.by_title.items()) if t.startswith(prefix)), None)
        if ref.title:
            return self.by_title.get(_norm_title(ref.title)) or (
                self.by_untagged.get(_norm_untagged(ref.title)) if ref.relands else None
            )
        return None

    def repeated(self, commit: PastCommit, reverted: dict[str, PastCommit]) -> PastCommit | None:
        """The reverted commit this one lands again under the same title, tags aside, perhaps with a
        short closing remark: "X (take 2)", "X. Attempt 2", "X (fix for reverted PR)"."""
        title = _norm_untagged(commit.title)
        for sha in reversed(list(reverted)):
            key = self.untagged(sha)
            if key is None or not title.startswith(key) or len(key.split()) < _RELAND_MIN_WORDS:
                continue
            remark = title[len(key) :]
            if not remark or (_REMARK.match(remark) and len(remark.split()) <= _REMARK_MAX_WORDS):
                return self.by_sha[sha]
        return None


@functools.lru_cache(maxsize=1 << 14)
def _norm_title(title: str) -> str:
    return re.sub(r"\s+", " ", PR_SUFFIX.sub("", title).replace("`", "")).strip().lower()


@functools.lru_cache(maxsize=1 << 14)
def _norm_untagged(title: str) -> str:
    return _norm_title(leading_tags(PR_SUFFIX.sub("", title.strip()))[1])


def _evidence(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EVIDENCE_MAX else text[: EVIDENCE_MAX - 1] + "…"


def _unique(refs: list[Reference]) -> list[Reference]:
    seen: set[tuple[object, ...]] = set()
    out = []
    for ref in refs:
        name = ref.pr if ref.pr is not None else ref.sha if ref.sha else ref.title and _norm_title(ref.title)
        key = (name, ref.latest_of, ref.relands)
        if key in seen:
            continue
        seen.add(key)
        out.append(ref)
    return out
