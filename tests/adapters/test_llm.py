"""The LLM client against a fake OpenAI-compatible server over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from adapters.llm import LLMClient
from adapters.llm.rate_headers import retry_after_seconds
from adapters.llm.retries import backoff_delay
from analysis.errors import ServiceError
from analysis.llm.tokens import estimate_messages, estimate_tokens
from bot.ports.protocols import BatchRequest, LLMError, LLMFatal
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
        "sleep": rec.sleep,
    }
    options.update(kw)
    return LLMClient(on_call=rec.on_call, **options)


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


@pytest.mark.parametrize(
    ("body", "content_type", "outcome", "said"),
    [
        ("<html><body>502 Bad Gateway</body></html>", "text/html", "bad reply", "(text/html): <html>"),
        ('{"id": "x", "choices": [', "application/json", "bad reply", "not a chat completion"),
        (
            '{"error": {"message": "model overloaded"}}',
            "application/json",
            "server error",
            "model overloaded",
        ),
        ("{}", "application/json", "empty reply", "no choices"),
    ],
)
async def test_a_200_that_is_no_completion_is_a_failed_attempt_said_as_what_it_was(
    fake: FakeLLM, rec: Recorder, body: str, content_type: str, outcome: str, said: str
) -> None:
    # gateways send their errors with 200: a cut JSON escaped as an internal error, an error object was
    # "no choices"; each is now retried, logged, and said in one line
    fake.body(body, content_type, times=2)
    async with client_for(fake, rec, max_retries=1) as client:
        with pytest.raises(LLMError) as err:
            await client.complete(MESSAGES, max_tokens=100, purpose="qa")
    assert err.value.outcome == outcome and said in str(err.value) and "\n" not in str(err.value)
    assert fake.calls == 2 and [c["outcome"] for c in rec.calls] == [outcome, outcome]
    assert all(said in c["error"] for c in rec.calls)


async def test_a_gateway_error_page_then_an_answer_recovers(fake: FakeLLM, rec: Recorder) -> None:
    fake.body("<html>busy</html>", "text/html", times=1)
    async with client_for(fake, rec) as client:
        reply = await client.complete(MESSAGES, max_tokens=100, purpose="qa")
    assert reply.finish_reason == "stop" and [c["outcome"] for c in rec.calls] == ["bad reply", "ok"]


async def test_a_refusal_is_said_and_not_asked_again(fake: FakeLLM, rec: Recorder) -> None:
    fake.refuse("I can't help with that request.")
    async with client_for(fake, rec) as client:
        with pytest.raises(LLMError) as err:
            await client.complete(MESSAGES, max_tokens=100, purpose="qa")
    assert err.value.outcome == "refused" and "I can't help with that request." in str(err.value)
    assert fake.calls == 1 and rec.sleeps == []
    assert [(c["outcome"], c["error"]) for c in rec.calls] == [
        ("refused", "the model refused: I can't help with that request.")
    ]


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


async def test_an_answer_that_trickles_in_times_out_as_a_whole_and_is_retried(
    fake: FakeLLM, rec: Recorder
) -> None:
    fake.trickle(30.0)  # a byte every 0.05 s: no single read waits the 0.3 s timeout
    async with client_for(fake, rec, timeout=0.3) as client:
        reply = await client.complete(MESSAGES, max_tokens=100, purpose="qa")
    assert reply.finish_reason == "stop" and "vllm/engine/core.py" in reply.content
    assert [c["outcome"] for c in rec.calls] == ["timeout", "ok"]
    assert len(rec.sleeps) == 1  # the timed-out attempt was retried after the usual backoff


async def test_a_batch_poll_that_trickles_in_ends_the_batch_and_cancels_it(
    fake: FakeLLM, rec: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    fake.batch_delay = 10.0  # not done when created: it is polled
    fake.batch_trickle = 30.0  # each poll's answer: a byte every 0.05 s, never a read timeout
    request = BatchRequest("c1", MESSAGES, max_tokens=100, purpose="analysis")
    async with client_for(fake, rec, timeout=0.3) as client:
        got = await client.batch([request], deadline=0.3, poll=0.01)
    assert got == {}  # the caller sends the calls live
    [job] = fake.batches.values()
    assert job["status"] == "cancelled" and fake.batch_polls >= 1
    assert "not done after 0.3s: cancelled, the calls go live" in caplog.text


async def test_a_batch_done_near_the_deadline_still_has_its_results_downloaded(
    fake: FakeLLM, rec: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    """Each request has the whole timeout: a batch finished at the deadline (its last poll slow) still
    hands over its results, within a timeout of their own. Bounded as a whole, the download was cut off
    and the finished batch cancelled."""
    caplog.set_level(logging.WARNING)
    fake.batch_delay = 0.01  # done by the first poll, 0.05 s after it was sent
    # Times wide enough for a loaded 2-core machine: the upload and the create must come before the deadline.
    fake.batch_trickle = 2.0  # that poll answers slowly, past the deadline, well within the 6 s timeout
    fake.file_trickle = 2.0  # and so do the results
    request = BatchRequest("c1", MESSAGES, max_tokens=100, purpose="analysis")
    async with client_for(fake, rec, timeout=6.0, sleep=asyncio.sleep) as client:
        got = await client.batch([request], deadline=1.0, poll=0.05)
    assert list(got) == ["c1"] and got["c1"].content
    [job] = fake.batches.values()
    assert job["status"] == "completed" and "LLM batch" not in caplog.text


async def test_a_finished_batch_whose_results_do_not_download_is_not_cancelled(
    fake: FakeLLM, rec: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    fake.file_trickle = 30.0  # the results never arrive whole
    request = BatchRequest("c1", MESSAGES, max_tokens=100, purpose="analysis")
    async with client_for(fake, rec, timeout=0.3) as client:
        got = await client.batch([request], deadline=5.0, poll=0.01)
    assert got == {}  # the caller sends the calls live
    [job] = fake.batches.values()
    assert job["status"] == "completed"  # done and paid for: a cancel would only be refused
    assert "results did not download within 0.3s" in caplog.text and "cancel" not in caplog.text


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


async def test_a_key_pasted_with_its_bearer_scheme_is_sent_as_the_key(fake: FakeLLM, rec: Recorder) -> None:
    async with client_for(fake, rec, api_key=f"Bearer {SECRET}\n") as client:
        assert client._client.api_key == SECRET  # the SDK sends "Bearer <api_key>" itself
        await client.complete(MESSAGES, max_tokens=10, purpose="qa")
    assert fake.calls == 1


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


async def test_rpm_cap_lets_a_minutes_worth_through_then_waits(fake: FakeLLM, rec: Recorder) -> None:
    # aiolimiter's leaky bucket: 3 per minute go at once, the 4th waits ~20 s for the bucket to drain.
    async with client_for(fake, rec, rpm=3) as client:
        calls = [
            asyncio.create_task(client.complete(MESSAGES, max_tokens=200, purpose="qa")) for _ in range(4)
        ]
        done, pending = await asyncio.wait(calls, timeout=1.0)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    assert len(done) == 3 and len(pending) == 1 and fake.calls == 3


async def test_tpm_cap_counts_prompt_tokens(fake: FakeLLM, rec: Recorder) -> None:
    tokens = estimate_messages(MESSAGES)
    async with client_for(fake, rec, tpm=tokens * 2) as client:
        calls = [
            asyncio.create_task(client.complete(MESSAGES, max_tokens=200, purpose="qa")) for _ in range(3)
        ]
        done, pending = await asyncio.wait(calls, timeout=1.0)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    assert len(done) == 2 and fake.calls == 2


async def test_adaptive_concurrency_backs_off_on_429_and_loses_no_call(rec: Recorder) -> None:
    """A provider allowing 6 requests per 0.5 s: 24 calls at once (the default starts at 64) all succeed,
    after the limit was cut on the first 429s."""
    with FakeLLM() as fake:
        fake.rate_limit_per_window, fake.rate_window = 6, 0.5
        async with client_for(fake, rec, sleep=asyncio.sleep, max_retries=10) as client:
            replies = await asyncio.gather(
                *(client.complete(MESSAGES, max_tokens=200, purpose="qa") for _ in range(24))
            )
    assert all(r.finish_reason == "stop" for r in replies)
    assert fake.rejected > 0 and client.limit.cuts >= 1 and client.limit.slots < 64


async def test_a_queueing_server_is_rising_latency_not_errors(rec: Recorder) -> None:
    """One slot (llama.cpp --parallel 1): every call waits its turn, none fails, and the limit comes
    down instead of piling more calls into the queue."""
    # The first answer takes long enough for all 16 to have arrived even on a loaded machine (at 0.08 s,
    # under load, the first was answered before the sixteenth came in: max_in_flight 15).
    with FakeLLM(latency=0.25) as fake:
        fake.slots = 1
        fake.reset_counters()
        async with client_for(fake, rec, timeout=10.0) as client:
            replies = await asyncio.gather(
                *(client.complete(MESSAGES, max_tokens=200, purpose="qa") for _ in range(16))
            )
    assert len(replies) == 16 and all(c["outcome"] == "ok" for c in rec.calls)
    # All sent at once: the server queued them, we did not. Under load the sixteenth may reach the server just
    # after the first answer (max_in_flight 15), never after a second: a client pacing itself to the server's
    # answers would send its later calls one answer apart.
    second_answer = sorted(e.ended for e in fake.log)[1]
    assert all(e.started < second_answer for e in fake.log) and fake.max_in_flight >= 15
    assert client.limit.cuts >= 1 and client.limit.slots < 64


async def test_remaining_requests_header_caps_and_pauses(rec: Recorder) -> None:
    with FakeLLM() as fake:
        fake.rate_limit_per_window, fake.rate_window, fake.ratelimit_headers = 3, 0.4, True
        async with client_for(fake, rec, sleep=asyncio.sleep) as client:
            for _ in range(5):
                await client.complete(MESSAGES, max_tokens=200, purpose="qa")
    # The header said "none left, reset in ~0.4 s": the client waited instead of earning a 429.
    assert fake.rejected == 0 and fake.calls == 5
    assert client.limit.provider_cap in (None, 1, 2)  # follows the last remaining-requests header


async def test_circuit_breaker_stops_calling_a_hanging_server(fake: FakeLLM, rec: Recorder) -> None:
    fake.delay(30, times=None)  # accepts, never answers in time
    async with client_for(fake, rec, timeout=0.2, max_retries=3, breaker_after=3) as client:
        results = await asyncio.gather(
            *(client.complete(MESSAGES, max_tokens=200, purpose="qa") for _ in range(5)),
            return_exceptions=True,
        )
        with pytest.raises(LLMError, match="stopped calling after") as later:
            await client.complete(MESSAGES, max_tokens=200, purpose="qa")
    assert all(isinstance(r, LLMError) for r in results)
    # Without the breaker: 5 calls × 4 attempts. With it: the first wave and the few retries that left
    # before the third timeout came back; nothing after.
    assert 5 <= fake.calls <= 5 + 3
    assert client.breaker_opened == 1 and later.value.outcome.startswith("circuit open")


async def test_a_timeout_of_a_call_sent_before_a_success_is_queueing_not_failure(
    fake: FakeLLM, rec: Recorder
) -> None:
    fake.delay(1.0, match="slow", times=3)
    slow = [{"role": "user", "content": "slow"}]
    async with client_for(fake, rec, timeout=0.3, breaker_after=2, max_retries=0) as client:
        slow_calls = [
            asyncio.create_task(client.complete(slow, max_tokens=200, purpose="qa")) for _ in range(3)
        ]
        await client.complete(MESSAGES, max_tokens=200, purpose="qa")  # answered while the slow ones wait
        results = await asyncio.gather(*slow_calls, return_exceptions=True)
        # Sent before a success, they were queued, not failed: resent without spending an attempt
        # (max_retries=0), and the second time the server answers them.
        assert all(r.finish_reason == "stop" for r in results)
        assert [c["outcome"] for c in rec.calls].count("timeout") == 3
        reply = await client.complete(MESSAGES, max_tokens=200, purpose="qa")  # still calling
    assert reply.finish_reason == "stop" and client.breaker_opened == 0


@pytest.mark.parametrize(
    ("status", "hint"), [(401, "OPENAI_API_KEY"), (403, "OPENAI_API_KEY"), (404, "DIGEST_MODEL")]
)
async def test_bad_key_or_model_is_fatal_at_once(
    fake: FakeLLM, rec: Recorder, status: int, hint: str
) -> None:
    fake.fail(status)
    async with client_for(fake, rec) as client:
        with pytest.raises(LLMFatal, match=hint) as err:
            await client.complete(MESSAGES, max_tokens=10, purpose="qa")
    assert "\n" not in str(err.value) and fake.calls == 1 and rec.sleeps == []


@pytest.mark.parametrize("root", ["", "/"])
async def test_a_base_url_without_v1_gets_the_hint_at_its_404(
    fake: FakeLLM, rec: Recorder, root: str
) -> None:
    """OPENAI_BASE_URL set to a local server's root: every call 404s at /chat/completions."""
    base = fake.base_url.removesuffix("/v1") + root
    async with client_for(fake, rec, base_url=base) as client:
        with pytest.raises(LLMFatal) as err:
            await client.complete(MESSAGES, max_tokens=10, purpose="qa")
    said = str(err.value)
    assert (
        "answered 404" in said
        and "its path '/' has no /v1" in said
        and "e.g. http://localhost:8080/v1" in said
    )
    assert fake.calls == 0  # the fake's chat route was never reached: the path missed it


async def test_cached_prompt_tokens_are_reported(fake: FakeLLM, rec: Recorder) -> None:
    async with client_for(fake, rec) as client:
        first = await client.complete(MESSAGES, max_tokens=200, purpose="qa")
        other = [MESSAGES[0], {"role": "user", "content": "Commit: something else entirely"}]
        second = await client.complete(other, max_tokens=200, purpose="qa")
    assert first.tokens_cached == 0
    assert 0 < second.tokens_cached < second.tokens_in and second.tokens_cached % 16 == 0
    assert client.tokens_cached == second.tokens_cached == fake.cached_tokens


def test_retry_after_parsing() -> None:
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None
    assert backoff_delay(0, 4.5) == 4.5  # the server's word beats our schedule
    assert backoff_delay(10, None, rng=lambda: 1.0) == 30.0  # capped


async def test_the_os_for_the_sdks_headers_is_worked_out_once_where_the_client_is_built(
    fake: FakeLLM, rec: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Calls sent together do not each look up the OS in a thread of their own (issue 21): the SDK's
    cache of it is filled when the client is built, with what its own lookup gives."""
    import openai._base_client as sdk

    expected = sdk.get_platform()
    lookups: list[None] = []
    real = sdk.get_platform
    monkeypatch.setattr(sdk, "get_platform", lambda: lookups.append(None) or real())
    async with client_for(fake, rec) as client:
        assert lookups == [None]  # the build's
        replies = await asyncio.gather(
            *(
                client.complete(MESSAGES, max_tokens=50, purpose="qa", sha=f"s{i}", repo="o/n")
                for i in range(6)
            )
        )
    assert [r.finish_reason for r in replies] == ["stop"] * 6
    assert lookups == [None]  # none more at the calls
    assert client._client._platform == expected


def test_an_sdk_without_that_cache_is_left_as_it_is() -> None:
    from adapters.llm.client import settle_platform

    class Other:
        pass

    other = Other()
    settle_platform(other)  # type: ignore[arg-type]
    assert not hasattr(other, "_platform")


@pytest.mark.parametrize(
    ("base_url", "own_client"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("HTTP://localhost:11434/v1", True),
        ("https://api.openai.com/v1", False),
        (None, False),
    ],
)
def test_only_a_plain_http_server_gets_a_client_without_a_certificate_store(
    base_url: str | None, own_client: bool
) -> None:
    # A server reached without TLS never uses the certificates, which cost 0.04 s to load before the first
    # call; every https server keeps the SDK's own client, which verifies them.
    from adapters.llm.client import _plain_http_client

    client = _plain_http_client(base_url)
    assert (client is not None) is own_client


async def test_a_plain_http_client_is_closed_with_the_llm_client(fake: FakeLLM, rec: Recorder) -> None:
    client = LLMClient(model=fake.model, base_url=fake.base_url, api_key=SECRET, max_retries=0, on_call=rec)
    reply = await client.complete(MESSAGES, max_tokens=50, purpose="qa")
    assert reply.content
    http = client._client._client
    assert not http.is_closed
    await client.aclose()
    assert http.is_closed
