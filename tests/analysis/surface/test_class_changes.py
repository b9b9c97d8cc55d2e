"""A public class's own statement and a module's aliases (analysis/surface/class_changes.py and the Python
surface that uses it), from the shapes of a web framework's history: a deprecated alias removed at last, a
response class's media type changed, an exception moved under another base."""

from __future__ import annotations

from textwrap import dedent

from analysis.models import SurfaceKind as K
from analysis.surface.python import python_surface


def facts(before: str, after: str, *, path: str = "quill/encoders.py", module: str = "quill.encoders"):
    return python_surface(path, dedent(before), dedent(after), module=module).changes


ENCODERS = """
    from typing import Any


    def jsonable_encoder(obj: Any) -> Any:
        return obj


    # Deprecated alias kept for code written against 0.30.
    pydantic_encoder = jsonable_encoder
"""


def test_a_deprecated_alias_removed_at_last_breaks_its_importers():
    after = ENCODERS.replace(
        "\n    # Deprecated alias kept for code written against 0.30.\n    pydantic_encoder = jsonable_encoder\n",
        "\n",
    )
    [change] = facts(ENCODERS, after)
    assert (change.kind, change.name) == (K.REMOVED, "quill.encoders.pydantic_encoder")
    assert change.breaking and not change.aliased


def test_an_alias_to_a_name_imported_from_the_package_counts_too():
    before = "from .responses import JSONResponse\n\nORJSONResponse = JSONResponse\n"
    [change] = facts(before, "from .responses import JSONResponse\n")
    assert (change.kind, change.name) == (K.REMOVED, "quill.encoders.ORJSONResponse")


def test_placeholders_and_type_shorthands_are_no_alias_users_import():
    # vllm's shapes: `X = Any` / `X = object` under `if TYPE_CHECKING: ... else:`, `EngineId = str`
    before = """
        from typing import TYPE_CHECKING, Any

        if TYPE_CHECKING:
            from pkg.config import ModelConfig
            from pkg.tokenizer import AnyTokenizer
        else:
            ModelConfig = object
            AnyTokenizer = Any

        EngineId = str


        def run(config: "ModelConfig") -> None:
            pass
    """
    after = """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from pkg.config import ModelConfig


        def run(config: "ModelConfig") -> None:
            pass
    """
    assert facts(before, after) == []


def test_an_alias_renamed_to_a_definition_is_no_removal():
    after = ENCODERS.replace(
        "pydantic_encoder = jsonable_encoder", "def pydantic_encoder(obj: Any) -> Any:\n    return obj"
    )
    assert [c for c in facts(ENCODERS, after) if c.kind == K.REMOVED] == []


RESPONSES = """
    from enum import Enum


    class JSONResponse:
        media_type = "application/json"
        charset = "utf-8"


    class JSONAPIResponse(JSONResponse):
        media_type = "application/json"


    class Backend(Enum):
        MARLIN = 5
        TRITON = 6


    class _Private:
        media_type = "text/plain"
"""


def test_a_response_class_media_type_changed_is_a_changed_default():
    after = RESPONSES.replace(
        'class JSONAPIResponse(JSONResponse):\n        media_type = "application/json"',
        'class JSONAPIResponse(JSONResponse):\n        media_type = "application/vnd.api+json"',
    )
    [change] = facts(RESPONSES, after, path="quill/responses.py", module="quill.responses")
    assert (change.kind, change.name) == (K.DEFAULT_CHANGED, "quill.responses.JSONAPIResponse.media_type")
    assert (change.old, change.new) == ("'application/json'", "'application/vnd.api+json'")
    assert change.behaviour and not change.breaking


def test_an_enum_member_renumbered_or_a_private_class_literal_is_no_default():
    # vllm: a member removed from an IntEnum renumbers the next ones; users compare members, not numbers
    after = RESPONSES.replace("MARLIN = 5\n        TRITON = 6", "TRITON = 5").replace(
        '"text/plain"', '"text/html"'
    )
    changes = facts(RESPONSES, after, path="quill/responses.py", module="quill.responses")
    assert [c for c in changes if c.kind == K.DEFAULT_CHANGED] == []


EXCEPTIONS = """
    class HTTPException(Exception):
        def __init__(self, status_code: int) -> None:
            self.status_code = status_code


    class WebSocketException(Exception):
        def __init__(self, code: int) -> None:
            self.code = code


    class Router(BaseRouter):
        pass
"""


def test_an_exception_moved_under_another_base_changes_which_handlers_catch_it():
    after = EXCEPTIONS.replace(
        "class WebSocketException(Exception)", "class WebSocketException(HTTPException)"
    )
    [change] = facts(EXCEPTIONS, after, path="quill/exceptions.py", module="quill.exceptions")
    assert (change.kind, change.name) == (K.BASES_CHANGED, "quill.exceptions.WebSocketException")
    assert (change.old, change.new) == ("Exception", "HTTPException")
    assert change.behaviour and not change.breaking


def test_pydantic_user_error_made_a_runtime_error_is_a_changed_base():
    # pydantic #12579: `PydanticUserError` a `RuntimeError` instead of a `TypeError`
    before = "class PydanticErrorMixin:\n    pass\n\n\nclass PydanticUserError(PydanticErrorMixin, TypeError):\n    pass\n"
    after = before.replace("TypeError", "RuntimeError")
    [change] = facts(before, after, path="pydantic/errors.py", module="pydantic.errors")
    assert change.kind == K.BASES_CHANGED
    assert (change.old, change.new) == ("PydanticErrorMixin, TypeError", "PydanticErrorMixin, RuntimeError")


def test_a_mixin_added_or_an_implementation_class_rebased_is_no_change_of_bases():
    after = EXCEPTIONS.replace(
        "class WebSocketException(Exception)", "class WebSocketException(Exception, ReprMixin)"
    ).replace("class Router(BaseRouter)", "class Router(CachedRouter)")
    assert facts(EXCEPTIONS, after, path="quill/exceptions.py", module="quill.exceptions") == []


def test_an_alias_widened_to_a_union_is_still_assigned():
    # vllm #28483's shape: `X = A` became `X: TypeAlias = A | B`
    before = "class A:\n    pass\n\n\nclass B:\n    pass\n\n\nInputs = A\n"
    after = "from typing import TypeAlias\n\n\nclass A:\n    pass\n\n\nclass B:\n    pass\n\n\nInputs: TypeAlias = A | B\n"
    assert [c for c in facts(before, after) if c.kind == K.REMOVED] == []
