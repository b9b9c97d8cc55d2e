"""What a response's headers say about pacing: Retry-After (`retry-after-ms`, seconds or an HTTP date), the
requests and tokens remaining and when they reset (OpenAI's "6m0s" durations)."""

from __future__ import annotations

from typing import Any

from adapters.http_headers import finite_number, header_value, retry_after


def reset_duration(value: str | None) -> float | None:
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


def header_int(headers: Any, name: str) -> int | None:
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
