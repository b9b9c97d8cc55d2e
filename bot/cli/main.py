"""The `digestbot` command: the group and its verbs, one module per verb (or pair of verbs) beside this
one. Every user error is one line on stderr and exit code 2 (bot/cli/common.py)."""

from __future__ import annotations

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
from bot.cli.subscriptions import unsubscribe
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


for _verb in (digest, analyze, post, run, status, unsubscribe, logs, weekly, eval_command):
    cli.add_command(_verb)


def main() -> None:
    """The `digestbot` command, ending in SystemExit like any click program (tests run it in-process).
    The store is closed when the verb ends, so its write-ahead log is folded into the database file (a
    copy or backup of that one file holds every row)."""
    obj = Ctx()
    try:
        cli(prog_name="digestbot", obj=obj)
    except BrokenPipeError:  # raised outside a verb (help text, version)
        quiet_broken_pipe()
    finally:
        obj.close()


def script() -> None:
    """The `digestbot` console script and `python -m bot.cli`: `main`, then the process ends at once
    with its exit status, output flushed, skipping the interpreter's teardown (bot/cli/exit.py)."""
    from bot.cli.exit import end_process

    try:
        main()
    except SystemExit as exc:
        end_process(exc.code)
    end_process(0)


if __name__ == "__main__":
    script()
