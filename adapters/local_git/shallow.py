"""Shallow clones: where a repository's `shallow` file is, the cut it lists (told once in a warning), and
what a window's first-parent walk says about the cut: a window the clone cannot read at all (the branch's
line ends at the cut, after the window: an empty list would read as a quiet day) is refused; a window the
cut falls inside is remembered, for the digest to say that commits of the day before it may be missing."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

from analysis.errors import SourceError
from analysis.window import shallow_fetch_since

log = logging.getLogger(__name__)

STARTS_KEPT = 64  # windows remembered per source (a long-running service reads a few a day)


def common_dir(git_dir: Path) -> Path:
    """Where a repository's shared files are (`shallow` among them): a linked work tree's git dir names
    it in its `commondir` file, as git itself reads it."""
    try:
        pointer = (git_dir / "commondir").read_text("utf-8").strip()
    except OSError:
        return git_dir
    return (git_dir / pointer).resolve() if pointer else git_dir


class ShallowCut:
    """A clone's shallow cut, read from its `shallow` file at each use (a fetch may deepen or remove it),
    and where the walks of the windows read began inside their window."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._file = common_dir(git_dir) / "shallow"
        self._told = False
        self._starts: dict[tuple[str, float, float], datetime | None] = {}

    def read(self, repo: str) -> frozenset[str]:
        """The commits at the cut (their parents were not fetched); the first time it lists any, one
        warning says what that costs and how to fix it."""
        try:
            cut = frozenset(self._file.read_text("ascii", "replace").split())
        except OSError:  # no such file: not a shallow clone
            return frozenset()
        if cut and not self._told:
            self._told = True
            log.warning(
                "%s is a shallow clone (%s): commits older than its cut are not listed, and the %d "
                "commit(s) at the cut are listed with no changed files (git has no parent to diff them "
                "against); run `git fetch --unshallow`, or `git fetch --shallow-since=<date>` with a date "
                "before the oldest day you read, in that clone",
                repo, self.git_dir, len(cut),
            )  # fmt: skip
        return cut

    def note_walk(
        self,
        repo: str,
        tip: str,
        walked: list[tuple[int, str]],
        cut: frozenset[str],
        start: datetime,
        end: datetime,
    ) -> None:
        """Check a window's first-parent walk (committer Unix time, sha; newest first) from tip against the
        cut: refused when it ended at the cut after the window (`refuse_window_past_cut`), remembered when
        it ended at the cut inside the window (`start_in`)."""
        refuse_window_past_cut(repo, walked, cut, start, end)
        if not cut:
            return
        inside = (
            bool(walked) and walked[-1][1] in cut and start.timestamp() <= walked[-1][0] < end.timestamp()
        )
        if len(self._starts) >= STARTS_KEPT:
            self._starts.pop(next(iter(self._starts)))  # the oldest noted
        self._starts[(tip, start.timestamp(), end.timestamp())] = (
            datetime.fromtimestamp(walked[-1][0], UTC) if inside else None
        )

    def walked(self, tip: str, start: datetime, end: datetime) -> bool:
        """Whether the walk of [start, end) from tip is noted (not forgotten)."""
        return (tip, start.timestamp(), end.timestamp()) in self._starts

    def start_in(self, tip: str, start: datetime, end: datetime) -> datetime | None:
        """Where the noted walk of [start, end) from tip began, when at the cut inside the window."""
        return self._starts.get((tip, start.timestamp(), end.timestamp()))


def refuse_window_past_cut(
    repo: str, walked: list[tuple[int, str]], cut: frozenset[str], start: datetime, end: datetime
) -> None:
    """Raise SourceError when the first-parent walk (committer Unix time, sha; newest first) ended at a
    commit of the cut dated at or after the window's end: every commit of the window is one the clone lacks.
    A cut inside the window is said by the digest (`LocalGitSource.history_start`)."""
    if not walked or walked[-1][1] not in cut or walked[-1][0] < end.timestamp():
        return
    begins = datetime.fromtimestamp(walked[-1][0], UTC)
    raise SourceError(
        f"{repo} is a shallow clone whose history of this branch starts at {begins:%Y-%m-%d %H:%M} UTC, after "
        f"{start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M} {start.tzname()}: fetch that far back in the clone"
        f" (git fetch --shallow-since={shallow_fetch_since(start):%Y-%m-%d}, or git fetch --unshallow)"
    )
