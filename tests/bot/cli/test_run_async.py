"""run_async (bot/cli/common.py): a verb's coroutine run to its result, which is handed back as it is,
never formatted as text on the way (asyncio.run, restoring Ctrl-C's handler, formats the handler and its
task; a verb's result is a whole day's digest), and whose exception is raised as it is."""

from __future__ import annotations

import pytest

from bot.cli.common import run_async


class Counted:
    """A result that counts how often it is turned into text."""

    def __init__(self) -> None:
        self.formatted = 0

    def __repr__(self) -> str:
        self.formatted += 1
        return "Counted()"


def test_the_result_comes_back_as_it_is_and_is_never_formatted():
    made = Counted()

    async def verb() -> Counted:
        return made

    assert run_async(verb()) is made
    assert made.formatted == 0
    assert run_async(verb()) is made  # a second loop in the same process: the same
    assert made.formatted == 0


def test_none_is_a_result_too():
    async def verb() -> None:
        return None

    assert run_async(verb()) is None


def test_the_verbs_exception_is_raised_as_it_is():
    class Refused(Exception):
        pass

    async def verb() -> None:
        raise Refused("no")

    with pytest.raises(Refused, match="no"):
        run_async(verb())
