"""Readers of a diff's lines for the settings users get: literal defaults given in code or configuration
(`x = 1`, `key: 1`, `default=1`, `getenv("X", 1)`), keys read with a default from a mapping of options,
literals given under a setting's `is None` guard, one-line lists of supported values, and boolean switches.
The rubric's signals (signals.py) decide what a change among them weighs.
"""

from __future__ import annotations

import re

from analysis.heuristic.facts import Diff

_ASSIGN = re.compile(
    r"^[ \t]*(?:self\.)?([A-Za-z_][\w.-]*)[ \t]*(?::[^=\n]{1,80})?=(?!=)[ \t]*(.+?)[ \t]*,?[ \t]*$", re.M
)
_MAPPING = re.compile(r"^[ \t]*[\"']?([\w.-]+)[\"']?[ \t]*:[ \t]*(.+?)[ \t]*,?[ \t]*$", re.M)
_DEFAULT_KW = re.compile(r"\bdefault[ \t]*=[ \t]*([^,)\n]+)")
_ENV_DEFAULT = re.compile(r"(?:getenv|environ\.get)\(\s*[\"']([\w.-]+)[\"']\s*,\s*([^)\n]+)\)")
_LITERAL = re.compile(
    r"^(-?[\d_]+(\.[\d_]+)?([eE]-?\d+)?|True|False|None|true|false|null|nil|\"[^\"]*\"|'[^']*'|"
    r"[A-Za-z_][\w]*\.[A-Z][A-Z0-9_]*)$"
)

# A string of several words is prose (a help text, a message), not a setting: fixing a typo in it
# changes no default. Keys that name text are skipped for the same reason.
_PROSE = re.compile(r"""^(["'])[^"'\n]*\s\S+\s[^"'\n]*\1$""")
_TEXT_KEY = re.compile(
    r"(?:^|[_.-])(?:help|description|desc|doc|docs|docstring|message|msg|text|title|label|hint|comment|example|usage)$",
    re.IGNORECASE,
)


def _defaults(text: str, config_module: bool) -> dict[str, list[str]]:
    """Literal values given to defaults in some lines of code: {name: [value, ...]} in order."""
    found: dict[str, list[str]] = {}
    matches = [(m.group(1), m.group(2)) for m in _ENV_DEFAULT.finditer(text)]
    matches += [("default", m.group(1)) for m in _DEFAULT_KW.finditer(text)]
    if config_module:
        matches += [(m.group(1), m.group(2)) for m in _ASSIGN.finditer(text)]
        matches += [(m.group(1), m.group(2)) for m in _MAPPING.finditer(text)]
    for key, value in matches:
        value = value.strip()
        if _LITERAL.match(value) and not _PROSE.match(value) and not _TEXT_KEY.search(key):
            found.setdefault(key, []).append(value)
    return found


def changed_defaults(diff: Diff, config_module: bool) -> list[str]:
    removed, added = _defaults(diff.removed, config_module), _defaults(diff.added, config_module)
    names = []
    for key, old_values in removed.items():
        new_values = added.get(key, [])
        # Same names on both sides, value changed. A different count means options were added or
        # removed, not a default changed.
        if len(new_values) != len(old_values):
            continue
        for old, new in zip(old_values, new_values, strict=True):
            if not same_value(old, new):
                names.append(f"{key}: {old} → {new}" if key != "default" else f"default {old} → {new}")
                break
    return names


def same_value(old: str, new: str) -> bool:
    """Two literals that mean the same value: `0.0` and `"0.0"` (a number retyped as the string a
    parser reads it from), `1e3` and `1000`, `True` and `true`."""
    a, b = (v.strip().strip("\"'").strip().lower() for v in (old, new))
    if a == b:
        return True
    try:
        return float(a.replace("_", "")) == float(b.replace("_", ""))
    except ValueError:
        return False


# `additional_config.get("enable_x", False)`, `options.get("timeout", 30)`, `settings.pop("mode", "fast")`:
# a setting users pass as a key of a configuration mapping, read with its default, the mapping's name saying so.
_MAPPING_READ = re.compile(
    r"\b([A-Za-z_]*(?i:config|configs|cfg|conf|options|opts|settings))\s*\.\s*(?:get|pop)\(\s*"
    r"""(["'])([A-Za-z_][\w.-]{0,80})\2\s*(?:,\s*([^(),\n]{1,80}?))?\s*\)"""
)

# A default given where a setting was left unset: `if cache_config.block_size is None:` then
# `cache_config.block_size = 128` on the next line. The patch shows the guard as the changed line's context.
_UNSET_GUARD = re.compile(r"^ [ \t]*if\s+([A-Za-z_][\w.]*)\s+is\s+None\s*:\s*$")
_LITERAL_SET = re.compile(
    r"^[-+][ \t]*([A-Za-z_][\w.]*)\s*=\s*(-?[\d.]+(?:e-?\d+)?|True|False|\"[^\"\n]{0,40}\"|'[^'\n]{0,40}')\s*$"
)


def _guarded_defaults(patch: str) -> list[str]:
    """Literals assigned to a setting right under its `is None` guard that changed: `target: old → new`."""
    out: list[str] = []
    guard: str | None = None
    removed: dict[str, str] = {}
    for line in patch.split("\n"):
        if line.startswith(" "):
            found = _UNSET_GUARD.match(line)
            guard, removed = (found.group(1) if found else None), {}
            continue
        literal = _LITERAL_SET.match(line)
        if guard is None or literal is None or literal.group(1) != guard:
            if not line.startswith(("-", "+")):
                guard = None
            continue
        if line.startswith("-"):
            removed[guard] = literal.group(2)
        elif guard in removed and not same_value(removed[guard], literal.group(2)):
            out.append(f"{guard}: {removed[guard]} → {literal.group(2)}")
    return out


_USER_MAPPINGS = ("options", "opts", "settings")


def _mapping_reads(text: str, any_mapping: bool) -> dict[tuple[str, str], list[str]]:
    """{(mapping, key): [the default of each read, "None" when not given]}; `any_mapping` False: only
    mappings named options or settings."""
    found: dict[tuple[str, str], list[str]] = {}
    for m in _MAPPING_READ.finditer(text):
        if not any_mapping and not m.group(1).lower().endswith(_USER_MAPPINGS):
            continue
        found.setdefault((m.group(1), m.group(3)), []).append((m.group(4) or "None").strip())
    return found


# `supported_quantization = ["w8a8", "w4a16"]`, `SUPPORTED_DTYPES = (...)`, `_supported_archs = {...}` on one
# line: what users may ask for. A value taken out no longer works for those who used it.
_SUPPORTED_LIST = re.compile(
    r"^[ \t]*((?:self\.)?[A-Za-z_]*[Ss][Uu][Pp][Pp][Oo][Rr][Tt][Ee][Dd]\w*)[ \t]*(?::[^=\n]{1,80})?=[ \t]*"
    r"(?:frozenset|set|tuple|list)?[ \t]*([\[({][^\n]*[\])}])[ \t]*,?[ \t]*$",
    re.M,
)
_STRING_VALUE = re.compile(r"""(["'])([^"'\n]{1,80})\1""")


def supported_lists(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for m in _SUPPORTED_LIST.finditer(text):
        name = m.group(1)
        if "unsupported" in name.lower() or "not_supported" in name.lower():
            continue
        found[name] = [v for _, v in _STRING_VALUE.findall(m.group(2))]
    return found


# A flag that turns a path on or off: `enable_ep = False` → `True`, `use_cache=True`, `disable_x: bool = ...`.
_SWITCH = re.compile(
    r"(?<![\w.])((?:self\.)?[A-Za-z_]\w*)[ \t]*(?::[^=\n]{1,60})?=(?!=)[ \t]*(True|False|true|false)\b"
)
_BOOLEAN = re.compile(r"True|False|true|false")
_SWITCH_NAME = re.compile(r"enable|disable|allow|support|use_|skip|force", re.IGNORECASE)


def flipped_switches(diff: Diff) -> list[str]:
    """Flags set to the opposite boolean between a diff's removed and added lines: `name: old → new`."""
    if not _BOOLEAN.search(diff.removed) or not _BOOLEAN.search(diff.added):
        return []
    old = {m[1]: m[2].lower() for m in _SWITCH.finditer(diff.removed) if _SWITCH_NAME.search(m[1])}
    new = {m[1]: m[2].lower() for m in _SWITCH.finditer(diff.added) if _SWITCH_NAME.search(m[1])}
    return [f"{name}: {old[name]} → {value}" for name, value in new.items() if old.get(name, value) != value]


def setting_changes(diff: Diff, any_mapping: bool) -> tuple[list[str], list[str]]:
    """The settings a diff's source lines change: defaults changed (under an `is None` guard, or read by key
    with another default from the same mapping: `key: old → new`), and keys read for the first time.
    `any_mapping` False: only mappings named options or settings count."""
    changed = _guarded_defaults(diff.text)
    new_keys: list[str] = []
    old, new = _mapping_reads(diff.removed, any_mapping), _mapping_reads(diff.added, any_mapping)
    for key, defaults in new.items():
        before = old.get(key)
        if before is None:
            new_keys.append(key[1])
        elif len(before) == len(defaults):
            changed += [
                f"{key[1]}: {a} → {b}" for a, b in zip(before, defaults, strict=True) if not same_value(a, b)
            ]
    return changed, new_keys
