"""The follow-up radar: a day's reverts and fix-forwards of earlier commits, read from the stored links,
shown in the day's digest, noted on both commits' analyses, and flagged on the original's card where
we posted it (a one-line banner edited in, and a reply in that card's thread).

Banners (bot/delivery/banners.py) are idempotent and restart-safe like every post: each (message, follow-up) is
pending work (bot/delivery/outbox.py) recorded before it is tried and retried by the running service until it is done; the
edit and the reply are each recorded in the `radar_banners` table as soon as they are up, the edit checks
the message first and the reply is looked for by its key, so a crash or a lost answer between the
platform and the store never adds a banner or a reply twice. A message we can no longer edit (deleted,
too old, no permission) is recorded as skipped and the work given up; the digest never fails because of
it.
"""

from __future__ import annotations

import asyncio
import logging
import re
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from analysis.history.followups import FollowUpLink, find_links
from analysis.models import PR_IN_TITLE, Analysis, Commit, DayFollowUp, Digest, commit_ref
from analysis.render.followups import follow_up_note, original_note
from analysis.render.markdown import report_name
from analysis.titles import message_title
from bot.digest.history import sync_history
from bot.store.db import Store

log = logging.getLogger(__name__)


# --- the day's follow-ups ------------------------------------------------------------------------------


def day_followups(store: Store, digest: Digest) -> list[DayFollowUp]:
    """The stored links whose follow-up is one of the digest's commits, oldest original first per commit,
    in the digest's commit order."""
    by_sha = {c.sha: c for c in digest.commits}
    links = [
        link
        for link in store.followups_landed(digest.repo, digest.window_start, digest.window_end)
        if link.follow_up in by_sha
    ]
    order = {c.sha: i for i, c in enumerate(digest.commits)}
    links.sort(key=lambda link: (order[link.follow_up], link.original_at))
    return [_entry(store, digest, by_sha[link.follow_up], link) for link in links]


def attach_followups(store: Store, digest: Digest) -> Digest:
    """The digest with its Follow-ups, each follow-up's analysis saying what it follows up (and each
    original among the day's own commits saying it was followed up). The pipeline calls it after the
    links of the day are stored; the notes live in the digest record, not in the analysis cache."""
    digest.followups = day_followups(store, digest)
    tz = ZoneInfo(digest.timezone)
    for entry in digest.followups:
        sha = entry.follow_up.sha
        if sha in digest.analyses:
            digest.analyses[sha] = _with_note(digest.analyses[sha], follow_up_note(digest.lang, entry, tz))
    for commit in digest.commits:
        if commit.sha in digest.analyses:
            digest.analyses[commit.sha] = with_original_notes(
                store, digest.repo, digest.analyses[commit.sha], digest.lang, tz
            )
    return digest


def with_original_notes(store: Store, repo: str, analysis: Analysis, lang: str, tz: Any = None) -> Analysis:
    """An analysis that says which later commits reverted or fixed it forward, by what and when (for
    `digestbot analyze`, `/digest <sha>` and thread answers)."""
    for link in store.followups_of(repo, analysis.sha):
        title, ref = commit_title_ref(store, repo, link.follow_up)
        analysis = _with_note(analysis, original_note(lang, link, ref, title, tz))
    return analysis


FOLLOWUP_HORIZON_DAYS = 30  # how long after a commit `analyze` looks for what reverted or fixed it


async def learn_followups_of(
    source: Any, store: Store, branch: str, commit: Commit, day_start: datetime
) -> int:
    """Store the links from the commit to the later commits (within FOLLOWUP_HORIZON_DAYS) that revert or
    fix it, read from the branch's history: `digestbot analyze` of an old commit then says so even when
    no digest ever covered the later days. Best effort: a source without history, or failing, adds none.
    day_start: where analyze's ranking read of the history ended (the start of the commit's day in the
    digests' zone): the read starts there, so the stored range grows instead of being replaced."""

    since = commit.committed_at.astimezone(UTC)
    until = min(since + timedelta(days=FOLLOWUP_HORIZON_DAYS), datetime.now(UTC))
    try:
        if since >= until or not await sync_history(source, store, branch, day_start, until):
            return 0
    except Exception as exc:  # the analysis stands without it
        log.warning(
            "radar: cannot read the history after %s (%s: %s)", commit.short_sha, type(exc).__name__, exc
        )
        return 0
    # Mining a month of messages is CPU work: off the event loop, which serves chat in `digestbot run`.
    return await asyncio.to_thread(_store_followups_of, store, source.repo, branch, commit.sha, since, until)


def _store_followups_of(
    store: Store, repo: str, branch: str, sha: str, since: datetime, until: datetime
) -> int:
    past = store.history(repo, branch, since, until)
    links = [link for link in find_links(past) if link.original == sha]
    store.save_followups(repo, links)
    return len(links)


def _with_note(analysis: Analysis, note: str) -> Analysis:
    if note in analysis.notes:
        return analysis
    return analysis.model_copy(update={"notes": [note, *analysis.notes]})


def _entry(store: Store, digest: Digest, follow_up: Commit, link: FollowUpLink) -> DayFollowUp:
    original = store.get_commit(digest.repo, link.original)
    title, _ref = commit_title_ref(store, digest.repo, link.original)
    analysis = store.latest_analysis(digest.repo, link.original, digest.lang) or store.latest_analysis(
        digest.repo, link.original
    )
    return DayFollowUp(
        follow_up=follow_up,
        kind=link.kind,
        evidence=link.evidence,
        original_sha=link.original,
        original_title=title,
        original_at=link.original_at,
        original_url=original.url if original else _sibling_url(follow_up.url, link.original),
        original_pr=_pr_of(title),
        original_rank=analysis.importance if analysis else None,
        original_report=report_link(store, digest.repo, link.original, digest.lang),
    )


def commit_title_ref(store: Store, repo: str, sha: str) -> tuple[str, str]:
    """(title, "#N" or short sha) of a commit we know from the commits or the history table."""
    commit = store.get_commit(repo, sha)
    if commit is not None:
        return commit.title, commit_ref(commit)
    rows = store.query("SELECT message FROM history WHERE repo = ? AND sha = ? LIMIT 1", [repo, sha])
    title = message_title(rows[0]["message"])[0] if rows and rows[0]["message"] else sha[:7]
    pr = _pr_of(title)
    return title, f"#{pr}" if pr else sha[:7]


def _pr_of(title: str) -> int | None:
    m = PR_IN_TITLE.search(title)  # the rule Commit.pr_number uses
    return int(m.group(1)) if m else None


def _sibling_url(url: str | None, sha: str) -> str | None:
    """The original's web page, from the follow-up's (same repository, same host)."""
    if url and "/commit/" in url:
        return url.split("/commit/", 1)[0] + "/commit/" + sha
    return None


def report_link(store: Store, repo: str, sha: str, lang: str) -> str | None:
    """`<report file>#<anchor>` of the commit's section in the report of the day we digested it (the
    same name as the uploaded report, `report_name`, and the report's `c-<sha>` anchors), when we did."""
    rows = store.query(
        "SELECT day, lang FROM digests WHERE repo = ? AND EXISTS"
        " (SELECT 1 FROM json_each(digests.shas) WHERE value = ?) ORDER BY lang = ? DESC, day LIMIT 1",
        [repo, sha, lang],
    )
    if not rows:
        return None
    day, its_lang = rows[0]["day"], rows[0]["lang"]
    hex_sha = re.sub(r"[^0-9a-z]", "", sha.lower())
    return f"{report_name(repo, day, its_lang)}#c-{hex_sha[:12]}"


# --- banners on the original's card ----------------------------------------------------------------------
