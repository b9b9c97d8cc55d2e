"""The store's schema as numbered migrations, applied in order and tracked in PRAGMA user_version.

A database is brought up to date by running the ones it lacks. The store's health check (bot/store/health.py) runs them on an in-memory database to know
what a current database must hold.

Over 400 lines because it is the schema's whole history, one small migration after another, in one list."""

from __future__ import annotations

from collections.abc import Callable

import sqlite_utils


def _m1_initial(db: sqlite_utils.Database) -> None:
    db["commits"].create(
        {
            "repo": str,
            "sha": str,
            "message": str,
            "author": str,
            "author_login": str,
            "committed_at": str,
            "parents": str,
            "url": str,
            "additions": int,
            "deletions": int,
            "files_total": int,
            "fetched_at": str,
        },
        pk=("repo", "sha"),
    )
    db["files"].create(
        {
            "repo": str,
            "sha": str,
            "idx": int,
            "path": str,
            "status": str,
            "additions": int,
            "deletions": int,
            "patch": str,
            "previous_path": str,
        },
        pk=("repo", "sha", "idx"),
    )
    db["analyses"].create(
        {
            "repo": str,
            "sha": str,
            "model": str,
            "prompt_version": str,
            "lang": str,
            "importance": str,
            "change_type": str,
            "analyzer": str,
            "data": str,
            "created_at": str,
        },
        pk=("repo", "sha", "model", "prompt_version", "lang"),
    )
    db["digests"].create(
        {
            "id": int,
            "key": str,
            "repo": str,
            "branch": str,
            "day": str,
            "timezone": str,
            "lang": str,
            "window_start": str,
            "window_end": str,
            "generated_at": str,
            "shas": str,
            "stats": str,
            "analyzers": str,
            "analyses": str,
        },
        pk="id",
    )
    db["digests"].create_index(["key"], unique=True)
    db["http_cache"].create(
        {"url": str, "etag": str, "last_modified": str, "body": str, "fetched_at": str}, pk="url"
    )
    db["llm_calls"].create(
        {
            "id": int,
            "created_at": str,
            "model": str,
            "prompt_version": str,
            "purpose": str,
            "repo": str,
            "sha": str,
            "tokens_in": int,
            "tokens_out": int,
            "latency_ms": float,
            "finish_reason": str,
            "outcome": str,
            "error": str,
            "cost_usd": float,
        },
        pk="id",
    )
    db["llm_calls"].create_index(["created_at"])
    db["posts"].create(
        {
            "platform": str,
            "channel": str,
            "digest_key": str,
            "item": str,
            "message_id": str,
            "thread_id": str,
            "created_at": str,
        },
        pk=("platform", "channel", "digest_key", "item"),
    )
    db["posts"].create_index(["platform", "message_id"])
    db["posts"].create_index(["platform", "thread_id"])


def _m2_subscriptions(db: sqlite_utils.Database) -> None:
    # Subscriptions made from chat; the config file's live in the file and are merged at run time.
    db["subscriptions"].create(
        {
            "id": int,
            "platform": str,
            "channel": str,
            "repo": str,
            "branch": str,
            "schedule": str,
            "timezone": str,
            "lang": str,
            "created_at": str,
            "created_by": str,
        },
        pk="id",
    )
    db["subscriptions"].create_index(["platform", "channel", "repo"], unique=True)
    # One row per (subscription, day): the scheduler's idempotency and `digestbot status`.
    db["runs"].create(
        {
            "subscription": str,
            "day": str,
            "status": str,
            "started_at": str,
            "finished_at": str,
            "commits": int,
            "stats": str,
            "llm_calls": int,
            "tokens": int,
            "error": str,
        },
        pk=("subscription", "day"),
    )
    # When the service first saw each subscription: catch-up never reaches back before it.
    db["subscription_seen"].create({"name": str, "first_seen": str}, pk="name")


def _m3_leases(db: sqlite_utils.Database) -> None:
    # Who is posting a digest into a channel right now, across processes sharing the database.
    db["leases"].create(
        {"name": str, "holder": str, "host": str, "pid": int, "acquired_at": str, "expires_at": float},
        pk="name",
    )
    # Progress inside one posted item (a card split over several messages), part by part.
    db["post_parts"].create(
        {
            "platform": str,
            "channel": str,
            "digest_key": str,
            "item": str,
            "part": int,
            "message_id": str,
            "created_at": str,
        },
        pk=("platform", "channel", "digest_key", "item", "part"),
    )


def _m4_history(db: sqlite_utils.Database) -> None:
    # The branch's history as the judgment signals need it (messages and touched paths, no patches),
    # and the follow-up links mined from it (DESIGN.md §3b).
    db["history"].create(
        {"repo": str, "branch": str, "sha": str, "committed_at": str, "message": str, "files": str},
        pk=("repo", "branch", "sha"),
    )
    db["history"].create_index(["repo", "branch", "committed_at"])
    db["history_range"].create(
        {"repo": str, "branch": str, "oldest": str, "newest": str, "synced_at": str}, pk=("repo", "branch")
    )
    db["followups"].create(
        {
            "repo": str,
            "original": str,
            "follow_up": str,
            "kind": str,
            "evidence": str,
            "original_at": str,
            "follow_up_at": str,
        },
        pk=("repo", "original", "follow_up"),
    )
    db["followups"].create_index(["repo", "follow_up"])
    db["followups"].create_index(["repo", "follow_up_at"])


def _m7_ops(db: sqlite_utils.Database) -> None:
    # `digestbot logs --full`: what each LLM call was asked and answered. Idempotent, so its place in
    # the list does not matter.
    columns = db["llm_calls"].columns_dict
    for name in ("prompt", "reply"):
        if name not in columns:
            db["llm_calls"].add_column(name, str)
    db["llm_calls"].create_index(["sha"], if_not_exists=True)


def _m5_radar(db: sqlite_utils.Database) -> None:
    # Banners the radar put on an original's card (one per message and follow-up): edited, then replied,
    # or skipped when the message could no longer be edited. Weekly roll-ups posted go in `posts`.
    # Idempotent, like _m7_ops: branches merged in either order number their databases alike.
    if "radar_banners" in db.table_names():
        return
    db["radar_banners"].create(
        {
            "platform": str,
            "channel": str,
            "message_id": str,
            "follow_up": str,
            "original": str,
            "state": str,
            "reply_id": str,
            "updated_at": str,
        },
        pk=("platform", "channel", "message_id", "follow_up"),
    )


def _m_history_automated(db: sqlite_utils.Database) -> None:
    # Whether a bot account wrote each past commit: such commits are left out of the risk baseline
    # (analysis/history/index.py). Rows stored before are read as written by a person. Idempotent.
    if "automated" not in db["history"].columns_dict:
        db["history"].add_column("automated", int)


def _m_surface_cache(db: sqlite_utils.Database) -> None:
    # What each commit does to its users (analysis/surface/) and which of its paths ship, by parser
    # version: a second run reads no file again. Idempotent, like _m7_ops.
    if "surfaces" in db.table_names():
        return
    db["surfaces"].create(
        {"repo": str, "sha": str, "version": str, "surface": str, "shipped": str, "created_at": str},
        pk=("repo", "sha", "version"),
    )


def _m_thread_focus(db: sqlite_utils.Database) -> None:
    # The commit a thread's conversation is about: named in a question, kept for the later turns.
    # Idempotent, like _m7_ops, so its place after a merge does not matter.
    if "thread_focus" in db.table_names():
        return
    db["thread_focus"].create(
        {"platform": str, "thread_id": str, "repo": str, "sha": str, "updated_at": str},
        pk=("platform", "thread_id"),
    )


def _m_thread_listing(db: sqlite_utils.Database) -> None:
    # The commits a thread's last answer listed, in order: "the second one" in a later turn. Idempotent.
    if "thread_listing" in db.table_names():
        return
    db["thread_listing"].create(
        {"platform": str, "thread_id": str, "repo": str, "shas": str, "updated_at": str},
        pk=("platform", "thread_id"),
    )


def _m_pending_work(db: sqlite_utils.Database) -> None:
    # Work that must happen (a radar banner and its reply, a failure notice, a weekly roll-up in one
    # channel): recorded before it is tried, retried with backoff by the running service until done, or
    # given up when the platform says it can never succeed (bot/delivery/outbox.py). Idempotent, like _m7_ops.
    if "pending_work" in db.table_names():
        return
    db["pending_work"].create(
        {
            "key": str,
            "kind": str,
            "platform": str,
            "channel": str,
            "payload": str,
            "state": str,  # pending | done | gave_up
            "attempts": int,
            "next_at": float,  # Unix time of the next attempt
            "last_error": str,
            "created_at": str,
            "updated_at": str,
        },
        pk="key",
    )
    db["pending_work"].create_index(["state", "next_at"])


def _m_post_plans(db: sqlite_utils.Database) -> None:
    # The items a digest's parent announced when it was posted in a channel: later posts of the day add
    # only these (a posted day is what it was), unless a re-post edits the parent first. Idempotent.
    if "post_plans" in db.table_names():
        return
    db["post_plans"].create(
        {"platform": str, "channel": str, "digest_key": str, "items": str, "created_at": str},
        pk=("platform", "channel", "digest_key"),
    )


def _m_mined_spans(db: sqlite_utils.Database) -> None:
    # What mining a span of history for follow-up links found (analysis.history.followups.Mined), by the
    # span and a fingerprint of its commits: a run over the same span reads it instead of mining the
    # months again. Idempotent.
    if "mined_spans" in db.table_names():
        return
    db["mined_spans"].create(
        {
            "repo": str,
            "branch": str,
            "since": str,
            "until": str,
            "fingerprint": str,
            "links": str,
            "reverts": str,
            "mined_at": str,
        },
        pk=("repo", "branch", "since", "until"),
    )


def _m_span_scores(db: sqlite_utils.Database) -> None:
    # The sorted risk scores of a mined span's past commits (the distribution each day's commit is placed
    # in), kept beside the span with the rules that scored them: a card or an LLM day on a digested day's
    # span bisects them instead of scoring months of commits again (issue 21). Idempotent.
    columns = db["mined_spans"].columns_dict
    if "scores" not in columns:
        db["mined_spans"].add_column("scores", bytes)
    if "scores_version" not in columns:
        db["mined_spans"].add_column("scores_version", str)


def _m_span_index(db: sqlite_utils.Database) -> None:
    # The per-path counts of a mined span's history (analysis.history.index.HistoryIndex.state), kept with
    # its scores and their version: a card or an LLM day on a digested day's span reads them instead of
    # months of history before its first call (issue 21). Idempotent.
    if "index_state" not in db["mined_spans"].columns_dict:
        db["mined_spans"].add_column("index_state", str)


def _m_surface_prose(db: sqlite_utils.Database) -> None:
    # The touched Python files whose versions differ only in comments, docstrings and message text (issue 16),
    # beside each commit's surface facts. Idempotent.
    if "prose" not in db["surfaces"].columns_dict:
        db["surfaces"].add_column("prose", str)


def _m_partial_plans(db: sqlite_utils.Database) -> None:
    # A day posted before it ended (`digestbot post --partial`) stays open: the next post of it edits the
    # parent and adds what landed since, where a finished day's plan is final. Idempotent.
    if "partial" not in db["post_plans"].columns_dict:
        db["post_plans"].add_column("partial", int, not_null_default=0)


def _m_doc_mentions(db: sqlite_utils.Database) -> None:
    # What each documentation file mentions, by its blob id (content-addressed, so shared by every revision
    # and repository holding the same text): a day's docs are read once, then only the files that changed
    # (issue 16: a code name the reference docs never mention is the package's own). Idempotent.
    if "doc_mentions" not in db.table_names():
        db["doc_mentions"].create({"blob": str, "words": str, "chars": int}, pk="blob")


def _m_answered_questions(db: sqlite_utils.Database) -> None:
    # The chat questions being or already answered, by their message: a question the platform delivers again
    # (a Slack retry after a restart, another process) is answered once. Idempotent.
    if "answered_questions" not in db.table_names():
        db["answered_questions"].create(
            {"platform": str, "channel": str, "message_id": str, "state": str, "updated_at": str},
            pk=("platform", "channel", "message_id"),
        )


def _m_pending_questions(db: sqlite_utils.Database) -> None:
    # What a claimed question needs to be answered later, and who claimed it: a process killed between
    # the acknowledgement and the answer leaves its claim, which the next start takes over and answers
    # (bot/chat/pending.py). Claims made before hold none of it and are left to lapse. Idempotent.
    table = db["answered_questions"]
    columns = {
        "thread_id": str,  # the thread it was asked in
        "replied_to": str,  # the message it replies to (Discord)
        "question": str,  # as the person wrote it
        "asker": str,
        "mentioned": int,
        "asked_at": str,
        "owner": str,  # the claiming process: a token of its own, its host and pid
        "host": str,
        "pid": int,
    }
    for name, kind in columns.items():
        if name not in table.columns_dict:
            table.add_column(name, kind)
    table.create_index(["platform", "state"], if_not_exists=True)


def _m_run_windows(db: sqlite_utils.Database) -> None:
    # The window a day's run covered (UTC) and its zone: the next day's window starts where it ended, so a
    # subscription whose zone changed neither skips nor repeats the hours between. Idempotent.
    columns = db["runs"].columns_dict
    for name in ("window_start", "window_end", "timezone"):
        if name not in columns:
            db["runs"].add_column(name, str)


def _m_history_counted(db: sqlite_utils.Database) -> None:
    # Whether a past commit's files carry their line counts: 0 for one read with its paths alone (eval's span,
    # counted from the patches it reads anyway; the days after it, read only for their follow-ups), counted
    # by the next read that needs the counts. Rows stored before are counted. Idempotent.
    if "counted" not in db["history"].columns_dict:
        db["history"].add_column("counted", int)


MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = [
    _m1_initial,
    _m2_subscriptions,
    _m3_leases,
    _m4_history,
    _m7_ops,
    _m5_radar,
    _m_surface_cache,
    _m_thread_focus,
    _m_pending_work,
    _m_post_plans,
    _m_history_automated,
    _m_mined_spans,
    _m_span_scores,
    _m_span_index,
    _m_surface_prose,
    _m_thread_listing,
    _m_partial_plans,
    _m_doc_mentions,
    _m_answered_questions,
    _m_pending_questions,
    _m_run_windows,
    _m_history_counted,
]
