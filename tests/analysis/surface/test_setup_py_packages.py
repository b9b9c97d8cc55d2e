"""What a setup.py that computes its packages ships: the shapes real build scripts of compilers and native
projects take (rewritten, names changed), read statically, with the plausible fallback where they compute."""

from __future__ import annotations

import pytest

from analysis.surface.packaging import read_packaging
from analysis.surface.setup_py_packages import setup_py_packages

HEAD = "import os\nfrom setuptools import setup, find_packages\n"


def shipped(setup: str, tree: list[str], changed: list[str]) -> frozenset[str] | None:
    packaging = read_packaging({"setup.py": HEAD + setup}, ["setup.py", *tree])
    return None if packaging is None else packaging.shipped(changed)


# A compiler whose Python package lives under python/, its backends under third_party/<name>/backend, mapped in
# by a generator over a backend list read at build time; the profiler mapped by a literal pair.
GENERATOR = """
backends = [prepare(b) for b in os.environ.get("BACKENDS", "gpu,cpu").split(",")]

def get_package_dirs():
    yield ("", "python")
    for backend in backends:
        yield (f"kc.backends.{backend.name}", backend.backend_dir)
    yield ("kc.profiler", "third_party/prof/prof")

def get_packages():
    yield from find_packages(where="python")
    for backend in backends:
        yield f"kc.backends.{backend.name}"
    yield "kc.profiler"

setup(name="kc", packages=list(get_packages()), package_dir=dict(get_package_dirs()))
"""
GENERATOR_TREE = [
    "python/kc/__init__.py",
    "python/kc/language/__init__.py",
    "python/kc/language/core.py",
    "python/test/unit/__init__.py",
    "python/test/unit/test_core.py",
    "python/tutorials/01-add.py",
    "third_party/gpu/backend/__init__.py",
    "third_party/gpu/backend/compiler.py",
    "third_party/gpu/lib/Dialect.cpp",
    "third_party/prof/prof/__init__.py",
    "third_party/prof/prof/viewer.py",
    "third_party/prof/test/__init__.py",
    "third_party/prof/test/test_viewer.py",
    "bench/__init__.py",
    "bench/run.py",
    "docs/conf.py",
]


def test_a_generator_of_find_packages_and_backend_names_with_computed_folders():
    got = shipped(GENERATOR, GENERATOR_TREE, [p for p in GENERATOR_TREE if p.endswith(".py")])
    assert got == {
        "python/kc/__init__.py",
        "python/kc/language/__init__.py",
        "python/kc/language/core.py",  # find_packages(where="python")
        "third_party/prof/prof/__init__.py",
        "third_party/prof/prof/viewer.py",  # the literal pair
        "third_party/gpu/backend/__init__.py",
        "third_party/gpu/backend/compiler.py",  # a computed folder: plausibly shipped
    }  # not the tests, the tutorials, the benchmarks or the docs


def test_the_generator_is_read_to_its_literal_parts():
    read = setup_py_packages(HEAD + GENERATOR)
    assert read.packages.names == ("kc.profiler",) and read.packages.computed
    [find] = read.packages.finds
    assert find.where == ("python",)
    assert read.package_dir == {"": "python", "kc.profiler": "third_party/prof/prof"}
    assert read.package_dir_computed


def test_a_variable_built_from_find_packages_with_name_bound_lists_and_extends():
    # a deep-learning framework: packages found inside a function, with includes and excludes extended
    # under a build flag, returned in a tuple and unpacked in main()
    setup = """
def configure():
    includes = ["core", "core.*", "gen", "gen.*"]
    excludes = ["tools", "tools.*", "legacy", "legacy.*"]
    if flag("BUILD_EXTRA"):
        includes.extend(["extra", "extra.*"])
    packages = find_packages(include=includes, exclude=excludes)
    return packages, {}

def main():
    packages, cmdclass = configure()
    setup(name="core", packages=packages, cmdclass=cmdclass)
"""
    tree = [
        "core/__init__.py", "core/nn/__init__.py", "core/nn/linear.py", "gen/__init__.py", "gen/model.py",
        "extra/__init__.py", "extra/ops.py", "legacy/__init__.py", "legacy/old.py", "benchmarks/__init__.py",
        "benchmarks/b.py", "test/test_nn.py",
    ]  # fmt: skip
    got = shipped(setup, tree, ["core/nn/linear.py", "gen/model.py", "extra/ops.py", "legacy/old.py",
                                "benchmarks/b.py", "test/test_nn.py"])  # fmt: skip
    assert got == {"core/nn/linear.py", "gen/model.py", "extra/ops.py"}  # read exactly: no fallback needed


def test_find_packages_with_a_named_exclude_list_plus_a_literal():
    setup = """
EXCLUDES = ["hosttests", "hosttests.*"]
setup(name="host", packages=find_packages(exclude=EXCLUDES) + ["plugins"])
"""
    tree = ["host/__init__.py", "host/run.py", "hosttests/__init__.py", "hosttests/test_run.py",
            "plugins/__init__.py", "plugins/p.py"]  # fmt: skip
    got = shipped(setup, tree, ["host/run.py", "hosttests/test_run.py", "plugins/p.py"])
    assert got == {"host/run.py", "plugins/p.py"}  # the named exclude list counts


def test_a_function_returning_a_literal_list_and_a_package_dir_function():
    setup = """
def get_packages():
    return ["suite.client", "suite.client.shared", "suite"]

def get_package_dir():
    return {"suite.client": "client", "suite": "."}

def run():
    setup(name="suite", package_dir=get_package_dir(), packages=get_packages())
"""
    tree = ["__init__.py", "client/__init__.py", "client/shared/__init__.py", "client/shared/util.py",
            "client/tests/test_util.py"]  # fmt: skip
    packaging = read_packaging({"setup.py": HEAD + setup}, ["setup.py", *tree])
    # a subpackage is taken from its nearest mapped parent's folder: client/shared/
    assert packaging.shipped(["client/shared/util.py"]) == {"client/shared/util.py"}


def test_loops_over_a_literal_list_with_string_concatenation_and_fstrings():
    setup = """
TOP = "radio"
PLUGINS = ("Amble", "Hide")
def get_packages():
    packages = [TOP]
    for sub in ["ui", "dev"]:
        packages.append(TOP + "." + sub)
    packages += [f"{TOP}.plugins.{p}" for p in PLUGINS]
    return packages

setup(name="radio", package_dir={"": "src"}, packages=get_packages())
"""
    read = setup_py_packages(HEAD + setup)
    assert set(read.packages.names) == {"radio", "radio.ui", "radio.dev", "radio.plugins.Amble",
                                        "radio.plugins.Hide"}  # fmt: skip
    assert not read.packages.computed
    tree = ["src/radio/__init__.py", "src/radio/ui/__init__.py", "src/radio/ui/view.py", "tests/test_view.py",
            "src/extra/__init__.py", "src/extra/x.py"]  # fmt: skip
    got = shipped(setup, tree, ["src/radio/ui/view.py", "tests/test_view.py", "src/extra/x.py"])
    # read exactly, as setuptools would: a package the list does not name is not shipped
    assert got == {"src/radio/ui/view.py"}


@pytest.mark.parametrize(
    "setup",
    [
        # os.walk over the package folder
        "def get_packages():\n    out = []\n    for root, dirs, files in os.walk('lub'):\n"
        "        if '__init__.py' in files:\n            out.append(root.replace('/', '.'))\n    return out\n"
        "setup(name='lub', packages=get_packages())\n",
        # the file's own recursive find_packages over os.listdir, shadowing setuptools'
        "def find_packages(root_dir, root_name):\n    packages = []\n    def rec(path, name):\n"
        "        packages.append(name)\n        for fn in os.listdir(path):\n            rec(path + '/' + fn, name + '.' + fn)\n"
        "    rec(root_dir, root_name)\n    return packages\n"
        "packages = find_packages('lub', 'lub')\nsetup(name='lub', packages=packages)\n",
        # a renaming loop over find_packages' result
        "target = []\nfor p in find_packages(exclude=('tests*',)):\n    target.append(p.replace('lub', 'lub2'))\n"
        "setup(name='lub', packages=target)\n",
        # setup(**metadata) with a computed list
        "metadata = dict(name='lub', packages=sorted(compute()))\nsetup(**metadata)\n",
    ],
)
def test_computed_packages_fall_back_to_the_plausible_folders(setup):
    tree = ["lub/__init__.py", "lub/core/__init__.py", "lub/core/step.py", "lub/tests/__init__.py",
            "lub/tests/test_step.py", "examples/__init__.py", "examples/demo.py", "scripts/__init__.py",
            "scripts/release.py", ".github/x/__init__.py"]  # fmt: skip
    got = shipped(setup, tree, ["lub/core/step.py", "lub/tests/test_step.py", "examples/demo.py",
                                "scripts/release.py"])  # fmt: skip
    assert got == {"lub/core/step.py"}


def test_a_metadata_dict_passed_as_keywords_is_read():
    setup = "metadata = dict(name='lib', packages=['lib'])\nsetup(**metadata)\n"
    tree = ["lib/__init__.py", "lib/x.py", "other/__init__.py", "other/y.py"]
    assert shipped(setup, tree, ["lib/x.py", "other/y.py"]) == {"lib/x.py"}  # not automatic discovery


def test_package_dir_with_automatic_discovery_is_the_src_layout():
    setup = "setup(name='lib', package_dir={'': 'python'})\n"
    tree = ["python/lib/__init__.py", "python/lib/x.py", "examples/e.py", "lib_tools/__init__.py"]
    assert shipped(setup, tree, ["python/lib/x.py", "examples/e.py", "lib_tools/__init__.py"]) == {
        "python/lib/x.py"
    }


def test_unknown_stays_where_there_is_nothing_to_fall_back_on():
    computed = "setup(name='lib', packages=compute())\n"
    assert read_packaging({"setup.py": HEAD + computed}) is None  # no tree: no folders to look at
    # no folder holds __init__.py: the computed packages are nowhere to be seen
    assert read_packaging({"setup.py": HEAD + computed}, ["setup.py", "lib/x.py", "examples/e.py"]) is None
