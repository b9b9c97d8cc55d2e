"""Prometheus metrics of `digestbot run`, served on /metrics beside /healthz (METRICS_PORT).

One registry for the process: the scheduler, the digest runner and the LLM usage hook update it;
`metrics_app` serves it. Labels are bounded: subscription names come from the operator's config and
chat subscriptions, platforms and LLM outcomes are small closed sets; never a commit, a user or a URL.
"""

from __future__ import annotations

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

QA_ANSWERS = Counter(
    "digestbot_qa_answers",
    "Thread answers by source: data, llm (fact-checked), fallback (data after the model failed), help, limited",
    ["source"],
    registry=REGISTRY,
)
QA_REMOVED = Counter(
    "digestbot_qa_removed_statements",
    "Statements the fact-check removed from model answers before posting",
    registry=REGISTRY,
)


def record_qa(source: str, removed: int = 0) -> None:
    QA_ANSWERS.labels(source).inc()
    if removed:
        QA_REMOVED.inc(removed)


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
    RUNS.labels(subscription, status).inc()
    if status == "done":
        LAST_SUCCESS.labels(subscription).set(finished_at if finished_at is not None else time.time())


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
    runner = web.AppRunner(metrics_app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
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
