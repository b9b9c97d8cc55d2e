"""Imports paid only by the verbs that need them (issue 21): a real `digestbot` process reports which
modules it loaded (sys.modules at exit), never how long it took."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.bot.cli.test_cli import DAY, repo  # noqa: F401  (the throw-away clone fixture)
from tests.bot.cli.test_cli_process import child_env

SDKS = ("slack_sdk", "slack_bolt", "discord", "openai", "matplotlib", "rich", "prometheus_client")
SERVICE = ("aiohttp", "apscheduler")  # `digestbot run`'s own: the metrics endpoint, the scheduler

# Runs the CLI in-process and prints the top-level packages it loaded, whatever the exit code.
PROBE = """
import json, sys
from bot.cli.main import main
try:
    main()
except SystemExit:
    pass
finally:
    print(json.dumps(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
"""


def loaded(*args: str, db: Path) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "--db", str(db), *args],
        capture_output=True,
        text=True,
        env=child_env(OPENAI_API_KEY="", DIGEST_MODEL="", SLACK_BOT_TOKEN="", DISCORD_BOT_TOKEN=""),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_help_loads_no_sdk_no_models_no_store(tmp_path):
    modules = loaded("--help", db=tmp_path / "d.db")
    assert "click" in modules
    assert not modules & {*SDKS, *SERVICE, "pydantic", "sqlite_utils", "httpx"}


def test_a_heuristic_digest_loads_no_sdk_and_none_of_the_services_parts(repo, tmp_path):  # noqa: F811
    out = tmp_path / "day.md"
    args = ["digest", "--git-dir", str(repo.path), "--date", DAY, "--tz", "Asia/Shanghai"]
    modules = loaded(*args, "--analyzer", "heuristic", "--out", str(out), db=tmp_path / "d.db")
    assert out.read_text(encoding="utf-8").strip()  # the digest was written
    assert "sqlite_utils" in modules
    assert not modules & {*SDKS, *SERVICE}
