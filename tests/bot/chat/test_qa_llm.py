"""Thread questions answered by the LLM, against the fake OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from adapters.llm import LLMClient
from analysis.models import FileChange, Importance
from bot.app import chat_service
from bot.chat.answers import answer_question
from bot.chat.llm_answers import LLMAnswerer
from bot.config.settings import Settings
from bot.ports.protocols import LLMError, ThreadContext
from tests.fakes.digests import make_analysis, make_commit, make_digest
from tests.fakes.openai_server import FakeLLM


async def no_wait(seconds: float) -> None:
    return None


@pytest.fixture
async def client(fake: FakeLLM) -> AsyncIterator[LLMClient]:
    async with LLMClient(model=fake.model, base_url=fake.base_url, sleep=no_wait, timeout=5.0) as llm:
        yield llm


def commit_ctx(patch_lines: int = 3) -> ThreadContext:
    patch = f"@@ -1,0 +1,{patch_lines} @@\n" + "\n".join(
        f"+cache_limit_{i} = compute_limit({i})" for i in range(patch_lines)
    )
    c = make_commit(
        "[Perf] Cache limits (#42)",
        files=(FileChange("src/cache/limits.py", "modified", patch_lines, 0, patch),),
    )
    a = make_analysis(c, Importance.MEDIUM, risks=["Memory use grows with `src/cache/limits.py` entries"])
    return ThreadContext(
        commit=c, analysis=a, history=[("alice", "Is this safe to deploy?"), ("bot", "Mostly.")]
    )


async def test_commit_question_answered_from_its_data(fake, client) -> None:
    ctx = commit_ctx()
    answer = await LLMAnswerer(client, 8192, 1024).answer(ctx, "What are the risks?", "en")
    assert "src/cache/limits.py" in answer  # the fake answers from the file it was shown
    [request] = fake.log
    assert request.purpose == "qa" and not request.schema_sent
    for shown in (
        "cache_limit_2 = compute_limit(2)",
        "Memory use grows",
        "Is this safe to deploy?",
        "What are the risks?",
    ):
        assert shown in request.text  # diff, stored analysis, thread history, question


async def test_day_question_sees_every_commit(fake, client) -> None:
    digest = make_digest(("high", "medium", "low"))
    ctx = ThreadContext(digest=digest)
    answer = await LLMAnswerer(client, 8192, 1024).answer(ctx, "哪个提交风险最大？", "zh")
    assert answer
    [request] = fake.log
    for c in digest.commits:
        assert c.short_sha in request.text


async def test_mentions_and_reasoning_are_removed(fake, client) -> None:
    fake.reply("<think>the user wants a ping</think>\n  Ask @everyone and <!channel> to review it.  ")
    answer = await LLMAnswerer(client).answer(commit_ctx(), "who should review?", "en")
    assert answer.startswith("Ask @") and "@everyone" not in answer and "<!channel>" not in answer
    assert "think" not in answer


async def test_length_retried_with_less_context_then_raises(fake, client) -> None:
    ctx = commit_ctx(patch_lines=600)
    fake.truncate(times=None)
    with pytest.raises(LLMError, match="output limit"):
        await LLMAnswerer(client, 8192, 1024).answer(ctx, "What are the risks?", "en")
    first, second = fake.log
    assert second.prompt_tokens < first.prompt_tokens  # half the diff, fewer thread turns
    assert fake.calls == 2


async def test_length_once_then_a_whole_answer(fake, client) -> None:
    fake.truncate()
    answer = await LLMAnswerer(client).answer(commit_ctx(), "What are the risks?", "en")
    assert answer.endswith("callers.") and fake.calls == 2


async def test_every_prompt_fits_the_context(fake, client) -> None:
    ctx = commit_ctx(patch_lines=3000)
    await LLMAnswerer(client, 4096, 1024).answer(ctx, "What changed?", "en")
    [request] = fake.log
    assert request.prompt_tokens + (request.max_tokens or 0) <= 4096


async def test_failure_falls_back_to_the_stored_answer(fake, store) -> None:
    fake.fail(500, times=None)
    llm = LLMClient(model=fake.model, base_url=fake.base_url, sleep=no_wait, max_retries=1)
    async with llm:
        service = chat_service(Settings(_env_file=None), store, answerer=LLMAnswerer(llm))
        answer = await answer_question(service, commit_ctx(), "hmm, and then?")
    text = answer.plain()
    assert answer.source == "fallback" and fake.by_purpose["qa"] == 2  # the model was asked (and retried)
    assert "No model answer" in text and "Memory use grows" in text


async def test_a_long_day_keeps_its_most_important_commits_within_the_context(fake, client) -> None:
    digest = make_digest(["low"] * 150 + ["high"] * 3 + ["medium"] * 50)
    ctx = ThreadContext(digest=digest, history=[("user", "earlier question")])
    await LLMAnswerer(client, 4096, 1024).answer(ctx, "what matters today?", "en")
    [request] = fake.log
    assert request.prompt_tokens + (request.max_tokens or 0) <= 4096
    for commit in digest.by_importance(Importance.HIGH):
        assert commit.short_sha in request.text
    assert not all(c.short_sha in request.text for c in digest.by_importance(Importance.LOW))


async def test_a_pasted_40_kb_question_is_cut_so_the_prompt_fits_the_context(fake, client) -> None:
    question = "What changed? " + "Explain every risk of this change in detail, please. " * 800
    await LLMAnswerer(client, 4096, 1024).answer(commit_ctx(patch_lines=300), question, "en")
    day = ThreadContext(digest=make_digest(["high"] * 50))
    await LLMAnswerer(client, 4096, 1024).answer(day, question, "zh")
    about_commit, about_day = fake.log
    for request in (about_commit, about_day):
        assert request.prompt_tokens + (request.max_tokens or 0) <= 4096
        assert "What changed? Explain every risk" in request.text
    assert "more characters not quoted)" in about_commit.text and "cache_limit_0" in about_commit.text
    assert "个字符未引用）" in about_day.text
