"""C/C++ headers written with macros a syntax tree cannot read, rewritten line for line into what they stand
for, so that the file parses and its names keep their lines (a header that does not parse cleanly yields no
names, analysis/surface/other_langs.py):
- namespaces opened and closed by macros (`PYBIND11_NAMESPACE_BEGIN(detail)`, `FMT_BEGIN_NAMESPACE`,
  `NLOHMANN_JSON_NAMESPACE_END`, `GOOGLE_PROTOBUF_NAMESPACE_OPEN`) become the namespaces they open and close;
- a line that is only an upper-case macro call with no semicolon (`PYBIND11_OBJECT_DEFAULT(slice, object, C)` in
  a class body, `FOO_DEPRECATED("use bar")` above a function) declares what the preprocessor makes of it,
  which the tree cannot see: it becomes a comment, so a deprecation macro still marks the declaration below.
Pure: text in, text out.
"""

from __future__ import annotations

import re

# A line that is only such a macro: its name says it opens or closes a namespace; an argument, when it has
# one, names the namespace (a `detail` one is private: other_langs._PRIVATE_NAMESPACES).
_MACRO = r"[A-Z_][A-Z0-9_]{{0,60}}?(?:NAMESPACE_{verb}|{verb}_NAMESPACE)[A-Z0-9_]{{0,30}}"
_TAIL = r"[ \t]*(?:\([ \t]*(\w{1,60})?[ \t]*\))?[ \t]*;?[ \t]*(?://[^\n]*)?$"
_OPEN = re.compile(r"^([ \t]*)(" + _MACRO.format(verb="(?:BEGIN|START|OPEN)") + ")" + _TAIL, re.M)
_CLOSE = re.compile(r"^([ \t]*)(" + _MACRO.format(verb="(?:END|STOP|CLOSE)") + ")" + _TAIL, re.M)
# An upper-case macro's call alone on its line, its arguments closed on it, no semicolon after.
_CALL_LINE = re.compile(r"^([ \t]*)([A-Z][A-Z0-9]*_[A-Z0-9_]{1,60}[ \t]*\([^;{}\n]{0,300}\))[ \t]*$", re.M)


def plain_cpp(text: str) -> str:
    text = _OPEN.sub(lambda m: f"{m.group(1)}namespace {m.group(3) or m.group(2)} {{", text)
    text = _CLOSE.sub(lambda m: f"{m.group(1)}}}", text)
    return _CALL_LINE.sub(lambda m: f"{m.group(1)}// {m.group(2)}", text)
