"""Benchmark: the follow-up links (the answer key for risk) against hand labels and on whole histories.

    python bench/bench_links.py [--baseline main] [--vllm PATH] [--pydantic PATH]

Side by side, today's rules (analysis/history/followups.py) and those of --baseline (the same file at that
revision, loaded from git; empty: skip):
- on the hand-labelled decisions of tests/analysis/data/followup_links.jsonl (vllm and pydantic):
  precision of the links drawn and recall of the labelled links that name their original, by kind;
- on each bundle's whole first-parent history: links by kind, what changed, the originals followed
  up within 30 days (eval's answer key) and the time find_links takes.
--vllm / --pydantic take a bundle or an existing clone (default: ../shared's bundles, cloned to a
temporary directory); a missing one is skipped with a message.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from adapters.local_git import LocalGitSource  # noqa: E402
from analysis.history.followups import FollowUpLink, PastCommit, find_links  # noqa: E402
from tests.analysis.linkset import KINDS, Finder, Score, counts, load, score  # noqa: E402

SHARED = ROOT.parent / "shared"
BUNDLES = {
    "vllm": SHARED / "data/vllm-history/vllm-2025H2.bundle",
    "pydantic": SHARED / "data/pydantic-history/pydantic-2024-09.bundle",
}
# eval's spans (bench_judgment.py, bench_eval.py), calendar days in Asia/Shanghai, the end excluded
SPANS = {"vllm": ("2025-09-01", "2026-01-01"), "pydantic": ("2025-03-01", "2026-09-01")}
HORIZON = timedelta(days=30)
TARGETS = "targets: precision >= 95 %, recall of the links that name their original >= 90 %"


def baseline_module(ref: str) -> ModuleType:
    """analysis/history/followups.py as it is at `ref`, imported under another name."""
    for where in (
        "analysis/history/followups.py",
        "analysis/followups.py",
    ):  # the module's path before issue 20
        shown = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{ref}:{where}"], capture_output=True, text=True
        )
        if shown.returncode == 0:
            break
    shown.check_returncode()
    source = shown.stdout
    path = Path(tempfile.mkdtemp()) / "followups_baseline.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("followups_baseline", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr]  # dataclasses look their module up
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def labelled_rows(name: str, result: Score) -> list[str]:
    rows = []
    for kind in (*KINDS, None):
        drawn = sum(result.drawn[k] for k in ([kind] if kind else KINDS))
        right = sum(result.right[k] for k in ([kind] if kind else KINDS))
        labelled = sum(result.labelled[k] for k in ([kind] if kind else KINDS))
        found = sum(result.found[k] for k in ([kind] if kind else KINDS))
        rows.append(
            f"| {name} | {kind or 'all'} | {right}/{drawn} | {100 * result.precision(kind):.1f} % "
            f"| {found}/{labelled} | {100 * result.recall(kind):.1f} % |"
        )
    return rows


def history(target: Path, tmp: Path) -> list[PastCommit]:
    git_dir = target
    if target.is_file():  # a bundle
        git_dir = tmp / f"{target.stem}.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(target), str(git_dir)], check=True)
    source = LocalGitSource(git_dir)
    return asyncio.run(source.history("main", datetime(1970, 1, 2, tzinfo=UTC), datetime.now(UTC)))


def mined(find: Finder, commits: Sequence[PastCommit]) -> tuple[list[FollowUpLink], float, float]:
    """The links, and the seconds find_links took the first time and again (as every day of a digest or
    an eval mines its months of history again)."""
    start = time.perf_counter()
    links = list(find(commits))
    first = time.perf_counter() - start
    start = time.perf_counter()
    find(commits)
    return links, first, time.perf_counter() - start


def followed_in_span(links: Sequence[FollowUpLink], span: tuple[str, str] | None) -> int:
    """Originals in the span (all when None) that a follow-up reached within the horizon."""
    tz = ZoneInfo("Asia/Shanghai")
    first, last = (datetime.fromisoformat(d).replace(tzinfo=tz) for d in span) if span else (None, None)
    return len(
        {
            link.original
            for link in links
            if link.follow_up_at - link.original_at <= HORIZON
            and (first is None or first <= link.original_at < last)  # type: ignore[operator]
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default="main", help="git revision of the rules before (empty: skip)")
    for name, bundle in BUNDLES.items():
        parser.add_argument(f"--{name}", type=Path, default=bundle, help="a bundle or a clone")
    args = parser.parse_args()
    old = baseline_module(args.baseline) if args.baseline else None

    decisions, commits = load()
    by = counts(decisions)
    print(
        f"hand-labelled decisions: {len(decisions)} — "
        + "; ".join(
            f"{repo} {sum(n for (r, _), n in by.items() if r == repo)} "
            f"({', '.join(f'{v} {by.get((repo, v), 0)}' for v in ('revert', 'fix', 'none'))})"
            for repo in ("vllm", "pydantic")
        )
    )
    print("| rules | kind | precision (right/drawn) | precision | recall (found/labelled) | recall |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    if old is not None:
        for line in labelled_rows(f"before ({args.baseline})", score(decisions, commits, old.find_links)):
            print(line)
    today = score(decisions, commits)
    for line in labelled_rows("today", today):
        print(line)
    print(TARGETS)
    print(f"missed: {', '.join(today.missed) or 'none'}; wrong: {', '.join(today.wrong) or 'none'}")

    with tempfile.TemporaryDirectory() as tmp:
        for name in BUNDLES:
            target: Path = getattr(args, name)
            if not target.exists():
                print(f"\n{name}: {target} not found, skipped")
                continue
            past = history(target, Path(tmp))
            new, *new_s = mined(find_links, past)
            print(f"\n{name}: {len(past):,} first-parent commits")
            print(
                "| rules | revert | fix | links | originals followed up in 30 days | in eval's span "
                "| find_links first / again |"
            )
            print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
            rows = [("today", new, new_s)]
            if old is not None:
                before, *before_s = mined(old.find_links, past)
                rows.insert(0, (f"before ({args.baseline})", before, before_s))
            for label, links, (first, again) in rows:
                kinds = Counter(link.kind.value for link in links)
                span = followed_in_span(links, SPANS.get(name)) if name in SPANS else "—"
                print(
                    f"| {label} | {kinds['revert']} | {kinds['fix']} | {len(links)} "
                    f"| {followed_in_span(links, None)} | {span} | {first:.2f} s / {again:.2f} s |"
                )
            if old is not None:
                print_changes(past, before, new)


def print_changes(
    past: Sequence[PastCommit], before: Sequence[FollowUpLink], after: Sequence[FollowUpLink]
) -> None:
    titles = {c.sha: c.title for c in past}
    old = {(link.original, link.follow_up): link.kind.value for link in before}
    new = {(link.original, link.follow_up): link.kind.value for link in after}
    changes = [("-", pair, kind) for pair, kind in old.items() if new.get(pair) != kind]
    changes += [("+", pair, kind) for pair, kind in new.items() if old.get(pair) != kind]
    summary = Counter((sign, kind) for sign, _pair, kind in changes)
    print(
        "changed: "
        + ", ".join(f"{sign}{n} {kind}" for (sign, kind), n in sorted(summary.items()))
        + (" (none)" if not changes else "")
    )
    for sign, (original, follow_up), kind in sorted(changes, key=lambda c: (c[0], c[1][1])):
        print(f"  {sign} {kind:<6} {titles[follow_up][:70]}  →  {titles[original][:50]}")


if __name__ == "__main__":
    main()
