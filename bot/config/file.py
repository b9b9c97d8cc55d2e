"""The service's configuration file (TOML): subscriptions, validated at start-up with errors that
name the field. Secrets never live here: they stay in the environment."""

from __future__ import annotations

import difflib
import re
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from analysis.errors import ConfigError, InputError
from analysis.refs import REPO
from bot.config.schedule import cron_trigger
from bot.config.settings import Settings, not_utf8, zone
from bot.config.subscriptions import (
    DEFAULT_TIME,
    HHMM,
    Destination,
    Filters,
    Subscription,
    check_weekly,
    path_spec,
)

# A Slack conversation id: an upper-case letter (C public, G private, D direct) and upper-case letters or digits.
SLACK_ID = re.compile(r"[A-Z][A-Z0-9]*")


def slack_channel_problem(channel: str) -> str | None:
    """Why `channel` is not a Slack channel id, in one line, or None. chat.postMessage takes "#general",
    but the history read to resume a post takes the id and the events of /digest and thread questions
    carry it: a post recorded under the name would be posted again under the id."""
    channel = channel.strip()
    if channel.isdigit():  # Slack's ids start with a letter (C…, G…)
        return (
            f"Slack channel ids look like C0123ABCD, got {channel!r} (a Discord channel id? those go in"
            " discord_channels)"
        )
    if not SLACK_ID.fullmatch(channel):
        return (
            f"Slack channel ids look like C0123ABCD, got {channel!r} (a channel name? the id is at the bottom"
            " of the channel's details in Slack)"
        )
    return None


def check_schedule(value: str) -> str:
    """HH:MM, or a five-field cron expression (minute hour day month weekday)."""
    value = value.strip()
    if HHMM.match(value):
        return value
    if len(value.split()) == 1 and any(c.isdigit() for c in value):
        # one word with digits is a time of day meant ("25:00", "9am", "09:00:00"), not a cron expression
        raise ValueError("not a time of day: HH:MM on the 24-hour clock, 00:00 to 23:59 (e.g. 09:30)")
    try:
        trigger = cron_trigger(value)
    except ValueError as exc:
        raise ValueError(f"not HH:MM or a cron expression ({exc})") from None
    if trigger.get_next_fire_time(None, datetime.now(UTC)) is None:  # "0 9 30 2 *": February 30th
        raise ValueError(f"cron expression {value!r} never fires: no date matches it")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class FiltersModel(_Strict):
    include_paths: list[str] = Field(default_factory=list)
    exclude_paths: list[str] = Field(default_factory=list)
    ignore_authors: list[str] = Field(default_factory=list)
    ignore_titles: list[str] = Field(default_factory=list)

    @field_validator("include_paths", "exclude_paths")
    @classmethod
    def _path_patterns(cls, patterns: list[str]) -> list[str]:
        try:
            path_spec(tuple(patterns))
        except ValueError as exc:
            raise ValueError(f"bad path pattern: {exc}") from None
        return patterns

    @field_validator("ignore_titles")
    @classmethod
    def _regexes(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"bad regular expression {pattern!r}: {exc}") from None
        return patterns


class _When(_Strict):
    """What [defaults] and each [[subscription]] may both set, validated the same way in both."""

    timezone: str | None = None
    schedule: str | None = None
    lang: str | None = None
    branch: str | None = None
    post_empty: bool | None = None  # default true: post "no commits" days too
    notify_failures: bool | None = None  # default true: say in the channels when a run failed
    weekly: str | None = None  # "mon 09:00": the weekly roll-up, in the subscription's zone

    @field_validator("weekly")
    @classmethod
    def _weekly(cls, v: str | None) -> str | None:
        return check_weekly(v) if v is not None else v

    @field_validator("timezone")
    @classmethod
    def _tz(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                return zone(v).key
            except InputError as e:  # its message names the zone, and what was probably meant
                raise ValueError(str(e)) from None
        return v

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, v: str | None) -> str | None:
        return check_schedule(v) if v is not None else v

    @field_validator("lang")
    @classmethod
    def _lang(cls, v: str | None) -> str | None:
        if v is not None and v not in ("zh", "en"):
            raise ValueError("must be zh or en")
        return v


class Defaults(_When):
    pass


class SubscriptionModel(_When):
    name: str | None = None
    repo: str
    git_dir: Path | None = None
    slack_channels: list[str] = Field(default_factory=list)
    discord_channels: list[str] = Field(default_factory=list)
    filters: FiltersModel = Field(default_factory=FiltersModel)

    @field_validator("repo")
    @classmethod
    def _repo(cls, v: str) -> str:
        if not REPO.match(v):
            raise ValueError("must be OWNER/NAME, e.g. vllm-project/vllm")
        return v

    @field_validator("slack_channels")
    @classmethod
    def _slack_ids(cls, v: list[str]) -> list[str]:
        for channel in v:
            if problem := slack_channel_problem(str(channel)):
                raise ValueError(problem)
        return [str(channel).strip() for channel in v]

    @field_validator("discord_channels")
    @classmethod
    def _snowflakes(cls, v: list[str]) -> list[str]:
        for channel in v:
            if not str(channel).isdigit():
                raise ValueError(f"Discord channel ids are numbers, got {channel!r}")
        return v

    @model_validator(mode="after")
    def _somewhere(self) -> SubscriptionModel:
        if not (self.slack_channels or self.discord_channels):
            raise ValueError("needs at least one of slack_channels / discord_channels")
        return self


class ConfigFile(_Strict):
    defaults: Defaults = Field(default_factory=Defaults)
    subscription: list[SubscriptionModel] = Field(default_factory=list)


def load_config(path: Path, *, default_tz: str, default_lang: str) -> list[Subscription]:
    """The subscriptions of a configuration file, or one ConfigError naming every bad field."""
    try:  # utf-8-sig: a byte-order mark (Windows editors save one) is no TOML error at line 1
        raw: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise ConfigError(f"configuration file {path} not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(not_utf8(path, exc)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    # Discord ids are often written as numbers in TOML: accept them, keep them as text.
    for sub in raw.get("subscription", []) if isinstance(raw.get("subscription"), list) else []:
        if isinstance(sub, dict) and isinstance(sub.get("discord_channels"), list):
            sub["discord_channels"] = [str(c) for c in sub["discord_channels"]]
    try:
        config = ConfigFile.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}: " + "; ".join(_describe(err) for err in exc.errors())) from None
    subs = [
        _to_subscription(i, s, config.defaults, default_tz, default_lang, path.absolute().parent)
        for i, s in enumerate(config.subscription)
    ]
    names = [s.name for s in subs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"{path}: subscription names must be unique: {', '.join(duplicates)}")
    return subs


def _describe(err: dict[str, Any]) -> str:
    loc = ""
    for part in err["loc"]:
        loc += f"[{part}]" if isinstance(part, int) else (f".{part}" if loc else str(part))
    message = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        message = "unknown field" + _did_you_mean(err["loc"])
    return f"{loc}: {message}"


# Words operators write for a field by another name (other bots' configs, cron files, habit).
_SYNONYMS = {
    "time": "schedule", "cron": "schedule", "at": "schedule", "hour": "schedule", "when": "schedule",
    "tz": "timezone", "zone": "timezone", "time_zone": "timezone",
    "language": "lang", "locale": "lang",
    "ref": "branch",
    "channel": "slack_channels or discord_channels", "channels": "slack_channels or discord_channels",
    "repository": "repo", "repo_path": "git_dir", "path": "git_dir", "clone": "git_dir",
}  # fmt: skip


def _did_you_mean(loc: tuple[Any, ...]) -> str:
    """ "(did you mean schedule?)" for a misspelt or renamed field, among the fields allowed where it is."""
    model: type[BaseModel] = ConfigFile
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        inner = getattr(field, "annotation", None)
        inner = next((a for a in getattr(inner, "__args__", ()) if isinstance(a, type)), inner)
        if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
            return ""
        model = inner
    name, allowed = str(loc[-1]), list(model.model_fields)
    wanted = _SYNONYMS.get(name.lower().replace("-", "_"))
    if wanted and all(w in allowed for w in wanted.split(" or ")):
        return f" (did you mean {wanted}?)"
    close = difflib.get_close_matches(name.lower().replace("-", "_"), allowed, n=1, cutoff=0.7)
    return f" (did you mean {close[0]}?)" if close else ""


def _to_subscription(
    index: int, s: SubscriptionModel, d: Defaults, default_tz: str, default_lang: str, folder: Path
) -> Subscription:
    destinations = tuple(
        [Destination("slack", c) for c in s.slack_channels]
        + [Destination("discord", c) for c in s.discord_channels]
    )
    return Subscription(
        name=s.name or f"{s.repo}#{index + 1}",
        repo=s.repo,
        timezone=s.timezone or d.timezone or default_tz,
        schedule=s.schedule or d.schedule or DEFAULT_TIME,
        lang=s.lang or d.lang or default_lang,
        destinations=destinations,
        branch=s.branch or d.branch,
        # A relative git_dir is the config file's neighbour, not the working directory's: `run` under
        # systemd (WorkingDirectory=) and `status` in a shell would read two different clones.
        git_dir=folder / s.git_dir.expanduser() if s.git_dir else None,
        filters=Filters(
            include_paths=tuple(s.filters.include_paths),
            exclude_paths=tuple(s.filters.exclude_paths),
            ignore_authors=tuple(s.filters.ignore_authors),
            ignore_titles=tuple(s.filters.ignore_titles),
        ),
        origin="file",
        post_empty=_first(s.post_empty, d.post_empty, True),
        notify_failures=_first(s.notify_failures, d.notify_failures, True),
        weekly=s.weekly or d.weekly,
    )


def _first(*values: bool | None) -> bool:
    return next(v for v in values if v is not None)


def load_subscriptions(settings: Settings, config: Path | None) -> list[Subscription]:
    path = config or settings.digest_config
    if path is None:
        return []
    return load_config(Path(path), default_tz=settings.digest_tz, default_lang=settings.digest_lang)
