"""The `digestbot` command: the group and its verbs, one module per verb (or pair of verbs) beside this
one. Every user error is one line on stderr and exit code 2 (bot/cli/common.py)."""

from __future__ import annotations

import atexit
import logging
import os
import sys

import click

from bot.cli.common import (
    Ctx,
    DigestGroup,
    global_options,
    quiet_broken_pipe,
)
from bot.cli.digest import analyze, digest
from bot.cli.evaluate import eval_command
from bot.cli.logs import logs
from bot.cli.post import post
from bot.cli.run import run, status
from bot.cli.weekly import weekly


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


for _verb in (digest, analyze, post, run, status, logs, weekly, eval_command):
    cli.add_command(_verb)


_status: int | None = None  # the exit status of a `main()` that ended cleanly


def main() -> None:
    """The `digestbot` console script: the process ends when it returns. Once the verb is done, worker
    threads joined and every exit handler run, the process ends at once (`_end_now`) instead of freeing
    every module and object one by one — a quarter of a second of a short command's wall time with the
    LLM client's SDK loaded, which a person waits for and nothing needs. An unexpected error or signal
    takes the interpreter's own way out (traceback, status)."""
    global _status
    obj = Ctx()
    atexit.register(_end_now, obj)  # registered first, so it runs after every handler the run registers
    try:
        try:
            cli(prog_name="digestbot", obj=obj)
        except BrokenPipeError:  # raised outside a verb (help text, version)
            quiet_broken_pipe()
    except SystemExit as done:
        _status = done.code if isinstance(done.code, int) else 0 if done.code is None else 1
        raise
    except BaseException:
        atexit.unregister(_end_now)
        raise
    _status = 0


def _end_now(obj: Ctx) -> None:
    """The end of the interpreter's exit without its teardown: Python does not promise to finalise the
    objects still alive at exit anyway. What the teardown would still do that matters, done here: the
    store closed (its write-ahead log folded into the database file, which a copy or backup of that one
    file then holds whole), the log handlers (registered at import, before this) and the standard
    streams flushed."""
    if _status is None:
        return
    obj.close()
    logging.shutdown()
    status = _status
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 120  # what the interpreter exits with when the final flush fails
    os._exit(status)


if __name__ == "__main__":
    main()
