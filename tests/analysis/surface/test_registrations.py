"""Names a module registers for users to select (issue 16: an inference engine's plugin dropped a model, a
backend and a quantization method by deleting one registration line, and each ranked low): registration calls
and decorators, registry mappings, and what is no registration (an instance's buffer, a data table)."""

from __future__ import annotations

from textwrap import dedent

from analysis.models import SurfaceKind as K
from analysis.surface.commit import FileVersions, commit_surface
from analysis.surface.python import python_surface


def found(before: str | None, after: str | None, path: str = "nimbus/models/__init__.py") -> set[tuple]:
    module = path[:-3].replace("/", ".").removesuffix(".__init__")
    changes = python_surface(
        path, dedent(before) if before else None, dedent(after) if after else None, module=module
    ).changes
    return {
        (c.kind, c.name, c.breaking)
        for c in changes
        if c.kind in (K.REGISTRATION_ADDED, K.REGISTRATION_REMOVED)
    }


# A plugin's entry point registers its models with the host (the shape of vllm-ascend's `register_model()`).
PLUGIN = """
def register_model():
    from hostengine import ModelRegistry

    ModelRegistry.register_model("DeepseekV2ForCausalLM", "nimbus.models.deepseek_v2:NimbusDeepseekV2")
    ModelRegistry.register_model("Qwen3MoeForCausalLM", "nimbus.models.qwen3_moe:NimbusQwen3Moe")
"""


def test_a_registration_dropped_from_a_plugins_register_function_breaks_who_selects_it():
    after = PLUGIN.replace(
        '    ModelRegistry.register_model("DeepseekV2ForCausalLM", "nimbus.models.deepseek_v2:NimbusDeepseekV2")\n',
        "",
    )
    assert found(PLUGIN, after) == {(K.REGISTRATION_REMOVED, 'register_model("DeepseekV2ForCausalLM")', True)}
    assert found(after, PLUGIN) == {(K.REGISTRATION_ADDED, 'register_model("DeepseekV2ForCausalLM")', False)}


def test_decorators_and_registry_calls_at_module_level_register_names():
    before = """
        from hostengine.attention import register_backend
        from hostengine.sampling import SamplerRegistry


        @register_backend("nimbus_legacy")
        class LegacyBackend:
            pass


        class GreedySampler:
            pass


        SamplerRegistry.register("nimbus_greedy")(GreedySampler)
    """
    after = """
        from hostengine.attention import register_backend
        from hostengine.sampling import SamplerRegistry


        class LegacyBackend:
            pass


        class GreedySampler:
            pass
    """
    assert found(before, after, "nimbus/attention/backends.py") == {
        (K.REGISTRATION_REMOVED, 'register_backend("nimbus_legacy")', True),
        (K.REGISTRATION_REMOVED, 'register("nimbus_greedy")', True),
    }


def test_add_calls_register_only_when_given_what_they_add():
    before = """
        def register_communicators():
            add_communicator("hccl", HcclCommunicator)
            parser.add_argument_group("tuning")
            add_communicator("lccl", LcclCommunicator)
    """
    after = """
        def register_communicators():
            add_communicator("hccl", HcclCommunicator)
    """
    assert found(before, after, "nimbus/distributed/register.py") == {
        (K.REGISTRATION_REMOVED, 'add_communicator("lccl")', True)
    }


def test_registry_mappings_lose_and_gain_keys():
    # vllm's model table maps an architecture to (module, class); a plugin's maps a method to an import path
    before = """
        QUANT_METHODS = {
            "w8a8": "nimbus.quantization.w8a8.W8A8LinearMethod",
            "w4a16": "nimbus.quantization.w4a16.W4A16LinearMethod",
        }
        _BACKENDS = {"flash": FlashBackend, "ring": kernels.RingBackend}
        _MODELS = {"Qwen2VLForConditionalGeneration": ("qwen2_vl", "Qwen2VLForConditionalGeneration")}
    """
    after = """
        QUANT_METHODS = {
            "w8a8": "nimbus.quantization.w8a8.W8A8LinearMethod",
        }
        _BACKENDS = {"flash": FlashBackend, "ring": kernels.RingBackend, "paged": PagedBackend}
        _MODELS = {"Qwen2_5_VLForConditionalGeneration": ("qwen2_vl", "Qwen2VLForConditionalGeneration")}
    """
    assert found(before, after, "nimbus/quantization/quant_config.py") == {
        (K.REGISTRATION_REMOVED, 'QUANT_METHODS["w4a16"]', True),
        (K.REGISTRATION_ADDED, '_BACKENDS["paged"]', False),
        (K.REGISTRATION_REMOVED, '_MODELS["Qwen2VLForConditionalGeneration"]', True),  # renamed: still gone
        (K.REGISTRATION_ADDED, '_MODELS["Qwen2_5_VLForConditionalGeneration"]', False),
    }


def test_no_registration_an_instances_buffer_a_data_table_or_a_call_in_an_ordinary_function():
    before = """
        _BLOCK_SIZES = {"a2": 128, "a3": 256, "a1": 64}
        _MESSAGES = {"oom": "out of memory", "hang": "device hang"}


        class RopeCache(torch.nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.cos_sin = None


        def forward(x):
            return x
    """
    after = """
        _BLOCK_SIZES = {"a2": 128, "a3": 256}
        _MESSAGES = {"oom": "out of memory"}


        class RopeCache(torch.nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.register_buffer("cos_sin", torch.zeros(dim), persistent=False)
                self.register_forward_hook("trace", trace)


        def forward(x):
            register_model("Scratch", Scratch)
            return x
    """
    assert found(before, after, "nimbus/ops/rope.py") == set()


def test_an_alias_table_keeps_an_old_key_and_a_table_of_removals_does_not():
    before = """
        _TOKENIZERS = {"deepseek_v32": ("deepseek_v32", "DeepseekV32Tokenizer"), "hf": ("hf", "HfTokenizer")}
    """
    aliased = """
        _TOKENIZERS = {"deepseek-v32": ("deepseek_v32", "DeepseekV32Tokenizer"), "hf": ("hf", "HfTokenizer")}
        _ALIASES = {"deepseek_v32": "deepseek-v32"}
    """
    (removed,) = [
        c
        for c in python_surface("pkg/tok.py", dedent(before), dedent(aliased), module="pkg.tok").changes
        if c.kind == K.REGISTRATION_REMOVED
    ]
    assert removed.aliased and not removed.breaking
    # vllm #30049 deleted a model and listed it with the version that last had it: users selecting it break
    tombstone = """
        _TOKENIZERS = {"hf": ("hf", "HfTokenizer")}
        _PREVIOUSLY_SUPPORTED = {"deepseek_v32": "0.12.0"}
    """
    assert found(before, tombstone, "pkg/tok.py") == {
        (K.REGISTRATION_REMOVED, '_TOKENIZERS["deepseek_v32"]', True)
    }


def test_a_key_registered_again_elsewhere_in_the_commit_did_not_move_for_users():
    # a refactor moved the communicators' registrations from the package's entry point into a module of their own
    old_init = 'def register():\n    add_communicator("hccl", HcclCommunicator)\n    add_communicator("lccl", Lccl)\n'
    new_init = (
        "def register():\n    from nimbus.distributed.register import register_all\n\n    register_all()\n"
    )
    new_module = 'def register_all():\n    add_communicator("hccl", HcclCommunicator)\n'
    files = [
        FileVersions("nimbus/__init__.py", old_init, new_init),
        FileVersions("nimbus/distributed/register.py", None, new_module),
    ]
    changes = commit_surface(files, None, None)
    assert [(c.kind, c.name) for c in changes if c.kind.value.startswith("registration")] == [
        (K.REGISTRATION_REMOVED, 'add_communicator("lccl")')
    ]


def test_registrations_in_tests_are_not_users():
    registered = '@SamplerRegistry.register("test_sampler")\nclass FakeSampler:\n    pass\n'
    changes = commit_surface([FileVersions("tests/ut/test_samplers.py", registered, "")], None, None)
    assert not changes


def test_registrations_moved_into_a_table_are_said_only_for_the_keys_that_changed():
    # vllm #30609 moved the tokenizers' `@TokenizerRegistry.register("...")` decorators into a lazy table and
    # spelled one key anew ("deepseek_v32" → "deepseekv32"): `tokenizer_mode="deepseek_v32"` broke (#30658)
    decorated = '@TokenizerRegistry.register("{key}")\nclass {cls}:\n    pass\n'
    files = [
        FileVersions("vllm/tokenizers/hf.py", decorated.format(key="hf", cls="Hf"), "class Hf:\n    pass\n"),
        FileVersions(
            "vllm/tokenizers/deepseek.py",
            decorated.format(key="deepseek_v32", cls="Ds"),
            "class Ds:\n    pass\n",
        ),
        FileVersions(
            "vllm/tokenizers/registry.py",
            "import os\n",
            'import os\n_TOKENIZERS = {"deepseekv32": ("deepseek", "Ds"), "hf": ("hf", "Hf")}\n',
        ),
    ]
    changes = commit_surface(files, None, None)
    assert sorted((c.kind, c.name) for c in changes if c.kind.value.startswith("registration")) == [
        (K.REGISTRATION_ADDED, '_TOKENIZERS["deepseekv32"]'),
        (K.REGISTRATION_REMOVED, 'register("deepseek_v32")'),
    ]
    # the table moved whole to another module: nothing for users
    table = '_TOKENIZERS = {"hf": ("hf", "Hf")}\n'
    moved = [FileVersions("pkg/a.py", table, "import os\n"), FileVersions("pkg/b.py", None, table)]
    assert not [c for c in commit_surface(moved, None, None) if c.kind.value.startswith("registration")]
