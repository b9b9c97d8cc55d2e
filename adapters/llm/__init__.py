"""The LLM client: any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp, DeepSeek).

A thin layer over openai's AsyncOpenAI that adds what a daily batch needs: calls in flight that find
their own level (AIMD: start high, halve on 429/503/Retry-After, a timeout or queueing, grow on success,
follow x-ratelimit-remaining-* headers) under optional hard caps (concurrency, requests and tokens per
minute through aiolimiter), a circuit breaker that stops calling a server that keeps timing out or
failing, our own retries (so every attempt is logged and every wait goes through an injectable sleep),
structured output with a graceful downgrade for servers that reject `response_format`, and one `on_call`
record per attempt (the llm_calls table).

The parts: the client, one call and one attempt (client.py); the adaptive limit (adaptive_limit.py);
retries and backoff (retries.py); what response headers say about pacing (rate_headers.py); a server's
error in one line (server_messages.py); and, mixed into the client, the circuit breaker (breaker.py), the
Batch API (batch.py), the parameters a server takes (parameters.py), the call records (call_log.py).
"""

import sys

# The SDK imports its optional aiohttp transport whenever aiohttp is installed (discord.py brings it): about
# 0.1 s of CPU before a card's call for a transport we never use (the SDK's default httpx one serves us).
# A None entry makes that import fail, as it would without aiohttp; once aiohttp is loaded it costs nothing.
# Here, at the top of the package, it comes before any of its modules imports openai.
if "aiohttp" not in sys.modules:
    sys.modules.setdefault("openai._vendor.httpx_aiohttp", None)  # type: ignore[assignment]

from adapters.llm.client import LLMClient

__all__ = ["LLMClient"]
