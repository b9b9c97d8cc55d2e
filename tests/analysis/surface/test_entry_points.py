"""Entry points a Python distribution declares (analysis/surface/entry_points.py): the commands it installs and
the plugins it registers with a host, read from pyproject.toml, setup.cfg and setup.py, and what a commit changing
them states through the surface step."""

from __future__ import annotations

from datetime import UTC, datetime

from analysis.models import Commit, FileChange, FileTexts
from analysis.models import SurfaceKind as K
from analysis.surface.commit import commit_facts
from analysis.surface.entry_points import entry_point_changes, entry_points

PLUGIN = """\
[project]
name = "engine-npu"
version = "0.9.0"
dependencies = ["engine>=0.9"]

[project.scripts]
npu-bench = "engine_npu.cli:main"

[project.entry-points."engine.platform_plugins"]
npu = "engine_npu:register"

[project.entry-points."engine.general_plugins"]
npu_enhanced_model = "engine_npu:register_model"
"""


def changes(path: str, before: str | None, after: str | None) -> list[tuple]:
    return [(c.kind, c.name, c.old, c.line) for c in entry_point_changes(path, before, after)]


def test_pyproject_commands_and_plugins_removed_renamed_added():
    # the plugin moved its model registration into the platform and dropped the general plugin: ranked medium,
    # though a host loading `engine.general_plugins` (and users selecting it by name) no longer finds it
    after = PLUGIN.replace(
        '[project.entry-points."engine.general_plugins"]\nnpu_enhanced_model = "engine_npu:register_model"\n',
        "",
    )
    assert changes("pyproject.toml", PLUGIN, after) == [
        (K.REMOVED, "engine.general_plugins:npu_enhanced_model", None, 13)
    ]
    renamed = PLUGIN.replace('npu-bench = "engine_npu.cli:main"', 'npu-benchmark = "engine_npu.cli:main"')
    assert changes("pyproject.toml", PLUGIN, renamed) == [(K.RENAMED, "npu-benchmark", "npu-bench", 7)]
    [fact] = entry_point_changes("pyproject.toml", PLUGIN, renamed)
    assert (fact.old, fact.new) == (
        "npu-bench",
        "npu-benchmark",
    )  # shown as "renames `npu-bench` → `npu-benchmark`"
    added = PLUGIN.replace(
        'npu_enhanced_model = "engine_npu:register_model"\n',
        'npu_enhanced_model = "engine_npu:register_model"\nnpu_kv = "engine_npu:register_kv"\n',
    )
    assert changes("pyproject.toml", PLUGIN, added) == [(K.ADDED, "engine.general_plugins:npu_kv", None, 14)]
    # the object an entry point names moved: nothing changes for users; a new file's entry points are new
    moved = PLUGIN.replace('npu = "engine_npu:register"', 'npu = "engine_npu.platform:register"')
    assert changes("pyproject.toml", PLUGIN, moved) == []
    assert {c[1] for c in changes("pyproject.toml", None, PLUGIN)} == {
        "npu-bench", "engine.platform_plugins:npu", "engine.general_plugins:npu_enhanced_model",
    }  # fmt: skip


def test_setup_py_setup_cfg_and_poetry():
    setup_py = 'from setuptools import setup\nsetup(name="c", entry_points={"console_scripts": ["c-compile = c.tools.compile:main"]})\n'
    assert entry_points("python/setup.py", setup_py) == {
        ("console_scripts", "c-compile"): "c.tools.compile:main"
    }
    ini = (
        'from setuptools import setup\nsetup(entry_points="""\n[console_scripts]\nc-run = c.run:main\n""")\n'
    )
    assert entry_points("setup.py", ini) == {("console_scripts", "c-run"): "c.run:main"}
    cfg = "[metadata]\nname = c\n[options.entry_points]\nconsole_scripts =\n    c-opt = c.opt:main\n"
    assert entry_points("setup.cfg", cfg) == {("console_scripts", "c-opt"): "c.opt:main"}
    poetry = '[tool.poetry]\nname = "c"\n[tool.poetry.scripts]\nc = "c.cli:app"\n[tool.poetry.plugins."host.plugins"]\np = "c:p"\n'
    assert entry_points("pyproject.toml", poetry) == {
        ("console_scripts", "c"): "c.cli:app",
        ("host.plugins", "p"): "c:p",
    }
    # what cannot be read states nothing
    assert entry_points("pyproject.toml", "[project\n") == {}
    assert entry_points("setup.py", "setup(entry_points=ENTRY_POINTS)\n") == {}
    assert entry_points("README.md", PLUGIN) == {}


def test_a_commit_dropping_a_plugin_entry_point_breaks_users():
    after = PLUGIN.replace(
        '[project.entry-points."engine.general_plugins"]\nnpu_enhanced_model = "engine_npu:register_model"\n',
        "",
    )
    parent, sha = "p" * 40, "c" * 40
    commit = Commit(
        "o/r", sha, "Register models from the platform", "a", datetime(2026, 1, 1, tzinfo=UTC), (parent,),
        (FileChange("pyproject.toml", "modified", 0, 3),),
    )  # fmt: skip
    texts = FileTexts({(parent, "pyproject.toml"): PLUGIN, (sha, "pyproject.toml"): after}, set())
    surface, _, _ = commit_facts(
        commit, texts, {"pyproject.toml": after}, ["pyproject.toml", "engine_npu/__init__.py"]
    )
    assert surface is not None
    assert [(c.kind, c.name, c.breaking) for c in surface] == [
        (K.REMOVED, "engine.general_plugins:npu_enhanced_model", True)
    ]
