"""Benchmark and check: the surface step's parsing of an `eval` run replayed on any code tree, to compare two
trees' facts commit by commit and their parsing cost without git, the store or the ranking around it.

    python bench/bench_parse_replay.py capture DIR -- eval --git-dir /tmp/vllm.git --since 2025-09-01 \\
        --until 2025-12-31 --analyzer heuristic --tz Asia/Shanghai --out /tmp/eval.txt
    python bench/bench_parse_replay.py replay DIR OUT.pkl [--tree PATH] [--first N] [--workers 2] [--chars]
    python bench/bench_parse_replay.py compare A.pkl B.pkl

- capture: runs `digestbot` in this process (DIGEST_DB: an empty database, so that every commit is parsed)
  and pickles each task the surface step hands to its workers, or parses in a thread, one file per task;
- replay: parses the tasks again with the code of `--tree` (default: this checkout), a worker's `Relatives`
  kept from task to task as in the run (`--workers`: how many workers the tasks alternate between), and
  writes every commit's facts as the workers return them (before the parent's inherited-member and docs
  reads); prints the parsing CPU, and with `--chars` the characters handed to ast.parse by caller;
- compare: every commit's facts of two replays; any difference is printed (the first 15) and counted.

The tasks of a capture hold the texts read (vllm, four months: 82 tasks, about 640 MB).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import pickle
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def capture(out: Path, args: list[str]) -> None:
    sys.path.insert(0, str(ROOT))
    import bot.digest.surface as surface

    out.mkdir(parents=True, exist_ok=True)
    numbers = itertools.count()  # taken at once: a batch parsed in a thread is kept beside one submitted
    count = 0

    def keep(batches: tuple) -> None:
        nonlocal count
        with open(out / f"{next(numbers):05d}.pkl", "wb") as f:
            pickle.dump(batches, f, protocol=5)
        count += 1

    submit, parse_batch = surface._submit, surface.parse_batch

    def submitted(pool, batches):  # type: ignore[no-untyped-def]
        keep(batches)
        return submit(pool, batches)

    def parsed_here(batch):  # type: ignore[no-untyped-def]
        keep((batch,))
        return parse_batch(batch)

    surface._submit, surface.parse_batch = submitted, parsed_here
    sys.argv = ["digestbot", *args]
    from bot.cli.main import main

    try:
        main()
    except SystemExit as stop:
        if stop.code not in (0, None):
            raise
    print(f"{count} tasks kept in {out}")


def replay(tasks: Path, out: Path, tree: Path, first: int | None, workers: int, chars: bool) -> None:
    sys.path.insert(0, str(tree))
    import ast

    from analysis.surface.blanked_bodies import Relatives
    from bot.digest.surface import parse_batches

    parsed_chars: Counter[str] = Counter()
    parse_seconds: Counter[str] = Counter()
    if chars:
        plain = ast.parse

        def counted(text, *args, **kwargs):  # type: ignore[no-untyped-def]
            frame = sys._getframe(1)
            while frame.f_code.co_filename.endswith(("shared_parse.py", "/ast.py")):
                frame = frame.f_back  # type: ignore[assignment]
            caller = f"{Path(frame.f_code.co_filename).stem}.{frame.f_code.co_name}"
            began = time.process_time()
            try:
                return plain(text, *args, **kwargs)
            finally:
                parse_seconds[caller] += time.process_time() - began
                parsed_chars[caller] += len(text)

        ast.parse = counted
    relatives = [Relatives() for _ in range(workers)]
    found: dict = {}
    queries: dict = {}
    failed: list = []
    cpu = 0.0
    files = sorted(tasks.glob("*.pkl"))[:first]
    gc.disable()  # as a worker parses: the collector paused (bot/digest/surface.py)
    for i, path in enumerate(files):
        with open(path, "rb") as f:
            batches = pickle.load(f)
        began = time.process_time()
        parsed = parse_batches(batches, relatives[i % workers])
        cpu += time.process_time() - began
        found.update(parsed.found)
        queries.update(parsed.queries)
        failed += parsed.failed
        del batches, parsed
        gc.collect()
    print(f"{len(files)} tasks, {len(found)} commits, parsing CPU {cpu:.2f} s, failed {len(failed)} "
          f"[load {' '.join(f'{x:.2f}' for x in os.getloadavg())}]")  # fmt: skip
    for caller, n in parsed_chars.most_common():
        print(f"  ast.parse from {caller:<40} {n / 1e6:8.2f} M characters {parse_seconds[caller]:7.2f} s")
    with open(out, "wb") as f:
        pickle.dump((found, queries, failed), f, protocol=5)


def compare(a: Path, b: Path) -> int:
    with open(a, "rb") as f:
        left = pickle.load(f)
    with open(b, "rb") as f:
        right = pickle.load(f)
    differences = 0
    for name, x, y in (("facts", left[0], right[0]), ("inherited queries", left[1], right[1])):
        for sha in sorted(x.keys() | y.keys()):
            if x.get(sha) != y.get(sha):
                differences += 1
                if differences <= 15:
                    print(f"{name} of {sha}:\n  A: {x.get(sha)}\n  B: {y.get(sha)}")
    failed = sorted(s for s, _ in left[2]), sorted(s for s, _ in right[2])
    if failed[0] != failed[1]:
        differences += 1
        print(f"failed commits differ: A {failed[0]}, B {failed[1]}")
    print(f"{differences} differences; {len(left[0])} commits in A, {len(right[0])} in B")
    return differences


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cap = sub.add_parser("capture")
    cap.add_argument("dir", type=Path)
    cap.add_argument("args", nargs=argparse.REMAINDER)
    rep = sub.add_parser("replay")
    rep.add_argument("dir", type=Path)
    rep.add_argument("out", type=Path)
    rep.add_argument("--tree", type=Path, default=ROOT)
    rep.add_argument("--first", type=int)
    rep.add_argument("--workers", type=int, default=2)
    rep.add_argument("--chars", action="store_true")
    cmp = sub.add_parser("compare")
    cmp.add_argument("a", type=Path)
    cmp.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "capture":
        capture(args.dir, args.args[1:] if args.args[:1] == ["--"] else args.args)
    elif args.command == "replay":
        replay(args.dir, args.out, args.tree.resolve(), args.first, args.workers, args.chars)
    else:
        sys.exit(1 if compare(args.a, args.b) else 0)


if __name__ == "__main__":  # a spawned worker imports this module as __mp_main__: nothing to run there
    main()
