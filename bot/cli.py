"""The `digestbot` command line. Every user error is one line on stderr and exit code 2."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sqlite3
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, ClassVar

import click

from analysis.errors import DigestError
from analysis.labels import LANGS
from analysis.window import parse_day, yesterday
from bot.analyzers import ANALYZER_CHOICES
from bot.sources import pick_branch

log = logging.getLogger("digestbot")


class CliError(click.ClickException):
    exit_code = 2

    def show(self, file: Any = None) -> None:
        echo_err(f"error: {self.format_message()}")


def echo_err(line: str) -> None:
    """Every line we print on stderr, with every configured secret masked (whatever put it there)."""
    from bot.logs import scrub

    click.echo(scrub(line), err=True)


def user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn DigestError (and Ctrl-C) into one clean line; unexpected errors into one line too."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DigestError as exc:
            raise CliError(str(exc)) from None
        except sqlite3.DatabaseError as exc:  # busy or damaged, found mid-run: what it is, what to do
            from bot.store import Store
            from bot.store_health import database_error

            ctx = next((a for a in args if isinstance(a, Ctx)), None)
            path = ctx.db_path if ctx is not None else "(unknown)"
            raise CliError(str(database_error(exc, path, Store.BUSY_TIMEOUT))) from None
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:  # a bug: still one line, traceback only with -vv
            log.debug("unexpected failure", exc_info=True)
            echo_err(f"error: unexpected {type(exc).__name__}: {exc} (run with -vv for details)")
            sys.exit(1)

    return wrapper


def run_async(coro: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coro)


class Ctx:
    """Lazily built settings and store, so `--help` works without any configuration."""

    def __init__(self, db: Path | None, verbose: int):
        self.db_override = db
        self.verbose = verbose
        self._settings = None
        self._store = None

    @property
    def settings(self):
        if self._settings is None:
            from bot.logs import secrets_of, setup_logging
            from bot.settings import load_settings

            overrides = {"digest_db": self.db_override} if self.db_override else {}
            self._settings = load_settings(**overrides)
            setup_logging(self.verbose, secrets_of(self._settings))
        return self._settings

    @property
    def db_path(self) -> Path | str:
        if self.db_override:
            return self.db_override
        return self._settings.digest_db if self._settings is not None else "(DIGEST_DB)"

    @property
    def store(self):
        if self._store is None:
            from bot.store import Store

            self._store = Store(self.settings.digest_db)
        return self._store


class StageBars:
    """Progress bars on stderr, only when stderr is a terminal (never in pipes or CI logs)."""

    LABELS: ClassVar[dict[str, str]] = {"fetch": "fetching ", "analyse": "analysing"}

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.bars: dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        bar = self.bars.get(stage)
        if bar is None:
            bar = click.progressbar(length=total, label=self.LABELS.get(stage, stage), file=sys.stderr)
            bar.__enter__()
            self.bars[stage] = bar
        bar.update(done - bar.pos)
        if done >= total:
            self.close(stage)

    def close(self, stage: str | None = None) -> None:
        for name in [stage] if stage else list(self.bars):
            bar = self.bars.pop(name, None)
            if bar is not None:
                bar.__exit__(None, None, None)


def write_output(text: str, out: Path | None) -> None:
    """UTF-8 always, whatever the locale; a file is replaced atomically so a failed run loses nothing."""
    from bot.logs import scrub

    text = scrub(text)  # a commit message or a service could quote a configured secret
    if not text.endswith("\n"):
        text += "\n"
    if out is None:
        stream = getattr(sys.stdout, "buffer", None)
        if stream is None:  # a text-only stream (embedding): it is its own encoder
            sys.stdout.write(text)
        else:
            stream.write(text.encode("utf-8"))
        sys.stdout.flush()
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)
    except OSError as exc:
        raise DigestError(f"cannot write {out}: {exc.strerror or exc}") from None


# -- shared options ----------------------------------------------------------------------------
def source_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("--repo", metavar="OWNER/NAME", help="GitHub repository (default: DIGEST_REPO)."),
        click.option(
            "--git-dir",
            type=click.Path(path_type=Path),
            help="Read a local clone (bare or not) instead of GitHub: no network, no token.",
        ),
        click.option(
            "--branch", help="Branch to read (default: DIGEST_BRANCH, else the repository's default)."
        ),
        click.option("--lang", type=click.Choice(LANGS), help="Report language (default: DIGEST_LANG, zh)."),
        click.option(
            "--analyzer",
            type=click.Choice(ANALYZER_CHOICES),
            default="auto",
            show_default=True,
            help="llm needs DIGEST_MODEL and OPENAI_*; auto uses the LLM when configured.",
        ),
        click.option("--refresh", is_flag=True, help="Ignore cached analyses and analyse again."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--db", type=click.Path(path_type=Path), help="SQLite database (default: DIGEST_DB).")
@click.option("-v", "--verbose", count=True, help="-v for progress logs, -vv for debug.")
@click.version_option(package_name="digestbot")
@click.pass_context
def cli(ctx: click.Context, db: Path | None, verbose: int) -> None:
    """digestbot: a repository's daily commits as an LLM-ranked digest, for Slack, Discord or the console.

    Without any token it reads a local clone and ranks commits with a transparent heuristic:

        digestbot digest --git-dir . --date 2026-01-29 --tz Asia/Shanghai
    """
    ctx.obj = Ctx(db, verbose)


@cli.command()
@source_options
@click.option("--date", "day", metavar="YYYY-MM-DD", help="Calendar day in --tz (default: yesterday).")
@click.option("--tz", metavar="ZONE", help="IANA time zone of the day (default: DIGEST_TZ, Asia/Shanghai).")
@click.option(
    "--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True
)
@click.option("--out", type=click.Path(path_type=Path), help="Write to this file instead of stdout.")
@click.pass_obj
@user_errors
def digest(obj: Ctx, repo, git_dir, branch, lang, analyzer, refresh, day, tz, fmt, out) -> None:
    """Print one day's digest of a branch: every commit of the day, ranked and analysed.

    The day is the calendar day in --tz by committer date, on the branch's first-parent history.
    """
    from analysis.render_json import dumps, render_json
    from analysis.render_markdown import render_report
    from bot.settings import zone

    settings = obj.settings
    zone_info = zone(tz or settings.digest_tz)
    the_day = parse_day(day) if day else yesterday(zone_info)
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
    text = dumps(render_json(result)) if fmt == "json" else render_report([result], lang)
    write_output(text, out)


@cli.command()
@click.argument("ref")
@source_options
@click.option(
    "--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True
)
@click.pass_obj
@user_errors
def analyze(obj: Ctx, ref, repo, git_dir, branch, lang, analyzer, refresh, fmt) -> None:
    """Analyse one commit and print its card.

    REF is a full or short SHA, #PR (the commit that merged it), a commit URL or OWNER/NAME@SHA.
    """
    from analysis.render_json import dumps, render_commit_json
    from analysis.render_markdown import render_commit
    from bot.refs import parse_ref

    settings = obj.settings
    lang = lang or settings.digest_lang
    parsed = parse_ref(ref, repo or settings.digest_repo)

    async def go():
        from bot.analyzers import make_analyzer
        from bot.pipeline import analyse_ref
        from bot.sources import open_source

        chosen = make_analyzer(settings, obj.store, analyzer)  # a configuration error before any connection
        source = open_source(settings, obj.store, parsed.repo, git_dir)
        try:
            return await analyse_ref(
                source,
                obj.store,
                chosen,
                parsed,
                branch=await pick_branch(source, branch, settings),
                lang=lang,
                refresh=refresh,
            )
        finally:
            await source.aclose()
            await chosen.aclose()

    commit, analysis = run_async(go())
    from bot.settings import zone

    tz = zone(settings.digest_tz)
    if fmt == "json":
        write_output(dumps(render_commit_json(commit, analysis, tz=tz)), None)
    else:
        write_output(render_commit(commit, analysis, lang, heading_level=2, tz=tz), None)


@cli.command()
@click.option("--platform", type=click.Choice(["slack", "discord"]), required=True)
@click.option("--channel", required=True, metavar="ID", help="Channel ID (Slack C…, Discord snowflake).")
@source_options
@click.option("--date", "day", metavar="YYYY-MM-DD", help="Calendar day in --tz (default: yesterday).")
@click.option("--tz", metavar="ZONE", help="IANA time zone of the day (default: DIGEST_TZ, Asia/Shanghai).")
@click.pass_obj
@user_errors
def post(obj: Ctx, platform, channel, repo, git_dir, branch, lang, analyzer, refresh, day, tz) -> None:
    """Post a day's digest into a Slack or Discord channel now.

    A parent message with the counts and the high items; in its thread one card per high commit, the
    medium commits, and the full report as a file. Posting the same digest again posts nothing new; an
    interrupted post resumes with what is missing.
    """
    from bot.settings import zone

    settings = obj.settings
    zone_info = zone(tz or settings.digest_tz)
    the_day = parse_day(day) if day else yesterday(zone_info)
    lang = lang or settings.digest_lang
    bars = StageBars(sys.stderr.isatty())

    async def go():
        from bot.posting import post_digest

        async with open_poster(platform, settings) as poster:  # fail on a bad token before any work
            result = await build_day(
                obj, repo, git_dir, branch, analyzer, the_day, zone_info, lang, refresh, bars
            )
            return result, await post_digest(poster, obj.store, channel, result)

    result, posted = run_async(go())
    echo_err(
        f"{result.repo} {result.day}: {result.stats['total']} commits; posted {len(posted.posted)} item(s)"
        f" to {platform}:{channel}, {len(posted.skipped)} already there"
    )


@cli.command()
@click.option(
    "--config",
    type=click.Path(path_type=Path),
    help="Subscriptions file (default: DIGEST_CONFIG). See digest.example.toml.",
)
@click.pass_obj
@user_errors
def run(obj: Ctx, config: Path | None) -> None:
    """Run the bot: the daily schedule plus the Slack and/or Discord adapters whose tokens are set.

    Each subscription's digest is posted once a day at its time in its zone; missed days are caught
    up at start-up (DIGEST_CATCHUP_DAYS). Stop with Ctrl-C or SIGTERM: in-flight posts finish.
    """
    from bot.service import install_signal_handlers, load_subscriptions, serve

    obj.verbose = max(obj.verbose, 1)  # the service logs one line per digest
    settings = obj.settings
    subscriptions = load_subscriptions(settings, config)

    async def go() -> None:
        stop = asyncio.Event()
        install_signal_handlers(stop)
        await serve(settings, obj.store, subscriptions, stop=stop)

    run_async(go())


@cli.command()
@click.option(
    "--config", type=click.Path(path_type=Path), help="Subscriptions file (default: DIGEST_CONFIG)."
)
@click.pass_obj
@user_errors
def status(obj: Ctx, config: Path | None) -> None:
    """Subscriptions, the last digest of each with its outcome, the next run, and LLM usage (7 days)."""
    from bot.service import load_subscriptions
    from bot.status import render_status

    settings = obj.settings
    write_output(render_status(settings, obj.store, load_subscriptions(settings, config)), None)


async def build_day(
    obj: Ctx, repo, git_dir, branch, analyzer, day, zone_info, lang, refresh, bars: StageBars
):
    """The day's digest from the source options (shared by `digest` and `post`)."""
    from bot.analyzers import make_analyzer
    from bot.pipeline import build_digest
    from bot.sources import open_source

    settings = obj.settings
    chosen = make_analyzer(settings, obj.store, analyzer)  # a configuration error before any connection
    source = open_source(settings, obj.store, repo or settings.digest_repo, git_dir)
    try:
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
        )
    finally:
        bars.close()
        await source.aclose()
        await chosen.aclose()


def open_poster(platform: str, settings: Any):
    if platform == "slack":
        from adapters.slack_app import open_slack_poster

        return open_slack_poster(settings)
    from adapters.discord_bot import open_discord_poster

    return open_discord_poster(settings)


def main() -> None:
    cli(prog_name="digestbot")


if __name__ == "__main__":
    main()
