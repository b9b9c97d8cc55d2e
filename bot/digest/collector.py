"""The cyclic garbage collector paused around work that allocates many objects without cycles (issue 21).

Parsing a batch of files (syntax-tree nodes, freed by reference counting) and importing the LLM's SDK (its
modules live as long as the process) each allocate hundreds of thousands of objects; collected as usual,
they start collection after collection over the whole heap.

Pauses may overlap (the SDK's import in its thread, a parse in another): the collector
comes back on when the last one ends, and only if it was on when the first began; a pause that asked to
freeze has everything alive at that moment frozen then.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_holders = 0  # pauses in progress
_was_on = False  # whether the collector was on when the first of them began
_freeze = False  # whether one of them asked to freeze what is alive at the end


def _pause() -> None:
    global _holders, _was_on
    with _lock:
        if _holders == 0:
            _was_on = gc.isenabled()
            gc.disable()
        _holders += 1


def _resume(freeze: bool) -> None:
    global _holders, _freeze
    with _lock:
        _holders -= 1
        _freeze = _freeze or freeze
        if _holders == 0:
            if _was_on:
                if _freeze:
                    gc.freeze()
                gc.enable()
            _freeze = False


@contextlib.contextmanager
def collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """The collector off meanwhile, then back on when no other pause is in progress, and only if it was
    on. freeze: everything alive at the end is left out of every later collection — for objects that live
    as long as the process (an SDK's modules); the price is that a cycle among them is never collected
    (bounded by that moment's heap, paid once)."""
    _pause()
    try:
        yield
    finally:
        _resume(freeze)
