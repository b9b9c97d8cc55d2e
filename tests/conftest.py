"""Every test runs isolated from the developer's machine: no digestbot/LLM/chat variables from the
environment, no .env from the working directory, no real database; and from the tests before it in the same
process: the logging a CLI run or the service set up is taken down after the test."""

import logging
import os
from collections.abc import Iterator

import pytest

from bot.monitoring import logs
from bot.monitoring.logs import RedactSecrets
from bot.store.db import Store

_PREFIXES = (
    "GITHUB_",
    "OPENAI_",
    "DIGEST_",
    "LLM_",
    "SLACK_",
    "DISCORD_",
    "METRICS_",
    "LOG_FORMAT",
    "HISTORY_",
    "QA_",
)


@pytest.fixture(autouse=True)
def _isolated_settings(monkeypatch, tmp_path_factory):
    for name in list(os.environ):
        if name.startswith(_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.chdir(home)  # pydantic-settings reads ./.env


@pytest.fixture(autouse=True)
def _logging_taken_down() -> Iterator[None]:
    """setup_logging's stderr handler (and its filters: RedactSecrets moves a record's exception into
    masked text) would stay on the root logger for every later test of the worker process, so a test
    reading `caplog.records[i].exc_info` would pass or fail by which tests ran before it. So would the
    format it set up: after a LOG_FORMAT=json run, a later run whose settings do not load sent its one
    error line to that run's handler as JSON, and its own stderr stayed empty."""
    root = logging.getLogger()
    before, level, fmt = list(root.handlers), root.level, logs._format[0]
    yield
    for handler in list(root.handlers):
        if handler not in before and any(isinstance(f, RedactSecrets) for f in handler.filters):
            root.removeHandler(handler)
    root.setLevel(level)
    logs._format[0] = fmt


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    """A fresh database in the test's folder (the same file a test's Settings may name)."""
    s = Store(tmp_path / "digest.db")
    yield s
    s.close()
