"""What a Cargo or npm manifest offers users besides its dependencies: the Cargo features they switch on
(`cargo build --features crate/simd`, `features = ["simd"]` in their own Cargo.toml) and the features every
build gets (`default`), and the import paths an npm package's `exports` map opens (`pkg/testing`).

A feature or an import path removed breaks the builds and imports naming it; one added is a new capability;
the default features changed change what every user gets without asking. Read from the manifest's text,
never run; a manifest that does not parse states nothing.
"""

from __future__ import annotations

import posixpath

from analysis.models import SurfaceChange, SurfaceKind
from analysis.surface.packaging_texts import MAX_PACKAGING_CHARS, json_object, line_of, toml_table


def manifest_changes(path: str, before: str | None, after: str | None) -> list[SurfaceChange]:
    name = posixpath.basename(path)
    if name == "Cargo.toml":
        return _cargo_features(path, before, after)
    if name == "package.json":
        return _npm_exports(path, before, after)
    return []


def _cargo_features(path: str, before: str | None, after: str | None) -> list[SurfaceChange]:
    old, new = _features(before), _features(after)
    if old is None or new is None:
        return []  # a crate added or removed whole says so by its files; a text that does not parse, nothing
    crate = _crate(after) or _crate(before)
    shown = (lambda f: f"{crate}/{f}") if crate else (lambda f: f)
    out = [
        SurfaceChange(SurfaceKind.OPTION_REMOVED, shown(f), path, line_of(before, f))
        for f in sorted(old.keys() - new.keys() - {"default"})
    ]
    out += [
        SurfaceChange(SurfaceKind.OPTION_ADDED, shown(f), path, line_of(after, f))
        for f in sorted(new.keys() - old.keys() - {"default"})
    ]
    old_default, new_default = old.get("default", []), new.get("default", [])
    if sorted(old_default) != sorted(new_default):
        out.append(
            SurfaceChange(
                SurfaceKind.DEFAULT_CHANGED,
                shown("default"),
                path,
                line_of(after, "default"),
                old=", ".join(old_default) or "none",
                new=", ".join(new_default) or "none",
            )
        )
    return out


def _features(text: str | None) -> dict[str, list[str]] | None:
    """A package's `[features]` ({} without one); None without a `[package]` (a workspace root's features are
    no package's) or for a text that cannot be read."""
    if not text or len(text) > MAX_PACKAGING_CHARS or not toml_table(text, "package"):
        return None
    table = toml_table(text, "features")
    return {str(k): [str(x) for x in v] if isinstance(v, list) else [] for k, v in table.items()}


def _crate(text: str | None) -> str:
    value = toml_table(text, "package").get("name") if text else None
    return value if isinstance(value, str) else ""


def _npm_exports(path: str, before: str | None, after: str | None) -> list[SurfaceChange]:
    old, new = _subpaths(before), _subpaths(after)
    if old is None or new is None:
        return []
    package = _npm_name(after) or _npm_name(before)
    shown = lambda sub: f"{package}{sub[1:]}" if package else sub  # "./testing" → "pkg/testing"  # noqa: E731
    out = [
        SurfaceChange(SurfaceKind.REMOVED, shown(s), path, line_of(before, f'"{s}"'))
        for s in sorted(old - new)
    ]
    out += [
        SurfaceChange(SurfaceKind.ADDED, shown(s), path, line_of(after, f'"{s}"')) for s in sorted(new - old)
    ]
    return out


def _subpaths(text: str | None) -> set[str] | None:
    """The subpaths of a package's `exports` map ("." and "./x"); None when it has no map of subpaths (a
    single target, conditions only, or no `exports`: then every file is importable, as before or after)."""
    data = _json(text)
    exports = data.get("exports") if data else None
    if not isinstance(exports, dict):
        return None
    keys = {str(k) for k in exports}
    if not keys or not all(k.startswith(".") for k in keys):
        return None  # conditions ("import", "require") of the package's one entry
    return keys


def _npm_name(text: str | None) -> str:
    data = _json(text)
    value = data.get("name") if data else None
    return value if isinstance(value, str) else ""


def _json(text: str | None) -> dict | None:
    return None if text and len(text) > MAX_PACKAGING_CHARS else json_object(text)
