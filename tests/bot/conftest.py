"""Fixtures shared by the bot tests that talk to the fake OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import FakeLLM


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    """A fake LLM server for one test; an error the fake itself hit fails the test."""
    with FakeLLM() as server:
        yield server
        server.check()
