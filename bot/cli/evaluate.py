"""`digestbot eval`: replay a span of days, rank each as the bot would have, and score the ranks
against the repository's own answer keys beside a rank by size."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from analysis.window import parse_day
from bot.cli.common import (
    CliError,
    Ctx,
    DigestCommand,
    StageBars,
    format_option,
    global_options,
    no_empty_zone,
    opened,
    out_option,
    run_async,
    source_options,
    the_zone,
    user_errors,
)


@click.command("eval", cls=DigestCommand)
@global_options
@source_options
@click.option("--since", "since", required=True, metavar="YYYY-MM-DD", help="First day replayed.")
@click.option("--until", "until", required=True, metavar="YYYY-MM-DD", help="Last day replayed (inclusive).")
@click.option(
    "--tz", metavar="ZONE", callback=no_empty_zone, help="IANA time zone of the days (default: DIGEST_TZ)."
)
@click.option(
    "--horizon",
    type=click.IntRange(1, 365),
    default=30,
    show_default=True,
    help="Days after a commit within which a revert or fix counts against it.",
)
@click.option(
    "--sample",
    type=click.IntRange(0),
    help="Rank every followed-up commit plus N others at random (weighted): for slow models.",
)
@click.option(
    "--changelog",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Release notes to score against, instead of those found at the branch tip (CHANGELOG.md,"
    " HISTORY.md, CHANGES, NEWS, RELEASES, docs/**/release-notes*, docs/**/changelog*).",
)
@format_option("table", "json", default="table")
@out_option
@click.pass_obj
@user_errors
def eval_command(
    obj: Ctx,
    repo,
    git_dir,
    branch,
    lang,
    analyzer,
    refresh,
    since,
    until,
    tz,
    horizon,
    sample,
    changelog,
    fmt,
    out,
) -> None:
    """Replay days as the bot would have seen them and score the ranks against the branch's own
    answer keys: its reverts and fix-forwards, and its release notes (the PRs listed, by category).
    Every recall stands beside a rank by lines changed at the same share flagged and chance, with a
    95% bootstrap interval of the difference; ROC AUC of the tier and of size; per month; the misses.
    JSON: docs/json.md, "digestbot eval --format json".

        digestbot eval --git-dir . --since 2025-09-01 --until 2025-12-31
    """
    import json

    from analysis.render.eval_report import eval_json, eval_table
    from analysis.window import refuse_future
    from bot.digest.evaluate import evaluate
    from bot.digest.pipeline import pick_branch

    settings = obj.settings
    zone_info = the_zone(settings, tz)
    first, last = parse_day(since), refuse_future(parse_day(until), zone_info, what=f"--until {until}")
    notes = None
    if changelog is not None:
        try:
            notes = (str(changelog), changelog.read_bytes().decode("utf-8", "replace"))
        except OSError as exc:
            raise CliError(f"cannot read --changelog {changelog}: {exc.strerror or exc}") from None
    bars = StageBars(sys.stderr.isatty())

    async def go():
        try:
            async with opened(obj, analyzer, repo or settings.digest_repo, git_dir) as (source, chosen):
                return await evaluate(
                    source,
                    obj.store,
                    chosen,
                    branch=await pick_branch(source, branch, settings),
                    since=first,
                    until=last,
                    tz=zone_info,
                    lang=lang or settings.digest_lang,
                    refresh=refresh,
                    horizon_days=horizon,
                    history_days=settings.history_days,
                    sample=sample,
                    changelog=notes,
                    progress=lambda done, total: bars("analyse", done, total),
                )
        finally:
            bars.close()

    result = run_async(go())
    if fmt == "json":
        text = json.dumps(eval_json(result), ensure_ascii=False, indent=2)
    else:
        text = eval_table(result)
    obj.write(text, out)
