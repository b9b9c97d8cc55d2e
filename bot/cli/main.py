"""The `digestbot` command line. Every user error is one line on stderr and exit code 2."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import re
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from datetime import date
from pathlib import Path
from typing import Any, ClassVar

import click

from analysis.errors import DigestError
from analysis.labels import LANGS
from analysis.window import parse_day, yesterday
from bot.digest.analyzers import ANALYZER_CHOICES
from bot.digest.pipeline import pick_branch

log = logging.getLogger("digestbot")

# HEAD, HEAD~2, main, origin/main, release/v1.2: git names `analyze` resolves on the source
GIT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/~^-]*")
BROKEN_PIPE_EXIT = 141  # what a shell reports for a process ended by SIGPIPE (128 + 13)


class CliError(click.ClickException):
    exit_code = 2

    def show(self, file: Any = None) -> None:
        echo_err(f"error: {self.format_message()}")


def echo_err(line: str, level: int = logging.ERROR) -> None:
    """Every line we print on stderr, with every configured secret masked (whatever put it there). With
    LOG_FORMAT=json it is a JSON log line like every other (the fatal one too), whatever the -v level."""
    from bot.monitoring.logs import json_lines
    from bot.ports.secrets import scrub

    if json_lines():
        log.handle(log.makeRecord(log.name, level, "(cli)", 0, line.removeprefix("error: "), None, None))
        return
    click.echo(scrub(line), err=True)


def user_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn DigestError (and Ctrl-C) into one clean line; unexpected errors into one line too."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DigestError as exc:
            raise CliError(str(exc)) from None
        except BrokenPipeError:
            quiet_broken_pipe()
        except sqlite3.DatabaseError as exc:  # busy or damaged, found mid-run: what it is, what to do
            from bot.store.db import Store
            from bot.store.health import database_error

            ctx = next((a for a in args if isinstance(a, Ctx)), None)
            path = ctx.db_path if ctx is not None else "(unknown)"
            raise CliError(str(database_error(exc, path, Store.BUSY_TIMEOUT))) from None
        except KeyboardInterrupt:
            echo_err("interrupted")
            sys.exit(130)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:  # a bug: still one line, traceback only with -vv
            log.debug("unexpected failure", exc_info=True)
            echo_err(f"error: unexpected {type(exc).__name__}: {exc} (run with -vv for details)")
            sys.exit(1)

    return wrapper


def quiet_broken_pipe(code: int = BROKEN_PIPE_EXIT) -> None:
    """The reader went away (`digestbot digest | head`): stop quietly, as Unix tools do. stdout is
    pointed at /dev/null so the interpreter's final flush cannot complain either."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    sys.exit(code)


def run_async(coro: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coro)


class Ctx:
    """Lazily built settings and store, so `--help` works without any configuration."""

    def __init__(self, db: Path | None = None, verbose: int = 0):
        self.db_override = db
        self.verbose = verbose
        self._settings = None
        self._store = None

    @property
    def settings(self):
        if self._settings is None:
            from bot.config.settings import load_settings
            from bot.monitoring.logs import secrets_of, setup_logging

            overrides = {"digest_db": self.db_override} if self.db_override else {}
            self._settings = load_settings(**overrides)
            setup_logging(self.verbose, secrets_of(self._settings), self._settings.log_format)
        return self._settings

    @property
    def db_path(self) -> Path | str:
        if self.db_override:
            return self.db_override
        return self._settings.digest_db if self._settings is not None else "(DIGEST_DB)"

    @property
    def store(self):
        if self._store is None:
            from bot.service.retention import apply_prompt_policy
            from bot.store.db import Store

            self._store = Store(self.settings.digest_db)
            apply_prompt_policy(self._store, self.settings)  # LLM_LOG_PROMPTS, on every CLI write
        return self._store

    @property
    def reader(self):
        """The store for verbs that only read (status, logs): a database that does not exist is not
        created (nor its folders); an empty one in memory stands in and `missing_db` says so."""
        if self._store is None:
            from bot.store.db import Store

            path = Path(self.settings.digest_db).expanduser()
            self.missing_db = not path.exists()
            self._store = Store(":memory:" if self.missing_db else path)
        return self._store

    missing_db = False

    def protected(self) -> list[Path]:
        """Every database file this process could use, which no output may overwrite: --db, DIGEST_DB
        (environment or .env), the default path, and their -wal/-shm/-journal."""
        from bot.cli.output import store_files
        from bot.config.settings import default_db_path

        return store_files(
            self.db_override, os.environ.get("DIGEST_DB"), default_db_path(), self.settings.digest_db
        )

    def check_output(self, out: str | Path | None, option: str = "--out") -> None:
        from bot.cli.output import check_target

        check_target(out, protected=self.protected(), option=option)

    def write(self, text: str, out: str | None = None, *, rich_markdown: bool = False) -> None:
        """stdout or --out (bot/cli/output.py), never over the store's own files. Markdown for a person at
        a terminal is rendered for reading; piped or written to a file it stays plain Markdown."""
        from bot.cli.output import STDOUT, write_text
        from bot.ports.secrets import scrub

        text = scrub(text)  # a commit message or a service could quote a configured secret
        to_terminal = (out is None or out == STDOUT) and sys.stdout.isatty()
        # rich writes text through the stream's own encoding: only where that can carry any report
        to_terminal = to_terminal and (sys.stdout.encoding or "").lower().replace("-", "") == "utf8"
        if rich_markdown and to_terminal:
            from bot.cli.output import show_markdown

            show_markdown(text)
            return
        write_text(text, out, protected=self.protected() if out not in (None, STDOUT) else [])


@contextlib.asynccontextmanager
async def opened(
    obj: Ctx, analyzer: str, repo: str | None, git_dir: Path | None
) -> AsyncIterator[tuple[Any, Any]]:
    """The analyser (made first: a configuration error before any connection) and the commit source
    of the source options, both closed at the end."""
    from bot.app import make_analyzer, open_source

    chosen = make_analyzer(obj.settings, obj.store, analyzer)
    source = open_source(obj.settings, obj.store, repo, git_dir)
    try:
        yield source, chosen
    finally:
        await source.aclose()
        await chosen.aclose()


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


# -- the error contract for click's own errors ------------------------------------------------------
class OutputPath(click.ParamType):
    """A file the command writes (--out, --chart, ...): DigestCommand checks every one against the
    write guard (bot/cli/output.py) before the command starts, so a refused command writes nothing."""

    name = "file"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return value


def one_line_usage(exc: click.UsageError) -> CliError:
    """click's usage error (bad choice, missing option, unknown option or verb) as our one line."""
    where = exc.ctx.command_path if exc.ctx is not None else "digestbot"
    message = " ".join(exc.format_message().split())
    return CliError(f"{message} (see: {where} --help)")


def parsed(make_context: Callable[..., click.Context], *args: Any, **kwargs: Any) -> click.Context:
    """A context parsed by click, its usage errors in one line. Help and the version print while
    parsing: a reader that leaves meanwhile (`digestbot --help | head -1`) got what it asked for."""
    try:
        return make_context(*args, **kwargs)
    except click.exceptions.NoArgsIsHelpError:
        raise
    except click.UsageError as exc:
        raise one_line_usage(exc) from None
    except BrokenPipeError:
        quiet_broken_pipe(0)
        raise


class DigestCommand(click.Command):
    """A verb: click's usage errors in one line (exit 2), and every output path checked first."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        return parsed(super().make_context, *args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        outputs = [
            (p, ctx.params.get(p.name or ""))
            for p in self.params
            if isinstance(p.type, OutputPath) and ctx.params.get(p.name or "") is not None
        ]
        if outputs:
            check_outputs(ctx.ensure_object(Ctx), [(value, p.opts[0]) for p, value in outputs])
        try:
            return super().invoke(ctx)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:
            raise one_line_usage(exc) from None


@user_errors
def check_outputs(obj: Ctx, outputs: list[tuple[Any, str]]) -> None:
    for value, option in outputs:
        obj.check_output(value, option)


class DigestGroup(click.Group):
    """The `digestbot` group: the same one-line contract for its own usage errors (click's standalone
    mode would print usage and a hint around them)."""

    command_class = DigestCommand

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        return parsed(super().make_context, *args, **kwargs)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            raise one_line_usage(exc) from None

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            echo_err("interrupted")
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)


# -- shared options ----------------------------------------------------------------------------
def _set_db(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    if value is not None:
        ctx.ensure_object(Ctx).db_override = value


def _add_verbose(ctx: click.Context, _param: click.Parameter, value: int) -> None:
    ctx.ensure_object(Ctx).verbose += value or 0


def global_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """-v and --db, accepted before the verb (`digestbot -v digest`) and after it (`digest -v`)."""
    fn = click.option(
        "--db",
        type=click.Path(path_type=Path, dir_okay=False),
        expose_value=False,
        callback=_set_db,
        help="SQLite database (default: DIGEST_DB).",
    )(fn)
    return click.option(
        "-v",
        "--verbose",
        count=True,
        expose_value=False,
        callback=_add_verbose,
        help="-v for progress logs, -vv for debug (tracebacks).",
    )(fn)


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


def day_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--tz", metavar="ZONE", help="IANA time zone of the day (default: DIGEST_TZ).")(fn)
    return click.option(
        "--date", "day", metavar="YYYY-MM-DD", help="Calendar day in --tz (default: yesterday)."
    )(fn)


def format_option(*choices: str, default: str, schema: bool = True) -> Callable[..., Any]:
    """schema: the command's JSON has its schema in docs/json.md (a test holds each such link to it)."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default=default,
        show_default=True,
        help="json is for programs: its schema is in docs/json.md." if schema else "json is for programs.",
    )


out_option = click.option(
    "--out",
    type=OutputPath(),
    metavar="FILE",
    help="Write to FILE instead of stdout (- is stdout). A regular file is replaced atomically,"
    " keeping its mode; a symlink's target is written; the database is refused.",
)


@click.group(
    cls=DigestGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@global_options
@click.version_option(package_name="digestbot")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """digestbot: a repository's daily commits as an LLM-ranked digest, for Slack, Discord or the console.

    Without any token it reads a local clone and ranks commits with a transparent heuristic:

        digestbot digest --git-dir . --date 2026-11-22 --tz UTC --lang en
    """
    ctx.ensure_object(Ctx)


@cli.command()
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


@cli.command()
@click.argument("refs", nargs=-1, required=True, metavar="REF...")
@source_options
@click.option("--tz", metavar="ZONE", help="Time zone of the dates shown (default: DIGEST_TZ).")
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
    from bot.config.settings import zone

    settings = obj.settings
    lang = lang or settings.digest_lang
    zone_info = zone(tz or settings.digest_tz)
    parsed = [parse_ref_or_name(r, repo or settings.digest_repo) for r in refs]
    repos = {p.repo for p in parsed if not isinstance(p, str) and p.repo}
    if len(repos) > 1:
        raise CliError(f"REFs name several repositories ({', '.join(sorted(repos))}): analyse one at a time")
    the_repo = repos.pop() if repos else repo or settings.digest_repo

    async def go():
        from analysis.refs import Ref
        from bot.digest.pipeline import analyse_ref

        async with opened(obj, analyzer, the_repo, git_dir) as (source, chosen):
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


@cli.command()
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
@format_option("text", "json", default="text")
@global_options
@click.pass_obj
@user_errors
def post(
    obj: Ctx, platform, channel, repo, git_dir, branch, lang, analyzer, refresh, day, tz, dry_run, repost, fmt
) -> None:
    """Post a day's digest into a Slack or Discord channel now.

    A parent message with the counts and the high items; in its thread one card per high commit, the
    medium commits, and the full report as a file. Posting the same digest again posts nothing new; an
    interrupted post resumes with what is missing. A day posted here is what its parent announced: a
    changed ranking (a new model, say) adds nothing unless --repost edits the parent first.
    """
    from analysis.render.json_report import dumps

    settings = obj.settings
    zone_info, the_day = the_day_of(settings, day, tz)
    lang = lang or settings.digest_lang
    bars = StageBars(sys.stderr.isatty())

    if dry_run:
        from bot.delivery.dry_run import preview, render_text

        result = run_async(
            build_day(obj, repo, git_dir, branch, analyzer, the_day, zone_info, lang, refresh, bars)
        )
        plan = preview(result, platform, channel, obj.store)
        obj.write(dumps(plan) if fmt == "json" else render_text(plan))
        return

    async def go():
        from bot.app import open_poster
        from bot.delivery.posting import post_digest

        async with open_poster(platform, settings) as poster:  # fail on a bad token before any work
            result = await build_day(
                obj, repo, git_dir, branch, analyzer, the_day, zone_info, lang, refresh, bars
            )
            return result, await post_digest(poster, obj.store, channel, result, repost=repost)

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
                }
            )
        )
        return
    edited = f", edited the {', '.join(posted.edited)}" if posted.edited else ""
    echo_err(
        f"{result.repo} {result.day}: {result.stats['total']} commits; posted {len(posted.posted)} item(s)"
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


config_option = click.option(
    "--config",
    type=click.Path(path_type=Path),
    help="Subscriptions file (default: DIGEST_CONFIG). See digest.example.toml.",
)


@cli.command()
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
    from bot.app import console_runtimes, local_clone, serve
    from bot.config.file import load_subscriptions
    from bot.config.subscriptions import Registry
    from bot.service.runner import install_signal_handlers
    from bot.service.status import check_subscriptions

    settings = obj.settings  # -v for a line per run (the unit and the image pass it)
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
    for sub, problem in problems:
        log.error("subscription %s is broken: %s", sub.name, problem)
    broken = [f"{sub.name}: {problem}" for sub, problem in problems if sub.origin == "file"]
    if broken:
        raise CliError(f"{len(broken)} subscription(s) broken — " + "; ".join(broken))

    runtimes = None
    if console:
        runtimes = console_runtimes(obj.write)

    async def go() -> None:
        stop = asyncio.Event()
        install_signal_handlers(stop)
        await serve(settings, obj.store, subscriptions, stop=stop, make_runtimes=runtimes)

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


@cli.command()
@config_option
@format_option("text", "json", default="text")
@global_options
@click.pass_obj
@user_errors
def status(obj: Ctx, config: Path | None, fmt: str) -> None:
    """Subscriptions with a check of each one's source and channels, the last digest of each with its
    outcome, the next run, and LLM usage (7 days). Exits 1 when a subscription is broken."""
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

    # for monitoring: a broken subscription, or one whose last run failed (the output says which)
    if any(
        s["problem"] or (s["last_run"] and s["last_run"]["status"] in FAILED) for s in data["subscriptions"]
    ):
        sys.exit(1)


@cli.command()
@click.option("--date", "day", metavar="YYYY-MM-DD", help="Only calls made on this day (in --tz).")
@click.option("--since", metavar="YYYY-MM-DD", help="Only calls made on or after this day (in --tz).")
@click.option("--until", metavar="YYYY-MM-DD", help="Only calls made on or before this day (in --tz).")
@click.option(
    "--tz", metavar="ZONE", help="Time zone of the days and of the times shown (default: DIGEST_TZ)."
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
    from bot.config.settings import zone
    from bot.store.llm_calls import (
        CallFilter,
        call_totals,
        check_choices,
        query_calls,
        render_calls,
        render_totals,
    )

    settings = obj.settings
    zone_info = zone(tz or settings.digest_tz)
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
        return
    text = render_calls(calls, zone_info, full=full, cut=cut)
    if usage:
        text += "\n" + render_totals(call_totals(store, wanted))
    obj.write(text)


# -- helpers -----------------------------------------------------------------------------------
def the_day_of(settings: Any, day: str | None, tz: str | None):
    from analysis.window import refuse_future
    from bot.config.settings import zone

    zone_info = zone(tz or settings.digest_tz)
    return zone_info, (refuse_future(parse_day(day), zone_info) if day else yesterday(zone_info))


def parse_ref_or_name(text: str, default_repo: str | None):
    """A Ref (analysis/refs.py) or, for HEAD and branch names, the name itself to resolve on the source."""
    from analysis.errors import InputError
    from analysis.refs import parse_ref

    try:
        return parse_ref(text, default_repo)
    except InputError:
        if GIT_NAME.fullmatch(text.strip()) and ".." not in text:
            return text.strip()
        raise


async def commit_named(source: Any, name: str):
    named = getattr(source, "commit_named", None)
    if named is None:
        raise CliError(f"{name!r}: this source resolves only SHAs and #PR")
    from analysis.errors import RefNotFound

    try:
        return await named(name)
    except RefNotFound:
        raise CliError(
            f"cannot read {name!r} as a commit: not a SHA, #PR, commit URL or owner/name@sha, and no"
            f" branch or tag of that name in {source.repo}"
        ) from None


@cli.command()
@source_options
@click.option("--week", metavar="YYYY-Www", help="ISO week in --tz (default: the last complete week).")
@click.option("--tz", metavar="ZONE", help="IANA time zone of the week (default: DIGEST_TZ, Asia/Shanghai).")
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
    from analysis.weekly import last_full_week, parse_week
    from analysis.window import refuse_future
    from bot.app import render_chart
    from bot.cli.output import write_bytes
    from bot.config.settings import zone
    from bot.digest.weekly import build_week

    settings = obj.settings
    zone_info = zone(tz or settings.digest_tz)
    year, number = parse_week(week) if week else last_full_week(yesterday(zone_info))
    monday = date.fromisocalendar(year, number, 1)
    refuse_future(monday, zone_info, what=f"week {year}-W{number:02d} (from {monday})")
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


async def build_day(
    obj: Ctx, repo, git_dir, branch, analyzer, day, zone_info, lang, refresh, bars: StageBars
):
    """The day's digest from the source options (shared by `digest` and `post`)."""
    from bot.digest.pipeline import build_digest

    settings = obj.settings
    try:
        async with opened(obj, analyzer, repo or settings.digest_repo, git_dir) as (source, chosen):
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
            )
    finally:
        bars.close()


@cli.command("eval")
@global_options
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
    from bot.config.settings import zone
    from bot.digest.evaluate import evaluate

    settings = obj.settings
    zone_info = zone(tz or settings.digest_tz)
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


def main() -> None:
    try:
        cli(prog_name="digestbot")
    except BrokenPipeError:  # raised outside a verb (help text, version)
        quiet_broken_pipe()


if __name__ == "__main__":
    main()
