"""Readers of a Python diff's lines for what the code does to other packages in the users' process: a path
that now runs by the installed version of a dependency (`if not is_torch_equal_or_newer("2.8.0"):`,
`if lib.__version__ < "0.46.1":`), and another library's settings changed at run time (`lib.config.patch(
"enable_x", False)`, `jax.config.update("jax_enable_x64", True)`, `logging.getLogger("httpx").setLevel(...)`).
The rubric's signals (signals.py) decide what each weighs. A statement only moved (the same on the removed side
of any of the commit's patches: a module split takes its checks along) is neither.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from analysis.heuristic.facts import Diff

# A condition (`if`, `elif`, `while`, `assert`, or a conditional expression) that holds a version literal.
_CONDITION = re.compile(r"^[ \t]*(?:el)?if\b(.+)$|^[ \t]*(?:while|assert)\b(.+)$|\bif\b(.+?)\belse\b", re.M)
_VERSION = re.compile(r"""(["'])v?(\d+\.\d+(?:[.\w+-]*))\1""")
# What says the literal is a version compared: the word, or a helper named for it (`is_x_equal_or_newer`,
# `x_version_at_least`); `if mode == "1.0"` compares a value, not an installed version.
_COMPARES = re.compile(r"version|newer|older|at_least|at_most", re.IGNORECASE)
# Python's own version: continuous integration runs every supported one (a test matrix), while a dependency is
# pinned there to one version and its other versions first meet the new path on users' machines.
_PYTHON = re.compile(r"python|version_info|\bPY\d|\bPY_", re.IGNORECASE)
# Naming the dependency: `lib.__version__`, `version("lib")`, or a helper's name without its comparing words.
_DUNDER_VERSION = re.compile(r"([A-Za-z_]\w*)\.__version__")
_METADATA_VERSION = re.compile(r"""\bversion\(\s*["']([\w.-]+)["']\s*\)""")
_CALL = re.compile(r"([A-Za-z_]\w*)\s*\(")
_COMPARING_WORDS = frozenset(
    {"is", "equal", "or", "newer", "older", "than", "version", "versions", "at", "least", "most", "greater"}
    | {"less", "ge", "gt", "le", "lt", "get", "check", "min", "max", "before", "since", "has", "supports"}
)


def version_gates(diffs: Iterable[Diff]) -> list[str]:
    """The dependencies whose installed version a condition added to these patches now tests, each with the
    version it compares against (`torch 2.8.0`; `2.8.0` where the code does not name it); not Python's own
    version, and not a condition only moved or reformatted (the same dependency and version removed)."""
    diffs = list(diffs)
    mine = [d for d in diffs if _VERSION.search(d.added)]
    if not mine:
        return []
    before = {g for d in diffs if _VERSION.search(d.removed) for g in _gates(d.removed)}
    return list(dict.fromkeys(g for d in mine for g in _gates(d.added) if g not in before))


def _gates(text: str) -> list[str]:
    found = []
    for match in _CONDITION.finditer(text):
        condition = next(g for g in match.groups() if g is not None)
        condition = condition.split("#", 1)[0]
        versions = _VERSION.findall(condition)
        if not versions or _PYTHON.search(condition) or not _COMPARES.search(_VERSION.sub("", condition)):
            continue
        name = _dependency(condition)
        found += [f"{name} {v}" if name else v for _, v in versions]
    return found


def _dependency(condition: str) -> str | None:
    named = _DUNDER_VERSION.search(condition) or _METADATA_VERSION.search(condition)
    if named:
        return named[1]
    for call in _CALL.findall(condition):
        words = [w for w in call.lower().split("_") if w and w not in _COMPARING_WORDS]
        if len(words) == 1 and call.lower() != words[0]:  # `is_torch_equal_or_newer`, not a bare `Version`
            return words[0]
    return None


# Another library's settings object patched or set by name: `<lib>.config.patch(...)` (a context manager or
# decorator), `<lib>.config.update("name", value)` / `.set(name=value)`; not an object of the code's own
# (`self.config`, `cls.settings`), and for update/set only with the setting named (a mapping merged into a
# local object's config is data, not a library's switch).
_SETTINGS_CALL = re.compile(
    r"(?<![\w.])(?!self\b|cls\b)([a-z_]\w*(?:\.\w+)*\.(?:config|settings|options))\."
    r"""(?:patch\(\s*(?:["'](\w+)["']|(\w+)\s*=|\*\*)|(?:update|set)\(\s*(?:["'](\w+)["']|(\w+)\s*=(?!=)))"""
)
# A named logger's level or switch: what users see of another library's (or the code's own) logs.
_LOGGER = re.compile(
    r"""getLogger\(\s*["']([\w.-]+)["']\s*\)\.(?:setLevel\(|disabled\s*=(?!=)|propagate\s*=(?!=))"""
)


def foreign_settings(diffs: Iterable[Diff]) -> list[str]:
    """Another library's settings the added lines of these patches change at run time (`lib.config: enable_x`,
    `httpx logger`), not those only moved (the same setting changed on a removed side)."""
    diffs = list(diffs)
    mine = [d for d in diffs if any(w in d.added for w in ("config", "settings", "options", "getLogger"))]
    if not mine:
        return []
    before = {s for d in diffs for s in _settings(d.removed)}
    return list(dict.fromkeys(s for d in mine for s in _settings(d.added) if s not in before))


def _settings(text: str) -> list[str]:
    found = []
    # what each pattern cannot match without: most patches have neither, and a substring test is far cheaper
    if any(f".{w}." in text for w in ("config", "settings", "options")):
        for m in _SETTINGS_CALL.finditer(text):
            name = next((g for g in m.groups()[1:] if g), None)
            found.append(f"{m[1]}: {name}" if name else m[1])
    if "getLogger" in text:
        found += [f"{m[1]} logger" for m in _LOGGER.finditer(text)]
    return found
