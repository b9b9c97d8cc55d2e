"""Issue 17 item 4: every listening socket has a header deadline and a cap on connections, accept errors
back off instead of spinning, a flood of one port starves neither the others nor the event loop, and
repeated identical log records are dropped."""

from __future__ import annotations

import asyncio
import logging
import resource
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx

from bot.monitoring.logs import DropRepeats
from bot.monitoring.metrics import metrics_app
from bot.ports.listener import GuardedSite, connection_cap, guarded_runner

ROOT = Path(__file__).resolve().parents[3]


async def serve(cap: int, header_timeout: float = 10.0) -> tuple[GuardedSite, object]:
    runner = guarded_runner(metrics_app(), header_timeout)
    await runner.setup()
    site = GuardedSite(runner, "127.0.0.1", 0, max_connections=cap)
    await site.start()
    return site, runner


async def slow_clients(port: int, count: int) -> list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """Connections that have sent the first bytes of a request and nothing more."""
    clients = []
    for _ in range(count):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        clients.append((reader, writer))
    await asyncio.sleep(0.2)
    return clients


async def test_a_client_that_trickles_its_headers_is_closed_at_the_deadline():
    site, runner = await serve(cap=8, header_timeout=0.5)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", site.port)
        started = time.monotonic()
        closed_after = None
        for _ in range(40):  # one header byte every 0.1 s: never a complete request
            writer.write(b"G")
            try:
                await writer.drain()
                if await asyncio.wait_for(reader.read(100), 0.1) == b"":
                    closed_after = time.monotonic() - started
                    break
            except TimeoutError:
                continue
            except ConnectionError:
                closed_after = time.monotonic() - started
                break
        writer.close()
    finally:
        await runner.cleanup()
    assert closed_after is not None and closed_after < 1.5


async def test_a_flood_past_the_cap_lets_a_probe_in_and_leaves_the_other_port_and_the_loop_alone():
    flooded, flooded_runner = await serve(cap=16)
    other, other_runner = await serve(cap=16)
    lags: list[float] = []

    async def scheduler_tick() -> None:  # stands for the scheduler: a timer that must fire on time
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.05)
            lags.append(time.monotonic() - before - 0.05)

    ticker = asyncio.create_task(scheduler_tick())
    try:
        clients = await slow_clients(flooded.port, 300)
        async with httpx.AsyncClient(timeout=2.0) as http:
            probe = await http.get(f"http://127.0.0.1:{flooded.port}/healthz")
            beside = await http.get(f"http://127.0.0.1:{other.port}/healthz")
        open_now = flooded.open_connections
        for _, writer in clients:
            writer.close()
    finally:
        ticker.cancel()
        await flooded_runner.cleanup()
        await other_runner.cleanup()
    assert probe.status_code == 200 and beside.status_code == 200
    assert open_now <= 16 and flooded.evicted >= 300 - 16
    # A loop the flood blocked would stall for seconds (300 clients); 1 s leaves room for one scheduling
    # spike on a loaded 2-core CI machine (0.53 s was seen with seven busy processes), and most ticks must
    # still be on time (their median was 2-4 ms there).
    assert max(lags) < 1.0
    assert sorted(lags)[len(lags) // 2] < 0.1


def test_the_cap_leaves_most_descriptors_to_the_rest_of_the_service():
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    cap = connection_cap()
    assert 16 <= cap <= 512 and (soft == resource.RLIM_INFINITY or cap <= max(16, soft // 8))


SCRIPT = textwrap.dedent(
    """
    import asyncio, os, sys, time
    sys.path.insert(0, {root!r})
    from bot.monitoring.logs import setup_logging
    from bot.monitoring.metrics import start_metrics_server

    async def main():
        setup_logging(1, [])
        runner, port = await start_metrics_server("127.0.0.1", 0)
        print(port, flush=True)
        await asyncio.sleep(0.5)
        hogs = []
        while True:  # every descriptor taken, as a flood at the limit leaves it
            try:
                hogs.append(os.open(os.devnull, os.O_RDONLY))
            except OSError:
                break
        print("full", flush=True)
        started = time.process_time()
        await asyncio.sleep(3)
        cpu = time.process_time() - started
        for fd in hogs:
            os.close(fd)
        print(f"cpu {{cpu:.3f}}", flush=True)
        await asyncio.sleep(3)
        await runner.cleanup()

    asyncio.run(main())
    """
)


def test_out_of_descriptors_the_accept_loop_backs_off_instead_of_spinning(tmp_path):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    script = tmp_path / "serve.py"
    script.write_text(SCRIPT.format(root=str(ROOT)), encoding="utf-8")
    err = (tmp_path / "stderr").open("w+")
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=err, text=True, preexec_fn=limit
    )
    try:
        port = int(proc.stdout.readline())
        assert proc.stdout.readline().strip() == "full"
        clients = []
        for _ in range(50):  # connections the service cannot take: each gets shed or waits
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            clients.append(s)
        cpu = float(proc.stdout.readline().split()[1])
        time.sleep(0.5)
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=3)  # descriptors back: served
        for s in clients:
            s.close()
        proc.wait(20)
    finally:
        if proc.poll() is None:
            proc.kill()
    err.seek(0)
    log = err.read()
    assert health.status_code == 200
    assert cpu < 1.0, f"the accept loop spun: {cpu} s of CPU in 3 s"
    assert log.count("\n") <= 5, log[:2000]
    assert "cannot accept connections" in log and "Too many open files" in log


def test_identical_records_are_dropped_within_the_window_and_counted_after():
    now = [0.0]
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    handler = Keep()
    handler.addFilter(DropRepeats(window=60.0, clock=lambda: now[0]))
    logger = logging.getLogger("test.repeats")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        for _ in range(100_000):
            logger.warning("socket.accept() out of system resource")
        logger.warning("another message")
        now[0] = 61.0
        logger.warning("socket.accept() out of system resource")
    finally:
        logger.removeHandler(handler)
    assert seen == [
        "socket.accept() out of system resource",
        "another message",
        "socket.accept() out of system resource (99999 identical records dropped in 60 s)",
    ]


def test_the_service_log_handler_drops_repeats(capsys):
    from bot.monitoring.logs import setup_logging

    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        setup_logging(1, [])
        for _ in range(1000):
            logging.getLogger("asyncio").error("socket.accept() out of system resource")
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
    assert capsys.readouterr().err.count("out of system resource") == 1
