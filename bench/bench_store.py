"""Benchmark: several `digestbot digest` processes on one SQLite database at once.

    python bench/bench_store.py [--git-dir /tmp/vllm.git] [--day 2025-12-10] [--processes 6] [--rounds 3]

Each round starts N real CLI processes together on a new database file (the first opens race to create
the schema), then N more on the same file (they race to write the same analyses and digest). Prints how
many succeeded, the distinct error lines of those that did not, and the wall time of each wave. Reads a
local clone (the bare vllm clone by default); skips with a message when it is absent.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wave(db: Path, git_dir: Path, day: str, n: int) -> tuple[int, Counter[str], float]:
    # The console script, as a user runs it (next to this interpreter).
    args = [str(Path(sys.executable).with_name("digestbot")), "--db", str(db), "digest", "--git-dir", str(git_dir),
            "--date", day, "--tz", "Asia/Shanghai", "--analyzer", "heuristic", "--format", "json", "--refresh"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    began = time.monotonic()
    procs = [
        subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(n)
    ]
    errors: Counter[str] = Counter()
    ok = 0
    for p in procs:
        _, err = p.communicate(timeout=600)
        if p.returncode == 0:
            ok += 1
        else:
            errors[(err.strip().splitlines() or ["(no output)"])[-1]] += 1
    return ok, errors, time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", type=Path, default=Path("/tmp/vllm.git"))
    parser.add_argument("--day", default="2025-12-10")  # inside the bare clone's history
    parser.add_argument("--processes", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    if not opts.git_dir.exists():
        print(f"skipped: no clone at {opts.git_dir} (pass --git-dir)")
        return
    print(f"{opts.processes} concurrent `digestbot digest` processes, {opts.day}, {opts.rounds} rounds")
    print("| round | wave | succeeded | failed | wall |")
    print("| --- | --- | --- | --- | --- |")
    failures: Counter[str] = Counter()
    for r in range(1, opts.rounds + 1):
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "digest.db"
            for name in ("new file", "same file"):
                ok, errors, wall = wave(db, opts.git_dir, opts.day, opts.processes)
                failures.update(errors)
                print(f"| {r} | {name} | {ok} | {opts.processes - ok} | {wall:.1f} s |")
    for line, count in failures.most_common():
        print(f"{count} × {line}")
    if not failures:
        print("every process succeeded")


if __name__ == "__main__":
    main()
