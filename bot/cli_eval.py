"""`digestbot eval`: how well the ranking flags the commits that later needed a revert or a fix."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from analysis.window import parse_day
from bot.cli import Ctx, StageBars, run_async, source_options, user_errors, write_output
from bot.sources import pick_branch


@click.command("eval")
@source_options
@click.option("--since", "since", required=True, metavar="YYYY-MM-DD", help="First day replayed.")
@click.option("--until", "until", required=True, metavar="YYYY-MM-DD", help="Last day replayed (inclusive).")
@click.option("--tz", metavar="ZONE", help="IANA time zone of the days (default: DIGEST_TZ).")
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
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--out", type=click.Path(path_type=Path), help="Write to this file instead of stdout.")
@click.pass_obj
@user_errors
def eval_command(
    obj: Ctx, repo, git_dir, branch, lang, analyzer, refresh, since, until, tz, horizon, sample, fmt, out
) -> None:
    """Replay days as the bot would have seen them and score the ranks against the branch's own
    reverts and fix-forwards: recall, share flagged, lift over chance, per month, and the misses.

        digestbot eval --git-dir . --since 2025-09-01 --until 2025-12-31
    """
    import json

    from analysis.render_eval import eval_json, eval_table
    from bot.analyzers import make_analyzer
    from bot.evaluate import evaluate
    from bot.settings import zone
    from bot.sources import open_source

    settings = obj.settings
    zone_info = zone(tz or settings.digest_tz)
    first, last = parse_day(since), parse_day(until)
    bars = StageBars(sys.stderr.isatty())

    async def go():
        chosen = make_analyzer(settings, obj.store, analyzer)
        source = open_source(settings, obj.store, repo or settings.digest_repo, git_dir)
        try:
            return await evaluate(
                source,
                obj.store,
                chosen,
                branch=await pick_branch(source, branch, settings),
                since=first,
                until=last,
                tz=zone_info,
                lang=lang or settings.digest_lang,
                horizon_days=horizon,
                history_days=settings.history_days,
                sample=sample,
                progress=lambda done, total: bars("analyse", done, total),
            )
        finally:
            bars.close()
            await source.aclose()
            await chosen.aclose()

    result = run_async(go())
    if fmt == "json":
        text = json.dumps(eval_json(result), ensure_ascii=False, indent=2)
    else:
        text = eval_table(result)
    write_output(text, out)
