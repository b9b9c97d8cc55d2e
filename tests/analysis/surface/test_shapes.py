"""Shapes are computed only where a commit has a removal and an addition of one kind to pair."""

from __future__ import annotations

from analysis.models import SurfaceChange
from analysis.models import SurfaceKind as K
from analysis.surface.pairing import pair_renames
from analysis.surface.python import FileSurface
from analysis.surface.shapes import Shape


class _Counted:
    def __init__(self, shape: str) -> None:
        self._shape, self.asked = shape, 0

    @property
    def shape(self) -> str:
        self.asked += 1
        return self._shape


def _surface(kind: K, name: str, shape: Shape) -> FileSurface:
    return FileSurface([SurfaceChange(kind, name, f"{name}.py", 1)], {(kind, name): shape})


def test_the_text_is_the_kind_and_the_shape():
    assert Shape("function", _Counted("abc")).text == "function:abc"
    assert Shape("alias").text == "alias:"


def test_a_removal_and_an_addition_of_one_kind_and_shape_pair_as_a_rename():
    gone, came = _Counted("same"), _Counted("same")
    (change,) = pair_renames(
        [
            _surface(K.REMOVED, "m.old", Shape("function", gone)),
            _surface(K.ADDED, "m.new", Shape("function", came)),
        ]
    )
    assert (change.kind, change.old, change.new) == (K.RENAMED, "m.old", "m.new")
    assert (gone.asked, came.asked) == (1, 1)


def test_no_shape_is_computed_without_a_removal_and_an_addition_of_one_kind():
    added, other_kind, removed = _Counted("same"), _Counted("same"), _Counted("same")
    changes = pair_renames(
        [
            _surface(K.ADDED, "m.a", Shape("function", added)),
            _surface(K.ADDED, "m.b", Shape("class", other_kind)),
            _surface(K.REMOVED, "m.c", Shape("constant", removed)),
        ]
    )
    assert sorted(c.kind for c in changes) == sorted([K.ADDED, K.ADDED, K.REMOVED])
    assert (added.asked, other_kind.asked, removed.asked) == (0, 0, 0)
