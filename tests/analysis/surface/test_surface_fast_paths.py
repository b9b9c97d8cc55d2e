"""The surface step's fast paths (issue 21) find exactly what the full walks find: the calls walk that skips
nested statements without a word it needs, and the raises/guards walk that visits statements only. Each is
compared with the full walk on real-shaped code: a module with the facts buried in nested blocks, and every
Python module of this project."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path
from textwrap import dedent

import pytest

from analysis.models import SurfaceKind as K
from analysis.surface import python as surface_python
from analysis.surface import python_nodes as surface_nodes

ROOT = Path(__file__).resolve().parents[3]
REAL_MODULES = sorted(p for top in ("analysis", "bot", "adapters") for p in (ROOT / top).rglob("*.py"))

BEFORE = """
    import os
    import warnings

    from fastapi import APIRouter

    router = APIRouter()


    class Engine:
        def start(self, mode: str, workers: int = 1):
            if mode == "fast":
                for attempt in range(3):
                    try:
                        limit = int(os.getenv("ENGINE_LIMIT", "8"))
                    except ValueError:
                        limit = 8
            match mode:
                case "legacy":
                    raise NotImplementedError("legacy mode is not supported")
                case _:
                    pass
            if not self.enable_cache:
                return None
            return limit

        def stop(self):
            return [lambda: os.environ.get("ENGINE_STOP")]


    def configure(parser):
        if parser:
            with open(os.devnull) as sink:
                parser.add_argument("--engine-mode", default="fast")
        return parser
"""

AFTER = """
    import os
    import warnings

    from fastapi import APIRouter

    router = APIRouter()


    class Engine:
        def start(self, mode: str, workers: int = 1):
            if mode == "fast":
                for attempt in range(3):
                    try:
                        limit = int(os.getenv("ENGINE_LIMIT", "16"))
                        budget = os.environ["ENGINE_BUDGET"]
                    except ValueError:
                        warnings.warn("ENGINE_LIMIT as text is deprecated", DeprecationWarning)
                        limit = 8
            match mode:
                case "legacy":
                    pass
                case _:
                    if workers > 4:
                        raise RuntimeError("too many workers")
            return limit

        def stop(self):
            return [lambda: os.environ.get("ENGINE_STOP")]


    def configure(parser):
        if parser:
            with open(os.devnull) as sink:
                parser.add_argument("--engine-mode", default="fast")
                parser.add_argument("--engine-workers", type=int, default=1)
        return parser
"""


def _full_walk(node: ast.AST) -> Iterable[ast.AST]:
    """The walk before the fast path: every node of a function's own body."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        n = stack.pop()
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        yield n
        stack.extend(ast.iter_child_nodes(n))


def _calls_found(text: str) -> list:
    module = surface_python._parse(text)
    assert module is not None

    def dump(node: ast.AST | None) -> str | None:
        return surface_nodes._dump(node) if node is not None else None

    return [
        [(key, line, dump(default)) for key, (line, default) in module.envs.items()],
        [(o.key, o.names, o.line, dump(o.default), o.shape, o.deprecated) for o in module.options.values()],
        list(module.routes.items()),
        list(module.deprecations.items()),
        list(module.switches.items()),
    ]


def _exits_found(text: str) -> list:
    tree = ast.parse(text)
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    return [(f.name, f.lineno, *([*found.items()] for found in surface_nodes._exits(f))) for f in functions]


def _facts(before: str, after: str) -> list:
    return surface_python.python_surface(
        "engine/core.py", dedent(before), dedent(after), module="engine.core"
    ).changes


def test_facts_in_nested_blocks_are_the_same_with_and_without_the_fast_paths(monkeypatch):
    fast = _facts(BEFORE, AFTER)
    assert {(c.kind, c.name) for c in fast} >= {
        (K.ENV_ADDED, "ENGINE_BUDGET"),
        (K.DEFAULT_CHANGED, "ENGINE_LIMIT"),
        (K.DEPRECATION, "engine.core.Engine.start"),
        (K.RAISES, "engine.core.Engine.start"),
        (K.SWITCH_FLIPPED, "engine.core.Engine.start"),
        (K.OPTION_ADDED, "--engine-workers"),
    }
    monkeypatch.setattr(surface_python, "_NESTED_CALL_WORDS", re.compile(""))
    monkeypatch.setattr(surface_nodes, "_own_statements", _full_walk)
    assert _facts(BEFORE, AFTER) == fast


@pytest.mark.parametrize("path", REAL_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_real_modules_give_the_same_calls_and_exits_with_and_without_the_fast_paths(path, monkeypatch):
    text = path.read_text(encoding="utf-8")
    fast = (_calls_found(text), _exits_found(text))
    monkeypatch.setattr(surface_python, "_NESTED_CALL_WORDS", re.compile(""))
    monkeypatch.setattr(surface_nodes, "_own_statements", _full_walk)
    assert (_calls_found(text), _exits_found(text)) == fast


def test_the_real_modules_exercise_both_walks():
    """The comparison above means something: this project's modules read environment variables, add options
    and raise refusals from nested blocks."""
    texts = [p.read_text(encoding="utf-8") for p in REAL_MODULES]
    found = [(_calls_found(text), _exits_found(text)) for text in texts]
    assert sum(len(calls[0]) for calls, _ in found) >= 5
    assert sum(len(calls[1]) for calls, _ in found) >= 5
    assert sum(1 for _, exits in found for f in exits if f[2]) >= 20


def _calls_by_statement_text(self: surface_python._Collector, tree: ast.Module) -> None:
    """The calls walk before the line index: each statement's text joined and searched, at every depth, and
    every child node visited (ast.iter_child_nodes)."""
    stack: list[tuple[ast.AST, str]] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            for inner in stmt.body:
                if surface_python._CALL_WORDS.search(self._source(inner)):
                    self._node(inner, stmt.name)
                    stack.append((inner, surface_nodes._scoped(stmt.name, inner)))
            for deco in stmt.decorator_list:
                stack.append((deco, ""))
        elif surface_python._CALL_WORDS.search(self._source(stmt)):
            self._node(stmt, "")
            stack.append((stmt, surface_nodes._scoped("", stmt)))
    while stack:
        parent, scope = stack.pop()
        for node in ast.iter_child_nodes(parent):
            if isinstance(node, ast.stmt) and not surface_python._NESTED_CALL_WORDS.search(
                self._source(node)
            ):
                continue
            stack.append((node, surface_nodes._scoped(scope, node)))
            self._node(node, scope)


# Line breaks str.splitlines knows and the parser does not (a form feed, U+2028 in a string), "\r\n", and
# the characters a case-insensitive search matches to ASCII letters (ſ for s, K for k, İ and ı for i).
ODD_LINES = [
    'import os\r\n\r\ndef f():\r\n    return os.getenv("APP_MODE")\r\n',
    'import os\ndef f():\n    if 1:\n        return os.environ["APP_ONE"]\n\x0c\ndef g():\n    return os.getenv("APP_G")\n',
    'import os\nclass C:\n    def f(self):\n        if 1:\n            return os.getenv("APP_TWO")\ns = "\u2028"\n',
    "import os\nclass C:\n    def f(self):\n        if 1:\n            y = 'urlpatternſ ENV \u212a'\n"
    '            return os.environ.get("APP_THREE")\n',
    "import warnings\ndef g():\n    if 1:\n        warnings.warn('İt is deprecated', DeprecationWarning)\n",
    'import os\ndef h():\n    if 1:\n        return os.getenv("APP_LAST")',  # no final newline
]


@pytest.mark.parametrize("text", [dedent(BEFORE), dedent(AFTER), *ODD_LINES])
def test_the_line_index_finds_what_searching_each_statement_found(text, monkeypatch):
    fast = _calls_found(text)
    assert any(fast)
    monkeypatch.setattr(surface_python._Collector, "_calls", _calls_by_statement_text)
    assert _calls_found(text) == fast


@pytest.mark.parametrize("path", REAL_MODULES[::4], ids=lambda p: str(p.relative_to(ROOT)))
def test_real_modules_give_the_same_calls_with_the_line_index(path, monkeypatch):
    text = path.read_text(encoding="utf-8")
    fast = _calls_found(text)
    monkeypatch.setattr(surface_python._Collector, "_calls", _calls_by_statement_text)
    assert _calls_found(text) == fast


@pytest.mark.parametrize("text", [dedent(BEFORE), *ODD_LINES, "", "\n\n", "x = 1", "env\nENV\nEnv\n"])
@pytest.mark.parametrize("pattern", ["_CALL_WORDS", "_NESTED_CALL_WORDS"])
def test_word_lines_are_the_lines_a_search_of_each_line_finds(text, pattern):
    collector = surface_python._Collector()
    collector.module(ast.parse(text), text)
    words = getattr(surface_python, pattern)
    parser_lines = re.split("\r\n|\r|\n", text)  # as the parser numbers them: not str.splitlines
    expected = [i for i, line in enumerate(parser_lines) if words.search(line)]
    assert collector._word_lines(words) == expected


def test_line_breaks_only_splitlines_knows_do_not_shift_later_statements():
    # U+2028 (or a form feed) in a docstring is no line break to the parser; counted as one, every later
    # statement's text was read from the wrong lines and the nested option below was never seen
    doc = '"""Tool.' + "\u2028" * 6 + '"""\n'
    before = (
        doc
        + "import argparse\n\n\ndef build(parser):\n    if parser:\n        parser.add_argument('--old')\n"
    )
    after = before + "        parser.add_argument('--new-flag')\n"
    found = surface_python.python_surface("tool/cli.py", before, after, module="tool.cli").changes
    assert [(c.kind, c.name, c.line) for c in found] == [(K.OPTION_ADDED, "--new-flag", 8)]


def test_an_annotation_too_deep_to_compare_costs_the_file_only_when_it_is_compared():
    """Parameter and field annotations are dumped when a comparison needs them, not while the module is read:
    one too deeply nested to dump (a union of a thousand names) no longer costs the facts of a file where it
    did not change, and where it did, the file yields nothing as before (no error escapes)."""
    union = " | ".join(f"T{i}" for i in range(1000))
    before = f"def f(x: {union}) -> None:\n    pass\n"
    added = surface_python.python_surface("m.py", before, before + "def g():\n    pass\n", module="m")
    assert [(c.kind, c.name) for c in added.changes] == [(K.ADDED, "m.g")]
    renamed = before.replace("(x:", "(y:") + "def g():\n    pass\n"
    assert surface_python.python_surface("m.py", before, renamed, module="m").changes == []
