"""A server's error in one line we may log: its own message when its body has one, masked before it is
cut; whether a 400's message names a parameter."""

from __future__ import annotations

from collections.abc import Callable

import openai


def one_line(text: object, limit: int = 300, scrub: Callable[[str], str] = lambda t: t) -> str:
    """One line of at most `limit` characters, masked by `scrub` before it is cut: a key the server
    echoed where the line ends leaves nothing of itself."""
    flat = scrub(" ".join(str(text).split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def status_detail(exc: openai.APIStatusError, scrub: Callable[[str], str]) -> str:
    """The server's own error message, when its body has one (OpenAI style or a bare string)."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return one_line(message, scrub=scrub)
    return one_line(exc.message, scrub=scrub)


def rejects(detail: str, *words: str) -> bool:
    lowered = detail.lower()
    return any(w in lowered for w in words)
