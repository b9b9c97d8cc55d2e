"""End to end: a repository whose setup.py computes its packages (a generator over backend folders, as native
and compiler projects write it): `digestbot digest --format json` sees a commit to the package as shipped and
one to `examples/` as not, where it used to say "unknown" for both."""

from __future__ import annotations

import json

from click.testing import CliRunner

from bot.cli.main import cli
from tests.fakes.gitrepo import GitRepo, isolate_git_env

DAY = "2026-01-26"
SETUP = """import os
from setuptools import setup, find_packages

BACKENDS = os.environ.get("BACKENDS", "cpu").split(",")


def get_packages():
    yield from find_packages(where="python")
    for name in BACKENDS:
        yield f"kern.backends.{name}"


def get_package_dirs():
    yield ("", "python")
    for name in BACKENDS:
        yield (f"kern.backends.{name}", os.path.join("backends", name))


setup(name="kern", packages=list(get_packages()), package_dir=dict(get_package_dirs()))
"""


def test_a_computed_package_list_still_tells_shipped_code_from_examples(tmp_path, monkeypatch):
    isolate_git_env(monkeypatch, tmp_path / "home")
    repo = GitRepo.init(tmp_path / "kern", remote="https://github.com/acme/kern.git")
    repo.commit(
        "Initial import",
        {
            "setup.py": SETUP,
            "python/kern/__init__.py": "",
            "python/kern/ops.py": "def add(a, b):\n    return a + b\n",
            "backends/cpu/__init__.py": "",
            "backends/cpu/compiler.py": "def compile(src):\n    return src\n",
            "examples/add.py": "from kern.ops import add\n\nprint(add(1, 2))\n",
        },
        when="2026-01-25T09:00:00+08:00",
    )
    repo.commit(
        "[Backend] Compile twice (#2)",
        {"backends/cpu/compiler.py": "def compile(src):\n    return src + src\n"},
        when="2026-01-26T10:00:00+08:00",
    )
    repo.commit(
        "[Ops] Add sub (#3)",
        {"python/kern/ops.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"},
        when="2026-01-26T11:00:00+08:00",
    )
    repo.commit(
        "[Doc] Print more (#4)",
        {"examples/add.py": "from kern.ops import add\n\nprint(add(1, 2), add(3, 4))\n"},
        when="2026-01-26T12:00:00+08:00",
    )
    day = ["--date", DAY, "--tz", "Asia/Shanghai", "--format", "json"]
    result = CliRunner().invoke(
        cli,
        ["--db", str(tmp_path / "d.db"), "digest", "--git-dir", str(repo.path), *day],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    by_title = {c["title"]: c for c in json.loads(result.stdout)["commits"]}
    assert by_title["[Backend] Compile twice (#2)"]["shipped"] == ["backends/cpu/compiler.py"]
    assert by_title["[Ops] Add sub (#3)"]["shipped"] == ["python/kern/ops.py"]
    assert by_title["[Doc] Print more (#4)"]["shipped"] == []  # the example is not what users install
    added = by_title["[Ops] Add sub (#3)"]["surface"]
    assert [(f["kind"], f["name"]) for f in added] == [("added", "kern.ops.sub")]  # named from python/
