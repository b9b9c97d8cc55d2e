"""Logging set-up: one format, a filter that masks every configured secret so a token can never
reach a log line, whatever library formatted it, and one that drops identical records repeated
within a minute (a failing accept loop must not fill the disk)."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import SecretStr
from pythonjsonlogger.json import JsonFormatter

from bot.ports.secrets import maskable, register_secrets, scrub


class RedactSecrets(logging.Filter):
    def __init__(self, secrets: list[str]):
        super().__init__()
        self.secrets = maskable(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        redacted = scrub(message, self.secrets)
        if redacted != message:
            record.msg, record.args = redacted, None
        for name in record.__dict__.keys() - _RECORD_FIELDS:  # `extra` fields: JSON logs print them
            record.__dict__[name] = self._scrub_value(record.__dict__[name])
        if record.exc_info:  # a traceback (-vv) quotes exception messages: mask those too
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_info, record.exc_text = None, scrub(text, self.secrets)
        elif record.exc_text:
            record.exc_text = scrub(record.exc_text, self.secrets)
        return True

    def _scrub_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return scrub(value, self.secrets)
        if isinstance(value, dict):
            return {k: self._scrub_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._scrub_value(v) for v in value]
        return value


_RECORD_FIELDS = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class BriefExceptions(logging.Filter):
    """A record's traceback as its last line, on the record's own line, with where to find the rest: people
    at a terminal get one line per problem (a parser's failure on one commit printed 20–30 lines); -vv
    and JSON logs keep the whole traceback. After RedactSecrets, so the line kept is already masked."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.exc_text or (
            logging.Formatter().formatException(record.exc_info) if record.exc_info else ""
        )
        if text:
            last = next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")
            record.msg = f"{record.getMessage()} ({last}; run with -vv for the traceback)"
            record.args, record.exc_info, record.exc_text = None, None, None
        return True


class DropRepeats(logging.Filter):
    """An identical record (same logger, level, text and exception) at most once per `window` seconds;
    the next one let through says how many were dropped meanwhile."""

    def __init__(self, window: float = 60.0, size: int = 1024, clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.window, self.size, self.clock = window, size, clock
        self._seen: OrderedDict[tuple, list] = OrderedDict()  # key → [first let through at, dropped]
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        key = (record.name, record.levelno, record.getMessage(), repr(exc) if exc else None)
        now = self.clock()
        with self._lock:
            seen = self._seen.get(key)
            if seen is not None and now - seen[0] < self.window:
                seen[1] += 1
                return False
            self._seen[key] = [now, 0]
            self._seen.move_to_end(key)
            while len(self._seen) > self.size:
                self._seen.popitem(last=False)
        if seen is not None and seen[1]:
            record.msg = f"{record.getMessage()} ({seen[1]} identical records dropped in {self.window:g} s)"
            record.args = None
        return True


def secrets_of(settings: object) -> list[str]:
    values = []
    for name in type(settings).model_fields:  # type: ignore[attr-defined]
        value = getattr(settings, name)
        if isinstance(value, SecretStr):
            values.append(value.get_secret_value())
    return values


class JsonLines(JsonFormatter):
    """python-json-logger's formatter with an RFC 3339 UTC `time` first ("2026-01-29T01:00:00.123Z"):
    a line's fields are time, level, logger, message, the record's `extra` fields as JSON values, and
    exc_info when there is one."""

    def add_fields(
        self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]
    ) -> None:
        moment = datetime.fromtimestamp(record.created, UTC)
        log_data["time"] = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
        super().add_fields(log_data, record, message_dict)


def formatter(fmt: str) -> logging.Formatter:
    """LOG_FORMAT: "text" for people, "json" (one object a line) for log collectors."""
    if fmt == "json":
        return JsonLines(
            "%(levelname)s %(name)s %(message)s",
            rename_fields={"levelname": "level", "name": "logger"},
            json_ensure_ascii=False,
        )
    return logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")


_format: list[str | None] = [None]  # LOG_FORMAT once logging is set up: the CLI's stderr lines follow it


def json_lines() -> bool:
    """Whether stderr lines are JSON: LOG_FORMAT as set up, or, before settings are loaded (a usage
    error, settings that do not load), as the environment asks."""
    if _format[0] is None and (os.environ.get("LOG_FORMAT") or "").strip().lower() == "json":
        setup_logging(0, [], "json")
    return _format[0] == "json"


def setup_logging(verbosity: int, secrets: list[str], fmt: str = "text") -> None:
    _format[0] = fmt
    register_secrets(secrets)
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(fmt))
    handler.addFilter(RedactSecrets(secrets))
    handler.addFilter(DropRepeats())
    if verbosity < 2 and fmt != "json":
        handler.addFilter(BriefExceptions())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # HTTP client chatter only at -vv.
    for noisy in (
        "httpx",
        "httpx2",
        "httpcore",
        "openai",
        "slack_bolt",
        "slack_sdk",
        "discord",
        "apscheduler",
    ):
        logging.getLogger(noisy).setLevel(logging.DEBUG if verbosity >= 2 else logging.WARNING)
