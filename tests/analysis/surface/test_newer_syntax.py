"""Python written for a newer interpreter than ours (3.12 type parameters and aliases, 3.14 `except A, B:`)
keeps its surface facts: a public function removed from such a module was "no user-facing change found"."""

from __future__ import annotations

import ast
from textwrap import dedent

import pytest

from analysis.models import SurfaceKind as K
from analysis.surface.newer_syntax import downlevel
from analysis.surface.python import python_surface
from analysis.surface.shared_parse import parse

GENERIC_MODULE = dedent(
    """\
    from typing import Protocol

    type Pair[T] = tuple[T, T]


    def load(path: str) -> bytes:
        return b""


    def first[T: (int, str) = int](items: list[T], *, strict: bool = False) -> T:
        return items[0]


    class Registry[K, V](Protocol[K]):
        size: int = 8

        async def get[D](self, key: K, default: D | None = None) -> V | D:
            try:
                return self.items[key]
            except KeyError, IndexError:
                return default
    """
)


def test_the_rewrite_keeps_every_line_where_it_was_and_parses():
    older = downlevel(GENERIC_MODULE)
    assert older.count("\n") == GENERIC_MODULE.count("\n")
    tree = ast.parse(older)
    names = {
        n.name: n.lineno for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    assert names == {"load": 6, "first": 10, "get": 17}
    assert "def first" in older.splitlines()[9] and "(items: list[T], *, strict: bool = False)" in older
    assert older.splitlines()[2] == "Pair         = tuple[T, T]"  # the "=" keeps its column
    assert "except (KeyError, IndexError):" in older


def test_a_public_function_removed_from_a_module_in_newer_syntax_is_found():
    after = GENERIC_MODULE.replace('def load(path: str) -> bytes:\n    return b""\n', "")
    changes = python_surface("pkg/api.py", GENERIC_MODULE, after, module="pkg.api").changes
    assert [(c.kind, c.name, c.breaking) for c in changes] == [(K.REMOVED, "pkg.api.load", True)]


def test_a_changed_default_of_a_generic_function_is_found():
    after = GENERIC_MODULE.replace("strict: bool = False", "strict: bool = True")
    changes = python_surface("pkg/api.py", GENERIC_MODULE, after, module="pkg.api").changes
    found = {(c.name, c.old, c.new) for c in changes}
    assert ("pkg.api.first(strict)", "False", "True") in found


@pytest.mark.parametrize(
    "text",
    [
        "type = 1\nprint(type(x))\n",  # `type` as a plain name
        "x = a[1]\ndef f(a=[1]):\n    return a[0]\n",  # brackets that are no type parameters
        "try:\n    pass\nexcept (A, B) as e:\n    pass\n",
    ],
)
def test_a_text_the_interpreter_reads_is_parsed_as_it_is(text):
    assert downlevel(text) == text
    assert ast.dump(parse(text)) == ast.dump(ast.parse(text))


def test_what_the_rewrite_does_not_cover_still_fails_as_before():
    over_lines = "def f[\n    T,\n](x: T) -> T:\n    return x\n"
    with pytest.raises(SyntaxError):
        parse(over_lines)
    with pytest.raises(SyntaxError):
        parse("def f(:\n    pass\n")
