"""A removed or added definition's shape, for pairing a removal with an addition as one rename
(pairing.pair_renames): its kind at once, the shape itself (a dump of the definition) only when asked.

Most commits have no removal and addition of one kind to pair; dumping every definition they add would be
parsing time spent for nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class Shaped(Protocol):
    @property
    def shape(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Shape:
    kind: str  # function | class | constant | alias | …: only shapes of one kind can be equal
    of: Shaped | None = None  # what has the shape (computed, and kept, by it when asked); None: no shape

    @property
    def text(self) -> str:
        return f"{self.kind}:{self.of.shape if self.of is not None else ''}"
