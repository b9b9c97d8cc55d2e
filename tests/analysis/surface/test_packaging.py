"""What a distribution ships, and the packaging facts users feel (supported versions, dependencies)."""

from __future__ import annotations

import json

import pytest

from analysis.models import SurfaceKind as K
from analysis.surface.packaging import read_packaging
from analysis.surface.packaging_files import is_dev_requirements, packaging_paths
from analysis.surface.requirements import dependency_changes, installs_on, packaging_changes

TREE = [
    "pyproject.toml",
    "engine/__init__.py",
    "engine/core.py",
    "engine/sample/__init__.py",
    "engine/sample/sampler.py",
    "docs_examples/tutorial_one/__init__.py",
    "docs_examples/tutorial_one/app.py",
    "examples/offline.py",
    "tests/__init__.py",
    "tests/test_core.py",
    "README.md",
]
CHANGED = [
    "engine/sample/sampler.py",
    "docs_examples/tutorial_one/app.py",
    "examples/offline.py",
    "tests/test_core.py",
    "README.md",
]


def shipped(pyproject: str, tree=TREE, changed=CHANGED, **more: str):
    packaging = read_packaging({"pyproject.toml": pyproject, **more}, tree)
    assert packaging is not None
    return packaging.shipped(changed)


@pytest.mark.parametrize(
    "pyproject",
    [
        # setuptools, explicit discovery
        '[build-system]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "engine"\n'
        '[tool.setuptools.packages.find]\nwhere = ["."]\ninclude = ["engine*"]\n',
        # setuptools, a package list
        '[build-system]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "engine"\n'
        '[tool.setuptools]\npackages = ["engine", "engine.sample"]\n',
        # setuptools' automatic discovery: top-level packages, without its own excluded names
        '[build-system]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "engine"\n',
        # hatch's default: the package named after the project
        '[build-system]\nbuild-backend = "hatchling.build"\n[project]\nname = "engine"\n',
        # pdm-backend: source-includes go to the sdist only
        '[build-system]\nbuild-backend = "pdm.backend"\n[project]\nname = "engine"\n'
        '[tool.pdm.build]\nsource-includes = ["tests/", "docs_examples/"]\n',
        # poetry
        '[tool.poetry]\nname = "engine"\npackages = [{include = "engine"}]\n'
        '[build-system]\nbuild-backend = "poetry.core.masonry.api"\n',
        # flit
        '[build-system]\nbuild-backend = "flit_core.buildapi"\n[project]\nname = "engine"\n',
    ],
)
def test_an_example_tree_beside_the_package_is_not_shipped_and_a_sample_package_is(pyproject):
    assert shipped(pyproject) == frozenset({"engine/sample/sampler.py"})


def test_pdm_backend_by_default_ships_every_top_level_package_but_its_tests():
    # pdm-backend without includes: the top-level packages, `tests/` to the sdist only
    pyproject = '[build-system]\nbuild-backend = "pdm.backend"\n[project]\nname = "engine"\n'
    assert shipped(pyproject, tree=[*TREE, "docs_examples/__init__.py"]) == frozenset(
        {"engine/sample/sampler.py", "docs_examples/tutorial_one/app.py"}
    )


def test_src_layout_module_names_and_maturin_rust_sources():
    tree = ["pyproject.toml", "src/engine/__init__.py", "src/engine/api.py", "docs/index.md"]
    packaging = read_packaging(
        {
            "pyproject.toml": '[build-system]\nbuild-backend = "hatchling.build"\n[project]\nname = "engine"\n'
            '[tool.hatch.build.targets.wheel]\npackages = ["src/engine"]\n'
        },
        tree,
    )
    assert packaging.shipped(["src/engine/api.py", "docs/index.md"]) == {"src/engine/api.py"}
    assert packaging.module_name("src/engine/api.py") == "engine.api"
    core = read_packaging(
        {
            "core/pyproject.toml": '[build-system]\nbuild-backend = "maturin"\n[project]\nname = "fast_core"\n'
            '[tool.maturin]\npython-source = "python"\nmodule-name = "fast_core._native"\n'
        },
        [
            "core/pyproject.toml",
            "core/src/lib.rs",
            "core/python/fast_core/__init__.py",
            "core/tests/test_x.py",
        ],
    )
    assert core.shipped(["core/src/lib.rs", "core/python/fast_core/__init__.py", "core/tests/test_x.py"]) == {
        "core/src/lib.rs",
        "core/python/fast_core/__init__.py",
    }
    assert core.module_name("core/python/fast_core/__init__.py") == "fast_core"


def test_the_nearest_packaging_file_decides_in_a_monorepo():
    files = {
        "pyproject.toml": '[build-system]\nbuild-backend = "hatchling.build"\n[project]\nname = "app"\n',
        "libs/core/pyproject.toml": '[build-system]\nbuild-backend = "hatchling.build"\n[project]\nname = "core"\n',
    }
    tree = [
        "pyproject.toml",
        "app/__init__.py",
        "libs/core/pyproject.toml",
        "libs/core/core/__init__.py",
        "libs/core/docs/a.md",
    ]
    packaging = read_packaging(files, tree)
    assert packaging.shipped(["app/__init__.py", "libs/core/core/__init__.py", "libs/core/docs/a.md"]) == {
        "app/__init__.py",
        "libs/core/core/__init__.py",
    }
    assert packaging_paths(["libs/core/core/x.py"], tree) == ["libs/core/pyproject.toml", "pyproject.toml"]


def test_setup_cfg_and_setup_py_literals():
    cfg = "[options]\npackages = find:\npackage_dir =\n    =src\n[options.packages.find]\nwhere = src\n"
    tree = ["setup.cfg", "src/lib/__init__.py", "src/lib/x.py", "examples/e.py"]
    assert read_packaging({"setup.cfg": cfg}, tree).shipped(["src/lib/x.py", "examples/e.py"]) == {
        "src/lib/x.py"
    }
    setup = "from setuptools import setup, find_packages\nsetup(name='lib', packages=find_packages(exclude=['tests*']))\n"
    tree = ["setup.py", "lib/__init__.py", "lib/x.py", "tests/__init__.py", "tests/t.py", "tools/gen.py"]
    assert read_packaging({"setup.py": setup}, tree).shipped(["lib/x.py", "tests/t.py", "tools/gen.py"]) == {
        "lib/x.py"
    }
    computed = "from setuptools import setup\nsetup(name='lib', packages=compute())\n"
    # computed where it cannot be read: the folders setuptools would plausibly ship (test_setup_py_packages.py)
    assert read_packaging({"setup.py": computed}, tree).shipped(
        ["lib/x.py", "tests/t.py", "tools/gen.py"]
    ) == {"lib/x.py"}
    assert read_packaging({"setup.py": computed}) is None  # without the tree there is nothing to look at


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("python/setup.py", "from setuptools import setup\nsetup(name='mc', packages=['mc'], package_dir={'': '.'})\n"),
        ("python/pyproject.toml", '[project]\nname = "mc"\n[tool.setuptools]\npackages = ["mc"]\n'
         '[tool.setuptools.package-dir]\n"" = "./src"\n'),
        ("python/pyproject.toml", '[build-system]\nbuild-backend = "hatchling.build"\n[project]\nname = "mc"\n'
         '[tool.hatch.build.targets.wheel]\npackages = ["./src/mc"]\n'),
        ("python/pyproject.toml", '[tool.poetry]\nname = "mc"\npackages = [{include = "mc", from = "./src/"}]\n'
         '[build-system]\nbuild-backend = "poetry.core.masonry.api"\n'),
        ("python/pyproject.toml", '[build-system]\nbuild-backend = "pdm.backend"\n[project]\nname = "mc"\n'
         '[tool.pdm.build]\npackage-dir = "./src"\n'),
    ],
)  # fmt: skip
def test_a_folder_written_with_dot_slash_is_the_same_folder(path, text):
    # `./src` is how many write it; read as `python/./src/mc/` it matched no path and the package shipped nothing
    folder = "python/" if "setup.py" in path else "python/src/"
    tree = [path, f"{folder}mc/__init__.py", f"{folder}mc/core.py", "python/tests/test_core.py"]
    packaging = read_packaging({path: text}, tree)
    assert packaging is not None
    assert packaging.shipped([f"{folder}mc/core.py", "python/tests/test_core.py"]) == {f"{folder}mc/core.py"}


def test_npm_cargo_and_go():
    npm = json.dumps(
        {"name": "kit", "files": ["dist/"], "main": "dist/index.js", "exports": {".": "./dist/index.js"}}
    )
    packaging = read_packaging({"package.json": npm})
    assert packaging.shipped(["dist/index.js", "src/index.ts", "examples/demo.js"]) == {"dist/index.js"}
    assert read_packaging({"package.json": json.dumps({"name": "site", "private": True})}) is None
    cargo = '[package]\nname = "kit"\nversion = "0.1.0"\n'
    assert read_packaging({"Cargo.toml": cargo}).shipped(["src/lib.rs", "examples/a.rs", "benches/b.rs"]) == {
        "src/lib.rs"
    }
    gomod = "module example.com/kit\n\ngo 1.21\n"
    assert read_packaging({"go.mod": gomod}).shipped(
        ["kit.go", "kit_test.go", "testdata/x.go", "cmd/kit/main.go"]
    ) == {
        "kit.go",
        "cmd/kit/main.go",
    }


def test_an_npm_package_that_publishes_its_build_output_ships_its_sources():
    # `files: ["dist"]` names the compiled output, which git ignores: removing an exported function from
    # src/router.ts was "no user-facing change found". The sources are what users get, compiled.
    npm = json.dumps(
        {"name": "webfw", "main": "dist/index.js", "types": "dist/index.d.ts", "files": ["dist"]}
    )
    tree = ["package.json", "src/index.ts", "src/router.ts", "docs/guide.md", "test/router.test.ts"]
    assert read_packaging({"package.json": npm}, tree) is None  # not understood: the paths' kinds decide
    committed = ["package.json", "dist/index.js", "src/index.ts"]  # a package that commits its build
    assert read_packaging({"package.json": npm}, committed).shipped(["dist/index.js", "src/index.ts"]) == {
        "dist/index.js"
    }
    # what npm publishes whatever `files` says, and prose, say nothing about the code
    with_prose = json.dumps(
        {"name": "webfw", "main": "dist/index.js", "files": ["dist", "README.md", "LICENSE"]}
    )
    assert read_packaging({"package.json": with_prose}, [*tree, "README.md", "LICENSE"]) is None
    globbed = json.dumps({"name": "kit", "files": ["lib/**/*.js"]})
    assert read_packaging({"package.json": globbed}, ["package.json", "lib/a/b.js"]).shipped(
        ["lib/a/b.js"]
    ) == {"lib/a/b.js"}


def test_an_npm_package_publishing_a_build_folder_beside_a_tracked_script_is_not_understood():
    # `files: ["dist", "bin"]`: bin/cli.js is tracked, dist/ is the untracked build of src/. Read as
    # "ships bin/ only", a removed export of src/app.ts was no change users get.
    npm = json.dumps({"name": "webfw", "main": "./dist/index.js", "bin": {"webfw": "./bin/cli.js"},
                      "exports": {".": "./dist/index.js"}, "files": ["dist", "bin"]})  # fmt: skip
    tree = ["package.json", "bin/cli.js", "src/app.ts", "src/index.ts", "test/app.test.ts"]
    assert read_packaging({"package.json": npm}, tree) is None  # the paths' kinds decide
    # a build committed beside a generated file it lacks (types) still reads as what it publishes
    committed = ["package.json", "bin/cli.js", "dist/index.js", "src/app.ts"]
    assert read_packaging({"package.json": npm}, committed).shipped(["dist/index.js", "src/app.ts"]) == {
        "dist/index.js"
    }


def test_a_private_package_json_inside_the_repository_ships_nothing():
    files = {
        "pyproject.toml": '[build-system]\nbuild-backend = "hatchling.build"\n[project]\nname = "engine"\n',
        "docs/site/package.json": json.dumps({"name": "docs-site", "private": True}),
    }
    packaging = read_packaging(files, ["pyproject.toml", "engine/__init__.py", "docs/site/package.json"])
    assert packaging.shipped(["docs/site/src/page.js", "engine/__init__.py"]) == {"engine/__init__.py"}


def test_no_packaging_file_means_unknown():
    assert read_packaging({}) is None
    # a pyproject.toml holding only tools' settings builds nothing: no distribution, the paths' kinds decide
    assert (
        read_packaging({"pyproject.toml": "[tool.ruff]\nline-length = 100\n"}, ["pyproject.toml", "a.py"])
        is None
    )
    # with project metadata, a build system or a build tool's table it is one (PEP 517's setuptools fallback)
    for text in (
        '[project]\nname = "a"\n',
        '[build-system]\nrequires = ["setuptools"]\n',
        "[tool.setuptools]\n",
    ):
        assert read_packaging({"pyproject.toml": text}, ["pyproject.toml", "a.py"]) is not None
    # the same for setup.cfg: its [flake8] section is a linter's; [metadata] or [options] make a distribution
    assert read_packaging({"setup.cfg": "[flake8]\nmax-line-length = 100\n"}, ["setup.cfg", "a.py"]) is None
    assert read_packaging({"setup.cfg": "[metadata]\nname = a\n"}, ["setup.cfg", "a.py"]) is not None


def test_a_folders_tool_settings_do_not_make_its_scripts_shipped():
    # vllm: benchmarks/pyproject.toml holds ruff's settings for the benchmark scripts; read as a distribution
    # it shipped them, and a typo fix in their comments ranked as a change users run.
    files = {
        "pyproject.toml": '[build-system]\nrequires = ["setuptools"]\n[tool.setuptools.packages.find]\n'
        'where = ["."]\ninclude = ["engine*"]\n',
        "benchmarks/pyproject.toml": "[tool.ruff]\nline-length = 88\n[tool.ruff.lint]\nselect = ['E']\n",
    }
    tree = [
        "pyproject.toml",
        "engine/__init__.py",
        "engine/core.py",
        "benchmarks/pyproject.toml",
        "benchmarks/serve.py",
    ]
    packaging = read_packaging(files, tree)
    assert [d.root for d in packaging.distributions] == [""]
    assert packaging.shipped(["benchmarks/serve.py", "engine/core.py"]) == {"engine/core.py"}


# --- supported versions -----------------------------------------------------------------------------


def test_requires_python_raised_drops_support():
    before = '[project]\nname = "lib"\nrequires-python = ">=3.9"\n'
    after = before.replace(">=3.9", ">=3.10")
    [change] = packaging_changes("pyproject.toml", before, after)
    assert (change.kind, change.name, change.old, change.new, change.line) == (
        K.SUPPORT_DROPPED, "Python 3.9", ">=3.9", ">=3.10", 3
    )  # fmt: skip
    assert change.breaking
    widened = before.replace(">=3.9", ">=3.8")
    [added] = packaging_changes("pyproject.toml", before, widened)
    assert (
        (added.kind, added.name) == (K.SUPPORT_ADDED, "Python 3.8") and added.feature and not added.breaking
    )


def test_a_removed_python_classifier_drops_support():
    before = '[project]\nname = "lib"\nclassifiers = [\n  "Programming Language :: Python :: 3.9",\n  "Programming Language :: Python :: 3.10",\n]\n'
    after = before.replace('  "Programming Language :: Python :: 3.9",\n', "")
    assert [c.name for c in packaging_changes("pyproject.toml", before, after)] == ["Python 3.9"]


def test_other_runtimes_minimum_raised():
    before, after = "module x\n\ngo 1.21\n", "module x\n\ngo 1.22\n"
    assert [c.name for c in packaging_changes("go.mod", before, after)] == ["Go 1.21"]
    node = lambda v: json.dumps({"engines": {"node": f">={v}"}})  # noqa: E731
    assert [c.name for c in packaging_changes("package.json", node(18), node(20))] == ["Node 18"]
    # a workspace states it once for its members (`rust-version.workspace = true`): an MSRV bump ranked low
    workspace = '[workspace]\nmembers = ["crates/*"]\n\n[workspace.package]\nrust-version = "{}"\n'
    found = packaging_changes("Cargo.toml", workspace.format("1.70"), workspace.format("1.74"))
    assert [(c.kind, c.name, c.line) for c in found] == [(K.SUPPORT_DROPPED, "Rust 1.70", 5)]


# --- dependencies -------------------------------------------------------------------------------------


def test_a_coverage_omit_list_and_tool_sections_are_not_dependencies():
    before = (
        '[project]\nname = "lib"\ndependencies = ["httpx>=0.27"]\n'
        '[tool.coverage.run]\nomit = ["lib/_vendor/*"]\n[dependency-groups]\ndev = ["pytest"]\n'
    )
    after = before.replace('omit = ["lib/_vendor/*"]', 'omit = ["lib/_vendor/*", "lib/generated/*"]').replace(
        'dev = ["pytest"]', 'dev = ["pytest", "pytest-xdist"]'
    )
    assert dependency_changes("pyproject.toml", before, after) == []
    assert packaging_changes("pyproject.toml", before, after) == []


def test_real_dependency_changes_by_scope():
    before = '[project]\nname = "lib"\ndependencies = ["httpx>=0.27", "rich"]\n[project.optional-dependencies]\nfast = ["orjson"]\n'
    after = before.replace('"httpx>=0.27", "rich"', '"httpx>=0.28", "anyio>=4"').replace(
        '"orjson"', '"orjson>=3.10"'
    )
    found = {(c.name, c.scope, c.old, c.new) for c in dependency_changes("pyproject.toml", before, after)}
    assert found == {
        ("anyio", "runtime", None, "anyio>=4"),
        ("httpx", "runtime", "httpx>=0.27", "httpx>=0.28"),
        ("rich", "runtime", "rich", None),
        ("orjson", "optional:fast", "orjson", "orjson>=3.10"),
    }
    kinds = {c.kind for c in packaging_changes("pyproject.toml", before, after)}
    # rich left the default install and no extra brings it: dropped, not merely removed
    assert kinds == {K.DEPENDENCY_ADDED, K.DEPENDENCY_CHANGED, K.DEPENDENCY_DROPPED}


def test_requirements_files_count_unless_named_for_development():
    assert [
        c.name for c in dependency_changes("requirements/common.txt", "torch==2.8\n", "torch==2.9\n")
    ] == ["torch"]
    assert dependency_changes("requirements/test.txt", "pytest\n", "pytest>=8\n") == []
    assert dependency_changes("requirements-dev.txt", "ruff\n", "ruff>=0.6\n") == []
    # files for CI jobs, translation or release scripts install the maintainers' tools
    for name in (
        "requirements-github-actions.txt",
        "requirements-translations.txt",
        "requirements/release.txt",
    ):
        assert dependency_changes(name, "httpx==0.27\n", "httpx==0.28\n") == [], name
    assert [c.name for c in dependency_changes("requirements/cuda.txt", "torch\n", "torch>=2\n")] == ["torch"]


@pytest.mark.parametrize(
    "own", ["-e .[full]", "-e .", "--editable=.", ".", ".[test]  # the package", "-e file:."]
)
def test_a_requirements_file_that_installs_the_checkout_is_a_development_environment(own):
    # A root requirements.txt that starts with `-e .[full]` and pins the linters, test runner and docs theme:
    # a bot bumping a pinned formatter across a major changes nothing users install (nor drops support)
    before = f"# Optionals\n{own}\n\n# Testing\nblack==21.12b0\nmypy==0.931\n\n# Documentation\nmkdocs-material==8.1.3\n"
    after = before.replace("black==21.12b0", "black==22.3.0").replace("mkdocs-material==8.1.3\n", "")
    assert dependency_changes("requirements.txt", before, after) == []
    assert packaging_changes("requirements.txt", before, after) == []
    # the same lines without the checkout are what a deployment installs
    plain = before.replace(f"{own}\n", "")
    found = {c.kind for c in packaging_changes("requirements.txt", plain, after.replace(f"{own}\n", ""))}
    assert found == {K.DEPENDENCY_CHANGED, K.DEPENDENCY_DROPPED, K.SUPPORT_DROPPED}
    # a sibling package installed from its folder is no checkout of this one
    sibling = "-e ./plugins/extra\ntorch==2.8\n"
    assert [
        c.name for c in dependency_changes("requirements.txt", sibling, sibling.replace("2.8", "2.9"))
    ] == ["torch"]


def test_package_json_and_cargo_dependencies():
    before = json.dumps({"dependencies": {"react": "^18"}, "devDependencies": {"vitest": "^1"}})
    after = json.dumps({"dependencies": {"react": "^19"}, "devDependencies": {"vitest": "^2"}})
    assert [c.name for c in dependency_changes("package.json", before, after)] == ["react"]
    cargo_before = '[dependencies]\nserde = "1"\n[dev-dependencies]\ninsta = "1"\n'
    cargo_after = '[dependencies]\nserde = { version = "1.0.200" }\n[dev-dependencies]\ninsta = "2"\n'
    assert [c.name for c in dependency_changes("Cargo.toml", cargo_before, cargo_after)] == ["serde"]


def test_a_dependency_floor_raised_past_a_major_version_drops_support_for_it():
    # "Drop support for Pydantic v1": users still on it cannot install the next release beside it
    before = (
        '[project]\nname = "web"\ndependencies = [\n  "pydantic>=1.10,!=1.11.0,<3",\n  "anyio>=3.7",\n]\n'
    )
    after = before.replace(">=1.10,!=1.11.0,<3", ">=2.7,<3").replace("anyio>=3.7", "anyio>=4.8")
    dropped = [c for c in packaging_changes("pyproject.toml", before, after) if c.kind == K.SUPPORT_DROPPED]
    assert [(c.name, c.line, c.breaking) for c in dropped] == [("anyio 3", 5, True), ("pydantic 1", 4, True)]
    react = lambda spec: json.dumps({"peerDependencies": {"react": spec}})  # noqa: E731
    found = packaging_changes("package.json", react("^17.0.0 || ^18.0.0"), react("^18.0.0"))
    assert [c.name for c in found if c.kind == K.SUPPORT_DROPPED] == ["react 17"]
    found = packaging_changes(
        "Cargo.toml", '[dependencies]\nserde = "1.0"\n', '[dependencies]\nserde = "2.0"\n'
    )
    assert [c.name for c in found if c.kind == K.SUPPORT_DROPPED] == ["serde 1"]


@pytest.mark.parametrize(
    ("path", "before", "after"),
    [
        ("requirements/common.txt", "torch==2.8.0\n", "torch==2.9.0\n"),  # a pin moved within its major
        ("requirements/common.txt", "httpx>=0.27\n", "httpx>=0.28\n"),  # 0.x minors: routine upgrades
        ("requirements/common.txt", "numpy\n", "numpy>=2\n"),  # no floor before: which majors worked is unsaid
        ("requirements/common.txt", "numpy<2\n", "numpy<3\n"),  # a cap lifted
        ("requirements/test.txt", "pytest>=7\n", "pytest>=8\n"),  # the maintainers' tools
        ("package.json", json.dumps({"dependencies": {"x": "github:a/x#v1"}}),
         json.dumps({"dependencies": {"x": "github:a/x#v2"}})),  # a git ref, no version range
        ("pyproject.toml", '[build-system]\nrequires = ["setuptools>=61"]\n',
         '[build-system]\nrequires = ["setuptools>=77"]\n'),  # what builds it, not what users install
    ],
)  # fmt: skip
def test_a_dependency_change_that_keeps_every_major_drops_nothing(path, before, after):
    assert [c for c in packaging_changes(path, before, after) if c.kind == K.SUPPORT_DROPPED] == []


def test_a_runtime_dependency_moved_to_an_extra_leaves_the_default_install():
    # a web framework's `pip install fastapi[standard]`: uvicorn left the default install for an extra
    before = '[project]\nname = "web"\ndependencies = ["starlette>=0.40", "uvicorn>=0.12"]\n'
    after = (
        '[project]\nname = "web"\ndependencies = ["starlette>=0.40"]\n'
        '[project.optional-dependencies]\nstandard = ["uvicorn[standard]>=0.12"]\n'
    )
    [change] = packaging_changes("pyproject.toml", before, after)
    assert (change.kind, change.name, change.old, change.new, change.line) == (
        K.DEPENDENCY_OPTIONAL, "uvicorn", "uvicorn>=0.12", "standard", 5
    )  # fmt: skip
    assert change.breaking
    # dropped from the default install and from everywhere: no extra brings it back either
    gone = '[project]\nname = "web"\ndependencies = ["starlette>=0.40"]\n'
    [dropped] = packaging_changes("pyproject.toml", before, gone)
    assert (dropped.kind, dropped.name, dropped.breaking) == (K.DEPENDENCY_DROPPED, "uvicorn", True)


@pytest.mark.parametrize(
    ("path", "before", "after", "kind"),
    [
        # a plugin's requirements.txt, read as what it installs: `ray` no longer comes with it
        ("requirements.txt", "ray>=2.9\npandas\n", "pandas\n", K.DEPENDENCY_DROPPED),
        # a requirement for old Pythons only, gone with them (setup.py's install_requires)
        ("setup.py", 'setup(name="web", install_requires=["anyio", "ctx2>=21; python_version < \'3.7\'"])\n',
         'setup(name="web", install_requires=["anyio"])\n', K.DEPENDENCY_DROPPED),
        # what builds it and what an extra brings: removed, but the default install never had them
        ("pyproject.toml", '[build-system]\nrequires = ["setuptools", "wheel"]\n',
         '[build-system]\nrequires = ["setuptools"]\n', K.DEPENDENCY_REMOVED),
        ("pyproject.toml", '[project]\nname = "w"\n[project.optional-dependencies]\nx = ["a", "b"]\n',
         '[project]\nname = "w"\n[project.optional-dependencies]\nx = ["a"]\n', K.DEPENDENCY_REMOVED),
    ],
)  # fmt: skip
def test_a_runtime_requirement_removed_is_dropped_from_what_users_install(path, before, after, kind):
    assert [c.kind for c in packaging_changes(path, before, after)] == [kind]
    # the maintainers' tools are no requirement users get
    assert packaging_changes("requirements/test.txt", "pytest\nray\n", "pytest\n") == []


@pytest.mark.parametrize(
    ("requirement", "requires_python", "installed"),
    [
        ("importlib-metadata; python_version < '3.10'", ">=3.10,<3.14", False),  # only below the floor
        ("contextlib2>=21; python_version < '3.7'", ">=3.6", True),  # Python 3.6 users had it
        ("gpt-oss>=0.0.7; python_version > '3.11'", ">=3.10", True),  # on 3.12 and later
        ("pywin32; sys_platform == 'win32'", ">=3.10", True),  # a platform: not this machine's to say
        ("ray>=2.9", ">=3.10", True),
        ("tomli; python_version < '3.11'", "", True),  # no stated floor: which Pythons is unknown
    ],
)
def test_a_requirement_only_for_unsupported_pythons_installs_nothing(requirement, requires_python, installed):
    assert installs_on(requirement, requires_python) is installed


def test_the_supported_pythons_are_read_with_the_distribution():
    packaging = read_packaging(
        {"setup.py": 'setup(name="web", python_requires=">=3.7", packages=["web"])\n'},
        ["setup.py", "web/a.py"],
    )
    assert packaging is not None and packaging.owner("requirements.txt").requires_python == ">=3.7"


def test_a_version_of_thousands_of_digits_is_no_version():
    from analysis.surface.requirements import majors_dropped

    huge = "9" * 6000  # int() refuses more than 4,300 digits
    assert majors_dropped(f"react@^{huge}", "react@^18") == [] and majors_dropped(f"x>={huge}", "x>=2") == []
    assert majors_dropped("x>=1", f"x>={huge}") == []


# --- valid TOML, wrong types: the value is read as absent, the rest of the file still counts ---------------

_SETUPTOOLS = (
    '[build-system]\nbuild-backend = "setuptools.build_meta"\n'
    '[project]\nname = "pkg"\ndependencies = ["httpx>=0.27"]\n[tool.setuptools]\npackages = ["engine"]\n'
)


@pytest.mark.parametrize(
    "wrong",
    [
        '[project.optional-dependencies]\n"x" = 5\n',
        "[tool.setuptools.package-data]\nengine = 5\n",
        '[tool.poetry]\ndependencies = ["requests"]\n',
        '[tool.hatch]\nbuild = "wheel"\n',
        "[tool.pdm]\nbuild = [1]\n",
    ],
)
def test_a_wrong_typed_table_beside_a_readable_one_leaves_the_readable_one(wrong):
    pyproject = _SETUPTOOLS + wrong
    assert shipped(pyproject) == {"engine/sample/sampler.py"}
    after = pyproject.replace("httpx>=0.27", "httpx>=0.28")
    assert [c.name for c in dependency_changes("pyproject.toml", pyproject, after)] == ["httpx"]


@pytest.mark.parametrize(
    "pyproject",
    [
        '[project]\nname = "pkg"\noptional-dependencies = "none"\ndependencies = ["httpx>=0.27"]\n',
        '[project]\nname = "pkg"\noptional-dependencies = ["x"]\ndependencies = ["httpx>=0.27"]\n',
        '[project]\nname = "pkg"\ndependencies = ["httpx>=0.27"]\n[tool.poetry]\ndependencies = ["requests"]\n',
        '[project]\nname = "pkg"\ndependencies = ["httpx>=0.27"]\n[tool.poetry.dependencies]\npython = {version = 3}\n',
        '[project]\nname = "pkg"\ndependencies = ["httpx>=0.27"]\n[tool]\npoetry = 5\n',
        'build-system = "setuptools"\ntool = true\n[project]\nname = "pkg"\ndependencies = ["httpx>=0.27"]\n',
    ],
)
def test_wrong_typed_dependency_tables_state_nothing_and_the_others_still_count(pyproject):
    after = pyproject.replace("httpx>=0.27", "httpx>=0.28").replace(
        'name = "pkg"', 'name = "pkg"\nrequires-python = ">=3.10"'
    )
    assert [c.name for c in dependency_changes("pyproject.toml", pyproject, after)] == ["httpx"]
    assert {c.kind for c in packaging_changes("pyproject.toml", pyproject, after)} == {K.DEPENDENCY_CHANGED}


@pytest.mark.parametrize(
    "pyproject",
    [
        '[project]\nname = "engine"\n[tool.setuptools]\npackages = ["engine"]\npy-modules = true\n',
        '[project]\nname = "engine"\n[tool.setuptools.packages]\nfind = "src"\n',
        '[project]\nname = "engine"\n[tool.setuptools]\npackages = {find = true}\n',
        '[project]\nname = "engine"\n[tool.setuptools.packages.find]\nwhere = 5\ninclude = true\n',
        '[project]\nname = "engine"\n[tool.setuptools]\npackage-dir = "src"\npackages = ["engine"]\n',
        'project = "engine"\n[tool.setuptools]\npackages = ["engine"]\n',
        '[project]\nname = "engine"\n[build-system]\nbuild-backend = "hatchling.build"\n[tool.hatch.build.targets]\nwheel = "engine"\n',
        '[project]\nname = "engine"\n[build-system]\nbuild-backend = "pdm.backend"\n[tool.pdm.build]\nincludes = 5\nexcludes = true\n',
        '[project]\nname = "engine"\n[build-system]\nbuild-backend = "flit_core.buildapi"\n[tool.flit]\nmodule = "engine"\n',
    ],
)
def test_wrong_typed_setuptools_and_build_tool_settings_still_read_the_distribution(pyproject):
    # read as if the wrong value were absent: the package named for the project, or found in the tree
    assert "engine/sample/sampler.py" in shipped(pyproject)


@pytest.mark.parametrize(
    "cargo",
    [
        'package = "x"\n[dependencies]\nserde = "1"\n',
        'workspace = 5\n[package]\nname = "x"\n[dependencies]\nserde = "1"\n',
        'target = [1]\n[package]\nname = "x"\n[dependencies]\nserde = "1"\n',
        '[package]\nname = "x"\nrust-version = 5\n[dependencies]\nserde = "1"\n[target]\nlinux = 5\n',
    ],
)
def test_a_cargo_manifest_with_wrong_typed_tables_still_states_its_dependencies(cargo):
    read_packaging({"Cargo.toml": cargo}, ["Cargo.toml", "src/lib.rs"])  # no error
    after = cargo.replace('serde = "1"', 'serde = "2"')
    assert [c.name for c in packaging_changes("Cargo.toml", cargo, after)] == ["serde", "serde 1"]


def test_a_pattern_git_cannot_read_makes_the_file_unread_not_an_error():
    package = json.dumps({"name": "x", "files": ["lib"], "bin": "!"})
    assert read_packaging({"package.json": package}, ["package.json", "lib/a.js"]) is None


def test_a_setup_py_saved_with_a_bom_is_read():
    setup = '\ufefffrom setuptools import setup\nsetup(name="engine", packages=["engine"], install_requires=["httpx>=0.27"])\n'
    packaging = read_packaging({"setup.py": setup}, TREE)
    assert packaging is not None and packaging.names() == {"engine"}
    after = setup.replace("httpx>=0.27", "httpx>=0.28")
    assert [c.name for c in dependency_changes("setup.py", setup, after)] == ["httpx"]


def test_find_packages_sees_every_folder_above_every_path():
    """The folders setuptools' find_packages would visit, from any tree (odd paths too: empty segments, a
    leading slash, paths outside the folder), are every folder above each path under it."""
    import random

    from analysis.surface.packaging import _find_packages, _top
    from analysis.surface.packaging_texts import FindPackages

    def every_folder(folder: str, tree: list[str]) -> set[str]:
        dirs = set()
        for path in tree:
            if path.startswith(folder):
                parts = path[len(folder) :].split("/")[:-1]
                dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
        return dirs

    rnd = random.Random(7)
    find = FindPackages()  # namespaces, include "*": each folder without a dot is a package
    for _ in range(3000):
        tree = [
            "".join(rnd.choice("ab/._") for _ in range(rnd.randint(0, 9))) for _ in range(rnd.randint(0, 9))
        ]
        folder = rnd.choice(["", "a/", "b/", "a/b/"])
        expected = _top(f"{folder}{d}/" for d in every_folder(folder, tree) if "." not in d)
        assert _find_packages(folder, find, set(tree)) == expected


def test_sibling_packaging_is_a_packaging_file_not_a_name_ending_like_one():
    tree = [
        "pyproject.toml",
        "app/__init__.py",
        "libs/y/mysetup.py",
        "libs/x/setup.py",
        "libs/x/notsetup.cfg",
    ]
    assert packaging_paths(["app/__init__.py"], tree) == ["libs/x/setup.py", "pyproject.toml"]


def test_requirements_files_for_the_maintainers_tasks_are_not_what_users_install() -> None:
    for path in (
        "requirements-dev.txt", "requirements/ci-gpu.txt", "requirements-ci.txt", "requirements/lint.txt",
        "requirements/dev/base.txt", "python/requirements-test.in", "test-requirements.txt", "requirements/coverage.txt",
        "requirements/towncrier.txt", "requirements/sphinx.txt", "requirements-pytest.txt",
    ):  # fmt: skip
        assert is_dev_requirements(path), path
    for path in (
        "requirements.txt",
        "requirements/cuda.txt",
        "requirements/common.txt",
        "src/devices.txt",
        "docs/index.md",
    ):
        assert not is_dev_requirements(path), path


def test_a_scikit_build_wheel_ships_its_python_package_and_the_native_code_cmake_builds() -> None:
    # a compiler with Python bindings built by scikit-build-core: its public headers (`include/`) and sources
    # were read as setuptools would discover them (none shipped), so an overload removed from a header was
    # "nothing users run"
    tree = [
        "pyproject.toml", "CMakeLists.txt", "cmake/Targets.cmake", "include/ncc/ir.h", "src/opt.cpp",
        "python/ncc/__init__.py", "python/ncc/tools.py", "tests/lexer_test.cpp", "docs/snippet.h", "scripts/gen.py",
    ]  # fmt: skip
    backend = '[build-system]\nrequires = ["scikit-build-core"]\nbuild-backend = "scikit_build_core.build"\n'
    for extra in ("", '[tool.scikit-build]\nwheel.packages = ["python/ncc"]\n'):
        packaging = read_packaging({"pyproject.toml": backend + '[project]\nname = "ncc"\n' + extra}, tree)
        assert packaging is not None
        assert packaging.shipped(tree) == {
            "CMakeLists.txt", "cmake/Targets.cmake", "include/ncc/ir.h", "src/opt.cpp", "python/ncc/__init__.py",
            "python/ncc/tools.py",
        }  # fmt: skip
        assert packaging.module_name("python/ncc/tools.py") == "ncc.tools"
