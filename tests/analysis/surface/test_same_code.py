"""Two versions that are the same code but for comments, docstrings and message text (surface/same_code.py),
whole and through the blanked path a batch takes."""

from __future__ import annotations

import ast

import pytest

import analysis.surface.same_code as same_code_module
from analysis.surface.blanked_bodies import Relatives
from analysis.surface.python import Collected, python_surface

MODULE = '''"""The engine's types."""

import base64
import warnings


def version_short():
    return "2.1"


class Base64Bytes:
    """Bytes that are base64-encoded.

    Under the hood, `Base64Bytes` uses `base64.b64encode`.

    ```python
    from engine import Base64Bytes

    class Model:
        data: Base64Bytes
    ```
    """

    def encode(self, data: bytes, mode: str = "strict") -> bytes:
        """Encode the bytes."""
        if not data:
            raise ValueError(f"nothing to encode; see https://docs.example.dev/{version_short()}/types for help")
        return base64.b64encode(data)

    def decode(self, data: bytes) -> bytes:
        # legacy decoders are gone
        warnings.warn("decode() is slow; use decode_fast() instead", stacklevel=2)
        return base64.b64decode(data)


LIMIT = 10
"""How many bytes at most."""
'''


def versions(**edits: str) -> str:
    text = MODULE
    for old, new in edits.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def prose_only(before: str, after: str, *, blanked: bool = False) -> bool:
    """Whether python_surface calls the change prose only; `blanked`: a batch's path, where the version before
    was an earlier commit's version after, and each version is parsed with the function bodies it shares with
    the version collected before it left out."""
    if not blanked:
        return python_surface("engine/types.py", before, after, module="engine.types").prose_only
    collected = Collected(Relatives())
    for text in (MODULE, MODULE, before, before, after):
        collected.expect(text, False)
    python_surface("engine/types.py", None, MODULE, module="engine.types", collected=collected)
    python_surface("engine/types.py", MODULE, before, module="engine.types", collected=collected)
    return python_surface(
        "engine/types.py", before, after, module="engine.types", collected=collected
    ).prose_only


# The shape of a real documentation commit: a docstring holding a code example rewritten, so that its patch's
# hunk starts inside the docstring with lines that read as code; an error message's link changed inside an
# f-string around a call; a warning reworded; a comment and an attribute docstring edited.
DOC_EDITS = {
    "    Under the hood, `Base64Bytes` uses `base64.b64encode`.": "/// version-changed | v2.1\nNow uses [`base64.b64encode()`].",
    "    ```python\n    from engine import Base64Bytes\n": "    ```python\n    from engine import Base64Bytes, Model\n",
    "https://docs.example.dev/{version_short()}/types": "https://example.dev/docs/{version_short()}/concepts/types",
    "decode() is slow; use decode_fast() instead": "decode() is slow: use decode_fast()",
    "# legacy decoders are gone": "# the legacy decoders were removed in 2.0",
    '"""How many bytes at most."""': '"""The most bytes read."""',
}


@pytest.mark.parametrize("blanked", [False, True])
def test_docstrings_comments_and_messages_are_prose(blanked):
    after = versions(**DOC_EDITS)
    assert prose_only(MODULE, after, blanked=blanked)
    assert prose_only(after, MODULE, blanked=blanked)
    added = versions(
        **{
            "    def decode(self, data: bytes) -> bytes:\n": '    def decode(self, data: bytes) -> bytes:\n        """Decode."""\n'
        }
    )
    assert prose_only(MODULE, added, blanked=blanked)  # a docstring added where there was none


@pytest.mark.parametrize(
    "old, new",
    [
        ("/{version_short()}/types", "/{version_long()}/types"),  # the code in an f-string's braces
        ('mode: str = "strict"', 'mode: str = "lenient mode"'),  # a default, even one of words
        ("LIMIT = 10", "LIMIT = 12"),
        ("raise ValueError(", "raise TypeError("),
        ("if not data:", "if data is None:"),
        ("return base64.b64decode(data)", "return base64.b64decode(data, validate=True)"),
        (
            '"decode() is slow; use decode_fast() instead"',
            '"decode() is slow; use decode_fast() instead", DeprecationWarning',
        ),
    ],
)
@pytest.mark.parametrize("blanked", [False, True])
def test_code_is_not_prose(old, new, blanked):
    after = versions(**{old: new})
    for doc_old, doc_new in DOC_EDITS.items():  # with the prose edits around it that still apply
        after = after.replace(doc_old, doc_new)
    assert not prose_only(MODULE, after, blanked=blanked)


def test_statements_that_do_nothing_are_left_out():
    # a linter's "unnecessary pass" fixed, a stub's `...` made `pass`; a formatter's new layout
    before = 'class Empty:\n    """Nothing."""\n\n    pass\n\n\ndef stub(x):\n    ...\n\n\nCALLS = [f(1),\n  f(2)]\n'
    after = 'class Empty:\n    """Nothing."""\n\n\ndef stub(x):\n    pass\n\n\nCALLS = [\n    f(1),\n    f(2),\n]\n'
    assert python_surface("p.py", before, after, module="p").prose_only
    assert not python_surface(
        "p.py", before, after.replace("    pass", "    return x"), module="p"
    ).prose_only


def test_words_outside_a_call_are_compared():
    before = 'PROMPT = "You are a helpful assistant"\nKEYS = {"first name": 1}\n'
    assert not python_surface("p.py", before, before.replace("helpful", "terse"), module="p").prose_only
    assert not python_surface(
        "p.py", before, before.replace("first name", "given name"), module="p"
    ).prose_only


def test_messages_in_calls_annotations_and_format():
    before = (
        "from typing import Annotated\n\n"
        "def route(path: Annotated[str, Doc('The path to serve')] = '/', *, name: str = '') -> None:\n"
        "    log.info('serving {} now'.format(path))\n"
        "    parser.add_argument('--port', help='the port to listen on')\n"
    )
    after = (
        before.replace("The path to serve", "The URL path the route serves")
        .replace("serving {} now", "now serving {}")
        .replace("the port to listen on", "which port the server listens on")
    )
    assert python_surface("p.py", before, after, module="p").prose_only
    assert not python_surface(
        "p.py", before, after.replace("'--port'", "'--listen-port'"), module="p"
    ).prose_only


def test_an_asserts_message_is_prose_and_its_condition_code():
    # vllm's "fix some typos": `assert k_scale is None, "DCP not support sacled kvcache now."` spelled right, the
    # file read as code and the commit ranked medium by its paths' record.
    before = 'def f(k_scale, n):\n    assert k_scale is None, "DCP not support sacled kvcache now."\n    return n\n'
    after = before.replace("sacled", "scaled")
    assert python_surface("p.py", before, after, module="p").prose_only
    fstring = before.replace('"DCP not', 'f"{n}: DCP not')
    assert python_surface("p.py", fstring, fstring.replace("sacled", "scaled"), module="p").prose_only
    assert not python_surface("p.py", before, after.replace("is None", "is not None"), module="p").prose_only
    assert not python_surface("p.py", fstring, fstring.replace("{n}", "{n + 1}"), module="p").prose_only
    bare = before.replace(', "DCP not support sacled kvcache now."', "")
    assert not python_surface("p.py", bare, before, module="p").prose_only  # a message given where none was


def test_not_prose_when_nothing_changed_or_a_version_is_missing_or_broken():
    assert not python_surface("p.py", MODULE, MODULE, module="p").prose_only
    assert not python_surface("p.py", None, MODULE, module="p").prose_only
    assert not python_surface("p.py", MODULE, MODULE + "\ndef broken(:\n", module="p").prose_only


def test_documentation_in_a_type_is_prose_and_other_metadata_is_code():
    # A web framework documented its security classes' parameters in their types (PEP 727's `Doc`), in a
    # package folder named `security/`: the docs commit ranked medium as "security-relevant".
    before = (
        "from typing import Optional\n\n\nclass Bearer:\n"
        "    def __init__(self, token_url: str, scheme_name: Optional[str] = None, auto_error: bool = True):\n"
        "        self.token_url = token_url\n"
    )
    documented = (
        "from typing import Optional\n\nfrom typing_extensions import Annotated, Doc\n\n\nclass Bearer:\n"
        "    def __init__(\n        self,\n"
        '        token_url: Annotated[str, Doc("""\n            The URL to obtain the token.\n            """)],\n'
        '        scheme_name: Annotated[Optional[str], Doc("Security scheme name, shown in the docs.")] = None,\n'
        '        auto_error: Annotated[bool, Doc("Whether a missing header is an error.")] = True,\n'
        "    ):\n        self.token_url = token_url\n"
    )
    assert python_surface(
        "web/security/oauth2.py", before, documented, module="web.security.oauth2"
    ).prose_only
    merged = documented.replace(
        "from typing import Optional\n\nfrom typing_extensions import Annotated, Doc\n",
        "from typing import Annotated, Optional\n\nfrom typing_extensions import Doc\n",
    )
    assert python_surface("web/security/oauth2.py", before, merged, module="web.security.oauth2").prose_only
    after_import = documented.replace("from typing_extensions import Annotated, Doc\n\n\n", "")
    assert python_surface(
        "web/security/oauth2.py", before, after_import, module="web.security.oauth2"
    ).prose_only
    # another typing name imported is code (it may be used at run time)
    more = documented.replace("import Annotated, Doc", "import Annotated, Doc, TypedDict")
    assert not python_surface("m.py", before, more, module="m").prose_only
    # its words reworded later: prose again
    reworded = after_import.replace("The URL to obtain the token.", "The URL where the token is obtained.")
    assert python_surface("web/security/oauth2.py", after_import, reworded, module="m").prose_only
    # metadata that changes what the framework reads, or another type, is code
    for old, new in (
        ('Annotated[bool, Doc("Whether', 'Annotated[bool, Header(), Doc("Whether'),
        ("Annotated[str, Doc(", "Annotated[bytes, Doc("),
    ):
        assert not python_surface("m.py", after_import, after_import.replace(old, new), module="m").prose_only


def test_an_option_name_or_a_key_passed_to_a_call_is_no_message():
    # `--out-path` → `--out-dir` in add_argument read as "only messages change": two words by TWO_WORDS, but
    # no space between them; a name a program reads (an option, a media type, a key), never a message
    before = (
        'import argparse\n\np = argparse.ArgumentParser()\np.add_argument("--out-path", "-o", default=None)\n'
    )
    for old, new in [("--out-path", "--out-dir"), ("default=None", 'default="text/plain"')]:
        assert not python_surface("cli.py", before, before.replace(old, new), module="cli").prose_only
    before = 'log.info("max-tokens", extra={})\nresponse.headers.set("content-type", "text/event-stream")\n'
    after = before.replace("max-tokens", "max-new-tokens").replace("event-stream", "plain")
    assert not python_surface("srv.py", before, after, module="srv").prose_only
    # words with spaces between them passed to a call are still a message
    said = 'raise ValueError("the value is out of range")\n'
    assert python_surface("v.py", said, said.replace("out of range", "too large"), module="v").prose_only


BLOCKS = """def run(items, log):
    for item in items:
        if item.ready:
            log("item is ready to go")
            item.start()
        else:
            item.wait()
    try:
        items.close()
    except OSError:
        log("could not close the items")
    finally:
        log("all done here")
"""


def _same_text(before: str, after: str) -> bool:
    def version(text: str) -> same_code_module.Version:
        return same_code_module.Version(ast.parse(text), text.split("\n"), lambda node: node)

    return same_code_module.same_code(version(before), version(after))


@pytest.mark.parametrize(
    "old, new, same",
    [
        ('log("item is ready to go")', 'log("the item is ready")', True),  # a message inside if inside for
        ('log("all done here")', 'log("everything is done")', True),  # in a finally block
        ("item.start()", "item.begin()", False),
        ("item.wait()", "item.wait(1)", False),  # in an else block
        ("items.close()", "items.close(force=True)", False),
        ("except OSError:", "except ValueError:", False),  # a handler's own fields
        ("if item.ready:", "if item.done:", False),  # a block's condition
        ("            item.wait()\n", "            item.wait()\n            item.log()\n", False),
    ],
)
def test_statements_inside_blocks_are_compared_as_a_body_is(old, new, same):
    assert old in BLOCKS
    assert _same_text(BLOCKS, BLOCKS.replace(old, new)) is same


def test_a_statement_of_equal_text_inside_a_changed_block_is_not_walked(monkeypatch):
    walked: list[int] = []  # the lines of the statements compared node by node
    compare = same_code_module._same

    def counted(x, y, message):  # type: ignore[no-untyped-def]
        if isinstance(x, ast.stmt):
            walked.append(x.lineno)
        return compare(x, y, message)

    monkeypatch.setattr(same_code_module, "_same", counted)
    assert _same_text(BLOCKS, BLOCKS.replace("item is ready to go", "the item is ready"))
    assert walked == [4]  # the message's statement; not `item.start()` beside it, nor the else block
