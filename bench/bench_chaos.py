"""Chaos benchmark: `digestbot post` as a real subprocess, broken on purpose, against fake Slack and
Discord servers on 127.0.0.1 (tests/fakes, real HTTP). Target: 0 duplicates and 0 missing.

    python bench/bench_chaos.py [--git-dir /tmp/vllm.git --date 2025-12-16] [--kill-at 1 2 3 6]
    python bench/bench_chaos.py --part service [--connections 1100 --nofile 1024] [--code DIR]

A day is read from a local clone (--git-dir; without one, a synthetic repository is built) and
analysed once by the heuristic into a base database; every scenario starts from a copy of it, in a
channel of its own, and is compared with a clean post of the same digest (the reference):

- kill -9 right after the platform accepted the N-th message (the fake kills the poster before it
  answers, so the platform has the message and the store does not), then the same command again;
  for Discord also with the restart after Discord has forgotten the nonces (only reading the
  channel and the thread can tell what is there);
- two `digestbot post` of the same digest and channel at once, on one database;
- a 500 after acceptance, and a dropped connection after acceptance (the platform stored the
  message, the answer is lost), then the same command again.

A message's signature is what it shows (text, blocks or embeds without timestamps, file names, top
level or in a thread); Discord threads count as items too. Duplicates = signatures seen more often
than in the reference, missing = less often. Plain-text output; no network beyond 127.0.0.1.

`--part service` runs the service's own scenarios (bench/chaos_service.py: `digestbot run` under
faults, two services on one database, a slow flood under a descriptor limit, partial secrets);
`--code DIR` runs the subprocesses from another checkout of digestbot (the figures before a change).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.discord_api import FakeDiscord  # noqa: E402
from tests.fakes.gitrepo import GitRepo  # noqa: E402
from tests.fakes.slack_api import FakeSlack  # noqa: E402

TZ = "Asia/Shanghai"
DIGESTBOT = [sys.executable, "-m", "bot.cli"]
RUN_TIMEOUT = 180  # seconds a single `digestbot post` may take


@dataclass
class Outcome:
    platform: str
    scenario: str
    exits: list[int]
    duplicates: int
    missing: int
    seconds: float


def synthetic_repo(work: Path) -> tuple[Path, str]:
    """A day of 12 commits: a few large (high), some mid-sized (medium), the rest small."""
    repo = GitRepo.init(work / "synthetic", remote="https://github.com/acme/widgets.git")
    for i in range(12):
        size = (900, 300, 20)[i % 3]
        files = {f"src/mod{i}/part{j}.py": "".join(f"x{k} = {k}\n" for k in range(size)) for j in range(2)}
        repo.commit(
            f"[Feature] Step {i} (#{100 + i})", files=files, when=f"2026-01-26T{8 + i:02d}:00:00+08:00"
        )
    return repo.clone(work / "synthetic.git", bare=True), "2026-01-26"


class Chaos:
    def __init__(self, work: Path, git_dir: Path, day: str, code: Path = ROOT):
        self.work, self.git_dir, self.day = work, git_dir, day
        self.slack = FakeSlack().start()
        self.discord = FakeDiscord().start()
        self.channels = 0
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(work),
            "PYTHONPATH": str(code),
            "SLACK_BOT_TOKEN": self.slack.token,
            "SLACK_API_URL": self.slack.api_url,
            "DISCORD_BOT_TOKEN": self.discord.token,
            "DISCORD_API_URL": self.discord.base_url,
        }
        self.base_db = work / "base.db"
        started = time.monotonic()
        self._run(["--db", str(self.base_db), "digest", *self._source(), "--out", str(work / "day.md")])
        self.prepare_seconds = time.monotonic() - started

    def close(self) -> None:
        self.slack.stop()
        self.discord.stop()

    # -- processes ----------------------------------------------------------------------------------
    def _source(self) -> list[str]:
        return ["--git-dir", str(self.git_dir), "--date", self.day, "--tz", TZ, "--lang", "en"]

    def _post_args(self, platform: str, channel: str, db: Path) -> list[str]:
        return ["--db", str(db), "post", "--platform", platform, "--channel", channel, *self._source()]

    def _spawn(self, args: list[str]) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*DIGESTBOT, *args, "--analyzer", "heuristic"],
            cwd=self.work,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    def _run(self, args: list[str]) -> int:
        proc = self._spawn(args)
        _, err = proc.communicate(timeout=RUN_TIMEOUT)
        if proc.returncode not in (0, -signal.SIGKILL):
            print(f"    exit {proc.returncode}: {err.strip()[-300:]}")
        return proc.returncode

    def post(self, platform: str, channel: str, db: Path) -> int:
        return self._run(self._post_args(platform, channel, db))

    def fresh(self, platform: str) -> tuple[str, Path]:
        """A channel of its own and a copy of the base database (analyses cached, nothing posted)."""
        self.channels += 1
        if platform == "slack":
            channel = f"C0CHAOS{self.channels:03d}"
        else:
            channel = str(900_000_000_000_010_000 + self.channels)
            self.discord.add_channel(channel)
        db = self.work / f"{platform}-{self.channels}.db"
        shutil.copy(self.base_db, db)
        return channel, db

    # -- what the channel shows -----------------------------------------------------------------------
    def signatures(self, platform: str, channel: str) -> Counter[str]:
        shown: Counter[str] = Counter()
        if platform == "slack":
            for m in self.slack.messages:
                if m.channel == channel:
                    files = [f.get("name") for f in m.files]
                    shown[json.dumps([m.thread_ts is None, m.text, m.blocks, files], sort_keys=True)] += 1
            return shown
        threads = [t["id"] for t in self.discord.threads() if t["parent_id"] == channel]
        shown["thread"] = len(threads)
        for where, in_thread in [(channel, False), *((t, True) for t in threads)]:
            for m in self.discord.messages_in(where):
                embeds = [{k: v for k, v in e.items() if k != "timestamp"} for e in m["embeds"]]
                files = [a["filename"] for a in m["attachments"]]
                shown[json.dumps([in_thread, m["content"], embeds, files], sort_keys=True)] += 1
        return shown

    def on_accept(self, platform: str, hook: Callable[[], None] | None) -> None:
        if platform == "slack":
            self.slack.on_accept = (lambda message: hook()) if hook else None
        else:
            self.discord.on_accept = (lambda channel, message: hook()) if hook else None

    def clear(self) -> None:
        self.slack.clear_faults()
        self.discord.clear_faults()
        self.discord.nonce_window = 300.0
        self.on_accept("slack", None)
        self.on_accept("discord", None)


def compare(shown: Counter[str], reference: Counter[str]) -> tuple[int, int]:
    keys = set(shown) | set(reference)
    duplicates = sum(max(0, shown[k] - reference[k]) for k in keys)
    missing = sum(max(0, reference[k] - shown[k]) for k in keys)
    return duplicates, missing


def kill_after(chaos: Chaos, platform: str, n: int, *, forget_nonces: bool = False) -> Callable[..., Any]:
    def scenario(channel: str, db: Path) -> list[int]:
        accepted = 0
        child: list[subprocess.Popen[str]] = []
        killed = threading.Event()

        def hook() -> None:
            nonlocal accepted
            accepted += 1
            if accepted == n and child:
                os.kill(child[0].pid, signal.SIGKILL)  # before the fake answers: accepted, unrecorded
                killed.set()

        chaos.on_accept(platform, hook)
        child.append(chaos._spawn(chaos._post_args(platform, channel, db)))
        child[0].communicate(timeout=RUN_TIMEOUT)
        chaos.on_accept(platform, None)
        if forget_nonces:
            chaos.discord.nonce_window = 0.0
        exits = [child[0].returncode]
        exits.append(chaos.post(platform, channel, db))  # the restart
        if not killed.is_set():
            exits.append(-999)  # the kill point was never reached: reported, not hidden
        return exits

    return scenario


def concurrent(chaos: Chaos, platform: str, latency: float) -> Callable[..., Any]:
    def scenario(channel: str, db: Path) -> list[int]:
        # Every call takes `latency` seconds, so the two posts overlap rather than run one after the other.
        chaos.slack.latency = chaos.discord.latency = latency
        procs = [chaos._spawn(chaos._post_args(platform, channel, db)) for _ in range(2)]
        exits = []
        for proc in procs:
            _, err = proc.communicate(timeout=RUN_TIMEOUT)
            if proc.returncode:
                print(f"    exit {proc.returncode}: {err.strip()[-300:]}")
            exits.append(proc.returncode)
        chaos.slack.latency = chaos.discord.latency = 0.0
        return exits

    return scenario


def faulty(chaos: Chaos, platform: str, arm: Callable[[], None]) -> Callable[..., Any]:
    def scenario(channel: str, db: Path) -> list[int]:
        arm()
        first = chaos.post(platform, channel, db)
        chaos.clear()
        return [first, chaos.post(platform, channel, db)]  # and a restart: nothing more to post

    return scenario


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--git-dir", type=Path, default=Path("/tmp/vllm.git"))
    parser.add_argument("--date", default="2025-12-16", help="a day in the clone (Asia/Shanghai)")
    parser.add_argument("--kill-at", type=int, nargs="+", default=[1, 2, 3, 6])
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per call while two posts race")
    parser.add_argument("--part", choices=["post", "service", "all"], default="all")
    parser.add_argument("--only", nargs="*", help="service scenarios whose names start with these words")
    parser.add_argument("--connections", type=int, default=1100, help="slow connections of the flood")
    parser.add_argument("--nofile", type=int, default=1024, help="descriptor limit of the flooded service")
    parser.add_argument("--code", type=Path, default=ROOT, help="the digestbot checkout the subprocesses run")
    args = parser.parse_args()
    if args.part in ("post", "all"):
        post_part(args)
    if args.part in ("service", "all"):
        from bench.chaos_service import run

        work = Path(tempfile.mkdtemp(prefix="digestbot-chaos-service-"))
        try:
            run(work, args.code.resolve(), args.connections, args.nofile, set(args.only or ()))
        finally:
            shutil.rmtree(work, ignore_errors=True)


def post_part(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="digestbot-chaos-"))
    git_dir, day = args.git_dir, args.date
    if not (git_dir / "HEAD").exists():
        print(f"{git_dir} not found: using a synthetic repository")
        git_dir, day = synthetic_repo(work)
    chaos = Chaos(work, git_dir, day, args.code.resolve())
    outcomes: list[Outcome] = []
    try:
        print(f"day {day} from {git_dir}; analysed once in {chaos.prepare_seconds:.1f} s")
        for platform in ("slack", "discord"):
            channel, db = chaos.fresh(platform)
            assert chaos.post(platform, channel, db) == 0, "the clean reference post failed"
            reference = chaos.signatures(platform, channel)
            writes = sum(reference.values()) - reference.get("thread", 0)
            print(
                f"\n{platform}: reference post = {writes} messages"
                + (" + 1 thread" if "thread" in reference else "")
            )
            scenarios: list[tuple[str, Callable[..., Any]]] = []
            for n in [*args.kill_at, writes]:
                if n <= writes:
                    scenarios.append((f"kill -9 after accepted message {n}", kill_after(chaos, platform, n)))
            if platform == "discord":
                for n in (1, 3):
                    scenarios.append(
                        (
                            f"kill -9 after message {n}, restart after nonces expired",
                            kill_after(chaos, platform, n, forget_nonces=True),
                        )
                    )
            scenarios.append(
                (
                    f"two posts at once, one database ({args.latency:g} s a call)",
                    concurrent(chaos, platform, args.latency),
                )
            )
            if platform == "slack":
                scenarios += [
                    (
                        "500 after accepting the parent",
                        faulty(chaos, platform, lambda: chaos.slack.fail_after_accept("chat.postMessage")),
                    ),
                    (
                        "500 after accepting the report",
                        faulty(
                            chaos,
                            platform,
                            lambda: chaos.slack.fail_after_accept("files.completeUploadExternal"),
                        ),
                    ),
                    (
                        "connection dropped after accepting the parent",
                        faulty(chaos, platform, lambda: chaos.slack.drop_after_accept("chat.postMessage")),
                    ),
                    (
                        "connection dropped after accepting the report",
                        faulty(
                            chaos,
                            platform,
                            lambda: chaos.slack.drop_after_accept("files.completeUploadExternal"),
                        ),
                    ),
                ]
            else:
                scenarios += [
                    (
                        "500 (x5) after accepting a card",
                        faulty(
                            chaos, platform, lambda: chaos.discord.fail_after_accept(500, after=1, count=5)
                        ),
                    ),
                    (
                        "connection dropped after accepting a card",
                        faulty(chaos, platform, lambda: chaos.discord.drop_after_accept(after=2)),
                    ),
                    (
                        "connection dropped after creating the thread",
                        faulty(chaos, platform, lambda: chaos.discord.drop_after_accept(route="/threads")),
                    ),
                ]
            for name, scenario in scenarios:
                channel, db = chaos.fresh(platform)
                started = time.monotonic()
                exits = scenario(channel, db)
                chaos.clear()
                duplicates, missing = compare(chaos.signatures(platform, channel), reference)
                outcome = Outcome(platform, name, exits, duplicates, missing, time.monotonic() - started)
                outcomes.append(outcome)
                print(
                    f"  {name:<52} exits {','.join(map(str, exits)):<10} duplicates {duplicates}  missing {missing}"
                    f"  ({outcome.seconds:.1f} s)"
                )
            chaos.slack.check()
            chaos.discord.check()
    finally:
        chaos.close()
        shutil.rmtree(work, ignore_errors=True)

    dup = sum(o.duplicates for o in outcomes)
    miss = sum(o.missing for o in outcomes)
    bad_exits = [o for o in outcomes if any(e not in (0, -signal.SIGKILL) for e in o.exits)]
    print(
        f"\n{len(outcomes)} scenarios: duplicates {dup}, missing {miss} (target 0 and 0: {'met' if dup == miss == 0 else 'MISSED'})"
    )
    print(f"runs that did not end 0 (or by the kill): {len(bad_exits)}")
    for o in bad_exits:
        print(f"  {o.platform}: {o.scenario}: exits {o.exits}")


if __name__ == "__main__":
    main()
