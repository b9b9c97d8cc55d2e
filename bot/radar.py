"""The follow-up radar: a day's reverts and fix-forwards of earlier commits, read from the stored links,
shown in the day's digest, noted on both commits' analyses, and flagged on the original's card where
we posted it (a one-line banner edited in, and a reply in that card's thread).

Banners are idempotent and restart-safe like every post: each (message, follow-up) is pending work
(bot/outbox.py) recorded before it is tried and retried by the running service until it is done; the
edit and the reply are each recorded in the `radar_banners` table as soon as they are up, the edit checks
the message first and the reply is looked for by its key, so a crash or a lost answer between the
platform and the store never adds a banner or a reply twice. A message we can no longer edit (deleted,
too old, no permission) is recorded as skipped and the work given up; the digest never fails because of
it.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from analysis.errors import ServiceError, Undeliverable
from analysis.history.followups import FollowUpLink
from analysis.models import PR_IN_TITLE, Analysis, Commit, DayFollowUp, Digest, commit_ref
from analysis.render.followups import banner, follow_up_note, original_note, word
from bot.store import Store

log = logging.getLogger(__name__)


class BannerEditor(Protocol):
    """What a chat adapter implements for the radar (beside bot.posting.Poster)."""

    platform: str

    async def add_banner(self, channel: str, where: str, message_id: str, text: str) -> bool:
        """Put `text` as the first line of the message (once: a message that has it is left alone).
        `where` is the channel or thread the message lives in. False when the message cannot be edited
        any more (deleted, too old, missing permission); other failures raise."""
        ...

    async def reply_in_thread(
        self, channel: str, thread: str, text: str, url: str | None = None, key: str | None = None
    ) -> str:
        """A plain reply in a thread, with a link to url when given; returns its id. With a key, a reply
        already in the thread under that key is found and not posted again."""
        ...


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


async def learn_followups_of(source: Any, store: Store, branch: str, commit: Commit) -> int:
    """Store the links from the commit to the later commits (within FOLLOWUP_HORIZON_DAYS) that revert or
    fix it, read from the branch's history: `digestbot analyze` of an old commit then says so even when
    no digest ever covered the later days. Best effort: a source without history, or failing, adds none."""
    from analysis.history.followups import find_links
    from bot.history import sync_history

    since = commit.committed_at.astimezone(UTC)
    until = min(since + timedelta(days=FOLLOWUP_HORIZON_DAYS), datetime.now(UTC))
    # From the start of its UTC day: the span analyze's ranking synced ends there, so the stored range
    # grows instead of being replaced.
    day_start = since.replace(hour=0, minute=0, second=0, microsecond=0)
    try:
        if since >= until or not await sync_history(source, store, branch, day_start, until):
            return 0
    except Exception as exc:  # the analysis stands without it
        log.warning(
            "radar: cannot read the history after %s (%s: %s)", commit.short_sha, type(exc).__name__, exc
        )
        return 0
    past = store.history(source.repo, branch, since, until)
    links = [link for link in find_links(past) if link.original == commit.sha]
    store.save_followups(source.repo, links)
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
    title = rows[0]["message"].strip().split("\n", 1)[0].strip() if rows and rows[0]["message"] else sha[:7]
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
    same names as bot.posting.report_filename and the report's `c-<sha>` anchors), when we did."""
    rows = store.query(
        "SELECT day, lang FROM digests WHERE repo = ? AND EXISTS"
        " (SELECT 1 FROM json_each(digests.shas) WHERE value = ?) ORDER BY lang = ? DESC, day LIMIT 1",
        [repo, sha, lang],
    )
    if not rows:
        return None
    day, its_lang = rows[0]["day"], rows[0]["lang"]
    hex_sha = re.sub(r"[^0-9a-z]", "", sha.lower())
    return f"digest-{repo.replace('/', '-')}-{day}.{its_lang}.md#c-{hex_sha[:12]}"


# --- banners on the original's card ----------------------------------------------------------------------


def banner_targets(store: Store, platform: str, channel: str, repo: str, sha: str) -> list[dict[str, Any]]:
    """Where the original shows in this channel: its card (a digest's or a standalone one), else the
    parent message of each digest that listed it (medium and low commits have no card of their own)."""
    cards = store.query(
        "SELECT * FROM posts WHERE platform = ? AND channel = ? AND item = ?"
        " AND (digest_key LIKE ? OR digest_key LIKE ?)",
        [platform, channel, f"card:{sha}", f"{repo}@%", f"card:{repo}@%"],
    )
    if cards:
        return cards
    keys = [
        r["key"]
        for r in store.query(
            "SELECT key FROM digests WHERE repo = ? AND EXISTS"
            " (SELECT 1 FROM json_each(digests.shas) WHERE value = ?)",
            [repo, sha],
        )
    ]
    if not keys:
        return []
    return store.query(
        "SELECT * FROM posts WHERE platform = ? AND channel = ? AND item = 'parent'"
        " AND digest_key IN (SELECT value FROM json_each(?))",
        [platform, channel, json.dumps(keys)],
    )


async def correct_originals(editor: Any, store: Store, channel: str, digest: Digest) -> int:
    """Banner every original of this digest's follow-ups that was posted in this channel: each (message,
    follow-up) is pending work (bot/outbox.py), recorded, tried now, and retried by the running service
    until done or the message can no longer be edited. Returns how many are done now. Never raises: the
    digest is posted whatever happens here."""
    from bot import outbox

    if not hasattr(editor, "add_banner") or not hasattr(editor, "reply_in_thread"):
        return 0
    try:
        entries = digest.followups or day_followups(store, digest)
    except Exception:  # a broken store row must not fail a post
        log.exception("radar: cannot read the follow-ups of %s %s", digest.repo, digest.day)
        return 0
    tz = ZoneInfo(digest.timezone)
    done = 0
    for entry in entries:
        text = banner(digest.lang, entry.kind, entry.follow_up_ref, entry.follow_up.committed_at, tz)
        for target in banner_targets(store, editor.platform, channel, digest.repo, entry.original_sha):
            message_id = str(target["message_id"])
            job = {
                "message_id": message_id,
                "where": channel if target["item"] == "parent" else str(target["thread_id"] or channel),
                "thread": str(target["thread_id"] or message_id),
                "banner": text,
                "reply": word(digest.lang, "reply", banner=text, title=entry.follow_up.title),
                "url": entry.follow_up.url,
                "follow_up": entry.follow_up.sha,
                "original": entry.original_sha,
            }
            key = f"radar:{editor.platform}:{channel}:{message_id}:{entry.follow_up.sha}"
            try:
                done += await outbox.submit(editor, store, "radar", channel, key, job) == "done"
            except Exception:  # the store itself failing: the digest still stands
                log.exception("radar: cannot record the banner of %s", entry.original_sha[:7])
    return done


async def apply_banner(editor: Any, store: Store, row: dict[str, Any], job: dict[str, Any]) -> None:
    """One banner: the edit (once: the message is checked first), then the reply in the card's thread
    (once: found by its key when it is already there), each recorded in `radar_banners` when done. A
    message that can no longer be edited is recorded as skipped and the work given up."""
    from bot.outbox import describe

    platform, channel = editor.platform, str(row["channel"])
    message_id, follow_up, original = job["message_id"], job["follow_up"], job["original"]
    done = store.banner_record(platform, channel, message_id, follow_up)
    if done is not None and done["state"] in ("replied", "skipped"):
        return
    if done is None:
        try:
            editable = await editor.add_banner(channel, job["where"], message_id, job["banner"])
        except Undeliverable:
            editable = False
        except Exception as exc:
            raise ServiceError(f"could not banner message {message_id} ({describe(exc)})") from exc
        if not editable:
            store.record_banner(platform, channel, message_id, follow_up, original, "skipped")
            raise Undeliverable(
                f"message {message_id} can no longer be edited: banner for {original[:7]} skipped"
            )
        store.record_banner(platform, channel, message_id, follow_up, original, "edited")
    try:
        reply_id = await editor.reply_in_thread(
            channel, job["thread"], job["reply"], job["url"], f"radar:{message_id}:{follow_up}"
        )
    except Undeliverable:
        raise
    except Exception as exc:
        raise ServiceError(
            f"could not reply in the thread of message {message_id} ({describe(exc)})"
        ) from exc
    store.record_banner(platform, channel, message_id, follow_up, original, "replied", reply_id)


def banners_on(store: Store, platform: str, channel: str, message_id: str) -> list[str]:
    """The banners put on a message (oldest first), for an edit that must keep them."""
    rows = store.query(
        "SELECT w.payload FROM pending_work w JOIN radar_banners b ON b.platform = w.platform"
        " AND b.channel = w.channel AND b.message_id = json_extract(w.payload, '$.message_id')"
        " AND b.follow_up = json_extract(w.payload, '$.follow_up')"
        " WHERE w.kind = 'radar' AND w.platform = ? AND w.channel = ? AND b.message_id = ?"
        " AND b.state IN ('edited', 'replied') ORDER BY w.created_at",
        [platform, channel, message_id],
    )
    return [json.loads(r["payload"])["banner"] for r in rows]
