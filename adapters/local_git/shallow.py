"""Shallow clones: where a repository's `shallow` file is, and the one window a shallow clone cannot read at
all (the branch's line ends at the cut, after the window: an empty list would read as a quiet day)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from analysis.errors import SourceError


def common_dir(git_dir: Path) -> Path:
    """Where a repository's shared files are (`shallow` among them): a linked work tree's git dir names
    it in its `commondir` file, as git itself reads it."""
    try:
        pointer = (git_dir / "commondir").read_text("utf-8").strip()
    except OSError:
        return git_dir
    return (git_dir / pointer).resolve() if pointer else git_dir


def refuse_window_past_cut(
    repo: str, walked: list[tuple[int, str]], cut: frozenset[str], start: datetime, end: datetime
) -> None:
    """Raise SourceError when the first-parent walk (committer Unix time, sha; newest first) ended at a
    commit of the cut dated at or after the window's end: every commit of the window is one the clone lacks.
    A cut inside the window is left to the warning (`LocalGitSource._shallow_cut`)."""
    if not walked or walked[-1][1] not in cut or walked[-1][0] < end.timestamp():
        return
    begins = datetime.fromtimestamp(walked[-1][0], UTC)
    since = start.astimezone(UTC) - timedelta(days=1)
    raise SourceError(
        f"{repo} is a shallow clone whose history of this branch starts at {begins:%Y-%m-%d %H:%M} UTC, after "
        f"{start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M} {start.tzname()}: fetch that far back in the clone"
        f" (git fetch --shallow-since={since:%Y-%m-%d}, or git fetch --unshallow)"
    )
