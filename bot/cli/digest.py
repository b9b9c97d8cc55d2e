"""`digestbot digest` (a day's report, Markdown or JSON) and `digestbot analyze` (one commit's card),
and the day's digest built from the source options, which `post` shares."""

from __future__ import annotations

import sys

import click

from bot.cli.common import (
    CliError,
    Ctx,
    DigestCommand,
    StageBars,
    commit_named,
    day_options,
    format_option,
    global_options,
    no_empty_zone,
    opened,
    out_option,
    parse_ref_or_name,
    run_async,
    source_options,
    the_day_of,
    the_zone,
    user_errors,
)


@click.command(cls=DigestCommand)
@source_options
@day_options
@format_option("markdown", "json", default="markdown")
@out_option
@global_options
@click.pass_obj
@user_errors
def digest(obj: Ctx, repo, git_dir, branch, lang, analyzer, refresh, day, tz, fmt, out) -> None:
    """Print one day's digest of a branch: every commit of the day, ranked and analysed.

    The day is the calendar day in --tz by committer date, on the branch's first-parent history.
    On a terminal the report is rendered for reading; piped or with --out it is plain Markdown.
    """
    from analysis.render.json_report import dumps, render_json
    from analysis.render.markdown import render_report

    settings = obj.settings
    zone_info, the_day = the_day_of(settings, day, tz)
    lang = lang or settings.digest_lang
    result = run_async(
        build_day(
            obj,
            repo,
            git_dir,
            branch,
            analyzer,
            the_day,
            zone_info,
            lang,
            refresh,
            StageBars(sys.stderr.isatty()),
        )
    )
    if fmt == "json":
        obj.write(dumps(render_json(result)), out)
    else:
        obj.write(render_report([result], lang), out, rich_markdown=True)


@click.command(cls=DigestCommand)
@click.argument("refs", nargs=-1, required=True, metavar="REF...")
@source_options
@click.option(
    "--tz",
    metavar="ZONE",
    callback=no_empty_zone,
    help="Time zone of the dates shown, and of the day whose digest's history ranks the commit"
    " (default: DIGEST_TZ).",
)
@format_option("markdown", "json", default="markdown")
@out_option
@global_options
@click.pass_obj
@user_errors
def analyze(obj: Ctx, refs, repo, git_dir, branch, lang, analyzer, refresh, tz, fmt, out) -> None:
    """Analyse commits and print their cards, in the order given.

    REF is a full or short SHA, #PR (the commit that merged it), a commit URL, OWNER/NAME@SHA, HEAD
    or a branch name (its newest commit). With --format json, one REF gives an object and several
    give an array.
    """
    from analysis.render.json_report import dumps, render_commit_json
    from analysis.render.markdown import render_commit

    settings = obj.settings
    lang = lang or settings.digest_lang
    zone_info = the_zone(settings, tz)
    parsed = [parse_ref_or_name(r, repo or settings.digest_repo) for r in refs]
    repos = {p.repo for p in parsed if not isinstance(p, str) and p.repo}
    if len(repos) > 1:
        raise CliError(f"REFs name several repositories ({', '.join(sorted(repos))}): analyse one at a time")
    the_repo = repos.pop() if repos else repo or settings.digest_repo

    async def go():
        async with opened(obj, analyzer, the_repo, git_dir) as (source, chosen):
            # Imported once the analyser is made: an LLM's SDK is being imported meanwhile (bot/app.py).
            from analysis.refs import Ref
            from bot.digest.pipeline import analyse_ref, pick_branch

            the_branch = await pick_branch(source, branch, settings)
            results = []
            for ref in parsed:
                if isinstance(ref, str):  # HEAD or a branch name: its newest commit
                    ref = Ref("sha", (await commit_named(source, ref)).sha, the_repo)
                results.append(
                    await analyse_ref(
                        source,
                        obj.store,
                        chosen,
                        ref,
                        branch=the_branch,
                        lang=lang,
                        refresh=refresh,
                        history_days=settings.history_days,
                        tz=zone_info,
                    )
                )
            return results

    results = run_async(go())
    if fmt == "json":
        cards = [render_commit_json(c, a, tz=zone_info) for c, a in results]
        obj.write(dumps(cards[0] if len(cards) == 1 else cards), out)
    else:
        text = "\n".join(render_commit(c, a, lang, heading_level=2, tz=zone_info) for c, a in results)
        obj.write(text, out, rich_markdown=True)


async def build_day(
    obj: Ctx,
    repo,
    git_dir,
    branch,
    analyzer,
    day,
    zone_info,
    lang,
    refresh,
    bars: StageBars,
    keep=None,
    after=None,
):
    """The day's digest from the source options (shared by `digest` and `post`); `keep`: a subscription's
    filter; `after`: where its posted day before ended (bot/digest/pipeline.py build_digest)."""
    settings = obj.settings
    try:
        async with opened(obj, analyzer, repo or settings.digest_repo, git_dir) as (source, chosen):
            # Imported once the analyser is made: an LLM's SDK is being imported meanwhile (bot/app.py).
            from bot.digest.pipeline import build_digest, pick_branch

            return await build_digest(
                source,
                obj.store,
                chosen,
                branch=await pick_branch(source, branch, settings),
                day=day,
                tz=zone_info,
                lang=lang,
                refresh=refresh,
                progress=bars,
                history_days=settings.history_days,
                keep=keep,
                after=after,
            )
    finally:
        bars.close()
