"""Whether a commit was written by an automated account (a bot): a fact about the change, not a person.

Dependency bots, release-notes updaters and formatting bots can make up half of a busy branch's
history. Their commits are ranked by what they change like any other, but they are left out of the
baseline a commit's risk score is compared with (analysis/history/index.py): a branch where half the commits
are one-line bot updates would otherwise place every human change in its top half.

An identity is automated when its GitHub login or its name ends in `[bot]` (GitHub Apps:
`dependabot[bot]`, `github-actions[bot]`), the name is a bot's (`renovate-bot`, `Some Bot`), or the
e-mail address is a GitHub App's noreply address or a bare noreply / no-reply mailbox. A person's own
GitHub noreply address (`12345+ada@users.noreply.github.com`) is not.
"""

from __future__ import annotations

import re

_BOT_NAME = re.compile(r"(?:\[bot\]|[-_ .]bot|^bot)$", re.IGNORECASE)
# Accounts that commit as themselves rather than as a GitHub App: the workflow token's default identity.
_BOT_ACCOUNTS = frozenset({"github-actions", "actions-user", "dependabot", "renovate", "pre-commit-ci"})
_BOT_MAIL = re.compile(r"\[bot\]@|^(?:no-?reply|bot|bots)@", re.IGNORECASE)
_NOREPLY = re.compile(r"^(?:\d+\+)?(?P<login>[^@]+)@users\.noreply\.github\.com$", re.IGNORECASE)


def is_automated(name: str | None = None, login: str | None = None, email: str | None = None) -> bool:
    """True when the name, GitHub login or e-mail address is an automated account's."""
    for who in (login, name):
        if who and (_BOT_NAME.search(who.strip()) or who.strip().lower() in _BOT_ACCOUNTS):
            return True
    return bool(email and _BOT_MAIL.search(email.strip()))


def login_from_email(email: str | None) -> str | None:
    """The GitHub login in a GitHub noreply address (`12345+ada@users.noreply.github.com` → `ada`)."""
    m = _NOREPLY.match(email.strip()) if email else None
    return m.group("login") if m else None
