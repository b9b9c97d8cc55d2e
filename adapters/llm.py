"""The LLM client: any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp, DeepSeek).

A thin layer over openai's AsyncOpenAI that adds what a daily batch needs: a concurrency bound, an
optional requests-per-minute limit, our own retries (so every attempt is logged and every wait goes
through an injectable sleep), structured output with a graceful downgrade for servers that reject
`response_format`, and one `on_call` record per attempt (the llm_calls table).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import openai
from pydantic import BaseModel

from analysis.errors import ServiceError
from analysis.schemas import response_format

log = logging.getLogger(__name__)

Message = dict[str, Any]
OnCall = Callable[[dict[str, Any]], None]
Sleep = Callable[[float], Awaitable[None]]

RETRYABLE_STATUS = frozenset({408, 409, 429})  # plus every 5xx
BASE_DELAY = 1.0  # first backoff step, seconds
MAX_DELAY = 30.0  # cap of one exponential backoff step


class LLMError(ServiceError):
    """An LLM call failed for good. The message is one line, safe to show (never the API key)."""

    def __init__(self, message: str, *, outcome: str = "error"):
        super().__init__(message)
        self.outcome = outcome  # the llm_calls outcome of the last attempt: "http 429", "timeout", …


@dataclass(frozen=True, slots=True)
class ChatReply:
    content: str
    finish_reason: str  # "stop", "length", "content_filter", … ("unknown" when the server sent none)
    tokens_in: int
    tokens_out: int
    latency_ms: float
    model: str


class _Retry(Exception):
    """One failed attempt worth retrying: its outcome and how long the server asked us to wait."""

    def __init__(self, outcome: str, error: str, retry_after: float | None = None):
        super().__init__(error)
        self.outcome = outcome
        self.error = error
        self.retry_after = retry_after


class RateLimiter:
    """At most `rpm` request starts per minute, evenly spaced (60/rpm s apart): simple, no bursts,
    and it never lets more than rpm starts fall into any 60-second window."""

    def __init__(
        self, rpm: int, *, sleep: Sleep = asyncio.sleep, clock: Callable[[], float] = time.monotonic
    ):
        if rpm < 1:
            raise ValueError("rpm must be at least 1")
        self.interval = 60.0 / rpm
        self._sleep = sleep
        self._clock = clock
        self._next = -math.inf

    async def acquire(self) -> None:
        # Reserve a slot synchronously (no await in between), then wait for it: fair and race-free.
        now = self._clock()
        slot = max(now, self._next)
        self._next = slot + self.interval
        if slot > now:
            await self._sleep(slot - now)


def retry_after_seconds(headers: Any, *, now: float | None = None) -> float | None:
    """The wait a response asks for: `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as an
    HTTP date. None when absent or unreadable."""
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            seconds = _http_date_wait(value, now)
        if seconds is not None and math.isfinite(seconds):
            return max(0.0, seconds)
    return None


def _http_date_wait(value: str, now: float | None) -> float | None:
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return moment.timestamp() - (time.time() if now is None else now)


def backoff_delay(
    attempt: int, retry_after: float | None, *, rng: Callable[[], float] = random.random
) -> float:
    """Seconds to wait before attempt `attempt + 1`: the server's Retry-After when it gave one (it knows
    best), else exponential backoff with full jitter so parallel callers do not retry in lockstep."""
    if retry_after is not None:
        return retry_after
    ceiling = min(MAX_DELAY, BASE_DELAY * 2**attempt)
    return ceiling / 2 + rng() * ceiling / 2


def _one_line(text: object, limit: int = 300) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _status_detail(exc: openai.APIStatusError) -> str:
    """The server's own error message, when its body has one (OpenAI style or a bare string)."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return _one_line(message)
    return _one_line(exc.message)


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
        concurrency: int = 8,
        rpm: int | None = None,
        price_in: float | None = None,
        price_out: float | None = None,
        on_call: OnCall | None = None,
        sleep: Sleep = asyncio.sleep,
        max_wait: float = 120.0,
    ):
        self.model = model
        self.max_retries = max_retries
        self.price_in = price_in
        self.price_out = price_out
        self.max_wait = max_wait  # a server asking for a longer pause than this is a failure, not a wait
        self.on_call = on_call
        self._sleep = sleep
        self._sem = asyncio.Semaphore(concurrency)
        self._limiter = RateLimiter(rpm, sleep=sleep) if rpm else None
        # Learned per server: parameters it rejected. We then resend without them (or renamed).
        self.structured_output = True  # False once the server rejected response_format
        self._token_param = "max_tokens"
        self._send_temperature = True
        self.where = self._describe(base_url)
        self._secret = api_key if api_key and len(api_key) >= 6 else None
        # max_retries=0: the SDK must not retry behind our back (we log and pace every attempt).
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "unused", timeout=timeout, max_retries=0
        )

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
        caller decides what to do with it. Raises LLMError when every attempt failed."""
        record = {
            "model": self.model,
            "prompt_version": prompt_version,
            "purpose": purpose,
            "repo": repo,
            "sha": sha,
            "prompt": json.dumps(list(messages), ensure_ascii=False),  # for `digestbot logs --full`
        }
        attempts = 0
        last: _Retry | None = None
        while attempts <= self.max_retries:
            if self._limiter is not None:
                await self._limiter.acquire()
            try:
                async with self._sem:  # held for the request only, never across a backoff sleep
                    return await self._attempt(messages, response_model, max_tokens, temperature, record)
            except _Retry as retry:
                last = retry
                if retry.outcome == "adapted":
                    continue  # the server rejected a parameter; resent without it, not a failed attempt
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
                await self._sleep(wait)
        assert last is not None
        raise LLMError(
            f"LLM {self.model} at {self.where}: {last.error} ({last.outcome}) after {attempts} attempt(s)",
            outcome=last.outcome,
        )

    async def _attempt(
        self,
        messages: Sequence[Message],
        response_model: type[BaseModel] | None,
        max_tokens: int,
        temperature: float,
        record: dict[str, Any],
    ) -> ChatReply:
        params = self._params(messages, response_model, max_tokens, temperature)
        started = time.monotonic()
        try:
            completion = await self._client.chat.completions.create(**params)
        except openai.APITimeoutError:
            raise self._failed(record, started, "timeout", "the request timed out") from None
        except openai.APIConnectionError as exc:
            reason = self._scrub(_one_line(exc.__cause__ or exc))
            raise self._failed(record, started, "connection error", reason) from None
        except openai.APIStatusError as exc:
            raise self._status_failure(exc, record, started, "response_format" in params) from None
        return self._reply(completion, messages, record, started)

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
        detail = self._scrub(_status_detail(exc))
        outcome = f"http {status}"
        if status in (400, 422) and self._adapt(detail, sent_schema):
            self._log(record, started, outcome=outcome, error=f"parameter rejected, resending: {detail}")
            return _Retry("adapted", detail)
        if status in RETRYABLE_STATUS or status >= 500:
            return self._failed(record, started, outcome, detail, retry_after_seconds(exc.response.headers))
        self._log(record, started, outcome=outcome, error=detail)
        hint = (
            " (check OPENAI_API_KEY)"
            if status in (401, 403)
            else " (check DIGEST_MODEL)"
            if status == 404
            else ""
        )
        return LLMError(
            f"LLM {self.model} at {self.where} answered {status}: {detail}{hint}", outcome=outcome
        )

    def _scrub(self, text: str) -> str:
        """Server messages sometimes echo the key they were sent (401s): never pass it on."""
        return text.replace(self._secret, "***") if self._secret else text

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
        from analysis.tokens import estimate_messages, estimate_tokens

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
