"""Issue 18 item 2: the deploy guide's three paths with a `.env` copied from `.env.example` as the guide
says. No Docker engine or systemd runs here, so each path's environment is built from the real files
by the documented precedence — systemd: the unit's Environment=, then EnvironmentFile= overrides it;
`docker run --env-file`: the image's ENV, then the file overrides it; compose: the image's ENV, then
env_file, then `environment:` — and then the settings loader (and, end to end, `digestbot run` itself)
starts in that environment. The unit's and the image's settings must survive the copied `.env`."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from bot.store.db import Store
from tests.fakes.gitrepo import GitRepo, isolate_git_env
from tests.fakes.slack_api import FakeSlack

ROOT = Path(__file__).resolve().parents[2]


# --- the three paths' environments, from the real files ------------------------------------------------
def parse_env_file(text: str, *, unquote: bool) -> dict[str, str]:
    """KEY=VALUE lines; blank lines and comments skipped. systemd and compose strip quotes around a
    value; `docker run --env-file` takes the value literally."""
    env = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        key, value = line.split("=", 1)
        value = value.strip() if unquote else value
        if unquote and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        env[key.strip()] = value
    return env


def unit_settings() -> tuple[dict[str, str], list[str], str]:
    """The unit's Environment= assignments, its ExecStart and WorkingDirectory."""
    env: dict[str, str] = {}
    keys: dict[str, str] = {}
    for line in (ROOT / "deploy" / "digestbot.service").read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        if key == "Environment":
            for assignment in shlex.split(value):
                name, _, val = assignment.partition("=")
                env[name] = val
        else:
            keys[key] = value
    assert keys["EnvironmentFile"].lstrip("-") == "/etc/digestbot/env"
    return env, shlex.split(keys["ExecStart"]), keys["WorkingDirectory"]


def image_settings() -> tuple[dict[str, str], list[str], str]:
    """The final stage's ENV, CMD and WORKDIR of the Dockerfile."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    stages = re.split(r"^FROM\s", text, flags=re.M)
    env: dict[str, str] = {}
    cmd: list[str] = []
    workdir = "/"
    for line in stages[-1].splitlines():
        op, _, rest = line.strip().partition(" ")
        if op == "ENV":
            env.update(dict(a.split("=", 1) for a in shlex.split(rest)))
        elif op == "CMD":
            cmd = json.loads(rest)
        elif op == "WORKDIR":
            workdir = rest.strip()
    return env, cmd, workdir


def copied_env_file(values: dict[str, str]) -> str:
    """`cp .env.example .env`, then the operator fills in what they use: each key's example line
    (commented out or not) becomes KEY=value."""
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    for key, value in values.items():
        text, n = re.subn(rf"^(# )?{key}=.*$", f"{key}={value}", text, flags=re.M)
        assert n == 1, f"{key} is not in .env.example"
    return text


def systemd_env(dotenv: str) -> tuple[dict[str, str], dict[str, str], list[str], str]:
    unit, command, workdir = unit_settings()
    # systemd.exec(5): "Settings from these files override settings made with Environment=".
    return unit, {**unit, **parse_env_file(dotenv, unquote=True)}, command, workdir


def docker_env(dotenv: str) -> tuple[dict[str, str], dict[str, str], list[str], str]:
    image, command, workdir = image_settings()
    # docker run: --env-file values replace the image's ENV.
    return image, {**image, **parse_env_file(dotenv, unquote=False)}, command, workdir


def compose_env(dotenv: str) -> tuple[dict[str, str], dict[str, str], list[str], str]:
    image, command, workdir = image_settings()
    service = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))["services"]["digestbot"]
    assert [e["path"] for e in service["env_file"]] == [".env"]
    project = parse_env_file(dotenv, unquote=True)  # compose interpolates ${VAR} from the project's .env

    def interpolate(value: str) -> str:
        return re.sub(
            r"\$\{(\w+)(?::-([^}]*))?\}", lambda m: project.get(m.group(1)) or m.group(2) or "", value
        )

    declared = {k: interpolate(str(v)) for k, v in service["environment"].items()}
    # Compose: `environment:` wins over env_file, which wins over the image's ENV.
    return {**image, **declared}, {**image, **project, **declared}, service.get("command") or command, workdir


PATHS = {"systemd": systemd_env, "docker run": docker_env, "compose": compose_env}

# What the operator fills in, following the guide (tokens; here a Slack in HTTP mode).
TOKENS = {"SLACK_BOT_TOKEN": "xoxb-fake-bot-token", "SLACK_SIGNING_SECRET": "a-signing-secret-for-tests"}


def loaded_settings(env: dict[str, str], cwd: Path) -> dict[str, str]:
    """The service's settings loader, in a process that has exactly this environment."""
    code = (
        "import json\nfrom bot.config.settings import load_settings\ns = load_settings()\n"
        "print(json.dumps({k: None if v is None else str(v.get_secret_value() if hasattr(v, 'get_secret_value')"
        " else v) for k, v in s.model_dump().items()}))"
    )
    base = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "HOME": str(cwd)}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={**base, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("path", list(PATHS))
def test_the_units_and_images_settings_survive_a_copied_env(path, tmp_path):
    declared, env, _, _ = PATHS[path](copied_env_file(TOKENS))
    settings = loaded_settings(env, tmp_path)
    for name, value in declared.items():
        field = name.lower()
        if field in settings and value:
            assert settings[field] == value, (
                f"{path}: {name}={value} lost, the service sees {settings[field]!r}"
            )
    assert settings["digest_config"] and settings["digest_db"] and settings["metrics_port"]
    assert settings["log_format"] == "json"
    assert settings["slack_bot_token"] == TOKENS["SLACK_BOT_TOKEN"]  # what the operator filled in


def test_an_empty_value_means_unset_everywhere(tmp_path):
    # Empty in the environment and in a .env file alike: the default, never an empty setting.
    (tmp_path / ".env").write_text("DIGEST_TZ=\nMETRICS_PORT=\nLOG_FORMAT=\n", encoding="utf-8")
    env = {"DIGEST_CONFIG": "", "DIGEST_DB": "", "OPENAI_BASE_URL": "", "HISTORY_DAYS": ""}
    settings = loaded_settings(env, tmp_path)
    assert settings["digest_config"] is None and settings["digest_db"].endswith("digestbot/digest.db")
    assert settings["digest_tz"] == "Asia/Shanghai" and settings["metrics_port"] is None
    assert settings["log_format"] == "text" and settings["history_days"] == "180"


def test_env_example_sets_nothing_when_copied():
    assert parse_env_file((ROOT / ".env.example").read_text(encoding="utf-8"), unquote=True) == {}


# --- end to end: the service each path starts posts ----------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


REMAP = {"systemd": ("/var/lib/digestbot", "/etc/digestbot"), "docker run": ("/data", "/config")}
REMAP["compose"] = REMAP["docker run"]

SUBSCRIPTIONS = """
[[subscription]]
name = "deploy-check"
repo = "acme/widgets"
git_dir = "{git}"
timezone = "UTC"
schedule = "00:00"  # each missed day is due from midnight on: three of them whatever the hour the test runs
lang = "en"
slack_channels = ["C0DEPLOY"]
"""


@pytest.mark.parametrize("path", list(PATHS))
def test_the_guide_followed_on_each_path_gives_a_service_that_posts(path, tmp_path, monkeypatch):
    isolate_git_env(monkeypatch, tmp_path / "home")
    repo = GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")
    repo.commit("Initial import", {"src/app.py": "print('hi')\n"}, when="2026-01-25T09:00:00+08:00")
    with FakeSlack() as slack:
        port, metrics = free_port(), free_port()
        dotenv = copied_env_file(
            {**TOKENS, "SLACK_API_URL": slack.api_url, "SLACK_PORT": str(port), "LOG_FORMAT": "json"}
        )
        _, env, command, workdir = PATHS[path](dotenv)
        # The machine's absolute places (state, config) move under tmp_path; the ports are free ones.
        state, config = REMAP[path]
        moved = {
            k: v.replace(state, str(tmp_path / "state")).replace(config, str(tmp_path / "config"))
            for k, v in env.items()
        }
        moved.update(METRICS_PORT=str(metrics), METRICS_HOST="127.0.0.1")
        db, toml = Path(moved["DIGEST_DB"]), Path(moved["DIGEST_CONFIG"])
        assert db.is_relative_to(tmp_path / "state") and toml.is_relative_to(tmp_path / "config")
        toml.parent.mkdir(parents=True)
        toml.write_text(SUBSCRIPTIONS.format(git=repo.path), encoding="utf-8")
        # The service has known this subscription for days: at start it catches up the missed days.
        db.parent.mkdir(parents=True)
        store = Store(db)
        seen = (datetime.now(UTC) - timedelta(days=4)).isoformat()
        store.db["subscription_seen"].insert({"name": "deploy-check", "first_seen": seen})
        store.close()
        cwd = Path(workdir.replace(state, str(tmp_path / "state")))
        cwd.mkdir(parents=True, exist_ok=True)
        assert command[0].endswith("digestbot") and command[-1] == "run"
        base = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "HOME": str(tmp_path / "home")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", *command[1:]],
            env={**base, **moved},
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and proc.poll() is None:
                parents = [m for m in slack.channel_messages("C0DEPLOY") if "acme/widgets" in (m.text or "")]
                if len(parents) >= 3:
                    break
                time.sleep(0.2)
            assert proc.poll() is None, proc.stderr.read().decode()
            probe = subprocess.run(
                [sys.executable, "-m", "bot.healthcheck"],
                env={**base, **moved},
                capture_output=True,
                timeout=60,
            )
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=90)
    assert len(parents) >= 3, err.decode()  # the three caught-up days, each posted
    assert proc.returncode == 0, err.decode()
    lines = err.decode().strip().splitlines()
    assert lines and all(json.loads(line)["time"].endswith("Z") for line in lines)  # LOG_FORMAT=json
    assert probe.returncode == 0, probe.stderr


@pytest.mark.parametrize("config", [None, ""])
def test_run_refuses_zero_subscriptions_unless_allowed(tmp_path, monkeypatch, config):
    from click.testing import CliRunner

    from bot.cli.main import cli

    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-not-used")
    args = ["--db", str(tmp_path / "d.db"), "run"]
    if config is not None:  # a file without [[subscription]]
        (tmp_path / "empty.toml").write_text("[defaults]\nlang = 'en'\n", encoding="utf-8")
        args += ["--config", str(tmp_path / "empty.toml")]
    refused = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert refused.exit_code == 2
    [line] = refused.stderr.strip().splitlines()
    where = (
        f"{tmp_path}/empty.toml has no [[subscription]]" if config is not None else "DIGEST_CONFIG is not set"
    )
    assert line.startswith(f"error: no subscriptions: {where}") and "--allow-empty" in line
    # Allowed, it goes on to start the chat adapters (here: none configured properly, said in one line).
    allowed = CliRunner().invoke(cli, [*args, "--allow-empty"], catch_exceptions=False)
    assert allowed.exit_code == 2 and "no subscriptions" not in allowed.stderr
    assert "Slack needs SLACK_APP_TOKEN" in allowed.stderr
