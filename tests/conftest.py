"""Every test runs isolated from the developer's machine: no digestbot/LLM/chat variables from the
environment, no .env from the working directory, no real database."""

import os
from collections.abc import Iterator

import pytest

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


@pytest.fixture
def store(tmp_path) -> Iterator[Store]:
    """A fresh database in the test's folder (the same file a test's Settings may name)."""
    s = Store(tmp_path / "digest.db")
    yield s
    s.close()
