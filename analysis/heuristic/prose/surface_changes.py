"""Surface changes in words: `describe` in the lists ("renames config field `a` → `b` (no alias)"),
`brief` in the reason line (names as users type them, values only when short literals)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from analysis.heuristic.phrases import t
from analysis.heuristic.prose.wording import MAX_ITEMS, code_span, num
from analysis.models import (
    BREAKING_KINDS,
    DEPENDENCY_KINDS,
    MODULE_KINDS,
    UNALIASED_KINDS,
    SurfaceChange,
    SurfaceKind,
    user_name,
)
from analysis.text import one_line


def changes_text(changes: Iterable[SurfaceChange], lang: str) -> str:
    """Up to three surface changes in words, then how many more (the same words said once: a dropped
    Python version is found in `requires-python` and in the classifiers alike)."""
    values = list(dict.fromkeys(describe(c, lang) for c in changes))
    shown = values[:MAX_ITEMS]
    text = t(lang, "list_sep").join(shown)
    if len(values) > MAX_ITEMS:
        text += t(lang, "more", total=num(len(values)), rest=num(len(values) - MAX_ITEMS))
    return text


_RENAMES = frozenset(
    {SurfaceKind.RENAMED, SurfaceKind.FIELD_RENAMED, SurfaceKind.PARAM_RENAMED}
    | {SurfaceKind.OPTION_RENAMED, SurfaceKind.ENV_RENAMED}
)
# A lifted guard's condition longer than this is not quoted (the name says where to look).
_MAX_CHECK = 80
_SHORT_VALUE = re.compile(r"""-?[\w.+-]{1,16}|(["'])[^"'\n]{0,14}\1""")


def brief(change: SurfaceChange, lang: str) -> str:
    """One surface change as the reason line states it: the name as users type it (`Class.method(arg)`, not
    the module path), values only when they are short literals, never a code expression."""

    def shown(value: str) -> str:
        return user_name(value, change.path)

    name = code_span(shown(change.name))
    kind = change.kind
    if kind == SurfaceKind.SWITCH_FLIPPED and change.new is None:
        return t(lang, "surface_guard_lifted", name=name)
    if kind in MODULE_KINDS:  # the import path is the change: said whole
        old, new = change.old or change.name, change.new or change.name
        text = t(
            lang, f"surface_{kind.value}", name=code_span(change.name), old=code_span(old), new=code_span(new)
        )
    elif kind in _RENAMES:
        old, new = change.old or "", change.new or ""
        # in one module users type the short names; a move to another module is said whole on both sides
        if kind == SurfaceKind.RENAMED and _module(old, shown(old)) == _module(new, shown(new)):
            old, new = shown(old), shown(new)
        text = t(lang, f"surface_{kind.value}", old=code_span(old), new=code_span(new))
    elif kind in _VALUE_KINDS:
        old, new = _value(change.old, change), _value(change.new, change)
        # ranges stated without their environment markers: one changed only in its marker reads `X` → `X`
        if old is None or new is None or old == new:
            return t(lang, f"surface_{kind.value}_bare", name=name)
        text = t(lang, f"surface_{kind.value}", name=name, old=code_span(old), new=code_span(new))
        if kind == SurfaceKind.SWITCH_FLIPPED:
            text += f": {code_span(old)} → {code_span(new)}"
    else:
        text = t(lang, f"surface_{kind.value}", name=name, old=name, new=code_span(change.new or "?"))
    if change.kind in BREAKING_KINDS and change.kind not in UNALIASED_KINDS:
        text += t(lang, "alias_kept" if change.aliased else "no_alias")
    return text


def _module(name: str, short: str) -> str:
    """What user_name dropped of a name: its module path."""
    return name[: len(name) - len(short)] if name.endswith(short) else name


def _value(value: str | None, change: SurfaceChange) -> str | None:
    """A value short and plain enough to state: a literal, or a requirement's version range."""
    if value is None:
        return None
    if change.kind in DEPENDENCY_KINDS:
        spec = value[len(change.name) :] if value.lower().startswith(change.name.lower()) else value
        spec = spec.split(";", 1)[0].strip(" @")
        return spec if 0 < len(spec) <= 24 else None
    return value if _SHORT_VALUE.fullmatch(value) else None


# Kinds stated with their values before and after, when short.
_VALUE_KINDS = (
    SurfaceKind.DEFAULT_CHANGED,
    SurfaceKind.SWITCH_FLIPPED,
    SurfaceKind.DEPENDENCY_CHANGED,
    SurfaceKind.BASES_CHANGED,
)
_FIELD_KINDS = frozenset({SurfaceKind.FIELD_ADDED, SurfaceKind.FIELD_REMOVED, SurfaceKind.FIELD_RENAMED})


def describe(change: SurfaceChange, lang: str) -> str:
    """One surface change in words: "renames config field `a` → `b` (no alias)"."""
    # a guard lifted: say which check went
    if change.kind == SurfaceKind.SWITCH_FLIPPED and change.new is None:
        if change.old and len(one_line(change.old)) <= _MAX_CHECK:
            return t(
                lang, "surface_guard_lifted_check", name=code_span(change.name), old=code_span(change.old)
            )
        return t(lang, "surface_guard_lifted", name=code_span(change.name))
    key = f"surface_{change.kind.value}"
    if change.kind in _FIELD_KINDS and change.path and not change.path.endswith((".py", ".pyi")):
        # a struct's field or an enum's member of a C++, Rust, Go or TypeScript API: no configuration
        key = key.replace("_field_", "_member_")
    text = t(
        lang,
        key,
        name=code_span(change.name),
        old=code_span(change.old or change.name),
        new=code_span(change.new or "?"),
    )
    if change.kind == SurfaceKind.SWITCH_FLIPPED and change.old is not None and change.new is not None:
        text += f": {code_span(change.old)} → {code_span(change.new)}"
    if change.kind in BREAKING_KINDS and change.kind not in UNALIASED_KINDS:
        text += t(lang, "alias_kept" if change.aliased else "no_alias")
    return text
