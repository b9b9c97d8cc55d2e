"""Issue 13 item 8: /metrics beside /healthz, scraped over HTTP on 127.0.0.1 while the service runs,
and LOG_FORMAT=json."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from datetime import datetime
from zoneinfo import ZoneInfo

import httpx
import pytest
import time_machine
from prometheus_client.parser import text_string_to_metric_families

from adapters.slack.runtime import SlackRuntime
from analysis.errors import ConfigError
from bot.app import chat_service, serve
from bot.config.settings import Settings
from bot.config.subscriptions import Destination, Subscription
from bot.monitoring.logs import setup_logging
from bot.monitoring.metrics import label_names, start_metrics_server, subscription_label, watch_health
from bot.service.status import status_data
from bot.store.db import Store
from tests.fakes.github import FakeGitHub, make_commit, make_file
from tests.fakes.openai_server import FakeLLM
from tests.fakes.slack_api import FakeSlack

SH = ZoneInfo("Asia/Shanghai")
SLACK_CHANNEL = "C0METRICS"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(found: dict, name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def total(found: dict, name: str) -> float:
    return sum(v for (n, _), v in found.items() if n == name)


@pytest.fixture
def fakes():
    commits = [
        make_commit(
            "[Feature] New widget engine (#1001)",
            "2026-01-28T12:00:00+08:00",
            files=[make_file("src/widgets/engine.py", additions=300)],
            repo="acme/widgets",
        ),
        make_commit(
            "[Bugfix] Fix cache eviction (#1002)",
            "2026-01-28T10:00:00+08:00",
            files=[make_file("src/widgets/cache.py", additions=12, deletions=4)],
            repo="acme/widgets",
        ),
    ]
    with FakeGitHub("acme/widgets", commits) as gh, FakeLLM() as llm, FakeSlack() as slack:
        yield gh, llm, slack


async def test_metrics_are_scraped_over_http_while_the_service_runs(fakes, tmp_path):
    gh, llm, slack = fakes
    llm.fail(400, match="Fix cache eviction", times=None)  # that commit falls back to the heuristic
    port = free_port()
    settings = Settings(
        github_api_url=gh.base_url,
        openai_base_url=llm.base_url,
        openai_api_key="sk-test-not-a-real-key",
        digest_model=llm.model,
        llm_price_in=1.0,
        llm_price_out=2.0,
        slack_bot_token=slack.token,
        slack_signing_secret="signing-secret-for-tests",
        slack_api_url=slack.api_url,
        digest_db=tmp_path / "digest.db",
        metrics_port=port,
    )
    sub = Subscription(
        name="metrics-daily",
        repo="acme/widgets",
        timezone="Asia/Shanghai",
        schedule="09:00",
        lang="en",
        destinations=(Destination("slack", SLACK_CHANNEL),),
    )
    url = f"http://127.0.0.1:{port}"
    stop = asyncio.Event()
    with time_machine.travel(datetime(2026, 1, 29, 8, 59, 59, 500000, tzinfo=SH), tick=True):
        store = Store(settings.digest_db)
        task = asyncio.create_task(
            serve(
                settings,
                store,
                [sub],
                stop=stop,
                make_runtimes=lambda s, svc: [SlackRuntime(s, svc, host="127.0.0.1", port=0)],
            )
        )
        try:
            async with httpx.AsyncClient() as http:
                before = None
                for _ in range(400):
                    await asyncio.sleep(0.05)
                    assert not task.done() or task.result() is None
                    try:
                        page = await http.get(f"{url}/metrics")
                    except httpx.TransportError:
                        continue  # not listening yet
                    before = before or samples(page.text)
                    done = store.query("SELECT status FROM runs WHERE subscription = 'metrics-daily'")
                    if done and done[0]["status"] == "done":
                        break
                page = await http.get(f"{url}/metrics")
                health = await http.get(f"{url}/healthz")
        finally:
            stop.set()
            await asyncio.wait_for(task, 30)
    assert health.status_code == 200 and health.text == "ok"
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/plain")
    after = samples(page.text)
    # subscriptions are opaque ids by default (`digestbot status` shows which is which), never names
    assert "metrics-daily" not in page.text and "acme/widgets" not in page.text
    sub_id = subscription_label("metrics-daily")
    assert sub_id.startswith("sub-") and len(sub_id) == 14
    assert value(after, "digestbot_digests_built_total", subscription=sub_id) == 1
    assert value(after, "digestbot_digests_posted_total", subscription=sub_id, platform="slack") == 1
    assert value(after, "digestbot_runs_total", subscription=sub_id, status="done") == 1
    assert value(after, "digestbot_analysis_fallbacks_total", subscription=sub_id) == 1
    assert value(after, "digestbot_last_success_timestamp_seconds", subscription=sub_id) > 1.7e9
    assert ("digestbot_queue_depth", ()) in after
    # LLM figures are process-wide: compare with the first scrape of this run.
    assert total(after, "digestbot_llm_calls_total") - total(before, "digestbot_llm_calls_total") >= 2
    assert total(after, "digestbot_llm_failures_total") > total(before, "digestbot_llm_failures_total")
    tokens = total(after, "digestbot_llm_tokens_total") - total(before, "digestbot_llm_tokens_total")
    assert tokens > 0
    cost = total(after, "digestbot_llm_cost_usd_total") - total(before, "digestbot_llm_cost_usd_total")
    assert cost > 0


async def test_slack_http_mode_serves_healthz_but_never_metrics(tmp_path):
    """The Slack port faces the internet: /metrics (channel ids, repository names) is not served there."""
    with FakeSlack() as slack:
        settings = Settings(
            slack_bot_token=slack.token,
            slack_signing_secret="signing-secret-for-tests",
            slack_api_url=slack.api_url,
            digest_db=tmp_path / "d.db",
        )
        runtime = SlackRuntime(
            settings, chat_service(settings, Store(settings.digest_db)), host="127.0.0.1", port=0
        )
        await runtime.start()
        try:
            async with httpx.AsyncClient() as http:
                page = await http.get(f"http://127.0.0.1:{runtime.http_port}/metrics")
                health = await http.get(f"http://127.0.0.1:{runtime.http_port}/healthz")
                # A broken subscription: the same 503 as the metrics port's, naming nothing.
                private = "chat:slack:C0PRIVATE:acme/private-repo"
                watch_health(lambda: {private: "last run (2026-01-28) failed: acme/private-repo: 404"})
                try:
                    broken = await http.get(f"http://127.0.0.1:{runtime.http_port}/healthz")
                finally:
                    watch_health(None)
        finally:
            await runtime.stop()
    assert page.status_code == 404 and "digestbot_" not in page.text
    assert health.status_code == 200
    assert broken.status_code == 503 and broken.text.startswith("unhealthy")
    assert "C0PRIVATE" not in broken.text and "private-repo" not in broken.text


def test_names_as_labels_only_when_the_operator_opts_in(monkeypatch, tmp_path):
    chat = "chat:slack:C0PRIVATE:acme/private-repo"
    assert subscription_label(chat) == subscription_label(chat) != subscription_label("other")
    assert "C0PRIVATE" not in subscription_label(chat) and "private" not in subscription_label(chat)
    try:
        label_names(True)
        assert subscription_label(chat) == chat
    finally:
        label_names(False)
    monkeypatch.setenv("METRICS_LABEL_NAMES", "true")
    settings = Settings(digest_db=tmp_path / "d.db")
    assert settings.metrics_label_names is True
    # `digestbot status` (another process than the service) shows the label the service uses.
    sub = Subscription(
        name=chat, repo="acme/private-repo", timezone="UTC", schedule="09:00", lang="en", destinations=()
    )
    [shown] = status_data(settings, Store(settings.digest_db), [sub])["subscriptions"]
    assert shown["metrics_id"] == chat


async def test_a_busy_metrics_port_is_one_clear_config_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=f"cannot serve /metrics on 127.0.0.1:{port}.*METRICS_PORT"):
            await start_metrics_server("127.0.0.1", port)


def test_json_logs_are_one_object_a_line_with_secrets_masked(capsys):
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    try:
        setup_logging(1, ["xoxb-secret-token-123"], "json")
        logging.getLogger("bot.test").info("posting with %s to %s", "xoxb-secret-token-123", "C1 — 频道")
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("bot.test").exception("run failed")
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
    lines = capsys.readouterr().err.strip().splitlines()
    records = [json.loads(line) for line in lines]
    assert records[0]["level"] == "INFO" and records[0]["logger"] == "bot.test"
    assert records[0]["message"] == "posting with *** to C1 — 频道"
    assert "time" in records[0]
    assert records[1]["level"] == "ERROR" and "ValueError: boom" in records[1]["exc_info"]
    assert "xoxb-secret-token-123" not in "\n".join(lines)
