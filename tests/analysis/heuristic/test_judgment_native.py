"""Misjudgments found on synthetic histories shaped like a compiler (C++ under lib/, TableGen, a Python
package, a toolchain submodule) and an inference-engine plugin (entry points, an envs module, patches of the
host engine, custom kernels): each test is built from the shape of the commit that was misjudged."""

from __future__ import annotations

from analysis.heuristic import analyze, rank
from analysis.models import Importance, SurfaceChange, SurfaceKind
from tests.analysis.heuristic.test_heuristic import fc, make
from tests.analysis.heuristic.test_judgment import hunk

LOW, MEDIUM, HIGH = Importance.LOW, Importance.MEDIUM, Importance.HIGH


def test_a_fix_of_wrong_results_or_out_of_bounds_access_changes_what_users_get() -> None:
    # a miscompile fixed in lib/ (12 lines) and a vectorized access past a mask ranked low: "no change found"
    patch = hunk(
        ["    for (unsigned N = size / 2; N > 0; N >>= 1) {"],
        ["    for (unsigned N = rounded / 2; N > 0; N >>= 1) {"],
    )
    for title, named in [
        ("[BACKEND] Fix wrong reduction result when the number of warps is not a power of two (#104)",
         "`wrong reduction result`"),
        ("[BACKEND] Fix out-of-bounds vectorized access with masked loads (#133)", "`out-of-bounds`"),
        ("[BugFix] Fix garbled output with batched requests (#113)", "`garbled output`"),
    ]:  # fmt: skip
        importance, reason = rank(make(title, fc("lib/Conversion/ReduceOpToLLVM.cpp", 10, 2, patch)), "en")
        assert importance == MEDIUM, title
        assert f"fixes a failure users see: {named}" in reason
    # a fix of words or an import is no failure users see
    for title in (
        "Fix typo in the reduce verifier message (#1)",
        "Fix wrong import in the pass registry (#2)",
    ):
        assert rank(make(title, fc("lib/Conversion/ReduceOpToLLVM.cpp", 1, 1, patch)), "en")[0] == LOW


def test_a_submodule_moved_is_a_new_version_of_code_the_build_compiles_in() -> None:
    # "Bump LLVM to 2a3b4c5": only the gitlink of third_party/llvm-project moved; ranked low, "0 files"
    moved = "@@ -1 +1 @@\n-Subproject commit " + "1" * 40 + "\n+Subproject commit " + "2" * 40
    importance, reason = rank(
        make("[BUILD] Bump LLVM to 2a3b4c5 (#108)", fc("third_party/llvm-project", 1, 1, moved)), "en"
    )
    assert importance == MEDIUM
    assert "dependency `third_party/llvm-project`: `1111111` → `2222222` (medium at least)" in reason
    # a docs theme's submodule is no code users run; a vendored file's own patch is no submodule
    theme = make("Bump the docs theme (#9)", fc("docs/_themes/sphinx", 1, 1, moved))
    assert rank(theme, "en")[0] == LOW
    vendored = hunk(["// vendored from upstream f2reduce"], ["// vendored from upstream f2reduce @ 1.2"])
    assert (
        rank(
            make("[BUILD] Update f2reduce (#141)", fc("third_party/f2reduce/f2reduce.cpp", 1, 1, vendored)),
            "en",
        )[0]
        == LOW
    )


def test_a_module_level_patch_of_another_object_changes_what_users_get() -> None:
    # a plugin routing the host engine's RMSNorm.forward_native to its own kernel: one line, ranked low
    patch = hunk([], ["RMSNorm.forward_native = forward_oot"], ["RMSNorm.forward_oot = forward_oot"])
    commit = make(
        "[Ops] Route RMSNorm.forward_native to the NPU kernel too (#127)",
        fc("plugin/ops/layernorm.py", 1, 0, patch),
    )
    importance, reason = rank(commit, "en")
    assert importance == MEDIUM
    assert "replaces another object's behaviour at import: `RMSNorm.forward_native`" in reason
    # an object's own attributes set in a method, and a statement only moved, are no patch
    own = hunk(["        self.forward = forward_oot"], ["        self.forward = forward_native"])
    assert rank(make("Refactor (#1)", fc("plugin/ops/layernorm.py", 1, 1, own)), "en")[0] == LOW
    moved = hunk(
        ["RMSNorm.forward_oot = forward_oot", "x = 1"], ["x = 1", "RMSNorm.forward_oot = forward_oot"]
    )
    assert rank(make("Reorder (#2)", fc("plugin/ops/layernorm.py", 2, 2, moved)), "en")[0] == LOW


def test_a_value_taken_out_of_a_supported_list_breaks_its_users() -> None:
    # "[Quant] Drop w4a16 support": supported_quantization lost a value; ranked low
    patch = hunk(
        ['    supported_quantization = ["w8a8", "w4a16"]'], ['    supported_quantization = ["w8a8"]']
    )
    importance, reason = rank(
        make("[Quant] Drop w4a16 support (#122)", fc("plugin/platform.py", 1, 1, patch)), "en"
    )
    assert importance == HIGH
    assert "drops supported values: `supported_quantization: w4a16`" in reason
    added = hunk(['SUPPORTED_DTYPES = ("fp16", "bf16")'], ['SUPPORTED_DTYPES = ("fp16", "bf16", "fp8")'])
    importance, reason = rank(make("Support fp8 (#3)", fc("plugin/platform.py", 1, 1, added)), "en")
    assert importance == MEDIUM and "supports new values: `SUPPORTED_DTYPES: fp8`" in reason
    # what is not supported growing is no support dropped
    unsupported = hunk(['UNSUPPORTED_OPS = ["a", "b"]'], ['UNSUPPORTED_OPS = ["a"]'])
    assert rank(make("Run b (#4)", fc("plugin/platform.py", 1, 1, unsupported)), "en")[0] == LOW


def test_a_setting_read_from_a_configuration_mapping() -> None:
    # a new key of the plugin's additional_config ranked low; a default flipped was found by the title only
    new = hunk(
        [], ['        self.enable_shared_expert_dp = additional_config.get("enable_shared_expert_dp", False)']
    )
    importance, reason = rank(
        make("[Feat] Add enable_shared_expert_dp (#111)", fc("plugin/npu_config.py", 1, 0, new)), "en"
    )
    assert importance == MEDIUM and "reads new settings `enable_shared_expert_dp`" in reason
    flip = hunk(
        ['        self.use_cached_graph = config.get("use_cached_graph", False)'],
        ['        self.use_cached_graph = config.get("use_cached_graph", True)'],
    )
    importance, reason = rank(
        make("[Torchair] Cached graphs (#112)", fc("plugin/npu_config.py", 1, 1, flip)), "en"
    )
    assert (
        importance == MEDIUM and "changes the default of settings `use_cached_graph: False → True`" in reason
    )
    # the same read moved, the same default retyped, or a mapping that is no configuration: nothing
    same = hunk(['x = config.get("a", 0.0)'], ['y = config.get("a", "0.0")'])
    assert rank(make("Refactor (#5)", fc("plugin/npu_config.py", 1, 1, same)), "en")[0] == LOW
    other = hunk([], ['    value = cache.get("key", None)'])
    assert rank(make("Refactor (#6)", fc("plugin/worker.py", 1, 0, other)), "en")[0] == LOW


def test_a_default_given_under_an_unset_guard_that_changed() -> None:
    # "[Perf] Use 64-token KV blocks": `if cache_config.block_size is None:` then 128 → 64; ranked low
    patch = (
        "@@ -20,4 +20,4 @@\n         cache_config = config.cache_config\n"
        "         if cache_config.block_size is None:\n"
        "-            cache_config.block_size = 128\n+            cache_config.block_size = 64\n"
        "         if npu_config.enabled:"
    )
    importance, reason = rank(
        make("[Perf] Use 64-token KV blocks (#121)", fc("plugin/platform.py", 1, 1, patch)), "en"
    )
    assert importance == MEDIUM
    assert "changes the default of settings `cache_config.block_size: 128 → 64`" in reason
    # another guard, or the same value retyped, is no default changed
    for other in (patch.replace("is None", "> 256"), patch.replace("= 64", "= 128.0")):
        assert rank(make("Tune (#7)", fc("plugin/platform.py", 1, 1, other)), "en")[0] == LOW


def test_outside_a_configuration_module_only_options_or_settings_mappings_are_users_settings() -> None:
    # a model's config.json key read in a model file (`config.get("rope_theta", ...)`) is no user's setting
    model = hunk([], ['        theta = config.get("rope_theta", 10000)'])
    assert rank(make("Fix the config (#29172)", fc("engine/models/mistral.py", 1, 0, model)), "en")[0] == LOW
    served = hunk([], ['        timeout = request_options.get("timeout_s", 30)'])
    importance, reason = rank(make("Add a timeout (#8)", fc("engine/serving/chat.py", 1, 0, served)), "en")
    assert importance == MEDIUM and "reads new settings `timeout_s`" in reason


def test_a_change_to_how_what_ships_is_built_is_medium_at_least() -> None:
    # a compiler flag added in CMakeLists.txt (31 lines) and a source moved between targets (4 lines) ranked
    # low, "no user-facing change found"; both were reverted within days (the build broke on other toolchains)
    flags = hunk(
        ["if(CUDA_VERSION VERSION_GREATER 12.0)"],
        [
            "if(CUDA_VERSION VERSION_GREATER_EQUAL 12.0)",
            '  list(APPEND GPU_FLAGS "-Xfatbin" "-compress-all")',
        ],
    )
    sources = hunk(['  "src/quant/int8_kernels.cu"'], ['  "src/quant/group_quant.cu"'])
    for title, change in [
        ("Use fatbin compression to reduce binary size (#694)", fc("CMakeLists.txt", 2, 1, flags)),
        ("Fix the symbol exposure on the other backend (#647)", fc("cmake/targets.cmake", 1, 1, sources)),
        ("Build the extension with -O3 (#12)", fc("rust/build.rs", 1, 1, hunk(['    "-O2",'], ['    "-O3",']))),
        ("Install the runtime libraries in the image (#31)", fc("docker/Dockerfile", 1, 0, hunk([], ["RUN apt-get install -y libnuma1"]))),
    ]:  # fmt: skip
        commit = make(title, change)
        importance, reason = rank(commit, "en")
        assert importance == MEDIUM, title
        assert f"changes how what ships is built: `{change.path}` (medium at least)" in reason
        analysis = analyze(commit, "en")
        assert any(f"The build of what ships changed (`{change.path}`)" in r for r in analysis.risks)
        assert any("on each supported platform and toolchain" in r for r in analysis.recommendations)
    # a developer's task runner or local environment, a comment, a release bump: nothing users get is built
    # differently
    for title, change in [
        ("Add a lint target (#3)", fc("Makefile", 2, 0, hunk([], ["lint:", "\truff check ."]))),
        ("Add a test session (#4)", fc("noxfile.py", 1, 0, hunk([], ["    session.run('pytest')"]))),
        ("Pin the dev database image (#5)", fc("docker-compose.yml", 1, 1, hunk(["    image: pg:15"], ["    image: pg:16"]))),
        ("Explain the flag (#6)", fc("CMakeLists.txt", 1, 0, hunk([], ["# compression makes the wheel smaller"]))),
        ("Release 1.4.0 (#7)", fc("setup.py", 1, 1, hunk(["    version='1.3.0',"], ["    version='1.4.0',"]))),
    ]:  # fmt: skip
        assert rank(make(title, change), "en")[0] == LOW, title


def test_a_build_files_project_version_bumped_is_a_release_version_bump() -> None:
    # a compiler's "Bump version to 1.5.0": `project(ncc VERSION 1.4.0 …)` in CMakeLists.txt and Meson's
    # `version: '1.4.0'` ranked medium as a change to how what ships is built
    cmake = fc(
        "CMakeLists.txt",
        1,
        1,
        hunk(["project(ncc VERSION 1.4.0 LANGUAGES C CXX)"], ["project(ncc VERSION 1.5.0 LANGUAGES C CXX)"]),
    )
    meson = fc(
        "meson.build",
        1,
        1,
        hunk(["project('ncc', 'cpp', version: '1.4')"], ["project('ncc', 'cpp', version: '1.5')"]),
    )
    parts = fc("cmake/NccVersion.cmake", 2, 2, hunk(
        ["set(NCC_VERSION_MINOR 4)", "set(NCC_VERSION_PATCH 2)"], ["set(NCC_VERSION_MINOR 5)", "set(NCC_VERSION_PATCH 0)"]
    ))  # fmt: skip
    for files in ((cmake,), (meson,), (parts,), (cmake, meson, fc("CHANGELOG.md", 12, 0))):
        importance, reason = rank(make("Bump version to 1.5.0 (#108)", *files), "en")
        assert importance == LOW, files
        assert "a release version bump only" in reason and "how what ships is built" not in reason
    # the build changed beside the version, or what building needs was raised: built differently
    languages = hunk(
        ["project(ncc VERSION 1.4.0 LANGUAGES C CXX)"], ["project(ncc VERSION 1.5.0 LANGUAGES C CXX CUDA)"]
    )
    needs = hunk(["cmake_minimum_required(VERSION 3.20)"], ["cmake_minimum_required(VERSION 3.24)"])
    for patch in (languages, needs):
        importance, reason = rank(make("Release 1.5.0 (#9)", fc("CMakeLists.txt", 1, 1, patch)), "en")
        assert importance == MEDIUM and "changes how what ships is built" in reason


def test_names_a_commit_declaring_no_functional_change_adds_are_no_new_capability() -> None:
    # "[IR] Split size computation into num_functions helper [NFC]": the helper it declares in a public header
    # ranked medium, "new API"; the same names without the declaration are a new capability
    added = SurfaceChange(SurfaceKind.ADDED, "ncc::Module::num_functions", "include/ncc/ir.h", line=9)
    code = fc("include/ncc/ir.h", 1, 0, hunk([], ["  int num_functions() const;"]))
    for title in (
        "[IR] Split size computation into num_functions helper [NFC] (#107)",
        "NFC: factor warning counting out of error_count",
        "[Codegen] Move select lowering into its own function. NFC",
    ):
        importance, reason = rank(make(title, code, surface=(added,)), "en")
        assert importance == LOW, title
        assert "num_functions" not in reason
    assert rank(make("[IR] Add num_functions (#120)", code, surface=(added,)), "en")[0] == MEDIUM
    # what an NFC commit takes away still breaks its callers
    removed = SurfaceChange(SurfaceKind.REMOVED, "ncc::Module::size", "include/ncc/ir.h", line=8)
    assert rank(make("[NFC] Split size", code, surface=(added, removed)), "en")[0] == HIGH


def test_a_developer_requirements_file_is_no_dependency_of_users() -> None:
    # "[CI] Update lit": `requirements/ci-gpu.txt` and a dev folder's pins read as dependencies of users when the
    # files were not parsed (a big commit, a card); the runtime requirements still are
    for path in (
        "requirements/ci-gpu.txt",
        "requirements-ci.txt",
        "requirements/dev/base.txt",
        "requirements/coverage.txt",
    ):
        patch = hunk(["lit==17.0.6"], ["lit==18.1.0"])
        importance, reason = rank(make("Update lit (#117)", fc(path, 1, 1, patch)), "en")
        assert importance == LOW, path
        assert "dependency" not in reason and "nothing users run changed" in reason
    shipped = make(
        "Require numpy 1.26 (#142)",
        fc("requirements/common.txt", 1, 1, hunk(["numpy>=1.24"], ["numpy>=1.26"])),
    )
    importance, reason = rank(shipped, "en")
    assert importance == MEDIUM and "numpy" in reason


def test_a_build_requirement_changed_is_everyones_who_builds_from_source() -> None:
    # "Require CMake 3.26 to build from source": `requirements-build.txt` was read as a maintainers' file (like
    # `requirements-dev.txt`) and ranked low; whoever installs from an sdist or a checkout resolves it
    from analysis.surface.requirements import packaging_changes

    for path in ("requirements-build.txt", "requirements/build.txt"):
        patch = hunk(["cmake>=3.24"], ["cmake>=3.26"])
        surface = tuple(packaging_changes(path, "cmake>=3.24\nninja\n", "cmake>=3.26\nninja\n"))
        assert surface, path
        title = "Require CMake 3.26 to build from source (#105)"
        # read from the patch lines (a big commit, a card) and from the files parsed
        for commit in (
            make(title, fc(path, 1, 1, patch)),
            make(title, fc(path, 1, 1, patch), surface=surface),
        ):
            importance, reason = rank(commit, "en")
            assert importance == MEDIUM, (path, reason)
            assert "dependenc" in reason and "cmake" in reason and "nothing users run changed" not in reason
    # a docs build's requirements stay the maintainers'
    docs = make(
        "Bump sphinx (#9)", fc("requirements-docs-build.txt", 1, 1, hunk(["sphinx==7"], ["sphinx==8"]))
    )
    assert rank(docs, "en")[0] == LOW
