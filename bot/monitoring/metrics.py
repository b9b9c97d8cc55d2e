"""Prometheus metrics of `digestbot run`, served on /metrics beside /healthz, on METRICS_HOST:METRICS_PORT
only (through bot.ports.listener: capped connections, header deadline, accept back-off).

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
    Histogram,
    Info,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from analysis.errors import ConfigError
from bot.ports.listener import GuardedSite, guarded_runner

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


RUN_STATUSES = ("done", "partial", "failed")
RUN_SECONDS = Histogram(
    "digestbot_run_duration_seconds",
    "Wall time of a scheduled run, building and posting (kind: daily or weekly)",
    ["subscription", "kind"],
    buckets=(1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200),
    registry=REGISTRY,
)
LLM_SECONDS = Histogram(
    "digestbot_llm_call_duration_seconds",
    "Latency of one LLM request, whatever its outcome",
    ["purpose"],
    buckets=(0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300),
    registry=REGISTRY,
)
BUILD = Info("digestbot_build", "The digestbot that is running", registry=REGISTRY)


def _build_info() -> dict[str, str]:
    import platform
    from importlib.metadata import PackageNotFoundError, version

    try:
        ours = version("digestbot")
    except PackageNotFoundError:  # run from a source tree that was never installed
        ours = "unknown"
    return {"version": ours, "python": platform.python_version()}


BUILD.info(_build_info())
for _direction in ("in", "out"):
    LLM_TOKENS.labels(_direction)


def known_subscription(name: str, platforms: set[str]) -> None:
    """Every labelled series of a subscription exists from the start, at 0: an alert on
    `increase(...[1h])` then sees the first failed run, and a dashboard shows a subscription that
    never ran. Labelled as every other series of it (`subscription_label`)."""
    label = subscription_label(name)
    DIGESTS_BUILT.labels(label)
    FALLBACKS.labels(label)
    for status in RUN_STATUSES:
        RUNS.labels(label, status)
    for platform in platforms:
        DIGESTS_POSTED.labels(label, platform)
    RUN_SECONDS.labels(label, "daily")


# The service's health: every subscription → why it is broken, or None. Set while the scheduler runs.
HealthCheck = Callable[[], dict[str, str | None]]
_health: list[HealthCheck] = []


def watch_health(check: HealthCheck | None) -> None:
    _health[:] = [check] if check is not None else []


def health() -> dict[str, str | None]:
    if not _health:
        return {}
    try:
        return _health[0]()
    except Exception as exc:  # a probe must answer; a health check that cannot run is itself unhealthy
        log.warning("health check failed: %s: %s", type(exc).__name__, exc)
        return {"(health check)": f"{type(exc).__name__}: {exc}"}


class _BrokenSubscriptions(Collector):
    """digestbot_subscription_broken: 1 for each subscription whose last run failed or whose digest
    is overdue (the same check as /healthz), 0 for the others; read at each scrape."""

    def collect(self):  # type: ignore[no-untyped-def]
        family = GaugeMetricFamily(
            "digestbot_subscription_broken",
            "1 when the subscription's last run failed or its digest is overdue (see /healthz), else 0",
            labels=["subscription"],
        )
        for name, reason in health().items():
            family.add_metric([subscription_label(name)], 1.0 if reason else 0.0)
        yield family


REGISTRY.register(_BrokenSubscriptions())


def record_llm_call(call: dict[str, Any]) -> None:
    """One LLM request, from the client's on_call record (the same fields as the llm_calls table)."""
    outcome = str(call.get("outcome") or "unknown")
    purpose = str(call.get("purpose") or "unknown")
    LLM_CALLS.labels(purpose, outcome).inc()
    LLM_SECONDS.labels(purpose).observe(max(0.0, float(call.get("latency_ms") or 0.0)) / 1000)
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
    """200 "ok", or 503 naming each broken subscription (its last run failed, or its digest is overdue)
    by its label in /metrics: a container HEALTHCHECK or a probe sees a service that runs but posts
    nothing."""
    broken = {subscription_label(name): reason for name, reason in health().items() if reason}
    if broken:
        text = "\n".join(f"{label}: {reason}" for label, reason in sorted(broken.items()))
        return web.Response(status=503, text=f"unhealthy\n{text}\n")
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
