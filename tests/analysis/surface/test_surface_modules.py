"""Python modules removed or renamed (analysis/surface/modules.py), through `commit_facts` as the surface step
calls it: a commit's files as git lists them (renames with their old path), the texts read before and after,
the packaging near the commit."""

from __future__ import annotations

from datetime import UTC, datetime

from analysis.models import Commit, FileChange, FileTexts, describe
from analysis.models import SurfaceKind as K
from analysis.surface.commit import commit_facts

PARENT, SHA = "p" * 40, "c" * 40
UTIL = "def util(a):\n    return a\n\n\nclass Pool:\n    def get(self):\n        return 1\n"
PYPROJECT = '[project]\nname = "pkg"\nversion = "1.0"\n[tool.setuptools]\npackages = ["pkg"]\n'
INIT = "from pkg.util import util\n"
TREE = ["pyproject.toml", "pkg/__init__.py", "pkg/core.py"]


def facts(files, before, after, packaging=None, tree=None):
    """The surface of a commit with these files ({path: text} before, at the parent, and after)."""
    commit = Commit("o/r", SHA, "Change", "a", datetime(2026, 1, 1, tzinfo=UTC), (PARENT,), tuple(files))
    texts = {(PARENT, p): t for p, t in before.items()} | {(SHA, p): t for p, t in after.items()}
    surface, _, _ = commit_facts(
        commit, FileTexts(texts, set()), packaging or {"pyproject.toml": PYPROJECT}, tree or TREE
    )
    assert surface is not None
    return [(c.kind, c.name, c.old, c.aliased) for c in surface]


def renamed(old: str, new: str) -> FileChange:
    return FileChange(new, "renamed", 0, 0, previous_path=old)


def test_a_pure_rename_and_a_case_only_rename_break_the_old_import_path():
    assert facts([renamed("pkg/util.py", "pkg/utils.py")], {"pkg/util.py": UTIL}, {"pkg/utils.py": UTIL}) == [
        (K.MODULE_RENAMED, "pkg.utils", "pkg.util", False)
    ]
    assert facts([renamed("pkg/util.py", "pkg/Util.py")], {"pkg/util.py": UTIL}, {"pkg/Util.py": UTIL}) == [
        (K.MODULE_RENAMED, "pkg.Util", "pkg.util", False)
    ]


def test_a_rename_with_edits_states_the_module_and_the_edits_inside_it():
    edited = UTIL.replace("def util(a):", "def util(a, b):")
    got = facts([renamed("pkg/util.py", "pkg/utils.py")], {"pkg/util.py": UTIL}, {"pkg/utils.py": edited})
    assert got == [(K.MODULE_RENAMED, "pkg.utils", "pkg.util", False), (K.PARAM_REQUIRED, "pkg.utils.util(b)", None, False)]  # fmt: skip


def test_a_deleted_module_is_one_fact_not_one_per_name():
    got = facts([FileChange("pkg/util.py", "removed", 0, 7)], {"pkg/util.py": UTIL}, {"pkg/util.py": None})
    assert got == [(K.MODULE_REMOVED, "pkg.util", None, False)]
    # a name that moved elsewhere under another name is still said where it went
    core = "def utility(a):\n    return a\n"
    got = facts(
        [FileChange("pkg/util.py", "removed", 0, 2), FileChange("pkg/core.py", "modified", 2, 0)],
        {"pkg/util.py": "def util(a):\n    return a\n", "pkg/core.py": "X = 1\n"},
        {"pkg/util.py": None, "pkg/core.py": "X = 1\n" + core},
    )
    assert got == [(K.RENAMED, "pkg.core.utility", "pkg.util.util", False), (K.MODULE_REMOVED, "pkg.util", None, False)]  # fmt: skip


def test_a_module_deleted_and_added_elsewhere_with_its_names_is_one_rename():
    # too rewritten for git's rename detection: listed as deleted and added
    rewritten = '"""Rewritten."""\nimport os\n\n\ndef util(a, *, flag=False):\n    return a, os.sep\n\n\nclass Pool:\n    def get(self):\n        return 2\n\n\ndef fresh():\n    pass\n'  # fmt: skip
    got = facts(
        [FileChange("pkg/util.py", "removed", 0, 7), FileChange("pkg/tools.py", "added", 14, 0)],
        {"pkg/util.py": UTIL},
        {"pkg/util.py": None, "pkg/tools.py": rewritten},
    )
    # not `removes util, Pool` and `adds util, Pool`: the names moved with the module; `fresh` is new
    assert got == [(K.MODULE_RENAMED, "pkg.tools", "pkg.util", False), (K.ADDED, "pkg.tools.fresh", None, False)]  # fmt: skip


def test_a_package_renamed_with_its_packaging_is_one_fact():
    files = [
        renamed("pkg/__init__.py", "newpkg/__init__.py"),
        renamed("pkg/util.py", "newpkg/util.py"),
        FileChange("pyproject.toml", "modified", 1, 1),
    ]
    after_pyproject = PYPROJECT.replace('["pkg"]', '["newpkg"]')
    got = facts(
        files,
        {"pkg/__init__.py": INIT, "pkg/util.py": UTIL, "pyproject.toml": PYPROJECT},
        {"newpkg/__init__.py": INIT, "newpkg/util.py": UTIL, "pyproject.toml": after_pyproject},
        packaging={"pyproject.toml": after_pyproject},
        tree=["pyproject.toml", "newpkg/__init__.py", "newpkg/util.py"],
    )
    assert got == [(K.MODULE_RENAMED, "newpkg", "pkg", False)]


def test_a_package_with_an_empty_init_is_said_by_its_modules():
    # `import pkg.engine` gives nothing: users import `pkg.engine.worker`, as deep as that is
    files = [
        FileChange("pkg/engine/__init__.py", "removed", 0, 1),
        FileChange("pkg/engine/worker.py", "removed", 0, 7),
    ]
    got = facts(
        files,
        {"pkg/engine/__init__.py": '"""The engine."""\n', "pkg/engine/worker.py": UTIL},
        {"pkg/engine/__init__.py": None, "pkg/engine/worker.py": None},
    )
    assert got == [(K.MODULE_REMOVED, "pkg.engine.worker", None, False)]


def test_a_package_moved_out_of_what_ships_is_removed():
    files = [renamed("pkg/__init__.py", "newpkg/__init__.py"), renamed("pkg/util.py", "newpkg/util.py")]
    got = facts(
        files,
        {"pkg/__init__.py": INIT, "pkg/util.py": UTIL},
        {"newpkg/__init__.py": INIT, "newpkg/util.py": UTIL},
        tree=["pyproject.toml", "newpkg/__init__.py", "newpkg/util.py"],
    )
    assert got == [(K.MODULE_REMOVED, "pkg", None, False)]


def test_a_shim_keeps_the_old_import_path():
    rename = renamed("pkg/util.py", "pkg/utils.py")
    init = FileChange("pkg/__init__.py", "modified", 3, 0)
    sys_modules = "import sys\nfrom pkg import utils as _utils\nsys.modules['pkg.util'] = _utils\n"
    lazy = "def __getattr__(name):\n    if name == 'util':\n        from pkg import utils\n        return utils\n    raise AttributeError(name)\n"  # fmt: skip
    for shim in (sys_modules, lazy):
        got = facts([rename, init], {"pkg/util.py": UTIL, "pkg/__init__.py": ""},
                    {"pkg/utils.py": UTIL, "pkg/__init__.py": shim})  # fmt: skip
        assert got == [(K.MODULE_RENAMED, "pkg.utils", "pkg.util", True)], shim
    # the old path still a module (now a package): nothing moved for users
    got = facts(
        [renamed("pkg/util.py", "pkg/utils.py"), FileChange("pkg/util/__init__.py", "added", 1, 0)],
        {"pkg/util.py": UTIL},
        {"pkg/utils.py": UTIL, "pkg/util/__init__.py": "from pkg.utils import *\n"},
    )
    assert [k for k, *_ in got] == []
    # an unrelated __getattr__ that names something else is no shim
    other = (
        "def __getattr__(name):\n    if name == 'legacy':\n        return 1\n    raise AttributeError(name)\n"
    )
    got = facts([rename, init], {"pkg/util.py": UTIL, "pkg/__init__.py": ""},
                {"pkg/utils.py": UTIL, "pkg/__init__.py": other})  # fmt: skip
    assert got == [(K.MODULE_RENAMED, "pkg.utils", "pkg.util", False)]


def test_private_test_and_unshipped_modules_are_no_one_s_import_path():
    for old, new in (
        ("pkg/_impl.py", "pkg/_impl2.py"),  # private
        ("tests/test_util.py", "tests/test_utils.py"),  # a test
        ("scripts/tool.py", "scripts/tools.py"),  # not shipped
        ("pkg/util.py", "pkg/util/__init__.py"),  # the same import path
    ):
        assert facts([renamed(old, new)], {old: UTIL}, {new: UTIL}) == [], old
    assert facts([FileChange("pkg/_impl.py", "removed", 0, 7)], {"pkg/_impl.py": UTIL}, {"pkg/_impl.py": None}) == []  # fmt: skip


def test_describe_names_the_old_and_new_module():
    commit = Commit("o/r", SHA, "Change", "a", datetime(2026, 1, 1, tzinfo=UTC), (PARENT,),
                    (renamed("pkg/util.py", "pkg/utils.py"),))  # fmt: skip
    texts = FileTexts({(PARENT, "pkg/util.py"): UTIL, (SHA, "pkg/utils.py"): UTIL}, set())
    surface, _, _ = commit_facts(commit, texts, {"pyproject.toml": PYPROJECT}, TREE)
    assert [describe(c) for c in surface] == [
        "module renamed: pkg.utils (pkg.util → pkg.utils); no alias at pkg/utils.py"
    ]


def test_a_package_init_importing_its_own_removed_submodule_adds_no_name_removal():
    # a plugin's patch/__init__.py imports each patch module for its side effects; dropping one patch removed
    # the name `patch_distributed` from the package's __init__ too, which made a deep module's removal high
    init_before = "from pkg.patch import patch_common  # noqa: F401\nfrom pkg.patch import patch_distributed  # noqa: F401\n"
    init_after = "from pkg.patch import patch_common  # noqa: F401\n"
    got = facts(
        [
            FileChange("pkg/patch/patch_distributed.py", "removed", 0, 2),
            FileChange("pkg/patch/__init__.py", "modified", 0, 1),
        ],
        {"pkg/patch/patch_distributed.py": "import x\nx.f = 1\n", "pkg/patch/__init__.py": init_before},
        {"pkg/patch/patch_distributed.py": None, "pkg/patch/__init__.py": init_after},
        tree=[*TREE, "pkg/patch/__init__.py", "pkg/patch/patch_common.py"],
    )
    assert got == [(K.MODULE_REMOVED, "pkg.patch.patch_distributed", None, False)]
    # a name the __init__ re-exports from a module that stays is still a removal
    got = facts(
        [FileChange("pkg/patch/__init__.py", "modified", 0, 1)],
        {"pkg/patch/__init__.py": "from pkg.patch.patch_common import apply\n"},
        {"pkg/patch/__init__.py": "\n"},
        tree=[*TREE, "pkg/patch/__init__.py", "pkg/patch/patch_common.py"],
    )
    assert got == [(K.REMOVED, "pkg.patch.apply", None, False)]
