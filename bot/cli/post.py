"""`digestbot post`: a day's digest into a Slack or Discord channel now, or with --dry-run every message
it would send, rendered and measured against the platform's limits, without a token."""

from __future__ import annotations

import contextlib
import logging
import sys
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import click

from bot.cli.common import (
    CliError,
    Ctx,
    DigestCommand,
    StageBars,
    day_options,
    echo_err,
    format_option,
    global_options,
    run_async,
    source_options,
    the_day_of,
    user_errors,
)
from bot.cli.digest import build_day


@click.command(cls=DigestCommand)
@click.option("--platform", type=click.Choice(["slack", "discord"]), required=True, help="Where to post.")
@click.option("--channel", required=True, metavar="ID", help="Channel ID (Slack C…, Discord snowflake).")
@source_options
@day_options
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print every message that would be posted, with its size; post nothing, need no token.",
)
@click.option(
    "--repost",
    is_flag=True,
    help="The day is posted here already: edit its parent to today's digest and add what it announces.",
)
@click.option(
    "--partial",
    is_flag=True,
    help="Post a day that has not ended yet (today): its parent and cards so far. The day stays open: its"
    " next post (the scheduled one once it ends) updates the parent and adds the rest.",
)
@format_option("text", "json", default="text")
@global_options
@click.pass_obj
@user_errors
def post(
    obj: Ctx,
    platform,
    channel,
    repo,
    git_dir,
    branch,
    lang,
    analyzer,
    refresh,
    day,
    tz,
    dry_run,
    repost,
    partial,
    fmt,
) -> None:
    """Post a day's digest into a Slack or Discord channel now.

    A parent message with the counts and the high items; in its thread one card per high commit, the
    medium commits, and the full report as a file. Posting the same digest again posts nothing new; an
    interrupted post resumes with what is missing. A day posted here is what its parent announced: a
    changed ranking (a new model, say) adds nothing unless --repost edits the parent first. A day that
    has not ended is refused (its post would freeze it half done) unless --partial says so. In a channel
    a subscription posts the repository to, the day is that subscription's digest (its zone, language,
    branch and filters), the one its scheduled post finds there.
    """
    from analysis.render.json_report import dumps

    if platform == "slack":
        from bot.config.file import slack_channel_problem

        if problem := slack_channel_problem(channel):
            raise CliError(f"--channel: {problem}")
        channel = channel.strip()
    settings = obj.settings
    keep, where = None, None
    if sub := subscribed_here(obj, platform, channel, repo, git_dir):
        where = "--tz" if tz else f"{sub.name}'s timezone"
        tz, lang, branch, keep = as_subscribed(sub, tz, lang, branch)
    zone_info, the_day = the_day_of(settings, day, tz, where)
    from bot.store.runs import subscribed_window  # not at --help: it loads the store

    after = subscribed_window(obj.store, sub, zone_info.key, the_day)
    partial = unfinished_day(the_day, zone_info, partial)
    lang = lang or settings.digest_lang
    bars = StageBars(sys.stderr.isatty())

    if dry_run:
        from bot.delivery.dry_run import preview, render_text

        result = run_async(
            build_day(
                obj, repo, git_dir, branch, analyzer, the_day, zone_info, lang, refresh, bars, keep, after
            )
        )
        plan = preview(
            result, platform, channel, obj.store, partial=partial, max_cards=settings.digest_max_cards
        )
        obj.write(dumps(plan) if fmt == "json" else render_text(plan))
        return

    async def go():
        from bot.app import open_poster
        from bot.delivery.posting import post_digest

        async with open_poster(platform, settings) as poster:  # fail on a bad token before any work
            result = await build_day(
                obj, repo, git_dir, branch, analyzer, the_day, zone_info, lang, refresh, bars, keep, after
            )
            if partial:  # the parent's window says how far the day goes
                result = replace(result, window_end=min(result.window_end, result.generated_at))
            posted = await post_digest(
                poster,
                obj.store,
                channel,
                result,
                repost=repost,
                partial=partial,
                max_cards=settings.digest_max_cards,
            )
            return result, posted

    result, posted = run_async(go())
    if fmt == "json":
        obj.write(
            dumps(
                {
                    "repo": result.repo,
                    "date": result.day.isoformat(),
                    "platform": platform,
                    "channel": channel,
                    "key": posted.key,
                    "commits": result.stats["total"],
                    "posted": posted.posted,
                    "skipped": posted.skipped,
                    "thread_id": posted.thread_id,
                    "edited": posted.edited,
                    "partial": partial,
                }
            )
        )
        return
    edited = f", edited the {', '.join(posted.edited)}" if posted.edited else ""
    if partial:
        echo_err(
            f"{result.repo} {result.day} is a partial day (until {result.window_end:%H:%M} {zone_info.key}):"
            " posted its parent and high cards so far; the day stays open, and its next post (the"
            " scheduled one once it ends) updates the parent and adds the rest",
            logging.WARNING,
        )
    echo_err(
        f"{result.repo} {result.day}: {result.stats['total']} commit{'' if result.stats['total'] == 1 else 's'};"
        f" posted {len(posted.posted)} item(s)"
        f" to {platform}:{channel}, {len(posted.skipped)} already there{edited}",
        logging.INFO,
    )
    if pending := [
        w for w in obj.store.pending_work() if (w["platform"], w["channel"]) == (platform, channel)
    ]:
        echo_err(
            f"{len(pending)} banner(s) or notice(s) pending here: the running service retries them",
            logging.WARNING,
        )


def subscribed_here(obj: Ctx, platform: str, channel: str, repo: str | None, git_dir) -> Any:
    """The subscription that posts this repository to this channel (file or chat), if exactly one does.
    A manual post of its day must be the same digest (its zone, language, branch and filters: the digest's
    key), or the channel gets the day twice: once by hand in DIGEST_TZ/DIGEST_LANG, once on schedule."""
    from analysis.errors import DigestError
    from bot.config.file import load_subscriptions
    from bot.config.subscriptions import Registry

    try:
        here = Registry(obj.store, load_subscriptions(obj.settings, None)).for_channel(platform, channel)
    except DigestError as exc:  # a broken DIGEST_CONFIG must not stop a post by hand
        echo_err(
            f"the subscriptions could not be read ({exc}); posting with the options given", logging.WARNING
        )
        return None
    if git_dir is not None and not repo:
        here = [
            s for s in here if s.git_dir is not None and Path(s.git_dir).resolve() == Path(git_dir).resolve()
        ]
    else:
        name = (repo or obj.settings.digest_repo or "").lower()
        here = [s for s in here if s.repo.lower() == name]
    return here[0] if len(here) == 1 else None


def as_subscribed(sub: Any, tz: str | None, lang: str | None, branch: str | None):
    """The zone, language, branch and filter of `sub` where the options leave them open; an option that
    differs makes a digest of its own, which is said."""
    from analysis.errors import InputError
    from bot.config.settings import zone

    with contextlib.suppress(InputError):  # an unknown zone is refused where the day is worked out
        tz = zone(tz).key if tz else tz  # "utc", "UTC+8": the names the subscription's zone has
    differs = [
        f"{name} {given!r} (the subscription's: {own!r})"
        for name, given, own in (
            ("--tz", tz, sub.timezone),
            ("--lang", lang, sub.lang),
            ("--branch", branch, sub.branch),
        )
        if given is not None and own is not None and given != own
    ]
    if differs:
        echo_err(
            f"{sub.name} posts {sub.repo} here; "
            + ", ".join(differs)
            + " makes a separate digest: the channel will have this day twice",
            logging.WARNING,
        )
    else:
        echo_err(
            f"{sub.name} posts {sub.repo} here: posting its digest ({sub.timezone}, {sub.lang})", logging.INFO
        )
    keep = sub.filters.keep if sub.filters.active else None
    return tz or sub.timezone, lang or sub.lang, branch or sub.branch, keep


def unfinished_day(day: date, zone_info: ZoneInfo, partial: bool) -> bool:
    """Whether this post is of a day still running (then only with --partial: a post freezes a day in its
    channel, so a running one would never announce what lands later); a finished day is posted whole."""
    from analysis.errors import InputError
    from analysis.window import refuse_unfinished

    try:
        refuse_unfinished(day, zone_info, datetime.now(zone_info))
    except InputError as exc:
        if partial:
            return True
        raise CliError(f"{exc}; --partial posts it so far and leaves it open") from None
    return False
