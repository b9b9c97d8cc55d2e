"""Subscriptions: which repository's digest goes to which channels, when, in which zone and language.

Two origins, one model: the TOML configuration file (read at start-up) and `/digest subscribe` in chat
(stored in SQLite, applied without a restart). The registry merges both.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from analysis.errors import InputError
from analysis.models import Commit
from bot.config.settings import zone
from bot.store.db import Store, utcnow

log = logging.getLogger(__name__)

DEFAULT_TIME = "09:00"
HHMM = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")  # a daily time; any other schedule is a cron expression
# The weekly roll-up's time: a weekday and HH:MM in the subscription's zone ("mon 09:00").
WEEKLY = re.compile(r"^(mon|tue|wed|thu|fri|sat|sun)\s+([01]?\d|2[0-3]):([0-5]\d)$", re.IGNORECASE)


def check_weekly(value: str) -> str:
    value = " ".join(value.split()).lower()
    if not WEEKLY.match(value):
        raise ValueError(f'weekly must be a weekday and HH:MM, e.g. "mon 09:00", not {value!r}')
    return value


@dataclass(frozen=True, slots=True)
class Destination:
    platform: str  # slack | discord
    channel: str


@dataclass(frozen=True, slots=True)
class Filters:
    include_paths: tuple[str, ...] = ()  # .gitignore patterns: keep a commit when any changed file matches
    exclude_paths: tuple[str, ...] = ()  # .gitignore patterns: drop a commit when every changed file matches
    ignore_authors: tuple[str, ...] = ()  # names or logins, globs allowed (e.g. "*[bot]")
    ignore_titles: tuple[str, ...] = ()  # regular expressions on the title

    def keep(self, commit: Commit) -> bool:
        who = [w.lower() for w in (commit.author, commit.author_login or "") if w]
        if any(glob(pat.lower()).fullmatch(w) for pat in self.ignore_authors for w in who):
            return False
        if any(re.search(pat, commit.title) for pat in self.ignore_titles):
            return False
        paths = [f.path for f in commit.files]
        if self.include_paths and paths and not any(map(path_spec(self.include_paths).match_file, paths)):
            return False
        return not (
            self.exclude_paths and paths and all(map(path_spec(self.exclude_paths).match_file, paths))
        )

    @property
    def active(self) -> bool:
        return bool(self.include_paths or self.exclude_paths or self.ignore_authors or self.ignore_titles)


@functools.cache
def path_spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """Path filters are .gitignore patterns (pathspec): `docs/` or `docs/*` is everything under any docs
    folder, `/docs/` only the top-level one, `**/*.md` Markdown anywhere. Raises ValueError for a bad one."""
    return pathspec.GitIgnoreSpec.from_lines(patterns)


@functools.cache
def glob(pattern: str) -> re.Pattern[str]:
    """Author globs: only `*` and `?`. Our own, not fnmatch or pathspec, because brackets must stay
    literal: bot logins look like `dependabot[bot]`, which fnmatch would read as a character class."""
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern))


@dataclass(frozen=True, slots=True)
class Subscription:
    name: str  # stable id: the file's [[subscription]] name, or "chat:<platform>:<channel>:<repo>"
    repo: str
    timezone: str
    schedule: str  # "HH:MM" or a 5-field cron expression, in `timezone`
    lang: str
    destinations: tuple[Destination, ...]
    branch: str | None = None  # None: the repository's default branch
    git_dir: Path | None = None  # read a local clone instead of GitHub
    filters: Filters = field(default_factory=Filters)
    origin: str = "file"  # file | chat
    post_empty: bool = True  # False: a day without commits posts nothing
    notify_failures: bool = True  # a failed run says so once in the channels, not only in the log
    weekly: str | None = None  # "mon 09:00": post the previous ISO week's roll-up then (bot/digest/weekly.py)


def on_console(sub: Subscription) -> Subscription:
    """The subscription with the console as its only channel (`digestbot run --console`)."""
    from dataclasses import replace

    return replace(sub, destinations=(Destination("console", "stdout"),))


class ChatSubscriptions:
    """The subscriptions made from chat, in SQLite. Read fresh on every call; while the store is busy (its
    connection held by a write waiting for another process), the last rows read serve instead: a chat
    command reads them before its acknowledgement, which Slack and Discord want within 3 s."""

    def __init__(self, store: Store):
        self.store = store
        self._last: list[dict] | None = None

    def check_room(self, platform: str, channel: str, repo: str, per_channel: int, most: int) -> None:
        """InputError when a new subscription of `repo` here would pass a cap (one already here is a change
        of its time or language, not a new one): a flood of `/digest subscribe` is a flood of daily
        digests and their model calls."""
        rows = self.store.query("SELECT platform, channel, repo FROM subscriptions")
        if any((r["platform"], r["channel"], r["repo"]) == (platform, channel, repo) for r in rows):
            return
        if most == 0 or per_channel == 0:
            raise InputError(
                "subscriptions are not made in chat here: the bot's operator lists them in its config file"
            )
        here = sum((r["platform"], r["channel"]) == (platform, channel) for r in rows)
        if here >= per_channel:
            raise InputError(
                f"this channel has {here} subscriptions, the most it may have (CHAT_SUBSCRIPTIONS_PER_CHANNEL):"
                " /digest unsubscribe one first"
            )
        if len(rows) >= most:
            raise InputError(
                f"the bot has {len(rows)} chat subscriptions, the most it may have (CHAT_SUBSCRIPTIONS_MAX):"
                " ask its operator"
            )

    def add(
        self, platform: str, channel: str, repo: str, *, time: str | None, tz: str, lang: str, by: str = ""
    ) -> Subscription:
        """The subscription, stored (a repository subscribed here already: its time, zone and language
        changed)."""
        row = {
            "platform": platform,
            "channel": channel,
            "repo": repo,
            "branch": None,
            "schedule": time or DEFAULT_TIME,
            "timezone": zone(tz).key,  # canonical: the scheduler's ZoneInfo matches names by case
            "lang": lang,
            "created_at": utcnow().isoformat(),
            "created_by": by,
        }
        existing = self.store.query(
            "SELECT id FROM subscriptions WHERE platform = ? AND channel = ? AND repo = ?",
            [platform, channel, repo],
        )
        with self.store.transaction():
            if existing:
                self.store.db["subscriptions"].update(existing[0]["id"], row)
            else:
                self.store.db["subscriptions"].insert(row)
        return _from_row(row)

    def remove(self, platform: str, channel: str, repo: str) -> bool:
        with self.store.transaction():
            cursor = self.store.db.execute(
                "DELETE FROM subscriptions WHERE platform = ? AND channel = ? AND repo = ?",
                [platform, channel, repo],
            )
        return cursor.rowcount > 0

    def all(self) -> list[Subscription]:
        sql = "SELECT * FROM subscriptions ORDER BY id"
        rows = self.store.query_unless_busy(sql, [], self.store.LOOP_WAIT)  # then the last rows read
        if rows is None:
            if self._last is not None:
                log.info("store busy: chat subscriptions as last read")
                return [_from_row(r) for r in self._last]
            rows = self.store.query(sql)  # nothing read yet: wait for it
        self._last = rows
        return [_from_row(r) for r in rows]


def canonical_zone(name: str) -> str:
    """The zone's canonical name ("europe/berlin" → "Europe/Berlin"); a name no zone has is kept as it
    is, for the scheduler and `status` to name as broken."""
    try:
        return zone(name).key
    except InputError:
        return name


def _from_row(row: dict) -> Subscription:
    return Subscription(
        name=f"chat:{row['platform']}:{row['channel']}:{row['repo']}",
        repo=row["repo"],
        # Canonical when read too: rows stored before `/digest subscribe` canonicalised hold the zone as
        # it was typed, which ZoneInfo refuses on a case-sensitive file system.
        timezone=canonical_zone(row["timezone"]),
        schedule=row["schedule"],
        lang=row["lang"],
        destinations=(Destination(row["platform"], row["channel"]),),
        branch=row.get("branch"),
        origin="chat",
    )


class Registry:
    """File subscriptions plus chat subscriptions, read fresh on every call (chat changes apply at once)."""

    def __init__(self, store: Store, file_subscriptions: list[Subscription] | None = None):
        self.chat = ChatSubscriptions(store)
        self.file_subscriptions = list(file_subscriptions or [])

    def all(self) -> list[Subscription]:
        return [*self.file_subscriptions, *self.chat.all()]

    def for_channel(self, platform: str, channel: str) -> list[Subscription]:
        return [s for s in self.all() if Destination(platform, channel) in s.destinations]

    def repo_for_channel(self, platform: str, channel: str) -> str | None:
        subs = self.for_channel(platform, channel)
        return subs[0].repo if subs else None

    def lang_for_channel(self, platform: str, channel: str) -> str | None:
        subs = self.for_channel(platform, channel)
        return subs[0].lang if subs else None

    def git_dirs(self) -> dict[str, Path]:
        return {s.repo: s.git_dir for s in self.file_subscriptions if s.git_dir is not None}

    def check_removable(self, platform: str, channel: str, repo: str) -> None:
        if any(
            s.repo == repo
            for s in self.file_subscriptions
            if Destination(platform, channel) in s.destinations
        ):
            raise InputError(f"{repo} is subscribed here by the configuration file; change it there")
