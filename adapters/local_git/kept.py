"""A least-recently-used map bounded by the bytes of its values: what a long run reads again (a tree listing, a
file version the next batches read as their "before") is kept within a fixed memory budget."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Kept(Generic[K, V]):
    """key → value, the least recently used dropped once the values' sizes sum past max_bytes; the newest
    `keep_at_least` stay whatever their size (a large repository's tree is still read once per batch)."""

    def __init__(self, max_bytes: int, size: Callable[[V], int], keep_at_least: int = 0) -> None:
        self.max_bytes = max_bytes
        self.keep_at_least = keep_at_least
        self._size = size
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self.bytes = 0

    def __contains__(self, key: K) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: K) -> V | None:
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        return item[0]

    def put(self, key: K, value: V) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self.bytes -= old[1]
        size = self._size(value)
        self._items[key] = (value, size)
        self.bytes += size
        while self.bytes > self.max_bytes and len(self._items) > self.keep_at_least:
            _, (_, dropped) = self._items.popitem(last=False)
            self.bytes -= dropped
