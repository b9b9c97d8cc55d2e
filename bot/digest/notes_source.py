"""Where `digestbot eval`'s release-notes key comes from (bot/digest/evaluate.py): a --changelog file, the
likeliest notes files at the branch tip, or the news fragments the span's commits add, whichever lists the
most of the span's pull requests. Reading is the source's; what the text says is
analysis/evaluation/release_notes.py's.
"""

from __future__ import annotations

from dataclasses import dataclass
from zoneinfo import ZoneInfo

from analysis.errors import SourceError
from analysis.evaluation.notes_fragments import MAX_FRAGMENT_BYTES, fragment_notes, fragments_to_read
from analysis.evaluation.release_notes import Landed, NotesKey, ReleaseNotes, candidates, notes_key, parse
from analysis.history.followups import PastCommit

# Where the notes key was read when the span's news fragments made it (`fragment_notes`).
FRAGMENTS = "news fragments the span's commits add"


@dataclass(frozen=True, slots=True)
class FoundNotes:
    path: str  # where they were read: a path at the branch tip, or the --changelog file
    notes: ReleaseNotes
    key: NotesKey


async def find_release_notes(
    source, branch: str, span: list[PastCommit], changelog: tuple[str, str] | None, tz: ZoneInfo
) -> tuple[FoundNotes | None, str]:
    """The release notes that list the most of the span's pull requests: --changelog's file, else the
    likeliest files at the branch tip (analysis.evaluation.release_notes.candidates) or the news fragments the
    span's commits add, whichever lists more (a project that compiles its fragments into notes citing issues
    lists few pull requests there). Also what to say when none."""
    landed = [Landed(c.sha, c.committed_at.astimezone(tz), c.pr_number) for c in span]
    if changelog is not None:
        name, text = changelog
        notes = parse(text, source.repo)
        found = FoundNotes(name, notes, notes_key(notes, landed))
        return (found, "") if found.key.listed else (None, f"{name}: none of the span's pull requests listed")
    found, status = await _notes_at_tip(source, branch, landed)
    ordered = sorted(span, key=lambda c: c.committed_at)
    texts = await _fragment_texts(
        source, fragments_to_read((c.sha, [p for p, _ in c.files]) for c in ordered)
    )
    fragments = fragment_notes(((c.pr_number, [path for path, _ in c.files]) for c in ordered), texts)
    drawn = FoundNotes(FRAGMENTS, fragments, notes_key(fragments, landed))
    if drawn.key.listed and (found is None or drawn.key.listed > found.key.listed):
        return drawn, ""
    return found, status


async def _fragment_texts(source, wanted: list[tuple[str, str]]) -> dict[str, str | None]:
    """{path: text} of the news fragments whose type is in their text, as the commits that added them wrote
    them; none where the source reads no files or the read fails (their names still say what they say)."""
    if not wanted or getattr(source, "read_files", None) is None:
        return {}
    try:
        read = await source.read_files(wanted, max_bytes=MAX_FRAGMENT_BYTES)
    except SourceError:
        return {}
    return {path: read.texts.get((sha, path)) for sha, path in wanted}


async def _notes_at_tip(source, branch: str, landed: list[Landed]) -> tuple[FoundNotes | None, str]:
    """The file at the branch tip that lists the most of the span's pull requests."""
    if not all(hasattr(source, name) for name in ("branch_tip", "paths_at", "text_at")):
        return None, "this source cannot read files; pass --changelog PATH"
    try:
        tip = await source.branch_tip(branch)
        paths = candidates(await source.paths_at(tip))
        read = [(path, await source.text_at(tip, path)) for path in paths]
    except SourceError as exc:  # the follow-up key stands without the notes
        return None, f"cannot read the release notes at the tip of {branch}: {exc}; pass --changelog PATH"
    if not paths:
        return None, (
            f"no release notes at the tip of {branch} (CHANGELOG, HISTORY, CHANGES, NEWS, RELEASES,"
            " docs/**/release-notes*, docs/**/changelog*); pass --changelog PATH"
        )
    best: FoundNotes | None = None
    for path, text in read:
        if text is not None:
            notes = parse(text, source.repo)
            found = FoundNotes(path, notes, notes_key(notes, landed))
            if best is None or found.key.listed > best.key.listed:
                best = found
    if best is None or not best.key.listed:
        return None, f"{', '.join(paths)} at the tip of {branch}: none of the span's pull requests listed"
    return best, ""
