"""bench_parse_replay's comparison is what says a parser change kept every fact: a commit whose facts moved,
one only a side has, or a commit that failed on one side only is a difference, never "0 differences"."""

import pickle

from analysis.models import SurfaceChange, SurfaceKind
from bench.bench_parse_replay import compare


def _replay(path, found, queries=None, failed=()):
    with open(path, "wb") as f:
        pickle.dump((found, queries or {}, list(failed)), f)
    return path


def test_every_moved_missing_or_failed_commit_is_a_difference(tmp_path, capsys):
    fact = SurfaceChange(SurfaceKind.REMOVED, "pkg.f", "pkg/m.py", 3)
    found = {"a" * 40: ((fact,), frozenset({"pkg/m.py"}), frozenset()), "b" * 40: ((), None, frozenset())}
    same = _replay(tmp_path / "same.pkl", dict(found))
    assert compare(_replay(tmp_path / "a.pkl", found), same) == 0

    moved = dict(
        found,
        **{"a" * 40: ((SurfaceChange(SurfaceKind.REMOVED, "pkg.f", "pkg/m.py", 4),), *found["a" * 40][1:])},
    )
    assert compare(same, _replay(tmp_path / "moved.pkl", moved)) == 1
    assert "pkg.f" in capsys.readouterr().out  # the difference is shown

    missing = {k: v for k, v in found.items() if k != "b" * 40}
    assert compare(same, _replay(tmp_path / "missing.pkl", missing)) == 1
    failed = _replay(tmp_path / "failed.pkl", found, failed=[("aaaaaaa", "Traceback ...")])
    assert compare(same, failed) == 1
