"""Type stubs merged into their modules. A `.pyi` stub describes a module whose code lives beside it in the
`.py`: deleting the stub while the module stays (its declarations merged into the module, or the module now
annotated inline) takes no name from users' imports: what they import is the module's, which the commit's
facts of the `.py` state. Pure: the commit's touched files in, the stubs whose facts say nothing out.
"""

from __future__ import annotations

from collections.abc import Iterable

from analysis.surface.modules import FileVersions


def merged_stubs(files: Iterable[FileVersions]) -> frozenset[str]:
    """The paths of the `.pyi` stubs the commit deletes whose `.py` module it keeps (touched, present after).
    A stub deleted alone is not one: whether its module stays is not known from the commit's files."""
    files = list(files)
    kept = {f.path for f in files if f.path.endswith(".py") and f.after is not None}
    return frozenset(
        f.path
        for f in files
        if f.path.endswith(".pyi") and f.before is not None and f.after is None and f.path[:-1] in kept
    )
