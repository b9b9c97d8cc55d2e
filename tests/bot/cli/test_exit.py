"""How a real `digestbot` process ends (bot/cli/exit.py): at once, with the verb's exit status, every
byte of its output, logging flushed and the store closed; the interpreter's own exit where it must
print a message or wait for a thread."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.bot.cli.test_cli import DAY, repo  # noqa: F401  (the throw-away clone fixture)
from tests.bot.cli.test_cli_process import ROOT, child_env


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    # Buffered stdout (no PYTHONUNBUFFERED): what is still in the buffer at the end must come out.
    env = {k: v for k, v in child_env().items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )


def test_the_console_script_gives_what_the_interpreters_exit_gave(repo, tmp_path):  # noqa: F811
    """The same JSON report, status and store through `script` (quick exit) and `main` (the interpreter's
    exit); the store closed in both (its write-ahead log folded into the database file)."""
    args = ["digest", "--git-dir", str(repo.path), "--date", DAY, "--tz", "Asia/Shanghai", "--format", "json"]
    runs = {}
    for entry in ("script", "main"):
        db = tmp_path / f"{entry}.db"
        code = f"import sys\nfrom bot.cli.main import {entry}\nsys.argv = ['digestbot', *sys.argv[1:]]\n{entry}()"
        runs[entry] = _python(code, "--db", str(db), *args)
        assert runs[entry].returncode == 0, runs[entry].stderr
        assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0
    quick, slow = (json.loads(runs[e].stdout) for e in ("script", "main"))
    assert len(quick["commits"]) >= 3
    assert {**quick, "generated_at": None} == {**slow, "generated_at": None}
    bad = _python("from bot.cli.main import script\nscript()", "digest", "--date", "nope")
    assert bad.returncode == 2 and bad.stderr.splitlines() == [
        "error: bad date 'nope': use YYYY-MM-DD, e.g. 2026-01-29"
    ]


def test_the_quick_exit_flushes_output_and_logging_and_keeps_the_status(tmp_path):
    log_file = tmp_path / "log.txt"
    done = _python(
        "import logging, logging.handlers, sys\n"
        "from bot.cli.exit import end_process\n"
        # a handler that writes only when flushed or closed: logging's exit handler must have run
        f"target = logging.FileHandler({str(log_file)!r})\n"
        "logging.getLogger().addHandler(logging.handlers.MemoryHandler(1000, target=target))\n"
        "logging.getLogger().warning('kept')\n"
        "print('no newline at the end', end='')\n"
        "sys.stderr.write('err')\n"
        "end_process(3)\n"
        "print('never')\n"
    )
    assert (done.returncode, done.stdout, done.stderr) == (3, "no newline at the end", "err")
    assert log_file.read_text() == "kept\n"


def test_a_message_or_a_thread_to_wait_for_takes_the_interpreters_exit(tmp_path):
    said = _python("from bot.cli.exit import end_process\nend_process('bye')")
    assert (said.returncode, said.stderr.strip()) == (1, "bye")
    mark = tmp_path / "written"
    waited = _python(
        "import threading, time\n"
        "from pathlib import Path\n"
        "from bot.cli.exit import end_process\n"
        "def late():\n"
        "    time.sleep(0.3)\n"
        f"    Path({str(mark)!r}).write_text('done')\n"
        "threading.Thread(target=late).start()\n"
        "end_process(0)\n"
    )
    assert waited.returncode == 0 and mark.read_text() == "done"


def test_the_llm_analysers_cpu_worker_finishes_its_queued_work_first(tmp_path):
    mark = tmp_path / "written"
    done = _python(
        "import time\n"
        "from pathlib import Path\n"
        "from bot.digest import llm_analyzer\n"
        "from bot.cli.exit import end_process\n"
        "def late():\n"
        "    time.sleep(0.3)\n"
        f"    Path({str(mark)!r}).write_text('done')\n"
        "llm_analyzer._CPU_POOL.submit(late)\n"
        "end_process(0)\n"
    )
    assert done.returncode == 0 and mark.read_text() == "done"
