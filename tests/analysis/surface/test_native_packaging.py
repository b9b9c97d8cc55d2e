"""What a native-extension distribution ships: setuptools' `Extension(...)` sources and include folders,
an extension CMake builds from setup.py, meson-python's `meson.build` installs; and the requirements of building
from source, which are everyone's who builds it."""

from __future__ import annotations

from analysis.models import SurfaceKind as K
from analysis.surface.commit import FileVersions, commit_surface
from analysis.surface.packaging import read_packaging
from analysis.surface.packaging_files import is_build_requirements, is_dev_requirements, packaging_paths
from analysis.surface.packaging_texts import setup_py_extensions
from analysis.surface.requirements import dependency_changes, packaging_changes

SETUPTOOLS = '[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
PYBIND_SETUP = """\
from glob import glob

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import find_packages, setup

ext_modules = [
    Pybind11Extension(
        "ncc._core",
        sorted(glob("src/*.cpp")),
        include_dirs=["include"],
        cxx_std=17,
    ),
]

setup(
    packages=find_packages(where="python"),
    package_dir={"": "python"},
    ext_modules=ext_modules,
    cmdclass={"build_ext": build_ext},
)
"""
NATIVE_TREE = [
    "pyproject.toml", "setup.py", "include/ncc/ir.h", "include/ncc/detail/impl.hpp", "src/ir.cpp",
    "src/bindings.cpp", "src/tools/gen.cpp", "python/ncc/__init__.py", "python/ncc/compiler.py",
    "tests/test_compiler.py", "tests/native/check.cpp", "docs/api.md", "bench/speed.cpp",
]  # fmt: skip


def shipped(files: dict[str, str], tree: list[str]) -> set[str]:
    packaging = read_packaging(files, tree)
    assert packaging is not None
    found = packaging.shipped(tree)
    assert found is not None
    return set(found)


def test_a_pybind11_extension_ships_its_globbed_sources_and_the_headers_of_its_include_dirs() -> None:
    # a compiler's Python bindings built by setuptools: its headers and sources were read as not shipped, so a
    # public function removed from `include/` was "nothing users run"
    assert shipped({"pyproject.toml": SETUPTOOLS, "setup.py": PYBIND_SETUP}, NATIVE_TREE) == {
        "include/ncc/ir.h", "include/ncc/detail/impl.hpp", "src/ir.cpp", "src/bindings.cpp",
        "python/ncc/__init__.py", "python/ncc/compiler.py",
    }  # fmt: skip
    # `src/*.cpp` is one folder deep, as glob() reads it: a generator beside it is not compiled in


def test_extension_sources_spelled_by_names_joins_and_sums_are_read_and_computed_ones_left_out() -> None:
    text = """\
import os
from setuptools import Extension, setup
from torch.utils.cpp_extension import CUDAExtension, CppExtension
import numpy as np

CORE = ["src/ir.cpp", os.path.join("src", "bindings.cpp")]
KERNELS = [f"csrc/{name}.cu" for name in ("add", "mul")]
setup(
    name="ncc",
    packages=["ncc"],
    ext_modules=[
        Extension("ncc._core", sources=CORE + ["src/extra.c"], include_dirs=[np.get_include(), "include"]),
        CppExtension("ncc._ops", ["csrc/ops.cpp"], depends=["csrc/ops.h"]),
        CUDAExtension("ncc._kernels", KERNELS),
    ],
)
"""
    found = setup_py_extensions(text)
    assert found.sources == ("src/ir.cpp", "src/bindings.cpp", "src/extra.c", "csrc/ops.cpp", "csrc/ops.h")
    assert found.include_dirs == ("include",)
    assert found.cmake_dirs == ()
    tree = ["setup.py", "ncc/__init__.py", "src/ir.cpp", "src/bindings.cpp", "csrc/ops.cpp", "csrc/add.cu"]
    assert shipped({"setup.py": text}, tree) == {
        "ncc/__init__.py",
        "src/ir.cpp",
        "src/bindings.cpp",
        "csrc/ops.cpp",
    }
    # a setup.py that does not parse reads as one without extensions
    assert not setup_py_extensions("setup(ext_modules=[Extension(\n")


def test_an_extension_cmake_builds_from_setup_py_ships_the_native_tree_but_its_tests() -> None:
    # a compiler's layout: C++ under lib/ and include/, TableGen files, lit tests under test/
    text = """\
import os
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class CMakeExtension(Extension):
    def __init__(self, name, sourcedir=""):
        super().__init__(name, sources=[])
        self.sourcedir = os.path.abspath(sourcedir)


setup(packages=["ncc"], package_dir={"": "python"}, ext_modules=[CMakeExtension("ncc._C")])
"""
    assert setup_py_extensions(text).cmake_dirs == ("",)
    tree = [
        "setup.py", "CMakeLists.txt", "lib/IR/Ops.cpp", "include/ncc/Ops.td", "include/ncc/Ops.h",
        "python/ncc/__init__.py", "test/Dialect/ops.mlir", "test/lit.cfg.py", "unittests/IRTest.cpp",
        "docs/Passes.md", "utils/release.sh",
    ]  # fmt: skip
    assert shipped({"setup.py": text}, tree) == {
        "CMakeLists.txt", "lib/IR/Ops.cpp", "include/ncc/Ops.td", "include/ncc/Ops.h", "python/ncc/__init__.py",
    }  # fmt: skip
    # a source folder named by the extension is the one built
    named = text.replace('CMakeExtension("ncc._C")', 'CMakeExtension("ncc._C", sourcedir="native")')
    assert setup_py_extensions(named).cmake_dirs == ("native",)
    tree = ["setup.py", "native/CMakeLists.txt", "native/core.cpp", "tools/gen.cpp", "python/ncc/__init__.py"]
    assert shipped({"setup.py": named}, tree) == {
        "native/CMakeLists.txt",
        "native/core.cpp",
        "python/ncc/__init__.py",
    }
    # positionally, the subclass's own parameters: CMakeExtension(name, path, sourcedir="") takes a path inside
    # the package second, not a source (read as one, it hid the CMake build: no native file shipped)
    by_path = text.replace(
        'def __init__(self, name, sourcedir=""):', 'def __init__(self, name, path, sourcedir=""):'
    )
    by_path = by_path.replace('CMakeExtension("ncc._C")', 'CMakeExtension("ncc", "ncc/_C/")')
    found = setup_py_extensions(by_path)
    assert (found.sources, found.cmake_dirs) == ((), ("",))
    by_dir = text.replace('CMakeExtension("ncc._C")', 'CMakeExtension("ncc._C", "native")')
    assert setup_py_extensions(by_dir).cmake_dirs == ("native",)


def test_pyproject_ext_modules_and_setup_headers_ship() -> None:
    pyproject = (
        SETUPTOOLS + '[project]\nname = "ncc"\n[tool.setuptools]\npackages = ["ncc"]\n'
        '[[tool.setuptools.ext-modules]]\nname = "ncc._core"\nsources = ["src/core.c"]\n'
        'include-dirs = ["include"]\n'
    )
    tree = ["pyproject.toml", "ncc/__init__.py", "src/core.c", "src/unused.c", "include/ncc.h"]
    assert shipped({"pyproject.toml": pyproject}, tree) == {"ncc/__init__.py", "src/core.c", "include/ncc.h"}
    setup = 'from setuptools import setup\nsetup(packages=["ncc"], headers=["include/ncc.h"])\n'
    assert shipped({"setup.py": setup}, tree) == {"ncc/__init__.py", "include/ncc.h"}


def test_a_public_function_removed_from_an_extensions_header_is_a_removal() -> None:
    packaging = read_packaging({"pyproject.toml": SETUPTOOLS, "setup.py": PYBIND_SETUP}, NATIVE_TREE)
    assert packaging is not None
    before = "namespace ncc {\nint parse(const char* text);\nint verify(int module, bool strict);\n}\n"
    after = "namespace ncc {\nint parse(const char* text);\n}\n"
    files = [FileVersions("include/ncc/ir.h", before, after)]
    found = commit_surface(files, packaging, packaging.shipped(["include/ncc/ir.h"]))
    assert {(c.kind, c.name) for c in found} == {(K.REMOVED, "ncc::verify")}
    assert all(c.breaking for c in found)


MESON_PYPROJECT = (
    '[build-system]\nrequires = ["meson-python>=0.15", "pybind11"]\nbuild-backend = "mesonpy"\n'
    '[project]\nname = "ncc"\n'
)
MESON_TOP = """\
project('ncc', 'cpp', version: '0.4.0', default_options: ['cpp_std=c++17'])

py = import('python').find_installation(pure: false)
inc = include_directories('include')  # the public headers

if get_option('with_tools')
  executable('ncc-gen', 'tools/gen.cpp')
endif

subdir('src')
subdir('python')
"""
MESON_SRC = """\
core_sources = files(
  'ir.cpp',
  'bindings.cpp',
)
core_sources += files('passes.cpp')
py.extension_module(
  '_core',
  core_sources,
  include_directories: inc,
  install: true,
  subdir: 'ncc',
)
"""
MESON_PYTHON = """\
py.install_sources(
  ['ncc/__init__.py', 'ncc/compiler.py'],
  subdir: 'ncc',
  preserve_path: false,
)
install_subdir('ncc' / 'passes', install_dir: py.get_install_dir() / 'ncc')
"""
MESON_TREE = [
    "pyproject.toml", "meson.build", "src/meson.build", "python/meson.build", "include/ncc/ir.h",
    "src/ir.cpp", "src/bindings.cpp", "src/passes.cpp", "src/unused.cpp", "tools/gen.cpp",
    "python/ncc/__init__.py", "python/ncc/compiler.py", "python/ncc/draft.py", "python/ncc/passes/fold.py",
    "tests/meson.build", "tests/test_ir.py",
]  # fmt: skip


def test_meson_python_ships_what_its_meson_build_files_install() -> None:
    files = {
        "pyproject.toml": MESON_PYPROJECT,
        "meson.build": MESON_TOP,
        "src/meson.build": MESON_SRC,
        "python/meson.build": MESON_PYTHON,
    }
    packaging = read_packaging(files, MESON_TREE)
    assert packaging is not None
    assert set(packaging.shipped(MESON_TREE) or ()) == {
        "include/ncc/ir.h", "src/ir.cpp", "src/bindings.cpp", "src/passes.cpp", "python/ncc/__init__.py",
        "python/ncc/compiler.py", "python/ncc/passes/fold.py",
    }  # fmt: skip
    # a module no install_sources() names is not in the wheel; the tool built only on request is no part of it
    assert packaging.module_name("python/ncc/compiler.py") == "ncc.compiler"
    assert packaging.module_name("python/ncc/passes/fold.py") == "ncc.passes.fold"
    # without the top meson.build, what is installed is not known
    assert read_packaging({"pyproject.toml": MESON_PYPROJECT}, MESON_TREE) is None
    # nor when a meson.build a subdir() reaches is in the tree but was not read (past the bound)
    partial = {k: v for k, v in files.items() if k != "python/meson.build"}
    assert read_packaging(partial, MESON_TREE) is None


def test_the_meson_build_files_are_read_with_the_packaging_but_not_those_of_tests() -> None:
    assert packaging_paths(["src/ir.cpp"], MESON_TREE) == [
        "meson.build",
        "pyproject.toml",
        "python/meson.build",
        "src/meson.build",
    ]


def test_build_requirements_are_everyones_who_builds_from_source() -> None:
    for path in ("requirements-build.txt", "requirements/build.txt", "build-requirements.in"):
        assert is_build_requirements(path) and not is_dev_requirements(path), path
    # a docs build's requirements, a task's folder and other words are not
    for path in ("requirements-docs-build.txt", "requirements/dev/build.txt", "requirements/rebuild.txt"):
        assert not is_build_requirements(path), path
    changes = dependency_changes("requirements/build.txt", "cmake>=3.24\nninja\n", "cmake>=3.26\nninja\n")
    assert [(c.name, c.scope, c.new) for c in changes] == [("cmake", "build", "cmake>=3.26")]
    facts = packaging_changes("requirements-build.txt", "torch==2.8.0\n", "torch==3.0.0\n")
    # a newer build requirement is no support of users dropped: a dependency changed, stated as such
    assert [(c.kind, c.name) for c in facts] == [(K.DEPENDENCY_CHANGED, "torch")]


def test_the_native_trees_tests_are_left_out_but_not_a_python_package_named_like_them() -> None:
    # a CMake-built extension's setup.py: `pkg/benchmarks/` is a subpackage of what ships (the `pkg bench`
    # command), not the native tree's benchmarks
    text = 'from setuptools import setup\nsetup(packages=["pkg", "pkg.benchmarks"], ext_modules=[CMakeExtension("pkg._C")])\n'
    tree = [
        "setup.py",
        "pkg/__init__.py",
        "pkg/benchmarks/serve.py",
        "csrc/ops.cu",
        "benchmarks/kernels/bench.cu",
    ]
    assert shipped({"setup.py": text}, tree) == {"pkg/__init__.py", "pkg/benchmarks/serve.py", "csrc/ops.cu"}
    backend = '[build-system]\nbuild-backend = "scikit_build_core.build"\n[project]\nname = "pkg"\n'
    assert shipped({"pyproject.toml": backend}, tree) == {
        "pkg/__init__.py",
        "pkg/benchmarks/serve.py",
        "csrc/ops.cu",
    }


def test_a_tablegen_dialect_inside_a_python_distribution_keeps_its_operations_and_pass_options() -> None:
    # a compiler wrapped by a Python package: its C++ flags are no command line users type, but the dialect's
    # operations and passes a TableGen file declares are what users write in their IR
    text = (
        "from setuptools import Extension, setup\n"
        "class CMakeExtension(Extension):\n    def __init__(self, name, sourcedir=''):\n"
        "        super().__init__(name, sources=[])\n"
        "setup(packages=['ncc'], package_dir={'': 'python'}, ext_modules=[CMakeExtension('ncc._C')])\n"
    )
    tree = ["setup.py", "CMakeLists.txt", "include/ncc/Ops.td", "lib/Pass.cpp", "python/ncc/__init__.py"]
    packaging = read_packaging({"setup.py": text}, tree)
    ops = 'class N_Op<string m> : Op<N_Dialect, m>;\ndef N_LoadOp : N_Op<"load">;\ndef N_FenceOp : N_Op<"fence">;\n'
    cpp = 'static cl::opt<bool> Fuse("fuse-loops", cl::init(true));\nbool debug() { return getenv("NCC_DEBUG"); }\n'
    files = [
        FileVersions("include/ncc/Ops.td", ops, ops.replace('def N_FenceOp : N_Op<"fence">;\n', "")),
        FileVersions("lib/Pass.cpp", cpp, ""),
    ]
    found = commit_surface(files, packaging, packaging.shipped(["include/ncc/Ops.td", "lib/Pass.cpp"]))
    names = {(c.kind, c.name) for c in found}
    assert (K.REMOVED, "N_FenceOp") in names  # the operation
    assert not any("fuse-loops" in c.name for c in found)  # the extension's own flag: not the users'
    assert any("NCC_DEBUG" in c.name for c in found)  # an environment variable still is
