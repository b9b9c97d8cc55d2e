"""Logging set-up: one format, and a filter that masks every configured secret so a token can
never reach a log line, whatever library formatted it."""

from __future__ import annotations

import logging
import sys

from pydantic import SecretStr
from pythonjsonlogger.json import JsonFormatter


class RedactSecrets(logging.Filter):
    def __init__(self, secrets: list[str]):
        super().__init__()
        # Longest first, so a secret containing another is masked whole.
        self.secrets = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        redacted = message
        for secret in self.secrets:
            redacted = redacted.replace(secret, "***")
        if redacted != message:
            record.msg, record.args = redacted, None
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
