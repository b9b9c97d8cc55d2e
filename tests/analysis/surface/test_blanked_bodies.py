"""A version parsed with the bodies it shares with another version blanked gives exactly the facts of parsing it
whole: the bodies a comparison needs are parsed back from their own lines, and a blanked text that does not
check out (the function's text inside a string, a function that goes on in the new version) is parsed whole."""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path
from unittest import mock

import pytest

from analysis.models import SurfaceKind as K
from analysis.surface import python as surface_python
from analysis.surface.blanked_bodies import Blanked, Relative, Relatives, Span, blank, first_line, reparse
from analysis.surface.python import Collected, python_surface

ROOT = Path(__file__).resolve().parents[3]
REAL_MODULES = sorted(p for top in ("analysis", "bot", "adapters") for p in (ROOT / top).rglob("*.py"))
PATH = "kit/core.py"


def _known(text: str) -> surface_python._Module:
    module = surface_python._parse(text)
    assert module is not None
    return module


def _facts(
    before: str | None, after: str | None, relative: str | None = None, *, must_blank: bool = True
) -> tuple:
    """python_surface's facts parsed whole (no batch), and through a batch that knows `relative` (another
    version of the file): both, to compare."""
    # python_surface blanks a version against the other even without a batch: each parsed whole here
    with mock.patch.object(surface_python, "_collect_against", _parsed_whole):
        whole = python_surface(PATH, before, after, module="kit.core")
    relatives = Relatives()
    if relative is not None:
        known = _known(relative)
        assert not must_blank or (known.lines is not None and known.spans), (
            "the relative lets nothing blank: the test tests nothing"
        )
        if known.lines is not None:
            relatives.put(PATH, known.lines, known.spans)
    batched = python_surface(PATH, before, after, module="kit.core", collected=Collected(relatives))
    return (whole.changes, _texts(whole.shapes)), (batched.changes, _texts(batched.shapes))


def _parsed_whole(text: str, known: object, package_init: bool) -> surface_python._Module | None:
    return surface_python._parse(text, package_init)


def _texts(shapes: dict) -> dict:
    return {key: shape.text for key, shape in shapes.items()}


def _blanked(text: str, relative: str) -> surface_python._Module | None:
    """text collected against `relative` as a batch's first version of the file is (no tree to take from)."""
    known = _known(relative)
    assert known.lines is not None
    return surface_python._collect_against(text, Relative(known.lines, known.spans), False)


BASE = '''"""A kit."""

import os

__all__ = ["Runner", "RunnerConfig", "run", "legacy_name", "old_run_name"]


def __getattr__(name):
    if name == "old_run_name":
        return run
    raise AttributeError(name)


def old_run_name(task):
    return run(task)


def run(task, retries=3):
    """Run a task."""
    for _ in range(retries):
        task()
    return task


def _private(x):
    return x * 2


@decorate(
    "with",
    "arguments",
)
async def fetch(url, *, timeout=10):
    async with session() as s:
        return await s.get(url)


class RunnerConfig(BaseModel):
    workers: int = 4
    old_name: str = "x"

    def __getattr__(self, name):
        if name in ("legacy_workers", "old_name"):
            return self.workers
        raise AttributeError(name)


class Runner:
    def start(self, when=None):
        def inner():
            return when

        return inner

    def stop(self):
        \"\"\"Stop.\"\"\"
        return None

    class Nested:
        def deep(self, a, b=2):
            return a + b


def legacy_name():
    return {"old_helper": run}


def reads_env():
    return os.environ.get("KIT_MODE", "fast")
'''


@pytest.mark.parametrize(
    ("label", "after"),
    [
        (
            "a parameter added",
            BASE.replace("def run(task, retries=3):", "def run(task, retries=3, timeout=None):"),
        ),
        ("a body changed", BASE.replace("return x * 2", "return x * 3")),
        (
            "a function removed, its name still a string in a blanked body",
            BASE.replace(
                'def run(task, retries=3):\n    """Run a task."""\n    for _ in range(retries):\n        task()\n'
                "    return task\n",
                "",
            ),
        ),
        (
            "a method moved to another class",
            BASE.replace('    def stop(self):\n        """Stop."""\n        return None\n\n', "").replace(
                "        raise AttributeError(name)\n",
                '        raise AttributeError(name)\n\n    def stop(self):\n        """Stop."""\n        return None\n',
            ),
        ),
        (
            "a class renamed (its shape, blanked methods and all)",
            BASE.replace("class Runner:", "class Executor:"),
        ),
        (
            "a class renamed in __all__ too",
            BASE.replace("class Runner:", "class Executor:").replace('"Runner",', '"Executor",'),
        ),
        (
            "a config field removed that a blanked __getattr__ still serves",
            BASE.replace('    old_name: str = "x"\n', ""),
        ),
        ("__all__ no longer lists a blanked function", BASE.replace('"legacy_name", ', "")),
        (
            "a function removed that a blanked module __getattr__ still serves",
            BASE.replace("def old_run_name(task):\n    return run(task)\n", "").replace(
                ', "old_run_name"', ""
            ),
        ),
        (
            "an environment variable's default changed",
            BASE.replace('"KIT_MODE", "fast"', '"KIT_MODE", "slow"'),
        ),
        (
            "the functions reordered",
            BASE.replace("def _private(x):\n    return x * 2\n\n\n", "")
            + "\n\ndef _private(x):\n    return x * 2\n",
        ),
        (
            "a blanked function's text now inside a string",
            BASE.replace(
                "def _private(x):\n    return x * 2\n",
                'EXAMPLE = """\ndef _private(x):\n    return x * 2\n"""\n',
            ),
        ),
        (
            "a blanked function's text now the start of a longer function",
            BASE.replace(
                "def _private(x):\n    return x * 2\n", "def _private(x):\n    return x * 2\n    print(x)\n"
            ),
        ),
        (
            "a function's text now a nested function",
            BASE.replace(
                "def reads_env():",
                "def outer():\n    def _private(x):\n        return x * 2\n\n    return _private\n\n\n"
                "def reads_env():",
            ),
        ),
        ("the file deleted", None),
    ],
)
def test_blanked_versions_give_the_facts_of_whole_ones(label, after):
    whole, batched = _facts(BASE, after, relative=BASE)
    assert batched == whole, label


def test_each_case_blanks_something_and_the_facts_are_what_they_should_be():
    """The cases above go through the blanked path (else they test nothing), and their facts are right."""
    module = _blanked(BASE.replace("return x * 2", "return x * 3"), BASE)
    assert module is not None and module.blanked is not None
    blanked_defs = {
        q for q, d in module.defs.items() if d.kind == "function" and d.node.body[0].__class__ is ast.Pass
    }
    assert {
        "run",
        "fetch",
        "Runner.stop",
        "Runner.Nested.deep",
        "legacy_name",
        "RunnerConfig.__getattr__",
    } <= blanked_defs
    assert "reads_env" not in blanked_defs  # the calls walk found an environment variable there
    assert "_private" not in blanked_defs  # changed
    removed, _ = _facts(BASE, BASE.replace('"legacy_name", ', ""), relative=BASE)
    assert (K.REMOVED, "kit.core.legacy_name") in {(c.kind, c.name) for c in removed[0]}
    gone = BASE.replace("def old_run_name(task):\n    return run(task)\n", "").replace(', "old_run_name"', "")
    _, ((served,), _) = _facts(BASE, gone, relative=BASE)  # through the blanked path
    assert (served.kind, served.name, served.aliased) == (K.REMOVED, "kit.core.old_run_name", True)
    _, ((field,), _) = _facts(BASE, BASE.replace('    old_name: str = "x"\n', ""), relative=BASE)
    assert (field.kind, field.name, field.aliased) == (
        K.FIELD_REMOVED,
        "kit.core.RunnerConfig.old_name",
        True,
    )
    renamed = BASE.replace("class Runner:", "class Executor:").replace('"Runner",', '"Executor",')
    (_, shapes), _ = _facts(BASE, renamed, relative=BASE)
    gone, came = shapes[(K.REMOVED, "kit.core.Runner")], shapes[(K.ADDED, "kit.core.Executor")]
    assert (
        gone == came == "class:" + _known(BASE).defs["Runner"].shape
    )  # the whole class's, one shape: a rename
    blanked_runner = module.defs["Runner"]
    assert (
        blanked_runner.whole is not blanked_runner.node
        and blanked_runner.shape == _known(BASE).defs["Runner"].shape
    )


def test_a_blanked_text_that_does_not_check_out_is_parsed_whole():
    inside_string = BASE.replace(
        "def _private(x):\n    return x * 2\n", 'EXAMPLE = """\ndef _private(x):\n    return x * 2\n"""\n'
    )
    lines, stubs = blank(inside_string.split("\n"), _known(BASE).lines, _known(BASE).spans)
    assert any(line.endswith("pass") and "EXAMPLE" not in line for line in lines) and stubs
    module = _blanked(inside_string, BASE)
    assert module is not None and module.blanked is None  # the check failed: parsed whole
    example = next(s for s in module.tree.body if isinstance(s, ast.Assign) and s.targets[0].id == "EXAMPLE")
    assert example.value.value == "\ndef _private(x):\n    return x * 2\n"  # the string as written


def test_blank_keeps_every_line_number_and_each_pass_ends_its_body():
    known = _known(BASE)
    lines, stubs = blank(BASE.split("\n"), known.lines, known.spans)
    assert len(lines) == len(BASE.split("\n"))
    tree = ast.parse("\n".join(lines))
    for stub, (head, body) in stubs.items():
        assert lines[stub - 1].strip() == "pass" and all(not line for line in lines[body - 1 : stub - 1])
        node = next(
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.lineno == head
        )
        assert node.end_lineno == stub and len(node.body) == 1


def test_a_span_that_overlaps_one_already_blanked_is_left():
    text = "def f():\n    return 1\n"
    spans = [Span(0, 0, 1, 1, "    "), Span(0, 0, 1, 1, "    ")]
    lines, stubs = blank(text.split("\n"), text.split("\n"), spans)
    assert lines == ["def f():", "    pass", ""] and list(stubs) == [2]


def test_tabs_and_comments_after_a_body():
    text = "class A:\n\tdef f(self):\n\t\treturn 1\n\t# trailing\n\n\tdef g(self):\n\t\treturn 2\n"
    after = text.replace("return 2", "return 3")
    whole, batched = _facts(text, after, relative=text)
    assert batched == whole
    module = _blanked(after, text)
    assert module is not None and module.blanked is not None and module.blanked.lines[2] == "\t\treturn 1"


@pytest.mark.parametrize("path", REAL_MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_definition_of_our_modules_reparses_to_the_whole_parse_node(path):
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            again = reparse(lines, node)
            assert again is not None and ast.dump(again, include_attributes=True) == ast.dump(
                node, include_attributes=True
            )


def test_reparse_refuses_a_node_its_lines_do_not_give():
    text = "def f():\n    return 1\n"
    node = ast.parse(text).body[0]
    node.end_lineno = 1  # as if the body stopped at the def line
    assert reparse(text.split("\n"), node) is None


def _mutations(text: str, rng: random.Random) -> list[str]:
    """A few edits a commit makes: a body changed, a function removed, a parameter added, a method
    duplicated under a new name."""
    lines = text.split("\n")
    defs = [i for i, line in enumerate(lines) if re.match(r"\s*(async )?def \w+\(", line)]
    out = []
    for i in rng.sample(defs, min(3, len(defs))):
        changed = list(lines)
        changed[i] = (
            re.sub(r"\(", "(extra_arg=None, ", changed[i], count=1)
            if "(self" not in changed[i]
            else changed[i]
        )
        out.append("\n".join(changed))
        removed = list(lines)
        removed[i] = re.sub(r"def (\w+)", r"def \1_renamed", removed[i], count=1)
        out.append("\n".join(removed))
    return out


@pytest.mark.parametrize("path", REAL_MODULES[::3], ids=lambda p: str(p.relative_to(ROOT)))
def test_our_modules_edited_give_the_same_facts_blanked(path):
    text = path.read_text(encoding="utf-8")
    rng = random.Random(str(path.relative_to(ROOT)))
    for edited in _mutations(text, rng):
        whole, batched = _facts(text, edited, relative=text, must_blank=False)
        assert batched == whole
        whole, batched = _facts(edited, text, relative=text, must_blank=False)
        assert batched == whole


def test_most_of_our_modules_let_bodies_blank():
    """The edited modules above that define functions mostly go through the blanked path: they test it."""
    texts = [p.read_text(encoding="utf-8") for p in REAL_MODULES[::3]]
    with_functions = [t for t in texts if "def " in t]
    blanking = [t for t in with_functions if _known(t).spans]
    assert len(with_functions) > 0.6 * len(texts)
    assert len(blanking) > 0.9 * len(with_functions)


def test_relatives_hold_at_most_their_characters_least_recent_dropped():
    relatives = Relatives(max_chars=25)  # two of the versions below, not three
    span = (Span(0, 0, 1, 1, "    "),)
    relatives.put("a.py", ["def a():", "  1"], span)
    relatives.put("b.py", ["def b():", "  1"], span)
    assert relatives.get("a.py") is not None and relatives.get("b.py") is not None
    relatives.put("c.py", ["def c():", "  1"], span)
    assert relatives.get("a.py") is None and relatives.get("c.py") is not None
    relatives.put("b.py", ["x"], ())  # a version with nothing to blank replaces none
    assert relatives.get("b.py") is None
    relatives.put("big.py", ["x" * 26], span)
    assert relatives.get("big.py") is None


def test_a_node_whose_lines_do_not_reparse_is_found_in_the_whole_tree(monkeypatch):
    """A safety net: no such node is known (a blanked text parses only where its pieces parse alone)."""
    from analysis.surface import blanked_bodies

    monkeypatch.setattr(blanked_bodies, "reparse", lambda lines, node: None)
    text = "class A:\n    def f(self):\n        return 'kept'\n"
    blanked = Blanked(text.split("\n"), {3: (2, 3)})
    stub = ast.parse("class A:\n    def f(self):\n        pass\n").body[0]
    found = blanked.whole(stub)
    assert isinstance(found, ast.ClassDef) and found is not stub and "kept" in ast.dump(found)


def test_many_functions_that_start_alike_are_each_blanked_where_they_stand():
    """Each is compared with the places of its first line not yet blanked, a few at most: a file of many
    `def __init__(self):` does not compare each function with all of them."""
    blocks = [f"class C{i}:\n    def __init__(self):\n        self.v = {i % 7}\n" for i in range(300)]
    text = "\n\n".join(blocks)
    known = _known(text)
    lines, stubs = blank(text.split("\n"), known.lines, known.spans)
    assert len(stubs) == 300 and all(lines[stub - 1] == "        pass" for stub in stubs)
    moved = "\n\n".join(blocks[150:] + blocks[:150])
    whole, batched = _facts(text, moved, relative=text)
    assert batched == whole


def test_first_line_is_the_first_decorators_on_every_definition_of_our_modules():
    """first_line reads only the first decorator: the grammar puts each decorator on lines of its own, in
    order, before the `def` or `class`. Checked against the lowest line of all of them, on our own modules and
    on decorators that span lines or continue a line."""
    odd = "@a(\n    1,\n)\n@ \\\n  b\n@c . d\nclass K:\n    @x\n    @y(2)\n    def f(self): pass\n\ndef g(): pass\n"
    texts = [odd, *(p.read_text(encoding="utf-8") for p in REAL_MODULES)]
    seen = 0
    for text in texts:
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                lowest = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                assert first_line(node) == lowest
                seen += bool(node.decorator_list)
            elif isinstance(node, ast.stmt):
                assert first_line(node) == node.lineno
    assert seen > 50


def test_a_blanked_head_keeps_its_name_decorators_and_line_numbers():
    known = _known(BASE)
    lines, stubs = blank(BASE.split("\n"), known.lines, known.spans, heads=True)
    assert len(lines) == len(BASE.split("\n")) and stubs
    assert "        def deep():" in lines and "async def fetch():" in lines
    assert lines[lines.index("async def fetch():") - 4] == "@decorate("  # decorators stay as written
    tree = ast.parse("\n".join(lines))
    heads = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    whole = {
        n.name: n for n in ast.walk(ast.parse(BASE)) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    for name, node in heads.items():
        assert (node.lineno, node.col_offset, node.end_lineno, first_line(node)) == (
            whole[name].lineno,
            whole[name].col_offset,
            whole[name].end_lineno,
            first_line(whole[name]),
        )


def test_a_blanked_head_gives_its_parameters_from_the_whole_node():
    module = _blanked(BASE.replace("return x * 2", "return x * 3"), BASE)
    assert module is not None and module.blanked is not None
    run = module.defs["run"]
    assert not run.node.args.args  # the head was blanked: `def run():`
    assert [(p.name, p.kind, ast.dump(p.default) if p.default else None) for p in run.params] == [
        ("task", "pos", None),
        ("retries", "pos", ast.dump(ast.Constant(3))),
    ]


TYPER = """import typer


def main(name: str = typer.Option("--name")):
    return name


def helper(x: int = 1):
    return x


def other(y: int = 2):
    return y
"""


def test_a_text_that_may_hold_a_typer_option_keeps_its_heads():
    after = TYPER.replace("return x", "return x + 1")
    module = _blanked(after, TYPER)
    assert module is not None and module.blanked is not None
    other = module.defs["other"].node
    assert other.body[0].__class__ is ast.Pass and other.args.args  # its body blanked, not its head
    whole, batched = _facts(TYPER, after, relative=TYPER)
    assert batched == whole


@pytest.mark.parametrize(
    ("text", "may"),
    [
        ("x: Optional[int] = None", False),
        ("name = typer.Option('--name')", True),
        ("name = Option ('--name')", True),
        ("my_Option(1) + Optionx", False),
        ("a = 1\nOption", True),
        ("# \u2014 a dash, an ellipsis \u2026, no option", False),
        ("name = \uff2fption('--name')", True),  # a fullwidth O: the parser reads the name `Option`
    ],
)
def test_which_texts_may_hold_a_typer_option(text, may):
    assert surface_python._may_have_typer_options(text) is may
