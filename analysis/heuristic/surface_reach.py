"""Who a surface change reaches: every user (what they type or install on), the users who import a name
near the package's top, or mostly the package's own callers (a name deep inside); and which environment
variables are switches of the project's own tests and CI.
"""

from __future__ import annotations

from analysis.models import SurfaceChange, SurfaceKind
from analysis.models import module_depth as name_depth

# Who a surface change reaches. What users type (command-line options, environment variables, HTTP
# routes and the fields of their request and response bodies, the runtime versions they install on)
# reaches every user. A name in code reaches the users who
# import it, and they import from near the package's top: a public name in a module at most REACH_DEPTH
# deep (`pkg`, `pkg.mod`, `pkg.sub.mod`) reaches users; deeper (`pkg.a.b.mod`: a model's layers, an
# engine's worker internals) it reaches mostly the package's own callers, and weighs one step less.
REACH_DEPTH = 3
_TYPED_KINDS = frozenset(
    {
        SurfaceKind.OPTION_ADDED,
        SurfaceKind.OPTION_REMOVED,
        SurfaceKind.OPTION_RENAMED,
        SurfaceKind.ENV_ADDED,
        SurfaceKind.ENV_REMOVED,
        SurfaceKind.ENV_RENAMED,
        SurfaceKind.ROUTE_ADDED,
        SurfaceKind.ROUTE_REMOVED,
        SurfaceKind.REGISTRATION_ADDED,
        SurfaceKind.REGISTRATION_REMOVED,
        SurfaceKind.SUPPORT_DROPPED,
        SurfaceKind.SUPPORT_ADDED,
        SurfaceKind.DEPENDENCY_OPTIONAL,
        SurfaceKind.DEPENDENCY_DROPPED,
    }
)
ENV_KINDS = frozenset({SurfaceKind.ENV_ADDED, SurfaceKind.ENV_REMOVED, SurfaceKind.ENV_RENAMED})

# A word of an environment variable's name that makes it a switch of the project's own tests or CI
# (`PKG_TEST_USE_NIGHTLY_WHEEL`, `RUN_SLOW_TESTS`, `PKG_CI_SHARD`): users never set it.
_TEST_WORDS = frozenset({"TEST", "TESTS", "TESTING", "PYTEST", "CI"})


def test_knob(name: str) -> bool:
    return not _TEST_WORDS.isdisjoint(name.upper().split("_"))


def reaches_everyone(change: SurfaceChange) -> bool:
    if change.kind in _TYPED_KINDS or change.api:  # what API clients send or read is typed too
        return True
    depth = module_depth(change)
    return depth is None or depth <= REACH_DEPTH


def module_depth(change: SurfaceChange) -> int | None:
    return name_depth(change.name, change.path)
