"""Build options a project built from source offers the people who build it: CMake's `option(NAME "help"
[ON|OFF])`, `cmake_dependent_option(NAME "help" DEFAULT ...)` and `set(NAME value CACHE TYPE "help")`, and
Meson's `option('name', type: ..., value: ...)` (meson_options.txt / meson.options). Users pass them as
`-DNAME=...`: one removed breaks their build command, one added is a new capability, a default changed
changes what every build gets.

Read by line patterns like the other knobs (native_knobs.py): each is one call with literal arguments. A
cache entry `INTERNAL` is no option anyone passes; a variable set without `CACHE` is none either.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

_CMAKE_OPTION = re.compile(
    r"^[ \t]*(option|cmake_dependent_option)[ \t]*\([ \t\n]*([A-Za-z_][\w]*)[ \t\n]+"
    r"(\"(?:[^\"\\\n]|\\.)*\"|[^\s)\"]+)[ \t\n]*([^\s)\"]*)",
    re.M | re.I,
)
_CMAKE_CACHE = re.compile(
    r"^[ \t]*set[ \t]*\([ \t\n]*([A-Za-z_][\w]*)[ \t\n]+(\"(?:[^\"\\\n]|\\.)*\"|[^\s)\"]+)[ \t\n]+CACHE[ \t\n]+(\w+)",
    re.M | re.I,
)
_MESON_OPTION = re.compile(r"^[ \t]*option[ \t]*\([ \t\n]*'([\w.-]+)'([^)]*)\)", re.M)
_MESON_VALUE = re.compile(r"\bvalue[ \t]*:[ \t]*('[^'\n]*'|\[[^\]]*\]|[\w.-]+)")
_HINT = re.compile(r"(?i)\boption[ \t]*\(|\bCACHE\b")


def is_build_options_file(path: str) -> bool:
    name = posixpath.basename(path).lower()
    return name in ("cmakelists.txt", "meson_options.txt", "meson.options") or name.endswith(".cmake")


def mentions_options(patch: str) -> bool:
    """Whether a diff's changed lines could touch an option (a cheap test before reading the file)."""
    return any(
        line[:1] in "+-" and not line.startswith(("+++", "---")) and _HINT.search(line)
        for line in patch.splitlines()
    )


def build_options(text: str, path: str) -> Iterator[tuple[str, int, str, str | None]]:
    """(name as users pass it, offset, shape, default) of each option declared; `-DNAME` for CMake, `-Dname`
    for Meson (the same flag)."""
    name = posixpath.basename(path).lower()
    if name.startswith("meson"):
        for m in _MESON_OPTION.finditer(text):
            value = _MESON_VALUE.search(m.group(2))
            yield f"-D{m.group(1)}", m.start(1), "meson", value.group(1).strip("'") if value else None
        return
    for m in _CMAKE_OPTION.finditer(text):
        # an option given no value defaults to OFF; a dependent option's value is its default
        fallback = "OFF" if m.group(1).lower() == "option" else None
        default = m.group(4) or fallback
        yield f"-D{m.group(2)}", m.start(2), "cmake:BOOL", _bool(default)
    for m in _CMAKE_CACHE.finditer(text):
        kind = m.group(3).upper()
        if kind != "INTERNAL":
            yield f"-D{m.group(1)}", m.start(1), f"cmake:{kind}", m.group(2).strip('"')


def _bool(value: str | None) -> str | None:
    """CMake's true and false constants read as one value each (`ON`/`TRUE`/`YES`/`1`, `OFF`/`FALSE`/...)."""
    if value is None:
        return None
    upper = value.upper()
    if upper in ("ON", "TRUE", "YES", "Y", "1"):
        return "ON"
    if upper in ("OFF", "FALSE", "NO", "N", "0", ""):
        return "OFF"
    return value
