"""The cyclic garbage collector paused around work that allocates many objects without cycles (issue 21).

Parsing a batch of files (syntax-tree nodes, freed by reference counting) and importing the LLM's SDK (its
modules live as long as the process) each allocate hundreds of thousands of objects; collected as usual,
they start collection after collection over the whole heap.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """The collector off meanwhile, then back on only if it was on (another thread may have paused it
    first). freeze: everything alive at the end is left out of every later collection — for objects that
    live as long as the process (an SDK's modules); the price is that a cycle among them is never
    collected (bounded by that moment's heap, paid once)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            if freeze:
                gc.freeze()
            gc.enable()
