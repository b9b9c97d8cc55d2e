"""A Python text in newer syntax than the running interpreter parses, rewritten into the syntax it does parse,
so that a repository written for Python 3.12+ keeps its surface facts on the 3.11 we run on.

Only the headers the newer grammar changed are rewritten, each within its own line, so every line number stays
the file's and what is declared stays what the tree shows:

- type parameter lists (PEP 695, 3.12; their defaults, PEP 696, 3.13): `def f[T](x: T)`, `class C[T](B)`
  become `def f   (x: T)`, `class C   (B)` (the brackets blanked; what the parameters are named and typed
  with is untouched);
- type alias statements (PEP 695): `type Pair[T] = tuple[T, T]` becomes `Pair          = tuple[T, T]`: the
  alias is a module-level name like any other;
- `except` with several exception types and no parentheses (PEP 758, 3.14): `except A, B:` becomes
  `except (A, B):`.

Used only on a text that did not parse as it is (shared_parse.parse): a text the interpreter reads is never
touched, and a rewrite that still does not parse fails as the text did. 3.12 f-strings and template strings
are newer_strings.py's. Not covered (left unparsed, as before): a type parameter list over several lines.
"""

from __future__ import annotations

import re

# `def name[` / `class name[`: a type parameter list opens right after the name.
_GENERIC_HEADER = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w+[ \t]*(?=\[)", re.M)
# `type Name = …` / `type Name[T] = …` at the start of a statement (`type` is a soft keyword: `type = 1`
# and `type(x)` do not match).
_TYPE_ALIAS = re.compile(r"^([ \t]*)type[ \t]+(\w+)[ \t]*(\[[^\]\n]*\])?[ \t]*(?==(?!=))", re.M)
# `except A, B:` / `except* A, B:` (no `as`: PEP 758 allows none without parentheses).
_BARE_EXCEPT_TUPLE = re.compile(r"^([ \t]*except\*?)[ \t]+(?!\()([^:#\n]+?,[^:#\n]*?)[ \t]*:", re.M)


def downlevel(text: str) -> str:
    """The text with the newer headers above rewritten (the same text when it has none)."""
    text = _blank_type_parameters(text)
    text = _TYPE_ALIAS.sub(_alias_as_assignment, text)
    return _BARE_EXCEPT_TUPLE.sub(r"\1 (\2):", text)


def _blank_type_parameters(text: str) -> str:
    out: list[str] = []
    at = 0
    for m in _GENERIC_HEADER.finditer(text):
        opened = m.end()
        closed = _closing_bracket(text, opened)
        if closed is None:  # over several lines, or unbalanced: left as it is
            continue
        out += [text[at:opened], " " * (closed + 1 - opened)]
        at = closed + 1
    out.append(text[at:])
    return "".join(out)


def _closing_bracket(text: str, opened: int) -> int | None:
    """Where the `[` at `opened` is closed on its own line (nested brackets counted), else None."""
    depth = 0
    for i in range(opened, len(text)):
        char = text[i]
        if char == "\n":
            return None
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
            if depth == 0:
                return i if char == "]" else None
    return None


def _alias_as_assignment(m: re.Match[str]) -> str:
    # `type Name[T] ` → `Name` padded to the same width: the `=` and the value keep their columns
    return m.group(1) + m.group(2).ljust(len(m.group(0)) - len(m.group(1)))
