"""The LLM client: any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp, DeepSeek).

A thin layer over openai's AsyncOpenAI that adds what a daily batch needs: calls in flight that find
their own level (AIMD: start high, halve on 429/503/Retry-After, a timeout or queueing, grow on success,
follow x-ratelimit-remaining-* headers) under optional hard caps (concurrency, requests and tokens per
minute through aiolimiter), a circuit breaker that stops calling a server that keeps timing out or
failing, our own retries (so every attempt is logged and every wait goes through an injectable sleep),
structured output with a graceful downgrade for servers that reject `response_format`, and one `on_call`
record per attempt (the llm_calls table).

Over 400 lines because it is one client: adaptive concurrency, caps, the circuit breaker, batching and the
call log all sit on the same request path.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from typing import Any
from urllib.parse import urlsplit

# The SDK imports its optional aiohttp transport whenever aiohttp is installed (discord.py brings it): about
# 0.1 s of CPU before a card's call for a transport we never use (the SDK's default httpx one serves us).
# A None entry makes that import fail, as it would without aiohttp; once aiohttp is loaded it costs nothing.
if "aiohttp" not in sys.modules:
    sys.modules.setdefault("openai._vendor.httpx_aiohttp", None)  # type: ignore[assignment]

import openai
from aiolimiter import AsyncLimiter
from openai.types.chat import ChatCompletion
from pydantic import BaseModel

from adapters.http_headers import finite_number, header_value, retry_after
from analysis.llm.schemas import response_format
from bot.ports.protocols import BatchRequest, ChatReply, LLMError, LLMFatal, Message
from bot.ports.secrets import scrub, without_scheme

log = logging.getLogger(__name__)

OnCall = Callable[[dict[str, Any]], None]
Sleep = Callable[[float], Awaitable[None]]

RETRYABLE_STATUS = frozenset({408, 409, 429})  # plus every 5xx
CONGESTION_STATUS = frozenset({429, 503})  # the server says "fewer at once"
FATAL_STATUS = frozenset({401, 403, 404})  # a bad key or an unknown model: no later call can succeed
BASE_DELAY = 1.0  # first backoff step, seconds
MAX_DELAY = 30.0  # cap of one exponential backoff step
START_CONCURRENCY = 64  # adaptive start: a 45-commit day goes out in one wave
MAX_CONCURRENCY = 256
QUEUEING_FACTOR = 4.0  # a call this many times slower (per output token) than the fastest: queueing
MAX_QUEUED_RETRIES = 3  # resends of a call that timed out in a busy server's queue, beyond max_retries
BREAKER_COOLDOWN = 300.0  # seconds an open breaker stays open before one probe call is let through


class _Retry(Exception):
    """One failed attempt worth retrying: its outcome and how long the server asked us to wait."""

    def __init__(self, outcome: str, error: str, retry_after: float | None = None):
        super().__init__(error)
        self.outcome = outcome
        self.error = error
        self.retry_after = retry_after
        self.queued = False  # a timeout while the server answered others: it was busy, not down


class AdaptiveLimit:
    """Calls in flight that find their own level (AIMD). Starts high; halves on congestion (429/503,
    Retry-After, a timeout, a call much slower per output token than the fastest seen: a server that
    queues); grows by one per success while nothing was cut yet, then by 1/limit (about one per round
    trip). A cut counts once per round trip: only calls started after the last cut can cut again.
    `ceiling` is the hard cap (LLM_CONCURRENCY)."""

    def __init__(self, start: int, ceiling: int, *, clock: Callable[[], float] = time.monotonic):
        self.ceiling = max(1, ceiling)
        self.limit = float(max(1, min(start, self.ceiling)))
        self.in_flight = 0
        self.cuts = 0
        self.provider_cap: int | None = None  # x-ratelimit-remaining-requests, as last reported
        self._clock = clock
        self._last_cut = -math.inf
        self._fastest: float | None = None  # seconds per output token of the fastest call
        self._quickest: float | None = None  # seconds of the quickest call
        self._cond = asyncio.Condition()

    @property
    def slots(self) -> int:
        cap = self.provider_cap if self.provider_cap is not None else self.ceiling
        return max(1, min(int(self.limit), cap))

    async def acquire(self) -> float:
        """Wait for a slot; returns the start time (to tell which calls a later cut already covers)."""
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.slots)
            self.in_flight += 1
        return self._clock()

    async def release(self) -> None:
        async with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    def cap(self, remaining: int) -> None:
        """A provider's remaining-requests header: never more in flight than it has left. A ceiling
        that follows the header (it rises again after the provider's reset), not a cut; none left
        means a pause until the reset (the client's), after which the whole budget is back."""
        self.provider_cap = remaining if remaining > 0 else None

    def congestion(self, started: float) -> None:
        if started < self._last_cut:
            return  # this call was sent before the last cut: the cut already answered it
        self.limit = max(1.0, self.limit / 2)
        self._last_cut = self._clock()
        self.cuts += 1
        log.info("LLM concurrency cut to %d", self.slots)

    def success(self, started: float, latency: float, tokens_out: int) -> None:
        per_token = latency / (tokens_out + 100)  # +100: prefill and overhead of a short reply
        if self._fastest is None or per_token < self._fastest:
            self._fastest = per_token
        if self._quickest is None or latency < self._quickest:
            self._quickest = latency
        # Queueing: slower than the fastest call both in seconds and per output token (a long reply
        # alone is slow in seconds only; a fixed-latency server is never slower at all).
        if latency > QUEUEING_FACTOR * self._quickest and per_token > QUEUEING_FACTOR * self._fastest:
            self.congestion(started)
            return
        step = 1.0 if self.cuts == 0 else 1.0 / self.limit
        self.limit = min(float(self.ceiling), self.limit + step)


def _duration(value: str | None) -> float | None:
    """OpenAI's reset headers: "1s", "6m0s", "20ms", "1h2m3.5s" (or plain seconds)."""
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    total, number = 0.0, ""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    i = 0
    while i < len(value):
        ch = value[i]
        if ch.isdigit() or ch == ".":
            number += ch
            i += 1
            continue
        unit = "ms" if value.startswith("ms", i) else ch
        if unit not in units or not number:
            return None
        total += float(number) * units[unit]
        number = ""
        i += len(unit)
    return total if not number else None


def _header_int(headers: Any, name: str) -> int | None:
    try:
        return int(float(headers.get(name)))
    except (TypeError, ValueError):
        return None


def retry_after_seconds(headers: Any, *, now: float | None = None) -> float | None:
    """The wait a response asks for: `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as an
    HTTP date. None when absent or unreadable."""
    millis = finite_number(header_value(headers, "retry-after-ms"))
    if millis is not None and millis >= 0:
        return millis / 1000.0
    return retry_after(header_value(headers, "retry-after"), now=now)


def backoff_delay(
    attempt: int, retry_after: float | None, *, rng: Callable[[], float] = random.random
) -> float:
    """Seconds to wait before attempt `attempt + 1`: the server's Retry-After when it gave one (it knows
    best), else exponential backoff with full jitter so parallel callers do not retry in lockstep."""
    if retry_after is not None:
        return retry_after
    ceiling = min(MAX_DELAY, BASE_DELAY * 2**attempt)
    return ceiling / 2 + rng() * ceiling / 2


def _one_line(text: object, limit: int = 300, scrub: Callable[[str], str] = lambda t: t) -> str:
    """One line of at most `limit` characters, masked by `scrub` before it is cut: a key the server
    echoed where the line ends leaves nothing of itself."""
    flat = scrub(" ".join(str(text).split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _status_detail(exc: openai.APIStatusError, scrub: Callable[[str], str]) -> str:
    """The server's own error message, when its body has one (OpenAI style or a bare string)."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return _one_line(message, scrub=scrub)
    return _one_line(exc.message, scrub=scrub)


def _settle_platform(client: openai.AsyncOpenAI) -> None:
    """Work out the OS the SDK names in its request headers once, where the client is built. The SDK
    does it at a request while it is not known, in a thread of its own: a day's calls, sent together,
    each ran that lookup (`platform.platform()`, about 2 ms of CPU: it reads the interpreter's binary)
    before it could go out, 0.1 s for 44 calls (issue 21). The attribute is the SDK's own cache; an SDK
    without it keeps its own way."""
    if getattr(client, "_platform", False) is None:
        with suppress(Exception):
            client._platform = openai._base_client.get_platform()


def _rejects(detail: str, *words: str) -> bool:
    lowered = detail.lower()
    return any(w in lowered for w in words)


class LLMClient:
    """One model on one OpenAI-compatible server. Safe to share between tasks of one event loop."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        concurrency: int | None = None,
        rpm: int | None = None,
        tpm: int | None = None,
        breaker_after: int = 4,
        price_in: float | None = None,
        price_out: float | None = None,
        on_call: OnCall | None = None,
        sleep: Sleep = asyncio.sleep,
        max_wait: float = 120.0,
    ):
        self.model = model
        self.max_retries = max_retries
        self.timeout = timeout  # per attempt, the whole answer (the SDK's httpx timeout is per read)
        self.price_in = price_in
        self.price_out = price_out
        self.max_wait = max_wait  # a server asking for a longer pause than this is a failure, not a wait
        self.on_call = on_call
        self._sleep = sleep
        # concurrency set: a hard cap (and the start); unset: adaptive from START_CONCURRENCY.
        self.limit = AdaptiveLimit(
            START_CONCURRENCY if concurrency is None else concurrency,
            MAX_CONCURRENCY if concurrency is None else concurrency,
        )
        self._rpm = AsyncLimiter(rpm, 60) if rpm else None
        self._tpm = AsyncLimiter(tpm, 60) if tpm else None
        self._paused_until = 0.0  # a provider said its remaining requests/tokens are used up
        # Circuit breaker: failures (timeouts, 5xx, refused) of calls sent after the last success.
        self.breaker_after = breaker_after
        self._failures = 0
        self._last_success = -math.inf
        self._open_until = -math.inf
        self.breaker_opened = 0
        self._fatal: LLMFatal | None = None  # a 401/403/404, remembered for BREAKER_COOLDOWN
        self._fatal_until = -math.inf
        self.tokens_cached = 0  # prompt tokens the server served from its cache, over the client's life
        # Learned per server: parameters it rejected. We then resend without them (or renamed).
        self.structured_output = True  # False once the server rejected response_format
        self._token_param = "max_tokens"
        self._send_temperature = True
        self.where = self._describe(base_url)
        if api_key:  # pasted with its header's scheme, it would go out as "Bearer Bearer sk-…"
            api_key = without_scheme(api_key, "bearer")
        self._secret = api_key if api_key and len(api_key) >= 6 else None
        # max_retries=0: the SDK must not retry behind our back (we log and pace every attempt).
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "unused", timeout=timeout, max_retries=0
        )
        # The SDK loads its chat resources when first asked for them: done here, where the client is built
        # (in a worker thread, bot/app.py), not at the first call.
        self._create = self._client.chat.completions.with_raw_response.create
        _settle_platform(self._client)

    @staticmethod
    def _describe(base_url: str | None) -> str:
        """Where the server is, for error messages: scheme and host only (no credentials, no path)."""
        if not base_url:
            return "the OpenAI API"
        parts = urlsplit(base_url)
        return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}"

    async def aclose(self) -> None:
        await self._client.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- the call ---------------------------------------------------------------------------------
    async def complete(
        self,
        messages: Sequence[Message],
        *,
        response_model: type[BaseModel] | None = None,
        max_tokens: int,
        temperature: float = 0.2,
        purpose: str,
        sha: str | None = None,
        repo: str | None = None,
        prompt_version: str = "",
    ) -> ChatReply:
        """The model's reply. A reply cut by the output cap comes back with finish_reason "length": the
        caller decides what to do with it. Raises LLMError when every attempt failed (LLMFatal for
        401/403/404), at once when the circuit breaker is open."""
        record = {
            "model": self.model,
            "prompt_version": prompt_version,
            "purpose": purpose,
            "repo": repo,
            "sha": sha,
            "prompt": json.dumps(list(messages), ensure_ascii=False),  # for `digestbot logs --full`
        }
        attempts = queued = 0
        last: _Retry | None = None
        while attempts <= self.max_retries:
            self._check_breaker()
            await self.limit.acquire()
            try:  # a slot is held for the request (and its pacing) only, never across a backoff sleep
                self._check_breaker()  # again: it may have opened while this call waited for a slot
                await self._pace(messages)  # with the slot held: what waits here is what goes next
                started = time.monotonic()
                return await self._attempt(messages, response_model, max_tokens, temperature, record, started)
            except _Retry as retry:
                last = retry
                if retry.outcome == "adapted":
                    continue  # the server rejected a parameter; resent without it, not a failed attempt
                if retry.queued and queued < MAX_QUEUED_RETRIES:
                    queued += 1  # it waited in a busy server's queue (others got answers): not a failure
                    continue
                attempts += 1
                if attempts > self.max_retries:
                    break
                wait = backoff_delay(attempts - 1, retry.retry_after)
                if wait > self.max_wait:
                    raise LLMError(
                        f"LLM {self.model} at {self.where}: {retry.outcome}, asked to wait {wait:.0f}s"
                        f" (more than {self.max_wait:.0f}s)",
                        outcome=retry.outcome,
                    ) from None
                log.info("LLM %s: %s, retrying in %.1fs", purpose, retry.outcome, wait)
            finally:
                await self.limit.release()
            await self._sleep(wait)
        assert last is not None
        raise LLMError(
            f"LLM {self.model} at {self.where}: {last.error} ({last.outcome}) after {attempts} attempt(s)",
            outcome=last.outcome,
        )

    async def _pace(self, messages: Sequence[Message]) -> None:
        """Hard caps (requests and input tokens per minute) and a provider's own "used up" signal."""
        from analysis.llm.tokens import estimate_messages

        for _ in range(3):  # a reply that came in meanwhile may have moved the reset further
            pause = self._paused_until - time.monotonic()
            if pause <= 0:
                break
            await self._sleep(min(pause, self.max_wait))
        if self._rpm is not None:
            await self._rpm.acquire()
        if self._tpm is not None:
            # A prompt larger than the per-minute cap waits for a whole minute's worth, not forever.
            await self._tpm.acquire(min(float(estimate_messages(list(messages))), self._tpm.max_rate))

    # -- circuit breaker ----------------------------------------------------------------------------
    def _check_breaker(self) -> None:
        if self._fatal is not None and time.monotonic() < self._fatal_until:
            raise self._fatal  # the key or the model is wrong: every call would get the same answer
        if time.monotonic() < self._open_until:
            raise LLMError(
                f"LLM {self.model} at {self.where}: stopped calling after {self._failures} consecutive"
                " timeouts or server errors",
                outcome=f"circuit open after {self._failures} consecutive failures",
            )

    def _count_failure(self, started: float) -> None:
        """A failure counts only when no call succeeded since it was sent: a call that waited in a busy
        server's queue and timed out while others got answers says nothing about the server being down."""
        if started < self._last_success:
            return
        self._failures += 1
        if self._failures >= self.breaker_after:
            if time.monotonic() >= self._open_until:
                self.breaker_opened += 1
                log.warning(
                    "LLM %s at %s: %d consecutive timeouts or server errors; not calling it for %.0fs",
                    self.model,
                    self.where,
                    self._failures,
                    BREAKER_COOLDOWN,
                )
            self._open_until = time.monotonic() + BREAKER_COOLDOWN

    async def _attempt(
        self,
        messages: Sequence[Message],
        response_model: type[BaseModel] | None,
        max_tokens: int,
        temperature: float,
        record: dict[str, Any],
        started: float,
    ) -> ChatReply:
        params = self._params(messages, response_model, max_tokens, temperature)
        try:
            # A total deadline: httpx's timeout restarts at every read, so an answer that trickles in
            # would never time out.
            raw = await self._bounded(self._create(**params))
            completion = raw.parse()
        except (openai.APITimeoutError, TimeoutError):
            self.limit.congestion(started)
            self._count_failure(started)
            retry = self._failed(record, started, "timeout", "the request timed out")
            # A success since this call was sent: the server is alive and queueing, the call is resent
            # without spending an attempt (the cut above sends fewer at once from now on).
            retry.queued = started < self._last_success
            raise retry from None
        except openai.APIConnectionError as exc:
            self._count_failure(started)
            reason = _one_line(exc.__cause__ or exc, scrub=self._scrub)
            raise self._failed(record, started, "connection error", reason) from None
        except openai.APIStatusError as exc:
            raise self._status_failure(exc, record, started, "response_format" in params) from None
        reply = self._reply(completion, messages, record, started)
        self._failures = 0
        self._last_success = time.monotonic()
        self.limit.success(started, reply.latency_ms / 1000, reply.tokens_out)
        self._headers(raw.headers)  # after the success step: the provider's word is the last one
        return reply

    # -- the Batch API -----------------------------------------------------------------------------
    async def batch(
        self,
        requests: Sequence[BatchRequest],
        *,
        deadline: float,
        poll: float = 10.0,
        prompt_version: str = "",
    ) -> dict[str, ChatReply]:
        """Many calls through the OpenAI Batch API (a JSONL upload to /v1/files, /v1/batches, polled,
        the output file read back; half the price on OpenAI). Returns the replies that came back by
        `deadline` seconds, by custom_id; the caller sends the rest live. A batch still running at the
        deadline is cancelled. Never raises for the batch's own failure: it returns what it has."""
        if not requests:
            return {}
        began = time.monotonic()
        lines = []
        for r in requests:
            params = self._params(r.messages, r.response_model, r.max_tokens, 0.2)
            lines.append(
                json.dumps(
                    {
                        "custom_id": r.custom_id,
                        "method": "POST",
                        "url": "/v1/chat/completions",
                        "body": params,
                    },
                    ensure_ascii=False,
                )
            )
        job = None
        # Each request within LLM_TIMEOUT (the SDK's timeout is per read: an answer trickling in would
        # otherwise hold the day); the wait as a whole is the loop's, up to `deadline`. A batch that
        # finished near the deadline still gets a whole LLM_TIMEOUT to hand over its results.
        try:
            upload = await self._bounded(
                self._client.files.create(
                    file=("digest-batch.jsonl", ("\n".join(lines) + "\n").encode("utf-8")), purpose="batch"
                )
            )
            job = await self._bounded(
                self._client.batches.create(
                    input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
                )
            )
            while job.status not in ("completed", "failed", "expired", "cancelled"):
                if time.monotonic() - began + poll > deadline:
                    log.warning(
                        "LLM batch %s not done after %gs: cancelled, the calls go live",
                        job.id,
                        deadline,
                    )
                    await self._cancel_batch(job.id)
                    return {}
                await self._sleep(poll)
                with suppress(TimeoutError):  # a poll with no answer in time: the next one, or the deadline
                    job = await self._bounded(self._client.batches.retrieve(job.id))
            if job.status != "completed" or not job.output_file_id:
                log.warning("LLM batch %s ended %s: the calls go live", job.id, job.status)
                return {}
            content = await self._bounded(self._client.files.content(job.output_file_id))
        except (openai.APIError, ValueError) as exc:
            log.warning("LLM batch failed (%s): the calls go live", _one_line(exc, scrub=self._scrub))
            return {}
        except TimeoutError:
            if job is not None and job.status == "completed":  # done and paid for: nothing to cancel
                log.warning(
                    "LLM batch %s: its results did not download within %gs: the calls go live",
                    job.id,
                    self.timeout,
                )
                return {}
            log.warning("LLM batch: no answer within %.0fs: the calls go live", self.timeout)
            if job is not None:
                await self._cancel_batch(job.id)
            return {}
        by_id = {r.custom_id: r for r in requests}
        replies: dict[str, ChatReply] = {}
        for line in content.text.splitlines():
            reply = self._batch_reply(line, by_id, began, prompt_version)
            if reply is not None:
                replies[reply[0]] = reply[1]
        return replies

    async def _bounded(self, call: Awaitable[Any]) -> Any:
        """One SDK request, whole within LLM_TIMEOUT."""
        async with asyncio.timeout(self.timeout):
            return await call

    async def _cancel_batch(self, batch_id: str) -> None:
        """Cancel a batch whose results will not be used (they would be paid for twice), best effort."""
        try:
            await self._bounded(self._client.batches.cancel(batch_id))
        except (openai.APIError, TimeoutError) as exc:
            reason = _one_line(exc, scrub=self._scrub) or "no answer in time"
            log.warning("LLM batch %s could not be cancelled: %s", batch_id, reason)

    def _batch_reply(
        self, line: str, by_id: dict[str, BatchRequest], began: float, prompt_version: str
    ) -> tuple[str, ChatReply] | None:
        try:
            item = json.loads(line)
        except ValueError:
            return None
        request = by_id.get(item.get("custom_id")) if isinstance(item, dict) else None
        if request is None:
            return None
        response = item.get("response") or {}
        if response.get("status_code") != 200:
            return None
        record = {"model": self.model, "prompt_version": prompt_version, "purpose": f"{request.purpose}-batch",
                  "repo": request.repo, "sha": request.sha}  # fmt: skip
        try:
            completion = ChatCompletion.model_validate(response.get("body") or {})
            return request.custom_id, self._reply(completion, request.messages, record, began)
        except (ValueError, _Retry):
            return None

    def _headers(self, headers: Any) -> None:
        """x-ratelimit-remaining-requests / -tokens (OpenAI, Azure, many proxies): never more in flight
        than requests remain; none at all until the reset when either is used up."""
        requests = _header_int(headers, "x-ratelimit-remaining-requests")
        tokens = _header_int(headers, "x-ratelimit-remaining-tokens")
        if requests is not None:
            self.limit.cap(requests)
        for remaining, reset in (
            (requests, "x-ratelimit-reset-requests"),
            (tokens, "x-ratelimit-reset-tokens"),
        ):
            if remaining is not None and remaining <= 0:
                wait = _duration(headers.get(reset)) or 1.0
                self._paused_until = max(self._paused_until, time.monotonic() + wait)

    def _params(
        self,
        messages: Sequence[Message],
        response_model: type[BaseModel] | None,
        max_tokens: int,
        temperature: float,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            self._token_param: max_tokens,
        }
        if self._send_temperature:
            params["temperature"] = temperature
        if response_model is not None and self.structured_output:
            params["response_format"] = response_format(response_model)  # the schema is cached there
        return params

    def _status_failure(
        self, exc: openai.APIStatusError, record: dict[str, Any], started: float, sent_schema: bool
    ) -> Exception:
        status = exc.status_code
        detail = _status_detail(exc, self._scrub)
        outcome = f"http {status}"
        if status in (400, 422) and self._adapt(detail, sent_schema):
            self._log(record, started, outcome=outcome, error=f"parameter rejected, resending: {detail}")
            return _Retry("adapted", detail)
        if status in RETRYABLE_STATUS or status >= 500:
            retry_after = retry_after_seconds(exc.response.headers)
            if status in CONGESTION_STATUS or retry_after is not None:
                self.limit.congestion(started)
            if status >= 500 and status != 503:  # 503 is "busy", an answer; 500/502/504 may be a dying server
                self._count_failure(started)
            return self._failed(record, started, outcome, detail, retry_after)
        self._log(record, started, outcome=outcome, error=detail)
        if status in FATAL_STATUS:
            hint = (
                " (check OPENAI_API_KEY)"
                if status in (401, 403)
                else " (check DIGEST_MODEL and OPENAI_BASE_URL)"
            )
            self._fatal = LLMFatal(
                f"LLM {self.model} at {self.where} answered {status}: {detail}{hint}", outcome=outcome
            )
            self._fatal_until = time.monotonic() + BREAKER_COOLDOWN
            return self._fatal
        return LLMError(f"LLM {self.model} at {self.where} answered {status}: {detail}", outcome=outcome)

    def _scrub(self, text: str) -> str:
        """Server messages sometimes echo the key they were sent (401s): never pass it on, nor any
        configured secret (bot.ports.secrets.scrub also masks what is left of one cut elsewhere)."""
        text = scrub(text)
        return scrub(text, [self._secret]) if self._secret else text

    def _adapt(self, detail: str, sent_schema: bool) -> bool:
        """Learn from a 400 that names a parameter this server does not take. True when the request
        can be resent differently (each adaptation happens at most once per client)."""
        if sent_schema and _rejects(detail, "response_format", "json_schema", "response format"):
            log.warning("LLM server rejects response_format; sending the schema in the prompt only")
            self.structured_output = False
            return True
        if self._token_param == "max_tokens" and _rejects(detail, "max_completion_tokens"):
            self._token_param = "max_completion_tokens"  # newer OpenAI models
            return True
        if self._send_temperature and _rejects(detail, "temperature"):
            self._send_temperature = False  # reasoning models accept only the default
            return True
        return False

    def _failed(
        self,
        record: dict[str, Any],
        started: float,
        outcome: str,
        error: str,
        retry_after: float | None = None,
    ) -> _Retry:
        self._log(record, started, outcome=outcome, error=error)
        return _Retry(outcome, error, retry_after)

    def _reply(
        self, completion: Any, messages: Sequence[Message], record: dict[str, Any], started: float
    ) -> ChatReply:
        from analysis.llm.tokens import estimate_messages, estimate_tokens

        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise self._failed(record, started, "empty reply", "the server sent no choices")
        choice = choices[0]
        content = (getattr(choice.message, "content", None) or "") if choice.message else ""
        finish = choice.finish_reason or "unknown"
        usage = getattr(completion, "usage", None)
        # Some servers send no usage: estimate, so the budget report and the cost stay meaningful.
        tokens_in = getattr(usage, "prompt_tokens", None) or estimate_messages(list(messages))
        tokens_out = getattr(usage, "completion_tokens", None) or estimate_tokens(content)
        details = getattr(usage, "prompt_tokens_details", None)
        cached = int(getattr(details, "cached_tokens", None) or 0)
        self.tokens_cached += cached
        latency_ms = self._log(
            record,
            started,
            outcome="ok" if finish == "stop" else finish,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            finish_reason=finish,
            reply=content,
        )
        return ChatReply(
            content,
            finish,
            tokens_in,
            tokens_out,
            latency_ms,
            getattr(completion, "model", None) or self.model,
            cached,
        )

    def _log(
        self,
        record: dict[str, Any],
        started: float,
        *,
        outcome: str,
        error: str | None = None,
        tokens_in: int = 0,
        tokens_out: int = 0,
        finish_reason: str | None = None,
        reply: str | None = None,
    ) -> float:
        latency_ms = round((time.monotonic() - started) * 1000, 1)
        fields = {
            **record,
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
            "latency_ms": latency_ms,
            "finish_reason": finish_reason,
            "outcome": outcome,
            "error": error,
            "cost_usd": self.cost(tokens_in, tokens_out),
            "reply": reply,
        }
        if self.on_call is not None:
            try:
                self.on_call(fields)
            except Exception:  # bookkeeping must never fail an analysis
                log.warning("could not record an LLM call", exc_info=True)
        return latency_ms

    def cost(self, tokens_in: int, tokens_out: int) -> float | None:
        """USD for one call when a price is configured (prices are per million tokens)."""
        if self.price_in is None and self.price_out is None:
            return None
        return round((tokens_in * (self.price_in or 0.0) + tokens_out * (self.price_out or 0.0)) / 1e6, 8)
