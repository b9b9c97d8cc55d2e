"""Follow-up links: which commit reverted or fixed forward which earlier one, read from commit text.

A repository's own reverts and fix-forwards are the answer key for risk (DESIGN.md §3b). This module
is pure: it parses what a message says it follows up (`references`) and resolves those references
against earlier commits of the same branch (`find_links`). Reading the history is the sources' job.

What counts, in the title or the message body (trailers removed):
- revert: `Revert "<title>"` (after any leading tags, GitHub's revert-PR titles included), a revert
  title without quotes naming an earlier title exactly, `This reverts commit <sha>`, `Revert(s) #N`,
  `Revert(s) PR #N`, a pull-request URL in place of `#N`;
- fix forward: `after #N`, `broken by #N`, `regression from|in|caused by|introduced by #N`,
  `follow-up to #N`, `fix(es) #N`, `introduced in #N`, `caused by #N` in the body; in the title, any
  `#N` besides the commit's own "(#M)" (a squash-merged title that names an earlier pull request
  follows it up), unless the title re-lands, back-ports or cherry-picks it.
Every `#N` must be a pull request that landed on the branch before the follow-up (GitHub numbers
issues and pull requests alike, so a reference to an issue resolves to nothing and links nothing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from analysis.heuristic.title import PR_SUFFIX, REVERT_TITLE, leading_tags
from analysis.models import PR_IN_TITLE
from analysis.text import strip_trailers

EVIDENCE_MAX = 160


class FollowUpKind(StrEnum):
    REVERT = "revert"
    FIX = "fix"


@dataclass(frozen=True, slots=True)
class PastCommit:
    """A commit of the branch's history as the signals need it: no patches, paths with their sizes."""

    sha: str
    committed_at: datetime  # timezone-aware
    message: str
    files: tuple[tuple[str, int], ...] = ()  # (path, changed lines)

    @property
    def title(self) -> str:
        return self.message.strip().split("\n", 1)[0].strip() if self.message.strip() else ""

    @property
    def pr_number(self) -> int | None:
        m = PR_IN_TITLE.search(self.title)
        return int(m.group(1)) if m else None


@dataclass(frozen=True, slots=True)
class Reference:
    kind: FollowUpKind
    pr: int | None = None
    sha: str | None = None  # a prefix, lower-case
    title: str | None = None  # an earlier commit's title, without its "(#N)"
    evidence: str = ""


@dataclass(frozen=True, slots=True)
class FollowUpLink:
    original: str  # full sha of the commit followed up
    follow_up: str  # full sha of the commit that reverts or fixes it
    kind: FollowUpKind
    evidence: str  # the words that say so, from the follow-up's message
    original_at: datetime
    follow_up_at: datetime


# `#123`, or a pull-request URL (any host: GitHub Enterprise too); `owner/repo#123` only where a revert says
# so (GitHub's revert PRs write "Reverts owner/repo#123"): elsewhere it usually names another repository.
_PR = r"(?:(?<![\w/])#(\d+)\b|https?://[^\s/]+/[^\s/]+/[^\s/]+/pull/(\d+)\b)"
_PR_QUALIFIED = r"(?:(?<![\w/])(?:[\w.-]+/[\w.-]+)?#(\d+)\b|https?://[^\s/]+/[^\s/]+/[^\s/]+/pull/(\d+)\b)"
_REVERT_QUOTED = re.compile(r'^\s*revert(?:s|ed)?\s*:?\s*"(?P<title>.+)"\s*$', re.IGNORECASE)
# GitHub cuts long titles with "…", leaving the quote open: `Revert "[Core] Use a fast pa…`
_REVERT_CUT = re.compile(r'^\s*revert(?:s|ed)?\s*:?\s*"(?P<title>.+?)(?:…|\.\.\.)\s*$', re.IGNORECASE)
_REVERT_BARE = re.compile(r"^\s*revert(?:s|ed)?\s*:?\s+(?P<title>.+?)\s*$", re.IGNORECASE)
_REVERT_SHA = re.compile(r"\bthis\s+reverts\s+commit\s+([0-9a-f]{7,40})\b", re.IGNORECASE)
_REVERT_PR = re.compile(
    rf"\brevert(?:s|ed|ing)?\s+(?:(?:the\s+)?(?:pr|pull\s+request)\s*)?{_PR_QUALIFIED}", re.IGNORECASE
)
_FIX_FORWARD = re.compile(
    r"\b(?:"
    r"after|broken\s+(?:by|in|since)|breakage\s+(?:from|in|by)|regress(?:ion|ions|ed)?\s+"
    r"(?:from|in|of|since|caused\s+by|introduced\s+(?:by|in))|"
    r"(?:caused?|introduced)\s+(?:by|in)|follow[-\s]?ups?(?:\s+(?:to|of|for|on))?|"
    r"fix(?:es|ed|ing)?(?:\s+(?:for|of|up|the\s+issue\s+(?:in|from)|bugs?\s+(?:in|from)))?"
    rf")\s*(?:(?:pr|pull\s+request)\s*)?:?\s*{_PR}",
    re.IGNORECASE,
)
_ANY_PR = re.compile(_PR)
# A title that re-applies an earlier change names it without following it up.
_RELAND = re.compile(
    r"\b(?:re-?land(?:s|ed|ing)?|re-?do|re-?apply|re-?applies|back-?port(?:s|ed)?|cherry-?pick)", re.I
)
_TRUNCATED = "…"


def references(message: str) -> list[Reference]:
    """What a message says it follows up, title first, then the body; each target once.

    In the title, any `#N` other than the commit's own "(#M)" suffix names what it follows up: a
    revert title reverts it, any other title fixes it forward (unless it re-lands it). In the body,
    only the phrases listed in the module docstring count: bodies cite related work freely."""
    title, _, body = message.strip().partition("\n")
    bare_title = PR_SUFFIX.sub("", title.strip())
    _tags, untagged = leading_tags(bare_title)
    revert = bool(REVERT_TITLE.match(untagged))
    found: list[Reference] = []
    if revert:
        found.extend(_revert_title_refs(untagged, _evidence(bare_title)))
    kind = FollowUpKind.REVERT if revert else FollowUpKind.FIX
    quoted = revert and bool(_REVERT_QUOTED.match(untagged) or _REVERT_CUT.match(untagged))
    # A quoted title's own "(#N)" names what it reverts (read above); a revert of a revert must not
    # also link to the original it quotes.
    if not quoted and (revert or not _RELAND.search(bare_title)):
        for m in _ANY_PR.finditer(bare_title):
            found.append(Reference(kind, pr=_pr_of(m), evidence=_evidence(bare_title)))
    text = strip_trailers(body)
    for m in _REVERT_SHA.finditer(text):
        found.append(Reference(FollowUpKind.REVERT, sha=m.group(1).lower(), evidence=_evidence(m.group(0))))
    for m in _REVERT_PR.finditer(text):
        found.append(Reference(FollowUpKind.REVERT, pr=_pr_of(m), evidence=_evidence(m.group(0))))
    for m in _FIX_FORWARD.finditer(text):
        found.append(Reference(FollowUpKind.FIX, pr=_pr_of(m), evidence=_line_of(text, m)))
    return _unique(found)


def _revert_title_refs(untagged: str, evidence: str) -> list[Reference]:
    """`Revert "X (#12)"` → PR 12, else title X; a cut `Revert "X…` → titles starting with X;
    `Revert X` → title X. PR numbers elsewhere in the title are read by the caller."""
    m = _REVERT_QUOTED.match(untagged)
    if m:
        target = m.group("title").strip()
        prs = [_pr_of(p) for p in _ANY_PR.finditer(target)]
        if prs:
            return [Reference(FollowUpKind.REVERT, pr=prs[-1], evidence=evidence)]
        return [Reference(FollowUpKind.REVERT, title=target, evidence=evidence)]
    m = _REVERT_CUT.match(untagged)
    if m:
        return [
            Reference(FollowUpKind.REVERT, title=m.group("title").strip() + _TRUNCATED, evidence=evidence)
        ]
    m = _REVERT_BARE.match(untagged)
    if m and not _ANY_PR.search(m.group("title")):
        return [
            Reference(FollowUpKind.REVERT, title=m.group("title").strip().strip("\"'`"), evidence=evidence)
        ]
    return []


def find_links(commits: Sequence[PastCommit]) -> list[FollowUpLink]:
    """Links among these commits, oldest first in, in landing order out. A reference resolves only
    to a commit that landed before the follow-up; a revert beats a fix for the same pair."""
    ordered = sorted(commits, key=lambda c: c.committed_at)
    by_pr: dict[int, PastCommit] = {}
    by_title: dict[str, PastCommit] = {}
    by_sha: dict[str, PastCommit] = {}
    links: dict[tuple[str, str], FollowUpLink] = {}
    for commit in ordered:
        for ref in references(commit.message):
            target = _resolve(ref, by_pr, by_title, by_sha)
            if target is None or target.sha == commit.sha:
                continue
            key = (target.sha, commit.sha)
            if key in links and links[key].kind == FollowUpKind.REVERT:
                continue
            links[key] = FollowUpLink(
                original=target.sha,
                follow_up=commit.sha,
                kind=ref.kind,
                evidence=ref.evidence,
                original_at=target.committed_at,
                follow_up_at=commit.committed_at,
            )
        if commit.pr_number is not None:
            by_pr[commit.pr_number] = commit
        by_title[_norm_title(commit.title)] = commit
        by_sha[commit.sha.lower()] = commit
    return sorted(links.values(), key=lambda link: (link.follow_up_at, link.follow_up, link.original))


def _resolve(
    ref: Reference,
    by_pr: dict[int, PastCommit],
    by_title: dict[str, PastCommit],
    by_sha: dict[str, PastCommit],
) -> PastCommit | None:
    if ref.sha is not None:
        matches = [c for s, c in by_sha.items() if s.startswith(ref.sha)]
        return matches[0] if len(matches) == 1 else None
    if ref.pr is not None and ref.pr in by_pr:
        return by_pr[ref.pr]
    if ref.title and ref.title.endswith(_TRUNCATED):
        # The newest earlier commit whose title starts with what was kept.
        prefix = _norm_title(ref.title[: -len(_TRUNCATED)]).rstrip(" ([{-:,")
        return (
            next((c for t, c in reversed(by_title.items()) if t.startswith(prefix)), None) if prefix else None
        )
    if ref.title:
        return by_title.get(_norm_title(ref.title))
    return None


def _norm_title(title: str) -> str:
    return re.sub(r"\s+", " ", PR_SUFFIX.sub("", title)).strip().lower()


def _pr_of(m: re.Match[str]) -> int:
    return int(m.group(1) or m.group(2))


def _line_of(text: str, m: re.Match[str]) -> str:
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    return _evidence(text[start : end if end != -1 else len(text)])


def _evidence(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EVIDENCE_MAX else text[: EVIDENCE_MAX - 1] + "…"


def _unique(refs: list[Reference]) -> list[Reference]:
    seen: set[tuple[object, ...]] = set()
    out = []
    for ref in refs:
        key = (ref.pr, ref.sha, ref.title and _norm_title(ref.title))
        if key in seen:
            continue
        seen.add(key)
        out.append(ref)
    return out
