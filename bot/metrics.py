"""Prometheus metrics of `digestbot run`, served on /metrics beside /healthz, on METRICS_HOST:METRICS_PORT
only (through bot.listener: capped connections, header deadline, accept back-off).

One registry for the process: the scheduler, the digest runner and the LLM usage hook update it;
`metrics_app` serves it. Labels are bounded: subscriptions, platforms and LLM outcomes are small sets;
never a commit, a user or a URL. A subscription is labelled by an opaque id (`subscription_label`; a
chat subscription's name holds its channel and repository) unless METRICS_LABEL_NAMES opts in to names.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    ProcessCollector,
    generate_latest,
)

from analysis.errors import ConfigError
from bot.listener import GuardedSite, guarded_runner

log = logging.getLogger(__name__)

REGISTRY = CollectorRegistry()
ProcessCollector(registry=REGISTRY)  # memory, CPU, open files of the service

DIGESTS_BUILT = Counter(
    "digestbot_digests_built", "Digests built by scheduled runs", ["subscription"], registry=REGISTRY
)
DIGESTS_POSTED = Counter(
    "digestbot_digests_posted",
    "Digests posted completely to one channel",
    ["subscription", "platform"],
    registry=REGISTRY,
)
RUNS = Counter(
    "digestbot_runs",
    "Finished scheduled runs by status (done, partial, failed)",
    ["subscription", "status"],
    registry=REGISTRY,
)
LAST_SUCCESS = Gauge(
    "digestbot_last_success_timestamp_seconds",
    "When a subscription's last run finished done (Unix time)",
    ["subscription"],
    registry=REGISTRY,
)
QUEUE_DEPTH = Gauge("digestbot_queue_depth", "Scheduled runs queued or in progress", registry=REGISTRY)
LLM_CALLS = Counter(
    "digestbot_llm_calls", "LLM requests by purpose and outcome", ["purpose", "outcome"], registry=REGISTRY
)
LLM_FAILURES = Counter(
    "digestbot_llm_failures", "LLM requests whose outcome was not ok", ["outcome"], registry=REGISTRY
)
LLM_TOKENS = Counter("digestbot_llm_tokens", "LLM tokens", ["direction"], registry=REGISTRY)
LLM_COST = Counter(
    "digestbot_llm_cost_usd", "LLM cost in USD (needs LLM_PRICE_IN / LLM_PRICE_OUT)", registry=REGISTRY
)
FALLBACKS = Counter(
    "digestbot_analysis_fallbacks",
    "Commits analysed by the heuristic because the LLM analysis failed",
    ["subscription"],
    registry=REGISTRY,
)


_names_as_labels = False


def label_names(enabled: bool) -> None:
    """METRICS_LABEL_NAMES: label subscriptions by name instead of by opaque id."""
    global _names_as_labels
    _names_as_labels = enabled


def subscription_label(name: str) -> str:
    """What a subscription is called in /metrics: "sub-" and 10 hex digits of its name's hash (stable,
    shown by `digestbot status`), or its name when the operator opted in."""
    if _names_as_labels:
        return name
    return "sub-" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:10]


def record_llm_call(call: dict[str, Any]) -> None:
    """One LLM request, from the client's on_call record (the same fields as the llm_calls table)."""
    outcome = str(call.get("outcome") or "unknown")
    LLM_CALLS.labels(str(call.get("purpose") or "unknown"), outcome).inc()
    if outcome != "ok":
        LLM_FAILURES.labels(outcome).inc()
    LLM_TOKENS.labels("in").inc(max(0, int(call.get("tokens_in") or 0)))
    LLM_TOKENS.labels("out").inc(max(0, int(call.get("tokens_out") or 0)))
    LLM_COST.inc(max(0.0, float(call.get("cost_usd") or 0.0)))


def record_run(subscription: str, status: str, finished_at: float | None = None) -> None:
    RUNS.labels(subscription_label(subscription), status).inc()
    if status == "done":
        LAST_SUCCESS.labels(subscription_label(subscription)).set(
            finished_at if finished_at is not None else time.time()
        )


def watch_queue(depth: Callable[[], int]) -> None:
    QUEUE_DEPTH.set_function(depth)


def exposition() -> tuple[bytes, str]:
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


async def metrics_handler(request: web.Request) -> web.Response:
    body, content_type = exposition()
    # aiohttp wants the charset apart from the media type.
    media, _, params = content_type.partition(";")
    charset = params.split("charset=", 1)[1].strip() if "charset=" in params else "utf-8"
    return web.Response(body=body, content_type=media.strip(), charset=charset)


async def healthz_handler(request: web.Request) -> web.Response:
    return web.Response(text="ok")


def metrics_app() -> web.Application:
    app = web.Application()
    app.router.add_get("/metrics", metrics_handler)
    app.router.add_get("/healthz", healthz_handler)
    return app


async def start_metrics_server(host: str, port: int) -> tuple[web.AppRunner, int]:
    """Serve /metrics and /healthz; returns the runner (to clean up) and the port bound (port 0: any)."""
    runner = guarded_runner(metrics_app())
    await runner.setup()
    site = GuardedSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise ConfigError(
            f"cannot serve /metrics on {host}:{port} ({exc.strerror or exc}): set METRICS_PORT to a free port"
        ) from None
    bound = runner.addresses[0][1] if runner.addresses else port
    log.info("metrics and health on http://%s:%d/metrics and /healthz", host, bound)
    return runner, bound
