"""Secrets masked in every line we print, log, store or post: the configured ones (registered once the
settings are loaded) replaced whole, and what is left of one where someone else cut the text. Shared by
the application and the adapters, which quote servers' error messages; logging's filter (bot/monitoring/
logs.py) masks with the same rules."""

from __future__ import annotations

import re

# The Authorization schemes someone may paste before a credential ("Bearer sk-…", "token ghp_…", "Bot …").
PASTED_SCHEMES = ("bearer", "token", "bot", "basic")


def without_scheme(credential: str, *schemes: str) -> str:
    """A credential as configured, without the Authorization scheme someone pasted with it ("Bearer sk-…",
    "token ghp_…") and surrounding spaces: the client adds its own scheme ("Bearer Bearer sk-…" is refused),
    and what it sends is what a server echoes, so the masking below reads secrets the same way."""
    pattern = "|".join(re.escape(s) for s in schemes)
    return re.sub(rf"^(?:{pattern})\s+", "", credential.strip(), flags=re.IGNORECASE)


def maskable(secrets: list[str]) -> list[str]:
    """Each secret as sent (without surrounding spaces and a pasted scheme: the pasted text holds it, so
    it is masked too, and a scheme's own word is not masked wherever it appears), longest first, so a
    secret containing another is masked whole."""
    sent = {without_scheme(s, *PASTED_SCHEMES) for s in secrets if s}
    return sorted({s for s in sent if len(s) >= 6}, key=len, reverse=True)


# The configured secrets, set once settings are loaded: every line we print goes through scrub().
_secrets: list[str] = []


def register_secrets(secrets: list[str]) -> None:
    _secrets[:] = maskable(secrets)


PARTIAL_MIN = 6  # leading characters of a secret that are masked wherever they appear


def scrub(text: str, secrets: list[str] | None = None) -> str:
    """text with every configured secret (or every one of `secrets`) masked: printed lines, error
    lines, reports, chat replies. A secret's beginning is masked too (PARTIAL_MIN characters or more
    of it): what is left of a secret where someone else cut the text."""
    for secret in _secrets if secrets is None else maskable(secrets):
        text = _mask_starts(text.replace(secret, "***"), secret)
    return text


def _mask_starts(text: str, secret: str) -> str:
    head = secret[:PARTIAL_MIN]
    at = text.find(head)
    while at != -1:
        end = at + len(head)
        while end < len(text) and end - at < len(secret) and text[end] == secret[end - at]:
            end += 1
        text = text[:at] + "***" + text[end:]
        at = text.find(head, at + 3)
    return text


def clip(text: str, limit: int) -> str:
    """text masked, then cut to `limit` characters: in that order, a secret quoted where the text is
    cut leaves nothing of itself behind."""
    text = scrub(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
