"""The LLM client against a fake OpenAI-compatible server over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from adapters.llm import LLMClient, LLMError, RateLimiter, backoff_delay, retry_after_seconds
from analysis.errors import ServiceError
from analysis.tokens import estimate_messages, estimate_tokens
from tests.fakes.openai_server import FakeLLM

MESSAGES = [
    {"role": "system", "content": "You review commits. Answer briefly."},
    {"role": "user", "content": "Commit: [Bugfix] Fix overflow in vllm/engine/core.py"},
]
SECRET = "sk-test-never-shown-123456"


class Verdict(BaseModel):
    importance: str
    summary: str


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server
        server.check()


class Recorder:
    """The injected sleep and on_call: what the client waited and logged, without waiting."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []
        self.calls: list[dict[str, Any]] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    def on_call(self, fields: dict[str, Any]) -> None:
        self.calls.append(fields)


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


def client_for(fake: FakeLLM, rec: Recorder, **kw: Any) -> LLMClient:
    options: dict[str, Any] = {
        "model": fake.model,
        "base_url": fake.base_url,
        "api_key": SECRET,
        "timeout": 5.0,
    }
    options.update(kw)
    return LLMClient(on_call=rec.on_call, sleep=rec.sleep, **options)


async def test_plain_reply_with_usage_cost_and_one_logged_call(fake: FakeLLM, rec: Recorder) -> None:
    async with client_for(fake, rec, price_in=2.0, price_out=8.0) as client:
        reply = await client.complete(
            MESSAGES, max_tokens=200, purpose="qa", sha="abc123", repo="o/n", prompt_version="p1"
        )
    assert reply.finish_reason == "stop" and "vllm/engine/core.py" in reply.content
    assert reply.tokens_in == estimate_messages(MESSAGES)  # the fake's usage is its estimate of what it got
    assert reply.tokens_out == estimate_tokens(reply.content)
    [call] = rec.calls
    assert call["outcome"] == "ok" and call["finish_reason"] == "stop" and call["error"] is None
    assert (call["model"], call["purpose"], call["sha"], call["repo"], call["prompt_version"]) == (
        fake.model,
        "qa",
        "abc123",
        "o/n",
        "p1",
    )
    assert call["tokens_in"] == reply.tokens_in and call["latency_ms"] >= 0
    assert call["cost_usd"] == pytest.approx((reply.tokens_in * 2.0 + reply.tokens_out * 8.0) / 1e6)
    assert fake.log[0].max_tokens == 200


async def test_structured_output_sends_the_json_schema(fake: FakeLLM, rec: Recorder) -> None:
    async with client_for(fake, rec) as client:
        reply = await client.complete(MESSAGES, response_model=Verdict, max_tokens=300, purpose="triage")
    assert fake.log[0].schema_sent
    assert Verdict.model_validate_json(reply.content).summary  # the fake filled the schema we sent


async def test_usage_missing_is_estimated(rec: Recorder) -> None:
    with FakeLLM(usage=False) as fake:
        async with client_for(fake, rec) as client:
            reply = await client.complete(MESSAGES, max_tokens=100, purpose="qa")
    assert reply.tokens_in == estimate_messages(MESSAGES) > 0
    assert reply.tokens_out == estimate_tokens(reply.content) > 0
    assert rec.calls[0]["tokens_in"] == reply.tokens_in


async def test_no_price_no_cost(fake: FakeLLM, rec: Recorder) -> None:
    async with client_for(fake, rec) as client:
        await client.complete(MESSAGES, max_tokens=100, purpose="qa")
    assert rec.calls[0]["cost_usd"] is None


async def test_length_is_returned_as_such_for_the_caller_to_handle(fake: FakeLLM, rec: Recorder) -> None:
    fake.truncate()
    async with client_for(fake, rec) as client:
        reply = await client.complete(MESSAGES, max_tokens=100, purpose="qa")
    assert reply.finish_reason == "length"
    assert rec.calls[0]["outcome"] == "length"


@pytest.mark.parametrize(
    ("headers", "expected"), [({"retry_after": 7}, 7.0), ({"retry_after": None, "retry_after_ms": 1500}, 1.5)]
)
async def test_429_waits_what_retry_after_says(
    fake: FakeLLM, rec: Recorder, headers: dict[str, Any], expected: float
) -> None:
    fake.rate_limit(**headers)
    async with client_for(fake, rec) as client:
        reply = await client.complete(MESSAGES, max_tokens=100, purpose="qa")
    assert reply.finish_reason == "stop"
    assert rec.sleeps == [expected]
    assert [c["outcome"] for c in rec.calls] == ["http 429", "ok"]
    assert fake.calls == 2


async def test_retry_after_beyond_max_wait_gives_up_at_once(fake: FakeLLM, rec: Recorder) -> None:
    fake.rate_limit(retry_after=3600)
    async with client_for(fake, rec, max_wait=60) as client:
        with pytest.raises(LLMError, match="asked to wait 3600s") as err:
            await client.complete(MESSAGES, max_tokens=100, purpose="qa")
    assert err.value.outcome == "http 429" and rec.sleeps == [] and fake.calls == 1


async def test_5xx_retried_with_growing_backoff_then_one_line_error(fake: FakeLLM, rec: Recorder) -> None:
    fake.fail(500, times=None)
    async with client_for(fake, rec, max_retries=3) as client:
        with pytest.raises(LLMError) as err:
            await client.complete(MESSAGES, max_tokens=100, purpose="qa")
    assert isinstance(err.value, ServiceError)
    message = str(err.value)
    assert "\n" not in message and "500" in message and "4 attempt" in message and SECRET not in message
    assert fake.calls == 4 and len(rec.calls) == 4
    assert all(c["outcome"] == "http 500" for c in rec.calls)
    # Full-jitter exponential backoff: each wait in [ceiling/2, ceiling] for ceilings 1, 2, 4 s.
    assert len(rec.sleeps) == 3
    for attempt, wait in enumerate(rec.sleeps):
        assert 2**attempt / 2 <= wait <= 2**attempt


async def test_500_then_ok_recovers(fake: FakeLLM, rec: Recorder) -> None:
    fake.fail(503, times=2)
    async with client_for(fake, rec) as client:
        reply = await client.complete(MESSAGES, max_tokens=100, purpose="qa")
    assert reply.finish_reason == "stop"
    assert [c["outcome"] for c in rec.calls] == ["http 503", "http 503", "ok"]


async def test_timeout_is_retried(fake: FakeLLM, rec: Recorder) -> None:
    fake.delay(2.0)
    async with client_for(fake, rec, timeout=0.15) as client:
        reply = await client.complete(MESSAGES, max_tokens=100, purpose="qa")
    assert reply.finish_reason == "stop"
    assert [c["outcome"] for c in rec.calls] == ["timeout", "ok"]
    assert 100 <= rec.calls[0]["latency_ms"] < 2000


async def test_unreachable_server_is_a_connection_error(rec: Recorder) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = LLMClient(
        model="m",
        base_url=f"http://127.0.0.1:{port}/v1",
        api_key=SECRET,
        max_retries=1,
        on_call=rec.on_call,
        sleep=rec.sleep,
    )
    async with client:
        with pytest.raises(LLMError, match="connection error") as err:
            await client.complete(MESSAGES, max_tokens=10, purpose="qa")
    assert f"127.0.0.1:{port}" in str(err.value) and SECRET not in str(err.value)
    assert [c["outcome"] for c in rec.calls] == ["connection error", "connection error"]


async def test_401_is_not_retried_and_never_shows_the_key(fake: FakeLLM, rec: Recorder, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    fake.fail(401, body={"error": {"message": f"Incorrect API key provided: {SECRET}"}})
    async with client_for(fake, rec) as client:
        with pytest.raises(LLMError, match="OPENAI_API_KEY") as err:
            await client.complete(MESSAGES, max_tokens=10, purpose="qa")
    assert SECRET not in str(err.value) and "***" in str(err.value)
    assert fake.calls == 1 and rec.sleeps == []
    assert SECRET not in rec.calls[0]["error"]
    assert all(SECRET not in r.getMessage() for r in caplog.records)


async def test_server_rejecting_response_format_is_asked_again_without_it(rec: Recorder) -> None:
    with FakeLLM(reject_schema=True) as fake:
        async with client_for(fake, rec) as client:
            first = await client.complete(MESSAGES, response_model=Verdict, max_tokens=300, purpose="triage")
            second = await client.complete(MESSAGES, response_model=Verdict, max_tokens=300, purpose="triage")
    assert [entry.schema_sent for entry in fake.log] == [True, False, False]  # learned once, remembered
    assert not client.structured_output
    assert [c["outcome"] for c in rec.calls] == ["http 400", "ok", "ok"]
    assert rec.sleeps == []  # a rejected parameter is not a failure to back off from
    assert first.finish_reason == second.finish_reason == "stop"


async def test_server_wanting_max_completion_tokens_gets_it(fake: FakeLLM, rec: Recorder) -> None:
    message = (
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens'."
    )
    fake.fail(400, body={"error": {"message": message, "param": "max_tokens"}})
    async with client_for(fake, rec) as client:
        reply = await client.complete(MESSAGES, max_tokens=123, purpose="qa")
    assert reply.finish_reason == "stop" and fake.log[-1].max_tokens == 123


async def test_other_400_fails_without_retry(fake: FakeLLM, rec: Recorder) -> None:
    fake.fail(400, body={"error": {"message": "context length exceeded"}})
    async with client_for(fake, rec) as client:
        with pytest.raises(LLMError, match="answered 400: context length exceeded"):
            await client.complete(MESSAGES, max_tokens=10, purpose="qa")
    assert fake.calls == 1


async def test_concurrency_bound_is_respected(rec: Recorder) -> None:
    with FakeLLM(latency=0.04) as fake:
        async with client_for(fake, rec, concurrency=3) as client:
            replies = await asyncio.gather(
                *(client.complete(MESSAGES, max_tokens=50, purpose="qa") for _ in range(9))
            )
    assert len(replies) == 9 and fake.calls == 9
    assert fake.max_in_flight == 3


async def test_on_call_failure_never_fails_the_call(fake: FakeLLM) -> None:
    def broken(fields: dict[str, Any]) -> None:
        raise RuntimeError("disk full")

    async with LLMClient(model="m", base_url=fake.base_url, on_call=broken) as client:
        reply = await client.complete(MESSAGES, max_tokens=50, purpose="qa")
    assert reply.finish_reason == "stop"


async def test_rate_limiter_spaces_request_starts() -> None:
    now = [100.0]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    limiter = RateLimiter(30, sleep=sleep, clock=lambda: now[0])  # 30/min: one start every 2 s
    await limiter.acquire()
    await limiter.acquire()
    now[0] += 5.0  # idle time is not banked into a burst beyond one slot
    await limiter.acquire()
    await limiter.acquire()
    assert waits == [2.0, 2.0]


async def test_rpm_limit_applies_to_calls(fake: FakeLLM, rec: Recorder) -> None:
    async with client_for(fake, rec, rpm=120) as client:  # one start every 0.5 s
        for _ in range(3):
            await client.complete(MESSAGES, max_tokens=20, purpose="qa")
    # The recorder does not really sleep, so each wait is its slot (0.5 s apart) minus the time spent.
    assert len(rec.sleeps) == 2
    assert 0.3 < rec.sleeps[0] <= 0.5 and 0.8 < rec.sleeps[1] <= 1.0


def test_retry_after_parsing() -> None:
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None
    assert backoff_delay(0, 4.5) == 4.5  # the server's word beats our schedule
    assert backoff_delay(10, None, rng=lambda: 1.0) == 30.0  # capped
