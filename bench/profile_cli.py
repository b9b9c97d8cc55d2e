"""Run `digestbot ARGS...` under cProfile in every thread (bench/bench_cli.py's "where the time goes").

    python bench/profile_cli.py OUT.prof ARGS...    # also OUT.prof.wall: the run's wall seconds

cProfile sees only the thread it was enabled in; the LLM analyser's prompts and the store's writes run
in worker threads, so each new thread gets its own profiler and the stats are merged at exit.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    out, args = sys.argv[1], sys.argv[2:]
    profiles: list[cProfile.Profile] = []

    def on_thread_start(*_: object) -> None:
        sys.setprofile(None)  # replaced by this thread's own profiler
        profile = cProfile.Profile()
        profiles.append(profile)
        profile.enable()

    threading.setprofile(on_thread_start)
    main_profile = cProfile.Profile()
    sys.argv = ["digestbot", *args]
    sys.path.insert(0, str(ROOT))
    code = 0
    began = time.perf_counter()
    main_profile.enable()
    try:
        from bot.cli.main import main as cli_main

        cli_main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    finally:
        main_profile.disable()
        Path(f"{out}.wall").write_text(f"{time.perf_counter() - began:.6f}")
        threading.setprofile(None)
        stats = pstats.Stats(main_profile)
        for profile in profiles:
            profile.disable()
            stats.add(profile)
        stats.dump_stats(out)
    sys.exit(code)


if __name__ == "__main__":
    main()
