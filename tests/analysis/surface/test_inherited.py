"""Member removals a class still inherits (analysis/surface/inherited.py): the same file's bases settle at
once; a base imported from another module of the repository becomes a query whose module the caller reads."""

from __future__ import annotations

import ast

import analysis.surface.inherited as inherited_module
from analysis.models import SurfaceChange
from analysis.models import SurfaceKind as K
from analysis.surface.blanked_bodies import Relatives
from analysis.surface.inherited import BaseRef, lookup, queries, without_inherited
from analysis.surface.python import Collected, python_surface

TREE = frozenset(
    {"src/kit/__init__.py", "src/kit/layers/base.py", "src/kit/layers/__init__.py", "src/kit/layers/impl.py"}
    | {"src/kit/layers/linear.py", "src/kit/config.py"}
)


def removed(name: str, path: str = "src/kit/layers/linear.py", kind: K = K.REMOVED) -> SurfaceChange:
    return SurfaceChange(kind, name, path, 3)


def test_an_override_dropped_whose_base_is_in_the_same_file_settles_at_once():
    # a field the subclass re-declared and the base still declares: the record still has it
    text = (
        "from dataclasses import dataclass\n\n@dataclass\nclass BaseOptions:\n    seed: int = 0\n\n"
        "@dataclass\nclass RunOptions(BaseOptions):\n    steps: int = 1\n"
    )
    fact = removed("kit.run.RunOptions.seed", "src/kit/run.py", K.FIELD_REMOVED)
    gone = removed("kit.run.RunOptions.workers", "src/kit/run.py", K.FIELD_REMOVED)
    inherited, asked = queries([fact, gone], {"src/kit/run.py": text}, None)
    assert without_inherited([fact, gone], inherited) == (gone,) and asked == []


def test_a_base_imported_from_a_module_of_the_repository_becomes_a_query():
    # `from .base import LinearBase` and `from kit.layers import impl` then `impl.Mixin`: both modules are
    # the repository's (relative, and absolute under the file's own top package); torch's is not
    text = (
        "import torch\nfrom torch import nn\nfrom .base import LinearBase\nfrom kit.layers import impl\n\n"
        "class ColumnLinear(LinearBase, impl.Mixin, nn.Module):\n    def forward(self, x):\n        return x\n"
    )
    fact = removed("kit.layers.linear.ColumnLinear.weight_loader")
    inherited, [query] = queries([fact], {fact.path: text}, TREE)
    assert inherited == set() and query.member == "weight_loader" and query.change is fact
    assert query.bases == (
        BaseRef(("src/kit/layers/base.py",), "LinearBase"),
        BaseRef(("src/kit/layers/impl.py",), "Mixin"),
    )
    # `import kit.layers.base as lb` then `lb.LinearBase`
    aliased = "import kit.layers.base as lb\n\nclass ColumnLinear(lb.LinearBase):\n    pass\n"
    _, [via_alias] = queries([fact], {fact.path: aliased}, TREE)
    assert via_alias.bases == (BaseRef(("src/kit/layers/base.py",), "LinearBase"),)
    # without the tree every place the module may be is a candidate
    _, [unknown] = queries([fact], {fact.path: text}, None)
    assert unknown.bases[0].paths == ("src/kit/layers/base.py", "src/kit/layers/base/__init__.py")


def test_removals_of_anything_else_ask_nothing():
    text = "from .base import LinearBase\n\nclass ColumnLinear(LinearBase):\n    pass\n"
    facts = [
        removed("kit.layers.linear.helper"),  # a module-level function
        removed("kit.layers.linear.GoneClass.method"),  # a class that is no more
        SurfaceChange(
            K.PARAM_REMOVED, "kit.layers.linear.ColumnLinear.forward(x)", "src/kit/layers/linear.py"
        ),
    ]
    assert queries(facts, {"src/kit/layers/linear.py": text}, TREE) == (set(), [])
    # a class whose bases are all another distribution's: nothing to read
    foreign = "from torch import nn\n\nclass ColumnLinear(nn.Module):\n    pass\n"
    assert queries([removed("kit.layers.linear.ColumnLinear.forward")], {"src/kit/layers/linear.py": foreign},
                   TREE) == (set(), [])  # fmt: skip


def test_lookup_answers_from_the_class_its_local_bases_or_the_next_module():
    base = (
        "from typing import Generic, TypeVar\nfrom kit.config import Configurable\nT = TypeVar('T')\n\n"
        "class _Loader:\n    def weight_loader(self, param):\n        pass\n\n"
        "class LinearBase(_Loader, Configurable, Generic[T]):\n    bias: bool = False\n"
        "    if True:\n        quant_method = None\n"
    )
    path = "src/kit/layers/base.py"
    assert lookup(base, path, "LinearBase", "weight_loader", TREE) is True  # from a base of the same module
    assert lookup(base, path, "LinearBase", "bias", TREE) is True
    assert lookup(base, path, "LinearBase", "quant_method", TREE) is True
    assert lookup(base, path, "LinearBase", "forward", TREE) == (
        BaseRef(("src/kit/config.py",), "Configurable"),
    )
    assert lookup(base, path, "Missing", "forward", TREE) == ()
    # a package's __init__ re-exporting the class sends the search to where it is defined
    init = "from .impl import Mixin as Mixin\n"
    assert lookup(init, "src/kit/layers/__init__.py", "Mixin", "forward", TREE) == (
        BaseRef(("src/kit/layers/impl.py",), "Mixin"),
    )
    assert lookup("def broken(:\n", path, "LinearBase", "bias", TREE) == ()
    cache: dict = {}
    assert lookup(base, path, "LinearBase", "bias", TREE, cache) is True
    assert lookup(base, path, "LinearBase", "bias", TREE, cache) is True and len(cache) == 1


def test_a_tree_parsed_already_is_read_instead_of_parsing_again(monkeypatch):
    text = "class Base:\n    def run(self):\n        pass\n\nclass Job(Base):\n    pass\n"
    fact = removed("kit.run.Job.run", "src/kit/run.py")
    parsed_once = ast.parse(text)

    def no_parse(text: str) -> ast.Module:
        raise AssertionError("parsed again")

    monkeypatch.setattr(inherited_module, "parse_python", no_parse)
    inherited, asked = queries([fact], {fact.path: text}, None, {text: parsed_once}.get)
    assert inherited == {id(fact)} and asked == []


def test_a_version_after_keeps_its_tree_for_the_lookups_of_its_commit():
    before = "class Base:\n    def run(self):\n        return 1\n\nclass Job(Base):\n    def run(self):\n        return 2\n"
    after = before.replace("    def run(self):\n        return 2\n", "    pass\n")
    collected = Collected(Relatives())
    python_surface("src/kit/run.py", before, after, module="kit.run", collected=collected)
    tree = collected.tree_after(after)
    assert tree is not None and [n.name for n in tree.body] == ["Base", "Job"]  # type: ignore[attr-defined]
    assert collected.tree_after("".join(after)) is None  # another text object: unknown
    with_bom = "\ufeff" + after
    python_surface("src/kit/run.py", before, with_bom, module="kit.run", collected=collected)
    assert collected.tree_after(with_bom) is None  # ast.parse refuses the mark: not the same answer
