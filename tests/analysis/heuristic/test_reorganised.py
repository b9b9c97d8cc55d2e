"""A restructuring's names that are old code moved are no new capability (analysis/heuristic/reorganised.py).
Built from a plugin's shapes: device helpers split out of its worker into a module, attention metadata moved
to its own module with the old import path kept, ops moved into a package beside a new setting."""

from __future__ import annotations

from analysis.heuristic import rank
from analysis.models import Importance, SurfaceChange, SurfaceKind
from tests.analysis.heuristic.test_heuristic import fc, make
from tests.analysis.heuristic.test_judgment import hunk

LOW, MEDIUM, HIGH = Importance.LOW, Importance.MEDIUM, Importance.HIGH

_WORKER = hunk(
    [
        "        self._set_device(self.device)",
        "",
        "    def _set_device(self, device: str) -> None:",
        "        self.current_device = device",
        "        free, total = 1 << 30, 1 << 31",
        "        return min(free, total)",
    ],
    ["        set_device(self, self.device)", "        return available_memory()"],
)
_HELPERS = hunk(
    [],
    [
        '"""Device helpers of the worker."""',
        "",
        "def set_device(worker, device: str) -> None:",
        "    worker.current_device = device",
        "",
        "",
        "def available_memory() -> int:",
        '    """What the device has free."""',
        "    free, total = 1 << 30, 1 << 31",
        "    return min(free, total)",
    ],
)
_ADDED = (
    SurfaceChange(
        SurfaceKind.ADDED, "nimbus.worker.device_utils.set_device", "nimbus/worker/device_utils.py", 3
    ),
    SurfaceChange(
        SurfaceKind.ADDED, "nimbus.worker.device_utils.available_memory", "nimbus/worker/device_utils.py", 7
    ),
)


def _split(title: str, surface: tuple[SurfaceChange, ...] = _ADDED) -> tuple[Importance, str]:
    commit = make(
        title,
        fc("nimbus/worker/worker.py", 2, 6, _WORKER),
        fc("nimbus/worker/device_utils.py", 10, 0, _HELPERS, status="added"),
        surface=surface,
    )
    return rank(commit, "en")


def test_helpers_split_out_by_a_restructuring_are_no_new_capability() -> None:
    # "[Refactor] Split device helpers out of the worker": ranked medium as "new capability: adds `set_device`,
    # adds `available_memory`"; the release notes listed it as internal. One was a private method made public
    # (named by the removed lines), the other code inlined before (its body among the removed lines).
    importance, reason = _split("[Refactor] Split device helpers out of the worker (#142)")
    assert importance == LOW
    assert reason.startswith(
        "impact (low): restructures, moving existing code (nothing new for users): `set_device`, `available_memory`;"
    )
    # the same change not called a restructuring keeps its findings: a title decides what the author meant
    importance, reason = _split("[Worker] Device helpers (#142)")
    assert importance == MEDIUM and "new capability: adds `set_device`" in reason


def test_code_pulled_out_to_its_own_module_is_no_new_capability() -> None:
    # scikit-build-core's "Pull out overrides to separate file (#821)": the moved functions read as "new
    # capability" (medium) while the notes listed it as internal; "pull out" says the same as "split out".
    importance, reason = _split("Pull out device helpers to separate file (#142)")
    assert importance == LOW
    assert "moving existing code (nothing new for users): `set_device`" in reason


def test_a_name_that_is_new_code_stays_a_new_capability_in_a_restructuring() -> None:
    fresh = SurfaceChange(
        SurfaceKind.ADDED, "nimbus.worker.device_utils.pin_memory", "nimbus/worker/device_utils.py"
    )
    importance, reason = _split("[Refactor] Split device helpers out of the worker (#142)", (*_ADDED, fresh))
    assert importance == MEDIUM
    assert "new capability: adds `pin_memory`" in reason and "set_device" not in reason.partition(";")[0]


def test_a_module_moved_with_its_old_path_kept_is_no_notice_in_a_restructuring() -> None:
    moved = SurfaceChange(
        SurfaceKind.RENAMED,
        "nimbus.attention.metadata.NimbusMetadata",
        "nimbus/attention/metadata.py",
        old="nimbus.attention.attention.NimbusMetadata",
        new="nimbus.attention.metadata.NimbusMetadata",
        aliased=True,
    )
    code = (
        fc(
            "nimbus/attention/attention.py",
            1,
            8,
            hunk(["class NimbusMetadata:"], ["from .metadata import *"]),
        ),
        fc("nimbus/attention/metadata.py", 8, 0, hunk([], ["class NimbusMetadata:"]), status="added"),
    )
    title = "[Refactor] Split attention metadata into its own module (#112)"
    importance, reason = rank(make(title, *code, surface=(moved,)), "en")
    assert (
        importance == LOW
        and "restructures, moving existing code (nothing new for users): `NimbusMetadata`" in reason
    )
    # not a restructuring, or one whose title says the new name is the point: users should know the new path
    for other in ("[Attention] Metadata module (#112)", "Rename the attention metadata module (#112)"):
        importance, reason = rank(make(other, *code, surface=(moved,)), "en")
        assert importance == MEDIUM and "(alias kept)" in reason, other
    # without the alias the old import path breaks, whatever the title calls it
    broken = SurfaceChange(
        SurfaceKind.RENAMED,
        moved.name,
        moved.path,
        old=moved.old,
        new=moved.new,
    )
    assert rank(make(title, *code, surface=(broken,)), "en")[0] == HIGH


def test_a_restructuring_that_adds_a_user_option_is_judged_by_that_option() -> None:
    # "[Refactor] Move rotary embedding into ops/rope and add rope_cache_on_device": the setting is new
    moved = SurfaceChange(
        SurfaceKind.RENAMED,
        "nimbus.ops.rope.rotary_embedding.rope_forward",
        "nimbus/ops/rope/rotary_embedding.py",
        old="nimbus.ops.rotary_embedding.rope_forward",
        new="nimbus.ops.rope.rotary_embedding.rope_forward",
        aliased=True,
    )
    setting = hunk(
        [], ['        self.rope_cache_on_device = additional_config.get("rope_cache_on_device", True)']
    )
    option = SurfaceChange(SurfaceKind.ENV_ADDED, "NIMBUS_ROPE_CACHE", "nimbus/envs.py")
    title = "[Refactor] Move rotary embedding into ops/rope and add rope_cache_on_device (#137)"
    importance, reason = rank(
        make(title, fc("nimbus/plugin_config.py", 1, 0, setting), surface=(moved,)), "en"
    )
    assert importance == MEDIUM and "reads new settings `rope_cache_on_device`" in reason
    code = fc(
        "nimbus/envs.py", 1, 0, hunk([], ['    "NIMBUS_ROPE_CACHE": lambda: os.getenv("NIMBUS_ROPE_CACHE")'])
    )
    importance, reason = rank(make(title, code, surface=(moved, option)), "en")
    assert importance == MEDIUM and "adds environment variable `NIMBUS_ROPE_CACHE`" in reason


# A web framework's refactors of its dependency-injection internals (release notes: "Refactors", internal): a
# helper renamed without an alias, a result type added, in modules the docs never mention.
_UTILS = hunk(
    ["def create_response_field(", "    name: str,", "    type_: Type[Any],"],
    ["def create_model_field(", "    name: str,", "    type_: Type[Any],"],
)


def _renamed(documented: bool) -> SurfaceChange:
    return SurfaceChange(
        SurfaceKind.RENAMED,
        "webkit.utils.create_model_field",
        "webkit/utils.py",
        12,
        old="webkit.utils.create_response_field",
        new="webkit.utils.create_model_field",
        documented=documented,
    )


def _internal(title: str, *surface: SurfaceChange) -> tuple[Importance, str]:
    commit = make(
        title, fc("webkit/utils.py", 3, 3, _UTILS), fc("webkit/routing.py", 2, 2, _UTILS), surface=surface
    )
    return rank(commit, "en")


def test_an_internal_restructuring_of_names_the_docs_never_mention_takes_nothing_from_users() -> None:
    title = "♻️ Rename internal `create_response_field()` to `create_model_field()` (#12)"
    importance, reason = _internal(title, _renamed(documented=False))
    assert importance == LOW
    assert reason.startswith("impact (low): an internal restructuring by its title, of names the docs never")
    assert "`create_model_field`" in reason.partition(";")[0]
    added = SurfaceChange(
        SurfaceKind.ADDED, "webkit.dependencies.utils.SolvedDependency", "webkit/utils.py", 40
    )
    title = "♻️ Refactor and simplify internal data from `solve_dependencies()` using dataclasses (#13)"
    assert _internal(title, added)[0] == LOW


def test_the_title_alone_or_the_docs_silence_alone_keeps_the_finding() -> None:
    # the author's word without the docs' silence: the docs mention the name, users call it
    title = "♻️ Rename internal `create_response_field()` to `create_model_field()` (#12)"
    assert _internal(title, _renamed(documented=True))[0] == HIGH
    # the docs' silence without the author's word: a rename of a name near the top still reaches callers
    importance, reason = _internal("♻️ Rename `create_response_field()` (#12)", _renamed(documented=False))
    assert importance == MEDIUM and "breaks callers of names its docs never mention" in reason
    # not a restructuring by its title: "internal" alone does not say nothing changed
    importance, _ = _internal("🐛 Fix internal `create_response_field()` (#12)", _renamed(documented=False))
    assert importance == MEDIUM
