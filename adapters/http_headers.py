"""HTTP headers every adapter reads (or writes) the same way: Retry-After above all (the credential an
Authorization header carries is read by bot.ports.secrets.without_scheme, which the masking shares).

One reader, so GitHub, the LLM endpoint and Slack agree on what a wait header means (RFC 9110 §10.2.3:
delay-seconds or an HTTP-date). It never caps: what counts as absurd is each caller's call (GitHub's limits
reset within the hour, an LLM caller gives up past its own wait budget, Slack past its per-call budget).
"""

from __future__ import annotations

import math
import time
from email.utils import parsedate_to_datetime
from typing import Any


def header_value(headers: Any, name: str) -> str | None:
    """A header's value from any mapping the clients hand us: httpx.Headers, a plain dict, or slack_sdk's
    dict of lists. Names match case-insensitively; a list gives its first value; None when absent."""
    if not headers:
        return None
    value = headers.get(name)
    if value is None:
        wanted = name.lower()
        value = next((v for k, v in dict(headers).items() if str(k).lower() == wanted), None)
    if isinstance(value, list | tuple):
        value = value[0] if value else None
    return None if value is None else str(value)


def finite_number(value: str | None) -> float | None:
    """A header's finite number (servers send "30", "1.5", garbage or "1e400"); None otherwise."""
    try:
        number = float((value or "").strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds a Retry-After value asks us to wait: delay-seconds (fractions accepted) or an HTTP-date
    (one already past is 0). None when absent, negative, not finite or unreadable: the caller then falls
    back to its own backoff. `now` is the Unix time an HTTP-date is measured from (default: the clock)."""
    if not value or not value.strip():
        return None
    seconds = finite_number(value)
    if seconds is not None:
        return seconds if seconds >= 0 else None
    try:
        moment = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, OverflowError, IndexError):
        return None
    return max(0.0, moment.timestamp() - (time.time() if now is None else now))
