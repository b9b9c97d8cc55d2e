"""A strict checker of a rendered daily report against the digests it was rendered from.

`check_report(markdown, digests, lang)` returns human-readable problems (empty list = OK). It checks
the structure the report promises (DESIGN.md §4, issue 2 item 6): table rows and tier sections agree
both ways, each commit sits in exactly one tier section, the stats line agrees with the sections and
the digest, every `(#id)` link resolves to a unique `<a id>`, fields carry their exact labels per
tier, heading levels are fixed, untrusted text appears whole and escaped, and nothing leaks
(trailers, e-mail addresses, live mentions, raw HTML, cut text, bad encoding).

Used by the renderer's tests and by any test that renders a real report (CLI, pipeline, LLM).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, timedelta, tzinfo
from zoneinfo import ZoneInfo

from analysis.labels import LANGS, change_type_label, dimension_label, importance_label, join_notes, label
from analysis.models import INSIGHT_DIMENSIONS, Analysis, Commit, Digest, Importance
from analysis.render.markdown import cell, format_time, inline, safe_url, utc_offset
from analysis.text import display_author, display_title

TIERS = (Importance.HIGH, Importance.MEDIUM, Importance.LOW)
TIER_KEYS = {Importance.HIGH: "tier_high", Importance.MEDIUM: "tier_medium", Importance.LOW: "tier_low"}
# The fields of each tier, in order (DESIGN.md §3); notes follow when the analysis has any.
FIELDS = {
    Importance.HIGH: (
        "change_type",
        "importance",
        "summary",
        "scope",
        "insights",
        "risks",
        "recommendations",
    ),
    Importance.MEDIUM: ("change_type", "importance", "summary", "scope", "risks", "recommendations"),
    Importance.LOW: ("change_type", "importance", "summary_low"),
}
LIST_FIELDS = ("scope", "risks", "recommendations")
FIELD_KEYS = ("change_type", "importance", "summary", "summary_low", "scope", "insights", "risks")
FIELD_KEYS += ("recommendations", "notes")

HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*$")
ANCHOR_LINE = re.compile(r'^<a id="([^"]*)"></a>$')
ANCHOR_ANY = re.compile(r'<a id="([^"]*)"></a>')
VALID_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
LINK_TARGET = re.compile(r"(?<!\\)\]\(([^)\s]*)\)")
TOC_ENTRY = re.compile(r"^( *)- \[(.*)\]\(#([^)\s]*)\)$")
FIELD_LINE = re.compile(r"^\*\*(.+?)\*\*(.*)$")
SHA_LINE = re.compile(r"^\*\*SHA\*\*: `([0-9a-f]{7,40})`")
EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b")
TRAILERS = re.compile(r"\b(Signed-off-by|Co-authored-by)\b", re.IGNORECASE)
MASS_MENTION = re.compile(r"@(everyone|here|channel)\b", re.IGNORECASE)
MENTION_SYNTAX = re.compile(r"<[!@#]")
RAW_HTML = re.compile(r"(?<!\\)<[A-Za-z/!?]")
MOJIBAKE = re.compile(r"ðŸ|â€|ï¼|\ufffd")
ELLIPSIS = re.compile(r"\.\.\.|…")


@dataclass
class _Heading:
    index: int  # line index
    level: int
    text: str
    anchor: str | None


@dataclass
class _Card:
    heading: _Heading
    lines: list[str]  # from the heading to the line before the next heading
    tier: Importance
    sha: str | None = None


@dataclass
class _Report:
    lines: list[str]
    headings: list[_Heading]
    problems: list[str] = field(default_factory=list)

    def add(self, problem: str) -> None:
        self.problems.append(problem)


def check_report(markdown: str | bytes, digests: list[Digest], lang: str) -> list[str]:
    """Every problem found in markdown (a report of digests in lang); [] when it is sound."""
    if lang not in LANGS:
        return [f"unknown language {lang!r}"]
    if isinstance(markdown, bytes):
        try:
            markdown = markdown.decode("utf-8")
        except UnicodeDecodeError as exc:
            return [f"not valid UTF-8: {exc}"]
    lines = markdown.split("\n")
    report = _Report(lines, _headings(lines))
    _check_text(report, markdown)
    _check_heading_levels(report, digests, lang)
    _check_anchors_and_links(report)
    _check_toc(report, lang)
    repo_headings = [h for h in report.headings if h.level == 2][1:]
    if len(repo_headings) != len(digests):
        report.add(f"{len(repo_headings)} repository sections for {len(digests)} digests")
    for heading, digest in zip(repo_headings, digests, strict=False):
        _check_repo(report, heading, digest, lang)
    _check_meta(report, digests, lang)
    _check_ellipsis(report, markdown, digests, lang)
    return report.problems


# --- whole-text checks ----------------------------------------------------------------------------


def _check_text(report: _Report, markdown: str) -> None:
    try:
        markdown.encode("utf-8")
    except UnicodeEncodeError as exc:
        report.add(f"cannot be encoded as UTF-8: {exc}")
    if not markdown.endswith("\n"):
        report.add("does not end with a newline")
    for number, line in enumerate(report.lines, 1):
        _check_line(report, number, line)


def _check_line(report: _Report, number: int, line: str) -> None:
    where = f"line {number}"
    if line.endswith("  "):
        report.add(f"{where}: relies on trailing double spaces for a line break")
    if MOJIBAKE.search(line):
        report.add(f"{where}: mojibake or replacement character: {line[:80]!r}")
    if TRAILERS.search(line):
        report.add(f"{where}: commit trailer copied: {line[:80]!r}")
    if match := EMAIL.search(line):
        report.add(f"{where}: e-mail address {match.group(0)!r}")
    if match := MASS_MENTION.search(line):
        report.add(f"{where}: live mass mention {match.group(0)!r}")
    if match := MENTION_SYNTAX.search(line):
        report.add(f"{where}: live chat mention syntax {line[match.start() : match.start() + 12]!r}")
    # Table cells are parsed one by one, so code spans never cross a cell border.
    parts = _split_row(line) if line.startswith("|") else [line]
    for bare in (ANCHOR_ANY.sub("", _without_code_spans(part)) for part in parts):
        if match := RAW_HTML.search(bare):
            report.add(f"{where}: raw HTML {bare[match.start() : match.start() + 20]!r}")
    for target in LINK_TARGET.findall(line):
        if not target.startswith(("#", "https://", "http://")):
            report.add(f"{where}: link to {target!r} (only #anchors and http(s) allowed)")


def _without_code_spans(text: str) -> str:
    """text minus its code spans, found as CommonMark does: a backslash escapes the next character
    outside code; a run of N backticks opens a span only if a run of exactly N closes it."""
    out: list[str] = []
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char == "\\":
            out.append(text[pos : pos + 2])
            pos += 2
        elif char == "`":
            run = len(text[pos:]) - len(text[pos:].lstrip("`"))
            closer = re.compile(rf"(?<!`)`{{{run}}}(?!`)").search(text, pos + run)
            if closer:
                pos = closer.end()
            else:
                out.append("`" * run)
                pos += run
        else:
            out.append(char)
            pos += 1
    return "".join(out)


def _check_ellipsis(report: _Report, markdown: str, digests: list[Digest], lang: str) -> None:
    """Untrusted text is verified whole elsewhere; here, any ellipsis left once every source text is
    taken out was added by the renderer, i.e. something was cut."""
    sources = {s for d in digests for s in _rendered_sources(d, lang) if ELLIPSIS.search(s)}
    rest = markdown
    for text in sorted(sources, key=len, reverse=True):
        rest = rest.replace(text, "")
    for line in rest.split("\n"):
        if ELLIPSIS.search(line):
            report.add(f"text cut with an ellipsis: {line[:100]!r}")


def _rendered_sources(digest: Digest, lang: str) -> list[str]:
    out = [inline(digest.repo)]
    for commit in digest.commits:
        out += [inline(display_title(commit)), cell(display_title(commit))]
        out += [inline(display_author(commit)), cell(display_author(commit))]
        analysis = digest.analyses.get(commit.sha)
        if analysis is None:
            continue
        texts = [analysis.importance_reason, analysis.summary, *analysis.notes]
        texts += [*analysis.scope, *analysis.risks, *analysis.recommendations]
        out += [inline(t) for t in texts]
        out += [cell(t) for t in analysis.insights.values()]
    return out


# --- headings, anchors, links, contents -----------------------------------------------------------


def _headings(lines: list[str]) -> list[_Heading]:
    found = []
    for index, line in enumerate(lines):
        if match := HEADING.match(line):
            above = ANCHOR_LINE.match(lines[index - 1]) if index else None
            found.append(
                _Heading(index, len(match.group(1)), match.group(2), above.group(1) if above else None)
            )
    return found


def _check_heading_levels(report: _Report, digests: list[Digest], lang: str) -> None:
    headings = report.headings
    field_labels = {label(lang, k) for k in FIELD_KEYS}
    for h in headings:
        if h.level > 4:
            report.add(f"line {h.index + 1}: heading level {h.level} is not allowed: {h.text!r}")
        if any(h.text.lstrip("*").startswith(lbl) for lbl in field_labels):
            report.add(f"line {h.index + 1}: field rendered as a heading: {h.text!r}")
    if not headings or headings[0].index != 0 or headings[0].level != 1:
        report.add("the report does not start with a level-1 title")
    if sum(h.level == 1 for h in headings) != 1:
        report.add(f"{sum(h.level == 1 for h in headings)} level-1 headings (expected 1)")
    dates = ", ".join(sorted({d.day.isoformat() for d in digests}))
    if headings and headings[0].text != label(lang, "report_title", date=dates):
        report.add(f"title {headings[0].text!r} is not {label(lang, 'report_title', date=dates)!r}")
    level2 = [h for h in headings if h.level == 2]
    if not level2 or level2[0].text != label(lang, "toc"):
        report.add("the first level-2 heading is not the table of contents")
    parent = 1
    for h in headings[1:]:
        if h.level > parent + 1:
            report.add(f"line {h.index + 1}: level-{h.level} heading under level {parent}: {h.text!r}")
        parent = h.level


def _check_anchors_and_links(report: _Report) -> None:
    ids: dict[str, int] = {}
    for number, line in enumerate(report.lines, 1):
        for anchor in ANCHOR_ANY.findall(line):
            if anchor in ids:
                report.add(f"line {number}: duplicate id {anchor!r} (first on line {ids[anchor]})")
            ids.setdefault(anchor, number)
            if not VALID_ID.match(anchor):
                report.add(f"line {number}: id {anchor!r} is not a lower-case ASCII slug")
    for number, line in enumerate(report.lines, 1):
        for target in LINK_TARGET.findall(line):
            if target.startswith("#") and target[1:] not in ids:
                report.add(f"line {number}: dead link {target!r}")
    for h in report.headings:
        if h.level >= 2 and h.anchor is None and h.text != _toc_text(report):
            report.add(f"line {h.index + 1}: heading without an <a id> anchor: {h.text!r}")


def _toc_text(report: _Report) -> str | None:
    level2 = [h for h in report.headings if h.level == 2]
    return level2[0].text if level2 else None


def _check_toc(report: _Report, lang: str) -> None:
    """Every anchored heading has exactly one contents entry with its exact text, at its depth."""
    toc = [h for h in report.headings if h.level == 2 and h.text == label(lang, "toc")]
    if not toc:
        report.add("no table of contents")
        return
    entries: dict[str, tuple[int, str]] = {}
    for line in report.lines[toc[0].index + 1 : _next_heading_line(report, toc[0])]:
        if not line.strip() or ANCHOR_LINE.match(line):  # the next section's anchor
            continue
        match = TOC_ENTRY.match(line)
        if not match:
            report.add(f"contents line is not an entry: {line[:80]!r}")
            continue
        indent, text, target = match.groups()
        if target in entries:
            report.add(f"contents lists #{target} twice")
        entries[target] = (len(indent), text)
    for h in report.headings:
        if h.anchor is None or h.level < 2:
            continue
        entry = entries.pop(h.anchor, None)
        if entry is None:
            report.add(f"heading {h.text!r} (#{h.anchor}) is missing from the contents")
        elif entry[1] != h.text:
            report.add(f"contents entry {entry[1]!r} differs from its heading {h.text!r}")
        elif entry[0] != 2 * (h.level - 2):
            report.add(f"contents entry {entry[1]!r} indented {entry[0]}, expected {2 * (h.level - 2)}")
    for target, (_, text) in entries.items():
        report.add(f"contents entry {text!r} (#{target}) points to no heading")


def _next_heading_line(report: _Report, heading: _Heading, max_level: int = 6) -> int:
    for h in report.headings:
        if h.index > heading.index and h.level <= max_level:
            return h.index
    return len(report.lines)


# --- one repository section -----------------------------------------------------------------------


def _check_repo(report: _Report, heading: _Heading, digest: Digest, lang: str) -> None:
    name = digest.repo
    if heading.text != inline(name):
        report.add(f"repository heading {heading.text!r} is not {inline(name)!r}")
    end = _next_heading_line(report, heading, max_level=2)
    inner = [h for h in report.headings if heading.index < h.index < end]
    stats = [h for h in inner if h.level == 3 and h.text == label(lang, "stats")]
    if len(stats) != 1:
        report.add(f"{name}: {len(stats)} stats sections (expected 1)")
    first_sub = inner[0].index if inner else end
    _check_table(report, report.lines[heading.index + 1 : first_sub], digest, lang)
    cards, tier_counts = _cards(report, inner, end, digest, lang)
    tz = ZoneInfo(digest.timezone)
    _check_placement(report, cards, digest)
    for card in cards:
        commit = _commit_of(card, digest)
        analysis = digest.analyses.get(commit.sha) if commit else None
        if commit and analysis:
            _check_card(report, card, commit, analysis, lang, tz)
    if stats:
        _check_stats(report, stats[0], digest, lang, tier_counts)


def _check_table(report: _Report, block: list[str], digest: Digest, lang: str) -> None:
    """The commit table (or the "no commits" line) between the repository heading and its stats."""
    rows = [line for line in block if line.startswith("|")]
    name = digest.repo
    if not digest.commits:
        if rows:
            report.add(f"{name}: a commit table on a day without commits")
        if label(lang, "no_commits") not in block:
            report.add(f"{name}: empty day without the {label(lang, 'no_commits')!r} line")
        return
    header = f"| {label(lang, 'col_time')} | {label(lang, 'col_author')} | {label(lang, 'col_title')} |"
    if len(rows) < 2 or rows[0] != header or not re.match(r"^\|(\s*:?-+:?\s*\|){3}$", rows[1]):
        report.add(f"{name}: commit table header missing or malformed")
        return
    body = rows[2:]
    if len(body) != len(digest.commits):
        report.add(f"{name}: table has {len(body)} rows, the digest {len(digest.commits)} commits")
    tz = ZoneInfo(digest.timezone)
    titles = {cell(display_title(c)) for c in digest.commits}
    for row in body:
        cells = _split_row(row)
        if len(cells) != 3:
            report.add(f"{name}: table row with {len(cells)} cells: {row[:80]!r}")
        elif cells[2] not in titles:
            report.add(f"{name}: table row {cells[2][:60]!r} has no commit and no tier section")
    for commit, row in zip(digest.commits, body, strict=False):
        author = display_author(commit) or label(lang, "unknown")
        expected = [format_time(commit.committed_at, tz), cell(author), cell(display_title(commit))]
        if _split_row(row) != expected:
            report.add(f"{name}: table row {row[:80]!r} should read {' | '.join(expected)[:80]!r}")


def _split_row(row: str) -> list[str]:
    """Cells of a table row the way GitHub splits it: on pipes not escaped by a backslash."""
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [c.strip() for c in re.split(r"(?<!\\)\|", inner)]


def _cards(
    report: _Report, inner: list[_Heading], end: int, digest: Digest, lang: str
) -> tuple[list[_Card], dict[Importance, int]]:
    """Cards by tier section, checking each tier heading's count and order; counts per tier."""
    patterns = {t: re.compile(re.escape(label(lang, TIER_KEYS[t])) + r" \((\d+)\)$") for t in TIERS}
    cards: list[_Card] = []
    counts = dict.fromkeys(TIERS, 0)
    tier: Importance | None = None
    seen: list[Importance] = []
    for pos, h in enumerate(inner):
        stop = inner[pos + 1].index if pos + 1 < len(inner) else end
        if h.level == 3:
            tier = next((t for t, p in patterns.items() if p.match(h.text)), None)
            if tier is None and h.text != label(lang, "stats"):
                report.add(f"{digest.repo}: unexpected section {h.text!r}")
            if tier is not None:
                seen.append(tier)
                _check_tier_heading(report, h, tier, patterns[tier], inner[pos + 1 :], digest)
        elif h.level == 4:
            if tier is None:
                report.add(f"{digest.repo}: commit {h.text!r} outside a tier section")
                continue
            card = _Card(h, report.lines[h.index : stop], tier)
            sha_lines = [SHA_LINE.match(line) for line in card.lines]
            card.sha = next((m.group(1) for m in sha_lines if m), None)
            cards.append(card)
            counts[tier] += 1
    if seen != sorted(seen, key=lambda t: t.rank) or len(seen) != len(set(seen)):
        report.add(f"{digest.repo}: tier sections out of order or repeated: {[t.value for t in seen]}")
    return cards, counts


def _check_tier_heading(
    report: _Report,
    h: _Heading,
    tier: Importance,
    pattern: re.Pattern[str],
    rest: list[_Heading],
    digest: Digest,
) -> None:
    match = pattern.match(h.text)
    assert match is not None
    shown = int(match.group(1))
    below = 0
    for other in rest:
        if other.level < 4:
            break
        below += 1
    expected = sum(1 for c in digest.commits if _tier_of(digest, c) == tier)
    if shown != below or shown != expected:
        report.add(f"{digest.repo}: section {h.text!r} holds {below} commits, the digest has {expected}")
    if shown == 0:
        report.add(f"{digest.repo}: empty tier section {h.text!r} should be omitted")


def _tier_of(digest: Digest, commit: Commit) -> Importance | None:
    analysis = digest.analyses.get(commit.sha)
    return analysis.importance if analysis else None


def _commit_of(card: _Card, digest: Digest) -> Commit | None:
    if card.sha is None:
        return None
    matches = [c for c in digest.commits if c.sha.startswith(card.sha)]
    return matches[0] if len(matches) == 1 else None


def _check_placement(report: _Report, cards: list[_Card], digest: Digest) -> None:
    """Each digest commit in exactly one tier section, the right one, in digest order."""
    name = digest.repo
    for card in cards:
        if card.sha is None:
            report.add(f"{name}: card {card.heading.text!r} has no SHA line")
        elif _commit_of(card, digest) is None:
            report.add(f"{name}: card {card.heading.text!r} ({card.sha}) is no commit of the digest")
    for commit in digest.commits:
        mine = [c for c in cards if c.sha and commit.sha.startswith(c.sha)]
        if len(mine) != 1:
            report.add(f"{name}: commit {commit.short_sha} appears in {len(mine)} tier sections (expected 1)")
            continue
        if mine[0].tier != _tier_of(digest, commit):
            report.add(f"{name}: commit {commit.short_sha} is in the {mine[0].tier.value} section")
    for tier in TIERS:
        shown = [c.sha[:7] for c in cards if c.tier == tier and c.sha]
        wanted = [c.short_sha for c in digest.commits if _tier_of(digest, c) == tier]
        # Only reorderings here: missing or extra commits are reported above.
        if shown != wanted and sorted(shown) == sorted(wanted):
            report.add(f"{name}: {tier.value} commits are not in digest order")


def _check_stats(
    report: _Report, heading: _Heading, digest: Digest, lang: str, sections: dict[Importance, int]
) -> None:
    following = [
        line for line in report.lines[heading.index + 1 : _next_heading_line(report, heading)] if line
    ]
    template = label(lang, "stats_line")
    text = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>\\d+)", re.escape(template))
    pattern = re.compile("^> " + text.replace("commits", "commits?") + "$")  # "1 commit today" in English
    match = pattern.match(following[0]) if following else None
    if match is None:
        report.add(f"{digest.repo}: stats line missing or malformed: {following[:1]}")
        return
    shown = {k: int(v) for k, v in match.groupdict().items()}
    expected = {t.value: sum(1 for c in digest.commits if _tier_of(digest, c) == t) for t in TIERS}
    expected["total"] = len(digest.commits)
    if shown != expected:
        report.add(f"{digest.repo}: stats line says {shown}, the digest has {expected}")
    in_sections = {t.value: sections[t] for t in TIERS}
    if {k: shown[k] for k in in_sections} != in_sections or shown["total"] != sum(in_sections.values()):
        report.add(f"{digest.repo}: stats line says {shown}, the sections hold {in_sections}")
    filtered = label(lang, "filtered_line", n=digest.filtered_out)
    stated = any(line == "> " + filtered for line in following[1:3])
    if digest.filtered_out and not stated:
        report.add(
            f"{digest.repo}: {digest.filtered_out} filtered-out commit(s) not stated under the stats line"
        )
    said = [line for line in following[1:5] if line.startswith("> ⚠️")]
    stale = None
    if digest.clone_newest is not None:
        newest = digest.clone_newest.astimezone(ZoneInfo(digest.timezone))
        stale = "> " + label(lang, "stale_line", at=f"{newest:%Y-%m-%d %H:%M} ({utc_offset(newest)})")
        if stale not in said:
            report.add(f"{digest.repo}: the clone's newest commit ({newest}) not stated under the stats line")
    said = [line for line in said if line != stale]
    if digest.history_start is None:
        if said:
            report.add(f"{digest.repo}: a cut in the source's history stated, the digest has none: {said[0]}")
        return
    at = digest.history_start.astimezone(ZoneInfo(digest.timezone))
    since = (digest.window_start.astimezone(UTC) - timedelta(days=1)).date()
    shallow = label(lang, "shallow_line", at=f"{at:%Y-%m-%d %H:%M} ({utc_offset(at)})", since=f"{since}")
    if ("> " + shallow) not in said:
        report.add(
            f"{digest.repo}: history starting at {at} (a shallow clone) not stated under the stats line"
        )


# --- one commit card ------------------------------------------------------------------------------


def _check_card(
    report: _Report, card: _Card, commit: Commit, analysis: Analysis, lang: str, tz: tzinfo
) -> None:
    where = f"card {commit.short_sha}"
    if card.heading.text != inline(display_title(commit)):
        report.add(f"{where}: heading {card.heading.text!r} is not the full title")
    _check_sha_line(report, card, commit, lang, tz)
    fields = _fields(card.lines)
    wanted = [label(lang, k) for k in FIELDS[analysis.importance]]
    if any(n.strip() for n in analysis.notes):
        wanted.append(label(lang, "notes"))
    if [name for name, _, _ in fields] != wanted:
        report.add(f"{where}: fields {[n for n, _, _ in fields]} should be {wanted}")
    by_label = {name: (value, after) for name, value, after in fields}
    for key in [*FIELDS[analysis.importance], "notes"]:
        if label(lang, key) in by_label:
            value, after = by_label[label(lang, key)]
            _check_value(report, where, key, value, after, analysis, lang)
    for pos, line in enumerate(card.lines):
        if FIELD_LINE.match(line) and pos > 0 and card.lines[pos - 1].strip():
            report.add(f"{where}: no blank line before {line[:40]!r}")


def _check_sha_line(report: _Report, card: _Card, commit: Commit, lang: str, tz: tzinfo) -> None:
    line = next((line for line in card.lines if SHA_LINE.match(line)), "")
    where = f"card {commit.short_sha}"
    if f"`{commit.short_sha}`" not in line:
        report.add(f"{where}: SHA line does not show {commit.short_sha}")
    if format_time(commit.committed_at, tz) not in line:
        report.add(f"{where}: SHA line lacks the commit time in {tz}")
    url = safe_url(commit.url)
    link = f"[{label(lang, 'view_commit')}]({url})"
    if url and link not in line:
        report.add(f"{where}: SHA line lacks the link {link!r}")
    if not url and "](" in line:
        report.add(f"{where}: a link although the commit has no safe URL")


def _fields(lines: list[str]) -> list[tuple[str, str, list[str]]]:
    """(label, value after the separator, the lines up to the next field) of each bold field."""
    found: list[tuple[str, str, list[str]]] = []
    for pos, line in enumerate(lines):
        match = FIELD_LINE.match(line)
        if not match or SHA_LINE.match(line):
            continue
        after = []
        for nxt in lines[pos + 1 :]:
            if FIELD_LINE.match(nxt) or nxt.strip() == "---":
                break
            after.append(nxt)
        found.append((match.group(1), match.group(2), after))
    return found


def _check_value(
    report: _Report, where: str, key: str, value: str, after: list[str], analysis: Analysis, lang: str
) -> None:
    sep = label(lang, "field_sep")
    if not value.startswith(sep.rstrip()):
        report.add(f"{where}: {label(lang, key)} not followed by {sep!r}")
        return
    shown = value[len(sep) :] if value.startswith(sep) else value[len(sep.rstrip()) :]
    expected: str | None = None
    if key == "change_type":
        expected = change_type_label(lang, analysis.change_type)
    elif key == "importance":
        reason = inline(analysis.importance_reason)
        expected = importance_label(lang, analysis.importance) + (f" — {reason}" if reason else "")
    elif key in ("summary", "summary_low"):
        expected = inline(analysis.summary) or label(lang, "none_stated")
    elif key == "notes":
        expected = join_notes(lang, [inline(n) for n in analysis.notes if n.strip()])
    elif key in LIST_FIELDS:
        _check_list(report, where, key, shown, after, getattr(analysis, key), lang)
    elif key == "insights":
        _check_insights(report, where, shown, after, analysis, lang)
    if expected is not None and shown != expected:
        report.add(f"{where}: {label(lang, key)} reads {shown[:60]!r}, expected {expected[:60]!r}")


def _check_list(
    report: _Report, where: str, key: str, shown: str, after: list[str], items: list[str], lang: str
) -> None:
    wanted = [f"- {inline(i)}" for i in items if i.strip()]
    got = [line for line in after if line.strip()]
    if not wanted and (shown != label(lang, "none_stated") or got):
        report.add(f"{where}: empty {label(lang, key)} should say {label(lang, 'none_stated')!r}")
    elif wanted and (shown or got != wanted):
        report.add(f"{where}: {label(lang, key)} items {got[:3]} should be {wanted[:3]}")


def _check_insights(
    report: _Report, where: str, shown: str, after: list[str], analysis: Analysis, lang: str
) -> None:
    rows = [line for line in after if line.startswith("|")]
    if shown or len(rows) < 2 or rows[0] != f"| {label(lang, 'dimension')} | {label(lang, 'assessment')} |":
        report.add(f"{where}: insights table missing or malformed")
        return
    got = [_split_row(r) for r in rows[2:]]
    for dim in INSIGHT_DIMENSIONS:
        text = analysis.insights.get(dim, "")
        want = [cell(dimension_label(lang, dim)), cell(text) if text.strip() else label(lang, "none_stated")]
        if want not in got:
            report.add(f"{where}: insights row for {dim} should read {' | '.join(want)[:80]!r}")


# --- report header --------------------------------------------------------------------------------


def _check_meta(report: _Report, digests: list[Digest], lang: str) -> None:
    """Each repository's window is stated: once under the title, or in each section."""
    metas = [line for line in report.lines if line.startswith(f"> {label(lang, 'window')} ")]
    if len(metas) not in (1, len(digests)) or not metas:
        report.add(f"{len(metas)} window lines for {len(digests)} repositories")
    for digest in digests:
        tz = ZoneInfo(digest.timezone)
        start = f"{digest.window_start.astimezone(tz):%Y-%m-%d %H:%M}"
        if not any(start in m and inline(digest.timezone) in m for m in metas):
            report.add(f"{digest.repo}: window start {start} {digest.timezone} not stated")
