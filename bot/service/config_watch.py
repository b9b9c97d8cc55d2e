"""The subscriptions file is read once, when `digestbot run` starts (chat subscriptions, in the store, apply at
once). An operator who edits it and waits for the change would wait forever: the service says, once per
change, that a restart applies it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

CHECK_SECONDS = 60.0


def _stamp(path: Path) -> tuple[int, int] | None:
    """What tells an edit: modification time and size; None while the file is missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


async def watch_config(path: Path, stop: asyncio.Event, every: float = CHECK_SECONDS) -> None:
    """Until `stop`: a warning each time the file differs from what was last seen (first: at the start)."""
    seen = _stamp(path)
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=every)
        now = await asyncio.to_thread(_stamp, path)
        if now != seen and not stop.is_set():
            what = "was removed" if now is None else "changed"
            log.warning(
                "%s %s since `digestbot run` read it: restart the service to apply it (its subscriptions "
                "are read at start; those made in chat apply at once)",
                path,
                what,
            )
            seen = now
