"""Release notes as an answer key for impact: which pull requests the maintainers told users about, and
under which heading (DESIGN.md §3c). Pure: text in, {PR number: category} out; reading the file at the
branch tip is the sources' job.

Formats read (Markdown or reStructuredText, any mix of them):
- headings of any kind (`## x`, a line underlined with `===`/`---`/`~~~`, a line that is only bold text)
  name a category by general words: "Breaking changes", "Backwards-incompatible", "Removed", "Dropped" →
  breaking (a word inside an identifier, `new_style`, is a name, not a kind);
  "New features", "Added", "Enhancements" → feature; "Changes"/"Changed" → change (of existing
  behaviour); "Deprecations"; "Performance"; "Fixes", "Bug fixes", "Security" → fix; "Docs",
  "Documentation", "Translations" → docs; "Packaging", "Dependencies", "Upgrades" → dependencies (what
  users install changed: a new version of a runtime dependency changes what they get, so it is neither
  internal nor, by itself, a feature); "Internal", "Refactors", "CI", "Chores", "Maintenance", "Tests",
  "Build" → internal. A heading with no category word (a
  version, "What's Changed", "Language", a component name) adds none: its items keep the category of
  the nearest heading above that has one, else they are listed without a category ("other").
- A heading with a paragraph and no list below it is one entry's title (reST notes that underline each entry,
  towncrier's compiled fragments): under a section that names a kind, the section decides ("Changes" ›
  "POWER support update" is a change), unless the title says the thing was removed or deprecated.
- "New Contributors", "Contributors", "Thanks" sections list people, not changes: ignored. So is an index of
  every merged pull request ("Pull-Requests:", "Full Changelog", "Commits") beside the written sections: a PR
  only there is one the maintainers chose not to tell users about (unlisted).
- An item that declares itself breaking ("**Breaking Change:** …", "[BREAKING]", 💥, `feat!:`) is
  breaking whatever its section. An item under no category heading takes one from its own prefix where it
  has one: a conventional-commit type (`fix:`, `feat(x):`; a scope naming CI, tests, docs or examples decides:
  `feat(ci):` is CI work), a leading `[Tag]`, or a gitmoji.
- Notes written as plain items under version headings (most items led by a verb, few under a category
  heading: decided per file, analysis/release_verbs.py) classify an item by its leading
  verb: "Add/Support/Allow/Introduce/New …" → feature, "Fix …" → fix, "Remove/Drop …" → breaking,
  "Deprecate …", "Change …"/"Make … default" → change, "Improve performance/Speed up/Faster" → performance,
  "Document …" → docs. GitHub's generated items ("… by @ann in …") are pull-request titles: never read so.
- References: `#123`, `(#123)`, `[#123](…/pull/123)`, `…/pull/123` and `…/issues/123` URLs (GitHub
  numbers issues and pull requests alike; a number that landed no commit matches nothing), link
  reference definitions (`[123]: …/pull/123`), reST roles (:pr:`123`, :issue:`123`, :pr:`123, 124`). A
  reference into another repository (`other/repo#12`, a URL of another repository) is not this
  repository's: the notes' own repository is the one their pull-request URLs name most often, or the
  caller's when it is among them.
- An item line that names no pull request but links its commit (`[a1b2c3d](…/commit/a1b2c3d…)`, as
  release-please writes a change pushed without a pull request) lists that commit, and so does one that names
  the commit's sha in plain text ("… by @ann in a1b2c3d…", as hand-kept changelogs credit a direct push;
  GitHub links a bare sha). Only there: beside a pull request, a commit may be the change it fixes.
- Notes kept as reST `.. change::` blocks (`:type: feature`, `:breaking:`, `:pr: 12`): each block's fields
  name its pull requests and their kind (analysis/release_blocks.py); its prose is not read for references.
- A pull request listed twice keeps its most significant category (breaking > feature > change >
  deprecation > performance > fix > dependencies > docs > internal > other).

`notes_key` decides what an unlisted pull request means; see its docstring.

The heading and item rules live in analysis/release_headings.py, shared with the entries a commit adds to its
own notes (analysis/surface/release_entries.py).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from analysis.paths import RELEASE_NOTES_STEMS
from analysis.release_blocks import change_blocks
from analysis.release_headings import RELEASE_HEADING, Category, clean, listed_lines
from analysis.release_verbs import item_reader
from analysis.titles import PR_DIGITS

UNLISTED = "unlisted"  # a PR the notes do not list, in a repository that lists its user-facing changes


# Where release notes usually live, tried in this order (case-insensitive); a bounded search, no names
# of any one repository.
ROOT_NAMES = RELEASE_NOTES_STEMS
ROOT_SUFFIXES = (".md", ".rst", ".markdown", ".txt", "")
DOCS_PREFIXES = ("release-notes", "release_notes", "releasenotes", "changelog")
DOCS_SUFFIXES = (".md", ".rst", ".markdown")
MAX_CANDIDATES = 6

# "Lists its user-facing changes": within the stretch of the span its notes cover, at least this many of
# the span's pull requests are listed, and at least this share of them. Below that (a file of highlights
# only, or notes that reference issues rather than pull requests) an unlisted PR says nothing.
MIN_LISTED = 20
MIN_LISTED_SHARE = 0.10

_LINK_DEFINITION = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*<?(\S+?)>?\s*(?:\"[^\"]*\")?\s*$")
_LINK_REFERENCE = re.compile(r"\]\[([^\]]{1,100})\]|\[([^\]]{1,100})\](?![(\[:])")

# A pull request or issue URL on any forge (GitHub, GitHub Enterprise, GitLab's /-/merge_requests).
PR_URL = re.compile(
    rf"https?://[^\s/()<>\]]+/([\w.-]+)/([\w.-]+)/(?:-/)?(?:pull|pulls|issues|merge_requests)/({PR_DIGITS})\b"
)
# A Markdown link [text](url) or a reST one `text <url>`_.
_LINK = re.compile(
    r"\[[^\]]{0,300}+\]\([ \t]{0,20}+[^)\s]{1,300}+(?:[ \t]+[^)]{0,200}+)?\)|`[^`<]{0,300}+<[^>`]{1,300}+>`__?"
)
_QUALIFIED = re.compile(rf"(?<![\w/.#-])([\w.-]+/[\w.-]+)#({PR_DIGITS})\b")
_PLAIN = re.compile(rf"(?<![\w/&#-])#({PR_DIGITS})\b")
# A reST role naming one number or a list (":pr:`967, 976`", as Pallets' notes write several).
PR_ROLE = re.compile(
    rf":(?:pr|pull|issue|gh|ghpull|ghissue):`(?:[^`<]{{0,200}}<)?"
    rf"(#?{PR_DIGITS}(?:,[ ]{{0,3}}#?{PR_DIGITS}){{0,30}})>?`"
)
_DIGITS = re.compile(PR_DIGITS)
# A commit URL on any forge (GitHub's /commit/, GitLab's /-/commit/), with an abbreviated or full sha.
_COMMIT_URL = re.compile(r"https?://[^\s/()<>\]]+/([\w.-]+)/([\w.-]+)/(?:-/)?commits?/([0-9a-fA-F]{7,40})\b")
# A sha in plain text: lower-case hex, 7 to 40 characters, standing alone. Not `owner/repo@sha` or a path's
# (another repository's commit), not part of a word, version, UUID or anchor.
_BARE_SHA = re.compile(r"(?<![\w@/#.=:-])[0-9a-f]{7,40}(?![\w/.@-])")


@dataclass(frozen=True, slots=True)
class ReleaseNotes:
    prs: dict[int, Category]  # every pull request the notes list, with its most significant category
    home: str | None = None  # owner/name the notes' PR links point at (lower case), when they have any
    unclassified_headings: tuple[str, ...] = ()  # headings with PRs but no category word, for the report
    # items that name no pull request but link their commit: {lower-case sha as linked: category}
    commits: dict[str, Category] = field(default_factory=dict)

    def category(self, pr: int | None) -> Category | None:
        return self.prs.get(pr) if pr is not None else None

    def commit_category(self, sha: str) -> Category | None:
        """The category of the item that links this commit (full sha) by itself, when one does."""
        sha = sha.lower()
        for length in {len(linked) for linked in self.commits}:
            found = self.commits.get(sha[:length])
            if found is not None:
                return found
        return None

    @property
    def counts(self) -> dict[str, int]:
        tally = Counter([*self.prs.values(), *self.commits.values()])
        return {c.value: tally[c] for c in Category if tally[c]}


def parse(text: str, repo: str | None = None) -> ReleaseNotes:
    """Every pull request the notes list, by category. repo: owner/name of the repository the notes
    belong to, when known (it decides which links are its own when they name several repositories)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks = change_blocks(lines)
    # a `.. change::` block's fields name its changes; its prose names others ("a regression from #2751")
    lines = ["" if i in blocks.covered else line for i, line in enumerate(lines)]
    definitions = _link_definitions(lines)
    home = _home(text, definitions, repo)
    found: dict[int, Category] = dict(blocks.prs)
    commits: dict[str, Category] = {}
    unclassified: dict[str, None] = {}
    read_item = item_reader(lines, skip=_LINK_DEFINITION.match)
    for _, line, category, state in listed_lines(lines, skip=_LINK_DEFINITION.match, read_item=read_item):
        references = _references(line, definitions, home)
        for sha in [] if references else _commit_references(line, home):
            current_commit = commits.get(sha)
            if current_commit is None or category.significance < current_commit.significance:
                commits[sha] = category
        for pr in references:
            heading = clean(state.headings[-1].text) if state.headings else ""
            if category == Category.OTHER and heading and not RELEASE_HEADING.search(heading):
                unclassified[heading] = None
            current = found.get(pr)
            if current is None or category.significance < current.significance:
                found[pr] = category
    return ReleaseNotes(found, home, tuple(h for h in unclassified if h), commits)


def _commit_references(line: str, home: str | None) -> list[str]:
    """The commits a line links in the notes' own repository, or names by a bare sha (lower-case shas as
    written)."""
    linked = [
        m.group(3).lower()
        for m in _COMMIT_URL.finditer(line)
        if home is None or f"{m.group(1)}/{m.group(2)}".lower() == home
    ]
    rest = _COMMIT_URL.sub(" ", _LINK.sub(" ", line))  # a link's text is its target's, read above
    # a sha has letters and digits: an all-digit run is a number, an all-letter one a word ("defaced")
    bare = [s for s in _BARE_SHA.findall(rest) if not s.isdigit() and not s.isalpha()]
    return list(dict.fromkeys(linked + bare))


def candidates(paths: Iterable[str]) -> list[str]:
    """The files of a tree that may hold release notes, most likely first, at most MAX_CANDIDATES:
    CHANGELOG/CHANGES/HISTORY/NEWS/RELEASES at the root, then release-notes*/changelog* under docs/."""
    by_lower = {}
    for path in paths:
        by_lower.setdefault(path.lower(), path)
    chosen: list[str] = []
    for name in ROOT_NAMES:
        for suffix in ROOT_SUFFIXES:
            if name + suffix in by_lower:
                chosen.append(by_lower[name + suffix])
    docs = []
    for lower, path in by_lower.items():
        folder, _, base = lower.rpartition("/")
        in_docs = folder == "docs" or folder.startswith("docs/")
        if in_docs and base.startswith(DOCS_PREFIXES) and base.endswith(DOCS_SUFFIXES):
            docs.append((lower.count("/"), lower, path))
    chosen += [path for _, _, path in sorted(docs)]
    return chosen[:MAX_CANDIDATES]


@dataclass(frozen=True, slots=True)
class Landed:
    """A commit of the span as the key needs it."""

    sha: str
    committed_at: datetime
    pr: int | None


@dataclass(frozen=True, slots=True)
class NotesKey:
    """What the notes say about each commit of a span: its category, UNLISTED, or None (unknown)."""

    answers: dict[str, str | None]  # by sha
    lists_changes: bool
    listed: int  # the span's pull requests the notes list
    with_pr: int  # commits in the covered stretch naming their pull request (or linked by the notes)
    covered_from: datetime | None
    covered_to: datetime | None

    @property
    def reason(self) -> str:
        if not self.listed:
            return "the notes list none of the span's pull requests"
        share = self.listed / self.with_pr if self.with_pr else 0.0
        judged = (
            "an unlisted pull request counts as not release-worthy"
            if self.lists_changes
            else f"too few to read an unlisted one as not release-worthy (need {MIN_LISTED} and"
            f" {MIN_LISTED_SHARE:.0%}): unlisted pull requests are left out"
        )
        return (
            f"{self.listed} of the {self.with_pr} pull requests landed from {self.covered_from:%Y-%m-%d} to"
            f" {self.covered_to:%Y-%m-%d} are listed ({share:.0%}); {judged}"
        )


def notes_key(notes: ReleaseNotes, span: Sequence[Landed]) -> NotesKey:
    """Each commit's answer. The notes cover the stretch of the span from the first to the last commit
    whose pull request they list (later commits are not released yet; earlier ones may predate the
    file). There, a listed PR has its category; an unlisted one is UNLISTED when the repository lists
    its user-facing changes (MIN_LISTED and MIN_LISTED_SHARE), else unknown. A commit an item links by itself
    is listed as a pull request is. Commits outside the stretch and commits that name no pull request and
    are not linked are unknown (None): nothing says whether they were released."""
    ordered = sorted(span, key=lambda c: c.committed_at)

    def category(c: Landed) -> Category | None:
        by_pr = notes.category(c.pr)
        return by_pr if by_pr is not None or not notes.commits else notes.commit_category(c.sha)

    listed_at = [i for i, c in enumerate(ordered) if category(c) is not None]
    answers: dict[str, str | None] = {c.sha: None for c in ordered}
    if not listed_at:
        return NotesKey(answers, False, 0, 0, None, None)
    first, last = listed_at[0], listed_at[-1]
    stretch = [c for c in ordered[first : last + 1] if c.pr is not None or category(c) is not None]
    listed = len(listed_at)
    lists = listed >= MIN_LISTED and listed / len(stretch) >= MIN_LISTED_SHARE
    for c in stretch:
        found = category(c)
        answers[c.sha] = found.value if found else (UNLISTED if lists else None)
    return NotesKey(
        answers, lists, listed, len(stretch), ordered[first].committed_at, ordered[last].committed_at
    )


def _references(line: str, definitions: dict[str, int | None], home: str | None) -> list[int]:
    found: list[int] = []

    def own(m: re.Match[str]) -> int | None:
        return int(m.group(3)) if home is None or f"{m.group(1)}/{m.group(2)}".lower() == home else None

    def link(m: re.Match[str]) -> str:
        # "[#12](…/other/repo/pull/12)": the link's target decides, not its text.
        url = PR_URL.search(m.group(0))
        if url is None:
            return m.group(0)
        number = own(url)
        if number is not None:
            found.append(number)
        return " "

    rest = _LINK.sub(link, line)
    for m in PR_URL.finditer(rest):
        number = own(m)
        if number is not None:
            found.append(number)
    rest = PR_URL.sub(" ", rest)
    for m in _QUALIFIED.finditer(rest):
        if home is not None and m.group(1).lower() == home:
            found.append(int(m.group(2)))
    rest = _QUALIFIED.sub(" ", rest)
    found += [int(n) for n in _PLAIN.findall(rest)]
    found += [int(n) for listed in PR_ROLE.findall(rest) for n in _DIGITS.findall(listed)]
    for m in _LINK_REFERENCE.finditer(line):
        number = definitions.get((m.group(1) or m.group(2)).lower())
        if number is not None:
            found.append(number)
    return list(dict.fromkeys(found))


def _link_definitions(lines: list[str]) -> dict[str, int | None]:
    """[label]: URL lines whose URL is one of the notes' pull requests, by lower-case label."""
    out: dict[str, int | None] = {}
    for line in lines:
        m = _LINK_DEFINITION.match(line)
        if m:
            url = PR_URL.search(m.group(2))
            out[m.group(1).lower()] = int(url.group(3)) if url else None
    return out


def _home(text: str, definitions: dict[str, int | None], repo: str | None) -> str | None:
    """The repository the notes' links belong to: the caller's when the links name it, else the one
    they name most often; None when they name none (every plain #N is then the notes' own)."""
    named = Counter(f"{m.group(1)}/{m.group(2)}".lower() for m in PR_URL.finditer(text))
    if not named:
        return None
    if repo and repo.lower() in named:
        return repo.lower()
    return named.most_common(1)[0][0]
