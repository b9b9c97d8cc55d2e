"""`digestbot weekly`: a branch's ISO week as one roll-up (Markdown or JSON) and its chart PNG."""

from __future__ import annotations

import logging
import os
import sys
from datetime import datetime
from pathlib import Path

import click

from bot.cli.common import (
    Ctx,
    DigestCommand,
    OutputPath,
    StageBars,
    echo_err,
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


@click.command(cls=DigestCommand)
@source_options
@click.option(
    "--week", metavar="YYYY-Www", help="ISO week in --tz, one that has ended (default: the last one)."
)
@click.option(
    "--tz",
    metavar="ZONE",
    callback=no_empty_zone,
    help="IANA time zone of the week (default: DIGEST_TZ, Asia/Shanghai).",
)
@format_option("markdown", "json", default="markdown")
@out_option
@click.option(
    "--chart",
    type=OutputPath(),
    metavar="PNG",
    help="Where the chart PNG goes (default: beside --out, else the current folder).",
)
@global_options
@click.pass_obj
@user_errors
def weekly(obj: Ctx, repo, git_dir, branch, lang, analyzer, refresh, week, tz, fmt, out, chart) -> None:
    """A week of a branch in one roll-up: commits per day by tier, the follow-ups that landed (and how
    we had ranked what they reverted or fixed), the busiest areas, LLM cost, and a chart PNG."""
    run_weekly(obj, repo, git_dir, branch, lang, analyzer, refresh, week, tz, fmt, out, chart)


def run_weekly(obj: Ctx, repo, git_dir, branch, lang, analyzer, refresh, week, tz, fmt, out, chart) -> None:
    from analysis.render.json_report import dumps
    from analysis.render.weekly import render_weekly_json, render_weekly_markdown, weekly_filename
    from analysis.weekly import last_full_week, parse_week, refuse_unfinished_week
    from bot.app import render_chart
    from bot.cli.output import write_bytes
    from bot.digest.pipeline import pick_branch
    from bot.digest.weekly import build_week

    settings = obj.settings
    zone_info = the_zone(settings, tz)
    year, number = parse_week(week) if week else last_full_week(datetime.now(zone_info).date())
    refuse_unfinished_week(year, number, zone_info)
    lang = lang or settings.digest_lang

    async def go():
        bars = StageBars(sys.stderr.isatty())
        try:
            async with opened(obj, analyzer, repo or settings.digest_repo, git_dir) as (source, chosen):
                return await build_week(
                    source,
                    obj.store,
                    chosen,
                    branch=await pick_branch(source, branch, settings),
                    year=year,
                    week=number,
                    tz=zone_info,
                    lang=lang,
                    refresh=refresh,
                    progress=bars,
                )
        finally:
            bars.close()

    rollup = run_async(go())
    folder = Path(out).expanduser().parent if out not in (None, "-") else Path.cwd()  # the Markdown's folder
    chart_path = Path(chart).expanduser() if chart else folder / weekly_filename(rollup, "png")
    # Both outputs pass the guard before either is written: a refused command leaves nothing behind.
    obj.check_output(out)
    obj.check_output(chart_path, "--chart")
    write_bytes(render_chart(rollup), chart_path, protected=obj.protected(), option="--chart")
    link = os.path.relpath(os.path.realpath(chart_path), os.path.realpath(folder)).replace(os.sep, "/")
    if fmt == "json":
        obj.write(dumps(render_weekly_json(rollup, link)), out)
    else:
        obj.write(render_weekly_markdown(rollup, link), out, rich_markdown=True)
    echo_err(f"chart: {chart_path}", logging.INFO)
