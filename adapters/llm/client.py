"""The client of one model on one OpenAI-compatible server: building the SDK client, one call with its retries
and pacing (caps, a provider's "used up", the adaptive limit), one attempt and what its failure means."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from typing import Any
from urllib.parse import urlsplit

import openai
from aiolimiter import AsyncLimiter
from pydantic import BaseModel

from adapters.llm.adaptive_limit import MAX_CONCURRENCY, START_CONCURRENCY, AdaptiveLimit
from adapters.llm.batch import BatchCalls
from adapters.llm.breaker import BREAKER_COOLDOWN, CircuitBreaker
from adapters.llm.call_log import CallLog
from adapters.llm.parameters import ParameterFallbacks
from adapters.llm.rate_headers import header_int, reset_duration, retry_after_seconds
from adapters.llm.retries import (
    CONGESTION_STATUS,
    FATAL_STATUS,
    MAX_QUEUED_RETRIES,
    RETRYABLE_STATUS,
    Retry,
    backoff_delay,
)
from adapters.llm.server_messages import not_a_completion, one_line, status_detail
from bot.ports.protocols import ChatReply, LLMError, LLMFatal, Message
from bot.ports.secrets import scrub, without_scheme

# The package's one logger: its lines are named "adapters.llm", as they were before the client was split.
log = logging.getLogger(__package__)

OnCall = Callable[[dict[str, Any]], None]
Sleep = Callable[[float], Awaitable[None]]


def _plain_http_client(base_url: str | None) -> Any:
    """For a server reached without TLS (`http://`: a local llama.cpp, vLLM or Ollama), the SDK's HTTP client
    with the SDK's defaults but no certificate store: loading it costs 0.025 s of CPU before the first call
    (issue 21), for a connection that never uses it. A redirect from such a server to https is as trusted as
    the plain-text server that sent it. None (the SDK's own client) for any other URL."""
    if base_url is None or urlsplit(base_url).scheme.lower() != "http":
        return None
    return openai.DefaultAsyncHttpxClient(verify=False)


def settle_platform(client: openai.AsyncOpenAI) -> None:
    """Work out the OS the SDK names in its request headers once, where the client is built. The SDK
    does it at a request while it is not known, in a thread of its own: a day's calls, sent together,
    each ran that lookup (`platform.platform()`, about 2 ms of CPU: it reads the interpreter's binary)
    before it could go out, 0.1 s for 44 calls (issue 21). The attribute is the SDK's own cache; an SDK
    without it keeps its own way."""
    if getattr(client, "_platform", False) is None:
        with suppress(Exception):
            client._platform = openai._base_client.get_platform()


class LLMClient(BatchCalls, CircuitBreaker, ParameterFallbacks, CallLog):
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
        self._base_path = urlsplit(base_url).path.rstrip("/") if base_url else "/v1"
        if api_key:  # pasted with its header's scheme, it would go out as "Bearer Bearer sk-…"
            api_key = without_scheme(api_key, "bearer")
        self._secret = api_key if api_key and len(api_key) >= 6 else None
        # max_retries=0: the SDK must not retry behind our back (we log and pace every attempt).
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "unused",
            timeout=timeout,
            max_retries=0,
            http_client=_plain_http_client(base_url),
        )
        # The SDK loads its chat resources when first asked for them: done here, where the client is built
        # (in a worker thread, bot/app.py), not at the first call.
        self._create = self._client.chat.completions.with_raw_response.create
        settle_platform(self._client)
        # So is the HTTP transport's async backend, which anyio imports by this name at the first connection:
        # on the event loop, on the way to that call.
        with suppress(ImportError):
            importlib.import_module("anyio._backends._asyncio")

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
        last: Retry | None = None
        while attempts <= self.max_retries:
            self._check_breaker()
            await self.limit.acquire()
            try:  # a slot is held for the request (and its pacing) only, never across a backoff sleep
                self._check_breaker()  # again: it may have opened while this call waited for a slot
                await self._pace(messages)  # with the slot held: what waits here is what goes next
                started = time.monotonic()
                return await self._attempt(messages, response_model, max_tokens, temperature, record, started)
            except Retry as retry:
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
            if not getattr(completion, "choices", None):
                raise ValueError("no choices")
        except ValueError:  # a 200 that is no chat completion: a gateway's error page or error object
            outcome, error = not_a_completion(raw.text, raw.headers.get("content-type", ""), self._scrub)
            if outcome != "empty reply":
                self._count_failure(started)
            raise self._failed(record, started, outcome, error) from None
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
            reason = one_line(exc.__cause__ or exc, scrub=self._scrub)
            raise self._failed(record, started, "connection error", reason) from None
        except openai.APIStatusError as exc:
            raise self._status_failure(exc, record, started, "response_format" in params) from None
        reply = self._reply(completion, messages, record, started)
        self._failures = 0
        self._last_success = time.monotonic()
        self.limit.success(started, reply.latency_ms / 1000, reply.tokens_out)
        self._headers(raw.headers)  # after the success step: the provider's word is the last one
        return reply

    async def _bounded(self, call: Awaitable[Any]) -> Any:
        """One SDK request, whole within LLM_TIMEOUT."""
        async with asyncio.timeout(self.timeout):
            return await call

    def _headers(self, headers: Any) -> None:
        """x-ratelimit-remaining-requests / -tokens (OpenAI, Azure, many proxies): never more in flight
        than requests remain; none at all until the reset when either is used up."""
        requests = header_int(headers, "x-ratelimit-remaining-requests")
        tokens = header_int(headers, "x-ratelimit-remaining-tokens")
        if requests is not None:
            self.limit.cap(requests)
        for remaining, reset in (
            (requests, "x-ratelimit-reset-requests"),
            (tokens, "x-ratelimit-reset-tokens"),
        ):
            if remaining is not None and remaining <= 0:
                wait = reset_duration(headers.get(reset)) or 1.0
                self._paused_until = max(self._paused_until, time.monotonic() + wait)

    def _status_failure(
        self, exc: openai.APIStatusError, record: dict[str, Any], started: float, sent_schema: bool
    ) -> Exception:
        status = exc.status_code
        detail = status_detail(exc, self._scrub)
        outcome = f"http {status}"
        if status in (400, 422) and self._adapt(detail, sent_schema):
            self._log(record, started, outcome=outcome, error=f"parameter rejected, resending: {detail}")
            return Retry("adapted", detail)
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
            if status == 404 and "/v1" not in self._base_path:
                # a local server's root given as its base URL (http://host:8080): each path misses /v1
                hint = (
                    f" (check DIGEST_MODEL and OPENAI_BASE_URL: its path {self._base_path or '/'!r} has no /v1,"
                    " under which OpenAI-compatible servers usually answer, e.g. http://localhost:8080/v1)"
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
