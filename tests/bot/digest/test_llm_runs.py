"""Whole `digestbot` runs with the LLM analyser against the fake server: a run interrupted part-way
keeps every analysis it paid for (issue 10 item 7), and a bad key or model is one line (item 5)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from tests.bot.cli.test_cli import DAY, repo  # noqa: F401  (the fixture: a clone with 3 commits on DAY)
from tests.fakes.openai_server import FakeLLM

ROOT = Path(__file__).resolve().parents[3]


def llm_env(fake: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = {"DIGEST_MODEL": fake.model, "OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "sk-test-123456"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return {**os.environ, **env, "NO_PROXY": "127.0.0.1"}


def analyses(db: Path) -> int:
    """Analyses stored so far, read beside the running process (read-only: never a writer on its file)."""
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
        try:
            return conn.execute("SELECT count(*) FROM analyses").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:  # not created yet
        return 0


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_an_interrupted_day_keeps_what_it_paid_for(repo, tmp_path, monkeypatch, how):  # noqa: F811
    db = tmp_path / "d.db"
    args = ["--db", str(db), "digest", "--git-dir", str(repo.path), "--date", DAY, "--analyzer", "llm"]
    with FakeLLM() as fake:
        env = llm_env(fake, monkeypatch)
        fake.delay(60, match="Add the export command", times=None)  # one commit never answers
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            # as from a terminal: a shell starts a background job (CI run with `&`) with SIGINT ignored, the
            # child inherits that, and Python then leaves Ctrl-C ignored, as it should for such a job
            preexec_fn=_interruptible,
        )
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and analyses(db) < 2:
                time.sleep(0.1)
            assert analyses(db) == 2  # stored while the third call is still out
            proc.send_signal(how)
            # communicate, not wait: stderr is a pipe, and a child blocked writing to a full one never ends
            try:
                _, err = proc.communicate(timeout=15)
            except subprocess.TimeoutExpired as exc:  # what it printed, and which signals it ignores
                status = Path(f"/proc/{proc.pid}/status")
                masks = (
                    [x for x in status.read_text().splitlines() if x.startswith("Sig")]
                    if status.exists()
                    else []
                )
                pytest.fail(f"still running 15 s after {how.name}; stderr so far: {exc.stderr!r}; {masks}")
            assert len(err.decode().splitlines()) <= 3, err.decode()[-2000:]  # one line, not tracebacks
        finally:
            if proc.poll() is None:
                proc.kill()
        assert analyses(db) == 2  # kept through the signal
        # The next run asks only for what is missing.
        fake.rules.clear()
        fake.reset_counters()
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert fake.calls == 1 and "Add the export command" in fake.log[0].text
    assert analyses(db) == 3


@pytest.mark.parametrize(("status", "hint"), [(401, "OPENAI_API_KEY"), (404, "DIGEST_MODEL")])
def test_bad_key_or_model_with_analyzer_llm_is_one_line(repo, tmp_path, monkeypatch, status, hint):  # noqa: F811
    with FakeLLM() as fake:
        llm_env(fake, monkeypatch)
        fake.fail(status, times=None)
        args = ["--db", str(tmp_path / "d.db"), "digest", "--git-dir", str(repo.path), "--date", DAY]
        strict = CliRunner().invoke(cli, [*args, "--analyzer", "llm"], catch_exceptions=False)
        assert strict.exit_code == 2
        lines = [line for line in strict.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and f"answered {status}" in lines[0] and hint in lines[0]
        assert "sk-test-123456" not in strict.stderr
        # auto: one warning, then the heuristic for every commit, and a complete report.
        fake.reset_counters()
        auto = CliRunner().invoke(cli, [*args, "--analyzer", "auto", "--refresh"], catch_exceptions=False)
        assert auto.exit_code == 0, auto.output
        assert "Add the export command" in auto.stdout and "Fix crash on empty input" in auto.stdout
