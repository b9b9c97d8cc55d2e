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
        return surface_python._dump(node) if node is not None else None

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
    return [
        (f.name, f.lineno, list(surface_python._raises(f).items()), list(surface_python._guards(f).items()))
        for f in functions
    ]


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
    monkeypatch.setattr(surface_python, "_own_statements", _full_walk)
    assert _facts(BEFORE, AFTER) == fast


@pytest.mark.parametrize("path", REAL_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_real_modules_give_the_same_calls_and_exits_with_and_without_the_fast_paths(path, monkeypatch):
    text = path.read_text(encoding="utf-8")
    fast = (_calls_found(text), _exits_found(text))
    monkeypatch.setattr(surface_python, "_NESTED_CALL_WORDS", re.compile(""))
    monkeypatch.setattr(surface_python, "_own_statements", _full_walk)
    assert (_calls_found(text), _exits_found(text)) == fast


def test_the_real_modules_exercise_both_walks():
    """The comparison above means something: this project's modules read environment variables, add options
    and raise refusals from nested blocks."""
    texts = [p.read_text(encoding="utf-8") for p in REAL_MODULES]
    found = [(_calls_found(text), _exits_found(text)) for text in texts]
    assert sum(len(calls[0]) for calls, _ in found) >= 5
    assert sum(len(calls[1]) for calls, _ in found) >= 5
    assert sum(1 for _, exits in found for f in exits if f[2]) >= 20
