"""A version parsed with the statements it shares, at the same lines, with another version's parse taken from
that parse gives exactly ast.parse's tree (every node, every position), and a failure anywhere gives what
ast.parse of the whole text gives (reused_parse.py, with shared_parse.py's runs and pieces)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from analysis.models import SurfaceKind as K
from analysis.surface import python as surface_python
from analysis.surface import shared_parse
from analysis.surface.python import python_surface
from analysis.surface.reused_parse import parse_reusing

ROOT = Path(__file__).resolve().parents[3]
REAL_MODULES = sorted(p for top in ("analysis", "bot") for p in (ROOT / top).rglob("*.py"))


@pytest.fixture(autouse=True)
def short_runs(monkeypatch):
    monkeypatch.setattr(shared_parse, "MIN_SHARED_LINES", 2)


def _dump(tree: ast.Module | None) -> str | None:
    return ast.dump(tree, include_attributes=True) if tree is not None else None


def _whole(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _same_as_whole(before: str, after: str) -> tuple[ast.Module | None, ast.Module | None]:
    """The version before parsed whole, the one after with what it shares taken from that parse."""
    old = _whole(before)
    new = _whole(after)
    if old is not None:
        lines = after.split("\n")
        try:
            new, parsed, stubs = parse_reusing(lines, list(lines), {}, before.split("\n"), old)
        except (SyntaxError, ValueError):
            new = None
        else:
            assert (parsed, stubs) == (lines, {})
    assert _dump(new) == _dump(_whole(after))
    return old, new


def _shared(old: ast.Module | None, new: ast.Module | None) -> int:
    """How many top-level statements the two trees share (parsed once)."""
    if old is None or new is None:
        return 0
    return len({id(s) for s in old.body} & {id(s) for s in new.body})


HEAD = '''"""A module.

Usage at column 0, in the docstring:

x = 1

"""

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

TEXT = """
first = 1

def looks_like_code():
    pass
"""


@decorator
def decorated(a, b=2):
    return a + b


@decorator

def decorated_after_a_blank(a):
    return a


class Engine:
    """An engine."""

    def start(self, mode: str) -> None:
        if mode:
            return None

    def stop(self) -> None:
        pass


def tail(x):
    return os.getenv("APP_X", x)
'''


def test_an_edit_in_the_middle_shares_the_head_and_the_tail():
    after = HEAD.replace("        if mode:\n", "        if not mode:\n")
    old, new = _same_as_whole(HEAD, after)
    assert _shared(old, new) >= 6


def test_an_edit_that_adds_lines_shares_only_what_is_before_it():
    after = HEAD.replace(
        "    def stop(self) -> None:\n", "    def stop(self) -> None:\n        '''Stop.'''\n"
    )
    old, new = _same_as_whole(HEAD, after)
    assert 0 < _shared(old, new) < len(old.body)


@pytest.mark.parametrize(
    "edit",
    [
        ("first = 1\n", "first = 2\n"),  # inside the column-0 string
        ("x = 1\n", "x = 2\n"),  # inside the module docstring
        ("@decorator\ndef decorated(", "@other\ndef decorated("),  # a decorator
        ("    from collections.abc import Iterable\n", "    from typing import Iterable\n"),  # TYPE_CHECKING
    ],
)
def test_edits_at_every_kind_of_place_give_the_whole_parse(edit):
    _same_as_whole(HEAD, HEAD.replace(*edit))


def test_a_def_moved_between_blocks():
    body = "\n\ndef moved():\n    return 1\n"
    before = HEAD + body + "\n\nZ = 1\n"
    after = HEAD.replace("class Engine:\n", "def moved():\n    return 1\n\n\nclass Engine:\n") + "\n\nZ = 1\n"
    _same_as_whole(before, after)


@pytest.mark.parametrize(
    "broken",
    [
        "def broken(:\n    pass\n",
        "x = (1,\n\ny = 2\n",  # a bracket never closed, a "statement" after a blank line inside it
        's = """never closed\n\nz = 3\n',
        "x = 1 + \\\n\ny = 2\n",
        "if x:\n    pass\n\nelse:\n    pass\n\nelif y:\n    pass\n",
        "a = '\udcff'\n",  # a lone surrogate (undecodable bytes kept by surrogateescape)
        "a = 1\x00\n",
    ],
)
@pytest.mark.parametrize("side", ["before", "after"])
def test_a_version_that_does_not_parse_is_none_as_with_ast_parse(broken, side):
    broken_text = HEAD + "\n\n" + broken + "\n\nafter_it = 1\n"
    before, after = (broken_text, HEAD) if side == "before" else (HEAD, broken_text)
    old, new = _same_as_whole(before, after)
    assert (old is None) == (side == "before") and (new is None) == (side == "after")


@pytest.mark.parametrize(
    "text",
    [
        HEAD.replace("\n", "\r\n"),  # lines the parser counts otherwise than "\n" does
        "from __future__ import barry_as_FLUFL\n\n\n" + HEAD,  # the grammar changed
    ],
)
def test_texts_numbered_otherwise_or_in_another_grammar_share_nothing(text):
    known = surface_python._parse(text)
    assert known is not None and known.parsed_lines is None  # no other version takes its statements
    edited = text.replace("if mode:", "if not mode:")
    collected = surface_python._collect_against(edited, known, False)
    assert collected is not None and collected.tree is not None
    assert _shared(known.tree, collected.tree) == 0


def test_functions_blanked_against_a_whole_parse_are_kept_where_they_stand_in_it():
    """A version blanked against one parsed whole takes that one's statements at the same lines, functions
    and all, and blanks only where the lines moved."""
    known = surface_python._parse(HEAD)
    assert known is not None and known.spans and known.parsed_lines is not None
    same_count = surface_python._collect_against(HEAD.replace("return a + b", "return a - b"), known, False)
    assert same_count is not None and same_count.tree is not None
    assert _shared(known.tree, same_count.tree) >= 6
    assert same_count.blanked is None  # every function it could blank stands whole at its lines in the known
    moved = HEAD.replace("import os\n", "import os\nimport sys\n")
    shifted = surface_python._collect_against(moved, known, False)
    assert shifted is not None and shifted.tree is not None and shifted.blanked is not None
    assert _shared(known.tree, shifted.tree) == 1  # the docstring above the import added
    for version, text in ((same_count, HEAD.replace("return a + b", "return a - b")), (shifted, moved)):
        whole = surface_python._parse(text)
        assert whole is not None
        compared = [
            surface_python._Compare("m.py", "m", True, known, v).run().changes for v in (version, whole)
        ]
        assert compared[0] == compared[1]


def test_a_file_created_or_deleted_has_its_facts():
    added = python_surface("m.py", None, HEAD, module="m")
    removed = python_surface("m.py", HEAD, None, module="m")
    assert (K.ADDED, "m.tail") in {(c.kind, c.name) for c in added.changes}
    assert (K.REMOVED, "m.tail") in {(c.kind, c.name) for c in removed.changes}
    edited = python_surface("m.py", HEAD, HEAD.replace('"APP_X", x)', '"APP_Y", x)'), module="m")
    assert [(c.kind, c.name) for c in edited.changes] == [(K.ENV_RENAMED, "APP_Y")]


@pytest.mark.parametrize("path", REAL_MODULES[::3], ids=lambda p: str(p.relative_to(ROOT)))
def test_real_modules_edited_anywhere_give_the_whole_parse(path):
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    for at in (len(lines) // 4, len(lines) // 2, 3 * len(lines) // 4):
        kept_count = [*lines[:at], lines[at] + "  # edited", *lines[at + 1 :]]
        inserted = [*lines[:at], "", "inserted = 1", "", *lines[at:]]
        for edited in (kept_count, inserted):
            _same_as_whole(text, "\n".join(edited))


def test_a_spurious_recursion_depth_mismatch_is_parsed_again(monkeypatch) -> None:
    # CPython 3.11 raises "AST constructor recursion depth mismatch" when two threads build trees at once
    # (python/cpython#106905): the text is fine, and a commit's facts must not depend on the timing.
    real, calls = ast.parse, []

    def flaky(text, *args, **kwargs):
        calls.append(text)
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=33, after=52)")
        return real(text, *args, **kwargs)

    monkeypatch.setattr(shared_parse.ast, "parse", flaky)
    assert [type(s).__name__ for s in shared_parse.parse("x = 1\n").body] == ["Assign"]
    assert len(calls) == 2
    calls.clear()
    monkeypatch.setattr(
        shared_parse.ast, "parse", lambda *a, **k: (_ for _ in ()).throw(SystemError("other"))
    )
    with pytest.raises(SystemError, match="other"):
        shared_parse.parse("x = 1\n")
