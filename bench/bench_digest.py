"""Benchmark: one real vllm day through a fake GitHub on 127.0.0.1, the whole digest pipeline.

    python bench/bench_digest.py [--data ../shared/data/vllm/2026-01-29.json] [--day 2026-01-29]

Prints GitHub requests and wall time for a first run and a re-run (same database), peak memory of
the process, and checks the day's commit list against the reference report's table when it is there.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import sys
import tempfile
import time
import tracemalloc
from datetime import date
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from adapters.github import GitHubSource  # noqa: E402
from analysis.render.json_report import dumps, render_json  # noqa: E402
from analysis.render.markdown import render_report  # noqa: E402
from bot.digest.analyzers import HeuristicAnalyzer  # noqa: E402
from bot.digest.pipeline import RunStats, build_digest  # noqa: E402
from bot.store.db import Store  # noqa: E402
from tests.fakes.github import FakeGitHub  # noqa: E402

SHARED = ROOT.parent / "shared"


async def one_run(fake: FakeGitHub, store: Store, day: date, tz: ZoneInfo) -> tuple[dict, object]:
    fake.reset_counters()
    source = GitHubSource("vllm-project/vllm", store=store, base_url=fake.base_url)
    began = time.perf_counter()
    stats = RunStats()
    digest = await build_digest(
        source, store, HeuristicAnalyzer(), branch="main", day=day, tz=tz, lang="zh", stats=stats
    )
    markdown = render_report([digest], "zh")
    dumps(render_json(digest))
    wall = time.perf_counter() - began
    await source.aclose()
    return {
        "commits": len(digest.commits),
        "requests": fake.requests,
        "not_modified": fake.not_modified,
        "wall_s": wall,
        "cached_analyses": stats.cached_analyses,
        "report_bytes": len(markdown.encode()),
    }, digest


def reference_titles(day: date) -> list[str] | None:
    path = SHARED / "reference" / f"report-{day.isoformat()}.zh.md"
    if not path.exists():
        return None
    rows = re.findall(
        r"^\| \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \| .*? \| (.*) \|$", path.read_text(encoding="utf-8"), re.M
    )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHARED / "data" / "vllm" / "2026-01-29.json")
    parser.add_argument("--day", default=None, help="default: from the data file's name")
    parser.add_argument("--tz", default="Asia/Shanghai")
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found (the benchmark needs ../shared beside the project)")
        return 0
    day = date.fromisoformat(args.day or args.data.stem)
    commits = json.loads(args.data.read_text(encoding="utf-8"))
    tz = ZoneInfo(args.tz)
    tracemalloc.start()
    with tempfile.TemporaryDirectory() as tmp, FakeGitHub("vllm-project/vllm", commits) as fake:
        store = Store(Path(tmp) / "bench.db")
        first, digest = asyncio.run(one_run(fake, store, day, tz))
        again, _ = asyncio.run(one_run(fake, store, day, tz))
    _, peak_traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(
        f"digest benchmark: {args.data.name}, {day} in {args.tz}, fake GitHub on 127.0.0.1, heuristic analyser"
    )
    print(f"{'run':<8}{'commits':>8}{'requests':>10}{'304s':>6}{'wall s':>9}{'cached analyses':>17}")
    for name, r in (("first", first), ("re-run", again)):
        print(
            f"{name:<8}{r['commits']:>8}{r['requests']:>10}{r['not_modified']:>6}{r['wall_s']:>9.3f}"
            f"{r['cached_analyses']:>17}"
        )
    print(
        f"peak memory: {peak_traced / 2**20:.1f} MiB traced by Python, {peak_rss_mb:.0f} MiB max RSS (process)"
    )
    print(f"report: {first['report_bytes'] / 1024:.0f} KiB of Markdown; tiers {digest.stats}")
    expected = reference_titles(day)
    if expected is not None:
        got = [c.title for c in digest.commits]
        verdict = "identical to" if got == expected else "DIFFERENT from"
        print(
            f"commit list: {len(got)} commits, {verdict} the reference report's table ({len(expected)} rows)"
        )
        return 0 if got == expected else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
