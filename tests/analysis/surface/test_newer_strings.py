"""3.12 f-strings (their own quote inside a field, a backslash, a comment, a field over lines) and 3.14 template
strings do not parse on our 3.11: a module holding one lost every surface fact."""

from __future__ import annotations

import ast
from textwrap import dedent

import pytest

from analysis.models import SurfaceKind as K
from analysis.surface.newer_strings import flatten_fstrings
from analysis.surface.python import python_surface

MODULE = dedent(
    """\
    import os


    def label(row: dict) -> str:
        return f"{row["name"]} ({row['kind']})"


    def path(parts: list[str], sep: str = "/") -> str:
        return f"{"\\n".join(parts)}{sep}"


    def report(items) -> str:
        return f"total: {
            sum(items)  # every item
        } items"


    def greet(name):
        return t"hello {name}"


    class Config:
        level: int = 1
        tag: str = "it's f\\"{not a field}\\""
    """
)


def test_every_definition_keeps_its_line_once_the_strings_are_blanked():
    with pytest.raises(SyntaxError):
        ast.parse(MODULE)  # on the 3.11 we run on
    flat = flatten_fstrings(MODULE)
    assert flat.count("\n") == MODULE.count("\n") and len(flat) == len(MODULE)
    tree = ast.parse(flat)
    defs = {n.name: n.lineno for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    assert defs == {"label": 4, "path": 8, "report": 12, "greet": 18, "Config": 22}
    assert 'tag: str = "it\'s f\\"{not a field}\\""' in flat  # a plain string is left as it is


def test_a_public_function_removed_from_a_module_with_312_fstrings_is_found():
    after = MODULE.replace('def greet(name):\n    return t"hello {name}"\n', "")
    changes = python_surface("pkg/fmt.py", MODULE, after, module="pkg.fmt").changes
    assert [(c.kind, c.name, c.breaking) for c in changes] == [(K.REMOVED, "pkg.fmt.greet", True)]


def test_a_changed_default_next_to_them_is_found():
    after = MODULE.replace('sep: str = "/"', 'sep: str = "\\\\"')
    changes = python_surface("pkg/fmt.py", MODULE, after, module="pkg.fmt").changes
    assert [(c.kind, c.name) for c in changes] == [(K.DEFAULT_CHANGED, "pkg.fmt.path(sep)")]


@pytest.mark.parametrize(
    "text",
    [
        "x = 1\n",
        "s = 'say f\"hi\"' + \"it's\"  # f'not code'\n",
        "s = f'{a!r:>{width}}' + rf'\\d{{2}}'\n",  # an f-string 3.11 reads is blanked all the same
    ],
)
def test_texts_3_11_reads_parse_the_same_after(text):
    flat = flatten_fstrings(text)
    assert len(flat) == len(text)
    assert [type(n) for n in ast.walk(ast.parse(flat))][:2] == [type(n) for n in ast.walk(ast.parse(text))][
        :2
    ]


def test_an_unclosed_literal_leaves_the_text_as_it_is():
    broken = 'x = f"{a["b"]}\ny = 2\n'
    assert flatten_fstrings(broken) == broken
