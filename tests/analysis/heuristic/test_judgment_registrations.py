"""Names users select by registering them with a registry (analysis/surface/registrations.py): a synthetic
inference-engine plugin dropped a model, a backend, a sampler and a quantization method by deleting one
registration line each, and every one ranked low ("no user-facing change found")."""

from __future__ import annotations

import dataclasses

from analysis.heuristic import analyze, rank
from analysis.models import Importance, SurfaceChange, SurfaceKind
from analysis.surface.commit import FileVersions, commit_surface
from tests.analysis.heuristic.test_heuristic import fc, make

LOW, MEDIUM, HIGH = Importance.LOW, Importance.MEDIUM, Importance.HIGH


def test_a_registration_removed_breaks_who_selects_its_name_however_deep_and_one_added_is_new() -> None:
    # an inference engine's plugin dropped a model by deleting its `register_model(...)` line in
    # `nimbus/models/__init__.py`: ranked low ("no user-facing change found"), the release notes call it breaking
    path = "nimbus/model_executor/models/registry/__init__.py"
    removed = SurfaceChange(SurfaceKind.REGISTRATION_REMOVED, 'register_model("DeepseekV2ForCausalLM")', path)
    commit = make("[Model] Drop the DeepSeek V2 override (#152)", fc(path, 0, 1), surface=(removed,))
    importance, reason = rank(commit, "en")
    assert importance == HIGH
    assert reason.startswith(
        'impact (high): breaks users: removes registration `register_model("DeepseekV2ForCausalLM")` (no alias)'
    )
    a = analyze(commit, "en")
    assert any('register_model("DeepseekV2ForCausalLM")' in r for r in a.risks)
    assert "removes registration" in a.insights["compatibility"]
    assert "删除注册名" in analyze(commit, "zh").importance_reason
    added = dataclasses.replace(removed, kind=SurfaceKind.REGISTRATION_ADDED, name='_KERNELS["chunked"]')
    importance, reason = rank(make("[Kernel] Allow chunked", fc(path, 1, 0), surface=(added,)), "en")
    assert importance == MEDIUM and 'new capability: adds registration `_KERNELS["chunked"]`' in reason
    aliased = dataclasses.replace(removed, aliased=True)
    assert rank(make("[Model] Rename", fc(path, 1, 1), surface=(aliased,)), "en")[0] == MEDIUM


def test_from_the_files_a_registry_key_removed_is_high_and_a_data_table_or_a_buffer_is_low() -> None:
    # the plugin's `[Quant] Remove w4a16 from the quantization methods`: one line out of a registry mapping
    path = "nimbus/quantization/quant_config.py"
    before = (
        "QUANT_METHODS = {\n"
        '    "w8a8": "nimbus.quantization.w8a8.W8A8LinearMethod",\n'
        '    "w4a16": "nimbus.quantization.w4a16.W4A16LinearMethod",\n'
        "}\n"
    )
    after = before.replace('    "w4a16": "nimbus.quantization.w4a16.W4A16LinearMethod",\n', "")
    surface = commit_surface([FileVersions(path, before, after)], None, None)
    importance, reason = rank(make("[Quant] Remove w4a16 (#151)", fc(path, 0, 1), surface=surface), "en")
    assert importance == HIGH and 'removes registration `QUANT_METHODS["w4a16"]`' in reason
    # a table of numbers losing an entry, and a layer's cache kept as a buffer: nothing users select
    tiling = "nimbus/ops/tiling.py"
    cache = "nimbus/ops/rope/cache.py"
    layer = "class RopeCache(Module):\n    def __init__(self, dim):\n        self.cos_sin = None\n"
    surface = commit_surface(
        [
            FileVersions(tiling, '_BLOCK_SIZES = {"a2": 128, "a1": 64}\n', '_BLOCK_SIZES = {"a2": 128}\n'),
            FileVersions(
                cache,
                layer,
                layer.replace("self.cos_sin = None", 'self.register_buffer("cos_sin", zeros(dim))'),
            ),
        ],
        None,
        None,
    )
    assert not [c for c in surface if c.kind.value.startswith("registration")]
    commit = make(
        "[Refactor] Tidy tiling and the rope cache", fc(tiling, 1, 1), fc(cache, 1, 1), surface=surface
    )
    assert rank(commit, "en")[0] == LOW


def test_a_registration_written_up_in_the_docs_is_found_by_the_key_users_type() -> None:
    # the docs tell users the name they select (`--attention-backend nimbus_flash`), not the registering call
    path = "nimbus/attention/backends.py"
    added = SurfaceChange(SurfaceKind.REGISTRATION_ADDED, 'register_backend("nimbus_flash")', path)
    guide = "docs/source/user_guide/attention.md"
    docs = fc(
        guide, 2, 0, patch="@@ -1,0 +1,2 @@\n+Select it with `--attention-backend nimbus_flash`.\n+More."
    )
    alone = make("[Attention] Add the flash backend", fc(path, 120, 10), surface=(added,))
    assert rank(alone, "en")[0] == MEDIUM
    importance, reason = rank(
        make("[Attention] Add the flash backend", fc(path, 120, 10), docs, surface=(added,)), "en"
    )
    assert importance == HIGH and f"written up in its docs (`{guide}`)" in reason
