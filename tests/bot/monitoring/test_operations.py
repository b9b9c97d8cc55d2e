"""Issue 18 item 5: metrics and logs an on-call engineer can use. Labelled series exist at 0 before their
first event; build info, run and LLM latency histograms, a broken-subscription gauge; /healthz 503 when a
subscription's last run failed or its digest is overdue; the alert rules of docs/deploy.md hold against
a scrape. JSON logs: every line JSON (the fatal one too), RFC 3339 UTC times, structured fields; INFO
only with -v; no shutdown line after a failed start; no slack_bolt warning on start."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from analysis.errors import ConfigError
from bot.app import serve
from bot.config.settings import Settings
from bot.config.subscriptions import Destination, Registry, Subscription
from bot.monitoring import metrics
from bot.monitoring.logs import setup_logging
from bot.monitoring.metrics import metrics_app
from bot.service.scheduler import DigestScheduler, RunOutcome
from tests.bot.cli.test_cli_process import child_env
from tests.bot.service.test_scheduler import Clock, Recorder

SH = ZoneInfo("Asia/Shanghai")
ROOT = Path(__file__).resolve().parents[3]


def sub(name: str, platform: str = "slack") -> Subscription:
    return Subscription(
        name=name,
        repo="o/n",
        timezone="Asia/Shanghai",
        schedule="09:00",
        lang="en",
        destinations=(Destination(platform, "C1"),),
    )


def label(name: str) -> str:
    """A subscription as /metrics names it: an opaque id (issue 17) unless METRICS_LABEL_NAMES."""
    return metrics.subscription_label(name)


def scrape() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    body, _ = metrics.exposition()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body.decode("utf-8"))
        for s in family.samples
    }


def has(found: dict, name: str, **labels: str) -> bool:
    return any(n == name and set(labels.items()) <= set(lbl) for n, lbl in found)


def value(found: dict, name: str, **labels: str) -> float:
    return sum(v for (n, lbl), v in found.items() if n == name and set(labels.items()) <= set(lbl))


class Failing(Recorder):
    async def __call__(self, s, day):
        self.calls.append((s.name, day))
        return RunOutcome("failed", error="GitHub is down")


async def started(store, subs, clock, runner) -> DigestScheduler:
    sched = DigestScheduler(Registry(store, subs), store, runner, catchup_days=3, clock=clock)
    await sched.start()
    await sched.idle()
    return sched


async def test_series_exist_at_zero_before_their_first_event(store):
    clock = Clock(datetime(2026, 1, 29, 8, 0, tzinfo=SH))
    sched = await started(store, [sub("pre-a"), sub("pre-b", "discord")], clock, Recorder())
    try:
        found = scrape()
    finally:
        await sched.stop()
    for name in ("pre-a", "pre-b"):
        for status in ("done", "partial", "failed"):
            assert has(found, "digestbot_runs_total", subscription=label(name), status=status)
            assert value(found, "digestbot_runs_total", subscription=label(name), status=status) == 0
        assert has(found, "digestbot_digests_built_total", subscription=label(name))
        assert has(found, "digestbot_analysis_fallbacks_total", subscription=label(name))
        assert has(found, "digestbot_run_duration_seconds_count", subscription=label(name), kind="daily")
        assert has(found, "digestbot_subscription_broken", subscription=label(name))
    assert has(found, "digestbot_digests_posted_total", subscription=label("pre-a"), platform="slack")
    assert has(found, "digestbot_digests_posted_total", subscription=label("pre-b"), platform="discord")
    assert has(found, "digestbot_llm_tokens_total", direction="in")
    named = {dict(lbl).get("subscription") for (_, lbl) in found}
    assert not named & {"pre-a", "pre-b"}  # opaque ids, as every other series of theirs (issue 17)
    info = [lbl for (n, lbl) in found if n == "digestbot_build_info"]
    assert info and dict(info[0])["version"] and dict(info[0])["python"].startswith("3.")


async def test_run_and_llm_latency_histograms(store):
    clock = Clock(datetime(2026, 1, 29, 8, 0, tzinfo=SH))
    sched = await started(store, [sub("histo")], clock, Recorder())
    try:
        before = scrape()
        clock.now = datetime(2026, 1, 29, 9, 0, 1, tzinfo=SH)
        await sched._fire_job("histo")
        await sched.idle()
        metrics.record_llm_call({"purpose": "analysis", "outcome": "ok", "latency_ms": 2500.0})
        after = scrape()
    finally:
        await sched.stop()
    count = "digestbot_run_duration_seconds_count"
    assert (
        value(after, count, subscription=label("histo")) - value(before, count, subscription=label("histo"))
        == 1
    )
    llm = "digestbot_llm_call_duration_seconds_bucket"
    grew = value(after, llm, purpose="analysis", le="5.0") - value(before, llm, purpose="analysis", le="5.0")
    stayed = value(after, llm, purpose="analysis", le="2.0") - value(
        before, llm, purpose="analysis", le="2.0"
    )
    assert grew == 1 and stayed == 0


async def healthz() -> httpx.Response:
    """GET /healthz of the metrics app, served for real on a loopback port."""
    from aiohttp.test_utils import TestServer

    server = TestServer(metrics_app(), host="127.0.0.1")
    await server.start_server()
    try:
        async with httpx.AsyncClient() as http:
            return await http.get(f"http://127.0.0.1:{server.port}/healthz")
    finally:
        await server.close()


async def test_healthz_is_503_while_the_last_run_failed_and_ok_once_it_succeeds(store, caplog):
    clock = Clock(datetime(2026, 1, 29, 8, 0, tzinfo=SH))
    sched = await started(store, [sub("flaky")], clock, Failing())
    try:
        assert (await healthz()).status_code == 200  # nothing due yet
        clock.now = datetime(2026, 1, 29, 9, 0, 1, tzinfo=SH)
        with caplog.at_level(logging.WARNING, logger="bot.service.scheduler"):
            await sched._fire_job("flaky")
            await sched.idle()
        # a failed day is a warning, seen without -v
        assert [
            r.levelname for r in caplog.records if "digest flaky 2026-01-28: failed" in r.getMessage()
        ] == ["WARNING"]
        failed = await healthz()
        assert failed.status_code == 503
        assert f"{label('flaky')}: last run (2026-01-28) failed: GitHub is down" in failed.text
        assert value(scrape(), "digestbot_subscription_broken", subscription=label("flaky")) == 1
        sched.runner = Recorder()
        await sched.catch_up()  # the sweep retries the day
        await sched.idle()
        assert (await healthz()).status_code == 200
        assert value(scrape(), "digestbot_subscription_broken", subscription=label("flaky")) == 0
    finally:
        await sched.stop()
    assert (await healthz()).status_code == 200  # no scheduler, nothing to report


async def test_healthz_is_503_when_a_digest_never_succeeded_within_its_schedule(store):
    # Known since the 25th, but its runs never finish (a stuck runner, a crash before recording).
    seen = datetime(2026, 1, 25, 8, 0, tzinfo=SH)
    store.db["subscription_seen"].insert({"name": "stuck", "first_seen": seen.isoformat()})
    clock = Clock(datetime(2026, 1, 29, 9, 30, tzinfo=SH))

    class Never(Recorder):
        async def __call__(self, s, day):
            await asyncio.Event().wait()

    sched = DigestScheduler(Registry(store, [sub("stuck")]), store, Never(), catchup_days=3, clock=clock)
    await sched.start()
    try:
        report = sched.health()
        assert report["stuck"] == (
            "the digest of 2026-01-26 was due at 2026-01-27T09:00:00+08:00 and has not succeeded"
        )
        response = await healthz()
        assert response.status_code == 503 and f"{label('stuck')}: the digest of 2026-01-26" in response.text
        assert value(scrape(), "digestbot_subscription_broken", subscription=label("stuck")) == 1
    finally:
        await sched.stop(timeout=0.1)


def test_a_new_subscription_is_not_overdue_within_the_grace(store):
    clock = Clock(datetime(2026, 1, 29, 9, 30, tzinfo=SH))
    store.db["subscription_seen"].insert({"name": "new", "first_seen": "2026-01-28T12:00:00+08:00"})
    sched = DigestScheduler(Registry(store, [sub("new")]), store, Recorder(), catchup_days=3, clock=clock)
    assert sched.health() == {"new": None}  # its first digest was due at 09:00, an hour's grace
    clock.now = datetime(2026, 1, 29, 10, 1, tzinfo=SH)
    assert sched.health()["new"] and "2026-01-28" in sched.health()["new"]


def alert_rules() -> list[dict]:
    text = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    rules = [
        r for block in blocks for r in (yaml.safe_load(block) or []) if isinstance(r, dict) and "alert" in r
    ]
    assert len(rules) >= 3
    return rules


SELECTOR = re.compile(r"\b(digestbot_\w+)(\{([^}]*)\})?")


async def test_the_alert_rules_of_the_deploy_guide_hold_against_a_scrape(store):
    clock = Clock(datetime(2026, 1, 29, 8, 0, tzinfo=SH))
    sched = await started(store, [sub("alerting")], clock, Failing())
    try:
        first = scrape()  # right after start: before any run
        clock.now = datetime(2026, 1, 29, 9, 0, 1, tzinfo=SH)
        await sched._fire_job("alerting")
        await sched.idle()
        second = scrape()
    finally:
        await sched.stop()
    for rule in alert_rules():
        expr = rule["expr"]
        selectors = SELECTOR.findall(expr)
        assert selectors, expr
        for name, _, labels in selectors:
            wanted = dict(re.findall(r'(\w+)="([^"]*)"', labels))
            if name == "digestbot_last_success_timestamp_seconds":
                continue  # set by the first success by design; DigestBroken covers "never succeeded"
            # Every series an alert reads exists in the first scrape, for the subscription, at 0.
            assert has(first, name, subscription=label("alerting"), **wanted), (rule["alert"], name, wanted)
    # And the failing ones fire on the second: the first failed run is an increase from a 0 sample.
    failing = {r["alert"]: r["expr"] for r in alert_rules()}
    assert (
        value(second, "digestbot_runs_total", subscription=label("alerting"), status="failed")
        - value(first, "digestbot_runs_total", subscription=label("alerting"), status="failed")
        == 1
        and "increase(digestbot_runs_total" in failing["DigestFailing"]
    )
    assert value(first, "digestbot_subscription_broken", subscription=label("alerting")) == 0
    assert value(second, "digestbot_subscription_broken", subscription=label("alerting")) == 1
    assert "digestbot_subscription_broken" in failing["DigestBroken"]


# --- logs ------------------------------------------------------------------------------------------------
def run_cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        capture_output=True,
        text=True,
        env=child_env(**env),
        cwd=cwd,
        timeout=120,
    )


RFC3339_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (
            ["status", "--config", "/no/such/digest.toml"],
            {},
            "configuration file /no/such/digest.toml not found",
        ),
        (["digest", "--lang", "fr"], {}, "Invalid value for '--lang'"),
        (["status"], {"DIGEST_TZ": "Mars/Olympus"}, "invalid settings: DIGEST_TZ"),
    ],
)
def test_with_json_logs_the_fatal_line_is_json_too(tmp_path, args, env, message):
    proc = run_cli(
        *args, env={"LOG_FORMAT": "json", "DIGEST_DB": str(tmp_path / "d.db"), **env}, cwd=tmp_path
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    record = json.loads(lines[0])
    assert record["level"] == "ERROR" and message in record["message"]
    assert RFC3339_UTC.match(record["time"])


def test_json_lines_have_utc_times_and_structured_fields(capsys):
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    try:
        setup_logging(1, ["xoxb-secret-token-123"], "json")
        logging.getLogger("bot.service.scheduler").info(
            "digest %s: done (%s)", "daily", "high 1", extra={"counts": {"high": 1, "total": 1}, "tokens": 12}
        )
        logging.getLogger("bot.x").warning("token %s leaked?", "xoxb-secret-token-123")
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
    first, second = (json.loads(line) for line in capsys.readouterr().err.strip().splitlines())
    assert RFC3339_UTC.match(first["time"]) and next(iter(first)) == "time"
    stamp = datetime.strptime(first["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert abs(stamp - datetime.now(UTC)) < timedelta(minutes=1)
    assert first["message"] == "digest daily: done (high 1)"  # no dict repr inside the message
    assert first["counts"] == {"high": 1, "total": 1} and first["tokens"] == 12
    assert second["message"] == "token *** leaked?"


def test_the_run_log_line_carries_its_figures_as_fields(store, caplog):
    clock = Clock(datetime(2026, 1, 29, 9, 0, 1, tzinfo=SH))
    store.db["subscription_seen"].insert({"name": "fields", "first_seen": "2026-01-27T00:00:00+08:00"})
    sched = DigestScheduler(Registry(store, [sub("fields")]), store, Recorder(), catchup_days=1, clock=clock)
    caplog.set_level(logging.INFO, logger="bot.service.scheduler")

    async def go():
        await sched.start()
        await sched.idle()
        await sched.stop()

    asyncio.run(go())
    [line] = [r for r in caplog.records if r.getMessage().startswith("digest fields 2026-01-28")]
    assert "{" not in line.getMessage() and "high 1, medium 1, low 1" in line.getMessage()
    assert line.counts == {"high": 1, "medium": 1, "low": 1, "total": 3} and line.day == "2026-01-28"
    assert line.status == "done" and line.subscription == "fields"


def test_info_lines_only_with_v(tmp_path):
    config = tmp_path / "digest.toml"
    config.write_text('[[subscription]]\nrepo = "o/n"\nslack_channels = ["C1"]\n', encoding="utf-8")
    env = {"DIGEST_DB": str(tmp_path / "d.db"), "DIGEST_CONFIG": str(config), "SLACK_BOT_TOKEN": "xoxb-x"}
    # Start-up fails (no Slack mode set): without -v the one error line, never an INFO line before it.
    proc = run_cli("run", env=env, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: Slack needs SLACK_APP_TOKEN (Socket Mode, xapp-…) or SLACK_SIGNING_SECRET (HTTP mode, on SLACK_PORT)"
    ]


async def test_no_shutdown_line_when_start_up_failed(tmp_path, store, caplog):
    class Broken:
        async def start(self):
            raise ConfigError("Slack rejected SLACK_BOT_TOKEN (invalid_auth)")

        async def stop(self):
            pass

    caplog.set_level(logging.INFO)
    with pytest.raises(ConfigError):
        await serve(
            Settings(digest_db=tmp_path / "d.db"),
            store,
            [sub("x")],
            make_runtimes=lambda s, svc: [Broken()],
            stop=asyncio.Event(),
        )
    assert "shutting down" not in caplog.text and "in-flight" not in caplog.text


async def test_no_slack_bolt_warning_on_start(tmp_path, monkeypatch, caplog):
    from adapters.slack.runtime import SlackRuntime
    from bot.app import chat_service
    from bot.store.db import Store
    from tests.fakes.slack_api import FakeSlack

    caplog.set_level(logging.DEBUG)
    with FakeSlack() as slack:
        monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)  # as in any deployment: Bolt reads it too
        settings = Settings(
            slack_signing_secret="signing-secret-for-tests",
            slack_api_url=slack.api_url,
            digest_db=tmp_path / "d.db",
        )
        runtime = SlackRuntime(
            settings, chat_service(settings, Store(settings.digest_db)), host="127.0.0.1", port=0
        )
        await runtime.start()
        await runtime.stop()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
