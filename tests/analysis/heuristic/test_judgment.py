"""Impact and risk (issue 16): the two scores, the tier they make, the reason that names the decisive
facts of each, and every misjudgment the issue lists, each built from the real commit's shape."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from analysis.heuristic import analyze, judge_commit, rank
from analysis.heuristic.facts import commit_facts
from analysis.heuristic.prose import describe
from analysis.heuristic.signals import find_signals
from analysis.history.followups import PastCommit
from analysis.history.index import BranchCommit, HistoryIndex
from analysis.models import Commit, FileChange, Importance, SurfaceChange, SurfaceKind
from analysis.paths import PathKind, classify_path
from tests.analysis.heuristic.test_heuristic import fc, make

LOW, MEDIUM, HIGH = Importance.LOW, Importance.MEDIUM, Importance.HIGH
DAY = datetime(2026, 1, 29, 12, 0, tzinfo=UTC)


def hunk(
    removed: list[str], added: list[str], context_before: list[str] = (), context_after: list[str] = ()
) -> str:
    body = [f" {x}" for x in context_before] + [f"-{x}" for x in removed] + [f"+{x}" for x in added]
    body += [f" {x}" for x in context_after]
    old = len(context_before) + len(removed) + len(context_after)
    new = len(context_before) + len(added) + len(context_after)
    return f"@@ -120,{old} +120,{new} @@ def f():\n" + "\n".join(body)


# ---------------------------------------------------------------- the two scores and the reason


def test_a_breaking_change_is_high_whatever_its_size_and_the_reason_says_impact_decided() -> None:
    # vllm: a user-facing config field renamed without an alias broke every user's --compilation-config;
    # it ranked medium with no compatibility risk listed.
    renamed = SurfaceChange(
        SurfaceKind.FIELD_RENAMED,
        "CompilationConfig.level",
        "vllm/config/compilation.py",
        line=88,
        old="CompilationConfig.level",
        new="CompilationConfig.mode",
    )
    commit = make(
        "[Config] Rename compilation level to mode (#27000)",
        fc("vllm/config/compilation.py", 20, 14),
        fc("vllm/compilation/backends.py", 3, 3),
        surface=(renamed,),
    )
    importance, reason = rank(commit, "en")
    assert importance == HIGH
    assert reason.startswith(
        "impact (high): breaks users: renames config field `CompilationConfig.level` → `CompilationConfig.mode`"
        " (no alias); risk (low): 40 changed lines in 2 files (size prior: low)"
    )
    assert reason.endswith("decided by impact")
    a = analyze(commit, "en")
    assert a.impact_score == 3.0 and a.risk_score is not None and a.risk_score > 0
    assert any(
        r.startswith("Breaking change (renames config field `CompilationConfig.level`") for r in a.risks
    )
    assert "breaks users: renames config field" in a.insights["compatibility"]
    assert any("migration path" in r for r in a.recommendations)
    zh = analyze(commit, "zh")
    assert zh.importance_reason.startswith(
        "影响（高）：破坏兼容：将配置字段 `CompilationConfig.level` 重命名为"
    )
    assert "（无别名）" in zh.importance_reason and zh.importance_reason.endswith("由影响决定")


def test_a_rename_that_keeps_an_alias_is_not_breaking() -> None:
    aliased = SurfaceChange(
        SurfaceKind.FIELD_RENAMED,
        "Config.level",
        "src/widget/config.py",
        old="Config.level",
        new="Config.mode",
        aliased=True,
    )
    importance, reason = rank(
        make("Rename level", fc("src/widget/config.py", 6, 2), surface=(aliased,)), "en"
    )
    assert importance == MEDIUM
    assert "users should know: renames config field `Config.level` → `Config.mode` (alias kept)" in reason


def test_an_option_or_variable_renamed_is_named_by_its_old_and_new_names() -> None:
    # The reason said "renames option `--unroll-factor` → `--unroll-factor`": the new name twice.
    option = SurfaceChange(
        SurfaceKind.OPTION_RENAMED,
        "--unroll-factor",
        "lib/Unroll.cpp",
        3,
        old="--unroll-count",
        new="--unroll-factor",
    )
    env = SurfaceChange(SurfaceKind.ENV_RENAMED, "KIT_HOME", "src/env.rs", 9, old="KIT_DIR", new="KIT_HOME")
    commit = make("Rename knobs", fc("lib/Unroll.cpp", 1, 1), fc("src/env.rs", 1, 1), surface=(option, env))
    importance, reason = rank(commit, "en")
    assert importance == HIGH
    assert "renames option `--unroll-count` → `--unroll-factor` (no alias)" in reason
    assert "renames environment variable `KIT_DIR` → `KIT_HOME` (no alias)" in reason


def test_a_name_moved_to_another_module_is_said_whole_on_both_sides() -> None:
    # The reason read "renames `pkg.utils.has_extra` → `has_extra`": the new module was cut off.
    moved = SurfaceChange(
        SurfaceKind.RENAMED,
        "pkg.utils.has_extra",
        "src/pkg/utils/import_utils.py",
        4,
        old="pkg.utils.has_extra",
        new="pkg.utils.import_utils.has_extra",
    )
    renamed = SurfaceChange(
        SurfaceKind.RENAMED,
        "pkg.mod.Loader.run",
        "src/pkg/mod.py",
        9,
        old="pkg.mod.Loader.run",
        new="pkg.mod.Loader.go",
    )
    files = (fc("src/pkg/utils/import_utils.py", 9, 1), fc("src/pkg/mod.py", 2, 2))
    commit = make("Split the helpers", *files, surface=(moved, renamed))
    reason = rank(commit, "en")[1]
    assert "renames `pkg.utils.has_extra` → `pkg.utils.import_utils.has_extra` (no alias)" in reason
    assert "renames `Loader.run` → `Loader.go` (no alias)" in reason  # one module: the names users type


def test_a_switch_that_re_enables_a_path_is_at_least_medium() -> None:
    # vllm: a 6-line change re-enabling expert parallelism for an FP8 MoE backend ranked low.
    flipped = SurfaceChange(
        SurfaceKind.SWITCH_FLIPPED,
        "Fp8MoEMethod.supports_expert_parallel",
        "vllm/model_executor/layers/quantization/fp8.py",
        old="False",
        new="True",
    )
    commit = make(
        "[Bugfix] Re-enable EP for FP8 MoE with FlashInfer (#28000)",
        fc("vllm/model_executor/layers/quantization/fp8.py", 3, 3),
        surface=(flipped,),
    )
    importance, reason = rank(commit, "en")
    assert importance == MEDIUM
    assert "changes behaviour: flips `Fp8MoEMethod.supports_expert_parallel`: `False` → `True`" in reason


def test_a_switch_flip_is_found_in_the_patch_when_the_files_were_not_parsed() -> None:
    patch = hunk(
        ["    supports_expert_parallel: bool = False"], ["    supports_expert_parallel: bool = True"]
    )
    commit = make("Re-enable EP", fc("src/widget/layers/fp8.py", 1, 1, patch))
    importance, reason = rank(commit, "en")
    assert importance == MEDIUM
    assert "flips switches `supports_expert_parallel: false → true`" in reason


def test_a_behaviour_change_is_at_least_medium_and_risk_decides_above_that() -> None:
    changed = SurfaceChange(
        SurfaceKind.DEFAULT_CHANGED,
        "widget.engine.Engine.timeout",
        "src/widget/engine.py",
        old="30",
        new="60",
    )
    small = make("Longer timeout", fc("src/widget/engine.py", 1, 1), surface=(changed,))
    importance, reason = rank(small, "en")
    assert importance == MEDIUM
    assert "impact (medium): changes behaviour: default of `Engine.timeout`: `30` → `60`" in reason
    assert reason.endswith("decided by impact")
    big = make("Longer timeout", fc("src/widget/engine.py", 900, 100), surface=(changed,))
    assert rank(big, "en")[0] == HIGH and rank(big, "en")[1].endswith("decided by risk")


def test_a_module_renamed_or_removed_breaks_users_like_a_removed_name() -> None:
    # `git mv pkg/util.py pkg/utils.py`: no line changed, `from pkg.util import util` broken
    moved = SurfaceChange(
        SurfaceKind.MODULE_RENAMED, "pkg.utils", "pkg/utils.py", old="pkg.util", new="pkg.utils"
    )
    commit = make(
        "Rename pkg.util to pkg.utils",
        FileChange("pkg/utils.py", "renamed", 0, 0, previous_path="pkg/util.py"),
        surface=(moved,),
        shipped=frozenset({"pkg/utils.py"}),
    )
    importance, reason = rank(commit, "en")
    assert importance == HIGH
    assert reason.startswith(
        "impact (high): breaks users: renames module `pkg.util` → `pkg.utils` (no alias)"
    )
    a = analyze(commit, "en")
    assert any(
        r.startswith("Breaking change (renames module `pkg.util` → `pkg.utils` (no alias))") for r in a.risks
    )
    assert "breaks users: renames module `pkg.util` → `pkg.utils`" in a.insights["compatibility"]
    zh = analyze(commit, "zh").importance_reason
    assert zh.startswith("影响（高）：破坏兼容：将模块 `pkg.util` 重命名为 `pkg.utils`（无别名）")
    # a package moved out of what ships: the fact stands though the new path is no runtime file
    gone = SurfaceChange(SurfaceKind.MODULE_REMOVED, "pkg", "pkg/__init__.py")
    moved_out = make(
        "Move the package",
        FileChange("newpkg/__init__.py", "renamed", 0, 0, previous_path="pkg/__init__.py"),
        surface=(gone,),
        shipped=frozenset(),
    )
    importance, reason = rank(moved_out, "en")
    assert importance == HIGH and "removes module `pkg` (no alias)" in reason
    assert "删除模块 `pkg`（无别名）" in analyze(moved_out, "zh").importance_reason
    # a shim keeps the old path: users should know, nothing breaks
    shimmed = SurfaceChange(SurfaceKind.MODULE_RENAMED, "pkg.utils", "pkg/utils.py", old="pkg.util",
                            new="pkg.utils", aliased=True)  # fmt: skip
    importance, reason = rank(make("Rename", fc("pkg/utils.py", 3, 0), surface=(shimmed,)), "en")
    assert importance == MEDIUM and "renames module `pkg.util` → `pkg.utils` (alias kept)" in reason


def test_a_change_deep_in_the_package_weighs_one_step_less() -> None:
    # vllm: a public-named method of a model's internal class removed breaks few users; the same in a
    # module users import from breaks them.
    deep = SurfaceChange(
        SurfaceKind.REMOVED,
        "pkg.model_executor.models.llama.LlamaMLP.fuse",
        "pkg/model_executor/models/llama.py",
    )
    importance, reason = rank(
        make("Refactor", fc("pkg/model_executor/models/llama.py", 4, 20), surface=(deep,)), "en"
    )
    assert importance == MEDIUM
    assert (
        "impact (medium): breaks callers of modules deep in the package: removes `LlamaMLP.fuse` (no alias)"
        in reason
    )
    top = SurfaceChange(SurfaceKind.REMOVED, "pkg.api.connect", "pkg/api.py")
    assert rank(make("Refactor", fc("pkg/api.py", 4, 20), surface=(top,)), "en")[0] == HIGH
    added_deep = SurfaceChange(SurfaceKind.ADDED, "pkg.a.b.c.helper", "pkg/a/b/c.py")
    assert rank(make("Helper", fc("pkg/a/b/c.py", 6, 0), surface=(added_deep,)), "en")[0] == LOW
    option = SurfaceChange(SurfaceKind.OPTION_ADDED, "--fast", "pkg/a/b/cli_args.py")
    assert rank(make("Flag", fc("pkg/a/b/cli_args.py", 6, 0), surface=(option,)), "en")[0] == MEDIUM


def test_a_field_of_an_http_apis_request_model_reaches_every_api_client_however_deep() -> None:
    # vllm #30532: `ResponsesRequest.top_k` added in `vllm/entrypoints/openai/protocol.py` (4 deep) ranked low
    # as "new names deep in the package"; every client of the served API can now send it.
    path = "pkg/entrypoints/openai/protocol.py"
    field = SurfaceChange(
        SurfaceKind.FIELD_ADDED, "pkg.entrypoints.openai.protocol.ResponsesRequest.top_k", path
    )
    # (a title whose verb declares the capability, "add extra body parameters", would be a claim of its own)
    importance, reason = rank(make("extra body parameters", fc(path, 2, 0), surface=(field,)), "en")
    assert importance == LOW and "deep in the package" in reason
    api_field = dataclasses.replace(field, api=True)
    importance, reason = rank(make("add extra body parameters", fc(path, 2, 0), surface=(api_field,)), "en")
    assert importance == MEDIUM and "new capability: adds config field `ResponsesRequest.top_k`" in reason
    removed = dataclasses.replace(api_field, kind=SurfaceKind.FIELD_REMOVED)
    importance, reason = rank(make("drop a parameter", fc(path, 0, 2), surface=(removed,)), "en")
    assert importance == HIGH and "breaks users: removes config field `ResponsesRequest.top_k`" in reason


def test_a_new_capability_is_at_least_medium_and_risk_decides_above_that() -> None:
    added = SurfaceChange(SurfaceKind.OPTION_ADDED, "--max-batch", "src/widget/cli.py")
    small = make("Add --max-batch", fc("src/widget/cli.py", 8, 0), surface=(added,))
    assert rank(small, "en")[0] == MEDIUM
    big = make("Add --max-batch", fc("src/widget/cli.py", 800, 100), surface=(added,))
    importance, reason = rank(big, "en")
    assert importance == HIGH
    assert "impact (medium): new capability: adds option `--max-batch`" in reason
    assert reason.endswith("decided by risk")


def test_surface_changes_in_files_users_do_not_run_count_for_nothing() -> None:
    removed = SurfaceChange(SurfaceKind.REMOVED, "helper", "examples/demo.py")
    commit = make("Tidy example", fc("examples/demo.py", 3, 20), surface=(removed,))
    assert rank(commit, "en")[0] == LOW


def test_scores_are_stated_without_the_text() -> None:
    judgment = judge_commit(make("Tweak", fc("src/widget/engine.py", 5, 5)))
    assert (judgment.importance, judgment.impact, judgment.decided_by) == (LOW, 0.0, "both")
    assert judgment.risk > 0


# ---------------------------------------------------------------- what ships: examples, samples


def test_an_example_tree_the_packaging_does_not_ship_is_docs() -> None:
    # FastAPI: docs_src/ (458 files beside 49 in the package) counted as shipped code, so docs commits
    # touching it were half high. With the packaging's answer, Python files it does not ship are not code.
    files = [fc(f"docs_src/dependencies/tutorial0{i}_an_py310.py", 40, 10) for i in range(10)]
    files.append(fc("docs/en/docs/tutorial/dependencies/index.md", 200, 50))
    commit = make("📝 Update dependencies tutorial", *files, shipped=frozenset())
    importance, reason = rank(commit, "en")
    assert importance == LOW
    assert "nothing users run changed" in reason
    # The same paths with the packaging unknown: today's path rules, by size, unless the title says docs (📝)
    assert rank(make("Update dependencies tutorial", *files), "en")[0] != LOW
    importance, reason = rank(make("📝 Update dependencies tutorial", *files), "en")
    assert importance == LOW and "a docs or tests change by its title: `docs` (low at most)" in reason


def test_dotfiles_and_shell_scripts_the_packaging_does_not_ship_are_the_repositorys_chores() -> None:
    # pydantic: "Run `yamlfmt` as a pre-commit hook" (workflows, `.pre-commit-config.yaml`, `.yamlfmt.yaml`,
    # `mkdocs.yml`: 1,500 lines) and a docs build's `build-docs.sh` ranked medium by size: the tool's own
    # settings file and the script read as runtime code.
    files = [
        fc(".github/workflows/third-party.yml", 300, 280),
        fc(".pre-commit-config.yaml", 40, 33),
        fc(".yamlfmt.yaml", 7, 0),
        fc("mkdocs.yml", 260, 260),
        fc("build-docs.sh", 4, 2),
    ]
    importance, reason = rank(
        make("Run yamlfmt as a pre-commit hook (#12489)", *files, shipped=frozenset()), "en"
    )
    assert importance == LOW and "nothing users run changed" in reason
    # a tool's settings are no runtime code where the packaging is unknown either; a dotenv file an app reads is
    settings = make(
        "Enforce single quotes in YAML (#12678)", fc(".yamlfmt.yaml", 3, 1), fc(".markdownlint.yaml", 2, 2)
    )
    assert "nothing users run changed" in rank(settings, "en")[1]
    dotenv = make("Raise the worker count in production (#12679)", fc(".env.production", 1, 1))
    assert "nothing users run changed" not in rank(dotenv, "en")[1]
    # a shell script the packaging ships (`scripts=[...]`) is what users run
    shipped = make(
        "Fix the launcher (#12490)", fc("bin/launch.sh", 30, 10), shipped=frozenset({"bin/launch.sh"})
    )
    assert "nothing users run changed" not in rank(shipped, "en")[1]


def test_a_shipped_file_is_code_whatever_its_folder_is_called() -> None:
    commit = make(
        "Sampler",
        fc("pkg/examples/runtime_hooks.py", 300, 77),
        shipped=frozenset({"pkg/examples/runtime_hooks.py"}),
    )
    assert rank(commit, "en")[0] == MEDIUM


def test_a_sample_folder_inside_the_package_is_code_not_examples() -> None:
    # vllm: a 377-line sampler change ranked low because every sample/ folder counted as examples.
    assert classify_path("vllm/v1/sample/sampler.py") == PathKind.SOURCE
    assert classify_path("vllm/v1/sample/ops/topk_topp_sampler.py") == PathKind.SOURCE
    assert classify_path("sample/app.py") == PathKind.EXAMPLE  # a top-level sample app is an example
    assert classify_path("src/examples/basic.py") == PathKind.EXAMPLE  # plural names stay examples anywhere
    commit = make(
        "[Perf] Faster top-k/top-p sampling (#29000)",
        fc("vllm/v1/sample/ops/topk_topp_sampler.py", 301, 76),
    )
    assert rank(commit, "en")[0] == MEDIUM


# ---------------------------------------------------------------- prose, security evidence


_DOCSTRING_TYPO = (
    "@@ -1259,7 +1259,7 @@ def Field(  # noqa: C901\n"
    "         max_length: Maximum length for iterables.\n"
    "         pattern: Pattern for strings (a regular expression).\n"
    "         allow_inf_nan: Allow `inf`, `-inf`, `nan`. Only applicable to float and numbers.\n"
    "-        max_digits: Maximum number of allow digits for strings.\n"
    "+        max_digits: Maximum number of allowed digits for numbers.\n"
    "         decimal_places: Maximum number of decimal places allowed for numbers.\n"
    "         union_mode: The strategy to apply when validating a union. Can be `smart` (the default).\n"
    "             See [Union Mode](../concepts/unions.md#union-modes) for details.\n"
)


def test_a_docstring_only_edit_is_prose_not_code() -> None:
    # pydantic #13314: docstring fixes in the middle of a long docstring (no quote in the hunk).
    commit = make(
        "Fix docstring errors in Field (#13314)",
        fc("pydantic/fields.py", 1, 1, _DOCSTRING_TYPO),
        shipped=frozenset({"pydantic/fields.py"}),
    )
    importance, reason = rank(commit, "en")
    assert importance == LOW
    assert reason.startswith(
        "impact (low): only comments, docstrings, messages or layout change in `pydantic/fields.py`"
    )
    # One changed line of code beside it and it is code again.
    code = hunk(["    return a"], ["    return b"], ["def g():"])
    mixed = make("Fix", fc("pydantic/fields.py", 1, 1, _DOCSTRING_TYPO + "\n" + code[code.index("@@") :]))
    assert "only comments, docstrings, messages or layout" not in rank(mixed, "en")[1]


# pydantic #12737 ("Add more version directives in documentation"): an attribute docstring rewritten,
# its code example dedented, so that the hunk starts inside the docstring with lines that read as code.
_DOCSTRING_EXAMPLE = (
    "@@ -240,14 +240,12 @@ Base64Bytes = Annotated[bytes, EncodedBytes(encoder=Base64Encoder)]\n"
    "-Warning:\n"
    "-    In older versions, `Base64Bytes` used `base64.encodebytes`.\n"
    "+/// version-changed | v2.10\n"
    "+`Base64Bytes` now uses `base64.b64encode()`.\n"
    "-    ```python\n"
    "-    import base64\n"
    "-    from typing import Annotated, Literal\n"
    "-    class LegacyBase64Encoder(EncoderProtocol):\n"
    "-        @classmethod\n"
    "-        def decode(cls, data: bytes) -> bytes:\n"
    "-            return base64.decodebytes(data)\n"
    "+```python\n"
    "+import base64\n"
    "+from typing import Annotated, Literal\n"
    "+class LegacyBase64Encoder(EncoderProtocol):\n"
    "+    @classmethod\n"
    "+    def decode(cls, data: bytes) -> bytes:\n"
    "+        return base64.decodebytes(data)\n"
    '     """\n'
)


def test_a_docstring_the_patch_reads_as_code_is_prose_by_the_syntax_trees() -> None:
    files = (fc("docs/concepts/types.md", 40, 20), fc("widget/types.py", 41, 41, _DOCSTRING_EXAMPLE))
    # The patch alone: the dedented example reads as code, so the commit ranks as code.
    assert (
        "only comments, docstrings, messages or layout"
        not in rank(make("Add version directives in documentation", *files), "en")[1]
    )
    # The surface step parsed both versions: equal trees but for the docstring.
    commit = make(
        "Add version directives in documentation",
        *files,
        shipped=frozenset({"widget/types.py"}),
        surface=(),
        prose_files=frozenset({"widget/types.py"}),
    )
    importance, reason = rank(commit, "en")
    assert importance == LOW
    assert reason.startswith(
        "impact (low): only comments, docstrings, messages or layout change in `widget/types.py`"
    )


def test_a_security_folder_does_not_make_a_docstring_typo_a_security_fix() -> None:
    # FastAPI: a typo in a docstring under fastapi/security/ ranked high.
    patch = (
        "@@ -40,7 +40,7 @@ class OAuth2PasswordRequestForm:\n"
        "         Doc(\n"
        '             """\n'
        "             The OAuth2 spec says it is required and MUST be the fixed string\n"
        '-            "password". Nevertheless, this dependency class is permissive and\n'
        '+            "password". Nevertheless, this dependency class is permissive and also\n'
        "             allows not passing it.\n"
        '             """\n'
        "         ),\n"
    )
    commit = make("✏️ Fix typo in OAuth2 docs (#14000)", fc("fastapi/security/oauth2.py", 1, 1, patch))
    importance, reason = rank(commit, "en")
    assert importance == LOW
    assert "security-relevant" not in reason
    # Code changed in the same file is evidence.
    code = hunk(
        ["        self.grant_type = grant_type"], ["        self.grant_type = grant_type or 'password'"]
    )
    assert (
        "security-relevant"
        in rank(make("Fix grant type", fc("fastapi/security/oauth2.py", 1, 1, code)), "en")[1]
    )


def test_a_revert_of_a_typo_fix_is_low() -> None:
    # pydantic #12889: Revert "Fix duplicated words in v1 comments (#12865)": comments only.
    patch = hunk(
        ["            # doesn't make sense since the time loop back around to 0"],
        ["            # doesn't make sense since the time time loop back around to 0"],
        ["        if number >= 86400:"],
        ["            raise errors.TimeError()"],
    )
    commit = make(
        'Revert "Fix duplicated words in v1 comments (#12865)" (#12889)',
        fc("pydantic/v1/datetime_parse.py", 1, 1, patch),
    )
    importance, reason = rank(commit, "en")
    assert importance == LOW
    assert "reverts an earlier commit" in reason and "raises" not in reason


def test_a_revert_keeps_the_weight_of_what_it_undoes_but_is_not_breaking_by_its_removals() -> None:
    removed = SurfaceChange(SurfaceKind.REMOVED, "widget.fused_sampler", "src/widget/sampler.py")
    commit = make(
        'Revert "Add fused sampler (#4242)"', fc("src/widget/sampler.py", 0, 30), surface=(removed,)
    )
    importance, reason = rank(commit, "en")
    assert importance == MEDIUM  # undoing a capability: behaviour weight, one step over low risk
    # what it removes is what it takes back: a medium commit is not said to break users
    assert "takes back what the reverted change brought: removes `widget.fused_sampler`" in reason
    assert "breaks users" not in reason
    _, zh = rank(commit, "zh")
    assert "撤回被回滚改动带来的内容" in zh and "破坏兼容" not in zh


# ---------------------------------------------------------------- packaging: versions, dependencies


def test_dropping_a_supported_python_version_is_high() -> None:
    # pydantic #13070 "Drop support for Python 3.9" ranked low.
    patch = hunk(['requires-python = ">=3.9"'], ['requires-python = ">=3.10"'])
    classifiers = hunk(
        ['    "Programming Language :: Python :: 3.9",'], [], ['    "Programming Language :: Python :: 3.8",']
    )
    commit = make(
        "Drop support for Python 3.9 (#13070)",
        fc("pyproject.toml", 1, 2, patch + "\n" + classifiers[classifiers.index("@@") :]),
    )
    importance, reason = rank(commit, "en")
    assert importance == HIGH
    assert "breaks users: drops support for `Python 3.9`" in reason
    # From the parsed surface facts when the files were read: found twice (requires-python and a
    # classifier), said once.
    dropped = SurfaceChange(SurfaceKind.SUPPORT_DROPPED, "Python 3.9", "pyproject.toml")
    importance, reason = rank(make("Drop 3.9", fc("pyproject.toml", 1, 1), surface=(dropped, dropped)), "en")
    assert importance == HIGH and reason.count("Python 3.9") == 1


def test_dropping_a_major_version_of_a_dependency_is_high_and_moving_within_it_is_not() -> None:
    # A web framework's "Drop support for Pydantic v1", listed under its breaking changes: the floor of a
    # runtime requirement raised past a major version users were on.
    from analysis.surface.requirements import packaging_changes

    before = '[project]\nname = "web"\ndependencies = ["pydantic>=1.10,<3", "starlette>=0.40,<0.48"]\n'

    def ranked(title: str, after: str) -> tuple[Importance, str]:
        surface = tuple(packaging_changes("pyproject.toml", before, after))
        return rank(make(title, fc("pyproject.toml", 1, 1), surface=surface), "en")

    importance, reason = ranked(
        "Drop support for Pydantic v1 (#14000)", before.replace(">=1.10,<3", ">=2.7,<3")
    )
    assert importance == HIGH and "breaks users: drops support for `pydantic 1`" in reason
    # "Add support for `pip install fastapi[standard]`", listed as breaking: starlette left the default install
    extra = before.replace(
        ', "starlette>=0.40,<0.48"]',
        ']\n[project.optional-dependencies]\nstandard = ["starlette>=0.40,<0.48"]',
    )
    importance, reason = ranked("Move starlette to the standard extra (#14002)", extra)
    assert (
        importance == HIGH
        and "no longer installs dependency `starlette` by default (now in extra `standard`)" in reason
    )
    # an inference plugin's "Removal of ray from requirements", listed as breaking: no install brings it now
    gone = before.replace(', "starlette>=0.40,<0.48"]', "]")
    importance, reason = ranked("Remove starlette from the requirements (#14003)", gone)
    assert importance == HIGH and "no longer installs runtime dependency `starlette` (removed)" in reason
    # "Upgrade Starlette supported range": users get a newer one, none they had is refused
    upgraded = before.replace("starlette>=0.40,<0.48", "starlette>=0.40,<0.49")
    importance, reason = ranked("Upgrade Starlette supported version range (#14001)", upgraded)
    assert importance == MEDIUM and "breaks users" not in reason


def test_coverage_omit_paths_are_not_dependency_changes() -> None:
    # FastAPI: coverage `omit` entries (paths with digits) read as dependency changes.
    patch = (
        "@@ -200,6 +200,8 @@ omit = [\n"
        '     "docs_src/response_model/tutorial003_04.py",\n'
        '+    "docs_src/dependencies/tutorial013_an_py310.py",\n'
        '+    "docs_src/dependencies/tutorial014_an_py310.py",\n'
        " ]\n"
    )
    importance, reason = rank(make("Omit tutorials from coverage", fc("pyproject.toml", 2, 0, patch)), "en")
    assert "dependency" not in reason
    assert importance == LOW


def test_a_tool_setting_with_a_version_is_not_a_dependency() -> None:
    patch = "@@ -90,3 +90,3 @@\n [tool.uv]\n-required-version = '0.7.2'\n+required-version = '0.8.4'\n"
    assert "dependency" not in rank(make("Bump uv", fc("pyproject.toml", 1, 1, patch)), "en")[1]
    deps = '@@ -10,3 +10,3 @@\n [dependencies]\n-serde = "1.0.100"\n+serde = "1.0.200"\n'
    assert "`serde 1.0.100 → 1.0.200`" in rank(make("Bump serde", fc("Cargo.toml", 1, 1, deps)), "en")[1]


def test_dev_only_requirements_change_nothing_users_install() -> None:
    patch = hunk(["pytest==8.3.0"], ["pytest==8.4.0"])
    importance, reason = rank(make("Bump pytest", fc("requirements/test.txt", 1, 1, patch)), "en")
    assert "dependency" not in reason and importance == LOW
    groups = "@@ -30,3 +30,3 @@\n [dependency-groups]\n-dev = ['pytest>=8.3']\n+dev = ['pytest>=8.4']\n"
    assert "dependency" not in rank(make("Bump pytest", fc("pyproject.toml", 1, 1, groups)), "en")[1]


def test_a_release_version_bump_is_low_unless_it_changes_what_ships() -> None:
    # pydantic "Prepare release v2.11.0": the version line and the release notes.
    bump = fc("pydantic/version.py", 1, 1, hunk(["VERSION = '2.11.0b2'"], ["VERSION = '2.11.0'"]))
    notes = fc("HISTORY.md", 33, 0)
    importance, reason = rank(make("Prepare release v2.11.0 (#11635)", bump, notes), "en")
    assert importance == LOW
    assert "a release version bump only (`pydantic/version.py`)" in reason
    pin = fc("pyproject.toml", 1, 1, hunk(["    'pydantic-core==2.33.0',"], ["    'pydantic-core==2.33.1',"]))
    assert rank(make("Prepare release v2.11.1", bump, notes, pin), "en")[0] == MEDIUM


def test_a_release_that_moves_the_versions_it_is_built_with_is_a_version_bump() -> None:
    # pydantic "Prepare release v2.12.0": VERSION and the core version it checks at import both move.
    bump = fc(
        "pkg/version.py",
        2,
        2,
        hunk(
            ["VERSION = '2.12.0b1'", "_COMPATIBLE_CORE_VERSION = '2.41.1'"],
            ["VERSION = '2.12.0'", "_COMPATIBLE_CORE_VERSION = '2.41.4'"],
        ),
    )
    importance, reason = rank(make("Prepare release v2.12.0", bump, fc("HISTORY.md", 40, 0)), "en")
    assert importance == LOW and "a release version bump only" in reason


def test_packaging_metadata_changes_nothing_users_run_unless_it_states_something_for_them() -> None:
    # pydantic "Update project metadata to use PEP 639": the license fields of pyproject.toml change; its
    # parsed facts say nothing users install or run changed.
    patch = hunk(["license = {text = 'MIT'}"], ["license = 'MIT'", "license-files = ['LICENSE']"])
    meta = fc("pyproject.toml", 2, 1, patch)
    importance, reason = rank(make("Use PEP 639 license metadata", meta, surface=()), "en")
    assert importance == LOW and "nothing users run changed" in reason
    added = SurfaceChange(SurfaceKind.SUPPORT_ADDED, "Python 3.14", "pyproject.toml")
    importance, reason = rank(make("Add support for Python 3.14", meta, surface=(added,)), "en")
    assert importance == MEDIUM and "new capability: adds support for `Python 3.14`" in reason


def test_a_behaviour_change_deep_in_the_package_is_said_so_and_weighs_one_step_less() -> None:
    wide = SurfaceChange(
        SurfaceKind.DEFAULT_CHANGED, "pkg.api.connect(timeout)", "pkg/api.py", old="10", new="30"
    )
    # vllm: a default of a scheduler policy's method deep in the engine reaches the engine's own callers
    deep = SurfaceChange(
        SurfaceKind.DEFAULT_CHANGED,
        "pkg.engine.sched.policy.Policy.pick(limit)",
        "pkg/engine/sched/policy.py",
        old="4",
        new="8",
    )
    importance, reason = rank(
        make("Tune", fc("pkg/api.py", 1, 1), fc("pkg/engine/sched/policy.py", 3, 0), surface=(wide, deep)),
        "en",
    )
    assert importance == MEDIUM
    assert reason.startswith(
        "impact (medium): changes behaviour: default of `connect(timeout)`: `10` → `30`,"
        " changes behaviour deep in the package: default of `Policy.pick(limit)`: `4` → `8`;"
    )
    alone = make("Tune", fc("pkg/engine/sched/policy.py", 1, 1), surface=(deep,))
    assert judge_commit(alone).impact == 1


# ---------------------------------------------------------------- the reason line: short and plain


def test_the_reason_names_at_most_three_facts_per_score_in_plain_words() -> None:
    # pydantic: a commit deprecating 195 functions had a reason of 27 facts; a guard's raw condition and
    # a default that is a call expression were quoted as code.
    deprecated = tuple(
        SurfaceChange(SurfaceKind.DEPRECATION, f"pkg.core_schema.with_info_{i}", "pkg/core_schema.py")
        for i in range(30)
    )
    lifted = SurfaceChange(
        SurfaceKind.SWITCH_FLIPPED,
        "pkg.engine.Engine.step",
        "pkg/engine.py",
        old="self.parallel_config.enable_expert_parallel and not current_platform.is_cuda()",
    )
    expr = SurfaceChange(
        SurfaceKind.DEFAULT_CHANGED,
        "pkg.engine.Engine.pool",
        "pkg/engine.py",
        old="field(default_factory=lambda: ThreadPool(4))",
        new="field(default_factory=lambda: ThreadPool(8))",
    )
    new_files = tuple(fc(f"pkg/new/m{i}.py", 80, 0, status="added") for i in range(12))
    commit = make(
        "Deprecate helpers",
        fc("pkg/core_schema.py", 30, 10),
        fc("pkg/engine.py", 6, 2),
        fc("pkg/core_schema_docs.py", 1, 1, hunk(["# old"], ["# new"])),
        *new_files,
        surface=(*deprecated, lifted, expr),
    )
    _, reason = rank(commit, "en")
    impact = reason.split("; risk (")[0]
    assert impact == (
        "impact (medium): changes behaviour: lets `Engine.step` take a path it refused,"
        " changes the default of `Engine.pool`, users should know: deprecates `with_info_0` and 29 more"
    )
    assert "current_platform" not in reason and "ThreadPool" not in reason
    assert "mostly new files (`pkg/new/m0.py` and 11 more)" in reason
    assert "comments, docstrings" not in reason  # a statement without weight beside findings is noise
    assert len(reason) < 400


def test_a_lifted_guard_says_which_check_went_in_the_compatibility_and_risk_lines() -> None:
    # vllm: a pooling method lost its `assert not cursor.is_partial_prefill()`; the analysis said only
    # "flips `AllPool.forward_all`", which names no switch and no check
    lifted = SurfaceChange(
        SurfaceKind.SWITCH_FLIPPED,
        "pkg.pool.AllPool.forward_all",
        "pkg/pool.py",
        old="not cursor.is_partial()",
    )
    long = SurfaceChange(
        SurfaceKind.SWITCH_FLIPPED, "pkg.pool.Sum.forward", "pkg/pool.py", old="x and " * 30 + "y"
    )
    assert describe(lifted, "en") == (
        "lets `pkg.pool.AllPool.forward_all` take a path it refused (it no longer checks `not cursor.is_partial()`)"
    )
    assert (
        describe(lifted, "zh")
        == "`pkg.pool.AllPool.forward_all` 不再拒绝此前不支持的路径（不再检查 `not cursor.is_partial()`）"
    )
    assert describe(long, "en") == "lets `pkg.pool.Sum.forward` take a path it refused"  # too long to quote
    analysis = analyze(make("Chunked pooling", fc("pkg/pool.py", 12, 4), surface=(lifted,)), lang="en")
    risks = " ".join(analysis.risks)
    assert "it no longer checks `not cursor.is_partial()`" in risks and "flips" not in risks


def test_changes_that_read_the_same_are_said_once_with_how_many_modules() -> None:
    # an export command adding `write` to two modules; vllm: a class and its re-export in the package's
    # __init__ were stated with their full module paths, 200 characters for one name
    added = tuple(
        SurfaceChange(SurfaceKind.ADDED, f"widgets.export.{m}.write", f"widgets/export/{m}.py")
        for m in ("cli", "io")
    )
    config = SurfaceChange(SurfaceKind.ADDED, "widgets.config.MAX_ROWS", "widgets/config.py")
    files = (fc("widgets/export/cli.py", 9), fc("widgets/export/io.py", 9), fc("widgets/config.py", 1))
    _, reason = rank(make("Add an export command", *files, surface=(*added, config, config)), "en")
    assert reason.startswith(
        "impact (medium): new capability: adds `write` (in 2 modules), adds `MAX_ROWS`; risk"
    )


# ---------------------------------------------------------------- size alone, defaults retyped


def test_an_isolated_new_model_file_is_not_high_by_size_alone() -> None:
    # vllm: an isolated new model file ranked high by its size.
    commit = make(
        "[Model] Add Foo-7B (#28500)",
        fc("vllm/model_executor/models/foo.py", 912, 0, status="added"),
        fc("vllm/model_executor/models/registry.py", 1, 0),
        fc("tests/models/registry.py", 3, 0),
        fc("docs/models/supported_models.md", 1, 0),
    )
    importance, reason = rank(commit, "en")
    assert importance == MEDIUM
    assert (
        "mostly new files (`vllm/model_executor/models/foo.py`), existing code paths barely touched (medium at most)"
        in reason
    )
    # New files wired in by more than a small change are not isolated.
    wired = make(
        "[Core] Model runner V2",
        fc("src/widget/runner2.py", 900, 0, status="added"),
        fc("src/widget/sched.py", 60, 20),
    )
    assert rank(wired, "en")[0] == HIGH


def test_a_number_retyped_as_the_same_string_is_no_changed_default() -> None:
    # vllm: a benchmark-dataset feature ranked high because `default 0.0 → "0.0"` read as a changed default.
    patch = hunk(
        ['    parser.add_argument("--temperature", type=float, default=0.0)'],
        ['    parser.add_argument("--temperature", type=float, default="0.0")'],
    )
    importance, reason = rank(
        make("[Bench] New dataset", fc("vllm/benchmarks/datasets.py", 1, 1, patch)), "en"
    )
    assert "default" not in reason
    assert importance == LOW
    really = hunk(['    p.add_argument("--t", default=0.0)'], ['    p.add_argument("--t", default=0.7)'])
    assert "default 0.0 → 0.7" in rank(make("Warmer", fc("src/widget/cli.py", 1, 1, really)), "en")[1]


def test_with_parsed_files_code_defaults_come_from_the_surface_facts() -> None:
    patch = hunk(['    p.add_argument("--t", default=0.0)'], ['    p.add_argument("--t", default=0.7)'])
    commit = make("Warmer", fc("src/widget/cli.py", 1, 1, patch), surface=())
    assert "default" not in rank(commit, "en")[1]  # the parser compared the values and found none changed


# ---------------------------------------------------------------- automated accounts


def _past(n: int, when: datetime, lines: int, *, bot: bool) -> PastCommit:
    return BranchCommit(f"{n:040x}", when, f"Change {n}", ((f"src/m{n % 7}.py", lines),), automated=bot)


def test_bot_commits_are_left_out_of_the_percentile_baseline() -> None:
    # FastAPI: one-line release-notes commits by a bot were half the history and skewed the baseline.
    start = DAY - timedelta(days=100)
    humans = [_past(i, start + timedelta(hours=5 * i), 10 + i % 90, bot=False) for i in range(250)]
    bots = [_past(1000 + i, start + timedelta(hours=5 * i, minutes=1), 1, bot=True) for i in range(250)]
    with_bots = HistoryIndex(humans + bots, [], DAY)
    probe = make("Change", fc("src/m1.py", 40, 0))
    facts = with_bots.facts(probe)
    assert facts.baseline == 250 and facts.commits_seen == 500
    # Counted as people, the bots' one-liners would sit below everything and lift every percentile.
    as_people = HistoryIndex(
        [PastCommit(c.sha, c.committed_at, c.message, c.files) for c in humans + bots], [], DAY
    )
    assert as_people.facts(probe).percentile > facts.percentile + 0.2
    pct = round(100 * facts.percentile)
    assert f"riskier than {pct}% of the last 180 days' commits" in rank(probe, "en", history=facts)[1]


@pytest.mark.parametrize(
    ("name", "login", "email", "bot"),
    [
        ("dependabot[bot]", None, "49699333+dependabot[bot]@users.noreply.github.com", True),
        ("github-actions", None, "github-actions@github.com", True),
        ("Renovate Bot", None, "bot@renovateapp.com", True),
        ("Ada", "pre-commit-ci[bot]", None, True),
        ("Ada Lovelace", "ada", "12345+ada@users.noreply.github.com", False),
        ("Abbot Smith", None, "abbot@example.com", False),
    ],
)
def test_automated_accounts_are_known_by_their_identity(name, login, email, bot) -> None:
    from analysis.history.automation import is_automated

    assert is_automated(name, login, email) is bot


def test_dependency_facts_from_the_packaging_replace_the_patch_rule() -> None:
    changed = SurfaceChange(
        SurfaceKind.DEPENDENCY_CHANGED, "typing-extensions", "pyproject.toml", old=">=4.13", new=">=4.14.1"
    )
    importance, reason = rank(
        make("Bump typing-extensions", fc("pyproject.toml", 1, 1), surface=(changed,)), "en"
    )
    assert importance == MEDIUM
    assert "changes dependency versions: dependency `typing-extensions`: `>=4.13` → `>=4.14.1`" in reason
    # Parsed and no dependency fact: a version-looking line in a tool section says nothing.
    patch = hunk(['    "pytest==8.3",'], ['    "pytest==8.4",'])
    assert "dependency" not in rank(make("Bump", fc("pyproject.toml", 1, 1, patch), surface=()), "en")[1]


def test_a_parameter_made_required_breaks_callers() -> None:
    required = SurfaceChange(SurfaceKind.PARAM_REQUIRED, "widget.connect.timeout", "src/widget/net.py")
    importance, reason = rank(
        make("Require a timeout", fc("src/widget/net.py", 2, 1), surface=(required,)), "en"
    )
    assert importance == HIGH
    assert "breaks users: makes parameter `widget.connect.timeout` required (no alias)" in reason


def test_a_docs_change_with_its_linters_configuration_changes_nothing_users_run() -> None:
    # pydantic "Lint Markdown files using markdownlint": 1,400 lines of docs and a new `.markdownlint.yaml`
    # ranked high by size, the linter's configuration read as configuration users run.
    docs = [fc(f"docs/concepts/page{i}.md", 60, 60) for i in range(10)]
    lint = fc(".markdownlint.yaml", 34, 0, status="added")
    for shipped in (None, frozenset({"pkg/__init__.py"})):
        importance, reason = rank(make("Lint Markdown files (#11307)", *docs, lint, shipped=shipped), "en")
        assert importance == LOW and "nothing users run changed" in reason
    # configuration a program reads stays what users run
    importance, reason = rank(make("Tune the defaults (#11308)", *docs, fc("config/app.yaml", 34, 0)), "en")
    assert "nothing users run changed" not in reason


def test_an_environment_variable_of_the_projects_own_tests_or_ci_breaks_no_user() -> None:
    # vllm "[CI] fix docker image build ...": setup.py stopped reading `VLLM_TEST_USE_PRECOMPILED_NIGHTLY_WHEEL`,
    # a switch of its own CI, and the CI fix ranked high as "breaks users".
    setup = fc("setup.py", 10, 30)
    for name in ("PKG_TEST_USE_NIGHTLY_WHEEL", "RUN_SLOW_TESTS", "PKG_CI_SHARD"):
        gone = SurfaceChange(SurfaceKind.ENV_REMOVED, name, "setup.py", line=40)
        importance, reason = rank(make("[CI] Fix the image build (#29930)", setup, surface=(gone,)), "en")
        assert "breaks users" not in reason and importance != HIGH, (name, reason)
    # one users set still breaks them
    gone = SurfaceChange(SurfaceKind.ENV_REMOVED, "PKG_USE_PRECOMPILED", "setup.py", line=40)
    importance, reason = rank(make("[Build] Drop a build switch (#29931)", setup, surface=(gone,)), "en")
    assert importance == HIGH and "removes environment variable `PKG_USE_PRECOMPILED` (no alias)" in reason


def test_a_title_that_changes_a_default_is_a_behaviour_change_when_code_users_run_changed() -> None:
    # vllm "Prefer FlashAttention MLA as default over FlashMLA": four lines reorder a backend priority list,
    # no literal default the patch rules read; every user of that path gets another backend. Ranked low.
    patch = hunk(["    return [FLASHMLA, FLASH_ATTN_MLA]"], ["    return [FLASH_ATTN_MLA, FLASHMLA]"])
    code = fc("pkg/platforms/cuda.py", 2, 2, patch)
    importance, reason = rank(make("Prefer FlashAttention MLA as default over FlashMLA (#27363)", code), "en")
    assert importance == MEDIUM
    assert "changes what users get by default (title: `as default`)" in reason
    for title in (
        "Disable the sampler by default (#26859)",
        "[LoRA] Set default MXFP4 LoRA backend to Marlin",
        "Make Router.Strict matching the default (#411)",  # a Go router's constructor sets `Strict: true`
        "Make lld the default linker on Linux",
    ):
        assert rank(make(title, code), "en")[0] == MEDIUM, title
    for title in ("Make sure the default is kept (#412)", "Make the test use the default config (#413)"):
        assert rank(make(title, code), "en")[0] == LOW, title
    # a claim without code users run behind it, or no claim, changes nothing
    docs = fc("docs/serving.md", 10, 2)
    assert rank(make("[Doc] Clarify the default behavior of the scheduler (#18698)", docs), "en")[0] == LOW
    assert rank(make("Reorder the backend list (#27364)", code), "en")[0] == LOW


def test_a_message_that_declares_its_change_breaking_is_high_when_code_users_run_changed() -> None:
    # A web framework's "💥 Change default of `redirect_slashes` to `False`": a default flipped on the app
    # class, which its release notes list under Breaking Changes; the default change alone weighs medium.
    patch = hunk(["        redirect_slashes: bool = True,"], ["        redirect_slashes: bool = False,"])
    code = fc("web/applications.py", 1, 1, patch)
    importance, reason = rank(make("💥 Change default of `redirect_slashes` to `False` (#1368)", code), "en")
    assert importance == HIGH
    assert "the message declares a breaking change: `💥`" in reason
    a = analyze(make("💥 Change default of `redirect_slashes` to `False` (#1368)", code), "en")
    assert any("💥" in line for line in a.risks)
    for message in (
        "feat(router)!: drop the implicit trailing-slash redirect",
        "[Breaking] Make redirects opt-in",
        "Make redirects opt-in\n\nBREAKING CHANGE: apps that relied on redirects must enable them",
    ):
        assert rank(make(message, code), "en")[0] == HIGH, message
    # The author's word stands beside names only the package's callers use (deep, or never in the docs): the
    # code says what it breaks only where users have those names.
    helper = SurfaceChange(
        SurfaceKind.REMOVED, "web.routing.strip_slash", "web/applications.py", documented=False
    )
    declared = make("💥 Change default of `redirect_slashes` to `False`", code, surface=(helper,))
    importance, reason = rank(declared, "en")
    assert importance == HIGH and "the message declares a breaking change" in reason, reason
    public = dataclasses.replace(helper, documented=True)
    reason = rank(make("💥 Change default of `redirect_slashes` to `False`", code, surface=(public,)), "en")[
        1
    ]
    assert (
        "breaks users: removes `web.routing.strip_slash`" in reason and "the message declares" not in reason
    )
    # words in prose declare nothing; a declaration without code users run behind it changes nothing
    for message in ("Avoid breaking changes in the router", "Fix: not a breaking change", 'Revert "💥 x"'):
        assert rank(make(message, code), "en")[0] != HIGH, message
    docs = fc("docs/en/docs/release-notes.md", 3, 0)
    assert rank(make("💥 Document the breaking default change", docs), "en")[0] == LOW


def test_a_title_that_declares_a_new_capability_is_at_least_medium_when_code_users_run_changed() -> None:
    # A web framework's "✨ Add support for dependencies with `yield`": its dependency solver now runs
    # generator dependencies; no public name changes, so no surface fact; its release notes list it under
    # Features. A 20-line change to one runtime file ranked low.
    patch = hunk(
        ["            solved = call(**values)"],
        [
            "            if inspect.isgeneratorfunction(call):",
            "                solved = next(call(**values))",
        ],
    )
    code = fc("web/dependencies/utils.py", 2, 1, patch)
    for title in (
        "✨ Add support for dependencies with `yield` (#1514)",
        "feat(deps): run generator dependencies",
        "[Feature] Generator dependencies",
        "Add support for generator dependencies",
    ):
        importance, reason = rank(make(title, code), "en")
        assert importance == MEDIUM, title
        assert "new capability (title: " in reason
    # no claim, a claim about files users do not run, or a revert of a feature: nothing new
    assert rank(make("Run generator dependencies (#1515)", code), "en")[0] == LOW
    docs = fc("docs/en/docs/tutorial/dependencies.md", 40, 0)
    assert rank(make("✨ Add support for dependencies with `yield`", docs), "en")[0] == LOW
    assert (
        "new capability" not in rank(make('Revert "Add support for generator dependencies"', code), "en")[1]
    )


def test_a_title_whose_leading_verb_declares_a_capability_is_at_least_medium_where_code_changed() -> None:
    # A binding toolchain's "Support const-only smart pointers" and a plugin's "[Model] Support <model>": a
    # function body now takes what it refused, no public name changes; their release notes list them as
    # features in the title's own words. Ranked low: no convention (✨, feat:) declared them.
    patch = hunk(["    if (is_const) return false;"], ["    if (is_const) return load_const(src);"])
    code = fc("include/widget/cast.h", 1, 1, patch)
    for title in (
        "Support const-only smart pointers (#5718)",
        "[Model] Support a new layout (#5624)",
        "Allow the cache to be disabled (#12)",
        "✨ Introduce a streaming reader",
        "feat: expose the pool size",
        "Implement lazy loading",
    ):
        importance, reason = rank(make(title, code), "en")
        assert importance == MEDIUM, title
        assert "new capability (title: " in reason, title
    # what every project adds for its own sake, a title of another type, or no code users run: nothing new
    for title in (
        "Add tests for const pointers",
        "Add missing import",
        "Add logging to the loader",
        "Add a comment on the cast",
        "Add type hints to the reader",
        "Add docs for the pool",
        "[Bugfix] Add a missing null check",
        "docs: add an example",
        "Remove unused helper",
    ):
        assert rank(make(title, code), "en")[0] == LOW, title
    ci = fc(".github/workflows/ci.yml", 7, 0)
    assert rank(make("Support and test a new platform in CI", ci), "en")[0] == LOW


def test_a_preprocessor_directive_is_code_not_a_comment() -> None:
    # "Allow X to be disabled if defined to 0": a header's change is all `#define` / `#undef` / `#if` lines,
    # which a `#` comment rule read as comments, so no claim about the code could count.
    patch = hunk(
        ["#    define WIDGET_HAS_POOL"],
        [
            "#    define WIDGET_HAS_POOL 1",
            "#endif",
            "#if defined(WIDGET_HAS_POOL) && !WIDGET_HAS_POOL",
            "#    undef WIDGET_HAS_POOL",
        ],
    )
    header = fc("include/widget/common.h", 4, 1, patch)
    assert rank(make("Allow the pool to be disabled if defined to 0", header), "en")[0] == MEDIUM
    comment = fc("src/widget/engine.py", 1, 1, hunk(["# define the pool"], ["# define the pools"]))
    assert rank(make("Allow the pool to be disabled", comment), "en")[0] == LOW


def test_a_title_that_declares_a_speed_up_is_at_least_medium_when_code_users_run_changed() -> None:
    # A plugin's "[Perf] Remove the transpose step after attention and switch to transpose_batchmatmul": a
    # 4-line change in its attention backend, no name or option changed; its release notes list it under
    # Features, then Performance. Ranked low.
    patch = hunk(
        ["        out = torch.bmm(x, w)", "        out = out.transpose(0, 1)"],
        ["        out = torch_npu.npu_transpose_batchmatmul(x, w, perm_y=(1, 0, 2))"],
    )
    code = fc("plugin/attention/mla.py", 1, 2, patch)
    for title in (
        "[Perf] Remove the transpose step after attention (#5390)",
        "⚡️ Improve performance in request body parsing with a cache (#12184)",
        "perf(attention): fuse the transpose into the matmul",
        "[Performance] Fuse the transpose into the matmul",
    ):
        importance, reason = rank(make(title, code), "en")
        assert importance == MEDIUM, title
        assert "speed-up (title: " in reason
    # no claim, a claim about files users do not run, a revert: nothing users get
    assert rank(make("[Attention] Fuse the transpose into the matmul (#5390)", code), "en")[0] == LOW
    bench = fc("benchmarks/kernels/bench_mla.py", 4, 2, patch)
    assert rank(make("[Perf] Benchmark the fused transpose (#5391)", bench), "en")[0] == LOW
    assert "speed-up" not in rank(make('Revert "[Perf] Remove the transpose step (#5390)"', code), "en")[1]


def _big_change(path: str = "src/engine/kernels.py", lines: int = 600) -> FileChange:
    # code users run, changed in many lines that state no user-facing fact
    patch = hunk(
        [f"    acc{i} = load(a, {i})" for i in range(30)],
        [f"    acc{i} = load_tile(a, {i})" for i in range(30)],
    )
    return fc(path, lines, lines, patch)


@pytest.mark.parametrize(
    ("title", "word"),
    [
        ("[CPU] Refactor CPU fused MoE (#30531)", "refactor"),
        ("[Refactor] Split the W8A8 quantization folder (#25293)", "refactor"),
        ("♻️ Reorganize the dependency solver (#124)", "refactor"),
        ("refactor(engine): share the tile loader", "refactor"),
        ("Move the backend enum into the registry (#25893)", "move"),
        ("[Kernels] Split up fused_moe/layer.py, isolate more modular kernel code (#28064)", "split"),
        ("Simplify field creation (#11898)", "simplify"),
        ("[Backend] Use the tile loader (NFC)", "NFC"),
        ("Pull out overrides to separate file (#821)", "pull out"),
        ("Factor out the tile loader", "factor out"),
        ("Extract the tile loader into its own module", "extract"),
    ],
)
def test_a_restructuring_by_its_title_is_not_a_headline_by_size_alone(title: str, word: str) -> None:
    # vllm's "[CPU] Refactor CPU fused MoE" (1,600 lines) and pydantic's "Refactor `FieldInfo` creation" ranked high
    # by size: on vllm's history no refactor-titled high was followed up (0 of 13; the other size-decided highs 9
    # of 93), and pydantic's release notes listed none as a feature. Reviewed for its risk, medium at most, and the reason says so.
    plain = rank(make("[CPU] Port the fused MoE (#30531)", _big_change()), "en")
    assert plain[0] == HIGH and "decided by risk" in plain[1]
    importance, reason = rank(make(title, _big_change()), "en")
    assert importance == MEDIUM, title
    assert "impact (low): no user-facing change found" in reason
    assert f"a restructuring by its title: `{word}` (medium at most)" in reason
    zh = rank(make(title, _big_change()), "zh")[1]
    assert f"标题表明是重构：`{word}`（最多为中）" in zh


def test_a_restructuring_that_changes_what_users_get_is_judged_by_that() -> None:
    renamed = SurfaceChange(
        SurfaceKind.RENAMED,
        "engine.kernels.fused_moe",
        "src/engine/kernels.py",
        line=12,
        old="engine.kernels.fused_moe",
        new="engine.kernels.fused_experts",
    )
    added = SurfaceChange(SurfaceKind.ADDED, "engine.kernels.tile_loader", "src/engine/kernels.py", line=40)
    # a public name renamed without an alias breaks users, whatever the title calls it
    assert rank(make("[Refactor] Rename fused_moe (#1)", _big_change(), surface=(renamed,)), "en")[0] == HIGH
    # something new users get: the size counts again, and the reason does not speak of a restructuring
    importance, reason = rank(
        make("[Refactor] Share the tile loader (#2)", _big_change(), surface=(added,)), "en"
    )
    assert importance == HIGH and "restructuring" not in reason


@pytest.mark.parametrize(
    "title",
    [
        "[Refactor] Remove the old pager (#3)",  # a removal may take something from users where no parser looks
        "Drop the legacy multimodal fields (#24548)",
        "[Perf] Refactor the MoE kernel (#4)",  # a stated type other than a refactor decides
        "[Bugfix] Refactor the loader to fix the leak (#5)",
        'Revert "[CPU] Refactor CPU fused MoE (#30531)" (#30600)',  # a revert's risk is in being a follow-up
        "Use let chains to tidy up the Rust code (#12583)",  # no stated type, and not its first word
    ],
)
def test_what_is_no_restructuring_by_its_title_keeps_its_size(title: str) -> None:
    assert rank(make(title, _big_change()), "en")[0] == HIGH, title


def test_a_title_that_also_declares_no_functional_change_claims_nothing_new() -> None:
    # A compiler's "[Backend] Add support for shared-memory layouts in the helper (NFC)": the helper serves the
    # lowering that existed; "add support for" is no new capability when its author declares no functional
    # change, nor "Enable by default" a changed default. Code facts still count: a renamed public name stays
    # what it is.
    patch = hunk(
        ["    offset = base + idx * stride"],
        ["    offset = shared_offset(base, idx, stride)"],
    )
    code = fc("python/compiler/lowering.py", 1, 1, patch)
    claimed = make("[Backend] Add support for shared-memory layouts in the helper (#812)", code)
    assert rank(claimed, "en")[0] == MEDIUM
    for title in (
        "[Backend] Add support for shared-memory layouts in the helper (NFC) (#812)",
        "[Backend][NFC] Add support for shared-memory layouts in the helper",
        "[Backend] Add support for shared-memory layouts in the helper. NFC",
    ):
        importance, reason = rank(make(title, code), "en")
        assert importance == LOW, title
        assert "new capability" not in reason
    assert rank(make("[Frontend] Enable the cache by default", code), "en")[0] == MEDIUM
    assert rank(make("[Frontend] Enable the cache by default (NFC)", code), "en")[0] == LOW
    renamed = SurfaceChange(
        SurfaceKind.RENAMED,
        "compiler.lowering.offset_of",
        "python/compiler/lowering.py",
        line=12,
        old="compiler.lowering.offset_of",
        new="compiler.lowering.shared_offset",
    )
    nfc_rename = make("[NFC] Rename offset_of to shared_offset", code, surface=(renamed,))
    assert rank(nfc_rename, "en")[0] == HIGH  # the name users called is gone, whatever the title says


@pytest.mark.parametrize(
    ("title", "word"),
    [
        ("[Docs] Fix warnings in `mkdocs build` (continued) (#23743)", "docs"),
        ("[Doc] Add engine args back in to the docs (#20674)", "docs"),
        ("[Doc]: fix typos in various files (#24726)", "docs"),
        ("docs(engine): document the tile loader", "docs"),
        ("📝 Describe the tile loader's arguments", "docs"),
        ("[Test] Add Unit Test for Batched DeepGEMM (#21559)", "tests"),
        ("test: cover the tile loader", "tests"),
    ],
)
def test_docs_or_tests_by_the_title_with_no_change_users_get_is_low(title: str, word: str) -> None:
    # vllm's "[Docs] Fix warnings in `mkdocs build` (continued)": docstrings and annotations reworded in 26 files of
    # the package for the docs build, ranked high by size and its paths' record. Of vllm's commits titled docs or
    # tests whose code stated nothing for users, 0 of 381 were followed up (the branch: 1.4 %).
    importance, reason = rank(make(title, _big_change()), "en")
    assert importance == LOW, title
    assert "impact (low): no user-facing change found" in reason
    assert f"a docs or tests change by its title: `{word}` (low at most)" in reason
    assert "标题表明是文档或测试改动：" in rank(make(title, _big_change()), "zh")[1]


def test_what_a_docs_title_does_not_speak_for_is_judged_by_itself() -> None:
    added = SurfaceChange(SurfaceKind.ADDED, "engine.kernels.tile_loader", "src/engine/kernels.py", line=40)
    changed = SurfaceChange(
        SurfaceKind.DEPENDENCY_CHANGED, "flashinfer", "pyproject.toml", old="==0.2.9rc2", new="==0.2.9"
    )
    # something new users get (vllm's "[Docs] Reduce noise in docs and `--help`" added `format_help`)
    importance, reason = rank(make("[Docs] Explain the loader (#1)", _big_change(), surface=(added,)), "en")
    assert importance != LOW and "docs or tests change by its title" not in reason
    # what users install changes: the title speaks for the docs, not for the new version
    deps = make(
        "[Docs] Explain the loader (#2)", _big_change(), fc("pyproject.toml", 1, 1), surface=(changed,)
    )
    assert rank(deps, "en")[0] != LOW
    for title in (
        "[Doc][Bugfix] Fix the loader's offsets (#3)",  # a stronger type declared beside
        "[CI] Fix mypy for `engine/worker` (#26593)",  # CI jobs, not docs: the code may be fixed for users
        'Revert "[Doc] Add engine args back in to the docs (#20674)" (#20700)',  # a follow-up's risk
    ):
        assert rank(make(title, _big_change()), "en")[0] == HIGH, title


# ---------------------------------------------------------------- a vendored-looking tree maintained here


def _edits(
    tree: str, count: int, start: int, *, bot: bool = False, also: tuple[str, ...] = ()
) -> list[PastCommit]:
    # Commits by people (or a bot) each editing one file of `tree` (and the files `also`).
    base = DAY - timedelta(days=90)
    return [
        BranchCommit(
            f"{start + i:040x}", base + timedelta(hours=7 * i), f"Edit {i}",
            ((f"{tree}part{i % 3}.cc", 30), *((path, 2) for path in also)), automated=bot,
        )
        for i in range(count)
    ]  # fmt: skip


def _sources(count: int) -> list[PastCommit]:
    base = DAY - timedelta(days=100)
    return [
        BranchCommit(
            f"{90000 + i:040x}", base + timedelta(hours=5 * i), f"Core {i}", ((f"src/m{i % 9}.py", 40),)
        )
        for i in range(count)
    ]


def test_a_vendored_looking_tree_the_branch_edits_week_after_week_is_its_own_code() -> None:
    # A compiler keeps its GPU backends under third_party/<vendor>/ and edits them in most of its
    # commits: read as someone else's vendored code, a 300-line backend change ranked like a typo fix.
    backend = make(
        "[Backend] Lower the new layout in the vendor backend (#5100)",
        fc("third_party/acme/lib/Lowering.cpp", 220, 40),
        fc("third_party/acme/backend/compiler.py", 30, 10),
        fc("third_party/acme/test/lowering.mlir", 60, 0),
    )
    # edited by people in 12 commits of the window (no dependency update among them)
    history = (
        _sources(250)
        + _edits("third_party/acme/lib/", 7, 1000)
        + _edits("third_party/acme/backend/", 5, 2000)
    )
    index = HistoryIndex(history, [], DAY)
    assert index.own == {"third_party/acme/"}
    facts = index.facts(backend)
    assert facts.own_trees == ("third_party/acme/",)
    assert facts.as_prompt()["vendored_looking_folders_maintained_here"] == list(facts.own_trees)
    assert judge_commit(backend, facts).importance != LOW
    assert classify_path("third_party/acme/lib/Lowering.cpp") == PathKind.VENDORED  # by its path alone

    # The same commit where the history shows no such edits: someone else's code, low.
    thin = HistoryIndex(_sources(250), [], DAY)
    assert thin.own == frozenset() and thin.facts(backend).own_trees == ()
    assert judge_commit(backend, thin.facts(backend)).importance == LOW
    assert facts.score > thin.facts(backend).score  # its lines now count for the risk too


def test_a_surface_change_in_a_vendored_looking_tree_counts_only_where_the_branch_maintains_it() -> None:
    # The surface step reads third_party/<vendor>/ trees (it cannot see the history): a backend's launch
    # option renamed is breaking in a tree the branch edits as its own, nothing in someone else's copy.
    renamed = SurfaceChange(
        SurfaceKind.FIELD_RENAMED, "acme.BackendOptions.max_num_regs", "third_party/acme/backend/compiler.py",
        7, old="maxnreg", new="max_num_regs",
    )  # fmt: skip
    commit = make(
        "[Backend] Rename the `maxnreg` option to `max_num_regs` (#5101)",
        fc("third_party/acme/backend/compiler.py", 1, 1),
        surface=(renamed,),
    )
    own = HistoryIndex(
        _sources(250)
        + _edits("third_party/acme/lib/", 7, 1000)
        + _edits("third_party/acme/backend/", 5, 2000),
        [],
        DAY,
    )
    theirs = HistoryIndex(_sources(250), [], DAY)
    maintained, copied = judge_commit(commit, own.facts(commit)), judge_commit(commit, theirs.facts(commit))
    assert maintained.impact > copied.impact == 0
    assert maintained.importance != LOW and copied.importance == LOW
    assert [c.new for sig in maintained.signals for c in sig.changes] == ["max_num_regs"]


def test_dependency_updates_occasional_patches_and_bots_do_not_make_a_vendored_tree_the_branchs_own() -> None:
    history = (
        _sources(250)
        # `go mod vendor` after each dependency bump: the copies change with go.mod, go.sum, vendor/modules.txt
        + _edits("vendor/github.com/", 40, 1000, also=("go.mod", "go.sum", "vendor/modules.txt"))
        + _edits("web/node_modules/left-pad/", 20, 2000, also=("web/package-lock.json",))
        + _edits("third_party/zlib/", 11, 3000)  # patched in place by people, but not often enough
        + _edits("third_party/json/", 40, 4000, bot=True)  # a bot updating its copy every few days
    )
    assert HistoryIndex(history, [], DAY).own == frozenset()
    # the same in-place patches one more time: now maintained here
    more = history + _edits("third_party/zlib/", 1, 5000)
    assert HistoryIndex(more, [], DAY).own == {"third_party/zlib/"}


def test_the_scope_says_which_python_sources_the_packaging_does_not_ship() -> None:
    # A web framework's removal of a parameter also edited 12 files of its example tree (`docs_src/`,
    # beside the package): the card listed them as "source" beside the package's two files.
    files = [fc(f"docs_src/query_params/tutorial{i:03d}.py", 1, 1) for i in range(12)]
    files += [fc("web/params.py", 3, 5), fc("web/param_functions.py", 2, 2)]
    commit = make(
        "Remove the deprecated `regex` parameter (#1229)",
        *files,
        shipped=frozenset({"web/params.py", "web/param_functions.py"}),
    )
    a = analyze(commit, "en", tier=MEDIUM)
    assert a.scope[:2] == [
        "`docs_src/query_params`: 12 files (source, not shipped)",
        "`web`: 2 files (source)",
    ]
    assert (
        analyze(commit, "zh", tier=MEDIUM).scope[0]
        == "`docs_src/query_params`：12 个文件（源代码，不在发行包中）"
    )
    # without packaging facts nothing is said about shipping
    assert analyze(make("Remove the deprecated `regex` parameter (#1229)", *files), "en", tier=MEDIUM).scope[
        0
    ] == ("`docs_src/query_params`: 12 files (source)")


def test_a_deprecation_a_doc_comment_states_is_one_though_only_prose_changed() -> None:
    # Go's "// Deprecated: use http.TimeoutHandler." above an exported function: every changed line is a
    # comment, so "only comments ... change, nothing users run changed" ranked it low; gopls and staticcheck
    # show it at every call
    patch = hunk(["// Timeout wraps a handler with a timeout."],
                 ["// Timeout wraps a handler with a timeout.", "//", "// Deprecated: use http.TimeoutHandler."])  # fmt: skip
    gone = SurfaceChange(SurfaceKind.DEPRECATION, "Timeout", "middleware.go", line=10)
    commit = make("Deprecate Timeout (#407)", fc("middleware.go", 2, 0, patch), surface=(gone,))
    importance, reason = rank(commit, "en")
    assert importance == MEDIUM and "deprecates `Timeout`" in reason
    # the same comment edit without the fact stays prose
    assert rank(make("Reword a comment (#408)", fc("middleware.go", 2, 0, patch)), "en")[0] == LOW


def test_a_field_of_another_language_is_a_member_not_a_config_field() -> None:
    # a compiler crate's `pub enum Target { X86, ... }` lost a variant: "removes config field `Target.X86`"
    variant = SurfaceChange(SurfaceKind.FIELD_REMOVED, "Target.X86", "src/codegen.rs", line=5)
    assert describe(variant, "en") == "removes member `Target.X86` (no alias)"
    assert describe(variant, "zh").startswith("删除成员")
    python = SurfaceChange(SurfaceKind.FIELD_REMOVED, "Config.level", "pkg/config.py", line=5)
    assert describe(python, "en") == "removes config field `Config.level` (no alias)"


# ---------------------------------------------------------------- size outside what users run


def test_a_commit_large_only_outside_what_users_run_is_not_high_by_its_size() -> None:
    # pydantic: a documentation rewrite that also moved the core pin (two lines of code users run) ranked high
    # by its 1,152 lines, as did a test-suite migration beside a dependency floor raised.
    pin = hunk(['    return __core_version__ == "2.35.1"'], ['    return __core_version__ == "2.35.2"'])
    commit = make(
        "Rewrite serialization documentation (#12018)",
        fc("docs/concepts/serialization.md", 520, 480),
        fc("docs/concepts/json.md", 80, 70),
        fc("pkg/version.py", 1, 1, pin),
        shipped=frozenset({"pkg/version.py"}),
    )
    importance, reason = rank(commit, "en")
    assert importance == MEDIUM
    assert (
        "what users run changed in a few lines only (`pkg/version.py`), the rest is tests, docs or tooling"
        " (medium at most)" in reason
    )
    assert "用户运行的代码只改了几行（`pkg/version.py`）" in rank(commit, "zh")[1]
    # Docstring lines of a file users run are not its code: vllm's "Fix warnings in `mkdocs build`" rewrote
    # docstrings across 26 files beside a few lines of code, and ranked high by its size.
    doc_lines = [f"        arg{i}: what argument {i} is for." for i in range(400)]
    signature = hunk(["        return x"], ["        return x + 1"])
    docstrings = hunk(
        doc_lines,
        [line.replace("is for", "means") for line in doc_lines],
        ["        '''Run it.", "", "        Args:"],
        ["        '''", "        return x"],
    )

    def docs_fix(patch: str) -> Commit:
        return make(
            "[Docs] Fix warnings in the docs build",
            fc("pkg/engine.py", 401, 401, patch),
            fc("docs/engine.md", 40, 30),
            shipped=frozenset({"pkg/engine.py"}),
        )

    rewritten = rank(docs_fix(signature + "\n" + docstrings), "en")[1]
    assert "what users run changed in a few lines only (`pkg/engine.py`)" in rewritten
    # A patch cut short (GitHub leaves out large files' patches or cuts them) does not show its lines: all count.
    assert "what users run changed" not in rank(docs_fix(signature), "en")[1]
    # The same code change with a small change's worth of tests keeps its risk tier: a fix with its tests.
    fix = make(
        "Fix a crash when the cache is empty",
        fc("pkg/version.py", 30, 10),
        fc("tests/test_version.py", 60, 0),
        shipped=frozenset({"pkg/version.py"}),
    )
    assert "what users run changed" not in rank(fix, "en")[1]
    # A large change to what users run is high by its size as before.
    big = make(
        "Rewrite the engine",
        fc("pkg/engine.py", 700, 400),
        fc("docs/engine.md", 300, 200),
        shipped=frozenset({"pkg/engine.py"}),
    )
    assert rank(big, "en")[0] == HIGH


def test_a_revert_keeps_its_risk_whatever_its_tests() -> None:
    # vllm: a revert of a small scheduler change with its tests was later re-landed: its risk is in being a
    # follow-up, so the cap on size outside what users run does not apply.
    commit = make(
        'Revert "[Core] Fix the cursor leak in the scheduler" (#26000)',
        fc("pkg/sched.py", 12, 30),
        fc("tests/test_sched.py", 0, 700),
        shipped=frozenset({"pkg/sched.py"}),
    )
    importance, reason = rank(commit, "en")
    assert "what users run changed" not in reason
    assert importance == HIGH


def test_a_task_runner_beside_packaging_is_dev_tooling() -> None:
    # pydantic: moving the tests (133 test files) also edited the Makefiles' lint targets; the Makefiles counted
    # as code users run, so the commit ranked high by the tests' size. A package's build backend never runs a
    # Makefile: where the packaging says what ships, it is dev tooling.
    lint = hunk(["sources = pkg tests docs"], ["sources = pkg docs"])
    files = (
        fc("Makefile", 1, 1, lint),
        fc("core/Makefile", 2, 2),
        *(fc(f"tests/core/test_{i}.py", 6, 7) for i in range(130)),
    )
    commit = make("Migrate the core tests to the main tests directory", *files, shipped=frozenset())
    importance, reason = rank(commit, "en")
    assert importance == LOW
    assert reason.startswith("impact (low): nothing users run changed")
    # Without packaging that says what ships (a C project built by make), the Makefile is how users build it.
    c_project = make("Build with -O3", fc("Makefile", 1, 1, hunk(["CFLAGS = -O2"], ["CFLAGS = -O3"])))
    assert "nothing users run changed" not in rank(c_project, "en")[1]
    # Build files the packaging runs stay what users get.
    cmake = make(
        "Build the extension with LTO",
        fc("CMakeLists.txt", 3, 1),
        *(fc(f"tests/test_{i}.py", 6, 7) for i in range(5)),
        shipped=frozenset(),
    )
    assert "nothing users run changed" not in rank(cmake, "en")[1]


# ---------------------------------------------------------------- what a title says users should know


def test_a_title_that_says_the_change_now_raises_or_warns_is_to_note() -> None:
    # pydantic: "Raise error if an incompatible `pydantic-core` version is installed" added a private check run
    # at import, and "Warn if registering virtual subclasses" a warning in a private module: no public function
    # newly raises, so both ranked low, though every user runs them (the release notes list them as changes).
    check = hunk(["VERSION = '2.1'"], ["VERSION = '2.1'", "_ensure_core_version()"])
    files = (fc("pkg/__init__.py", 2, 1, check), fc("pkg/version.py", 20, 2))
    importance, reason = rank(
        make("Raise error if an incompatible `core` version is installed (#12196)", *files, surface=()), "en"
    )
    assert importance == MEDIUM
    assert reason.startswith("impact (medium): users should know (title: `raise error`)")
    zh = rank(make("Warn if registering virtual subclasses (#11669)", *files, surface=()), "zh")[1]
    assert zh.startswith("影响（中）：需要用户留意（标题：`warn`）")
    # "Raise" as "increase" claims nothing; nor does a title over docs only.
    assert "title:" not in rank(make("Raise the batch limit to 512", *files, surface=()), "en")[1]
    docs = make("Warn about the cache in the docs", fc("docs/cache.md", 10, 2), shipped=frozenset())
    assert rank(docs, "en")[0] == LOW
    # Where the code states it, the code's fact stands alone.
    raises = SurfaceChange(SurfaceKind.RAISES, "pkg.load", "pkg/io.py")
    _, stated = rank(make("Raise an error on empty input", fc("pkg/io.py", 3, 0), surface=(raises,)), "en")
    assert "title:" not in stated and "`pkg.load` newly raises" in stated


def test_a_comparison_of_secrets_made_constant_time_is_security_relevant() -> None:
    # pydantic: "Use constant-time comparison for `SecretStr` and `SecretBytes` types" ranked low.
    compare = hunk(["        return self._secret == other._secret"], ["        return compare_digest(a, b)"])
    commit = make(
        "Use constant-time comparison for `SecretStr` types (#13518)", fc("pkg/types.py", 6, 2, compare)
    )
    importance, reason = rank(commit, "en")
    assert importance == MEDIUM and "security-relevant: `constant-time comparison`" in reason
    # A speed-up to constant time is no security claim.
    assert "security" not in rank(make("Make the lookup constant time", fc("pkg/types.py", 6, 2)), "en")[1]


# ---------------------------------------------------------------- a new capability written up in its docs

ADDED = SurfaceChange(SurfaceKind.PARAM_ADDED, "widget.main.Model.dump(exclude_if)", "src/widget/main.py")


def test_a_new_capability_with_its_docs_at_medium_risk_is_high_and_a_fix_of_its_size_is_not() -> None:
    # pydantic's release notes list 28 features, 25 of them ranked medium beside its medium fixes: a new
    # parameter with 80-200 lines of code sat in the same band as a fix of the same size. 15 of the 28 wrote
    # their docs in the same commit; 4 of its 115 fixes did.
    code = fc("src/widget/main.py", 80, 6)
    docs = fc(
        "docs/concepts/serialization.md", 3, 0, hunk([], ["## Excluding fields", "", "Pass `exclude_if=`."])
    )
    feature = make("Add `exclude_if` to `Model.dump`", code, docs, surface=(ADDED,))
    importance, reason = rank(feature, "en")
    assert importance == HIGH
    assert "new capability: adds parameter `Model.dump(exclude_if)`" in reason
    assert reason.endswith(
        "new, and written up in its docs (`docs/concepts/serialization.md`): impact and risk together"
    )
    assert rank(feature, "zh")[1].endswith(
        "新增能力且随改动写入文档（`docs/concepts/serialization.md`）：影响与风险共同决定"
    )
    # the same without its docs, a fix with docs, a small one (risk low), a release-notes entry alone: medium
    assert rank(make("Add `exclude_if` to `Model.dump`", code, surface=(ADDED,)), "en")[0] == MEDIUM
    assert rank(make("Fix serialisation of unions", code, docs), "en")[0] == MEDIUM
    small = make("Add `exclude_if`", fc("src/widget/main.py", 8, 2), docs, surface=(ADDED,))
    assert rank(small, "en")[0] == MEDIUM
    noted = make(
        "Add `exclude_if`", code, fc("CHANGELOG.md", 1, 0, hunk([], ["- `exclude_if`"])), surface=(ADDED,)
    )
    assert rank(noted, "en")[0] == MEDIUM
    # docs that change elsewhere, about something else, are not this capability's
    elsewhere = fc("docs/install.md", 1, 1, hunk(["pip install widget"], ["uv add widget"]))
    assert rank(make("Add `exclude_if`", code, elsewhere, surface=(ADDED,)), "en")[0] == MEDIUM
    # a title that calls the change a fix or a docs change is not a feature's headline, whatever it adds
    for title in (
        "[Bugfix] Validate `exclude_if`",
        "[Docs] Explain `exclude_if`",
        "fix: `exclude_if` on dumps",
        "🐛 Fix `exclude_if`",
    ):
        assert rank(make(title, code, docs, surface=(ADDED,)), "en")[0] == MEDIUM, title
    assert rank(make("✨ Add `exclude_if`", code, docs, surface=(ADDED,)), "en")[0] == HIGH
    # a dunder added (`__init__`) brings nothing users would look up, written up or not
    init = SurfaceChange(SurfaceKind.ADDED, "widget.main.Adaptor.__init__", "src/widget/main.py")
    page = fc("docs/design.md", 1, 0, hunk([], ["`Adaptor.__init__` takes the cache."]))
    assert rank(make("Refactor the adaptor", code, page, surface=(init,)), "en")[0] == MEDIUM
    # Docs in their own words: a write-up of WRITE_UP_LINES or more (pydantic's `Fraction` support wrote up its
    # errors page; its names, `FractionSchema` and `fraction_schema`, appear nowhere in it).
    page = fc("docs/errors/validation_errors.md", 25, 0, hunk([], ["## `fraction_parsing`", *["text"] * 24]))
    fraction = SurfaceChange(SurfaceKind.ADDED, "widget.main.FractionSchema", "src/widget/main.py")
    assert rank(make("Support fractions", code, page, surface=(fraction,)), "en")[0] == HIGH
    assert rank(make("Support fractions", code, docs, surface=(fraction,)), "en")[0] == MEDIUM
    # What users type is looked for as it is: a Python version in a prerequisites line
    support = SurfaceChange(SurfaceKind.SUPPORT_ADDED, "Python 3.13", "pyproject.toml")
    line = fc("docs/quickstart.md", 1, 1, hunk(["- Python: 3.9 -- 3.12"], ["- Python: 3.9 -- 3.13"]))
    packaging = fc("pyproject.toml", 40, 10)
    assert (
        rank(make("Add support for Python 3.13", code, packaging, line, surface=(support,)), "en")[0] == HIGH
    )
    # A title that declares the capability has no name to look for: the write-up's lines decide.
    assert rank(make("Add support for three-tuple input", code, page), "en")[0] == HIGH
    assert rank(make("Add support for three-tuple input", code, docs), "en")[0] == MEDIUM


def test_a_small_new_capability_with_its_tests_and_docs_is_high() -> None:
    # pydantic's "Add support for `exclude_if` at the field level": 24 lines of code, 47 of docs, 51 of tests.
    # Its size is mostly outside the code users run, yet the feature is written up for them.
    added = SurfaceChange(SurfaceKind.PARAM_ADDED, "widget.fields.Field(exclude_if)", "src/widget/fields.py")
    docs = fc(
        "docs/concepts/serialization.md", 35, 12, hunk([], ["Use `exclude_if` to leave fields out."] * 35)
    )
    commit = make(
        "Add support for `exclude_if` at the field level",
        fc("src/widget/fields.py", 21, 0),
        fc("src/widget/_schema.py", 3, 0),
        fc("tests/test_fields.py", 60, 0),
        docs,
        surface=(added,),
    )
    assert "outside_runtime" in {s.key for s in find_signals(commit_facts(commit))}
    importance, reason = rank(commit, "en")
    assert importance == HIGH, reason
    assert "written up in its docs (`docs/concepts/serialization.md`)" in reason


def test_a_new_model_in_new_files_with_its_docs_stays_medium() -> None:
    # "an isolated new model file ranked high by its size": its docs entry does not make it high either
    added = SurfaceChange(
        SurfaceKind.ADDED, "widget.models.new_model.WidgetModel", "src/widget/models/new_model.py"
    )
    model = make(
        "Add WidgetModel",
        fc("src/widget/models/new_model.py", 300, 0, status="added"),
        fc("src/widget/models/registry.py", 2, 0),
        fc("docs/models/supported_models.md", 1, 0),
        surface=(added,),
    )
    assert rank(model, "en")[0] == MEDIUM


def test_a_module_split_that_moves_names_brings_nothing_new() -> None:
    # vllm's "Separate out … from vllm.utils": names removed from one module, added in another.
    gone = SurfaceChange(
        SurfaceKind.REMOVED, "widget.util.parse_size", "src/widget/util.py", documented=False
    )
    added = SurfaceChange(SurfaceKind.ADDED, "widget.util.text.parse_size", "src/widget/util/text.py")
    page = fc(
        "docs/utils.md", 1, 1, hunk(["Use `widget.util.parse_size`."], ["Use `widget.util.text.parse_size`."])
    )
    files = (fc("src/widget/util.py", 10, 60), fc("src/widget/util/text.py", 60, 0), page)
    importance, reason = rank(make("Split the utilities", *files, surface=(gone, added)), "en")
    assert importance == MEDIUM and "impact and risk together" not in reason
    assert rank(make("Split the utilities", *files, surface=(added,)), "en")[0] == HIGH  # a name added: new


def test_a_code_name_the_reference_docs_never_mention_weighs_one_step_less() -> None:
    gone = SurfaceChange(SurfaceKind.REMOVED, "widget.engine.pad_batch", "src/widget/engine.py")
    for documented, tier, words in (
        (True, HIGH, "breaks users: removes `pad_batch` (no alias)"),
        (None, HIGH, "breaks users: removes `pad_batch` (no alias)"),
        (False, MEDIUM, "breaks callers of names its docs never mention: removes `pad_batch` (no alias)"),
    ):
        change = dataclasses.replace(gone, documented=documented)
        importance, reason = rank(
            make("Drop pad_batch", fc("src/widget/engine.py", 2, 9), surface=(change,)), "en"
        )
        assert (importance, words in reason) == (tier, True), reason
    internal = make(
        "Drop pad_batch",
        fc("src/widget/engine.py", 2, 9),
        surface=(dataclasses.replace(gone, documented=False),),
    )
    assert "破坏文档从未提及的名称的调用方" in rank(internal, "zh")[1]
    # the report says whom it breaks: the package's callers (plugins, forks), not every user's deployment
    a = analyze(internal, "en")
    assert any(r.startswith("Breaking for callers (removes `widget.engine.pad_batch`") for r in a.risks), (
        a.risks
    )
    assert any(r.startswith("Update every caller of the old name") for r in a.recommendations)


def test_a_lockfile_only_bump_says_so_instead_of_zero_lines_in_one_file() -> None:
    # The reason read "0 changed lines in 1 file (and 242 in lockfiles …)" beside a summary of +121/−121.
    commit = make("Bump aiohttp from 3.14.1 to 3.14.3 (#13577)", fc("uv.lock", 121, 121))
    importance, reason = rank(commit, "en")
    assert importance == LOW
    assert "only lockfiles or generated, vendored or binary files changed (242 lines in 1 file)" in reason
    assert "0 changed lines" not in reason
    assert "仅改动锁文件、生成、第三方或二进制文件（242 行，涉及 1 个文件）" in rank(commit, "zh")[1]


def test_a_dependency_changed_only_in_its_marker_is_not_said_as_the_same_range_twice() -> None:
    # The reason read "changes the range of `torch`: `==2.8.0` → `==2.8.0`" when only the environment marker moved.
    from analysis.heuristic.prose.surface_changes import brief

    marker_only = SurfaceChange(
        SurfaceKind.DEPENDENCY_CHANGED, "torch", "requirements/cuda.txt", 3,
        old='torch==2.8.0; platform_machine == "x86_64"', new='torch==2.8.0; sys_platform == "linux"',
    )  # fmt: skip
    text = brief(marker_only, "en")
    assert "`==2.8.0` → `==2.8.0`" not in text and "torch" in text
    ranged = dataclasses.replace(marker_only, new='torch==2.9.0; sys_platform == "linux"')
    assert "`==2.8.0`" in brief(ranged, "en") and "`==2.9.0`" in brief(ranged, "en")
