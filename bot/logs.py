"""Logging set-up: one format, and a filter that masks every configured secret so a token can
never reach a log line, whatever library formatted it."""

from __future__ import annotations

import logging
import sys

from pydantic import SecretStr
from pythonjsonlogger.json import JsonFormatter


def _maskable(secrets: list[str]) -> list[str]:
    # Longest first, so a secret containing another is masked whole.
    return sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)


# The configured secrets, set once settings are loaded: every line we print goes through scrub().
_secrets: list[str] = []


def register_secrets(secrets: list[str]) -> None:
    _secrets[:] = _maskable(secrets)


def scrub(text: str, secrets: list[str] | None = None) -> str:
    """text with every configured secret (or every one of `secrets`) masked: printed lines, error
    lines, reports, chat replies."""
    for secret in _secrets if secrets is None else _maskable(secrets):
        text = text.replace(secret, "***")
    return text


class RedactSecrets(logging.Filter):
    def __init__(self, secrets: list[str]):
        super().__init__()
        self.secrets = _maskable(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        redacted = scrub(message, self.secrets)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info:  # a traceback (-vv) quotes exception messages: mask those too
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_info, record.exc_text = None, scrub(text, self.secrets)
        elif record.exc_text:
            record.exc_text = scrub(record.exc_text, self.secrets)
        return True


def secrets_of(settings: object) -> list[str]:
    values = []
    for name in type(settings).model_fields:  # type: ignore[attr-defined]
        value = getattr(settings, name)
        if isinstance(value, SecretStr):
            values.append(value.get_secret_value())
    return values


def formatter(fmt: str) -> logging.Formatter:
    """LOG_FORMAT: "text" for people, "json" (one object a line: time, level, logger, message, and
    exc_info when there is one) for log collectors."""
    if fmt == "json":
        return JsonFormatter(
            "%(asctime)s %(levelname)s %(name)s %(message)s",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            json_ensure_ascii=False,
        )
    return logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")


def setup_logging(verbosity: int, secrets: list[str], fmt: str = "text") -> None:
    register_secrets(secrets)
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(fmt))
    handler.addFilter(RedactSecrets(secrets))
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
