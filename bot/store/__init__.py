"""The SQLite database every process shares: the store's API (`db`, with its tables' reads and writes in
`commits`, `history`, `threads` and `posts`, rows read into the domain in `rows`), its schema as numbered
migrations (`migrations`), whether an opened file is usable (`health`) and the LLM call log `digestbot logs`
reads (`llm_calls`)."""

from __future__ import annotations

import sys
import threading

# sqlite-utils imports numpy, when it is installed, only to map numpy scalar types to column types when
# it creates a table from rows; the store's tables come from its migrations and it never writes a numpy
# value. numpy costs ~0.1 s of CPU at every start (before an LLM day's first call), so sqlite-utils is
# imported here as if numpy were absent. Only while no other thread runs (one importing numpy meanwhile
# would fail), and never once numpy is loaded: eval's scoring imports it for itself.
if "sqlite_utils" not in sys.modules and "numpy" not in sys.modules and threading.active_count() == 1:
    sys.modules["numpy"] = None  # type: ignore[assignment]  # "not installed", for this import only
    try:
        import sqlite_utils  # noqa: F401
    finally:
        del sys.modules["numpy"]
