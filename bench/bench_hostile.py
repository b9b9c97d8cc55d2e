"""Benchmark: pure steps on hostile but legitimate input, each a shape that once took minutes.

    python bench/bench_hostile.py [--n 15000]

- follow-up mining (`references`) of one message whose body is a single line listing N pull requests, in
  three shapes: "Includes #1, #2, …", "fixes the bug between #A and #B …", and pull-request URLs;
- a squash body listing N/4 branch-internal reverts (each is checked against the list);
- ranking (`rank`) of one commit with N renamed public functions (a generated module rewritten);
- the knobs of a native source (`knob_surface`): N environment reads, and a Rust struct of N fields each under
  a run of clap attributes (a first version re-read the run after every attribute: 50,000 took minutes), one
  long word with "env" all through it and nested `cl::opt` openings (a review found 8 s for 36 KB and 34 s
  for 1 MB);
- reading a 40 KB thread question (`parse_question`) in hostile shapes: one word, "a-" repeated, digits,
  "name的提交" repeated, 6,000 #N references (40 KB of "a-" ran past an hour on the event loop, one word
  312 s, before the patterns were anchored to word starts and a question read by its first and last 1,000
  characters).

Before the robustness round the one-line lists and the reverts grew with the square of their length (the
109 KB list of 15,000 PRs ran past 120 s in a digest) and so did the ranking (18,000 renames: 34 s). No
target is set; the figures belong in BENCHMARKS.md ("Hostile input").
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analysis.heuristic import rank  # noqa: E402
from analysis.history.followups import references  # noqa: E402
from analysis.models import Commit, FileChange, SurfaceChange, SurfaceKind  # noqa: E402
from analysis.questions.parse import parse_question  # noqa: E402
from analysis.surface.native_knobs import knob_surface  # noqa: E402


def timed(label: str, size: int, run) -> None:
    start = time.perf_counter()
    found = run()
    print(f"{label:<52} {size / 1024:8.0f} KB {time.perf_counter() - start:8.2f} s   ({found})")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=15000, help="references, renames (default 15000)")
    n = parser.parse_args().n

    shapes = {
        "one line: Includes #1, #2, …": ", ".join(f"#{i}" for i in range(1, n + 1)),
        "one line: fixes the bug between #A and #B, …": ", ".join(
            f"fixes the bug between #{i} and #{i + 1}" for i in range(1, n + 1, 2)
        ),
        "one line: see https://github.com/o/r/pull/N …": " ".join(
            f"see https://github.com/o/r/pull/{i}" for i in range(1, n + 1)
        ),
    }
    for label, body in shapes.items():
        message = f"Squash of many changes (#99999)\n\n{body}\n"
        timed(label, len(message), lambda m=message: f"{len(references(m))} references")

    # each step listed, then its revert: the net squash reverts none of them
    listed = "\n".join(f'* Step {i} (#{i})\n* Revert "Step {i} (#{i})"' for i in range(1, n // 4 + 1))
    message = f"A branch squashed (#99999)\n\n{listed}\n"
    timed(
        f"squash body listing {n // 4:,} branch-internal reverts",
        len(message),
        lambda: f"{len(references(message))} references",
    )

    changes = tuple(
        SurfaceChange(
            SurfaceKind.RENAMED, f"pkg.gen.f{i}", "pkg/gen.py", i + 1, f"pkg.gen.f{i}", f"pkg.gen.g{i}"
        )
        for i in range(n)
    )
    commit = Commit(
        repo="acme/widgets",
        sha="0" * 40,
        message="Rename the generated functions",
        author="Ada",
        committed_at=datetime(2026, 1, 26, tzinfo=UTC),
        files=(FileChange("pkg/gen.py", "modified", n, n),),
        surface=changes,
        shipped=frozenset({"pkg/gen.py"}),
    )
    timed(f"rank a commit with {n:,} renamed functions", 0, lambda: rank(commit, "en")[0].value)

    reads = "".join(f'auto v{i} = getenv("KIT_VAR_{i}");\n' for i in range(n))
    timed(
        f"knobs of a C++ file reading {n:,} variables",
        len(reads),
        lambda: f"{len(knob_surface('src/env.cc', reads, reads + 'int x;').changes)} changes",
    )
    word = "xenv" * (n * 16)  # one long word, "env" all through it
    timed(
        f"knobs of a file that is one {len(word) // 1024:,} KB word",
        len(word),
        lambda: f"{len(knob_surface('src/blob.cc', word, word + ' ').changes)} changes",
    )
    openings = "cl::opt<int> x(" * (n * 4)  # declarations opened inside each other, never closed
    timed(
        f"knobs of {n * 4:,} nested `cl::opt` openings",
        len(openings),
        lambda: f"{len(knob_surface('lib/x.cpp', openings, openings + ';').changes)} changes",
    )
    fields = "".join(
        f"    #[arg(long)]\n    #[arg(short)]\n    #[serde(skip)]\n    f{i}: bool,\n" for i in range(n)
    )
    cli = f"struct Cli {{\n{fields}}}\n"
    timed(
        f"knobs of a clap struct of {n:,} fields",
        len(cli),
        lambda: f"{len(knob_surface('src/cli.rs', cli, cli.replace('f1:', 'g1:')).changes)} changes",
    )

    questions = {
        "one word": "a" * 40_000,
        "a- repeated": "a-" * 20_000,
        "digits": "1" * 40_000,
        "name的提交 repeated": "alice的提交" * 5_000,
        "#N references": " ".join(f"#{i}" for i in range(1, 6_500)),
    }
    for shape, text in questions.items():
        timed(
            f"a thread question: {shape}",
            len(text.encode()),
            lambda t=text: f"{parse_question(t, authors=['Ada Lovelace']).intent.value}",
        )


if __name__ == "__main__":
    main()
