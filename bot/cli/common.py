"""What every `digestbot` verb shares: the one-line error contract (every user error is one line on
stderr and exit code 2, a broken pipe is quiet, an unexpected error is one masked line), the context a
verb gets (settings, the store opened for reading or writing, where output goes), progress bars, and
the options several verbs take (global, source, day, format, --out, --config).

Over 400 lines because it is what every verb shares: the error contract, the context, the options and their
parsing.
"""

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
from pathlib import Path
from typing import Any, ClassVar

import click

from analysis.errors import DigestError
from analysis.langs import LANGS
from analysis.window import parse_day, yesterday
from bot.digest.choices import ANALYZER_CHOICES

log = logging.getLogger("digestbot")

# HEAD, HEAD~2, main, origin/main, release/v1.2: git names `analyze` resolves on the source
# A branch or tag name as `analyze` takes one: git allows letters of any script (`修复/登录`, `café`); never a
# leading "-" (an option to git).
GIT_NAME = re.compile(r"\w[\w./~^-]*")

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
    """The coroutine's result, run in a new event loop. Its main task ends with nothing: asyncio.run,
    when it restores Ctrl-C's handler, has that handler (which holds the task) formatted into an error
    message it drops, and the task's result with it: a day's digest is 10-20 ms of text after its last
    answer, a replayed eval's far more (issue 21)."""
    result: list[Any] = []

    async def main() -> None:
        result.append(await coro)

    asyncio.run(main())
    return result[0]


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
            self._store = Store(":memory:" if self.missing_db else path, migrate=False)
        return self._store

    missing_db = False

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

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


def no_database(obj: Ctx, verb: str) -> None:
    """Exit 1 saying where the service's database is: a read-only verb run outside the service's
    environment (another DIGEST_DB) read an empty one as "all is well" or "no model calls"."""
    echo_err(
        f"no database at {obj.settings.digest_db}: nothing has run on it. The service's is the DIGEST_DB"
        " of its environment (the image: /data/digest.db; the systemd unit: /var/lib/digestbot/digest.db):"
        f" run {verb} there, or with --db pointing at it",
        logging.WARNING,
    )
    sys.exit(1)


def warn_half_configured(settings: Any) -> None:
    """A model key without DIGEST_MODEL (or a model without a key) used to fall back to the heuristic
    without a word: the operator learnt it from the reports' depth."""
    if settings.llm_half_configured:
        log.warning("%s: the heuristic analyser ranks the commits", settings.llm_half_configured)


def warn_zone(name: str, where: str = "DIGEST_TZ") -> None:
    """A zone accepted but seldom meant (EST: never daylight-saving; localtime: this host's), said on stderr,
    never in the report; each subscription's own zone is said by the scheduler when it schedules it."""
    from analysis.labels import zone_warning

    if odd := zone_warning("en", name):
        log.warning("%s: %s", where, odd)


def the_zone(settings: Any, tz: str | None, where: str | None = None):
    """The zone of --tz, else DIGEST_TZ (`where` names another origin, such as a subscription), its
    warning said once."""
    from bot.config.settings import zone

    zone_info = zone(tz or settings.digest_tz)
    warn_zone(zone_info.key, where or ("--tz" if tz else "DIGEST_TZ"))
    return zone_info


def no_empty_zone(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """`--tz ''` (an unset shell variable) read as "no --tz" and the day was DIGEST_TZ's without a word."""
    if value is not None and not value.strip():
        raise click.BadParameter(
            "empty: name a zone (Asia/Shanghai, UTC, UTC+8) or leave --tz out for DIGEST_TZ"
        )
    return value


@contextlib.asynccontextmanager
async def opened(
    obj: Ctx, analyzer: str, repo: str | None, git_dir: Path | None
) -> AsyncIterator[tuple[Any, Any]]:
    """The analyser (made first: a configuration error before any connection) and the commit source
    of the source options, both closed at the end."""
    from bot.app import make_analyzer, open_source

    if analyzer == "auto":
        warn_half_configured(obj.settings)
    chosen = make_analyzer(obj.settings, obj.store, analyzer)
    source = open_source(obj.settings, obj.store, repo, git_dir)
    try:
        yield source, chosen
    finally:
        await source.aclose()
        await chosen.aclose()


class StageBars:
    """Progress bars on stderr, only when stderr is a terminal (never in pipes or CI logs)."""

    LABELS: ClassVar[dict[str, str]] = {"fetch": "fetching ", "history": "history  ", "analyse": "analysing"}

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.bars: dict[str, Any] = {}

    def __bool__(self) -> bool:
        # Disabled, it is no progress callback at all (`progress if progress else None`): a source then
        # reports nothing, where each report woke the event loop from a reader thread for nothing.
        return self.enabled

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
    fn = click.option(
        "--tz", metavar="ZONE", callback=no_empty_zone, help="IANA time zone of the day (default: DIGEST_TZ)."
    )(fn)
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

config_option = click.option(
    "--config",
    type=click.Path(path_type=Path),
    help="Subscriptions file (default: DIGEST_CONFIG). See digest.example.toml.",
)


# -- helpers -----------------------------------------------------------------------------------
def the_day_of(settings: Any, day: str | None, tz: str | None, where: str | None = None):
    from analysis.window import refuse_future

    zone_info = the_zone(settings, tz, where)
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
        base, walked = re.match(r"(.*?)((?:[~^]\d*)*)$", name).groups()  # type: ignore[union-attr]
        if walked and base:  # HEAD~100 on a shorter history
            raise CliError(
                f"cannot read {name!r}: {base!r} has fewer commits than that behind it in {source.repo}"
                " (or no branch or tag is named so)"
            ) from None
        raise CliError(
            f"cannot read {name!r} as a commit: not a SHA, #PR, commit URL or owner/name@sha, and no"
            f" branch or tag of that name in {source.repo}"
        ) from None
