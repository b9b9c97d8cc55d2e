"""One record per attempt (the llm_calls table, through `on_call`): the reply read with its tokens (estimated
when the server sends no usage), latency, outcome and cost."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from adapters.llm.retries import Retry
from adapters.llm.server_messages import one_line
from bot.ports.protocols import ChatReply, LLMError, Message

# The package's one logger: its lines are named "adapters.llm", as they were before the client was split.
log = logging.getLogger(__package__)


class CallLog:
    """LLMClient's call records."""

    model: str
    price_in: float | None
    price_out: float | None
    on_call: Callable[[dict[str, Any]], None] | None
    tokens_cached: int

    def _failed(
        self,
        record: dict[str, Any],
        started: float,
        outcome: str,
        error: str,
        retry_after: float | None = None,
    ) -> Retry:
        self._log(record, started, outcome=outcome, error=error)
        return Retry(outcome, error, retry_after)

    def _reply(
        self, completion: Any, messages: Sequence[Message], record: dict[str, Any], started: float
    ) -> ChatReply:
        from analysis.llm.tokens import estimate_messages, estimate_tokens

        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise self._failed(record, started, "empty reply", "the server sent no choices")
        choice = choices[0]
        content = (getattr(choice.message, "content", None) or "") if choice.message else ""
        refusal = getattr(choice.message, "refusal", None) if choice.message else None
        if refusal and not content:
            # The model declined (a safety refusal): asking again gets the same answer, so no retry.
            reason = one_line(refusal, 200)
            self._log(record, started, outcome="refused", error=f"the model refused: {reason}")
            raise LLMError(f"LLM {self.model} refused: {reason}", outcome="refused")
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
