"""Rubric h32: what a change does to other packages in the users' process. Each test is built from the shape of
a real commit that ranked low and was reverted within 30 days (BENCHMARKS.md, rubric h32)."""

from __future__ import annotations

from analysis.heuristic import analyze, rank
from analysis.heuristic.facts import Diff
from analysis.heuristic.foreign_lines import foreign_settings, version_gates
from analysis.history.facts import HistoryFacts
from analysis.models import Importance
from tests.analysis.heuristic.test_heuristic import fc, make
from tests.analysis.heuristic.test_judgment import hunk

LOW, MEDIUM, HIGH = Importance.LOW, Importance.MEDIUM, Importance.HIGH


def _diff(removed: list[str], added: list[str]) -> Diff:
    return Diff(hunk(removed, added), "\n".join(removed), "\n".join(added), "python")


def _quiet(percentile: float) -> HistoryFacts:
    """A commit its history places low: small, on paths with no follow-up record."""
    return HistoryFacts(
        window_days=180, commits_seen=2000, followed_seen=28, percentile=percentile, baseline=2000
    )


# ---------------------------------------------------------------- a path by a dependency's installed version


def test_a_path_taken_by_a_dependency_s_installed_version_is_medium_at_least() -> None:
    # a 10-line guard in a parameter class's `__torch_function__`: users of the framework before 2.8 now get
    # NotImplemented; ranked low ("no user-facing change found", riskier than 28 %), reverted in days
    patch = hunk(
        [],
        [
            '        if not is_framework_equal_or_newer("2.8.0"):',
            "            logger.warning_once(",
            '                "Framework %s detected (<2.8.0): returning NotImplemented", framework.__version__',
            "            )",
            "            return NotImplemented",
        ],
        ["    @classmethod", "    def __framework_function__(cls, func, types, args=(), kwargs=None):"],
    )
    commit = make(
        "[Bug] Dynamo unsupported due to `BaseParameter.framework_function` calling super() (#25613)",
        fc("engine/model_executor/parameter.py", 10, 0, patch),
    )
    importance, reason = rank(commit, "en", _quiet(0.28))
    assert importance == MEDIUM
    assert "takes a path by a dependency's installed version: `framework 2.8.0` (medium at least)" in reason
    analysis = analyze(commit, "en", history=_quiet(0.28))
    assert any("CI usually installs one version" in r for r in analysis.risks)
    # without the guard the same commit is low: the floor is the version test's
    plain = hunk([], ["        kwargs = kwargs or {}"])
    assert (
        rank(
            make(commit.message, fc("engine/model_executor/parameter.py", 10, 0, plain)), "en", _quiet(0.28)
        )[0]
        == LOW
    )


def test_version_gates_name_the_dependency_and_leave_python_and_moved_gates_alone() -> None:
    assert version_gates([_diff([], ['    if bitsandbytes.__version__ < "0.46.1":'])]) == [
        "bitsandbytes 0.46.1"
    ]
    assert version_gates([_diff([], ['    if not quantlib_version_at_least("0.15.0"):'])]) == [
        "quantlib 0.15.0"
    ]
    assert version_gates(
        [_diff([], ['    if Version(version("transformers")) < Version("5.0.0.dev0"):'])]
    ) == ["transformers 5.0.0.dev0"]
    assert version_gates([_diff([], ['    x = fast if is_lib_equal_or_newer("2.10.0.dev") else slow'])]) == [
        "lib 2.10.0.dev"
    ]
    # Python's own version: continuous integration runs every supported one
    assert version_gates([_diff([], ["    if sys.version_info >= (3, 14):"])]) == []
    assert version_gates([_diff([], ['    if platform.python_version() >= "3.12":'])]) == []
    # a value compared with a version-looking string is no installed version
    assert version_gates([_diff([], ['    if mode == "1.0":'])]) == []
    # a gate only moved or reworded keeps its dependency and version: no new path
    moved = _diff(
        ['    if not is_lib_equal_or_newer("2.8.0"):'], ['    if not is_lib_equal_or_newer("2.8.0"):  # now']
    )
    assert version_gates([moved]) == []
    # a module split takes its check to another file of the same commit: moved, no new path
    split = [
        _diff(['    if is_lib_equal_or_newer("2.6"):'], []),
        _diff([], ['    if is_lib_equal_or_newer("2.6"):']),
    ]
    assert version_gates(split) == []
    # a version in a message or a comment is no gate
    assert (
        version_gates(
            [_diff([], ['    logger.info("needs lib 2.8.0")', '    # if lib.__version__ < "2.8":'])]
        )
        == []
    )


# ---------------------------------------------------------------- another library's settings at run time


def test_another_library_s_settings_patched_at_run_time_change_what_users_get() -> None:
    # the compile step wrapped in the framework's config patch that turns a guard compilation off: 9 lines,
    # ranked low ("no user-facing change found"), reverted
    patch = hunk(
        [
            "            with patch.object(InliningTranslator, 'inline_call',",
            "                              patched):",
        ],
        [
            "            # Disable the C++ compilation of symbolic shape guards: faster compile",
            '            with framework._dynamo.config.patch("enable_cpp_symbolic_shape_guards",',
            "                                                False), patch.object(",
            "                                                InliningTranslator, 'inline_call', patched):",
        ],
    )
    commit = make(
        "[compile][startup] Disable C++ compilation of symbolic shapes (#20836)",
        fc("engine/compilation/decorators.py", 9, 2, patch),
    )
    importance, reason = rank(commit, "en", _quiet(0.28))
    assert importance == MEDIUM
    assert (
        "changes another library's settings at run time: `framework._dynamo.config: enable_cpp_symbolic_shape_guards`"
        in reason
    )


def test_a_named_logger_s_level_set_changes_what_users_see() -> None:
    # the API server silencing a dependency's logger at start-up: 4 lines, ranked low, reverted
    patch = hunk(
        [],
        [
            "    # Suppress verbose logs from container_standards",
            '    logging.getLogger("container_standards").setLevel(logging.ERROR)',
        ],
    )
    commit = make(
        "Suppress verbose logs from container_standards (#28949)",
        fc("engine/entrypoints/api_server.py", 4, 0, patch),
    )
    importance, reason = rank(commit, "en", _quiet(0.21))
    assert importance == MEDIUM
    assert "changes another library's settings at run time: `container_standards logger`" in reason


def test_foreign_settings_leave_the_code_s_own_objects_and_moved_statements_alone() -> None:
    assert foreign_settings([_diff([], ["    jax.config.update('jax_enable_x64', True)"])]) == [
        "jax.config: jax_enable_x64"
    ]
    assert foreign_settings([_diff([], ["    ctx = lib._inductor.config.patch(**patches)"])]) == [
        "lib._inductor.config"
    ]
    # the code's own settings object, a mapping merged into a local object's config, a comparison
    assert foreign_settings([_diff([], ['    self.config.update("x", 1)'])]) == []
    assert foreign_settings([_diff([], ["    model.config.update({'use_cache': False})"])]) == []
    assert foreign_settings([_diff([], ['    if logging.getLogger("x").disabled == True:'])]) == []
    # the same setting on both sides: moved, not changed
    line = '    with lib.config.patch("enable_aot_compile", True):'
    assert foreign_settings([_diff([line], []), _diff([], [line])]) == []
    assert foreign_settings([_diff([line], ["", line])]) == []
    # a file users do not run changes nothing for them
    test_only = make(
        "Quiet the test logs (#3)",
        fc("tests/test_api.py", 1, 0, hunk([], ['logging.getLogger("httpx").setLevel(logging.WARNING)'])),
    )
    assert rank(test_only, "en", _quiet(0.21))[0] == LOW
