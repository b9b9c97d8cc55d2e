"""Surface facts of Python files, from the shapes of real misjudgments (issue 16) and the API changes users
feel: each test gives a file before and after and checks the facts found."""

from __future__ import annotations

from textwrap import dedent

import pytest

from analysis.models import SurfaceKind as K
from analysis.models import describe
from analysis.surface.blanked_bodies import Relatives
from analysis.surface.python import MAX_SOURCE_CHARS, Collected, python_surface


def facts(
    before: str | None, after: str | None, *, path: str = "engine/config.py", module: str = "engine.config"
):
    return python_surface(
        path, dedent(before) if before else before, dedent(after) if after else after, module=module
    ).changes


def kinds(changes) -> list[K]:
    return [c.kind for c in changes]


# --- configuration fields -------------------------------------------------------------------------------

CONFIG_BEFORE = """
    from dataclasses import dataclass, field

    @dataclass
    class CompileConfig:
        '''Options of the compiler, set from the command line as --compile-config JSON.'''
        level: int = 0
        use_inductor_graph_partition: bool = False
        cache_dir: str = ""
"""


def test_a_renamed_config_field_without_alias_is_breaking():
    after = CONFIG_BEFORE.replace("use_inductor_graph_partition", "graph_partition")
    [change] = facts(CONFIG_BEFORE, after)
    assert change.kind == K.FIELD_RENAMED
    assert (change.old, change.new) == ("use_inductor_graph_partition", "graph_partition")
    assert change.name == "engine.config.CompileConfig.graph_partition"
    assert change.line == 8 and change.path == "engine/config.py"
    assert change.breaking and not change.aliased


@pytest.mark.parametrize(
    "shim",
    [
        # pydantic: the old key still validates
        "graph_partition: bool = Field(False, validation_alias=AliasChoices('graph_partition', 'use_inductor_graph_partition'))",
        # a property keeps attribute access working
        "graph_partition: bool = False\n\n        @property\n        def use_inductor_graph_partition(self) -> bool:\n            return self.graph_partition",
        # a validator maps the old key
        "graph_partition: bool = False\n\n        def __post_init__(self):\n            if getattr(self, 'use_inductor_graph_partition', None) is not None:\n                self.graph_partition = True",
    ],
)
def test_the_same_rename_with_an_alias_is_not_breaking(shim):
    after = CONFIG_BEFORE.replace("use_inductor_graph_partition: bool = False", shim)
    renamed = [c for c in facts(CONFIG_BEFORE, after) if c.kind == K.FIELD_RENAMED]
    assert len(renamed) == 1
    assert renamed[0].aliased and not renamed[0].breaking


def test_a_deprecated_field_kept_is_no_removal_but_a_deprecation():
    after = CONFIG_BEFORE.replace(
        "use_inductor_graph_partition: bool = False",
        "use_inductor_graph_partition: bool = Field(False, deprecated='use graph_partition')\n        graph_partition: bool = False",
    )
    assert kinds(facts(CONFIG_BEFORE, after)) == [K.DEPRECATION, K.FIELD_ADDED]


def test_fields_of_pydantic_models_typeddicts_and_attrs_are_config_fields():
    # Records users build or read are those the module exports (or that say they are configuration);
    # a validation model (BaseModel) takes data from outside whatever its name.
    before = """
        from typing import TypedDict
        import attrs
        from pydantic import BaseModel

        __all__ = ["Request", "Usage", "Limits"]

        class Request(BaseModel):
            prompt: str
            max_tokens: int = 16

        class Usage(TypedDict):
            total: int

        @attrs.define
        class Limits:
            rps: float = 1.0
    """
    after = before.replace("max_tokens: int = 16", "max_tokens: int = 16\n            stop: list[str] = []")
    after = after.replace("total: int", "total_tokens: int").replace("rps: float = 1.0", "rps: float = 2.0")
    found = {(c.kind, c.name) for c in facts(before, after, module="api")}
    assert found == {
        (K.FIELD_ADDED, "api.Request.stop"),
        (K.FIELD_RENAMED, "api.Usage.total_tokens"),
        (K.DEFAULT_CHANGED, "api.Limits.rps"),
    }


# vllm #30532 (`[responsesAPI]add extra body parameters`): fields added to a request model of an
# OpenAI-compatible server's protocol module, served by routes declared in another module.
PROTOCOL_BEFORE = """
    from pydantic import BaseModel, ConfigDict

    class OpenAIBaseModel(BaseModel):
        model_config = ConfigDict(extra="allow")

    class ResponsesRequest(OpenAIBaseModel):
        model: str | None = None
        temperature: float | None = None

    class RequestState(OpenAIBaseModel):
        queued: int = 0
"""


def test_fields_of_an_http_apis_request_or_response_model_are_the_apis():
    after = PROTOCOL_BEFORE.replace(
        "temperature: float | None = None",
        "temperature: float | None = None\n        top_k: int | None = None\n        logit_bias: dict | None = None",
    ).replace("queued: int = 0", "queued: int = 0\n        started: int = 0")
    path, module = "pkg/entrypoints/openai/protocol.py", "pkg.entrypoints.openai.protocol"
    found = {c.name: c for c in facts(PROTOCOL_BEFORE, after, path=path, module=module)}
    assert found[f"{module}.ResponsesRequest.top_k"].api
    assert found[f"{module}.ResponsesRequest.logit_bias"].api
    assert not found[f"{module}.RequestState.started"].api  # a model HTTP's words do not name
    # a field removed from a response model breaks API clients the same way
    gone = facts(after, PROTOCOL_BEFORE, path=path, module=module)
    assert {(c.kind, c.api) for c in gone if "ResponsesRequest" in c.name} == {(K.FIELD_REMOVED, True)}


def test_any_model_of_a_module_that_declares_routes_is_the_apis_and_a_plain_record_is_not():
    before = """
        from dataclasses import dataclass
        from fastapi import APIRouter
        from pydantic import BaseModel

        router = APIRouter()

        class Item(BaseModel):
            name: str

        @dataclass
        class CacheConfig:
            size: int = 1

        @router.post("/items")
        async def create(item: Item) -> Item:
            return item
    """
    after = before.replace("name: str", "name: str\n            tags: list[str] = []").replace(
        "size: int = 1", "size: int = 1\n            ttl: int = 0"
    )
    found = {
        c.name: c.api for c in facts(before, after, path="app/api/v1/items.py", module="app.api.v1.items")
    }
    assert found == {"app.api.v1.items.Item.tags": True, "app.api.v1.items.CacheConfig.ttl": False}
    # without the route, a model named neither Request nor Response is no API's
    plain = {c.name: c.api for c in facts(before.replace('@router.post("/items")', ""),
                                          after.replace('@router.post("/items")', ""))}  # fmt: skip
    assert plain["engine.config.Item.tags"] is False


def test_fields_of_an_internal_record_are_no_config_fields():
    # vllm: a field added to an attention backend's metadata dataclass (the engine fills it; no user sets
    # it) was stated as a new configuration field. A record that is not exported, not named or documented
    # as configuration and not held by one is data the code passes around.
    before = """
        from dataclasses import dataclass
        import torch

        @dataclass
        class FlashAttentionMetadata:
            num_actual_tokens: int
            max_query_len: int
            query_start_loc: torch.Tensor

        @dataclass
        class SchedulerConfig:
            max_num_seqs: int = 128
            chunking: "ChunkingPolicy | None" = None

        @dataclass
        class ChunkingPolicy:
            \"\"\"How long prompts are split.\"\"\"
            size: int = 512
    """
    after = before.replace("max_query_len: int\n", "max_query_len: int\n            causal: bool = True\n")
    after = after.replace("size: int = 512", "size: int = 1024")
    found = {(c.kind, c.name) for c in facts(before, after, module="pkg.attn")}
    # The metadata record's new field is no fact; the record a config class holds is configuration too.
    assert found == {(K.DEFAULT_CHANGED, "pkg.attn.ChunkingPolicy.size")}


def test_a_switch_named_field_default_flipped_is_a_switch():
    after = CONFIG_BEFORE.replace(
        "use_inductor_graph_partition: bool = False", "use_inductor_graph_partition: bool = True"
    )
    [change] = facts(CONFIG_BEFORE, after)
    assert change.kind == K.SWITCH_FLIPPED and (change.old, change.new) == ("False", "True")
    assert change.behaviour and not change.breaking


# --- defaults: values, not spellings ------------------------------------------------------------------


def test_a_number_retyped_as_its_string_is_not_a_changed_default():
    before = """
        import argparse

        def add_dataset_args(parser: argparse.ArgumentParser) -> None:
            parser.add_argument("--temperature", type=float, default=0.0, help="Sampling temperature (default 0.0).")
    """
    after = before.replace("default=0.0", 'default="0.0"').replace("(default 0.0)", '(default "0.0")')
    assert facts(before, after, path="bench/datasets.py", module="bench.datasets") == []


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        ("0.0", '"0.0"', False),
        ("1", "1.0", False),
        ("False", '"false"', False),
        ("1", "True", False),  # an int flag retyped bool (`X: int = 1` → `X: bool = True`)
        ("0", "False", False),
        ("2", "True", True),
        ("1", "False", True),
        ("None", "None", False),
        ("False", "True", True),
        ("0.5", "0.9", True),
        ("'auto'", "'eager'", True),
        ("None", "0", True),
    ],
)
def test_defaults_compare_by_value(old, new, changed):
    before = f"def generate(prompt, temperature={old}):\n    return prompt\n"
    after = f"def generate(prompt, temperature={new}):\n    return prompt\n"
    result = facts(before, after, path="lib/gen.py", module="lib.gen")
    assert (result != []) == changed
    if changed:
        assert result[0].kind == K.DEFAULT_CHANGED and result[0].name == "lib.gen.generate(temperature)"


def test_a_docstring_and_comment_only_edit_has_no_facts():
    before = '''
        def load(path, *, strict=False):
            """Load a file.

            Args:
                path: wher the file is.
            """
            # read it
            return open(path).read()
    '''
    after = before.replace("wher", "where").replace("# read it", "# read the whole file")
    after = after.replace("return open(path).read()", "return open(path).read()  # text mode")
    assert facts(before, after, path="lib/io.py", module="lib.io") == []


# --- switches and guards --------------------------------------------------------------------------------


def test_a_guard_that_blocked_one_backend_lifted_is_a_switch_flipped():
    # the shape of a 6-line change that re-enabled expert parallelism for one quantised MoE backend
    before = """
        class QuantMoEMethod:
            def __init__(self, layer):
                self.backend = pick_backend(layer)

            def create_weights(self, layer, num_experts):
                if layer.use_expert_parallel and self.backend == Backend.FUSED_CUTLASS:
                    raise NotImplementedError("expert parallelism is not supported with this backend")
                return make_weights(layer, num_experts)
    """
    after = before.replace(
        """                if layer.use_expert_parallel and self.backend == Backend.FUSED_CUTLASS:
                    raise NotImplementedError("expert parallelism is not supported with this backend")
""",
        "",
    )
    [change] = facts(before, after, path="engine/layers/quant_moe.py", module="engine.layers.quant_moe")
    assert change.kind == K.SWITCH_FLIPPED and change.behaviour
    assert change.name == "engine.layers.quant_moe.QuantMoEMethod.create_weights"
    assert "use_expert_parallel" in (change.old or "")


def test_a_guard_on_bad_input_or_rewritten_is_no_switch():
    # vllm: a check of the caller's arguments (`if x is None: raise ValueError("x must be set")`) moved
    # or reworded was stated as "flips" with its raw condition; it lets no new path run.
    before = """
        class Scheduler:
            def schedule(self, request, budget):
                if budget is None:
                    raise ValueError("budget must be set")
                if request.lora_id and not self.lora_enabled:
                    raise NotImplementedError("LoRA is not supported by this scheduler")
                assert request.num_tokens > 0
                return self._plan(request, budget)
    """
    dropped_input_check = before.replace(
        """                if budget is None:
                    raise ValueError("budget must be set")
""",
        "",
    )
    assert facts(before, dropped_input_check, module="m") == []
    rewritten = before.replace(
        "if request.lora_id and not self.lora_enabled:",
        "if request.lora_id is not None and not self.lora_enabled:",
    )
    assert facts(before, rewritten, module="m") == []
    no_assert = before.replace("                assert request.num_tokens > 0\n", "")
    assert facts(before, no_assert, module="m") == []  # an assert without a message saying "unsupported"
    lifted = before.replace(
        """                if request.lora_id and not self.lora_enabled:
                    raise NotImplementedError("LoRA is not supported by this scheduler")
""",
        "",
    )
    [change] = facts(before, lifted, module="m")
    assert (change.kind, change.name, change.new) == (K.SWITCH_FLIPPED, "m.Scheduler.schedule", None)


def test_methods_of_a_private_base_are_the_api_of_its_public_heirs():
    # pydantic: `_BaseUrl` defines `encoded_string()` and the URL types users import (`AnyUrl`,
    # `HttpUrl(AnyUrl)`) inherit it; a method added to or removed from the private base is theirs.
    before = """
        class _BaseUrl:
            def __init__(self, url):
                self._url = url

            def unicode_string(self):
                return str(self._url)

            def _parts(self):
                return self._url.split("/")

        class AnyUrl(_BaseUrl):
            pass

        class HttpUrl(AnyUrl):
            pass
    """
    after = before.replace(
        """            def _parts(self):""",
        """            def encoded_string(self):
                return self._url

            def _parts(self):""",
    )
    assert [(c.kind, c.name) for c in facts(before, after, module="lib.networks")] == [
        (K.ADDED, "lib.networks.AnyUrl.encoded_string")
    ]
    removed = before.replace("def unicode_string(self):", "def _unicode_string(self):")
    assert (K.REMOVED, "lib.networks.AnyUrl.unicode_string") in {
        (c.kind, c.name) for c in facts(before, removed, module="lib.networks")
    }


def test_python_protocol_dunders_are_no_api_but_a_library_hook_is():
    # pydantic: `__get_pydantic_json_schema__` is a hook users implement (API); `__repr__` or
    # `__hash__` on a class are Python's protocol (no new name users call).
    before = """
        class Secret:
            def get(self):
                return self._v
    """
    after = before.replace(
        "            def get(self):",
        """            def __repr__(self):
                return "Secret(**)"

            def __hash__(self):
                return hash(self._v)

            def __get_pydantic_json_schema__(self, schema, handler):
                return handler(schema)

            def get(self):""",
    )
    assert [c.name for c in facts(before, after, module="lib.types")] == [
        "lib.types.Secret.__get_pydantic_json_schema__"
    ]


def test_a_capability_answer_and_class_attribute_flipped_are_switches():
    before = """
        class Backend:
            supports_expert_parallel: bool = False

            def supports_quant_scheme(self):
                return False
    """
    after = before.replace("= False", "= True").replace("return False", "return True")
    assert sorted(c.name for c in facts(before, after, module="m")) == [
        "m.Backend.supports_expert_parallel",
        "m.Backend.supports_quant_scheme",
    ]


def test_a_new_raise_on_a_public_path_and_a_deprecation_warning():
    before = """
        import warnings

        def connect(url, timeout=10):
            return open_connection(url, timeout)
    """
    after = """
        import warnings

        def connect(url, timeout=10):
            if timeout <= 0:
                raise ValueError("timeout must be positive")
            if url.startswith("http:"):
                warnings.warn("plain http is deprecated; use https", DeprecationWarning, stacklevel=2)
            return open_connection(url, timeout)
    """
    found = facts(before, after, module="net")
    assert [(c.kind, c.name, c.new) for c in found] == [
        (K.RAISES, "net.connect", "ValueError"),
        (K.DEPRECATION, "net.connect", "plain http is deprecated; use https"),
    ]


def test_a_module_getattr_that_warns_deprecates_the_names_it_serves():
    """A status-codes module replaced two constants by correctly numbered ones and kept the old names through a
    module `__getattr__` (PEP 562) that warns: it was stated as deprecating `__getattr__`, a hook nobody calls."""
    before = """
        WS_1000_NORMAL_CLOSURE = 1000
        WS_1004_NO_STATUS_RCVD = 1004
        WS_1005_ABNORMAL_CLOSURE = 1005
    """
    after = """
        import warnings

        WS_1000_NORMAL_CLOSURE = 1000
        WS_1005_NO_STATUS_RCVD = 1005
        WS_1006_ABNORMAL_CLOSURE = 1006

        __deprecated__ = {"WS_1004_NO_STATUS_RCVD": 1004, "WS_1005_ABNORMAL_CLOSURE": 1005}


        def __getattr__(name: str) -> int:
            deprecated = __deprecated__.get(name)
            if deprecated:
                warnings.warn(f"'{name}' is deprecated.", category=DeprecationWarning, stacklevel=3)
                return deprecated
            raise AttributeError(f"module has no attribute '{name}'")
    """
    found = facts(before, after, path="web/status.py", module="web.status")
    deprecations = [c.name for c in found if c.kind == K.DEPRECATION]
    assert deprecations == ["web.status.WS_1004_NO_STATUS_RCVD", "web.status.WS_1005_ABNORMAL_CLOSURE"]
    assert all(c.aliased for c in found if c.kind in (K.REMOVED, K.RENAMED))
    # a `__getattr__` that warns for names it never served before (a lazy import made to warn) names the module
    lazy_before = "def __getattr__(name):\n    return _load(name)\n"
    lazy_after = (
        "import warnings\n\n\ndef __getattr__(name):\n"
        "    warnings.warn('importing from web.lazy is deprecated', DeprecationWarning)\n    return _load(name)\n"
    )
    found = facts(lazy_before, lazy_after, path="web/lazy.py", module="web.lazy")
    assert [(c.kind, c.name) for c in found] == [(K.DEPRECATION, "web.lazy")]


def test_a_warning_when_a_parameter_is_passed_deprecates_that_parameter_and_a_private_helper_none():
    """A framework deprecated `on_startup`/`on_shutdown` with a warning in its app's `__init__` under `if
    on_startup or on_shutdown:` and `example` under `if example is not None:`; it was stated as deprecating
    the whole constructor, and a private helper's `@deprecated` as a deprecation users see (a warning a
    private method gives on a user's path still is one)."""
    before = """
        import warnings
        from typing_extensions import deprecated

        class App:
            def __init__(self, *, debug=False, on_startup=None, on_shutdown=None, example=None, url=""):
                self.debug = debug
    """
    after = """
        import warnings
        from typing_extensions import deprecated

        @deprecated("use examples")
        def _body_example() -> None: ...

        class App:
            def __init__(self, *, debug=False, on_startup=None, on_shutdown=None, example=None, url=""):
                if on_startup or on_shutdown:
                    warnings.warn("on_startup and on_shutdown are deprecated, use lifespan", DeprecationWarning)
                if example is not None:
                    warnings.warn("example is deprecated, use examples", DeprecationWarning)
                if url.startswith("http:"):
                    warnings.warn("plain http is deprecated", DeprecationWarning)
                self.debug = debug

            def _convert_type(self, convert):
                if convert == "reward":
                    logger.warning("`--convert reward` is deprecated, use `--convert embed`")
                return convert
    """
    found = facts(before, after, path="web/app.py", module="web.app")
    assert [(c.kind, c.name) for c in found] == [
        (K.DEPRECATION, "web.app.App.__init__(on_startup, on_shutdown)"),
        (K.DEPRECATION, "web.app.App.__init__(example)"),
        (K.DEPRECATION, "web.app.App.__init__"),
        # a warning users see, from a private method on their path (an option's value deprecated)
        (K.DEPRECATION, "web.app.App._convert_type"),
    ]


# --- names and parameters -------------------------------------------------------------------------------


def test_an_isolated_new_module_adds_names_and_breaks_nothing():
    new_model = """
        from torch import nn

        class TinyForCausalLM(nn.Module):
            def __init__(self, config, prefix=""):
                super().__init__()

            def forward(self, input_ids, positions):
                return input_ids

        def _private_helper():
            pass
    """
    found = facts(None, new_model, path="engine/models/tiny.py", module="engine.models.tiny")
    assert {c.kind for c in found} == {K.ADDED}
    assert [c.name for c in found] == ["engine.models.tiny.TinyForCausalLM"]
    assert not any(c.breaking for c in found)


def test_parameters_removed_renamed_reordered_and_required():
    before = "def sample(logits, temperature, top_p=1.0, *, seed=None, k=0):\n    pass\n"
    after = "def sample(temperature, logits, top_p=1.0, *, rng_seed=None, min_p):\n    pass\n"
    found = {(c.kind, c.name) for c in facts(before, after, module="s")}
    assert found == {
        (K.PARAM_REORDERED, "s.sample"),
        (K.PARAM_RENAMED, "s.sample(rng_seed)"),
        (K.PARAM_REMOVED, "s.sample(k)"),
        (K.PARAM_REQUIRED, "s.sample(min_p)"),
    }
    assert all(c.breaking for c in facts(before, after, module="s"))


def test_a_parameter_removed_before_others_is_that_removal_and_one_inserted_before_them_shifts_them():
    # A fix dropped a stray `cls` from a module-level function: the reason said it removed `cls` and also
    # "reorders the parameters", the same change twice.
    before = "def get_count(cls, device_id: int = 0) -> int:\n    return props(device_id)\n"
    after = "def get_count(device_id: int = 0) -> int:\n    return props(device_id)\n"
    assert {(c.kind, c.name) for c in facts(before, after, module="p")} == {
        (K.PARAM_REMOVED, "p.get_count(cls)")
    }
    inserted = "def get_count(cls, index, device_id: int = 0) -> int:\n    return props(device_id)\n"
    assert {c.kind for c in facts(before, inserted, module="p")} == {K.PARAM_REQUIRED, K.PARAM_REORDERED}
    # one that **kwargs still takes by name breaks only positional callers of those after it: the shift says so
    taken = "def attend(heads, use_mla=False, scale=1.0, **kwargs):\n    pass\n"
    kept = "def attend(heads, scale=1.0, **kwargs):\n    use_mla = kwargs.pop('use_mla', False)\n"
    found = {c.kind: c for c in facts(taken, kept, module="p")}
    assert set(found) == {K.PARAM_REMOVED, K.PARAM_REORDERED} and found[K.PARAM_REMOVED].aliased


def test_a_new_optional_parameter_is_a_feature_and_kwargs_absorbing_an_old_one_is_aliased():
    before = "def run(model, batch=8):\n    pass\n"
    after = "def run(model, *, max_batch=8, **kwargs):\n    if 'batch' in kwargs:\n        max_batch = kwargs.pop('batch')\n"
    found = {c.kind: c for c in facts(before, after, module="r")}
    assert set(found) == {K.PARAM_ADDED, K.PARAM_REMOVED}
    assert found[K.PARAM_ADDED].feature
    assert found[K.PARAM_REMOVED].aliased and not found[K.PARAM_REMOVED].breaking


def test_a_rename_with_an_alias_assignment_is_not_breaking():
    before = "def get_tokenizer(name):\n    return load(name)\n"
    after = "def load_tokenizer(name):\n    return load(name)\n\nget_tokenizer = load_tokenizer  # deprecated alias\n"
    [change] = facts(before, after, module="tok")
    assert change.kind == K.RENAMED and change.aliased and not change.breaking
    assert (change.old, change.new) == ("tok.get_tokenizer", "tok.load_tokenizer")


def test_all_and_underscores_decide_what_is_public():
    before = (
        "__all__ = ['api']\n\ndef api():\n    pass\n\ndef helper():\n    pass\n\ndef _private():\n    pass\n"
    )
    after = "__all__ = ['api']\n\ndef api(x=1):\n    pass\n"
    assert [(c.kind, c.name) for c in facts(before, after, module="p")] == [(K.PARAM_ADDED, "p.api(x)")]
    assert (
        python_surface("p/_impl.py", "def f():\n    pass\n", "", module="p._impl", public=False).changes == []
    )


def test_a_package_init_re_export_removed_is_a_removal():
    before = "from .core import Engine, Request\n"
    after = "from .core import Engine\n"
    [change] = facts(before, after, path="engine/__init__.py", module="engine")
    assert (change.kind, change.name) == (K.REMOVED, "engine.Request")


def test_a_standard_library_name_a_package_init_imports_for_itself_is_no_api():
    # vllm "Separate out vllm.utils.async_utils": `from asyncio import FIRST_COMPLETED, Task` left
    # vllm/utils/__init__.py with the code that used it; "removes vllm.utils.FIRST_COMPLETED" was false.
    before = "from asyncio import FIRST_COMPLETED, Task\nfrom .core import Engine\n\nRUNNING = 1\n"
    after = "from .core import Engine\n\nRUNNING = 1\n"
    assert facts(before, after, path="engine/utils/__init__.py", module="engine.utils") == []
    # listed in __all__, it is the package's own promise
    exported = "__all__ = ['Task']\n" + before
    assert [
        (c.kind, c.name) for c in facts(exported, "__all__ = []\n" + after, path="e/__init__.py", module="e")
    ] == [(K.REMOVED, "e.Task")]


# --- command line, environment, routes ----------------------------------------------------------------


def test_a_cli_option_renamed_removed_and_added():
    before = """
        import argparse
        import click

        def make_parser():
            parser = argparse.ArgumentParser()
            parser.add_argument("--max-model-len", type=int, default=None, help="Context length.")
            parser.add_argument("--legacy-mode", action="store_true")
            return parser

        @click.command()
        @click.option("--port", default=8000)
        def serve(port):
            pass
    """
    after = before.replace("--max-model-len", "--max-context-len").replace(
        '            parser.add_argument("--legacy-mode", action="store_true")\n', ""
    )
    after = after.replace(
        '@click.option("--port", default=8000)',
        '@click.option("--port", default=8000)\n        @click.option("--host", default="127.0.0.1")',
    )
    found = {
        (c.kind, c.name, c.old): c for c in facts(before, after, path="engine/cli.py", module="engine.cli")
    }
    assert set(found) == {
        (K.OPTION_RENAMED, "--max-context-len", "--max-model-len"),
        (K.OPTION_REMOVED, "--legacy-mode", None),
        (K.OPTION_ADDED, "--host", None),
    }
    assert found[(K.OPTION_RENAMED, "--max-context-len", "--max-model-len")].breaking


def test_a_click_command_gaining_an_option_and_its_parameter_is_a_new_option_not_a_required_parameter():
    """A web framework's `dev` command gained `--root-path`: click fills the new `root_path` parameter from
    the option, so nobody's call breaks (it was stated as "makes parameter `dev(root_path)` required")."""
    before = """
        import click

        @click.group()
        def main() -> None:
            pass

        @main.command()
        @click.argument("path", required=False)
        @click.option("--reload/--no-reload", default=True, help="Enable auto-reload.")
        def dev(path, reload: bool) -> None:
            run(path, reload=reload)
    """
    after = before.replace(
        '@click.option("--reload/--no-reload", default=True, help="Enable auto-reload.")',
        '@click.option("--reload/--no-reload", default=True, help="Enable auto-reload.")\n'
        '        @click.option("--root-path", default="", help="The root path behind a proxy.")',
    ).replace("def dev(path, reload: bool)", "def dev(path, reload: bool, root_path: str)")
    found = facts(before, after, path="web/cli.py", module="web.cli")
    assert [(c.kind, c.name) for c in found] == [(K.OPTION_ADDED, "--root-path")]
    assert not any(c.breaking for c in found)


def test_an_option_kept_as_an_alias_is_not_removed():
    before = 'parser.add_argument("--max-model-len", type=int)\n'
    after = 'parser.add_argument("--max-context-len", "--max-model-len", type=int)\n'
    assert facts(before, after, module="cli") == []


def test_typer_options():
    before = "import typer\n\ndef main(name: str = typer.Option('world'), count: int = 1):\n    pass\n"
    after = (
        "import typer\n\ndef main(name: str = typer.Option('world', '--who'), count: int = 1):\n    pass\n"
    )
    found = {(c.kind, c.name) for c in facts(before, after, module="app")}
    assert (K.OPTION_RENAMED, "--who") in found


def test_an_env_var_removed_renamed_and_its_default_changed():
    before = """
        import os

        TIMEOUT = int(os.getenv("APP_TIMEOUT", "30"))
        DEBUG = os.environ.get("APP_DEBUG_LOG")
        CACHE = os.environ["APP_CACHE_DIR"]
        registry = {"APP_WORKERS": lambda: int(os.getenv("APP_WORKERS", "4"))}
    """
    after = before.replace('"APP_TIMEOUT", "30"', '"APP_TIMEOUT", "60"').replace(
        '        DEBUG = os.environ.get("APP_DEBUG_LOG")\n', ""
    )
    found = {(c.kind, c.name) for c in facts(before, after, path="app/envs.py", module="app.envs")}
    # the module constant that held it goes too
    assert found == {
        (K.ENV_REMOVED, "APP_DEBUG_LOG"),
        (K.DEFAULT_CHANGED, "APP_TIMEOUT"),
        (K.REMOVED, "app.envs.DEBUG"),
    }
    renamed = facts(
        before, before.replace("APP_CACHE_DIR", "APP_CACHE_ROOT"), path="app/envs.py", module="app.envs"
    )
    assert [(c.kind, c.old, c.new) for c in renamed] == [(K.ENV_RENAMED, "APP_CACHE_DIR", "APP_CACHE_ROOT")]


def test_an_env_var_still_read_as_a_fallback_is_not_removed():
    before = 'import os\nX = os.getenv("APP_HOME")\n'
    after = 'import os\nX = os.getenv("APP_ROOT") or os.getenv("APP_HOME")\n'
    assert kinds(facts(before, after, module="m")) == [K.ENV_ADDED]


def test_http_routes_added_and_removed_across_frameworks():
    before = """
        from fastapi import APIRouter
        router = APIRouter()

        @router.get("/v1/models")
        async def models():
            return []

        @app.route("/health", methods=["GET", "HEAD"])
        def health():
            return "ok"

        app.router.add_get("/metrics", metrics)
        urlpatterns = [path("admin/", admin_view)]
    """
    after = before.replace('@router.get("/v1/models")', '@router.post("/v1/models")').replace(
        '        app.router.add_get("/metrics", metrics)\n', ""
    )
    found = {(c.kind, c.name) for c in facts(before, after, path="srv/api.py", module="srv.api")}
    assert found == {
        (K.ROUTE_REMOVED, "GET /v1/models"),
        (K.ROUTE_ADDED, "POST /v1/models"),
        (K.ROUTE_REMOVED, "GET /metrics"),
    }
    assert all(c.breaking for c in facts(before, after, module="srv.api") if c.kind == K.ROUTE_REMOVED)


# --- bounds -------------------------------------------------------------------------------------------


def test_a_file_that_does_not_parse_yields_nothing():
    assert python_surface("a.py", "def f(:\n", "def g():\n    pass\n", module="a").changes == []
    assert python_surface("a.py", "def f():\n    pass\n", "def f(\x00):", module="a").changes == []


def test_a_huge_file_is_not_parsed():
    big = "X = 1\n" * (MAX_SOURCE_CHARS // 6 + 1)
    assert python_surface("a.py", None, big, module="a").changes == []


def test_rename_shapes_ignore_names_and_docstrings():
    before = 'def old(a):\n    """Old."""\n    return a * 2\n'
    after = 'def new(a):\n    """New."""\n    return a * 2\n'
    result = python_surface("m.py", before, after, module="m")
    assert result.shapes[(K.REMOVED, "m.old")].text == result.shapes[(K.ADDED, "m.new")].text


def test_a_deprecated_decorator_added_to_an_unchanged_function_is_a_deprecation():
    before = "def old_api(x):\n    return x\n"
    after = "from typing_extensions import deprecated\n\n@deprecated('use new_api')\ndef old_api(x):\n    return x\n"
    assert [(c.kind, c.name, c.new) for c in facts(before, after, module="m")] == [
        (K.DEPRECATION, "m.old_api", "use new_api")
    ]


def test_a_class_newly_exported_is_one_addition_not_one_per_method():
    before = (
        "__all__ = ['Other']\n\nclass Info:\n    def build(self):\n        pass\n\nclass Other:\n    pass\n"
    )
    after = before.replace("['Other']", "['Info', 'Other']")
    assert [(c.kind, c.name) for c in facts(before, after, module="m")] == [(K.ADDED, "m.Info")]


def test_a_method_renamed_with_a_class_level_alias_is_not_breaking():
    before = "class Client:\n    def fetch_all(self):\n        return self.get()\n"
    after = "class Client:\n    def fetch_every(self):\n        return self.get()\n\n    fetch_all = fetch_every\n"
    [change] = facts(before, after, module="c")
    assert (change.kind, change.old, change.new, change.aliased) == (
        K.RENAMED,
        "c.Client.fetch_all",
        "c.Client.fetch_every",
        True,
    )


def test_an_f_string_deprecation_message_keeps_its_holes():
    before = "import warnings\n\ndef load(path):\n    return path\n"
    after = "import warnings\n\ndef load(path):\n    warnings.warn(f'`{path}` uses the old layout', FutureWarning)\n    return path\n"
    [change] = facts(before, after, module="m")
    assert (change.kind, change.new) == (K.DEPRECATION, "`{path}` uses the old layout")


# --- a file saved with a UTF-8 byte-order mark ------------------------------------------------------------

BOM_BEFORE = "\ufeffdef public_api(a, b=1):\n    return a + b\n\n\ndef other(x):\n    return x\n"
BOM_AFTER = "\ufeffdef other(x):\n    return x\n\n\ndef added(y):\n    return y\n"


@pytest.mark.parametrize("bom", [(True, True), (True, False), (False, True)])
def test_a_module_saved_with_a_bom_is_read_as_without_it(bom):
    before = BOM_BEFORE if bom[0] else BOM_BEFORE[1:]
    after = BOM_AFTER if bom[1] else BOM_AFTER[1:]
    found = {(c.kind, c.name, c.line) for c in facts(before, after, path="pkg/api.py", module="pkg.api")}
    assert found == {(K.REMOVED, "pkg.api.public_api", 1), (K.ADDED, "pkg.api.added", 5)}
    # in a batch, where each version is parsed against another version of the file
    relatives = Relatives()
    for text in (BOM_AFTER, before, after):
        batched = python_surface(
            "pkg/api.py", before, after, module="pkg.api", collected=Collected(relatives)
        )
        assert {(c.kind, c.name, c.line) for c in batched.changes} == found
        python_surface("pkg/api.py", text, text, module="pkg.api", collected=Collected(relatives))


def test_typer_options_in_an_annotation_and_spelled_in_letters_the_parser_normalizes():
    """A module is searched for typer options only when its text has the word `Option` or is not ASCII: a
    name spelled in full-width letters is `Option` to the parser, though the text never says so."""
    before = "import typer\nfrom typing import Annotated\n\ndef main(name: Annotated[str, typer.Option('--name')] = 'w'):\n    pass\n"
    after = before.replace("'--name'", "'--who'")
    assert {(c.kind, c.name) for c in facts(before, after, module="app")} == {(K.OPTION_RENAMED, "--who")}
    wide = before.replace("Option", "\uff2fption")  # FULLWIDTH LATIN CAPITAL LETTER O, NFKC: "O"
    assert "Option" not in wide
    wide_after = wide.replace("'--name'", "'--who'")
    assert {(c.kind, c.name) for c in facts(wide, wide_after, module="app")} == {(K.OPTION_RENAMED, "--who")}


def test_a_module_without_typer_options_still_gives_its_other_facts():
    before = "def main(name: str = 'world', count: int = 1):\n    pass\n"
    after = "def main(name: str = 'world'):\n    pass\n"
    assert [(c.kind, c.name) for c in facts(before, after, module="app")] == [
        (K.PARAM_REMOVED, "app.main(count)")
    ]


def test_an_override_dropped_for_the_base_class_implementation_removes_nothing():
    # A subclass stops overriding a method its base (same module) defines: `Fast.load()` still works.
    before = """
        class Loader:
            def load(self, path):
                return open(path).read()

        class _Mixin:
            def close(self):
                pass

        class Fast(Loader, _Mixin):
            def load(self, path):
                return fast_read(path)

            def close(self):
                pass

            def warm(self):
                pass
    """
    after = """
        class Loader:
            def load(self, path):
                return open(path).read()

        class _Mixin:
            def close(self):
                pass

        class Fast(Loader, _Mixin):
            pass
    """
    [change] = facts(before, after)  # `warm` no base defines: removed, breaking
    assert change.kind == K.REMOVED and change.name.endswith("Fast.warm") and change.breaking
    # The base itself losing the method is a removal of both (nothing serves `Fast.load` any more).
    without = after.replace("def load(self, path):\n                return open(path).read()", "pass")
    assert "def load" not in without
    gone = facts(before, without)
    assert {c.name.rsplit(".", 2)[-2] + "." + c.name.rsplit(".", 1)[-1] for c in gone} == {
        "Loader.load", "Fast.load", "Fast.warm",
    }  # fmt: skip


def test_an_environment_variable_and_its_typed_declaration_are_one_fact():
    before = """
        import os
        from typing import TYPE_CHECKING, Any, Callable

        if TYPE_CHECKING:
            APP_ITERATION_TIMEOUT_S: int = 60

        environment_variables: dict[str, Callable[[], Any]] = {
            "APP_ITERATION_TIMEOUT_S": lambda: int(os.environ.get("APP_ITERATION_TIMEOUT_S", "60")),
        }
    """
    after = """
        import os
        from typing import TYPE_CHECKING, Any, Callable

        if TYPE_CHECKING:
            APP_ITERATION_TIMEOUT_S: int = 60
            APP_READY_TIMEOUT_S: int = 600

        environment_variables: dict[str, Callable[[], Any]] = {
            "APP_ITERATION_TIMEOUT_S": lambda: int(os.environ.get("APP_ITERATION_TIMEOUT_S", "60")),
            "APP_READY_TIMEOUT_S": lambda: int(os.environ.get("APP_READY_TIMEOUT_S", "600")),
        }
    """
    changes = facts(before, after, path="app/envs.py", module="app.envs")
    assert [(c.kind, c.name) for c in changes] == [(K.ENV_ADDED, "APP_READY_TIMEOUT_S")]
    gone = facts(after, before, path="app/envs.py", module="app.envs")
    assert [(c.kind, c.name) for c in gone] == [(K.ENV_REMOVED, "APP_READY_TIMEOUT_S")]


def test_a_long_option_renamed_that_keeps_its_short_flag_is_a_rename():
    # `tilec-compile`: `--out-path, -o` became `--out-dir, -o`; the shared `-o` hid the rename
    before = 'parser.add_argument("--out-path", "-o", default=None)\n'
    after = 'parser.add_argument("--out-dir", "-o", default=None)\n'
    found = [(c.kind, c.name, c.old, c.breaking) for c in facts(before, after, module="tools.compile")]
    assert found == [(K.OPTION_RENAMED, "--out-dir", "--out-path", True)]


def test_a_property_become_an_attribute_of_the_same_name_removes_nothing():
    # A read-only view turned into a record's field, or into what the constructor stores on `self`: users
    # read `match.start` and `proc.registry` as before. A method become an attribute still breaks its calls.
    before = """
        class Span:
            _match = None

            @property
            def start(self) -> int:
                return self._match.start

            @property
            def label(self) -> str:
                return self._match.label

        class Processor:
            def __init__(self, registry):
                self.inner = Inner(registry)

            @property
            def registry(self):
                return self.inner.registry

            def limits(self):
                return {}
    """
    after = """
        from typing import NamedTuple

        class Span(NamedTuple):
            start: int

        class Processor:
            limits: dict = {}

            def __init__(self, registry):
                self.registry = registry
                self.inner = Inner(registry)
    """
    assert sorted((c.kind, c.name) for c in facts(before, after, module="kit.spans")) == [
        (K.REMOVED, "kit.spans.Processor.limits"),
        (K.REMOVED, "kit.spans.Span.label"),
    ]


def test_an_init_that_took_nothing_dropped_from_a_surviving_class_removes_nothing():
    # `Registry()` is built the same without it; an `__init__` that took arguments still breaks its callers
    before = """
        class Registry:
            def __init__(self) -> None:
                self._factories = {}

        class Pool:
            def __init__(self, size):
                self.size = size
    """
    after = """
        class Registry:
            _factories: dict = {}

        class Pool:
            size = 4
    """
    assert [(c.kind, c.name) for c in facts(before, after, module="kit.reg")] == [
        (K.REMOVED, "kit.reg.Pool.__init__")
    ]


def test_a_special_methods_positional_parameter_renamed_is_no_breaking_rename():
    # A framework hook is called by position (`cls.__hook__(source, handler)`), Python's protocol methods
    # are not API at all; `__call__` and constructors are called by users, by keyword too.
    before = """
        class Tensorish:
            def __array_function__(self, func, types, args, kwargs):
                return func

            def __eq__(self, other):
                return True

            def __call__(self, data, *, scale=1.0):
                return data

            def __getattr__(self, name):
                return name
    """
    after = (
        before.replace("func, types", "fn, types")
        .replace("return func", "return fn")
        .replace("other", "rhs")
        .replace("data", "inputs")
        .replace("name", "attr")
    )
    assert [(c.kind, c.name, c.old) for c in facts(before, after, module="kit.arr")] == [
        (K.PARAM_RENAMED, "kit.arr.Tensorish.__call__(inputs)", "data")
    ]


# A web framework's application takes `**extra` and keeps it (`self.extra = extra`) or hands it on to a
# base class: a parameter removed from the signature is then taken and ignored (or refused further down),
# not read under its old name. Only a function or class that still names the old key keeps it working.
APP_BEFORE = """
    class App:
        def __init__(self, *, debug=False, redirect_url="/docs/oauth2-redirect", **extra):
            self.debug = debug
            self.redirect_url = redirect_url
            self.extra = extra
"""


@pytest.mark.parametrize(
    "body",
    [
        "self.debug = debug\n            self.extra = extra",  # stored
        "super().__init__(**extra)\n            self.debug = debug",  # passed on
        "self.debug = debug\n            self.settings = dict(extra, mode='fast')",  # merged, other keys read
    ],
)
def test_kwargs_that_only_store_keywords_do_not_alias_a_removed_parameter(body):
    after = f"""
    class App:
        def __init__(self, *, debug=False, **extra):
            {body}
"""
    [change] = facts(APP_BEFORE, after, module="web.app")
    assert change.kind == K.PARAM_REMOVED and change.name == "web.app.App.__init__(redirect_url)"
    assert not change.aliased and change.breaking


@pytest.mark.parametrize(
    "body",
    [
        # the function itself reads the old key, with a warning
        "url = extra.pop('redirect_url', None)\n            if url is not None:\n"
        "                warnings.warn('redirect_url is deprecated', DeprecationWarning)",
        "self.redirect = extra.get('redirect_url')",
        # the class reads it from the stored keywords in another method
        "self.extra = extra\n\n        @property\n        def redirect_url(self):\n"
        "            return self.extra.get('redirect_url', '/docs/oauth2-redirect')",
    ],
)
def test_kwargs_read_under_the_old_name_alias_a_removed_parameter(body):
    after = f"""
    class App:
        def __init__(self, *, debug=False, **extra):
            {body}
"""
    removed = [c for c in facts(APP_BEFORE, after, module="web.app") if c.kind == K.PARAM_REMOVED]
    assert [c.name for c in removed] == ["web.app.App.__init__(redirect_url)"]
    assert removed[0].aliased and not removed[0].breaking


def test_kwargs_of_a_module_level_function_alias_only_a_key_it_reads():
    before = "def render(template, *, autoescape=True, **context):\n    return fill(template, context)\n"
    stored = "def render(template, **context):\n    return fill(template, context)\n"
    read = "def render(template, **context):\n    context.pop('autoescape', None)\n    return fill(template, context)\n"
    [gone] = facts(before, stored, module="web.tpl")
    assert gone.kind == K.PARAM_REMOVED and gone.breaking
    [kept] = facts(before, read, module="web.tpl")
    assert kept.kind == K.PARAM_REMOVED and kept.aliased and not kept.breaking


def test_a_name_imported_as_itself_is_a_reexport_of_any_module():
    # A web framework's `responses.py` re-exports its toolkit's classes the typing way (`import X as X`,
    # PEP 484): removing one breaks `from web.responses import FileResponse`; adding one is a new name.
    before = (
        "from starlette.responses import FileResponse as FileResponse\n"
        "from starlette.responses import Response as Response\n"
        "from starlette.background import BackgroundTask\n"  # imported for its own use: no API
    )
    after = (
        "from starlette.responses import Response as Response\n"
        "from starlette.responses import StreamingResponse as StreamingResponse\n"
    )
    changes = facts(before, after, path="web/responses.py", module="web.responses")
    found = {(c.kind, c.name): c for c in changes}
    assert set(found) == {
        (K.REMOVED, "web.responses.FileResponse"),
        (K.ADDED, "web.responses.StreamingResponse"),
    }
    assert found[K.REMOVED, "web.responses.FileResponse"].breaking
    assert found[K.ADDED, "web.responses.StreamingResponse"].feature


# An inference engine's `get_tokenizer(name, *args, tokenizer_mode="auto", **kwargs)` dropped the parameter
# and hands its keywords to `resolve_args(name, *args, tokenizer_mode="auto", **kwargs)` (through an
# `lru_cache`): `get_tokenizer(name, tokenizer_mode="slow")` works as before.
RESOLVE = (
    "def resolve_args(name, *args, tokenizer_mode='auto', **kwargs):\n    return tokenizer_mode, name\n\n\n"
)
GET_BEFORE = (
    RESOLVE + "def get_tokenizer(name, *args, tokenizer_mode='auto', **kwargs):\n    return load(name)\n"
)


@pytest.mark.parametrize(
    "head, call",
    [
        ("", "resolve_args(name, *args, **kwargs)"),
        ("cached_resolve = lru_cache(resolve_args)\n\n\n", "cached_resolve(name, *args, **kwargs)"),
    ],
)
def test_kwargs_handed_to_a_function_of_the_module_that_takes_the_name_alias_it(head, call):
    after = (
        RESOLVE
        + head
        + f"def get_tokenizer(name, *args, **kwargs):\n    mode, name = {call}\n    return load(name)\n"
    )
    [change] = facts(GET_BEFORE, after, module="eng.tok")
    assert change.kind == K.PARAM_REMOVED and change.aliased and not change.breaking


def test_kwargs_handed_to_a_function_without_the_name_or_unknown_do_not_alias_it():
    before = "def resolve_args(name, **kwargs):\n    return name\n\n\n" + GET_BEFORE.split("\n\n\n")[1]
    after = "def resolve_args(name, **kwargs):\n    return name\n\n\n"
    for call in ("resolve_args(name, **kwargs)", "other_package.resolve(name, **kwargs)"):
        changes = facts(
            before, after + f"def get_tokenizer(name, *args, **kwargs):\n    return {call}\n", module="e"
        )
        assert [(c.kind, c.name, c.breaking) for c in changes] == [
            (K.PARAM_REMOVED, "e.get_tokenizer(tokenizer_mode)", True)
        ]


def test_kwargs_handed_to_a_method_or_a_base_defined_here_that_takes_the_name_alias_it():
    before = (
        "class Base:\n    def __init__(self, debug=False, **extra):\n        self.debug = debug\n\n\n"
        "class App(Base):\n    def __init__(self, routes=None, *, debug=False, **extra):\n"
        "        super().__init__(debug=debug, **extra)\n"
    )
    after = before.replace(", *, debug=False, **extra):\n        super().__init__(debug=debug, **extra)",
                           ", **extra):\n        super().__init__(**extra)")  # fmt: skip
    [change] = facts(before, after, module="web.app")
    assert change.name == "web.app.App.__init__(debug)" and change.aliased


# --- a class turned into a record: its generated constructor ------------------------------------------------

CLASS_WITH_INIT = """
    from typing import List, Optional


    class Requirement:
        def __init__(self, scheme: str, scopes: Optional[List[str]] = None):
            self.scheme = scheme
            self.scopes = scopes
"""


def _as_record(fields: str, decorator: str = "@dataclass\n    ") -> str:
    return f"""
    from dataclasses import dataclass
    from typing import List, Optional


    {decorator}class Requirement:
{fields}
"""


def test_a_class_turned_dataclass_with_the_same_arguments_keeps_its_constructor():
    after = _as_record("        scheme: str\n        scopes: Optional[List[str]] = None")
    assert facts(CLASS_WITH_INIT, after, path="web/models.py", module="web.models") == []


def test_a_dataclass_taking_a_renamed_keyword_loses_the_old_constructor():
    after = _as_record("        scheme: str\n        requirements: Optional[List[str]] = None")
    changes = facts(CLASS_WITH_INIT, after, path="web/models.py", module="web.models")
    assert (K.REMOVED, "web.models.Requirement.__init__") in [(c.kind, c.name) for c in changes]


def test_a_dataclass_reordering_positional_arguments_loses_the_old_constructor():
    after = _as_record("        scopes: Optional[List[str]] = None\n        scheme: str = ''")
    changes = facts(CLASS_WITH_INIT, after, path="web/models.py", module="web.models")
    assert (K.REMOVED, "web.models.Requirement.__init__") in [(c.kind, c.name) for c in changes]


def test_a_plain_class_dropping_its_init_still_loses_it():
    after = _as_record("        scheme: str\n        scopes: Optional[List[str]] = None", decorator="")
    changes = facts(CLASS_WITH_INIT, after, path="web/models.py", module="web.models")
    assert (K.REMOVED, "web.models.Requirement.__init__") in [(c.kind, c.name) for c in changes]


def test_an_abstract_method_added_to_an_existing_class_breaks_its_subclasses():
    # a web framework's session backend base gained `get_session_id`, which its own backends implement and
    # which only raises NotImplementedError in the base: every backend users wrote must now implement it
    before = "class Backend:\n    def load(self, c):\n        return c\n"
    after = before + (
        '\n    def get_session_id(self, c):\n        """Its id."""\n        raise NotImplementedError\n'
        "\n    def helper(self, c):\n        return c\n"
        "\n    @abc.abstractmethod\n    def store(self, c): ...\n"
        "\n    def _private(self):\n        raise NotImplementedError()\n"
        "\n\nclass New:\n    def run(self):\n        raise NotImplementedError\n"
    )
    found = python_surface("kit/session/base.py", before, after, module="kit.session.base").changes
    assert {(c.kind, c.name) for c in found} == {
        (K.ABSTRACT_ADDED, "kit.session.base.Backend.get_session_id"),
        (K.ABSTRACT_ADDED, "kit.session.base.Backend.store"),
        (K.ADDED, "kit.session.base.Backend.helper"),
        (K.ADDED, "kit.session.base.New"),  # a new class (its methods with it): no subclass of it exists yet
    }
    assert all(c.breaking for c in found if c.kind == K.ABSTRACT_ADDED)
    assert "subclasses must implement it" in describe(next(c for c in found if c.kind == K.ABSTRACT_ADDED))
