"""A commit's files taken together (analysis/surface/pairing.py): a definition moved to another module of its
package and imported back, or re-exported from the package as before, is neither removed nor new."""

from __future__ import annotations

from analysis.models import SurfaceKind as K
from analysis.surface.commit import FileVersions, commit_surface

# A web framework's refactor: helpers moved out of `dependencies/utils.py` into another module, the old module
# importing them back so that `from web.dependencies.utils import get_typed_signature` keeps working.
UTILS_BEFORE = """import inspect


def get_typed_signature(call):
    return inspect.signature(call)


def get_dependant(*, path, call):
    return (path, get_typed_signature(call))
"""
UTILS_AFTER = """from ..signatures import get_typed_signature


def get_dependant(*, path, call):
    return (path, get_typed_signature(call))
"""
SIGNATURES = """import inspect


def get_typed_signature(call):
    globalns = getattr(call, "__globals__", {})
    return inspect.signature(call, globals=globalns)
"""


def found(*files: FileVersions) -> set[tuple[K, str]]:
    return {(c.kind, c.name) for c in commit_surface(list(files), None, None)}


def test_a_function_moved_and_imported_back_is_neither_removed_nor_new():
    assert (
        found(
            FileVersions("web/dependencies/utils.py", UTILS_BEFORE, UTILS_AFTER),
            FileVersions("web/signatures.py", None, SIGNATURES),
        )
        == set()
    )
    # an absolute import back is the same move; a private module's definition is no new name either way
    absolute = UTILS_AFTER.replace("from ..signatures", "from web._signatures")
    assert (
        found(
            FileVersions("web/dependencies/utils.py", UTILS_BEFORE, absolute),
            FileVersions("web/_signatures.py", None, SIGNATURES),
        )
        == set()
    )


def test_a_function_moved_without_the_import_back_is_still_removed_and_one_from_elsewhere_still_said():
    without = UTILS_AFTER.replace("from ..signatures import get_typed_signature\n", "")
    changes = found(
        FileVersions("web/dependencies/utils.py", UTILS_BEFORE, without),
        FileVersions("web/signatures.py", None, SIGNATURES),
    )
    assert (K.REMOVED, "web.dependencies.utils.get_typed_signature") in changes
    assert (K.ADDED, "web.signatures.get_typed_signature") in changes
    # replaced by another distribution's function of the same name: not a move within the package
    other = UTILS_AFTER.replace("from ..signatures", "from sigtools")
    changes = found(FileVersions("web/dependencies/utils.py", UTILS_BEFORE, other))
    assert {k for k, n in changes if n == "web.dependencies.utils.get_typed_signature"} == {K.REMOVED}


def test_a_class_moved_with_the_package_reexport_repointed_is_neither_removed_nor_new():
    # `Default` moved from `web/datastructures.py` to `web/defaults.py`; the package's __init__, which
    # exported it from the old module, now exports it from the new one
    old_module = "class Default:\n    def __init__(self, value):\n        self.value = value\n\n\nclass Upload:\n    pass\n"
    new_module = "class Upload:\n    pass\n"
    moved = "class Default:\n    def __init__(self, value):\n        self.value = value\n\n    def __bool__(self):\n        return bool(self.value)\n"
    init_before = "from .datastructures import Default as Default, Upload as Upload\n"
    init_after = "from .datastructures import Upload as Upload\nfrom .defaults import Default as Default\n"
    assert (
        found(
            FileVersions("web/__init__.py", init_before, init_after),
            FileVersions("web/datastructures.py", old_module, new_module),
            FileVersions("web/defaults.py", None, moved),
        )
        == set()
    )
    # a package that newly exports a name moved away from the only module users had it from: still removed
    assert (K.REMOVED, "web.datastructures.Default") in found(
        FileVersions("web/__init__.py", "", "from .defaults import Default as Default\n"),
        FileVersions("web/datastructures.py", old_module, new_module),
        FileVersions("web/defaults.py", None, moved),
    )


def test_a_sibling_module_that_follows_the_move_for_its_own_use_reexports_nothing():
    # "Reorganize gguf utils under transformers_utils": the helpers left `utils.py` for `gguf_utils.py` and
    # `config.py` now imports them from there for its own use; `from pkg.utils import check_file` breaks
    utils_before = "def check_file(model):\n    return model.endswith('.gguf')\n\n\ndef other():\n    pass\n"
    utils_after = "def other():\n    pass\n"
    gguf = "def check_file(model):\n    return model.endswith('.gguf')\n"
    config_before = "from .utils import check_file\n\n\ndef load(model):\n    return check_file(model)\n"
    config_after = config_before.replace("from .utils", "from .gguf_utils")
    changes = commit_surface(
        [
            FileVersions("pkg/utils.py", utils_before, utils_after),
            FileVersions("pkg/gguf_utils.py", None, gguf),
            FileVersions("pkg/config.py", config_before, config_after),
        ],
        None,
        None,
    )
    assert [(c.kind, c.old, c.new, c.aliased) for c in changes] == [
        (K.RENAMED, "pkg.utils.check_file", "pkg.gguf_utils.check_file", False)
    ]


def test_a_function_imported_back_through_its_package_that_now_exports_it_is_not_new():
    # "Unify tokenizer registration": `get_tokenizer` left `utils/tokenizer.py` for `tokenizers/registry.py`;
    # the old module imports it back from the package, whose __init__ now imports it from the registry
    old_before = "def get_tokenizer(name):\n    return name\n\n\ndef other():\n    pass\n"
    old_after = "from pkg.tokenizers import get_tokenizer\n\n\ndef other():\n    pass\n"
    registry = "class TokenizerRegistry:\n    pass\n\n\ndef get_tokenizer(name):\n    return name.lower()\n"
    init_before = "from .registry import TokenizerRegistry\n"
    init_after = "from .registry import TokenizerRegistry, get_tokenizer\n"
    changes = {
        (c.kind, c.name)
        for c in commit_surface(
            [
                FileVersions("pkg/utils/tokenizer.py", old_before, old_after),
                FileVersions("pkg/tokenizers/__init__.py", init_before, init_after),
                FileVersions("pkg/tokenizers/registry.py", "class TokenizerRegistry:\n    pass\n", registry),
            ],
            None,
            None,
        )
    }
    assert not {n for _, n in changes if n.endswith("get_tokenizer")}, changes
