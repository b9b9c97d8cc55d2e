"""Benchmark: every verb a person waits for, as real `digestbot` subprocesses on a local clone (issue 21).

    python bench/bench_cli.py [--git-dir /tmp/vllm.git] [--day 2025-12-04] [--week 2025-W49]
                              [--since 2025-09-01 --until 2025-12-31] [--latency 8 3]
                              [--only help,digest,cold,llm,analyze,weekly,eval] [--no-profile] [--top 8]

Times, with the shipped defaults (HISTORY_DAYS 180, the day in Asia/Shanghai), our packages' bytecode compiled
first as an install compiles it:
- `digestbot --help` (best of 5);
- `digest --analyzer heuristic` on an empty database (the day's 180 days of history read and mined) and
  warm (everything stored; best of 3);
- `digest --analyzer llm` through the fake OpenAI server of tests/fakes answering every call in L seconds,
  history already stored, as wall ÷ L; and the day's work that is not a call (the same day at L = 0);
- `analyze <sha>`: one card at L (history stored), as wall ÷ L;
- `weekly` of the day's week: first run on the warm database (one of its days stored) and warm (a second run);
- `eval` of four months: first run on an empty database, a second run, and how many git processes a
  third run starts (the days' commits come from the store);
then, unless --no-profile, the same commands again under cProfile (bench/profile_cli.py, every thread)
with the top functions: import time, our own functions by cumulative time, and all by own time.
The machine's load average is printed beside each block: figures measured under load are slower.
"""

from __future__ import annotations

import argparse
import compileall
import os
import pstats
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeLLM  # noqa: E402

TZ = "Asia/Shanghai"
OURS = tuple(str(ROOT / pkg) for pkg in ("bot", "analysis", "adapters"))
# The variables a run must not inherit from the shell (a configured model, tokens, another database).
_CLEARED = ("OPENAI_", "DIGEST_", "SLACK_", "DISCORD_", "GITHUB_", "LLM_", "HISTORY_", "ANTHROPIC_")


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


class Runner:
    """`digestbot` subprocesses in a scratch folder, with a clean environment."""

    def __init__(self, work: Path, git_dir: Path, profile: bool, top: int):
        self.work = work
        self.git_dir = git_dir
        self.profile = profile
        self.top = top
        self.exe = shutil.which("digestbot", path=str(Path(sys.executable).parent)) or "digestbot"
        self.profiles: list[tuple[str, Path]] = []

    def env(self, db: Path, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(_CLEARED)}
        env.update(DIGEST_DB=str(db), DIGEST_TZ=TZ, **extra)
        return env

    def run(self, args: list[str], db: Path, **extra: str) -> float:
        """Wall seconds of one run; a failing run stops the benchmark with its stderr. Also kept: when it
        started (time.monotonic, the fake LLM's clock) and the CPU seconds it used, git included."""
        cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.started = time.monotonic()
        began = time.perf_counter()
        proc = subprocess.run(
            [self.exe, *args], cwd=self.work, env=self.env(db, **extra), capture_output=True, text=True
        )
        wall = time.perf_counter() - began
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
        if proc.returncode != 0:
            raise SystemExit(f"digestbot {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        return wall

    def profiled(self, label: str, args: list[str], db: Path, **extra: str) -> None:
        """The same command under cProfile, kept for the report at the end."""
        if not self.profile:
            return
        out = self.work / f"{len(self.profiles):02d}.prof"
        subprocess.run(
            [sys.executable, str(ROOT / "bench" / "profile_cli.py"), str(out), *args],
            cwd=self.work,
            env=self.env(db, **extra),
            capture_output=True,
            check=True,
        )
        self.profiles.append((label, out))

    def day_args(self, day: str, *more: str) -> list[str]:
        return ["digest", "--git-dir", str(self.git_dir), "--date", day, "--tz", TZ, *more]


def best(n: int, fn: Callable[[], float]) -> tuple[float, list[float]]:
    runs = [fn() for _ in range(n)]
    return min(runs), runs


def show(label: str, seconds: float, runs: list[float] | None = None, note: str = "") -> None:
    spread = f"  (runs {', '.join(f'{r:.2f}' for r in runs)})" if runs and len(runs) > 1 else ""
    print(f"  {label:<54} {seconds:7.2f} s{spread}{note}", flush=True)


def fresh_copy(src: Path, dst: Path) -> Path:
    """A copy of a database (and its WAL) for a run that must not see another run's analyses."""
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{src}{suffix}").exists():
            shutil.copyfile(f"{src}{suffix}", f"{dst}{suffix}")
    return dst


def llm_env(fake: FakeLLM) -> dict[str, str]:
    return {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "bench", "DIGEST_MODEL": fake.model}


def timeline(fake: FakeLLM, started: float, wall: float) -> str:
    """Where a run's time went around the model's: until the first call, while the calls were being
    sent, and after the last one was answered (the model's own time is L per call, in parallel)."""
    starts = sorted(entry.started - started for entry in fake.log)
    ends = sorted(entry.ended - started for entry in fake.log if entry.ended)
    if not starts or not ends:
        return "no calls"
    return (
        f"first call sent after {starts[0]:.2f} s, the last {starts[-1] - starts[0]:.2f} s later;"
        f" the run ended {wall - ends[-1]:.2f} s after the last answer"
    )


def git_processes(runner: Runner, args: list[str], db: Path) -> str:
    """How many git processes one run starts, by git verb: a wrapper named git first on PATH logs them."""
    shim = runner.work / "shim"
    shim.mkdir(exist_ok=True)
    count = runner.work / "git-calls"
    count.write_text("")
    real = shutil.which("git")
    (shim / "git").write_text(f'#!/bin/sh\necho "$*" >> {count}\nexec {real} "$@"\n')
    (shim / "git").chmod(0o755)
    runner.run(args, db, PATH=f"{shim}{os.pathsep}{os.environ['PATH']}")
    verbs = Counter(_git_verb(line.split()) for line in count.read_text().splitlines())
    return f"{sum(verbs.values())} ({', '.join(f'{v} {n}' for v, n in sorted(verbs.items()))})"


def _spin(stop: threading.Event) -> None:
    while not stop.is_set():
        pass


def history_read(db: Path) -> None:
    """The history step's read of the span's messages (bot/store/bulk.py) beside a thread that holds the GIL,
    as the SDK's import does at a card's start: in one SQLite step (shipped) and row by row (before)."""
    from bot.store.db import Store

    store = Store(db)
    try:
        [span] = store.db.query("SELECT repo, branch, min(committed_at) AS a, max(committed_at) AS b FROM history"
                                " GROUP BY repo, branch ORDER BY count(*) DESC LIMIT 1")  # fmt: skip
        since = datetime.fromisoformat(span["a"])
        until = datetime.fromisoformat(span["b"]) + timedelta(seconds=1)
        sql = ("SELECT sha, committed_at, message, automated FROM history WHERE repo = ? AND branch = ?"
               " AND committed_at >= ? AND committed_at <= ? ORDER BY committed_at, sha")  # fmt: skip
        ways = {
            "in one step": lambda: store.history(span["repo"], span["branch"], since, until, files=False),
            "row by row (the rows alone, no commits built)": lambda: store.db.execute(sql, [span["repo"], span["branch"], span["a"], span["b"]]).fetchall(),
        }  # fmt: skip
        for name, read in ways.items():
            alone = time.perf_counter()
            count = len(read())
            alone = time.perf_counter() - alone
            stop = threading.Event()
            busy = threading.Thread(target=_spin, args=(stop,))
            busy.start()
            time.sleep(0.01)
            beside = time.perf_counter()
            read()
            beside = time.perf_counter() - beside
            stop.set()
            busy.join()
            print(f"    reading the history's {count} messages {name}: {alone * 1000:.1f} ms alone,"
                  f" {beside * 1000:.1f} ms beside a thread holding the GIL", flush=True)  # fmt: skip
    finally:
        store.close()


def store_writes(db: Path) -> None:
    """What storing each validated analysis at once costs: the LLM day's analyses written again, one
    transaction each (as the run did before issue 21's seventh round), with the shipped `synchronous =
    FULL` and with NORMAL beside it; then handed over together to the store's writer (group commit, as
    the run does now: the answers arrive together), FULL."""
    from bot.store.db import Store

    store = Store(fresh_copy(db, db.with_name("writes-group.db")))
    try:
        rows = store.db.query("SELECT repo, sha, model, prompt_version, lang FROM analyses WHERE model != ?",
                              ["heuristic"])  # fmt: skip
        kept = [(r, store.get_analysis(r["repo"], r["sha"], r["model"], r["prompt_version"], r["lang"]))
                for r in rows]  # fmt: skip
        commits: list[str] = []
        store.db.conn.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
        began = time.perf_counter()
        futures = [store.save_analysis_soon(r["repo"], a, r["model"], r["prompt_version"]) for r, a in kept]
        for future in futures:
            future.result()
        spent = time.perf_counter() - began
    finally:
        store.close()
    print(f"    storing the {len(kept)} analyses handed over together (group commit), synchronous = FULL:"
          f" {spent * 1000:.1f} ms in {len(commits)} transactions", flush=True)  # fmt: skip
    for mode in ("FULL", "NORMAL"):
        store = Store(fresh_copy(db, db.with_name(f"writes-{mode}.db")))
        try:
            store.db.execute(f"PRAGMA synchronous = {mode}")
            rows = store.db.query("SELECT repo, sha, model, prompt_version, lang FROM analyses WHERE model != ?",
                                  ["heuristic"])  # fmt: skip
            kept = [(r, store.get_analysis(r["repo"], r["sha"], r["model"], r["prompt_version"], r["lang"]))
                    for r in rows]  # fmt: skip
            began = time.perf_counter()
            for r, analysis in kept:
                store.save_analysis(r["repo"], analysis, r["model"], r["prompt_version"])
            spent = time.perf_counter() - began
        finally:
            store.close()
        print(f"    storing the {len(kept)} analyses one by one, synchronous = {mode}: {spent * 1000:.1f} ms"
              f" ({spent / max(1, len(kept)) * 1000:.2f} ms each)", flush=True)  # fmt: skip


def _git_verb(words: list[str]) -> str:
    """The git command of one logged call: the first word that is neither an option nor its value."""
    rest = iter(words)
    for word in rest:
        if word in ("-C", "-c"):
            next(rest, None)
        elif not word.startswith("-"):
            return word
    return "?"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--git-dir", type=Path, default=Path("/tmp/vllm.git"))
    parser.add_argument("--day", default="2025-12-04", help="a day with ~45 commits and 180 days before it")
    parser.add_argument("--week", default="2025-W49", help="the ISO week of --day")
    parser.add_argument("--since", default="2025-09-01", help="eval: first day (four months)")
    parser.add_argument("--until", default="2025-12-31", help="eval: last day")
    parser.add_argument("--latency", type=float, nargs="+", default=[8.0, 3.0], help="the fake model's L")
    parser.add_argument("--only", default="help,digest,cold,llm,analyze,weekly,eval")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--top", type=int, default=8, help="functions listed per verb")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (databases, profiles)")
    args = parser.parse_args()
    only = set(args.only.split(","))
    work = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    runner = Runner(work, args.git_dir, profile=not args.no_profile, top=args.top)
    warm = work / "warm.db"
    # An installed program runs from compiled bytecode; a checkout whose sources changed, under
    # PYTHONDONTWRITEBYTECODE (set on some machines), would compile the changed modules at every start
    # (0.05-0.1 s of a day's start before its first call). Compiled once here, as an install does.
    stale = sum(not compileall.compile_dir(ROOT / pkg, quiet=2) for pkg in ("bot", "analysis", "adapters"))
    print(f"digestbot on {args.git_dir}, day {args.day} ({TZ}), shipped defaults; {os.cpu_count()} cores"
          f"; bytecode compiled{' (with errors)' if stale else ''}")  # fmt: skip

    if "help" in only:
        print(f"--help [{load()}]")
        seconds, runs = best(5, lambda: runner.run(["--help"], work / "none.db"))
        show("digestbot --help (best of 5)", seconds, runs, "   target <= 0.3 s")
        runner.profiled("--help", ["--help"], work / "none.db")

    day = runner.day_args(args.day, "--analyzer", "heuristic")
    print(f"digest --analyzer heuristic [{load()}]")
    cold_runs = []
    for k in range(2 if "cold" in only else 1):
        db = work / f"cold{k}.db"
        cold_runs.append(runner.run(day, db))
        if k == 0:
            shutil.move(db, warm)
        else:
            db.unlink()
    show("empty database (180 days of history read and mined)", min(cold_runs), cold_runs, "   target <= 5 s")
    if "cold" in only:
        runner.profiled("digest, empty database", day, work / "cold-prof.db")
    if "digest" in only:
        seconds, runs = best(3, lambda: runner.run(day, warm))
        show("warm database (best of 3)", seconds, runs, "   target <= 0.8 s")
        runner.profiled("digest, warm", day, warm)

    with FakeLLM(latency=0.0) as fake:
        env = llm_env(fake)
        llm_day = runner.day_args(args.day, "--analyzer", "llm")
        if "llm" in only:
            print(f"digest --analyzer llm, fake model answering in L s, history stored [{load()}]")
            fake.latency = 0.0
            zero = runner.run(llm_day, fresh_copy(warm, work / "llm0.db"), **env)
            show("L = 0: everything but the model", zero, note=f"   {runner.cpu:.2f} s CPU")
            for latency in args.latency:
                fake.latency = latency
                fake.reset_counters()
                wall = runner.run(llm_day, fresh_copy(warm, work / f"llm{latency:g}.db"), **env)
                show(
                    f"L = {latency:g} s: {fake.calls} calls, {fake.max_in_flight} at once",
                    wall,
                    note=f"   = {wall / latency:.2f} L" + ("   target <= 1.15 L" if latency == 8 else ""),
                )
                print("    " + timeline(fake, runner.started, wall))
            fake.latency = 0.0
            store_writes(work / f"llm{args.latency[0]:g}.db")
            history_read(fresh_copy(warm, work / "history-read.db"))
            runner.profiled(
                "digest --analyzer llm, L = 0", llm_day, fresh_copy(warm, work / "llmp.db"), **env
            )
        if "analyze" in only:
            sha = subprocess.run(
                ["git", f"--git-dir={args.git_dir}", "log", "--first-parent", "--format=%H",
                 f"--since={args.day}T00:00:00+08:00", f"--until={args.day}T23:59:59+08:00", "-1"],
                capture_output=True, text=True, check=True,
            ).stdout.split()[0]  # fmt: skip
            card = ["analyze", sha, "--git-dir", str(args.git_dir), "--analyzer", "llm"]
            print(f"analyze <sha> --analyzer llm, one card, history stored [{load()}]")
            for latency in args.latency[:1]:
                fake.latency = latency
                wall = runner.run(card, fresh_copy(warm, work / "card.db"), **env)
                show(f"L = {latency:g} s", wall, note=f"   = {wall / latency:.2f} L   target <= 1.1 L")
            fake.latency = 0.0
            runner.profiled("analyze --analyzer llm, L = 0", card, fresh_copy(warm, work / "cardp.db"), **env)

    if "weekly" in only:
        week = ["weekly", "--git-dir", str(args.git_dir), "--week", args.week, "--analyzer", "heuristic",
                "--out", str(work / "week.md")]  # fmt: skip
        print(f"weekly {args.week} --analyzer heuristic [{load()}]")
        db = fresh_copy(warm, work / "week.db")
        show("first run (one day of the week stored, six read and parsed)", runner.run(week, db))
        seconds, runs = best(2, lambda: runner.run(week, db))
        show("warm: second run (best of 2)", seconds, runs, "   target <= 5 s")
        runner.profiled("weekly, first run", week, fresh_copy(warm, work / "weekp.db"))

    if "eval" in only:
        ev = ["eval", "--git-dir", str(args.git_dir), "--since", args.since, "--until", args.until,
              "--analyzer", "heuristic", "--tz", TZ, "--out", str(work / "eval.txt")]  # fmt: skip
        print(f"eval {args.since}..{args.until} --analyzer heuristic [{load()}]")
        db = work / "eval.db"
        show("first run, empty database", runner.run(ev, db), note="   target <= 40 s")
        show("second run", runner.run(ev, db), note="   target <= 5 s")
        print(f"  third run: {git_processes(runner, ev, db)} git processes started", flush=True)
        runner.profiled("eval, second run", ev, db)

    if runner.profiles:
        print(f"\nwhere the time goes (cProfile, every thread) [{load()}]")
        for label, path in runner.profiles:
            report(label, path, runner.top)
    if args.keep:
        print(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


# Blocking waits of idle threads and the event loop: time nobody computed.
_WAITS = (
    "SimpleQueue' objects>",
    "select.poll' objects>",
    "select.epoll' objects>",
    "lock' objects>",
    "sleep>",
)


def report(label: str, path: Path, top: int) -> None:
    """Imports; our functions by cumulative time; every function by its own time (idle waits left out)."""
    wall = float(Path(f"{path}.wall").read_text())
    entries = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    # cProfile counts a recursive function's cumulative time once, at its outermost call.
    imports = max((v[3] for k, v in entries.items() if k[2] == "_find_and_load"), default=0.0)
    print(f"- {label}: {wall:.2f} s under the profiler, {imports:.2f} s of it imports")
    # The verbs' own wrappers in the CLI take the whole run: left out, so the list shows where it goes.
    ours = sorted(
        (
            (v[3], k)
            for k, v in entries.items()
            if k[0].startswith(OURS) and k[2] != "<module>" and not ("/bot/cli/" in k[0] and v[3] > wall / 2)
        ),
        reverse=True,
    )
    print("    ours, cumulative:    " + "; ".join(f"{_name(f)} {t:.2f}s" for t, f in ours[:top]))
    own = sorted(
        ((v[2], k) for k, v in entries.items() if not k[2].endswith(_WAITS)), key=lambda x: x[0], reverse=True
    )
    print("    own time:            " + "; ".join(f"{_name(f)} {t:.2f}s" for t, f in own[:top]))


def _name(func: tuple) -> str:
    file, line, name = func
    return f"{_short(file)}:{line}({name})" if file != "~" else name


def _short(file: str) -> str:
    for marker in ("site-packages/", "lib/python3"):
        if marker in file:
            return file.split(marker, 1)[1]
    try:
        return str(Path(file).relative_to(ROOT))
    except ValueError:
        return file


if __name__ == "__main__":
    main()
