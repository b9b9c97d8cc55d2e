"""LLM_BATCH: a day's calls through the OpenAI Batch API (/v1/files, /v1/batches, poll, the output
file), against a fake that implements those endpoints; a deadline after which the rest goes live."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from adapters.llm import LLMClient
from bot.app import llm_analyzer
from bot.digest.llm_analyzer import LLMAnalyzer
from bot.store.db import Store
from tests.bot.digest.test_llm_analyzer import assert_llm, calls, commit, day_commits
from tests.fakes.openai_server import FakeLLM


@pytest.fixture
async def batching(store: Store) -> AsyncIterator[Callable[..., LLMAnalyzer]]:
    made: list[LLMAnalyzer] = []

    def build(server: FakeLLM, *, wait: float = 10.0, **client: Any) -> LLMAnalyzer:
        llm = LLMClient(
            model=server.model,
            base_url=server.base_url,
            api_key="sk-test-key-000",
            timeout=5.0,
            sleep=asyncio.sleep,
            on_call=lambda fields: store.log_llm_call(**fields),
            **client,
        )
        analyzer = LLMAnalyzer(llm, batch_wait=wait, batch_poll=0.05)
        made.append(analyzer)
        return analyzer

    yield build
    for analyzer in made:
        await analyzer.aclose()


async def test_a_day_goes_through_the_batch_api(fake, store, batching) -> None:
    commits = day_commits(5)
    fake.batch_delay = 0.2
    seen: list[str] = []
    result = await batching(fake).analyze(commits, "en", on_result=lambda a: seen.append(a.sha))
    for c in commits:
        assert_llm(result[c.sha], c)
    assert fake.batched == 5 and fake.calls == 5  # every call inside the batch, none live
    assert fake.batch_polls >= 2  # polled until done
    [job] = fake.batches.values()
    assert job["status"] == "completed" and job["endpoint"] == "/v1/chat/completions"
    uploaded = fake.files[job["input_file_id"]]["content"].splitlines()
    assert len(uploaded) == 5 and all('"response_format"' in line for line in uploaded)
    assert sorted(seen) == sorted(c.sha for c in commits)  # each stored as it came
    assert [r["purpose"] for r in calls(store)] == ["analysis-batch"] * 5


async def test_a_batch_past_its_deadline_is_cancelled_and_the_day_goes_live(fake, batching) -> None:
    commits = day_commits(4)
    fake.batch_never_finishes = True
    result = await batching(fake, wait=0.3).analyze(commits, "en")
    for c in commits:
        assert_llm(result[c.sha], c)
    [job] = fake.batches.values()
    assert job["status"] == "cancelled"
    assert fake.batched == 0 and fake.calls == 4  # all four live after the deadline


async def test_an_invalid_batch_reply_is_asked_again_live(fake, batching) -> None:
    commits = day_commits(3)
    fake.invalid_json(match=commits[0].title)  # the batch's reply for this commit is unusable
    result = await batching(fake).analyze(commits, "en")
    for c in commits:
        assert_llm(result[c.sha], c)
    assert fake.batched == 3 and fake.calls == 4  # one live call more, for that commit only
    assert commits[0].title in fake.log[-1].text


async def test_a_single_commit_is_never_batched(fake, batching) -> None:
    c = commit("[Feature] One card")
    result = await batching(fake).analyze([c], "en")
    assert_llm(result[c.sha], c)
    assert fake.batches == {} and fake.calls == 1


async def test_llm_batch_setting_reaches_the_analyzer(fake, store, tmp_path) -> None:
    from bot.app import make_analyzer
    from bot.config.settings import load_settings

    settings = load_settings(
        digest_model=fake.model, openai_base_url=fake.base_url, digest_db=tmp_path / "d.db",
        llm_batch=True, llm_batch_wait=120,
    )  # fmt: skip
    analyzer = make_analyzer(settings, store, "llm")
    try:
        assert isinstance(analyzer, LLMAnalyzer) and analyzer.batch_wait == 120
    finally:
        await analyzer.aclose()
    live = llm_analyzer(load_settings(digest_model="m", openai_base_url=fake.base_url), store)
    try:
        assert live.batch_wait is None  # off unless LLM_BATCH=1
    finally:
        await live.aclose()
