"""A server's error in one line we may log: its own message when its body has one, masked before it is
cut; what a 200 that is no chat completion held; whether a 400's message names a parameter."""

from __future__ import annotations

import json
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


def not_a_completion(text: str, content_type: str, scrub: Callable[[str], str]) -> tuple[str, str]:
    """(outcome, error) for a 200 whose body holds no choices: some gateways send their errors with 200 (an
    `error` object, an HTML page), which is a failed attempt worth another, said as what it was."""
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("error"):
        inner = body["error"]
        message = inner.get("message") if isinstance(inner, dict) else inner
        return "server error", "the server answered 200 with an error: " + one_line(
            message or inner, scrub=scrub
        )
    if body is None and text.strip():
        kind = content_type.split(";")[0].strip() or "no content type"
        return "bad reply", f"the server's answer is not a chat completion ({kind}): " + one_line(
            text, 120, scrub
        )
    return "empty reply", "the server sent no choices"


def rejects(detail: str, *words: str) -> bool:
    lowered = detail.lower()
    return any(w in lowered for w in words)
