from __future__ import annotations

from analysis.models import SurfaceKind as K
from analysis.surface.commit import FileVersions, commit_surface
from analysis.surface.stubs import merged_stubs

STUB = "def cast(t: object, v: object) -> object: ...\ndef sizeof(v: object) -> int: ...\n"
MODULE = "def cast(t, v):\n    return v\n\n\ndef sizeof(v):\n    return 0\n"


def test_a_stub_merged_into_its_module_takes_no_name_away():
    # "Merge Shadow.pyi into Shadow.py": the stub is deleted, its module keeps every name (and gains its hints)
    files = [
        FileVersions("pkg/shadow.pyi", STUB, None),
        FileVersions(
            "pkg/shadow.py", MODULE, MODULE.replace("def cast(t, v):", "def cast(t: object, v: object):")
        ),
    ]
    assert merged_stubs(files) == frozenset({"pkg/shadow.pyi"})
    assert not [c for c in commit_surface(files, None, None) if c.kind == K.REMOVED]


def test_a_stub_deleted_with_its_module_or_alone_still_says_what_went():
    gone = [FileVersions("pkg/shadow.pyi", STUB, None), FileVersions("pkg/shadow.py", MODULE, None)]
    assert merged_stubs(gone) == frozenset()
    alone = [FileVersions("pkg/shadow.pyi", STUB, None)]
    assert merged_stubs(alone) == frozenset()
    assert {c.name for c in commit_surface(alone, None, None) if c.kind == K.REMOVED} == {
        "pkg.shadow.cast",
        "pkg.shadow.sizeof",
    }
