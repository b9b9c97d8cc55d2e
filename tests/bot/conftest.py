"""Fixtures shared by the bot tests: the fake OpenAI-compatible server, a one-commit repository."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.gitrepo import GitRepo, isolate_git_env
from tests.fakes.openai_server import FakeLLM


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    """A fake LLM server for one test; an error the fake itself hit fails the test."""
    with FakeLLM() as server:
        yield server
        server.check()


@pytest.fixture
def repo(tmp_path, monkeypatch) -> GitRepo:
    """A repository with one commit on 2026-01-26 (Asia/Shanghai); a module may define its own."""
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")
    r.commit("[Bugfix] Fix a crash (#12)", {"src/app.py": "x = 1\n"}, when="2026-01-26T10:00:00+08:00")
    return r
