"""Path classification across ecosystems, and the two helpers the diff budget builds on."""

from __future__ import annotations

import pytest

from analysis.paths import (
    PathKind,
    classify_own,
    classify_path,
    folder_kind,
    in_vendored_root,
    is_low_value,
    kind_in,
    review_priority,
    updates_dependencies,
    vendored_tree,
)

K = PathKind

TABLE = [
    # Python / vllm layout
    ("vllm/model_executor/models/llama.py", K.SOURCE),
    ("vllm/entrypoints/openai/api_server.py", K.SOURCE),
    ("vllm/config/model.py", K.SOURCE),
    ("vllm/benchmarks/serve.py", K.SOURCE),  # a nested benchmarks/ folder is shipped code
    ("csrc/attention/paged_attention_v1.cu", K.SOURCE),
    ("csrc/moe/kernel.cuh", K.SOURCE),
    ("tests/models/test_llama.py", K.TESTS),
    ("tests/evals/gsm8k/configs/model.yaml", K.TESTS),  # test data, not config
    ("conftest.py", K.TESTS),
    ("test_utils.py", K.TESTS),
    ("docs/design/arch.md", K.DOCS),
    ("docs/mkdocs/hooks/url.py", K.DOCS),
    ("README.md", K.DOCS),
    ("LICENSE", K.DOCS),
    ("CHANGELOG", K.DOCS),
    (".buildkite/test-pipeline.yaml", K.CI),
    (".buildkite/scripts/annotate.sh", K.CI),
    (".github/workflows/ci.yml", K.CI),
    (".github/CODEOWNERS", K.CI),
    (".pre-commit-config.yaml", K.CI),
    (".gitlab-ci.yml", K.CI),
    ("Jenkinsfile", K.CI),
    ("docker/Dockerfile.rocm", K.BUILD),
    ("Dockerfile", K.BUILD),
    ("CMakeLists.txt", K.BUILD),
    ("cmake/utils.cmake", K.BUILD),
    ("Makefile", K.BUILD),
    ("setup.py", K.BUILD),
    ("BUILD.bazel", K.BUILD),
    ("webpack.config.js", K.BUILD),
    ("tools/pre_commit/mypy.py", K.TOOLING),
    ("scripts/release.sh", K.TOOLING),
    # a compiler's drivers are programs it builds and installs; Go's tools.go pins developer dependencies
    ("tools/kc-opt/kc-opt.cpp", K.SOURCE),
    ("tools/kc-translate/Translate.h", K.SOURCE),
    ("tools/tools.go", K.TOOLING),
    ("scripts/gen_kernels.cpp", K.TOOLING),
    # the settings, rules and skills of developers' tools and agents (pydantic "Add agent skills")
    (".agents/skills/review/SKILL.py", K.TOOLING),
    (".cursor/rules/style.py", K.TOOLING),
    ("requirements/common.txt", K.DEPENDENCY_MANIFEST),
    ("requirements-dev.txt", K.DEPENDENCY_MANIFEST),
    ("pyproject.toml", K.DEPENDENCY_MANIFEST),
    ("examples/offline_inference/basic.py", K.EXAMPLE),
    ("benchmarks/benchmark_serving.py", K.BENCHMARK),
    ("poetry.lock", K.LOCKFILE),
    ("uv.lock", K.LOCKFILE),
    ("src/api/service_pb2.py", K.GENERATED),
    # JS / TS
    ("web/src/components/Button.tsx", K.SOURCE),
    ("web/src/components/Button.test.tsx", K.TESTS),
    ("web/src/util.spec.ts", K.TESTS),
    ("web/__tests__/app.js", K.TESTS),
    ("package.json", K.DEPENDENCY_MANIFEST),
    ("package-lock.json", K.LOCKFILE),
    ("yarn.lock", K.LOCKFILE),
    ("pnpm-lock.yaml", K.LOCKFILE),
    ("node_modules/react/index.js", K.VENDORED),
    ("public/vendor.min.js", K.MINIFIED),
    ("static/site.min.css", K.MINIFIED),
    ("src/__generated__/schema.ts", K.GENERATED),
    ("src/types.generated.ts", K.GENERATED),
    ("src/__snapshots__/App.test.tsx.snap", K.GENERATED),
    ("tsconfig.json", K.CONFIG),
    (".eslintrc", K.TOOLING),
    # Go
    ("pkg/server/handler.go", K.SOURCE),
    ("pkg/server/handler_test.go", K.TESTS),
    ("go.mod", K.DEPENDENCY_MANIFEST),
    ("go.sum", K.LOCKFILE),
    ("vendor/github.com/pkg/errors/errors.go", K.VENDORED),
    ("api/v1/service.pb.go", K.GENERATED),
    ("pkg/apis/zz_generated.deepcopy.go", K.GENERATED),
    ("internal/gen/client.go", K.GENERATED),
    # Rust
    ("src/lib.rs", K.SOURCE),
    ("benches/parse.rs", K.BENCHMARK),
    ("Cargo.toml", K.DEPENDENCY_MANIFEST),
    ("Cargo.lock", K.LOCKFILE),
    ("build.rs", K.BUILD),
    # Java / JVM
    ("src/main/java/com/acme/Latest.java", K.SOURCE),  # ends in "test", is not a test
    ("src/test/java/com/acme/FooTest.java", K.TESTS),
    ("pom.xml", K.DEPENDENCY_MANIFEST),
    ("build.gradle.kts", K.DEPENDENCY_MANIFEST),
    ("src/main/resources/application.properties", K.CONFIG),
    # C / C++
    ("include/foo/bar.h", K.SOURCE),
    ("third_party/zlib/inflate.c", K.VENDORED),
    # Ruby / PHP
    ("Gemfile", K.DEPENDENCY_MANIFEST),
    ("Gemfile.lock", K.LOCKFILE),
    ("composer.lock", K.LOCKFILE),
    ("spec/models/user_spec.rb", K.TESTS),
    # binary by extension
    ("docs/images/arch.png", K.BINARY),
    ("assets/logo.svg", K.BINARY),
    ("models/weights.safetensors", K.BINARY),
    ("model.onnx", K.BINARY),
    ("ckpt/model.pt", K.BINARY),
    ("lib/libfoo.so", K.BINARY),
    ("dist/pkg.whl", K.BINARY),
    ("fonts/Inter.woff2", K.BINARY),
    ("data/archive.tar.gz", K.BINARY),
    # config
    ("config/app.yaml", K.CONFIG),
    (".env.example", K.CONFIG),
    (".gitmodules", K.CONFIG),  # which submodules a build checks out
    # the configuration of the developers' own tools, at any depth: nothing users run reads it
    (".gitignore", K.TOOLING),
    ("pkg/.gitignore", K.TOOLING),
    (".markdownlint.yaml", K.TOOLING),
    (".editorconfig", K.TOOLING),
    ("eslint.config.mjs", K.TOOLING),
    ("web/jest.config.js", K.TOOLING),
    ("tox.ini", K.TOOLING),
    ("mypy.ini", K.TOOLING),
    ("typos.toml", K.TOOLING),
    (".clang-format", K.TOOLING),
    ("renovate.json", K.TOOLING),
    ("setup.cfg", K.BUILD),
]


@pytest.mark.parametrize(("path", "kind"), TABLE)
def test_classify_path_table(path: str, kind: PathKind) -> None:
    assert classify_path(path) == kind


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("./src/app.py", K.SOURCE),
        ("src\\tests\\test_app.py", K.TESTS),  # Windows separators
        ("DOCS/Guide.MD", K.DOCS),  # case-insensitive
        ("Vendor/lib/x.go", K.VENDORED),
        ("", K.SOURCE),  # unknown is reviewed, never dropped
        ("/", K.SOURCE),
        ("noextension", K.SOURCE),
        ("weird.unknownext", K.SOURCE),
    ],
)
def test_classify_path_odd_input(path: str, kind: PathKind) -> None:
    assert classify_path(path) == kind


def test_low_value_kinds_are_exactly_what_a_budget_drops_first() -> None:
    low = {k for k in PathKind if is_low_value(k)}
    assert low == {K.LOCKFILE, K.GENERATED, K.VENDORED, K.MINIFIED, K.BINARY}


def test_review_priority_orders_source_first_and_low_value_last() -> None:
    p = review_priority
    assert p(K.SOURCE) < p(K.CONFIG) < p(K.BUILD) < p(K.TESTS) < p(K.DOCS)
    assert p(K.BUILD) == p(K.CI)
    assert p(K.EXAMPLE) == p(K.DOCS)
    worst_reviewable = max(p(k) for k in PathKind if not is_low_value(k))
    assert all(p(k) > worst_reviewable for k in PathKind if is_low_value(k))


def test_every_kind_has_a_priority() -> None:
    assert all(isinstance(review_priority(k), int) for k in PathKind)


def test_sorting_by_priority_puts_source_before_its_tests_and_lockfile() -> None:
    paths = ["yarn.lock", "docs/a.md", "tests/test_a.py", "src/a.py", "config/a.yaml"]
    ordered = sorted(paths, key=lambda p: review_priority(classify_path(p)))
    assert ordered == ["src/a.py", "config/a.yaml", "tests/test_a.py", "docs/a.md", "yarn.lock"]


def test_folder_kind_is_what_the_folders_say_whatever_the_files_name() -> None:
    # a docs build's or a workflow's requirements are theirs, not what users install
    assert folder_kind("docs/requirements.txt") == K.DOCS
    assert folder_kind(".github/workflows/requirements.txt") == K.CI
    assert folder_kind("tools/lint/pyproject.toml") == K.TOOLING
    assert folder_kind("pyproject.toml") is None and folder_kind("lib-core/pyproject.toml") is None


def test_a_vendored_looking_tree_is_named_by_its_folder_below_the_vendored_one():
    assert vendored_tree("third_party/acme/lib/Lowering.cpp") == "third_party/acme/"
    assert vendored_tree("third_party/acme/CMakeLists.txt") == "third_party/acme/"
    assert vendored_tree("vendor/github.com/someone/pkg/x.go") == "vendor/github.com/"
    assert vendored_tree("web/node_modules/left-pad/index.js") == "web/node_modules/left-pad/"
    assert (
        vendored_tree("Third_Party/Acme/x.h") == "Third_Party/Acme/"
    )  # as written: paths are case-sensitive
    assert vendored_tree("third_party/README.md") == "third_party/"
    assert vendored_tree("src/engine/core.py") is None
    assert in_vendored_root("vendor/modules.txt") and in_vendored_root("src/pkg/_vendor/vendor.txt")
    assert not in_vendored_root("third_party/acme/x.cc") and not in_vendored_root("src/vendor.py")


def test_a_maintained_tree_is_classified_as_if_its_vendored_folder_were_not_there():
    own = frozenset({"third_party/acme/"})
    assert kind_in("third_party/acme/lib/Lowering.cpp", own) == PathKind.SOURCE
    assert kind_in("third_party/acme/test/lowering_test.py", own) == PathKind.TESTS
    assert kind_in("third_party/acme/docs/guide.md", own) == PathKind.DOCS
    assert kind_in("third_party/zlib/inflate.c", own) == PathKind.VENDORED  # not a maintained tree
    assert kind_in("third_party/acme/lib/Lowering.cpp", frozenset()) == PathKind.VENDORED
    assert classify_own("third_party/acme/lib/vendor/zlib/inflate.c") == PathKind.VENDORED  # a copy inside it


def test_a_dependency_update_is_told_by_what_changes_with_the_copies():
    assert updates_dependencies(["vendor/github.com/x/y.go", "go.mod", "go.sum"])
    assert updates_dependencies(["web/node_modules/left-pad/index.js", "web/package-lock.json"])
    assert updates_dependencies(["src/pkg/_vendor/rich/console.py", "src/pkg/_vendor/vendor.txt"])
    assert not updates_dependencies(["third_party/acme/lib/Lowering.cpp", "third_party/acme/test/x.mlir"])


@pytest.mark.parametrize(
    "path",
    [
        "tests_integration/test_api.py",
        "integration-tests/smoke.py",
        "e2e_tests/login.ts",
        "test_utils/helpers.py",
        "llvm/test-suite/SingleSource/x.c",
        "unit_test/scheduler.cpp",
        "unittest/Dialect/TritonGPU/DialectTest.cpp",  # a compiler's C++ unit tests
        "fuzz/parse_target.cc",
    ],
)
def test_a_folder_named_for_tests_of_a_kind_is_tests(path):
    assert classify_path(path) == PathKind.TESTS


@pytest.mark.parametrize(
    "path",
    ["src/pkg/latest_results/x.py", "src/contest/x.py", "pkg/fastest-path/x.py", "src/attestation/x.py"],
)
def test_a_folder_that_only_contains_the_letters_of_test_is_not(path):
    assert classify_path(path) == PathKind.SOURCE


def test_a_nested_unittest_folder_may_be_a_module():
    assert classify_path("Lib/unittest/case.py") == PathKind.SOURCE  # the standard library's own module


def test_a_nested_testing_folder_is_a_module_users_import():
    # a web framework's `pkg/testing/` holds the test client users write their tests with: ranked as tests,
    # a change to its public return types was "nothing users run changed"
    assert classify_path("kit/testing/client/sync_client.py") == PathKind.SOURCE
    assert classify_path("src/kit/testing/helpers.py") == PathKind.SOURCE
    assert classify_path("testing/test_collection.py") == PathKind.TESTS  # a project's top-level test tree
    assert classify_path("testing/conftest.py") == PathKind.TESTS
