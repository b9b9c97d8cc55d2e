"""How the `digestbot` process ends once its verb is done (issue 21): at once, without the interpreter's
teardown, which frees every module and object one by one (0.2-0.5 s after an LLM verb, whose SDK is a
large package) while the person waits for the prompt.

Only the real entry point ends this way (`script` in bot/cli/main.py, `python -m bot.cli`); `main` and
click's test runner return or raise SystemExit as before. Nothing is lost, because at that point the
teardown would do only what is done here first:
- the verb has returned: the store is closed (its write-ahead log folded into the database file), every
  client and commit source is closed, every --out file is written;
- stdout and stderr are flushed; a flush that fails (a reader gone) takes the interpreter's own way out,
  which reports it exactly as before;
- the only exit handler registered by a verb's run is logging's (flush and close the handlers): called;
- the threads the interpreter would wait for: the LLM analyser's CPU worker is stopped after its queued
  work (as the interpreter's exit does); any other thread that is not a daemon (a chat SDK's, after
  `run`) keeps the interpreter's exit, which waits for it.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import NoReturn


def end_process(code: object) -> NoReturn:
    """End the process with the exit status `code` means to sys.exit (None: 0)."""
    if not (code is None or isinstance(code, int)) or _threads_to_wait_for():
        sys.exit(code)  # a message to print, or threads to join: the interpreter's own way
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)  # the interpreter reports what it could not write, as it always did
    logging.shutdown()
    os._exit(int(code or 0))


def _threads_to_wait_for() -> bool:
    """Whether a thread the interpreter would wait for is still alive, once the LLM analyser's CPU worker
    is stopped (only if that module was loaded: a verb without the LLM does not import it)."""
    analyser = sys.modules.get("bot.digest.llm_analyzer")
    if analyser is not None:
        analyser.stop_cpu_worker()
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())
