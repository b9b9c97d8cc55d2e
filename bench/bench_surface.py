"""Benchmark: the surface step (what each change does to its users) on real history.

    python bench/bench_surface.py [--vllm /tmp/vllm.git] [--day 2025-12-02] [--day-tz UTC]
                                  [--pydantic /tmp/pydantic.git] [--month 2025-10] [--sample 20] [--griffe]

For a 45-commit day of one bundle and a month of the other, through the shipped step (bot/digest/surface.py,
shipped defaults, a local clone):
- the cost per commit cold (fresh store: every file read and parsed) and warm (a second run: the store
  answers, nothing is read), and the share of the cold time spent reading;
- how many commits got facts, breaking / feature / behaviour facts, and facts by kind;
- how many commits' shipped paths the packaging decided;
- a fixed random sample of facts (seeded) printed with the code around them, to check by hand;
- with --griffe (pip install griffe): griffe's breaking changes on the same Python files beside ours.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from adapters.local_git import LocalGitSource  # noqa: E402
from analysis.models import (  # noqa: E402
    Commit,
    SurfaceChange,
    describe,
)
from analysis.window import day_window  # noqa: E402
from bot.digest.surface import MAX_FILE_BYTES, fill_surface  # noqa: E402
from bot.store.db import Store  # noqa: E402

SAMPLE_SEED = 16


class TimedSource:
    """The local source with its reads timed and counted."""

    def __init__(self, inner: LocalGitSource) -> None:
        self.inner = inner
        self.repo = inner.repo
        self.read_seconds = 0.0
        self.reads = 0
        self.files = 0

    async def read_files(self, wanted, *, max_bytes):
        began = time.perf_counter()
        try:
            return await self.inner.read_files(wanted, max_bytes=max_bytes)
        finally:
            self.read_seconds += time.perf_counter() - began
            self.reads += 1
            self.files += len(wanted)

    async def list_paths(self, sha):
        began = time.perf_counter()
        try:
            return await self.inner.list_paths(sha)
        finally:
            self.read_seconds += time.perf_counter() - began


async def window_commits(source: LocalGitSource, start: datetime, end: datetime) -> list[Commit]:
    return await source.commits_in_window(await source.default_branch(), start, end)


async def measure(name: str, git_dir: Path, start: datetime, end: datetime) -> tuple[list[Commit], dict]:
    source = LocalGitSource(git_dir)
    commits = await window_commits(source, start, end)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        timed = TimedSource(source)
        began = time.perf_counter()
        filled = await fill_surface(timed, store, commits)
        cold = time.perf_counter() - began
        warm_source = TimedSource(source)
        began = time.perf_counter()
        again = await fill_surface(warm_source, store, commits)
        warm = time.perf_counter() - began
        store.close()
    assert [c.surface for c in again] == [c.surface for c in filled], "the warm run must give the same facts"
    read = [c for c in filled if c.surface is not None]
    kinds = Counter(f.kind.value for c in read for f in c.surface)
    stats = {
        "name": name,
        "commits": len(commits),
        "files": sum(len(c.files) for c in commits),
        "cold_ms": cold * 1000 / max(1, len(commits)),
        "warm_ms": warm * 1000 / max(1, len(commits)),
        "read_share": timed.read_seconds / cold if cold else 0.0,
        "reads": timed.reads,
        "file_versions": timed.files,
        "warm_reads": warm_source.reads,
        "with_facts": sum(1 for c in read if c.surface),
        "read": len(read),
        "breaking": sum(1 for c in read if any(f.breaking for f in c.surface)),
        "feature": sum(1 for c in read if any(f.feature for f in c.surface)),
        "behaviour": sum(1 for c in read if any(f.behaviour for f in c.surface)),
        "shipped_known": sum(1 for c in filled if c.shipped is not None),
        "touch_shipped": sum(1 for c in filled if c.shipped),
        "kinds": kinds,
        "facts": sum(kinds.values()),
    }
    return filled, stats


def report(stats: dict) -> None:
    print(f"\n== {stats['name']}: {stats['commits']} commits, {stats['files']} changed files")
    print(
        f"cost per commit: cold {stats['cold_ms']:.1f} ms ({stats['read_share']:.0%} reading: "
        f"{stats['reads']} cat-file batches, {stats['file_versions']} file versions asked), "
        f"warm {stats['warm_ms']:.2f} ms ({stats['warm_reads']} reads)"
    )
    print(
        f"commits read: {stats['read']}/{stats['commits']}; with facts {stats['with_facts']}; "
        f"breaking {stats['breaking']}, feature {stats['feature']}, behaviour {stats['behaviour']}"
    )
    print(f"shipped decided by the packaging: {stats['shipped_known']}/{stats['commits']} commits; "
          f"{stats['touch_shipped']} touch shipped paths")  # fmt: skip
    print(
        f"facts: {stats['facts']}; by kind: " + ", ".join(f"{k} {n}" for k, n in stats["kinds"].most_common())
    )


def sample(commits: list[Commit], n: int) -> list[tuple[Commit, SurfaceChange]]:
    facts = [(c, f) for c in commits if c.surface for f in c.surface]
    rng = random.Random(SAMPLE_SEED)
    return rng.sample(facts, min(n, len(facts)))


async def griffe_compare(commits: list[Commit], git_dir: Path) -> None:
    """griffe's breaking changes on the same public Python files, beside ours."""
    try:
        import griffe
    except ImportError:
        print("\n(griffe not installed: pip install griffe)")
        return
    import logging

    logging.getLogger("griffe").setLevel(logging.ERROR)
    from analysis.surface.commit import _public_module, file_specs, wanted
    from analysis.surface.packaging import module_from_path

    source = LocalGitSource(git_dir)
    ours_total = griffe_total = both = only_ours = only_griffe = retyped = 0
    griffe_kinds: Counter[str] = Counter()
    seconds = 0.0
    for commit in commits:
        if commit.surface is None or commit.shipped is None:
            continue
        texts = await source.read_files(file_specs(commit), max_bytes=MAX_FILE_BYTES)
        parent = commit.parents[0] if commit.parents else None
        for f in wanted(commit):
            if not f.path.endswith(".py") or f.path not in commit.shipped or f.status in ("added", "removed"):
                continue
            module = module_from_path(f.path)
            if not _public_module(module):
                continue
            before = texts.texts.get((parent, f.previous_path or f.path)) if parent else None
            after = texts.texts.get((commit.sha, f.path))
            if not before or not after:
                continue
            began = time.perf_counter()
            try:
                old = griffe.visit(module.rsplit(".", 1)[-1], Path(f.path), before)
                new = griffe.visit(module.rsplit(".", 1)[-1], Path(f.path), after)
                breakages = list(griffe.find_breaking_changes(old, new))
            except Exception:  # griffe raises many kinds on unusual code; a comparison, not the product
                continue
            seconds += time.perf_counter() - began
            names = [type(b).__name__ for b in breakages]
            griffe_kinds.update(names)
            retyped += sum(
                1
                for b in breakages
                if type(b).__name__ == "ParameterChangedDefaultBreakage" and _same_retyped(b)
            )
            ours = [s for s in commit.surface if s.path == f.path and s.breaking]
            ours_total += len(ours)
            griffe_total += len(breakages)
            if ours and breakages:
                both += 1
            elif ours:
                only_ours += 1
            elif breakages:
                only_griffe += 1
    print("\n== griffe on the same modified public Python files")
    print(f"breaking facts: ours {ours_total}, griffe {griffe_total} ({seconds:.1f} s of griffe)")
    print(f"files with breaking findings: both {both}, only ours {only_ours}, only griffe {only_griffe}")
    print("griffe by kind: " + ", ".join(f"{k} {n}" for k, n in griffe_kinds.most_common()))
    print(f"griffe default changes that are the same value retyped (we report none): {retyped}")


def _same_retyped(breakage) -> bool:
    import ast

    from analysis.surface.python_nodes import same_value

    try:
        old = ast.parse(str(breakage.old_value), mode="eval").body
        new = ast.parse(str(breakage.new_value), mode="eval").body
    except SyntaxError:
        return False
    return same_value(old, new)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vllm", type=Path, default=Path("/tmp/vllm.git"))
    parser.add_argument("--day", type=date.fromisoformat, default=date(2025, 12, 2))
    parser.add_argument("--day-tz", default="UTC")
    parser.add_argument("--pydantic", type=Path, default=Path("/tmp/pydantic.git"))
    parser.add_argument("--month", default="2025-10")
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--griffe", action="store_true")
    args = parser.parse_args()

    runs: list[tuple[list[Commit], dict, Path]] = []
    if args.vllm.exists():
        start, end = day_window(args.day, ZoneInfo(args.day_tz))
        commits, stats = await measure(
            f"day {args.day} ({args.day_tz}) of {args.vllm}", args.vllm, start, end
        )
        report(stats)
        runs.append((commits, stats, args.vllm))
    if args.pydantic.exists():
        first = date.fromisoformat(args.month + "-01")
        following = (first.replace(day=28) + timedelta(days=4)).replace(day=1)
        start, end = day_window(first, ZoneInfo("UTC"))[0], day_window(following, ZoneInfo("UTC"))[0]
        commits, stats = await measure(f"month {args.month} of {args.pydantic}", args.pydantic, start, end)
        report(stats)
        runs.append((commits, stats, args.pydantic))
    if not runs:
        sys.exit("no bundle found: give --vllm and/or --pydantic")
    everything = [c for commits, _, _ in runs for c in commits]
    total = sum(s["commits"] for _, s, _ in runs)
    cold = statistics.fmean([s["cold_ms"] for _, s, _ in runs])
    print(f"\nall: {total} commits, mean cold {cold:.1f} ms per commit")
    print(f"\n== {args.sample} facts sampled (seed {SAMPLE_SEED}) to check by hand")
    for i, (commit, fact) in enumerate(sample(everything, args.sample), 1):
        print(f"{i:2}. {commit.short_sha} {commit.title[:70]}\n    {describe(fact)}")
    if args.griffe:
        for commits, _, git_dir in runs:
            await griffe_compare(commits, git_dir)


if __name__ == "__main__":
    asyncio.run(main())
