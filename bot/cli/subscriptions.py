"""`digestbot unsubscribe`: remove a subscription made in chat, by the name `digestbot status` shows,
when chat cannot (the bot is down, the channel is gone, or the subscription is broken)."""

from __future__ import annotations

import click

from bot.cli.common import CliError, Ctx, DigestCommand, global_options, user_errors


@click.command(cls=DigestCommand)
@click.argument("names", nargs=-1, required=True, metavar="NAME...")
@global_options
@click.pass_obj
@user_errors
def unsubscribe(obj: Ctx, names: tuple[str, ...]) -> None:
    """Remove subscriptions made in chat with /digest subscribe, by name as `digestbot status` shows
    them (chat:<platform>:<channel>:<owner/name>). A running service drops their schedule within 30 s.

        digestbot unsubscribe chat:slack:C0123456789:owner/name

    Subscriptions of the config file are changed in that file.
    """
    from bot.config.subscriptions import ChatSubscriptions

    store = obj.reader
    chat = ChatSubscriptions(store)
    known = {s.name for s in chat.all()} if not obj.missing_db else set()
    for name in names:
        if not name.startswith("chat:"):
            raise CliError(
                f"{name!r} is not a chat subscription (those are named chat:<platform>:<channel>:<repo>);"
                " a subscription of the config file is changed in that file"
            )
        if name not in known:
            raise CliError(f"no chat subscription named {name!r}: `digestbot status` lists them")
    for name in names:
        _, platform, channel, repo = name.split(":", 3)
        chat.remove(platform, channel, repo)
    obj.write("".join(f"removed {name}\n" for name in names))
