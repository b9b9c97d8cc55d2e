"""`digestbot run` (the service: scheduler and chat adapters, or --console) and `digestbot status` (each
subscription's health, its last and next run, and the week's LLM cost)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import click

from bot.cli.common import (
    CliError,
    Ctx,
    DigestCommand,
    config_option,
    format_option,
    global_options,
    log,
    no_database,
    run_async,
    user_errors,
    warn_half_configured,
    warn_zone,
)


@click.command(cls=DigestCommand)
@config_option
@click.option(
    "--allow-empty",
    is_flag=True,
    help="Start even with no subscription (to add them from chat with /digest subscribe).",
)
@click.option(
    "--console",
    is_flag=True,
    help="The console as the only channel: every subscription's digests print on stdout; no chat token.",
)
@click.option(
    "--git-dir",
    type=click.Path(path_type=Path),
    help="With --console and no subscriptions file: one subscription reading this local clone.",
)
@click.option(
    "--schedule",
    metavar="HH:MM|CRON",
    help="With --git-dir: when it fires, in DIGEST_TZ (default 09:00; e.g. '*/5 * * * *').",
)
@global_options
@click.pass_obj
@user_errors
def run(
    obj: Ctx,
    config: Path | None,
    allow_empty: bool,
    console: bool,
    git_dir: Path | None,
    schedule: str | None,
) -> None:
    """Run the bot: the daily schedule plus the Slack and/or Discord adapters whose tokens are set.

    With --console the digests print on stdout instead (no token; with --git-dir no network either):

        digestbot -v run --console --git-dir . --schedule '*/5 * * * *'

    Each subscription's digest is posted once a day at its time in its zone; missed days are caught
    up at start-up (DIGEST_CATCHUP_DAYS). Every subscription's source and channels are checked
    first: a broken one in the config file stops the start with one line naming it. Stop with
    Ctrl-C or SIGTERM: in-flight posts finish.
    """
    from bot.app import console_runtimes, local_clone, open_source, serve
    from bot.config.file import load_subscriptions
    from bot.config.subscriptions import Registry
    from bot.service.runner import install_signal_handlers
    from bot.service.status import check_remote_sources, check_subscriptions

    settings = obj.settings  # -v for a line per run (the unit and the image pass it)
    warn_half_configured(settings)
    warn_zone(settings.digest_tz)
    subscriptions = load_subscriptions(settings, config)
    if (git_dir or schedule) and not console:
        raise CliError(
            "--git-dir and --schedule go with --console (the service's subscriptions are in DIGEST_CONFIG)"
        )
    if console:
        from bot.config.subscriptions import on_console

        if git_dir is not None and not subscriptions:
            subscriptions = [console_subscription(settings, git_dir, schedule)]
        subscriptions = [on_console(s) for s in subscriptions]
    everything = Registry(obj.store, subscriptions).all()
    if not everything and not allow_empty:
        source = config or settings.digest_config
        where = f"{source} has no [[subscription]]" if source else "DIGEST_CONFIG is not set"
        raise CliError(
            f"no subscriptions: {where} and none were made in chat; point DIGEST_CONFIG (or --config) at"
            " your subscriptions file, or pass --allow-empty to start with none"
        )
    problems = check_subscriptions(settings, everything, local_clone)
    problems += run_async(
        check_remote_sources(everything, lambda repo: open_source(settings, obj.store, repo, None))
    )
    for sub, problem in problems:
        log.error("subscription %s is broken: %s", sub.name, problem)
    broken = [f"{sub.name}: {problem}" for sub, problem in problems if sub.origin == "file"]
    if broken:
        raise CliError(f"{len(broken)} subscription(s) broken — " + "; ".join(broken))

    runtimes = None
    if console:
        runtimes = console_runtimes(obj.write)

    watched = config or settings.digest_config

    async def go() -> None:
        stop = asyncio.Event()
        install_signal_handlers(stop)
        if watched is not None:
            from bot.service.config_watch import watch_config

            watcher = asyncio.create_task(watch_config(Path(watched), stop))
        try:
            await serve(settings, obj.store, subscriptions, stop=stop, make_runtimes=runtimes)
        finally:
            if watched is not None:
                stop.set()
                await watcher

    run_async(go())


def console_subscription(settings: Any, git_dir: Path, schedule: str | None):
    """`run --console --git-dir PATH`: one subscription of the clone, in DIGEST_TZ and DIGEST_LANG."""
    from bot.app import local_clone
    from bot.config.file import check_schedule
    from bot.config.subscriptions import DEFAULT_TIME, Subscription

    try:
        when = check_schedule(schedule) if schedule else DEFAULT_TIME
    except ValueError as exc:
        raise CliError(f"--schedule {schedule!r}: {exc}") from None
    repo = local_clone(git_dir.expanduser()).repo
    return Subscription(
        name=f"console:{repo}",
        repo=repo,
        timezone=settings.digest_tz,
        schedule=when,
        lang=settings.digest_lang,
        destinations=(),
        git_dir=git_dir.expanduser(),
    )


@click.command(cls=DigestCommand)
@config_option
@format_option("text", "json", default="text")
@global_options
@click.pass_obj
@user_errors
def status(obj: Ctx, config: Path | None, fmt: str) -> None:
    """Subscriptions with a check of each one's source and channels, the last digest of each with its
    outcome, the next run, and LLM usage (7 days). Exits 1 when a subscription is broken or its last run
    failed, and when the database does not exist (status run outside the service's environment)."""
    from analysis.render.json_report import dumps
    from bot.app import local_clone
    from bot.config.file import load_subscriptions
    from bot.service.status import render_status_text, status_data

    settings = obj.settings
    data = status_data(  # creates nothing
        settings, obj.reader, load_subscriptions(settings, config), check_clone=local_clone
    )
    obj.write(dumps(data) if fmt == "json" else render_status_text(data, missing_db=obj.missing_db))
    from bot.service.status import FAILED

    if obj.missing_db:  # status run outside the service's environment read as "all is well"
        no_database(obj, "status")

    # for monitoring: a broken subscription, one whose last run failed, or a digest overdue (as /healthz)
    if any(
        s["problem"] or s["overdue"] or (s["last_run"] and s["last_run"]["status"] in FAILED)
        for s in data["subscriptions"]
    ):
        sys.exit(1)
