"""`digestbot logs`: the LLM calls recorded in the store, newest first, with their totals."""

from __future__ import annotations

import click

from analysis.window import parse_day
from bot.cli.common import (
    CliError,
    Ctx,
    DigestCommand,
    format_option,
    global_options,
    no_database,
    no_empty_zone,
    the_zone,
    user_errors,
)


@click.command(cls=DigestCommand)
@click.option("--date", "day", metavar="YYYY-MM-DD", help="Only calls made on this day (in --tz).")
@click.option("--since", metavar="YYYY-MM-DD", help="Only calls made on or after this day (in --tz).")
@click.option("--until", metavar="YYYY-MM-DD", help="Only calls made on or before this day (in --tz).")
@click.option(
    "--tz",
    metavar="ZONE",
    callback=no_empty_zone,
    help="Time zone of the days and of the times shown (default: DIGEST_TZ).",
)
@click.option("--sha", metavar="PREFIX", help="Only calls about commits starting with PREFIX.")
@click.option("--repo", metavar="OWNER/NAME", help="Only calls about this repository.")
@click.option("-m", "--model", help="Only calls to this model.")
@click.option(
    "--purpose",
    help="Only calls of this purpose: analysis (also matches analysis-batch), repair, qa.",
)
@click.option("--outcome", help="Only calls with this outcome (ok, length, timeout, http 429, …).")
@click.option(
    "-q",
    "--query",
    multiple=True,
    metavar="TEXT",
    help="Only calls whose prompt, reply or error contains TEXT (case-insensitive; repeat: all of them).",
)
@click.option(
    "-n",
    "--count",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Newest N calls (0: all).",
)
@click.option("-u", "--usage", is_flag=True, help="End with a totals line over every matching call.")
@click.option("--full", is_flag=True, help="Also show each call's prompt and reply (JSON too).")
@click.option(
    "-t",
    "--truncate",
    "cut",
    type=click.IntRange(min=1),
    is_flag=False,
    flag_value=100,
    metavar="[N]",
    help="Errors, prompts and replies on one line of at most N characters (default 100).",
)
@format_option("text", "json", default="text")
@global_options
@click.pass_obj
@user_errors
def logs(
    obj: Ctx, day, since, until, tz, sha, repo, model, purpose, outcome, query, count, usage, full, cut, fmt
) -> None:
    """The LLM calls recorded in the database, newest first: tokens, latency, cost and outcome.

    Prompts and replies are kept as LLM_LOG_PROMPTS says (default: 30 days; off: never stored).
    """
    from analysis.render.json_report import dumps
    from analysis.window import refuse_future
    from bot.store.llm_calls import (
        CallFilter,
        call_totals,
        check_choices,
        query_calls,
        render_calls,
        render_totals,
    )

    settings = obj.settings
    zone_info = the_zone(settings, tz)
    days = {
        name: refuse_future(parse_day(value), zone_info, what=f"--{name} {value}") if value else None
        for name, value in (("date", day), ("since", since), ("until", until))
    }
    if days["since"] and days["until"] and days["since"] > days["until"]:
        raise CliError(f"--since {since} is after --until {until}")
    store = obj.reader  # never creates a database
    check_choices(store, purpose, outcome)
    wanted = CallFilter(
        day=days["date"],
        since=days["since"],
        until=days["until"],
        tz=zone_info,
        sha=sha,
        repo=repo,
        model=model,
        purpose=purpose,
        outcome=outcome,
        query=tuple(query),
        limit=count,
    )
    calls = query_calls(store, wanted, full=full)
    if fmt == "json":
        obj.write(dumps({"calls": calls, "totals": call_totals(store, wanted)} if usage else calls))
        if obj.missing_db:
            no_database(obj, "logs")
        return
    text = render_calls(calls, zone_info, full=full, cut=cut)
    if usage:
        text += "\n" + render_totals(call_totals(store, wanted))
    obj.write(text)
    if obj.missing_db:
        no_database(obj, "logs")
