"""The front door of Slack's HTTP mode: every request is authenticated before anything parses it.

Order matters: read the body within a deadline, check the timestamp's shape and the signature
(slack_sdk.signature), refuse a replay of a request already served, skip an event Slack retries
(X-Slack-Retry-Num) that we already took, and only then hand the request to the Bolt app. A forged
or malformed request costs a 401 and one INFO line, never a traceback."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

from bot.ports.listener import guarded_runner

log = logging.getLogger(__name__)

# Slack refuses requests older than 5 minutes (its signing docs); a replay inside that window would
# pass the signature check, so signatures seen within it are remembered.
REPLAY_WINDOW = 5 * 60
# Slack gives us 3 s to answer: a body that has not arrived well within that is not Slack's.
BODY_TIMEOUT = 10.0
# Headers of a new or kept-alive connection must arrive within this (aiohttp's keep-alive timer,
# which also closes a connection whose request line or headers stall).
HEADER_TIMEOUT = 15.0
MAX_BODY = 1024 * 1024  # Slack's payloads are a few KB; aiohttp refuses more with 413


class _Recent:
    """Keys seen in the last `window` seconds (bounded, oldest forgotten first)."""

    def __init__(self, window: float, size: int = 10_000, clock: Callable[[], float] = time.monotonic):
        self.window = window
        self.size = size
        self.clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    def _expire(self) -> None:
        now = self.clock()
        while self._seen and (next(iter(self._seen.values())) <= now or len(self._seen) > self.size):
            self._seen.popitem(last=False)

    def add(self, key: str) -> bool:
        """True when key is new (and remember it); False when it was seen within the window."""
        self._expire()
        if key in self._seen:
            return False
        self._seen[key] = self.clock() + self.window
        return True

    def forget(self, key: str) -> None:
        self._seen.pop(key, None)


def _timestamp_ok(stamp: str | None) -> bool:
    """A Unix time in seconds: ASCII digits, a sane length (int() of 5000 digits raises)."""
    return bool(stamp) and stamp.isascii() and stamp.isdigit() and len(stamp) <= 12  # type: ignore[union-attr]


def _event_id(body: str, content_type: str) -> str | None:
    if "json" not in content_type:
        return None
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    event_id = payload.get("event_id") if isinstance(payload, dict) else None
    return event_id if isinstance(event_id, str) else None


class FrontDoor:
    """The aiohttp handler of Slack's request URL."""

    def __init__(self, app: AsyncApp, signing_secret: str, *, body_timeout: float | None = None):
        self.app = app
        self.verifier = SignatureVerifier(signing_secret)
        self.body_timeout = BODY_TIMEOUT if body_timeout is None else body_timeout
        self.signatures = _Recent(REPLAY_WINDOW)
        self.events = _Recent(REPLAY_WINDOW * 3)  # Slack retries an event for a few minutes

    async def handle(self, request: web.Request) -> web.StreamResponse:
        try:
            async with asyncio.timeout(self.body_timeout):
                raw = await request.read()
        except TimeoutError:
            log.info("Slack request refused: its body did not arrive within %gs", self.body_timeout)
            response = web.Response(status=408, text="request body too slow")
            response.force_close()  # the rest of the body may never come: do not wait for it
            return response
        stamp = request.headers.get("X-Slack-Request-Timestamp")
        signature = request.headers.get("X-Slack-Signature")
        if not _timestamp_ok(stamp) or not self.verifier.is_valid(raw, stamp, signature):
            log.info("Slack request refused: missing, stale or wrong signature")
            return web.Response(status=401, text="invalid signature")
        assert signature is not None
        content_type = request.headers.get("Content-Type", "")
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:
            return web.Response(status=400, text="body is not UTF-8")
        event_id = _event_id(body, content_type)
        if not self.signatures.add(signature):
            if event_id is not None:  # the same event delivered again: already acknowledged
                return web.Response(status=200)
            log.info("Slack request refused: a replay of a request already served")
            return web.Response(status=401, text="replayed request")
        if event_id is not None and not self.events.add(event_id):
            log.info(
                "Slack event %s delivered again (X-Slack-Retry-Num %s, %s): already taken",
                event_id,
                request.headers.get("X-Slack-Retry-Num", "-"),
                request.headers.get("X-Slack-Retry-Reason", "-"),
            )
            return web.Response(status=200, headers={"X-Slack-No-Retry": "1"})
        try:
            bolt_request = AsyncBoltRequest(body=body, query=request.query_string, headers=_headers(request))
        except (ValueError, TypeError, KeyError, AttributeError):
            log.info("Slack request refused: a signed body that does not parse")
            return web.Response(status=400, text="malformed body")
        try:
            response = await self.app.async_dispatch(bolt_request)
        except BaseException:
            if event_id is not None:
                self.events.forget(event_id)  # not taken after all: let Slack's retry try again
            raise
        if response.status >= 500 and event_id is not None:
            self.events.forget(event_id)
        return await to_aiohttp_response(response)


def _headers(request: web.Request) -> dict[str, Any]:
    headers: dict[str, list[str]] = {}
    for name, value in request.headers.items():
        headers.setdefault(name.lower(), []).append(value)
    return headers


FRONT_DOOR = web.AppKey("front_door", FrontDoor)


def front_door_app(app: AsyncApp, signing_secret: str, path: str) -> web.Application:
    door = FrontDoor(app, signing_secret)
    web_app = web.Application(client_max_size=MAX_BODY)
    web_app[FRONT_DOOR] = door
    web_app.router.add_post(path, door.handle)
    return web_app


def http_runner(web_app: web.Application) -> web.AppRunner:
    """An AppRunner whose connections must deliver their headers within HEADER_TIMEOUT (served through
    bot.ports.listener.GuardedSite: capped connections, accept back-off)."""
    return guarded_runner(web_app, HEADER_TIMEOUT)
