"""Readers of a diff's lines for the settings users get: literal defaults given in code or configuration
(`x = 1`, `key: 1`, `default=1`, `getenv("X", 1)`), keys read from a mapping of options (with a default, or
by subscript) and keys renamed where they are read, literals given under a setting's `is None` guard, one-line
lists of supported values, and boolean switches. The rubric's signals (signals.py) decide what a change among
them weighs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

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


_SETTINGS_NAMES = ("config", "configs", "cfg", "conf", "options", "opts", "settings")


class _NamedRead:
    """A read from a mapping whose name (group 1: a word of letters) ends in one of _SETTINGS_NAMES, then
    `rest`. On ASCII text the name is matched as one run of letters whose end is checked by lookbehinds:
    the same matches without trying every name at every letter of every word (half the time on a diff).
    Other text keeps the plain pattern, since case folding there reads more than ASCII (`ſ` as `s`)."""

    def __init__(self, rest: str) -> None:
        names = "|".join(_SETTINGS_NAMES)
        ends = "|".join(f"(?<=(?i:{name}))" for name in _SETTINGS_NAMES)
        self.plain = re.compile(rf"\b([A-Za-z_]*(?i:{names})){rest}")
        self.ascii = re.compile(rf"\b((?>[A-Za-z_]+)(?:{ends})){rest}")

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return (self.ascii if text.isascii() else self.plain).finditer(text)


# `additional_config.get("enable_x", False)`, `options.get("timeout", 30)`, `settings.pop("mode", "fast")`:
# a setting users pass as a key of a configuration mapping, read with its default, the mapping's name saying so.
_MAPPING_READ = _NamedRead(
    r"\s*\.\s*(?:get|pop)\(\s*" r"""(["'])([A-Za-z_][\w.-]{0,80})\2\s*(?:,\s*([^(),\n]{1,80}?))?\s*\)"""
)

# A default given where a setting was left unset: `if cache_config.block_size is None:` then
# `cache_config.block_size = 128` on the next line. The patch shows the guard as the changed line's context.
_UNSET_GUARD = re.compile(r"^ [ \t]*if\s+([A-Za-z_][\w.]*)\s+is\s+None\s*:\s*$")
# The same over a whole patch: one pass tells that no line is such a guard (most patches), and the lines go unread.
_ANY_UNSET_GUARD = re.compile(_UNSET_GUARD.pattern, re.M)
_LITERAL_SET = re.compile(
    r"^[-+][ \t]*([A-Za-z_][\w.]*)\s*=\s*(-?[\d.]+(?:e-?\d+)?|True|False|\"[^\"\n]{0,40}\"|'[^'\n]{0,40}')\s*$"
)


def _guarded_defaults(patch: str) -> list[str]:
    """Literals assigned to a setting right under its `is None` guard that changed: `target: old → new`."""
    out: list[str] = []
    if not _ANY_UNSET_GUARD.search(patch):
        return out
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
    if "get(" not in text and "pop(" not in text:
        return found  # no read with a default (what the pattern needs): the pattern's scan is spared
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


# `config["dynamic_eplb"]`, `options['timeout']`: a key read by subscript (not one assigned: `config["x"] = 1`,
# `config["x"]["y"] = 1`, the target of an assignment, see `_subscripts`).
_SUBSCRIPT_READ = _NamedRead(r"\s*\[\s*" r"""(["'])([A-Za-z_][\w.-]{0,80})\2\s*\]""")
# Where a line's assignment target ends: its first `=` (or augmented `+=`) between blanks, as formatted code
# writes an assignment and never a keyword argument or a comparison.
_ASSIGNED = re.compile(r"[ \t](?:[-+*/|&]|//)?=(?!=)[ \t]")


def _subscripts(line: str) -> list[re.Match[str]]:
    """The subscript reads of a line: those left of its assignment's `=` are written, not read."""
    assigned = _ASSIGNED.search(line)
    end = assigned.start() if assigned else -1
    return [m for m in _SUBSCRIPT_READ.finditer(line) if m.start() > end]


# `os.environ.get("X")`, `os.getenv("X", d)`, `os.environ["X"]`: the environment read as a mapping, for the
# renames of patches the surface step did not parse (it finds environment variables by syntax).
_ENV_READ = re.compile(
    r"""\b(environ)\s*(?:\.\s*(?:get|pop)\(\s*|\[\s*)(["'])([A-Za-z_][\w.-]{0,80})\2"""
    r"""|\b(getenv)\(\s*(["'])([A-Za-z_][\w.-]{0,80})\5"""
)
# What a changed line assigns to: `self.expert_map_path = ...` (pairs a key's old and new reads).
_TARGET = re.compile(r"^[ \t]*((?:self\.)?[A-Za-z_][\w.]*)[ \t]*(?::[^=\n]{1,80})?=(?!=)")


def _key_reads(line: str, any_mapping: bool, env: bool) -> list[tuple[str, str, int, int]]:
    """(mapping, key, start, end) of each key a line reads from a settings mapping (or the environment, `env`),
    start and end spanning the key's quoted literal."""
    found: list[tuple[str, str, int, int]] = []
    if '"' not in line and "'" not in line:  # most lines: no key to read
        return found
    for m in [*_MAPPING_READ.finditer(line), *_subscripts(line)]:
        if any_mapping or m.group(1).lower().endswith(_USER_MAPPINGS):
            found.append((m.group(1), m.group(3), m.start(2), m.end(3) + 1))
    if env:
        for m in _ENV_READ.finditer(line):
            group = 1 if m.group(1) else 4
            found.append(("environ", m.group(group + 2), m.start(group + 1), m.end(group + 2) + 1))
    return found


def renamed_keys(diff: Diff, any_mapping: bool, env: bool = False) -> list[tuple[str, str]]:
    """Keys of a settings mapping renamed where they are read: `cfg.get("old", d)` → `cfg.get("new", d)`,
    `config["old"]` → `config["new"]` (`env`: `os.environ.get("OLD")` → `os.environ.get("NEW")` too), the
    old key read nowhere else in the patch (no fallback, no deprecation naming it). A removed and an added line
    pair when they are the same line but for the key, or assign the same target from the same mapping.
    [(old, new)] in order."""
    # only lines that read a key take part: most patches' removed lines read none, and then nothing was renamed
    removed = [
        (line, reads) for line in diff.removed.split("\n") if (reads := _key_reads(line, any_mapping, env))
    ]
    if not removed:
        return []
    added = [
        (line, reads) for line in diff.added.split("\n") if (reads := _key_reads(line, any_mapping, env))
    ]
    old_keys = {(m, k) for _, reads in removed for m, k, _, _ in reads}
    new_keys = {(m, k) for _, reads in added for m, k, _, _ in reads}
    kept = "\n".join([diff.added, *(line[1:] for line in diff.text.split("\n") if line.startswith(" "))])
    pairs: list[tuple[str, str]] = []
    used: set[tuple[str, str]] = set()
    for old_line, old_reads in removed:
        for mapping, key, start, end in old_reads:
            if (mapping, key) in new_keys or (mapping, key) in used or _quoted(key, kept):
                continue
            new = _paired(old_line, mapping, start, end, added, old_keys | used)
            if new is not None:
                used |= {(mapping, key), (mapping, new)}
                pairs.append((key, new))
    return pairs


def dropped_keys(diff: Diff, any_mapping: bool, still_read: str) -> list[str]:
    """Keys of a settings mapping a patch no longer reads, the key named nowhere in `still_read` (the added and
    context lines of every file of the commit: a read moved to another file is no drop) and not renamed
    (`renamed_keys`): users who set it are silently ignored."""
    if '"' not in diff.removed and "'" not in diff.removed:
        return []
    old = {
        k: None for line in diff.removed.split("\n") for _, k, _, _ in _key_reads(line, any_mapping, False)
    }
    if not old:
        return []
    new = {k for line in diff.added.split("\n") for _, k, _, _ in _key_reads(line, any_mapping, False)}
    renamed = {k for k, _ in renamed_keys(diff, any_mapping)}
    return [k for k in old if k not in new and k not in renamed and not _quoted(k, still_read)]


def _paired(
    old_line: str,
    mapping: str,
    start: int,
    end: int,
    added: list[tuple[str, list[tuple[str, str, int, int]]]],
    taken: set[tuple[str, str]],
) -> str | None:
    """The key an added line reads in place of the removed line's (same mapping, a key not read before)."""
    shape = (old_line[:start] + "\0" + old_line[end:]).strip()
    target = _TARGET.match(old_line)
    for line, reads in added:
        for mapping_new, key, s, e in reads:
            if mapping_new != mapping or (mapping, key) in taken:
                continue
            if (line[:s] + "\0" + line[e:]).strip() == shape:
                return key
            new_target = _TARGET.match(line)
            if target and new_target and target.group(1) == new_target.group(1):
                return key
    return None


def _quoted(key: str, text: str) -> bool:
    return f'"{key}"' in text or f"'{key}'" in text


def setting_changes(diff: Diff, any_mapping: bool) -> tuple[list[str], list[str]]:
    """The settings a diff's source lines change: defaults changed (under an `is None` guard, or read by key
    with another default from the same mapping: `key: old → new`), and keys read for the first time (with a
    default or by subscript). `any_mapping` False: only mappings named options or settings count. A key renamed
    where it is read (`renamed_keys`) is neither."""
    changed = _guarded_defaults(diff.text)
    new_keys: list[str] = []
    old, new = _mapping_reads(diff.removed, any_mapping), _mapping_reads(diff.added, any_mapping)
    read_before = set(old) | set(_subscript_reads(diff.removed, any_mapping))
    for key, defaults in new.items():
        before = old.get(key)
        if before is None:
            if key not in read_before:
                new_keys.append(key[1])
        elif len(before) == len(defaults):
            changed += [
                f"{key[1]}: {a} → {b}" for a, b in zip(before, defaults, strict=True) if not same_value(a, b)
            ]
    new_keys += [
        read[1] for read in _subscript_reads(diff.added, any_mapping) if read not in read_before | set(new)
    ]
    renamed = {new for _, new in renamed_keys(diff, any_mapping)} if new_keys else set()
    return changed, [k for k in dict.fromkeys(new_keys) if k not in renamed]


def _subscript_reads(text: str, any_mapping: bool) -> dict[tuple[str, str], None]:
    """{(mapping, key): None} of the keys read by subscript, in order."""
    return {
        (m.group(1), m.group(3)): None
        for line in text.split("\n")
        if "[" in line
        for m in _subscripts(line)
        if any_mapping or m.group(1).lower().endswith(_USER_MAPPINGS)
    }
