"""`python -m bot.cli`: the `digestbot` command without its console script (tests, a checkout)."""

from bot.cli.main import script

script()
