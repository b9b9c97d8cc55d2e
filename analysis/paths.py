"""What a changed path is: source, tests, docs, a lockfile, generated code, ...

Pure string rules, no file access. The heuristic analyser uses the kind to judge what a commit
touches; the LLM diff budget uses `is_low_value` and `review_priority` to decide which diffs to drop
first and which to show first.

Rules are checked in a fixed order, first match wins, so a path has exactly one kind:

1. vendored (vendor/, third_party/, node_modules/ ...): someone else's code, whatever its extension
   (unless the branch's history shows a tree there maintained as its own: `classify_own`)
2. lockfile (package-lock.json, uv.lock, go.sum ...)
3. minified (*.min.js, *.min.css)
4. generated (*_pb2.py, *.pb.go, *.generated.*, gen/ folders, snapshots)
5. binary by extension (images, archives, native libraries, model weights, fonts, media)
6. ci (.github/, .buildkite/, .gitlab-ci.yml, .pre-commit-config.yaml ...)
7. tests, benchmark, example, docs by folder (a YAML file under tests/ is test data, not config; a
   singular `sample/`, `example/` or `demo/` folder only at the top level: deeper it is a module)
8. dependency manifest (requirements*.txt, pyproject.toml, package.json, Cargo.toml, go.mod ...)
9. build (Dockerfile, docker/, CMakeLists.txt, Makefile, setup.py, Bazel ...)
10. tooling (tools/, scripts/, hack/: developer scripts that are not shipped; the configuration of the
    developers' own tools: .gitignore, linters, formatters, type checkers, test runners)
11. tests by file name (test_*.py, *_test.go, *.spec.ts, FooTest.java, conftest.py)
12. docs by extension or name (*.md, *.rst, README, LICENSE, CHANGELOG)
13. config by extension or name (*.yaml, *.toml, *.ini, *.json, dotfiles)
14. source: everything else, including unknown extensions, because an unknown file is safer
    reviewed than dropped.

`tooling` is a kind of its own (not `build`) because a 1,000-line developer script says little
about what users run, while a Dockerfile or CMakeLists.txt decides what is shipped.

Over 400 lines because the rules are one ordered list (first match wins): split, the order
between them would no longer be visible in one place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from functools import lru_cache


class PathKind(StrEnum):
    SOURCE = "source"
    CONFIG = "config"
    TESTS = "tests"
    DOCS = "docs"
    CI = "ci"
    BUILD = "build"
    TOOLING = "tooling"
    DEPENDENCY_MANIFEST = "dependency_manifest"
    LOCKFILE = "lockfile"
    GENERATED = "generated"
    VENDORED = "vendored"
    MINIFIED = "minified"
    BINARY = "binary"
    EXAMPLE = "example"
    BENCHMARK = "benchmark"


_VENDORED_DIRS = frozenset(
    {"vendor", "vendored", "third_party", "third-party", "thirdparty", "3rdparty", "node_modules"}
    | {"bower_components", "site-packages", "_vendor", "externals"}
)

_LOCKFILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "bun.lock",
        "deno.lock",
        "poetry.lock",
        "uv.lock",
        "pdm.lock",
        "pipfile.lock",
        "pixi.lock",
        "conda-lock.yml",
        "cargo.lock",
        "go.sum",
        "go.work.sum",
        "gemfile.lock",
        "composer.lock",
        "mix.lock",
        "pubspec.lock",
        "podfile.lock",
        "package.resolved",
        "flake.lock",
        "gradle.lockfile",
        "packages.lock.json",
        "paket.lock",
        "cabal.project.freeze",
        "manifest.toml",  # Julia
        "renv.lock",
        "shard.lock",
    }
)
_LOCK_SUFFIXES = (".lock", ".lockfile")

_GENERATED_DIRS = frozenset({"gen", "generated", "__generated__", "_generated", "autogen", "__snapshots__"})
# Suffix tests (str.endswith) rather than one big regex: classify_path runs for every file of
# every commit, and 3000-file commits happen.
_GENERATED_SUFFIXES = (
    "_pb2.py",
    "_pb2.pyi",
    "_pb2_grpc.py",
    "_pb2_grpc.pyi",
    ".pb.go",
    ".pb.h",
    ".pb.cc",
    ".pb.gw.go",
    ".pb.validate.go",
    "_pb.js",
    "_pb.d.ts",
    ".pbobjc.h",
    ".pbobjc.m",
    ".g.dart",
    ".freezed.dart",
    ".designer.cs",
    ".g.cs",
    ".snap",
    ".js.map",
    ".css.map",
)
_GENERATED_NAME = re.compile(r"[._-]generated\.\w+$|^zz_generated.*\.go$")

_MINIFIED_SUFFIXES = (".min.js", ".min.mjs", ".min.cjs", ".min.css", "-min.js", "-min.css")

_BINARY_EXT = frozenset(
    # images and design files
    {"png", "jpg", "jpeg", "gif", "bmp", "ico", "icns", "webp", "tif", "tiff", "svg", "psd", "heic"}
    # archives and packages
    | {"zip", "tar", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "jar", "war", "whl", "egg", "deb", "rpm"}
    # native code and objects
    | {"so", "dylib", "dll", "exe", "a", "lib", "o", "obj", "pyc", "pyd", "class", "wasm", "cubin", "fatbin"}
    # model weights and data blobs
    | {"bin", "dat", "pt", "pth", "ckpt", "safetensors", "onnx", "pb", "h5", "hdf5", "npy", "npz", "pkl"}
    | {"pickle", "parquet", "arrow", "feather", "tflite", "gguf", "ggml", "mlmodel"}
    | {"db", "sqlite", "sqlite3"}
    # fonts, media, documents
    | {"woff", "woff2", "ttf", "otf", "eot", "mp3", "mp4", "wav", "ogg", "flac", "mov", "avi", "webm"}
    | {"mkv", "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx"}
)

_CI_DIRS = frozenset(
    {".github", ".buildkite", ".circleci", ".gitlab", ".azure-pipelines", ".ci", ".woodpecker"}
)
_CI_FILES = frozenset(
    {
        ".gitlab-ci.yml",
        ".travis.yml",
        "azure-pipelines.yml",
        "jenkinsfile",
        ".drone.yml",
        "appveyor.yml",
        ".appveyor.yml",
        "bitbucket-pipelines.yml",
        ".pre-commit-config.yaml",
        ".pre-commit-hooks.yaml",
        "codecov.yml",
        ".codecov.yml",
        ".mergify.yml",
        "cloudbuild.yaml",
        "cloudbuild.yml",
        ".cirrus.yml",
    }
)
# Top-level ci/ folders only: a nested ci/ folder may be product code (e.g. a CI integration).
_TOP_CI_DIRS = frozenset({"ci"})

_TEST_DIRS = frozenset(
    {"tests", "test", "__tests__", "testdata", "test_data", "spec", "specs", "e2e"}
    | {"integration_tests", "unittests", "unit_tests", "test-data", "__mocks__", "cypress"}
)
_TOP_TEST_DIRS = frozenset({"unittest", "testing"})
# A folder named as tests of a kind, or for them: integration-tests/, e2e_tests/, tests_gpu/, test_utils/,
# test-suite/; and fuzzing targets, which are not shipped either.
_TEST_DIR_NAME = re.compile(r"^(tests?[_-]\w[\w-]*|[\w-]*\w[_-]tests?|fuzz|fuzzing|fuzzers)$")
_BENCH_DIRS = frozenset({"benchmarks", "benchmark", "bench", "benches", "perf_tests"})
_EXAMPLE_DIRS = frozenset(
    {"examples", "example", "samples", "sample", "demo", "demos", "cookbook", "tutorials"}
)
# Singular names are as often a module of the package itself (`pkg/v1/sample/` is the sampler, not a
# sample): they mean examples only as a top-level folder.
_AMBIGUOUS_EXAMPLE_DIRS = frozenset({"sample", "example", "demo"})
_DOCS_DIRS = frozenset({"docs", "doc", "documentation", "_docs", "man", "website"})

_MANIFEST_FILES = frozenset(
    {
        "pipfile",
        "pyproject.toml",
        "package.json",
        "cargo.toml",
        "go.mod",
        "go.work",
        "gemfile",
        "composer.json",
    }
    | {"pom.xml", "build.gradle", "build.gradle.kts", "libs.versions.toml", "vcpkg.json", "conanfile.txt"}
    | {"conanfile.py", "project.toml", "mix.exs", "pubspec.yaml", "package.swift", "podfile", "deno.json"}
    | {"bower.json", "packages.config", "directory.packages.props", "environment.yml", "environment.yaml"}
)
_MANIFEST_NAME = re.compile(
    r"^(requirements[\w.-]*\.(txt|in)|constraints[\w.-]*\.txt|environment-[\w.]+\.ya?ml)$"
)
_MANIFEST_SUFFIXES = (".gemspec",)
_MANIFEST_DIRS = frozenset({"requirements"})  # a requirements/*.txt folder

_BUILD_FILES = frozenset(
    {"containerfile", ".dockerignore", "compose.yml", "compose.yaml", "makefile", "gnumakefile"}
    | {"cmakelists.txt", "cmakepresets.json", "meson.build", "meson_options.txt", "setup.py", "setup.cfg"}
    | {"manifest.in", "build", "build.bazel", "workspace", "workspace.bazel", "module.bazel", ".bazelrc"}
    | {".bazelversion", "sconstruct", "sconscript", "build.rs", "justfile", "noxfile.py", "earthfile"}
    | {"rakefile", "configure", "configure.ac", "gradlew", "gradlew.bat", "settings.gradle"}
    | {"settings.gradle.kts", "gradle.properties", "build.sbt"}
)
_BUILD_PREFIXES = ("dockerfile", "docker-compose")
_BUILD_SUFFIXES = (".dockerfile", ".mk", ".cmake", ".bzl", ".csproj", ".vcxproj", ".fsproj", ".sln", ".props")
_BUILD_SUFFIXES += (".targets",)
_BUILD_CONFIG_JS = re.compile(r"^(webpack|vite|rollup|esbuild|babel|tsup)\.config\.[cm]?[jt]s$")
_BUILD_DIRS = frozenset({"docker", "cmake", "packaging", ".devcontainer", "build_tools"})
_TOOLING_DIRS = frozenset({"tools", "tool", "scripts", "script", "hack", "dev", "devtools", "utils_dev"})

# Configuration of the developers' own tools, at any depth: version control, editors, linters, formatters,
# spell and type checkers, test runners, dependency bots, review bots. Nothing users run reads them, so a
# commit of docs plus one of these changes nothing users run.
_DEV_TOOL_FILES = frozenset(
    {".gitignore", ".gitattributes", ".mailmap", ".git-blame-ignore-revs", ".editorconfig", ".tool-versions"}
    | {".nvmrc", ".node-version", ".python-version", ".ruby-version", ".flake8", "pylintrc", ".isort.cfg"}
    | {"mypy.ini", ".mypy.ini", "pyrightconfig.json", "ruff.toml", ".coveragerc", "pytest.ini", "tox.ini"}
    | {".codespellrc", "typos.toml", ".typos.toml", "_typos.toml", ".clang-format", ".clang-tidy"}
    | {"rustfmt.toml", ".rustfmt.toml", "clippy.toml", ".clippy.toml", ".shellcheckrc", "renovate.json"}
    | {".bumpversion.cfg", ".jscpd.json", "lefthook.yml", "lefthook.yaml", "biome.json", "biome.jsonc"}
    | {".secrets.baseline", ".prettierignore", ".eslintignore", ".markdownlintignore", ".gitleaks.toml"}
)
_DEV_TOOL_PREFIXES = (
    ".markdownlint",
    ".prettierrc",
    "prettier.config.",
    ".eslintrc",
    "eslint.config.",
    ".stylelintrc",
    "stylelint.config.",
    ".commitlintrc",
    "commitlint.config.",
    ".lintstagedrc",
    "lint-staged.config.",
    "cspell.",
    ".cspell",
    ".golangci.",
    ".yamllint",
    ".swiftlint.",
    "jest.config.",
    "vitest.config.",
    ".mocharc",
    ".pylintrc",
    ".ruff.",
    ".rubocop",
    ".vale.",
    ".coderabbit.",
    ".renovaterc",
    ".pre-commit",
)
_TEST_NAME = re.compile(
    r"^(test_[\w.-]+\.py|[\w.-]+_test\.(py|go|rs|cc|cpp|c|cu|rb|exs)|[\w.-]+_tests?\.rs|conftest\.py|"
    r"[\w.-]+\.(test|spec)\.[cm]?[jt]sx?|[\w.-]+_spec\.rb|test[\w.-]*\.(sh|bats)|[\w.-]+\.t)$"
)
# Case matters here: FooTest.java is a test, Latest.java is not.
_JVM_TEST_NAME = re.compile(r"^\w*[a-z0-9]Tests?\.(java|kt|scala|groovy|cs)$|^Test[A-Z]\w*\.(java|kt|cs)$")
_DOC_EXT = frozenset({"md", "mdx", "rst", "adoc", "asciidoc", "txt", "rdoc", "org", "tex", "texi"})
# The names a repository's release notes go by at its root, in the order eval tries them (analysis/evaluation).
RELEASE_NOTES_STEMS = (
    "changelog",
    "changes",
    "history",
    "news",
    "releases",
    "release-notes",
    "release_notes",
)
_DOC_STEMS = frozenset(
    {"readme", "changelog", "changes", "history", "news", "license", "licence", "copying", "notice"}
    | {"authors", "contributors", "contributing", "code_of_conduct", "security", "maintainers", "codeowners"}
    | {"citation"}
)
_DOC_CONFIG = frozenset({"mkdocs.yml", "mkdocs.yaml", ".readthedocs.yaml", ".readthedocs.yml"})

_CONFIG_EXT = frozenset(
    {"yaml", "yml", "toml", "ini", "cfg", "conf", "json", "jsonc", "json5", "properties", "env", "xml"}
    | {"editorconfig", "plist", "hcl", "tfvars"}
)
_CONFIG_DOTFILES = re.compile(r"^\.[\w.-]+(rc|ignore|attributes|config|modules|-version|\.json|\.ya?ml)?$")


def _parts(path: str) -> tuple[list[str], str]:
    """Lower-cased folder segments and file name; tolerant of './', backslashes and trailing slashes."""
    norm = path.strip().replace("\\", "/").lower()
    segments = [s for s in norm.split("/") if s and s != "."]
    if not segments:
        return [], ""
    return segments[:-1], segments[-1]


def _ext(name: str) -> str:
    return name.rsplit(".", 1)[1] if "." in name.lstrip(".") else ""


@lru_cache(maxsize=1 << 16)  # eval's history index asks for the same paths day after day
def classify_path(path: str) -> PathKind:
    """The kind of a changed file, by its path alone (see the module docstring for the order)."""
    dirs, name = _parts(path)
    dirset = set(dirs)
    ext = _ext(name)
    if not dirset.isdisjoint(_VENDORED_DIRS):
        return PathKind.VENDORED
    if name in _LOCKFILES or (name.endswith(_LOCK_SUFFIXES) and name != ".lock"):
        return PathKind.LOCKFILE
    if name.endswith(_MINIFIED_SUFFIXES):
        return PathKind.MINIFIED
    if not dirset.isdisjoint(_GENERATED_DIRS) or name.endswith(_GENERATED_SUFFIXES):
        return PathKind.GENERATED
    if "generated" in name and _GENERATED_NAME.search(name):
        return PathKind.GENERATED
    if ext in _BINARY_EXT:
        return PathKind.BINARY
    if not dirset.isdisjoint(_CI_DIRS) or name in _CI_FILES or (dirs and dirs[0] in _TOP_CI_DIRS):
        return PathKind.CI
    by_dir = _kind_by_folder(dirs)
    if by_dir is not None:
        return by_dir
    return _kind_by_name(dirs, name, ext, path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1])


# How far below its vendored-looking folder a tree is told apart (`vendored_tree`): third_party/<name>/.
_VENDORED_TREE_DEPTH = 1


def _segments(path: str) -> list[str]:
    """A path's segments as written (`_parts` lower-cases them for the rules)."""
    return path.strip().replace("\\", "/").split("/")


def vendored_tree(path: str) -> str | None:
    """The tree a vendored-looking path belongs to: its first vendored folder and up to _VENDORED_TREE_DEPTH
    folders below it, as written ("third_party/acme/lib/"); None for a path in no vendored folder."""
    dirs = _segments(path)[:-1]
    for i, folder in enumerate(dirs):
        if folder.lower() in _VENDORED_DIRS:
            return "/".join(dirs[: i + 1 + _VENDORED_TREE_DEPTH]) + "/"
    return None


def in_vendored_root(path: str) -> bool:
    """A file directly in a vendored folder (vendor/modules.txt, _vendor/vendor.txt): the list of the copies."""
    dirs = _segments(path)[:-1]
    return bool(dirs) and dirs[-1].lower() in _VENDORED_DIRS


# Build files only developers run: task runners, local environments, what a container build leaves out.
_DEV_BUILD_FILES = frozenset({"makefile", "gnumakefile", "justfile", "noxfile.py", ".dockerignore"})
_DEV_BUILD_PREFIXES = ("docker-compose", "compose.")


def builds_what_ships(path: str) -> bool:
    """A build file that decides how what users get is built (CMakeLists.txt, *.cmake, meson.build,
    build.rs, setup.py, MANIFEST.in, a Dockerfile, Bazel), not a developer's task runner or local
    environment (Makefile, justfile, noxfile.py, compose files, .devcontainer/)."""
    if classify_path(path) != PathKind.BUILD:
        return False
    dirs, name = _parts(path)
    return (
        name not in _DEV_BUILD_FILES
        and not name.startswith(_DEV_BUILD_PREFIXES)
        and ".devcontainer" not in dirs
    )


def updates_dependencies(paths: Iterable[str]) -> bool:
    """Paths changed together that update dependencies: a lockfile, a dependency manifest or a vendored
    folder's own list of its copies (`go mod vendor`, a vendoring script), not an edit of a vendored tree."""
    return any(
        classify_path(path) in (PathKind.LOCKFILE, PathKind.DEPENDENCY_MANIFEST) or in_vendored_root(path)
        for path in paths
    )


def classify_own(path: str) -> PathKind:
    """The kind of a path in a vendored-looking tree that the branch maintains as its own code (its history
    says so, analysis/history/index.py): the path's kind as if that vendored folder were not in it, so
    "third_party/acme/lib/x.cc" is source and "third_party/acme/test/x.cc" a test."""
    segments = _segments(path)
    for i, folder in enumerate(segments[:-1]):
        if folder.lower() in _VENDORED_DIRS:
            return classify_path("/".join(segments[:i] + segments[i + 1 :]))
    return classify_path(path)


def kind_in(path: str, own: frozenset[str]) -> PathKind:
    """A path's kind where `own` are the vendored-looking trees (`vendored_tree`) the branch maintains."""
    kind = classify_path(path)
    if kind == PathKind.VENDORED and own and vendored_tree(path) in own:
        return classify_own(path)
    return kind


def folder_kind(path: str) -> PathKind | None:
    """What the folders above a file say it is, whatever its own name: a `requirements.txt` or
    `pyproject.toml` under `.github/`, `tools/`, `docs/` or `tests/` belongs to that tree. None: the
    folders say nothing (the file speaks for the project)."""
    dirs, _ = _parts(path)
    dirset = set(dirs)
    if not dirset.isdisjoint(_VENDORED_DIRS):
        return PathKind.VENDORED
    if not dirset.isdisjoint(_GENERATED_DIRS):
        return PathKind.GENERATED
    if not dirset.isdisjoint(_CI_DIRS) or (dirs and dirs[0] in _TOP_CI_DIRS):
        return PathKind.CI
    by_dir = _kind_by_folder(dirs)
    if by_dir is not None:
        return by_dir
    return PathKind.TOOLING if dirs and _tooling_top(dirs[0]) else None


def _tooling_top(folder: str) -> bool:
    """A top-level folder of developer tooling: tools/, scripts/, ..., or a hidden one (`.agents/`,
    `.cursor/`, `.vscode/`: settings, rules and skills of the developers' tools and agents)."""
    return folder in _TOOLING_DIRS or (folder.startswith(".") and len(folder) > 1)


# C and C++ under a top-level tools/ are programs the project builds and installs (a compiler's drivers:
# `tools/x-opt/x-opt.cpp`); scripts there, and Go's or Rust's `tools` (build-tagged dependency pins,
# xtask helpers), are the developers'.
_BUILT_TOOL_DIRS = frozenset({"tools", "tool"})
_BUILT_TOOL_EXT = frozenset({"c", "cc", "cpp", "cxx", "c++", "h", "hh", "hpp", "hxx"})


def _built_tool(dirs: list[str], ext: str) -> bool:
    return dirs[0] in _BUILT_TOOL_DIRS and ext in _BUILT_TOOL_EXT


def _kind_by_folder(dirs: list[str]) -> PathKind | None:
    # The outermost telling folder wins: docs/examples/foo.py is documentation.
    for depth, segment in enumerate(dirs):
        if (
            segment in _TEST_DIRS
            or _TEST_DIR_NAME.match(segment)
            or (depth == 0 and segment in _TOP_TEST_DIRS)
        ):
            # a top-level unittest/ or testing/ only: a nested one is as often a module (Lib/unittest/, a web
            # framework's `pkg/testing/` test client users import)
            return PathKind.TESTS
        # Only a top-level benchmarks/ (or Rust's benches/): a nested one such as pkg/benchmarks/
        # is often shipped code (a `bench` CLI).
        if segment in _BENCH_DIRS and (depth == 0 or segment == "benches"):
            return PathKind.BENCHMARK
        if segment in _EXAMPLE_DIRS and (depth == 0 or segment not in _AMBIGUOUS_EXAMPLE_DIRS):
            return PathKind.EXAMPLE
        if segment in _DOCS_DIRS:
            return PathKind.DOCS
    return None


def _kind_by_name(dirs: list[str], name: str, ext: str, original: str) -> PathKind:
    # Cheap exact and prefix/suffix tests guard each regex: this runs for every file of every commit.
    if _is_manifest(dirs, name, ext):
        return PathKind.DEPENDENCY_MANIFEST
    if _is_build(dirs, name):
        return PathKind.BUILD
    if (dirs and _tooling_top(dirs[0]) and not _built_tool(dirs, ext)) or name in _DEV_TOOL_FILES:
        return PathKind.TOOLING
    if name.startswith(_DEV_TOOL_PREFIXES):
        return PathKind.TOOLING
    if _is_test_name(name, original):
        return PathKind.TESTS
    if ext in _DOC_EXT or name in _DOC_CONFIG or name.split(".", 1)[0] in _DOC_STEMS:
        return PathKind.DOCS
    if ext in _CONFIG_EXT or (name.startswith(".") and _CONFIG_DOTFILES.match(name)):
        return PathKind.CONFIG
    return PathKind.SOURCE


def _is_manifest(dirs: list[str], name: str, ext: str) -> bool:
    if name in _MANIFEST_FILES or name.endswith(_MANIFEST_SUFFIXES):
        return True
    if name.startswith(("requirements", "constraints", "environment")) and _MANIFEST_NAME.match(name):
        return True
    return ext in ("txt", "in") and not _MANIFEST_DIRS.isdisjoint(dirs)


def _is_build(dirs: list[str], name: str) -> bool:
    if name in _BUILD_FILES or name.startswith(_BUILD_PREFIXES) or name.endswith(_BUILD_SUFFIXES):
        return True
    if ".config." in name and _BUILD_CONFIG_JS.match(name):
        return True
    return not _BUILD_DIRS.isdisjoint(dirs)


def _is_test_name(name: str, original: str) -> bool:
    if ("test" in name or "spec" in name or name.endswith(".t")) and _TEST_NAME.match(name):
        return True
    return "Test" in original and bool(_JVM_TEST_NAME.match(original))


_LOW_VALUE = frozenset(
    {PathKind.LOCKFILE, PathKind.GENERATED, PathKind.VENDORED, PathKind.MINIFIED, PathKind.BINARY}
)


def is_low_value(kind: PathKind) -> bool:
    """Files whose diff says little to a reviewer: the first a diff budget drops, and lines the
    importance rubric does not count."""
    return kind in _LOW_VALUE


# Lower = review first. What runs in production comes first (source, then the config and
# dependency pins it runs with), then what builds and ships it, then the evidence around it (tests,
# benchmarks), then prose and samples; low-value files come last, the least useful last of all.
_PRIORITY: dict[PathKind, int] = {
    PathKind.SOURCE: 0,
    PathKind.CONFIG: 1,
    PathKind.DEPENDENCY_MANIFEST: 2,
    PathKind.BUILD: 3,
    PathKind.CI: 3,
    PathKind.TOOLING: 4,
    PathKind.TESTS: 5,
    PathKind.BENCHMARK: 6,
    PathKind.EXAMPLE: 7,
    PathKind.DOCS: 7,
    PathKind.GENERATED: 8,
    PathKind.VENDORED: 8,
    PathKind.LOCKFILE: 9,
    PathKind.MINIFIED: 9,
    PathKind.BINARY: 10,
}


def review_priority(kind: PathKind) -> int:
    """Review order: 0 first. source 0 < config 1 < dependency manifest 2 < build = ci 3 < tooling 4
    < tests 5 < benchmark 6 < example = docs 7 < generated = vendored 8 < lockfile = minified 9
    < binary 10."""
    return _PRIORITY[kind]


# Programming language by extension, for rules that must tell code from strings and comments
# (analysis.heuristic.code_lines). Only languages whose comment and string syntax it knows.
_LANGUAGES: dict[str, str] = {
    **dict.fromkeys(("py", "pyi", "pyx", "pxd"), "python"),
    **dict.fromkeys(("sh", "bash", "zsh"), "shell"),
    **dict.fromkeys(("rb", "rake"), "ruby"),
    "c": "c",
    "h": "c",
    **dict.fromkeys(("cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "inl", "ipp", "tpp"), "cpp"),
    **dict.fromkeys(("cu", "cuh"), "cuda"),
    "hip": "hip",
    "metal": "metal",
    "cl": "opencl",
    **dict.fromkeys(("js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx"), "javascript"),
    "go": "go",
    "rs": "rust",
    **dict.fromkeys(("java", "kt", "kts", "scala", "groovy"), "java"),
    "cs": "csharp",
    "swift": "swift",
}


def language_of(path: str) -> str | None:
    """The programming language of a file by its extension, None when it is not one we can read."""
    return _LANGUAGES.get(_ext(_parts(path)[1]))
