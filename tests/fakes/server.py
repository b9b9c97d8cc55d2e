"""What the fake HTTP APIs (GitHub, Slack, Discord, OpenAI) share: a threaded pytest-httpserver on
127.0.0.1 that hands every request to the fake's `_handle`, and the lifecycle around it.

An exception in `_handle` answers 500 and is kept, so that `check()` can re-raise it in the test:
otherwise a bug in a fake would only show as a puzzling error in the client under test.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from typing import Self

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response


class _Server(HTTPServer):
    """pytest-httpserver with one dispatcher for every path and no unbounded request log."""

    def __init__(self, fake: FakeServer, host: str, port: int):
        super().__init__(host=host, port=port, threaded=True)  # threaded: concurrent requests overlap
        self._fake = fake

    def thread_target(self) -> None:
        assert self.server is not None
        self.server.serve_forever(poll_interval=self._fake.poll_interval)

    def dispatch(self, request: Request) -> Response:
        try:
            return self._fake._handle(request)
        except Exception as exc:  # surfaced to tests through check()
            self.handler_errors.append(exc)
            return self._fake._handler_error(exc)

    def application(self, request: Request) -> Response:
        request.get_data()
        return self.dispatch(request)


class FakeServer:
    """A fake API served on a local port: `start()` / `stop()` or a with-block, then `check()`."""

    name = "server"  # names the fake in the 500 answer to a request it failed on
    # stop() waits up to one poll: kept short, as a test run starts and stops many fakes.
    poll_interval = 0.02

    def __init__(self, host: str, port: int, quiet: bool):
        if quiet:  # werkzeug prints one access-log line per request to stderr otherwise
            logging.getLogger("werkzeug").setLevel(logging.WARNING)
        self.server = _Server(self, host, port)

    def start(self) -> Self:
        if not self.server.is_running():
            self.server.start()
        return self

    def stop(self) -> None:
        if self.server.is_running():
            self.server.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def check(self) -> None:
        """Re-raise the first error the fake itself hit while handling a request."""
        self.server.check_handler_errors()

    def _handle(self, request: Request) -> Response:
        raise NotImplementedError

    def _handler_error(self, exc: Exception) -> Response:
        return Response(f"fake {self.name} error: {exc!r}", status=500)


def drop_connection(request: Request) -> Response:
    """Close the client's connection without an answer: what a crashed proxy or a network cut does
    after the server already acted on the request. The client sees "server disconnected"."""
    sock = request.environ.get("werkzeug.socket")
    if sock is not None:
        sock.shutdown(socket.SHUT_RDWR)
    return Response("dropped", status=500)


def trickle(response: Response, seconds: float, *, step: float = 0.05) -> Response:
    """The same answer, its body sent one byte every `step` seconds for up to `seconds`, then the rest:
    a stalled proxy or a crawling link. No single read waits longer than `step`, so a per-read timeout
    never fires; only a deadline on the whole answer does."""
    body = response.get_data()

    def chunks() -> Iterator[bytes]:
        sent, ends = 0, time.monotonic() + seconds
        while sent < len(body) and time.monotonic() < ends:
            yield body[sent : sent + 1]
            sent += 1
            time.sleep(step)
        yield body[sent:]

    headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
    headers["Content-Length"] = str(len(body))
    return Response(chunks(), status=response.status_code, headers=headers, direct_passthrough=True)
