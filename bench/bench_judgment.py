"""Benchmark: how well the ranking flags the commits a later commit had to revert or fix, on real history.

    python bench/bench_judgment.py [--bundle ../shared/data/vllm-history/vllm-2025H2.bundle]
                                   [--since 2025-09-01] [--until 2025-12-31] [--baseline bbbf3d4]
                                   [--llm-json FILE ...]

Side by side, on the same days and the same answer key (follow-ups mined from the whole history,
30-day horizon, calendar days in Asia/Shanghai):
- before: the heuristic rubric of commit --baseline (the code before the history work), run from a
  throw-away git worktree of this repository in a subprocess;
- without history: today's rubric with HISTORY_DAYS=0 (its size prior and signals alone);
- with history: today's rubric with the shipped default (180 days of history);
- every --llm-json: the JSON of a `digestbot eval --analyzer llm --format json` run, for the real model;
- --llm-partial DB SINCE UNTIL SAMPLE: what an interrupted `digestbot eval --analyzer llm --sample
  SAMPLE` run on that database reached: the commits of its sample whose LLM analyses it stored,
  scored with the same weights (a slow local model may not finish a whole sample).
Prints recall, share flagged, lift and precision at medium+high and at high, and the targets; then,
for the default run, what decided each tier (impact, risk, or both agreeing, read from the reasons) and
each impact score, with how many of those commits were followed up: whether the impact findings add
follow-up recall or only flagged share. `--git-dir` takes any clone (e.g. /tmp/pydantic.git with
`--since 2025-03-01 --until 2026-08-31`); the release-notes key is bench/bench_eval.py's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from adapters.local_git import LocalGitSource  # noqa: E402
from analysis.evaluation.scoring import Judged, score  # noqa: E402
from analysis.models import Importance  # noqa: E402
from bot.digest.analyzers import HeuristicAnalyzer  # noqa: E402
from bot.digest.evaluate import EvalResult, evaluate  # noqa: E402
from bot.store.db import Store  # noqa: E402

SHARED = ROOT.parent / "shared"
TZ = ZoneInfo("Asia/Shanghai")
TARGETS = "targets (issue 16): medium+high recall >= 75% with <= 55% flagged; high recall >= 35% with <= 15% high; each >= 5 points above the size rank (bench_eval.py prints it)"

# Runs in the baseline worktree: its own LocalGitSource and heuristic rank every commit of each day.
_BASELINE = r"""
import asyncio, json, sys  # noqa: E402
from datetime import date, timedelta  # noqa: E402
from zoneinfo import ZoneInfo  # noqa: E402
from adapters.local_git import LocalGitSource  # noqa: E402
from analysis import heuristic  # noqa: E402
from analysis.window import day_window  # noqa: E402
git_dir, since, until = sys.argv[1], date.fromisoformat(sys.argv[2]), date.fromisoformat(sys.argv[3])
tz = ZoneInfo("Asia/Shanghai")
async def main():
    src, ranks, day = LocalGitSource(git_dir), {}, since
    while day <= until:
        start, end = day_window(day, tz)
        for c in await src.commits_in_window("main", start, end):
            ranks[c.sha] = heuristic.rank(c, "en")[0].value
        day += timedelta(days=1)
    print(json.dumps(ranks))
asyncio.run(main())
"""


def clone(bundle: Path, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(dest)], check=True)
    return dest


async def current(
    git_dir: Path, db: Path, since: date, until: date, history_days: int
) -> tuple[EvalResult, float]:
    began = time.monotonic()
    result = await evaluate(
        LocalGitSource(git_dir),
        Store(db),
        HeuristicAnalyzer(),
        branch="main",
        since=since,
        until=until,
        tz=TZ,
        lang="en",
        history_days=history_days,
    )
    return result, time.monotonic() - began


def baseline(
    commit: str, git_dir: Path, since: date, until: date, key: EvalResult
) -> tuple[list[Judged], float]:
    """The baseline's ranks of the same commits, judged against the same answer key."""
    began = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), commit], check=True
        )
        try:
            out = subprocess.run(
                [sys.executable, "-c", _BASELINE, str(git_dir), since.isoformat(), until.isoformat()],
                cwd=tree,
                env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
                capture_output=True,
                text=True,
                check=True,
            )
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True)
    ranks = json.loads(out.stdout)
    judged = [
        Judged(j.sha, j.title, j.committed_at, Importance(ranks[j.sha]), "", j.followed_by, j.kind)
        for j in key.judged
        if j.sha in ranks
    ]
    return judged, time.monotonic() - began


def row(name: str, s, seconds: float | None = None) -> str:
    mh, high = s.cut("medium+high"), s.cut("high")
    took = f"{seconds:7.1f} s" if seconds is not None else "        "
    return (
        f"{name:<34} {s.commits:>7,.0f} {s.followed:>5,.0f}  "
        f"{100 * mh.recall:5.1f}% {100 * mh.flagged_share:5.1f}% {mh.lift:5.2f} {100 * mh.precision:5.1f}%  "
        f"{100 * high.recall:5.1f}% {100 * high.flagged_share:5.1f}% {high.lift:5.2f} {100 * high.precision:5.1f}%  {took}"
    )


_DECIDED = (("decided by impact", "impact"), ("decided by risk", "risk"), ("impact and risk agree", "both"))


def decided_rows(judged: list[Judged]) -> list[str]:
    """Commits and follow-ups by tier and what decided it, and by impact score."""
    groups: dict[tuple[str, str], list[Judged]] = {}
    for j in judged:
        decided = next((name for phrase, name in _DECIDED if j.reason.endswith(phrase)), "?")
        groups.setdefault((j.importance.value, decided), []).append(j)
        groups.setdefault(
            ("impact score", f"{j.impact_score if j.impact_score is not None else '-'}"), []
        ).append(j)
    total = len(judged) or 1
    lines = [f"{'':<34} {'commits':>7} {'share':>6} {'fol.':>5} {'rate':>6}"]
    for (first, second), items in sorted(groups.items(), key=lambda kv: (kv[0][0] == "impact score", kv[0])):
        followed = sum(1 for j in items if j.followed)
        lines.append(
            f"{first + ', ' + second:<34} {len(items):>7,} {100 * len(items) / total:5.1f}% {followed:>5}"
            f" {100 * followed / len(items):5.1f}%"
        )
    return lines


def llm_row(path: Path) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    mh, high = data["cuts"]["medium+high"], data["cuts"]["high"]
    name = f"llm {Path(data['analyzer']).name[:18]} {data['since'][5:]}..{data['until'][5:]}"
    sample = f" (sample {data['sample']} + all followed, weighted)" if data.get("sample") is not None else ""
    return (
        f"{name:<34} {data['commits']:>7,.0f} {data['followed_up']:>5,.0f}  "
        f"{100 * mh['recall']:5.1f}% {100 * mh['flagged_share']:5.1f}% {mh['lift']:5.2f} {100 * mh['precision']:5.1f}%  "
        f"{100 * high['recall']:5.1f}% {100 * high['flagged_share']:5.1f}% {high['lift']:5.2f} {100 * high['precision']:5.1f}%{sample}"
    )


def llm_partial(
    git_dir: Path, db: Path, since: date, until: date, n: int, heuristic: EvalResult
) -> list[str]:
    """Score the LLM analyses an interrupted sampled eval stored, over the commits it reached, and
    the heuristic's ranks of the very same commits with the same weights."""
    from analysis.history.followups import find_links
    from analysis.window import day_window
    from bot.digest.evaluate import _answer_key, _sample

    store = Store(db)
    repo = LocalGitSource(git_dir).repo
    start, end = day_window(since, TZ)[0], day_window(until, TZ)[1]
    history = store.history(repo, "main", start - timedelta(days=180), end + timedelta(days=30))
    answer = _answer_key(find_links(history), timedelta(days=30))
    chosen, weights = _sample([c for c in history if start <= c.committed_at < end], answer, n)
    judged = []
    for c in chosen:
        rows = store.query(
            "SELECT data FROM analyses WHERE repo = ? AND sha = ? AND analyzer = 'llm' ORDER BY created_at DESC"
            " LIMIT 1",
            [repo, c.sha],
        )
        if rows:
            tier = Importance(json.loads(rows[0]["data"])["importance"])
            link = answer.get(c.sha)
            judged.append(
                Judged(
                    c.sha,
                    c.title,
                    c.committed_at,
                    tier,
                    "",
                    link.follow_up if link else None,
                    link.kind.value if link else None,
                    weights.get(c.sha, 1.0),
                )
            )
    reached = f"llm: {len(judged)} of {len(chosen)} sampled"
    ours = {j.sha: j for j in heuristic.judged}
    same = [
        Judged(j.sha, j.title, j.committed_at, ours[j.sha].importance, "", j.followed_by, j.kind, j.weight)
        for j in judged
        if j.sha in ours
    ]
    span = f"  ({since}..{until}, sample {n} + every followed-up commit, weighted)"
    return [
        row(reached, score(judged)) + span,
        row("heuristic (history), same commits", score(same)) + span,
        "  raw counts (a small sample: the weighted rows above are noisy): " + _counts("llm", judged),
        "  "
        + " " * len("raw counts (a small sample: the weighted rows above are noisy): ")
        + _counts("heuristic", same),
    ]


def _counts(name: str, judged: list[Judged]) -> str:
    """Flagged commits among the followed-up ones and among the sampled others, unweighted."""

    def tally(items: list[Judged]) -> str:
        mh = sum(1 for j in items if j.importance != Importance.LOW)
        high = sum(1 for j in items if j.importance == Importance.HIGH)
        return f"{mh}/{len(items)} M+H, {high}/{len(items)} high"

    followed = [j for j in judged if j.followed]
    others = [j for j in judged if not j.followed]
    return f"{name}: followed up {tally(followed)}; others {tally(others)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bundle", type=Path, default=SHARED / "data/vllm-history/vllm-2025H2.bundle")
    parser.add_argument("--git-dir", type=Path, help="an existing clone of the bundle instead of a fresh one")
    parser.add_argument("--since", type=date.fromisoformat, default=date(2025, 9, 1))
    parser.add_argument("--until", type=date.fromisoformat, default=date(2025, 12, 31))
    parser.add_argument("--baseline", default="bbbf3d4", help="commit of the rubric before (empty: skip)")
    parser.add_argument("--llm-json", type=Path, action="append", default=[])
    parser.add_argument("--llm-partial", nargs=4, metavar=("DB", "SINCE", "UNTIL", "SAMPLE"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        git_dir = args.git_dir or clone(args.bundle, Path(tmp) / "history.git")
        after, after_s = asyncio.run(current(git_dir, Path(tmp) / "after.db", args.since, args.until, 180))
        # The second run starts from the first one's store without its analyses: the surface facts and
        # history it read are reused, every commit is ranked again.
        with sqlite3.connect(Path(tmp) / "after.db") as src, sqlite3.connect(Path(tmp) / "plain.db") as dst:
            src.backup(dst)  # WAL pages included
            dst.execute("DELETE FROM analyses")
        plain, plain_s = asyncio.run(current(git_dir, Path(tmp) / "plain.db", args.since, args.until, 0))
        rows = []
        if args.baseline:
            judged, base_s = baseline(args.baseline, git_dir, args.since, args.until, after)
            rows.append(row(f"before ({args.baseline}, size + signals)", score(judged), base_s))
        rows.append(row("today's rubric, HISTORY_DAYS=0", plain.score, plain_s))
        rows.append(row("today's rubric, history (default)", after.score, after_s))
        rows += [llm_row(p) for p in args.llm_json]
        if args.llm_partial:
            db, first, last, n = args.llm_partial
            rows += llm_partial(
                git_dir, Path(db), date.fromisoformat(first), date.fromisoformat(last), int(n), after
            )
    print(
        f"{after.repo}@main {args.since} .. {args.until} (Asia/Shanghai), 30-day horizon; "
        f"{len(after.links)} follow-up links mined from the history"
    )
    print(
        f"{'':<34} {'commits':>7} {'fol.':>5}  {'-- medium+high: recall flagged lift prec.':<33}  "
        f"{'-- high: recall flagged lift prec.':<33}"
    )
    for line in rows:
        print(line)
    print(TARGETS)
    by_month = "  ".join(
        f"{m}: {100 * s.cut('medium+high').recall:.0f}%/{100 * s.cut('high').recall:.0f}%"
        for m, s in after.months.items()
    )
    print(f"with history, recall M+H / H by month: {by_month}")
    kinds = {"revert": 0, "fix": 0}
    for j in after.missed:
        kinds[j.kind or "fix"] += 1
    print(
        f"missed (followed up, ranked low) with history: {len(after.missed)} "
        f"({kinds['revert']} reverted, {kinds['fix']} fixed forward)"
    )
    print("with history, by tier and what decided it, then by impact score (fol. = followed up):")
    for line in decided_rows(after.judged):
        print("  " + line)


if __name__ == "__main__":
    main()
