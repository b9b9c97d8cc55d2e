"""Listening sockets a flood cannot take down: how /metrics, /healthz and Slack's request URL are served.

asyncio's own accept loop (loop.create_server, aiohttp's TCPSite) has no cap on connections, and on
EMFILE it logs and re-arms itself once for every accept it had queued, so a slow flood of a port at the
descriptor limit spins and writes the same record thousands of times a second (issue 17: 964 MB of log
in four minutes, and the morning digest failed with "Too many open files"). `GuardedSite` serves an
aiohttp runner through an accept loop of its own:

- at most `max_connections` at once (by default an eighth of the descriptor limit, so every listener
  together leaves most descriptors to the scheduler and the chat clients); a connection past the cap
  closes the oldest one, so a slow client holds a slot only until newer ones need it and a probe is
  always served;
- the header deadline is the runner's keepalive_timeout: aiohttp closes a connection whose request
  has not arrived within it, counted from the connection's start, however slowly bytes trickle in;
- an accept that fails for want of resources (EMFILE, ENFILE, ENOBUFS, ENOMEM) sheds one waiting
  connection through a descriptor kept in reserve, so its client hears at once, then pauses with
  backoff (ACCEPT_PAUSE doubling to ACCEPT_PAUSE_MAX) instead of spinning.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import resource
import socket
from collections import OrderedDict
from typing import Any

from aiohttp import web

log = logging.getLogger(__name__)

RESOURCE_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
PER_CONNECTION_ERRNOS = {errno.ECONNABORTED, errno.EPROTO, errno.EPERM, errno.EINTR}
ACCEPT_PAUSE = 0.05  # seconds after the first accept that failed for want of resources
ACCEPT_PAUSE_MAX = 2.0
HEADER_TIMEOUT = 10.0  # seconds a connection has to deliver its request line and headers
LINGER = 1.0  # seconds an unread request body is drained after the answer (aiohttp waits 10)


def connection_cap(share: int = 8, floor: int = 16, ceiling: int = 512) -> int:
    """Connections one listener may hold: 1/share of the process's descriptor limit, within bounds."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return ceiling
    return max(floor, min(ceiling, soft // share))


def guarded_runner(app: web.Application, header_timeout: float = HEADER_TIMEOUT) -> web.AppRunner:
    """An AppRunner whose connections must deliver their request within `header_timeout` seconds."""
    return web.AppRunner(app, access_log=None, keepalive_timeout=header_timeout, lingering_time=LINGER)


class _Listening:
    """What aiohttp's runner reads from a site's `_server`: the sockets (runner.addresses), close()."""

    def __init__(self, sock: socket.socket):
        self.sockets = [sock]

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()


class GuardedSite(web.BaseSite):
    """An aiohttp site on host:port with a capped, back-off accept loop (see the module's docstring)."""

    def __init__(
        self,
        runner: web.BaseRunner,
        host: str,
        port: int,
        *,
        max_connections: int | None = None,
        backlog: int = 128,
    ):
        super().__init__(runner, backlog=backlog)
        self._host, self._port = host, port
        self.max_connections = max_connections or connection_cap()
        self.evicted = 0  # connections closed to make room (for tests and benchmarks)
        self.shed = 0  # connections refused while out of descriptors
        self._conns: OrderedDict[asyncio.BaseTransport, None] = OrderedDict()
        self._task: asyncio.Task[None] | None = None
        self._reserve: int | None = None

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self._port}"

    @property
    def port(self) -> int:
        return int(self._server.sockets[0].getsockname()[1]) if self._server else self._port  # type: ignore[attr-defined]

    async def start(self) -> None:
        await super().start()
        sock = _listen(self._host, self._port, self._backlog)
        self._server = _Listening(sock)  # type: ignore[assignment]
        self._reserve = _spare()
        self._task = asyncio.create_task(self._accept_loop(sock), name=f"accept {self.name}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._reserve is not None:
            os.close(self._reserve)
            self._reserve = None
        await super().stop()

    @property
    def open_connections(self) -> int:
        self._forget_closed()
        return len(self._conns)

    async def _accept_loop(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        factory: Any = self._runner.server
        pause = ACCEPT_PAUSE
        while True:
            try:
                conn, _ = await loop.sock_accept(sock)
            except OSError as exc:
                if exc.errno in PER_CONNECTION_ERRNOS:
                    continue  # that one connection went wrong before we took it
                if exc.errno not in RESOURCE_ERRNOS:
                    log.error("%s: stopped accepting connections: %s", self.name, exc)
                    return
                # One line a minute at most (bot.monitoring.logs.DropRepeats drops the identical ones in between).
                log.warning("%s: cannot accept connections: %s; refusing new ones for now", self.name, exc)
                self._shed(sock)
                await asyncio.sleep(pause)
                pause = min(pause * 2, ACCEPT_PAUSE_MAX)
                continue
            pause = ACCEPT_PAUSE
            self._make_room()
            try:
                transport, _ = await loop.connect_accepted_socket(factory, conn)
            except OSError:
                conn.close()
                continue
            self._conns[transport] = None

    def _forget_closed(self) -> None:
        for transport in [t for t in self._conns if t.is_closing()]:
            del self._conns[transport]

    def _make_room(self) -> None:
        """Below the cap, or the oldest connections closed until it is."""
        if len(self._conns) < self.max_connections:
            return
        self._forget_closed()
        while len(self._conns) >= self.max_connections:
            oldest, _ = self._conns.popitem(last=False)
            oldest.abort()  # abort, not close: a client that reads nothing must not keep the descriptor
            self.evicted += 1

    def _shed(self, sock: socket.socket) -> None:
        """Out of descriptors: free the reserved one to accept a waiting connection and close it at once
        (its client is told instead of hanging), then reserve one again."""
        if self._reserve is None:
            self._reserve = _spare()
            return
        os.close(self._reserve)
        self._reserve = None
        try:
            conn, _ = sock.accept()
        except OSError:
            pass
        else:
            conn.close()
            self.shed += 1
        self._reserve = _spare()


def _spare() -> int | None:
    try:
        return os.open(os.devnull, os.O_RDONLY)
    except OSError:
        return None


def _listen(host: str, port: int, backlog: int) -> socket.socket:
    """A non-blocking listening socket on host:port (the first address the host resolves to)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(backlog)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock
