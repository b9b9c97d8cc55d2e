"""Settings from the environment and an optional .env file. Secrets are SecretStr: their repr is
masked, so printing or logging a Settings object never reveals a token."""

from __future__ import annotations

import os
import re
from functools import cache, cached_property
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit
from zoneinfo import TZPATH, ZoneInfo, ZoneInfoNotFoundError, available_timezones

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from analysis.errors import ConfigError, InputError


def default_db_path() -> Path:
    """XDG data dir: a database that survives reinstalls and is not written into the checkout."""
    import os

    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "digestbot" / "digest.db"


@cache
def _zone_names() -> dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


def _zone_on_disk(name: str) -> str | None:
    """The canonical name of a zone found in the system's zone folders by listing only the folders on its
    path (about 0.1 ms; listing every zone, as `_zone_names` does, takes about 20 ms of every command's
    start). None when it is not found there (the tzdata package's zones, a name not on disk)."""
    parts = [p for p in name.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        return None
    for root in TZPATH:
        found, folder = [], root
        try:
            for part in parts:
                entries = [e for e in os.listdir(folder) if e.lower() == part.lower()]
                if len(entries) != 1:
                    break
                found.append(entries[0])
                folder = os.path.join(folder, entries[0])
            else:
                with open(folder, "rb") as file:  # a zone file, not a folder or a table
                    if file.read(4) == b"TZif":
                        return "/".join(found)
        except OSError:
            continue
    return None


# "UTC+8", "GMT-5", "utc+08:00": how people write a zone (the product's own "calendar day in UTC+8")
_OFFSET = re.compile(r"(?:UTC|GMT)\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?", re.IGNORECASE)


def _offset_zone(name: str) -> str | None:
    """The IANA zone of a whole-hour UTC offset ("UTC+8" → Etc/GMT-8: the Etc names count the other way
    round, as POSIX does), or None when `name` is no offset."""
    m = _OFFSET.fullmatch(name)
    if m is None:
        return None
    sign, hours, minutes = m.group(1), int(m.group(2)), m.group(3)
    if (minutes and minutes != "00") or hours > (14 if sign == "+" else 12):
        raise InputError(
            f"no IANA zone is the fixed offset {name!r}: use the region's zone, e.g. Asia/Kolkata for UTC+05:30"
        )
    return f"Etc/GMT{'-' if sign == '+' else '+'}{hours}" if hours else "UTC"


_COPIES = re.compile(r"^(?:posix|right)/", re.IGNORECASE)
# Files of the zone folders that are no place's zone
_NOT_PLACES = {
    "factory": 'the zone database\'s placeholder for a zone not set yet ("-00"), not a place: use an IANA name'
    " such as Asia/Shanghai or UTC",
    "posixrules": "the rules this system gives POSIX TZ strings (a copy of another zone, which differs between"
    " systems), not a place: name the zone meant, such as America/New_York or UTC",
}


def zone(name: str) -> ZoneInfo:
    """The zone of an IANA name, matched without regard to case (`utc`, `gmt`, `asia/shanghai`) and
    always under its canonical name, so digests of one zone share one key whatever was typed; a
    whole-hour offset ("UTC+8") is its Etc zone, `posix/X` and `right/X` are X. `Factory` and `posixrules`,
    files of the zone folders that name no place, are refused."""
    wanted = name.strip()
    # posix/X is a copy of X; right/X is X with leap seconds, which zoneinfo does not count (nor do git's
    # or the chats' clocks): both are X, under one key
    copied = _COPIES.sub("", wanted)
    wanted = copied if copied.strip("/") else wanted
    if why := _NOT_PLACES.get(wanted.lower()):
        raise InputError(f"unknown time zone {name!r}: {why}")
    canonical = _offset_zone(wanted) or _zone_on_disk(wanted) or _zone_names().get(wanted.lower(), wanted)
    try:
        return ZoneInfo(canonical)
    except (ZoneInfoNotFoundError, ValueError):
        near = zone_suggestion(wanted)
        hint = f"did you mean {near}?" if near else "use an IANA name such as Asia/Shanghai or UTC"
        raise InputError(f"unknown time zone {name!r}: {hint}") from None


# Cities people name that the zone database files under another city of the same zone (it names one city
# per zone, usually the most populous when the zone was made): the usual ones worldwide.
_CITY_ZONES = {
    "beijing": "Asia/Shanghai",
    "shenzhen": "Asia/Shanghai",
    "guangzhou": "Asia/Shanghai",
    "hangzhou": "Asia/Shanghai",
    "chengdu": "Asia/Shanghai",
    "delhi": "Asia/Kolkata",
    "new_delhi": "Asia/Kolkata",
    "mumbai": "Asia/Kolkata",
    "bangalore": "Asia/Kolkata",
    "bengaluru": "Asia/Kolkata",
    "hyderabad": "Asia/Kolkata",
    "osaka": "Asia/Tokyo",
    "san_francisco": "America/Los_Angeles",
    "seattle": "America/Los_Angeles",
    "boston": "America/New_York",
    "austin": "America/Chicago",
    "dallas": "America/Chicago",
    "frankfurt": "Europe/Berlin",
    "munich": "Europe/Berlin",
    "hamburg": "Europe/Berlin",
    "geneva": "Europe/Zurich",
    "barcelona": "Europe/Madrid",
    "milan": "Europe/Rome",
    "tel_aviv": "Asia/Jerusalem",
    "hanoi": "Asia/Ho_Chi_Minh",
}


def zone_suggestion(name: str) -> str | None:
    """The zone an unknown name probably meant: its city filed under another city of the same zone
    ("Asia/Beijing"), or the nearest spelling of a zone or of a zone's last part ("Asia/Shangai",
    "Kolkatta"); None when nothing is near."""
    from difflib import get_close_matches

    city = re.sub(r"[\s-]+", "_", name.strip().rsplit("/", 1)[-1]).lower()
    if city in _CITY_ZONES:
        return _CITY_ZONES[city]
    names = _zone_names()
    near = get_close_matches(name.strip().lower(), names, n=1, cutoff=0.8)
    if near:
        return names[near[0]]
    by_city: dict[str, str] = {}
    for canonical in sorted(names.values(), key=lambda n: ("/" not in n, n)):  # Asia/... before a bare link
        by_city.setdefault(canonical.rsplit("/", 1)[-1].lower(), canonical)
    near = get_close_matches(city, by_city, n=1, cutoff=0.8)
    return by_city[near[0]] if near else None


def _not_http_url(text: str) -> str | None:
    """What keeps `text` from being an http(s) URL a client can call, or None when it is one."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError as exc:  # "Port out of range 0-65535", "Invalid IPv6 URL"
        return str(exc)[:1].lower() + str(exc)[1:]
    if parts.scheme not in ("http", "https"):
        return "it must start with http:// or https://"
    if not parts.hostname:
        return "no host after the scheme"
    if any(c.isspace() for c in text):
        return "a space in it"
    return None


_TRAILING_COMMENT = re.compile(r"\s#")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", env_ignore_empty=True
    )

    # Sources
    github_token: SecretStr | None = None
    github_api_url: str = "https://api.github.com"
    github_concurrency: int = Field(8, ge=1, le=64)
    github_max_wait: float = Field(
        300.0, ge=0, description="longest rate-limit wait, seconds, before giving up"
    )
    github_timeout: float = Field(30.0, gt=0)

    # LLM (any OpenAI-compatible server)
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    digest_model: str | None = None
    llm_timeout: float = Field(120.0, gt=0)
    llm_max_retries: int = Field(3, ge=0, le=10)
    llm_concurrency: int | None = Field(
        None, ge=1, le=256, description="hard cap on calls in flight; unset: adaptive (starts at 64)"
    )
    llm_rpm: int | None = Field(None, ge=1, description="requests per minute, unset for no limit")
    llm_tpm: int | None = Field(None, ge=1, description="input tokens per minute, unset for no limit")
    llm_day_deadline: float = Field(1800.0, gt=0, description="seconds for a whole day's analysis")
    llm_batch: bool = Field(False, description="send a day's calls through the OpenAI Batch API first")
    llm_batch_wait: float = Field(
        3600.0, gt=0, description="seconds to wait for a batch before the rest goes live"
    )
    llm_breaker_after: int = Field(
        4, ge=1, description="consecutive timeouts/5xx with no success since, before we stop calling"
    )
    llm_context_tokens: int = Field(8192, ge=2048, description="context window of the model")
    llm_output_tokens: int = Field(1536, ge=256, description="output allowance of one analysis")
    llm_price_in: float | None = Field(None, ge=0, description="USD per million input tokens")
    llm_price_out: float | None = Field(None, ge=0, description="USD per million output tokens")
    # Prompts hold full diffs of possibly private code: kept 30 days by default, then purged.
    llm_log_prompts: str = Field("days:30", description="off | on | days:N")

    # Chat
    slack_bot_token: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_api_url: str = "https://slack.com/api/"
    slack_port: int = Field(3000, ge=1, le=65535)
    discord_bot_token: SecretStr | None = None
    discord_guild_id: int | None = None
    discord_api_url: str | None = None
    # Privileged intent: answer any message in our threads, not only mentions (enable it in the portal too)
    discord_message_content: bool = False
    # Thread questions that need the model: at most this many model calls a minute in one thread
    qa_calls_per_minute: int = Field(6, ge=1, le=600)
    # Seconds a thread answer waits for the model (its retries included) before answering from the data
    qa_answer_timeout: float = Field(60.0, gt=0)
    # `/digest <sha>` cards one person may have the model analyse in any minute (cached ones are free)
    chat_cards_per_minute: int = Field(10, ge=1, le=600)
    # `/digest <date>` days one person may have built anew in any hour (a day built before is free)
    chat_days_per_hour: int = Field(10, ge=1, le=1000)
    # `/digest <sha>` card requests one channel may make in any minute (a flood is refused before any work)
    chat_channel_cards_per_minute: int = Field(20, ge=1, le=10000)
    # New model analyses for cards (and commits a thread names) across the bot in any minute: the model's budget
    chat_model_cards_per_minute: int = Field(30, ge=1, le=10000)
    # Thread answers posted in any minute: in one thread, to one asker, and in all threads together
    qa_answers_per_minute: int = Field(10, ge=1, le=600)
    qa_asker_answers_per_minute: int = Field(6, ge=1, le=600)
    qa_answers_per_minute_all: int = Field(60, ge=1, le=100000)
    # `/digest subscribe`: at most this many chat subscriptions in one channel, and in all (each is a day's
    # digest, its model calls included, every day); 0 leaves subscriptions to the config file
    chat_subscriptions_per_channel: int = Field(10, ge=0, le=1000)
    chat_subscriptions_max: int = Field(100, ge=0, le=100000)

    # Application
    digest_db: Path = Field(default_factory=default_db_path)
    digest_config: Path | None = None
    digest_tz: str = "Asia/Shanghai"
    digest_lang: str = "zh"
    digest_branch: str = "main"
    digest_repo: str | None = None
    digest_catchup_days: int = Field(3, ge=0, le=31)
    # A chat post's cards: a day with more high commits posts the top ones (by the day's rank) as cards and
    # lists the rest in one thread message, so a flood of highs cannot bury the thread (nor hit rate limits)
    digest_max_cards: int = Field(20, ge=1, le=200, description="high commits posted as cards, 1-200")
    history_days: int = Field(
        180, ge=0, le=3650, description="days of branch history the ranking learns from (0: none)"
    )

    # Operations: /metrics and /healthz of `digestbot run` (unset port: not served), log format
    metrics_port: int | None = Field(None, ge=0, le=65535)
    metrics_host: str = "127.0.0.1"
    # Label subscriptions in /metrics by name (a chat subscription's holds its channel and repository)
    # instead of by an opaque id
    metrics_label_names: bool = False
    log_format: Literal["text", "json"] = "text"

    @field_validator("digest_lang")
    @classmethod
    def _lang(cls, v: str) -> str:
        if v not in ("zh", "en"):
            raise ValueError("must be zh or en")
        return v

    @field_validator("digest_tz")
    @classmethod
    def _tz(cls, v: str) -> str:
        try:
            return zone(v).key
        except InputError as e:
            why = str(e).split(": ", 1)[-1]  # what zone() says past the name: the zone meant, or why not
            if why.startswith("use an IANA name"):
                why = "e.g. Asia/Shanghai, UTC, UTC+8"
            raise ValueError(f"not an IANA time zone ({why})") from None

    @field_validator("github_api_url", "openai_base_url", "slack_api_url", "discord_api_url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        # Taken as written, "not a url" had every model call fail as a "timeout" and the digest fall back
        # to the heuristic with exit 0; GitHub's, Slack's and Discord's failed far from the cause.
        if v is not None and (wrong := _not_http_url(v)):
            raise ValueError(f"not an http(s) URL ({wrong})")
        return v

    @field_validator("digest_db", "digest_config")
    @classmethod
    def _home(cls, v: Path | None) -> Path | None:
        # `~` in .env, a systemd Environment= or a container's env is no shell's to expand: Path("~/d.db")
        # made a folder named "~" in the working directory and the database in it.
        return v.expanduser() if v is not None else None

    @field_validator("llm_log_prompts")
    @classmethod
    def _prompts(cls, v: str) -> str:
        text = v.strip().lower().replace(" ", "")
        if text in ("on", "off"):
            return text
        if text.startswith("days:") and text[5:].isdigit():
            return f"days:{int(text[5:])}"
        raise ValueError("must be off, on or days:N (keep prompts and replies N days)")

    @property
    def prompt_days(self) -> int | None:
        """How many days prompts and replies are kept: None for ever, 0 never stored."""
        if self.llm_log_prompts == "on":
            return None
        return 0 if self.llm_log_prompts == "off" else int(self.llm_log_prompts[5:])

    @field_validator("*", mode="before")
    @classmethod
    def _as_written_in_a_file(cls, v: object) -> object:
        # `docker run --env-file` and systemd's EnvironmentFile= keep "# …" after a value, and quotes around
        # it, as part of it (python-dotenv drops both): the token was then refused as wrong, far from the cause.
        if isinstance(v, str) and _TRAILING_COMMENT.search(v):
            raise ValueError("ends in a comment ('… # …'): put the comment on a line of its own")
        if isinstance(v, str) and len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
            raise ValueError("is wrapped in quotes, which `docker run --env-file` keeps: remove them")
        return v

    @field_validator("openai_base_url", "discord_api_url", "digest_model", "digest_repo", mode="before")
    @classmethod
    def _blank_is_unset(cls, v: object) -> object:
        return None if isinstance(v, str) and not v.strip() else v

    @cached_property
    def llm_configured(self) -> bool:
        return bool(self.digest_model and (self.openai_api_key or self.openai_base_url))

    @cached_property
    def llm_half_configured(self) -> str | None:
        """What is missing when the model is half set up (a key without DIGEST_MODEL, or the other way
        round), which would otherwise fall back to the heuristic without a word; None otherwise."""
        if self.llm_configured:
            return None
        if self.openai_api_key or self.openai_base_url:
            given = "OPENAI_API_KEY" if self.openai_api_key else "OPENAI_BASE_URL"
            return f"{given} is set but DIGEST_MODEL is not"
        if self.digest_model:
            return "DIGEST_MODEL is set but neither OPENAI_API_KEY nor OPENAI_BASE_URL is"
        return None


def load_settings(**overrides: object) -> Settings:
    """Settings, or one ConfigError naming every bad variable (or the .env that cannot be read)."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(_problem(err) for err in exc.errors())
        raise ConfigError(f"invalid settings: {problems}") from None
    except UnicodeDecodeError as exc:  # only .env is decoded: the environment's own bytes never fail
        raise ConfigError(not_utf8(Path(".env").absolute(), exc)) from None


def not_utf8(path: Path, exc: UnicodeDecodeError) -> str:
    """Where a file that is not UTF-8 goes wrong, as its editor shows it (line and column), and the byte:
    the decoder's "position 13" is an offset into the whole file."""
    before = exc.object[: exc.start]
    line = before.count(b"\n") + 1
    column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1  # characters, not bytes
    return (
        f"cannot read {path}: line {line}, column {column} is byte 0x{exc.object[exc.start]:02x}, not UTF-8:"
        " save the file as UTF-8"
    )


def _problem(err: Any) -> str:
    """One bad variable: its name, what is wrong, and what was set (`DIGEST_TZ: not an IANA time zone …,
    got 'Beijing'`); never the value of a secret, and not pydantic's "Value error, " prefix."""
    name = "_".join(str(p) for p in err["loc"])
    message = str(err["msg"]).removeprefix("Value error, ")
    field = Settings.model_fields.get(name)
    value = err.get("input")
    secret = field is None or "SecretStr" in str(field.annotation)
    if isinstance(value, str) and "://" in value and "@" in value:  # a URL may carry user:password@
        secret = True
    if not secret and isinstance(value, str) and len(value) <= 80:
        message += f", got {value!r}"
    return f"{name.upper()}: {message}"
