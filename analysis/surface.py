"""What a change does to its users: the public names, parameters, defaults, options, switches and
routes a commit adds, removes or changes (DESIGN.md §3c).

These are the facts the impact score, the reason line, the Compatibility insight, the LLM prompt and
thread answers read. They are found by parsing each touched file before and after the commit; the
sources read the files, this package only looks at text. A commit whose files were not read has
`Commit.surface is None`; one read with nothing user-facing found has an empty tuple.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class SurfaceKind(StrEnum):
    ADDED = "added"  # a public function, class, method or constant
    REMOVED = "removed"
    RENAMED = "renamed"
    PARAM_ADDED = "param_added"
    PARAM_REMOVED = "param_removed"
    PARAM_RENAMED = "param_renamed"
    PARAM_REORDERED = "param_reordered"  # also: a positional parameter inserted before existing ones
    PARAM_REQUIRED = "param_required"  # a new parameter without a default, or a default taken away
    DEFAULT_CHANGED = "default_changed"  # a value that really changed, not the same value retyped
    FIELD_ADDED = "field_added"  # a configuration field: dataclass, pydantic model, TypedDict
    FIELD_REMOVED = "field_removed"
    FIELD_RENAMED = "field_renamed"
    OPTION_ADDED = "option_added"  # a command-line option (argparse, click, typer)
    OPTION_REMOVED = "option_removed"
    OPTION_RENAMED = "option_renamed"
    ENV_ADDED = "env_added"  # an environment variable read
    ENV_REMOVED = "env_removed"
    ENV_RENAMED = "env_renamed"
    DEPRECATION = "deprecation"  # a deprecation warning added
    SWITCH_FLIPPED = "switch_flipped"  # enable_* / *_disabled flipped, a guard that now lets a path run
    ROUTE_ADDED = "route_added"  # an HTTP route
    ROUTE_REMOVED = "route_removed"
    RAISES = "raises"  # an exception newly raised on a public path
    SUPPORT_DROPPED = "support_dropped"  # a supported runtime version dropped (requires-python, classifiers)
    # What the distribution depends on (analysis/packaging.py): runtime and optional requirements only,
    # never a tool section, a dev group or a coverage list. Neither breaking nor a feature by itself.
    DEPENDENCY_ADDED = "dependency_added"
    DEPENDENCY_REMOVED = "dependency_removed"
    DEPENDENCY_CHANGED = "dependency_changed"  # its version range changed


# Kinds that break a user's code or command line unless an alias keeps the old name working.
BREAKING_KINDS = frozenset(
    {
        SurfaceKind.REMOVED,
        SurfaceKind.RENAMED,
        SurfaceKind.PARAM_REMOVED,
        SurfaceKind.PARAM_RENAMED,
        SurfaceKind.PARAM_REORDERED,
        SurfaceKind.PARAM_REQUIRED,
        SurfaceKind.FIELD_REMOVED,
        SurfaceKind.FIELD_RENAMED,
        SurfaceKind.OPTION_REMOVED,
        SurfaceKind.OPTION_RENAMED,
        SurfaceKind.ENV_REMOVED,
        SurfaceKind.ENV_RENAMED,
        SurfaceKind.ROUTE_REMOVED,
        SurfaceKind.SUPPORT_DROPPED,
    }
)
# Kinds that give users something new.
FEATURE_KINDS = frozenset(
    {
        SurfaceKind.ADDED,
        SurfaceKind.PARAM_ADDED,
        SurfaceKind.FIELD_ADDED,
        SurfaceKind.OPTION_ADDED,
        SurfaceKind.ENV_ADDED,
        SurfaceKind.ROUTE_ADDED,
    }
)
# Kinds that change what existing users get without changing a name.
BEHAVIOUR_KINDS = frozenset(
    {SurfaceKind.DEFAULT_CHANGED, SurfaceKind.SWITCH_FLIPPED, SurfaceKind.RAISES, SurfaceKind.DEPRECATION}
)
DEPENDENCY_KINDS = frozenset(
    {SurfaceKind.DEPENDENCY_ADDED, SurfaceKind.DEPENDENCY_REMOVED, SurfaceKind.DEPENDENCY_CHANGED}
)


@dataclass(slots=True)
class FileTexts:
    """What a source read for the surface: text by (commit sha, path), None when that commit has no such
    file; `skipped` were there but not read (binary, over the size cap). A pair in neither was not read
    at all (a request budget spent, a failure): the commits that needed it get no facts."""

    texts: dict[tuple[str, str], str | None]
    skipped: set[tuple[str, str]]

    def read(self, key: tuple[str, str]) -> bool:
        return key in self.texts or key in self.skipped


@dataclass(frozen=True, slots=True)
class SurfaceChange:
    kind: SurfaceKind
    name: str  # what users call it: "pkg.mod.Class.method", "--max-batch", "APP_TIMEOUT", "GET /v1/models"
    path: str  # the file it was found in
    line: int | None = None  # in the new file; in the old file for a removal
    old: str | None = None  # the old name or value (renames, changed defaults)
    new: str | None = None  # the new name or value
    aliased: bool = False  # a deprecation alias or shim keeps the old name working

    @property
    def breaking(self) -> bool:
        return self.kind in BREAKING_KINDS and not self.aliased

    @property
    def feature(self) -> bool:
        return self.kind in FEATURE_KINDS

    @property
    def behaviour(self) -> bool:
        return self.kind in BEHAVIOUR_KINDS


_WORDS = {
    SurfaceKind.ADDED: "added",
    SurfaceKind.REMOVED: "removed",
    SurfaceKind.RENAMED: "renamed",
    SurfaceKind.PARAM_ADDED: "parameter added",
    SurfaceKind.PARAM_REMOVED: "parameter removed",
    SurfaceKind.PARAM_RENAMED: "parameter renamed",
    SurfaceKind.PARAM_REORDERED: "positional parameters moved",
    SurfaceKind.PARAM_REQUIRED: "parameter now required",
    SurfaceKind.DEFAULT_CHANGED: "default changed",
    SurfaceKind.FIELD_ADDED: "field added",
    SurfaceKind.FIELD_REMOVED: "field removed",
    SurfaceKind.FIELD_RENAMED: "field renamed",
    SurfaceKind.OPTION_ADDED: "command-line option added",
    SurfaceKind.OPTION_REMOVED: "command-line option removed",
    SurfaceKind.OPTION_RENAMED: "command-line option renamed",
    SurfaceKind.ENV_ADDED: "environment variable added",
    SurfaceKind.ENV_REMOVED: "environment variable no longer read",
    SurfaceKind.ENV_RENAMED: "environment variable renamed",
    SurfaceKind.DEPRECATION: "deprecation warning added",
    SurfaceKind.SWITCH_FLIPPED: "switch flipped",
    SurfaceKind.ROUTE_ADDED: "HTTP route added",
    SurfaceKind.ROUTE_REMOVED: "HTTP route removed",
    SurfaceKind.RAISES: "newly raises",
    SurfaceKind.SUPPORT_DROPPED: "support dropped",
    SurfaceKind.DEPENDENCY_ADDED: "dependency added",
    SurfaceKind.DEPENDENCY_REMOVED: "dependency removed",
    SurfaceKind.DEPENDENCY_CHANGED: "dependency range changed",
}


def describe(change: SurfaceChange) -> str:
    """One plain line for a fact, in English: "field renamed: pkg.Config.b (a → b); no alias at
    pkg/config.py:12". The names are the code's own (untrusted text: the renderer escapes them)."""
    text = f"{_WORDS[change.kind]}: {change.name}"
    if change.old is not None and change.new is not None:
        text += f" ({change.old} → {change.new})"
    elif change.old is not None:
        text += f" (was {change.old})"
    elif change.new is not None and change.new != change.name:
        text += f" ({change.new})"
    if change.kind in BREAKING_KINDS and change.kind != SurfaceKind.SUPPORT_DROPPED:
        text += "; an alias keeps the old form working" if change.aliased else "; no alias"
    where = f"{change.path}:{change.line}" if change.line else change.path
    return f"{text} at {where}"
