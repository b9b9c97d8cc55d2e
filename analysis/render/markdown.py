"""The Markdown daily report (the format of the reports we replace, minus DESIGN.md §4's defects)
and the single-commit card.

Layout is fixed: `#` title, `##` contents and repositories, `###` stats and tiers, `####` commits;
fields are bold labels, never headings. Every anchor is an explicit ASCII `<a id>` (GitHub keeps it,
prefixed `user-content-`, and `#id` links still resolve), so no link depends on heading slugs.
All untrusted text (titles, authors, analysis) goes through `inline`/`cell`; nothing is ever cut.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from urllib.parse import quote, urlsplit
from zoneinfo import ZoneInfo

from analysis.labels import (
    change_type_label,
    check_lang,
    dimension_label,
    importance_label,
    join_notes,
    label,
    stats_lines,
    zone_name,
)
from analysis.models import INSIGHT_DIMENSIONS, Analysis, Commit, Digest, Importance
from analysis.render.followups import entry_parts
from analysis.render.followups import word as followup_word
from analysis.text import display_author, display_title, file_name_part, md_cell, md_inline, redact

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
TIERS = (Importance.HIGH, Importance.MEDIUM, Importance.LOW)
TIER_LABEL_KEYS = {Importance.HIGH: "tier_high", Importance.MEDIUM: "tier_medium", Importance.LOW: "tier_low"}

# Characters kept as they are in a link target; everything else (spaces, parentheses, brackets,
# quotes, '@', non-ASCII) is percent-encoded so it cannot end the link or smuggle a mention.
_URL_SAFE = "/:?#&=+$,;!'*%~"
_ANALYZER_ORDER = ("llm", "heuristic-fallback", "heuristic")


# --- text helpers shared with render_json and the tests -------------------------------------------


def inline(text: str) -> str:
    """Untrusted text as one safe line of Markdown."""
    return md_inline(redact(text))


def cell(text: str) -> str:
    """Untrusted text as one safe Markdown table cell."""
    return md_cell(redact(text))


def safe_url(url: str | None) -> str | None:
    """An http(s) URL safe inside `[text](url)`, or None when it is not one (javascript:, credentials…)."""
    if not url or not url.strip():
        return None
    text = url.strip()
    try:
        parts = urlsplit(text)
        unsafe = parts.scheme.lower() not in ("http", "https") or not parts.hostname
        unsafe = unsafe or parts.username is not None or parts.password is not None
    except ValueError:  # malformed netloc, e.g. an unbalanced IPv6 bracket
        return None
    return None if unsafe else quote(text, safe=_URL_SAFE)


def format_time(moment: datetime, tz: tzinfo | None = None) -> str:
    """`YYYY-MM-DD HH:MM:SS` in tz (the moment's own offset when tz is None)."""
    return (moment.astimezone(tz) if tz is not None else moment).strftime(TIME_FORMAT)


def utc_offset(moment: datetime) -> str:
    """`UTC+08:00` style offset of an aware datetime."""
    delta = moment.utcoffset()
    minutes = int(delta.total_seconds() // 60) if delta is not None else 0
    sign = "+" if minutes >= 0 else "-"
    hours, mins = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours:02d}:{mins:02d}"


def analyzer_name(analyzers: Iterable[str]) -> str:
    """One name for a set of analysers: "heuristic" alone, "llm+heuristic-fallback" when mixed
    (known ones in a fixed order, others after, sorted), "none" when nothing was analysed."""
    names = set(analyzers)
    ordered = [a for a in _ANALYZER_ORDER if a in names] + sorted(names - set(_ANALYZER_ORDER))
    return "+".join(ordered) if ordered else "none"


def report_name(repo: str, day: str, lang: str) -> str:
    """The file name a day's report is uploaded under (bot/delivery/posting.py) and linked to (the radar)."""
    return f"digest-{file_name_part(repo)}-{day}.{lang}.md"


def slugify(text: str) -> str:
    """ASCII slug for anchor ids: lower-case letters, digits and single dashes."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# --- the single-commit card -----------------------------------------------------------------------


def render_commit(
    commit: Commit, analysis: Analysis, lang: str, heading_level: int = 4, tz: tzinfo | None = None
) -> str:
    """One commit's card, fields chosen by its tier (DESIGN.md §3). Standalone use (`digestbot
    analyze`) passes another heading level; tz sets the zone of the commit time shown."""
    check_lang(lang)
    blocks = _card_blocks(commit, analysis, lang, heading_level, tz, anchor=None)
    if analysis.analyzer == "heuristic":
        blocks.append(f"> {label(lang, 'heuristic_note')}")
    return "\n\n".join(blocks) + "\n"


def _card_blocks(
    commit: Commit, analysis: Analysis, lang: str, level: int, tz: tzinfo | None, anchor: str | None
) -> list[str]:
    if not 1 <= level <= 6:
        raise ValueError(f"heading level must be 1..6, not {level}")
    if not same_commit(commit.sha, analysis.sha):
        raise ValueError(f"analysis {analysis.sha[:12]} does not belong to commit {commit.sha[:12]}")
    heading = "#" * level + " " + inline(display_title(commit))
    blocks = [f'<a id="{anchor}"></a>\n{heading}' if anchor else heading, _sha_line(commit, lang, tz)]
    blocks += [_field(lang, "change_type", change_type_label(lang, analysis.change_type))]
    blocks += [_field(lang, "importance", _importance_text(analysis, lang))]
    summary = inline(analysis.summary) or label(lang, "none_stated")
    if analysis.importance == Importance.LOW:
        blocks.append(_field(lang, "summary_low", summary))
    else:
        blocks.append(_field(lang, "summary", summary))
        blocks.append(_list_field(lang, "scope", analysis.scope))
        if analysis.importance == Importance.HIGH:
            blocks.append(_insights(lang, analysis.insights))
        blocks.append(_list_field(lang, "risks", analysis.risks))
        blocks.append(_list_field(lang, "recommendations", analysis.recommendations))
    notes = [inline(n) for n in analysis.notes if n.strip()]
    if notes:
        blocks.append(_field(lang, "notes", join_notes(lang, notes)))
    return blocks


def same_commit(commit_sha: str, analysis_sha: str) -> bool:
    # Tolerate a stored short SHA, but never pair a card with another commit's analysis.
    short, full = sorted((commit_sha.lower(), analysis_sha.lower()), key=len)
    return len(short) >= 7 and full.startswith(short)


def _sha_line(commit: Commit, lang: str, tz: tzinfo | None) -> str:
    shown = commit.committed_at.astimezone(tz) if tz is not None else commit.committed_at
    parts = [
        f"**SHA**: `{_hex(commit.sha)[:7]}`",
        f"{label(lang, 'col_author')} {inline(display_author(commit) or label(lang, 'unknown'))}",
        f"{label(lang, 'col_time')} {format_time(shown)} ({utc_offset(shown)})",
    ]
    url = safe_url(commit.url)
    if url:
        parts.append(f"🔗 [{label(lang, 'view_commit')}]({url})")
    return " | ".join(parts)


def _importance_text(analysis: Analysis, lang: str) -> str:
    text = importance_label(lang, analysis.importance)
    reason = inline(analysis.importance_reason)
    return f"{text} — {reason}" if reason else text


def _field(lang: str, key: str, value: str) -> str:
    return f"**{label(lang, key)}**{label(lang, 'field_sep')}{value}"


def _list_field(lang: str, key: str, items: list[str]) -> str:
    """A list field; an empty one says so instead of disappearing."""
    shown = [inline(i) for i in items if i.strip()]
    if not shown:
        return _field(lang, key, label(lang, "none_stated"))
    return _field(lang, key, "").rstrip() + "\n" + "\n".join(f"- {i}" for i in shown)


def _insights(lang: str, insights: dict[str, str]) -> str:
    """All six dimensions in a fixed order, so the table has the same shape in every card."""
    keys = [*INSIGHT_DIMENSIONS, *sorted(k for k in insights if k not in INSIGHT_DIMENSIONS)]
    rows = [f"| {label(lang, 'dimension')} | {label(lang, 'assessment')} |", "|------|------|"]
    for key in keys:
        text = insights.get(key, "")
        value = cell(text) if text.strip() else label(lang, "none_stated")
        rows.append(f"| {cell(dimension_label(lang, key))} | {value} |")
    return _field(lang, "insights", "").rstrip() + "\n\n" + "\n".join(rows)


def _hex(sha: str) -> str:
    return re.sub(r"[^0-9a-z]", "", sha.lower())


# --- the daily report -----------------------------------------------------------------------------


@dataclass
class _Repo:
    """One digest with its anchors and its commits grouped by tier, checked before any output."""

    digest: Digest
    tz: tzinfo
    slug: str
    commit_ids: dict[str, str] = field(default_factory=dict)
    tiers: dict[Importance, list[tuple[Commit, Analysis]]] = field(default_factory=dict)

    def anchor(self, kind: str) -> str:
        return f"{kind}-{self.slug}"


def render_report(digests: list[Digest], lang: str) -> str:
    """The daily report: one section per digest (repository), each commit in the table and in
    exactly one tier section. Raises ValueError when a commit has no analysis."""
    check_lang(lang)
    if not digests:
        raise ValueError("render_report needs at least one digest")
    repos = _plan(digests)
    shared_meta = _shares_window(digests)
    blocks = [f"# {label(lang, 'report_title', date=_title_date(digests))}"]
    if shared_meta:
        blocks.append(_meta_line(digests, lang))
    blocks.append(_toc(repos, lang))
    for repo in repos:
        blocks += _repo_blocks(repo, lang, with_meta=not shared_meta)
    return "\n\n".join(blocks) + "\n"


def _plan(digests: list[Digest]) -> list[_Repo]:
    used_slugs: set[str] = set()
    used_ids: set[str] = set()
    repos = []
    for digest in digests:
        repo = _Repo(digest, ZoneInfo(digest.timezone), _unique(slugify(digest.repo) or "repo", used_slugs))
        repo.tiers = {tier: [] for tier in TIERS}
        for commit in digest.commits:
            if commit.sha in repo.commit_ids:
                raise ValueError(f"{digest.repo}: commit {commit.sha[:12]} listed twice")
            analysis = digest.analyses.get(commit.sha)
            if analysis is None:
                raise ValueError(f"{digest.repo}: commit {commit.sha[:12]} has no analysis")
            repo.commit_ids[commit.sha] = _unique(f"c-{_hex(commit.sha)[:12]}", used_ids)
            repo.tiers[analysis.importance].append((commit, analysis))
        repos.append(repo)
    return repos


def _unique(base: str, used: set[str]) -> str:
    """base, or base-2, base-3 … when taken (two repos slugging alike, a fork's shared commits)."""
    candidate, n = base, 2
    while candidate in used:
        candidate, n = f"{base}-{n}", n + 1
    used.add(candidate)
    return candidate


def _shares_window(digests: list[Digest]) -> bool:
    first = digests[0]
    key = (first.timezone, first.window_start, first.window_end)
    return all((d.timezone, d.window_start, d.window_end) == key for d in digests)


def _title_date(digests: list[Digest]) -> str:
    return ", ".join(sorted({d.day.isoformat() for d in digests}))


def _meta_line(digests: list[Digest], lang: str) -> str:
    """Window, zone, analyser and generation time of the digests (which share one window)."""
    first = digests[0]
    tz = ZoneInfo(first.timezone)
    start, end = first.window_start.astimezone(tz), first.window_end.astimezone(tz)
    offsets = dict.fromkeys((utc_offset(start), utc_offset(end)))  # two on a daylight-saving day
    # a fixed offset's zone is named by its offset ("UTC+08:00"), said once
    zone_shown = (
        f"{inline(first.timezone)} ({' / '.join(offsets)})"
        if zone_name(first.timezone) == first.timezone
        else zone_name(first.timezone)
    )
    analyzers = analyzer_name(d.analyses[c.sha].analyzer for d in digests for c in d.commits)
    shown = inline(analyzers) if analyzers != "none" else label(lang, "analyzer_none")
    generated = max(d.generated_at for d in digests).astimezone(tz)
    line = (
        f"> {label(lang, 'window')} {start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M} "
        f"{zone_shown} · "
        f"{label(lang, 'analyzer')} {shown} · {label(lang, 'generated')} {format_time(generated)}"
    )
    if "heuristic" in analyzers.split("+"):
        line += f"\n>\n> {label(lang, 'heuristic_note')}"  # once per report, not on every card
    return line


def _tier_heading(lang: str, tier: Importance, count: int) -> str:
    return f"{label(lang, TIER_LABEL_KEYS[tier])} ({count})"


def _toc(repos: list[_Repo], lang: str) -> str:
    lines = [f"## {label(lang, 'toc')}", ""]
    for repo in repos:
        lines.append(f"- [{inline(repo.digest.repo)}](#{repo.anchor('repo')})")
        if repo.digest.followups:
            lines.append(f"  - [{followup_word(lang, 'section')}](#{repo.anchor('followups')})")
        lines.append(f"  - [{label(lang, 'stats')}](#{repo.anchor('stats')})")
        for tier in TIERS:
            entries = repo.tiers[tier]
            if not entries:
                continue
            lines.append(f"  - [{_tier_heading(lang, tier, len(entries))}](#{repo.anchor(tier.value)})")
            for commit, _ in entries:
                lines.append(f"    - [{inline(display_title(commit))}](#{repo.commit_ids[commit.sha]})")
    return "\n".join(lines)


def _repo_blocks(repo: _Repo, lang: str, with_meta: bool) -> list[str]:
    digest = repo.digest
    blocks = [f'<a id="{repo.anchor("repo")}"></a>\n## {inline(digest.repo)}']
    if with_meta:
        blocks.append(_meta_line([digest], lang))
    if digest.followups:  # the day opens with what it reverted or fixed of earlier days
        blocks += _followup_blocks(repo, lang)
    blocks.append(_commit_table(repo, lang) if digest.commits else label(lang, "no_commits"))
    counts = {tier.value: len(repo.tiers[tier]) for tier in TIERS}
    blocks.append(f'<a id="{repo.anchor("stats")}"></a>\n### {label(lang, "stats")}')
    lines = stats_lines(lang, {"total": len(digest.commits), **counts}, digest)
    blocks.append("\n>\n".join("> " + line for line in lines))
    for tier in TIERS:
        entries = repo.tiers[tier]
        if not entries:
            continue  # an empty tier has no section; the stats line still shows its 0
        blocks.append(
            f'<a id="{repo.anchor(tier.value)}"></a>\n### {_tier_heading(lang, tier, len(entries))}'
        )
        for commit, analysis in entries:
            blocks += _card_blocks(commit, analysis, lang, 4, repo.tz, anchor=repo.commit_ids[commit.sha])
            blocks.append("---")
    return blocks


def _followup_blocks(repo: _Repo, lang: str) -> list[str]:
    """The Follow-ups section: each of the day's commits that reverts or fixes an earlier one, linked to
    its card below, and the original with its date, the rank we gave it and its section of its day's
    report when we wrote one."""
    lines = []
    for entry in repo.digest.followups:
        parts = entry_parts(lang, entry, repo.tz)
        anchor = repo.commit_ids.get(entry.follow_up.sha)
        follow_up = f"**{inline(parts.follow_up_ref)}** {inline(parts.follow_up_title)}"
        if anchor:
            follow_up = f"[{follow_up}](#{anchor})"
        original = inline(parts.original_title)
        url = safe_url(entry.original_url)
        original = f"[{original}]({url})" if url else original
        line = f"- {parts.icon} {follow_up} — {inline(parts.verb)} {original} ({inline(parts.aside)})"
        if entry.original_report:  # a relative link: the earlier report sits beside this one
            line += f" · [{followup_word(lang, 'report')}]({quote(entry.original_report, safe='/#.-_')})"
        lines.append(line)
    heading = f'<a id="{repo.anchor("followups")}"></a>\n### {followup_word(lang, "section")}'
    return [heading, "\n".join(lines)]


def _commit_table(repo: _Repo, lang: str) -> str:
    rows = [
        f"| {label(lang, 'col_time')} | {label(lang, 'col_author')} | {label(lang, 'col_title')} |",
        "|----------|------|----------|",
    ]
    for commit in repo.digest.commits:
        author = display_author(commit) or label(lang, "unknown")
        when = format_time(commit.committed_at, repo.tz)
        rows.append(f"| {when} | {cell(author)} | {cell(display_title(commit))} |")
    return "\n".join(rows)
