"""Benchmark: one real vllm day analysed by the LLM analyser through a fake LLM with a fixed latency.

    python bench/bench_llm.py [--data ../shared/data/vllm/2026-01-29.json]
    python bench/bench_llm.py --real 3      # a few commits against OPENAI_BASE_URL / DIGEST_MODEL

Prints, side by side from one run (issue 12): the day with SHIPPED DEFAULTS first (L = 2 s and 10 s),
then the replaced tool's design simulated (sequential, one call with the whole patch, a 5 s sleep), a
provider limiting requests per window (adaptive concurrency converging, no failed commit), a one-slot
local server (queueing, no errors), `analyze <sha>` card latency, input tokens at full price and served
from the prefix cache against every full patch, Batch API mode, the event loop's worst stall while a
day runs, and the store cache on a re-run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from adapters.github import commit_from_detail  # noqa: E402
from adapters.llm import LLMClient  # noqa: E402
from analysis.llm.budget import DiffSelection, file_list, select_diff  # noqa: E402
from analysis.llm.prompts import commit_messages  # noqa: E402
from analysis.llm.tokens import estimate_messages, estimate_tokens  # noqa: E402
from analysis.models import Commit, Importance  # noqa: E402
from analysis.render.markdown import render_commit  # noqa: E402
from bot.app import llm_analyzer  # noqa: E402
from bot.digest.llm_analyzer import LLMAnalyzer  # noqa: E402
from bot.digest.pipeline import RunStats, analyse_commits, build_digest  # noqa: E402
from bot.store.db import Store  # noqa: E402
from tests.fakes.openai_server import FakeLLM  # noqa: E402
from tests.fakes.sources import MemorySource  # noqa: E402

REPO = "vllm-project/vllm"
TZ = ZoneInfo("Asia/Shanghai")
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "vllm" / "2026-01-29.json"


def load_commits(path: Path) -> list[Commit]:
    """The day's GitHub commit details as domain Commits (newest first, as the file lists them)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [commit_from_detail(REPO, item) for item in data]


def analyzer_on(fake: FakeLLM, on_call: Any = None, **client: Any) -> LLMAnalyzer:
    """An analyser with shipped defaults (nothing set but the server and the model)."""
    return LLMAnalyzer(LLMClient(model=fake.model, base_url=fake.base_url, on_call=on_call, **client))


async def loop_lag(stop: asyncio.Event) -> float:
    """The event loop's worst stall while it runs: how late a 10 ms ticker wakes (chat shares this loop)."""
    worst = 0.0
    while not stop.is_set():
        before = time.perf_counter()
        await asyncio.sleep(0.01)
        worst = max(worst, time.perf_counter() - before - 0.01)
    return worst


async def timed_day(fake: FakeLLM, commits: list[Commit], latency: float, **client: Any) -> dict[str, Any]:
    fake.latency = latency
    fake.reset_counters()
    analyzer = analyzer_on(fake, **client)
    stop = asyncio.Event()
    lag = asyncio.create_task(loop_lag(stop))
    began = time.perf_counter()
    results = await analyzer.analyze(commits, "zh")
    wall = time.perf_counter() - began
    stop.set()
    limit = analyzer.client.limit
    await analyzer.aclose()
    return {
        "latency": latency,
        "wall": wall,
        "ratio": wall / latency if latency else float("nan"),
        "calls": fake.calls,
        "max_in_flight": fake.max_in_flight,
        "prompt_tokens": fake.prompt_tokens,
        "cached_tokens": fake.cached_tokens,
        "by_purpose": dict(fake.by_purpose),
        "fallbacks": sum(a.analyzer != "llm" for a in results.values()),
        "tiers": {t.value: sum(a.importance == t for a in results.values()) for t in Importance},
        "by_sha": {sha: a.importance.value for sha, a in results.items()},
        "rejected": fake.rejected,
        "cuts": limit.cuts,
        "final_limit": limit.slots,
        "lag": await lag,
    }


async def warm_up(fake: FakeLLM, commits: list[Commit]) -> None:
    """One small run first: the SDK's lazy imports and first connection are not part of a day's cost."""
    await timed_day(fake, commits[:2], 0.0)


def full_patch_tokens(commits: list[Commit]) -> tuple[int, int]:
    """Input tokens of the naive approach, one call per commit with every patch unclipped (our prompt
    around it), and how many of those calls would not fit an 8k context."""
    total = too_big = 0
    for c in commits:
        empty = DiffSelection(text="", files_total=c.file_count)
        prompt = commit_messages(c, (Importance.MEDIUM, "-"), file_list(c, 10**9), empty, "zh")
        tokens = estimate_messages(prompt) + estimate_tokens("\n".join(f.patch or "" for f in c.files))
        total += tokens
        too_big += tokens > 8192
    return total, too_big


async def argus_day(fake: FakeLLM, commits: list[Commit], latency: float, pause: float) -> dict[str, Any]:
    """The replaced tool's design: one call per commit in sequence with the whole patch, a pause after
    each. Run time-scaled (latency and pause shrunk by the same factor); reported as wall / latency."""
    fake.latency = latency
    fake.reset_counters()
    client = LLMClient(model=fake.model, base_url=fake.base_url)
    began = time.perf_counter()
    for c in commits:
        prompt = commit_messages(
            c, (Importance.MEDIUM, "-"), file_list(c, 10**9), select_diff(c, 10**9), "zh"
        )
        await client.complete(prompt, max_tokens=1536, purpose="analysis")
        await asyncio.sleep(pause)
    wall = time.perf_counter() - began
    await client.aclose()
    return {"wall": wall, "ratio": wall / latency, "calls": fake.calls, "prompt_tokens": fake.prompt_tokens}


async def card_latency(fake: FakeLLM, commit: Commit, latency: float) -> dict[str, Any]:
    """`digestbot analyze <sha>` / `/digest <sha>`: one commit through the pipeline, cache empty."""
    fake.latency = latency
    fake.reset_counters()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "card.db")
        analyzer = analyzer_on(fake)
        began = time.perf_counter()
        await analyse_commits(store, analyzer, REPO, [commit], "zh")
        wall = time.perf_counter() - began
        await analyzer.aclose()
        store.close()
    return {"wall": wall, "ratio": wall / latency, "calls": fake.calls}


async def batch_day(fake: FakeLLM, commits: list[Commit]) -> dict[str, Any]:
    fake.reset_counters()
    fake.latency, fake.batch_delay = 0.0, 1.0
    client = LLMClient(model=fake.model, base_url=fake.base_url)
    analyzer = LLMAnalyzer(client, batch_wait=60, batch_poll=0.2)
    began = time.perf_counter()
    results = await analyzer.analyze(commits, "zh")
    wall = time.perf_counter() - began
    await analyzer.aclose()
    fake.batch_delay = 0.0
    return {"wall": wall, "calls": fake.calls, "batched": fake.batched, "polls": fake.batch_polls,
            "fallbacks": sum(a.analyzer != "llm" for a in results.values())}  # fmt: skip


async def cached_rerun(fake: FakeLLM, commits: list[Commit], day: date) -> dict[str, int]:
    """build_digest twice on one store: LLM calls and tokens of the first run and of the re-run."""
    out: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        analyzer = analyzer_on(fake, on_call=lambda f: store.log_llm_call(**f))
        source = MemorySource(REPO, commits)
        fake.latency = 0.0  # this part counts calls and tokens, not time
        for run in ("first", "rerun"):
            fake.reset_counters()
            stats = RunStats()
            await build_digest(source, store, analyzer, branch="main", day=day, tz=TZ, lang="zh", stats=stats)
            out[f"{run}_calls"] = fake.calls
            out[f"{run}_tokens"] = fake.prompt_tokens
            out[f"{run}_cached"] = stats.cached_analyses
        out["logged_calls"] = store.query("SELECT count(*) AS n FROM llm_calls")[0]["n"]
        await analyzer.aclose()
        store.close()
    return out


def table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def verdict(value: float, target: float) -> str:
    return "met" if value <= target else "MISSED"


async def fake_bench(commits: list[Commit], day: date) -> None:
    n = len(commits)
    with FakeLLM() as fake:
        await warm_up(fake, commits)
        default2 = await timed_day(fake, commits, 2.0)
        default10 = await timed_day(fake, commits, 10.0)
        floor = await timed_day(fake, commits, 0.0)
        argus = await argus_day(fake, commits, 0.1, 0.25)  # 5 s pause at L = 2 s, scaled by 1/20
        # A provider allowing 15 requests per 2 s window (a "minute" scaled down), 0.5 s calls.
        fake.rate_limit_per_window, fake.rate_window = 15, 2.0
        limited = await timed_day(fake, commits, 0.5)
        fake.ratelimit_headers = True
        limited_h = await timed_day(fake, commits, 0.5)
        fake.rate_limit_per_window, fake.ratelimit_headers = None, False
        fake.slots = 1  # llama.cpp with one slot: every call waits its turn on the server
        one_slot = await timed_day(fake, commits, 0.1)
        fake.slots = None
        # A server that accepts and never answers, with LLM_TIMEOUT scaled from 120 s down to 2 s.
        fake.rules.clear()
        fake.delay(3600, times=None)
        hanging = await timed_day(fake, commits, 0.0, timeout=2.0)
        fake.rules.clear()
        median = sorted(commits, key=lambda c: c.changed_lines)[n // 2]
        card2 = await card_latency(fake, median, 2.0)
        card10 = await card_latency(fake, median, 10.0)
        batch = await batch_day(fake, commits)
        cache = await cached_rerun(fake, commits, day)

    print(
        f"{n} commits (a real day) through the fake LLM; wall / L = the day's wall time ÷ one call's latency\n"
    )
    rows = [["run", "L s", "wall s", "wall / L", "LLM calls", "max in flight", "fallbacks", "target"]]
    rows.append(
        [
            "DEFAULT settings",
            "2.0",
            f"{default2['wall']:.2f}",
            f"{default2['ratio']:.2f}",
            str(default2["calls"]),
            str(default2["max_in_flight"]),
            str(default2["fallbacks"]),
            f"≤ 1.5 L: {verdict(default2['ratio'], 1.5)}",
        ]
    )
    rows.append(
        [
            "DEFAULT settings",
            "10.0",
            f"{default10['wall']:.2f}",
            f"{default10['ratio']:.2f}",
            str(default10["calls"]),
            str(default10["max_in_flight"]),
            str(default10["fallbacks"]),
            f"≤ 1.5 L: {verdict(default10['ratio'], 1.5)}",
        ]
    )
    rows.append(
        [
            "argus design (sequential, whole patch, 5 s pause), time-scaled",
            "2.0 (as 0.1)",
            f"{argus['ratio'] * 2:.0f} (as {argus['wall']:.1f})",
            f"{argus['ratio']:.1f}",
            str(argus["calls"]),
            "1",
            "-",
            "-",
        ]
    )
    rows.append(
        [
            "CPU floor (L = 0)",
            "0",
            f"{floor['wall']:.2f}",
            "-",
            str(floor["calls"]),
            str(floor["max_in_flight"]),
            str(floor["fallbacks"]),
            "-",
        ]
    )
    print(table(rows))  # fmt: skip
    print(f"(calls: {default2['calls']} for {n} commits = {default2['calls'] / n:.2f} per commit; target ≤ {n * 1.1:.1f}:"
          f" {verdict(default2['calls'], n * 1.1)})")  # fmt: skip
    print(f"(tiers on the fake: {default2['tiers']}; the fake ranks by sha, so a design change keeps every tier:"
          f" same tiers at L = 2 and 10: {default2['by_sha'] == default10['by_sha']})")  # fmt: skip

    print("\nAdaptive concurrency (shipped defaults; no setting)\n")
    rows = [
        ["server", "L s", "wall s", "wall / L", "429s", "cuts", "final limit", "max in flight", "fallbacks"]
    ]
    for name, r in (
        ("15 requests / 2 s window", limited),
        ("same, with x-ratelimit-remaining headers", limited_h),
        ("one slot, queueing (llama.cpp --parallel 1)", one_slot),
    ):
        rows.append([name, f"{r['latency']:.1f}", f"{r['wall']:.2f}", f"{r['ratio']:.1f}", str(r["rejected"]), str(r["cuts"]),
                     str(r["final_limit"]), str(r["max_in_flight"]), str(r["fallbacks"])])  # fmt: skip
    print(table(rows))
    print(
        f"(floors: {n} requests at 15 per 2 s window end ≥ {2 * ((n - 1) // 15) + 0.5:.1f} s; one slot: {n} × 0.1 s ="
        f" {n * 0.1:.1f} s)"
    )

    print(
        f"\nA hanging server (accepts, never answers), LLM_TIMEOUT 2 s, all else default: the day ended after"
        f" {hanging['wall']:.1f} s = {hanging['wall'] / 2.0:.1f} timeouts; {hanging['calls']} calls reached it,"
        f" {hanging['fallbacks']} of {n} commits fell back saying why (circuit breaker after 4 consecutive timeouts)"
    )

    print("\n`digestbot analyze <sha>` card (the day's median commit, pipeline, empty cache)\n")
    rows = [["L s", "wall s", "wall / L", "LLM calls", "target"]]
    for r, lat in ((card2, 2.0), (card10, 10.0)):
        rows.append(
            [
                f"{lat:.1f}",
                f"{r['wall']:.2f}",
                f"{r['ratio']:.2f}",
                str(r["calls"]),
                f"≤ 1.2 L: {verdict(r['ratio'], 1.2)}",
            ]
        )
    print(table(rows))

    naive, too_big = full_patch_tokens(commits)
    total, cached = default2["prompt_tokens"], default2["cached_tokens"]
    full = total - cached
    print("\nInput tokens for the day\n")
    print(table([
        ["", "tokens", "vs every full patch"],
        ["ours, full price (not served from a prefix cache)", f"{full:,}", f"{full / naive:.0%}  (target ≤ 40 %: {verdict(full / naive, 0.40)})"],
        ["ours, cached prefix (usage.prompt_tokens_details.cached_tokens)", f"{cached:,}", f"{cached / naive:.0%}"],
        ["ours, total sent", f"{total:,}", f"{total / naive:.0%}"],
        ["argus design (every whole patch, our prompt around it)", f"{argus['prompt_tokens']:,}", f"{argus['prompt_tokens'] / naive:.0%}"],
        ["every full patch once, unclipped (the reference)", f"{naive:,}", "100%"],
    ]))  # fmt: skip
    print(f"(unclipped, {too_big} of {n} commits would not fit an 8k context; a provider billing cached input at"
          f" half price would bill {(full + cached / 2) / naive:.0%}, at a tenth {(full + cached / 10) / naive:.0%})")  # fmt: skip

    print(
        "\nLLM_BATCH=1 (Batch API: upload, create, poll every 0.2 s, output; the fake completes after 1 s)\n"
    )
    print(table([["commits", "wall s", "calls in the batch", "live calls", "polls", "fallbacks"],
                 [str(n), f"{batch['wall']:.2f}", str(batch["batched"]), str(batch["calls"] - batch["batched"]),
                  str(batch["polls"]), str(batch["fallbacks"])]]))  # fmt: skip

    print(f"\nEvent loop: worst stall of a 10 ms ticker while the day runs: {default2['lag'] * 1000:.0f} ms at L = 2 s,"
          f" {floor['lag'] * 1000:.0f} ms at L = 0 (CPU-bound)")  # fmt: skip
    print()
    print(table([
        ["pipeline run (store cache)", "LLM calls", "input tokens", "cached analyses"],
        ["first", str(cache["first_calls"]), f"{cache['first_tokens']:,}", str(cache["first_cached"])],
        ["re-run", str(cache["rerun_calls"]), f"{cache['rerun_tokens']:,}", str(cache["rerun_cached"])],
    ]))  # fmt: skip
    print(f"(llm_calls rows logged in the store: {cache['logged_calls']})")


def spread(commits: list[Commit], n: int) -> list[Commit]:
    """n commits spread over the day's sizes (smallest to largest), deterministically."""
    by_size = sorted(commits, key=lambda c: c.changed_lines)
    if n >= len(by_size):
        return by_size
    step = (len(by_size) - 1) / max(1, n - 1)
    return [by_size[round(i * step)] for i in range(n)]


async def real_bench(commits: list[Commit], n: int, lang: str) -> int:
    from bot.config.settings import load_settings

    settings = load_settings()
    if not settings.llm_configured:
        print("skipped --real: set DIGEST_MODEL and OPENAI_BASE_URL (or OPENAI_API_KEY)")
        return 0
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "real.db")
        analyzer = llm_analyzer(settings, store)
        analyzer.client.on_call = records.append  # print the calls instead of storing them
        chosen = spread(commits, n)
        print(
            f"real model {settings.digest_model} at {analyzer.client.where}, {len(chosen)} commits, lang {lang}"
        )
        began = time.perf_counter()
        results = await analyzer.analyze(chosen, lang)
        wall = time.perf_counter() - began
        await analyzer.aclose()
        store.close()
    by_sha = {c.sha: c for c in chosen}
    rows = [["sha", "purpose", "latency s", "tokens in", "tokens out", "finish", "outcome"]]
    for r in records:
        rows.append(
            [r["sha"][:7], r["purpose"], f"{r['latency_ms'] / 1000:.1f}", str(r["tokens_in"]),
             str(r["tokens_out"]), str(r["finish_reason"]), r["outcome"]]
        )  # fmt: skip
    print(table(rows))
    ok = [r["latency_ms"] / 1000 for r in records if r["outcome"] == "ok"]
    if ok:
        print(f"\n{len(records)} calls, median latency {statistics.median(ok):.1f} s, wall {wall:.1f} s")
    rows = [["sha", "lines", "importance", "type", "analyzer", "notes"]]
    for sha, a in results.items():
        rows.append(
            [sha[:7], str(by_sha[sha].changed_lines), a.importance.value, a.change_type.value, a.analyzer,
             str(len(a.notes))]
        )  # fmt: skip
    print(table(rows))
    best = sorted(results.values(), key=lambda a: (a.analyzer != "llm", a.importance.rank))[0]
    print("\none card:\n")
    print(render_commit(by_sha[best.sha], best, lang, heading_level=3))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--real", type=int, default=0, metavar="N", help="analyse N commits with a real model"
    )
    parser.add_argument("--lang", default="zh", choices=("zh", "en"))
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} not found (the benchmark needs ../shared beside the project)")
        return 0
    commits = load_commits(args.data)
    if args.real:
        return asyncio.run(real_bench(commits, args.real, args.lang))
    day = date.fromisoformat(args.data.stem)
    os.environ.setdefault("NO_PROXY", "127.0.0.1")  # the fake is local, whatever the shell's proxy says
    asyncio.run(fake_bench(commits, day))
    return 0


if __name__ == "__main__":
    sys.exit(main())
