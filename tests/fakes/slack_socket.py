"""A fake Slack Socket Mode endpoint on 127.0.0.1: the WebSocket `apps.connections.open` hands out
(FakeSlack.socket_url). Each connection gets `hello`; the test pushes envelopes (events_api,
slash_commands) with `send()` and reads the app's acknowledgements from `acks`. `disconnect()` asks the
app to reconnect as Slack does (a `disconnect` message, then the socket closes); `connections` counts
the sockets opened.

    async with FakeSocketMode() as socket:
        slack.socket_url = socket.url
        await socket.send(socket.event({"type": "app_mention", ...}, retry_attempt=1))
        ack = await socket.ack_for(envelope_id)
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any, Self

import aiohttp
from aiohttp import web

from tests.fakes.slack_api import TEAM


class FakeSocketMode:
    def __init__(self) -> None:
        self.acks: dict[str, dict[str, Any]] = {}
        self.connections = 0
        self._sockets: list[web.WebSocketResponse] = []
        self._connected = asyncio.Event()
        self._acked = asyncio.Condition()
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.router.add_get("/link", self._socket)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.url = f"ws://127.0.0.1:{self._runner.addresses[0][1]}/link"
        return self

    async def __aexit__(self, *exc: object) -> None:
        for ws in self._sockets:
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.connections += 1
        self._sockets.append(ws)
        await ws.send_json({"type": "hello", "num_connections": 1})
        self._connected.set()
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.TEXT:
                ack = json.loads(msg.data)
                async with self._acked:
                    self.acks[ack.get("envelope_id", "")] = ack
                    self._acked.notify_all()
        if ws in self._sockets:
            self._sockets.remove(ws)
        return ws

    async def connected(self, count: int = 1, timeout: float = 10) -> None:
        """Wait until `count` sockets were opened in all and one is open."""
        async with asyncio.timeout(timeout):
            while self.connections < count or not self._sockets:
                self._connected.clear()
                await self._connected.wait()

    def event(self, event: dict[str, Any], *, retry_attempt: int = 0, event_id: str = "") -> dict[str, Any]:
        """An events_api envelope; a redelivery keeps the event_id and counts its attempt."""
        envelope_id = f"env-{next(self._ids)}"
        return {
            "envelope_id": envelope_id,
            "type": "events_api",
            "accepts_response_payload": False,
            "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else "",
            "payload": {
                "token": "legacy",
                "team_id": TEAM,
                "api_app_id": "A1",
                "type": "event_callback",
                "event_id": event_id or f"Ev{envelope_id}",
                "event_time": 1769400000,
                "event": {"channel": "C0DIGEST", "event_ts": event.get("ts", "1.0"), **event},
                "authorizations": [{"team_id": TEAM, "user_id": "UBOT", "is_bot": True}],
            },
        }

    def command(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "envelope_id": f"env-{next(self._ids)}",
            "type": "slash_commands",
            "accepts_response_payload": True,
            "payload": payload,
        }

    async def send(self, envelope: dict[str, Any]) -> str:
        await self._sockets[-1].send_json(envelope)
        return envelope["envelope_id"]

    async def ack_for(self, envelope_id: str, timeout: float = 10) -> dict[str, Any]:
        async with asyncio.timeout(timeout), self._acked:
            await self._acked.wait_for(lambda: envelope_id in self.acks)
            return self.acks[envelope_id]

    async def disconnect(self) -> None:
        """Slack's "please reconnect": a disconnect message, then the socket is closed."""
        ws = self._sockets[-1]
        await ws.send_json({"type": "disconnect", "reason": "refresh_requested", "debug_info": {}})
        await ws.close()
