"""What a server takes: a request's parameters, and what we learn from a 400 that names one it rejects
(`response_format` → the schema in the prompt only, `max_tokens` → `max_completion_tokens`, no
`temperature`); each adaptation happens at most once per client."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from adapters.llm.server_messages import rejects
from analysis.llm.schemas import response_format
from bot.ports.protocols import Message

# The package's one logger: its lines are named "adapters.llm", as they were before the client was split.
log = logging.getLogger(__package__)


class ParameterFallbacks:
    """LLMClient's request parameters, as far as its server takes them."""

    model: str
    structured_output: bool
    _token_param: str
    _send_temperature: bool

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

    def _adapt(self, detail: str, sent_schema: bool) -> bool:
        """Learn from a 400 that names a parameter this server does not take. True when the request
        can be resent differently (each adaptation happens at most once per client)."""
        if sent_schema and rejects(detail, "response_format", "json_schema", "response format"):
            log.warning("LLM server rejects response_format; sending the schema in the prompt only")
            self.structured_output = False
            return True
        if self._token_param == "max_tokens" and rejects(detail, "max_completion_tokens"):
            self._token_param = "max_completion_tokens"  # newer OpenAI models
            return True
        if self._send_temperature and rejects(detail, "temperature"):
            self._send_temperature = False  # reasoning models accept only the default
            return True
        return False
