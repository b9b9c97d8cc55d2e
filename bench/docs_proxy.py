"""Benchmark helper: issue 16's docs/internal share (target ≤ 15 % at medium or high), read off a proxy
on repositories whose release notes list no docs or internal PRs (both bundles).

    python bench/docs_proxy.py --git-dir /tmp/vllm.git BASE.json [NEW.json ...]

The proxy: a commit whose changed files are all docs, tests, CI, examples, benchmarks or dev tooling (by
path, `analysis.paths`; `CMakeLists.txt` and requirements files are not docs), or whose title says docs,
CI, chore, test, typo or no functional change (a tag or conventional type, "fix typo", "Update the
docs"). Printed three ways: all of them, by paths alone, and by title where code users run changed too.
Each JSON is a `digestbot eval --format json` document (`bench/bench_eval.py --json DIR` writes one per
bundle); bench_eval prints the same lines for its own run.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analysis.paths import PathKind, kind_in  # noqa: E402

NOT_RUN = {
    PathKind.DOCS,
    PathKind.TESTS,
    PathKind.CI,
    PathKind.EXAMPLE,
    PathKind.BENCHMARK,
    PathKind.TOOLING,
}
TITLE = re.compile(
    r"\[(?:docs?|ci|ci/build|chore|tests?|typo|nfc|misc\]\[docs?)\]"
    r"|^(?:docs?|ci|chore|test|tests|style)(?:\(.*?\))?!?:"
    r"|\bfix(?:es|ed)? typos?\b|\btypos?\b|no functional change|^update (?:the )?docs",
    re.I,
)


def changed_files(git_dir: Path, shas: list[str]) -> dict[str, list[str]]:
    """Each commit's changed paths, in one `git log --no-walk --stdin` process."""
    out = subprocess.run(
        ["git", "--git-dir", str(git_dir), "log", "--no-walk=unsorted", "--stdin", "--name-only",
         "--format=@@%H", "--no-renames"],
        input="\n".join(shas), capture_output=True, text=True, check=True, encoding="utf-8", errors="replace",
    ).stdout  # fmt: skip
    files: dict[str, list[str]] = {}
    current: list[str] = []
    for line in out.splitlines():
        if line.startswith("@@"):
            current = files.setdefault(line[2:], [])
        elif line.strip():
            current.append(line.strip())
    return files


def proxy_counts(rows: list[dict], files: dict[str, list[str]]) -> dict[str, tuple[int, int, int]]:
    """(commits, at medium or high, at high) for each reading of the proxy."""
    counts = {
        "all (path or title)": [0, 0, 0],
        "by paths alone": [0, 0, 0],
        "by title, code changed": [0, 0, 0],
    }
    for row in rows:
        paths = files.get(row["sha"], [])
        by_path = bool(paths) and all(kind_in(p, frozenset()) in NOT_RUN for p in paths)
        by_title = bool(TITLE.search(row["title"]))
        for name, hit in (
            ("all (path or title)", by_path or by_title),
            ("by paths alone", by_path),
            ("by title, code changed", by_title and not by_path),
        ):
            if hit:
                c = counts[name]
                c[0] += 1
                c[1] += row["tier"] != "low"
                c[2] += row["tier"] == "high"
    return {name: (c[0], c[1], c[2]) for name, c in counts.items()}


def proxy_lines(name: str, git_dir: Path, rows: list[dict]) -> list[str]:
    counts = proxy_counts(rows, changed_files(git_dir, [r["sha"] for r in rows]))
    lines = [f"{name}: {len(rows)} commits ranked"]
    for label, (commits, flagged, high) in counts.items():
        share = f"{100 * flagged / commits:5.1f}%" if commits else "   n/a"
        goal = (
            " | target <= 15%: " + ("met" if flagged <= 0.15 * commits else "MISSED")
            if label.startswith("all")
            else ""
        )
        lines.append(
            f"  {label:<24} {flagged:>4} of {commits:<5} at medium+high ({share}), {high} high{goal}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--git-dir", type=Path, required=True)
    parser.add_argument("json", type=Path, nargs="+", help="`digestbot eval --format json` documents")
    args = parser.parse_args()
    for path in args.json:
        rows = json.loads(path.read_text(encoding="utf-8"))["ranked_commits"]
        print("\n".join(proxy_lines(str(path), args.git_dir, rows)))


if __name__ == "__main__":
    main()
