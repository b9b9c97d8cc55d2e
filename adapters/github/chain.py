"""A branch's first-parent chain among listed commits: which of a window's commits the branch itself made."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Node:
    sha: str
    parents: tuple[str, ...]
    committed_at: datetime


def first_parent_shas(nodes: Sequence[Node]) -> set[str]:
    """SHAs on the branch's first-parent chain among listed commits (listing order, newest first).

    Walks parents[0] from every head, i.e. every commit no listed commit names as a parent: the branch
    tip, and commits whose child the listing lacks (a first-parent commit dated outside the window, or out
    of date order, between two in-window ones). A merge's second-parent side is never walked into, and its
    side commits are not heads because the merge names them, so they stay out. Linear history (squash or
    rebase merges) has one head and every commit is on the chain."""
    by_sha = {n.sha: n for n in nodes}
    named = {p for n in nodes for p in n.parents}
    chain: set[str] = set()
    for head in (n.sha for n in nodes if n.sha not in named):
        current: str | None = head
        while current is not None and current in by_sha and current not in chain:
            chain.add(current)
            parents = by_sha[current].parents
            current = parents[0] if parents else None
    return chain


def needs_history_above(nodes: Sequence[Node]) -> bool:
    """Whether the window's listing alone cannot settle the chain: a merge commit (side branches exist)
    or more than one head (a side branch whose merge came after the window)."""
    if any(len(n.parents) > 1 for n in nodes):
        return True
    named = {p for n in nodes for p in n.parents}
    return sum(1 for n in nodes if n.sha not in named) > 1
