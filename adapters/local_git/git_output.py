"""Parsing the git CLI's output (bytes) into commits: `git log` metadata records (`Meta`, raw and numstat
file entries), the patch sections of `git log -p` (`Patch`), the history log, rev-list timestamps, cat-file
batches, and committer dates. Decoded with errors="replace": messages, diffs and paths are untrusted and
need not be UTF-8."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

from analysis.errors import SourceError
from analysis.history.automation import is_automated, login_from_email
from analysis.history.followups import PastCommit
from analysis.history.index import BranchCommit
from analysis.models import FileChange

_FULL_SHA = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_NUMSTAT = re.compile(rb"(\d+|-)\t(\d+|-)\t(.*)", re.DOTALL)
_RAW_OFFSET = re.compile(r"([+-])(\d\d)(\d\d)")  # the offset of git's raw date
_STATUS = {"A": "added", "M": "modified", "D": "removed", "R": "renamed", "C": "copied", "T": "changed"}

# The committer date as git stores it (%cd with --date=raw: '<unix seconds> <+hhmm>'): git dies formatting
# %cI for a local time before 1970 (a reset clock west of UTC), and the offset may be one no zone has
# (+2500, -9959: old importers wrote such dates, git fsck lets them be).
META = "%H%x00%P%x00%an%x00%ae%x00%cd%x00%B"  # see parse_meta


@dataclass(frozen=True, slots=True)
class _File:
    path: str
    status: str
    additions: int
    deletions: int
    binary: bool
    previous_path: str | None


@dataclass(frozen=True, slots=True)
class Meta:
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    committed_at: str
    message: str
    files: list[_File]


def parse_meta(out: bytes) -> list[Meta]:
    """Parse `git log -z --raw [--numstat] --format=<META>` (without --numstat every file counts as "-").

    Per commit: six header tokens, then raw entries (':modes shas status', then one path, two for
    renames and copies), then any numstat entries ('add<TAB>del<TAB>path', or 'add<TAB>del<TAB>' then two
    paths). Messages cannot hold NUL, paths are consumed by their entry, so the token stream is exact."""
    tokens = out.split(b"\0")
    commits: list[Meta] = []
    i = 0
    while i < len(tokens):
        if not tokens[i].strip():  # the terminator after the last commit
            i += 1
            continue
        if len(tokens) < i + 6 or not _FULL_SHA.fullmatch(tokens[i]):
            raise SourceError("unexpected output from git log")
        sha, parents, author, email, date, message = tokens[i : i + 6]
        i += 6
        raw: list[tuple[str, list[str]]] = []
        stats: list[tuple[str, str, list[str]]] = []
        while i < len(tokens):
            token = tokens[i].lstrip(b"\n")
            if token.startswith(b":"):
                status = text_of(token.split()[-1])
                width = 2 if status[:1] in ("R", "C") else 1
                raw.append((status, [text_of(p) for p in tokens[i + 1 : i + 1 + width]]))
                i += 1 + width
            elif match := _NUMSTAT.fullmatch(token):
                width = 2 if not match[3] else 0
                paths = [text_of(p) for p in tokens[i + 1 : i + 1 + width]] if width else [text_of(match[3])]
                stats.append((text_of(match[1]), text_of(match[2]), paths))
                i += 1 + width
            else:
                break
        commits.append(
            Meta(
                sha=text_of(sha),
                parents=tuple(text_of(parents).split()),
                author=text_of(author),
                email=text_of(email),
                committed_at=text_of(date).strip(),
                message=text_of(message),
                files=_files(raw, stats),
            )
        )
    return commits


def _files(raw: list[tuple[str, list[str]]], stats: list[tuple[str, str, list[str]]]) -> list[_File]:
    # --raw and --numstat list the same diff queue in the same order; match by path to be safe.
    counts = {paths[-1]: (add, delete) for add, delete, paths in stats if paths}
    files = []
    for status, paths in raw:
        add, delete = counts.get(paths[-1], ("-", "-"))
        binary = add == "-" or delete == "-"
        files.append(
            _File(
                path=paths[-1],
                status=_STATUS.get(status[:1], "changed"),
                additions=0 if binary else int(add),
                deletions=0 if binary else int(delete),
                binary=binary,
                previous_path=paths[0] if len(paths) == 2 else None,
            )
        )
    return files


@dataclass(frozen=True, slots=True)
class Patch:
    """One file section of a commit's patch: its hunks (None: none) and the lines they add and remove, as
    `--numstat` counts them; binary: git said "Binary files ... differ" (no count, as numstat's "-")."""

    hunks: str | None
    additions: int
    deletions: int
    binary: bool


def parse_patches(out: bytes, nonce: bytes) -> dict[str, list[Patch]]:
    """Per commit sha, per file section ('diff --git' ...), the hunks from the first '@@' on (GitHub's
    `patch` field), or None when the section has none (binary, pure rename, mode change, empty file), with
    the lines the hunks add and remove.

    Lines inside a diff are always prefixed (' ', '+', '-', '\\'), so a line starting with the random
    nonce is a commit header and a line starting with 'diff --git ' is a file header. Lines end at "\n"
    only: \r, \f and friends are content. Cut by searching, not line by line (tens of megabytes a span)."""
    return _sections(out, _nonce_lines(out, nonce))


def parse_tree_patches(out: bytes, shas: Sequence[str]) -> dict[str, list[Patch]]:
    """As parse_patches, for `git diff-tree --stdin --always` output of these commits, in this order: each
    commit's header is its name alone on a line (no patch line is one: every one starts with a prefix or a
    header word)."""
    heads: list[tuple[int, int, bytes]] = []
    at = 0
    for sha in shas:
        name = sha.encode("ascii")
        if not out.startswith(name + b"\n", at):
            found = out.find(b"\n" + name + b"\n", at)
            if found < 0:
                raise SourceError(f"git diff-tree did not return commit {sha}")
            at = found + 1
        heads.append((at, at + len(name), name))
        at += len(name)
    return _sections(out, heads)


def _sections(out: bytes, heads: list[tuple[int, int, bytes]]) -> dict[str, list[Patch]]:
    """Per commit, its file sections; heads: (where its header line starts, where it ends, its sha), in order."""
    sections: dict[str, list[Patch]] = {}
    for n, (_, start, sha) in enumerate(heads):
        end = heads[n + 1][0] if n + 1 < len(heads) else len(out)
        # from the header line's own newline on: every line of the commit follows a "\n"
        files = out[start:end].split(b"\ndiff --git ")[1:]
        sections.setdefault(text_of(sha), []).extend(map(_section, files))
    return sections


def _nonce_lines(out: bytes, nonce: bytes) -> list[tuple[int, int, bytes]]:
    """(where it starts, where it ends, the sha) of every line that is the nonce and a full sha, in order."""
    found: list[tuple[int, int, bytes]] = []
    at = out.find(nonce)
    while at >= 0:
        end = out.find(b"\n", at)
        end = len(out) if end < 0 else end
        sha = out[at + len(nonce) : end]
        if (at == 0 or out[at - 1] == 0x0A) and _FULL_SHA.fullmatch(sha):
            found.append((at, end, sha))
        at = out.find(nonce, at + 1)
    return found


def _section(text: bytes) -> Patch:
    """A file section from after its 'diff --git ' on: the rest of that line, the headers, the hunks."""
    at = text.find(b"\n@@")  # no header line starts with "@@"
    if at < 0:  # headers only: a binary file's one line says so
        return Patch(None, 0, 0, b"\nBinary files " in text)
    body = text[at + 1 :].rstrip(b"\n")  # the output's final newlines; a blank context line is " "
    # starts with "@@": every added or removed line follows a newline
    return Patch(text_of(body), body.count(b"\n+"), body.count(b"\n-"), False)


def parse_history(text: str, nonce: str, *, counted: bool = True) -> list[PastCommit]:
    """`git log --numstat` output whose headers and messages are framed by nonce, newest first. counted=False:
    `git log --name-only` output, each path with 0 lines."""
    parts = text.split(nonce)
    # parts: ["", "<sha> <ct>\t<name>\t<email>\n<message>", "\n<numstat lines>\n", ...]
    result: list[PastCommit] = []
    for i in range(1, len(parts) - 1, 2):
        head, _, message = parts[i].partition("\n")
        head, _, who = head.partition("\t")
        name, _, email = who.partition("\t")
        sha, _, stamp = head.partition(" ")
        files = []
        for line in parts[i + 1].splitlines():
            if not counted:
                files += [(line, 0)] if line else []
                continue
            added, tab, rest = line.partition("\t")
            deleted, tab2, path = rest.partition("\t")
            if tab and tab2 and path:
                lines = (int(added) if added.isdigit() else 0) + (int(deleted) if deleted.isdigit() else 0)
                files.append((path, lines))
        result.append(
            BranchCommit(
                sha,
                datetime.fromtimestamp(int(stamp), UTC),  # listed in the span, so a date datetime holds
                message.rstrip("\n"),
                tuple(files),
                automated=is_automated(name, login_from_email(email), email),
            )
        )
    return result


def commit_time(raw: str, sha: str) -> datetime:
    """A commit's date from git's raw '<unix seconds> <+hhmm>': the instant, shown in the commit's own
    offset when a Python timezone can hold it (strictly within a day), else in UTC: the day is never lost."""
    stamp, _, zone_text = raw.partition(" ")
    match = _RAW_OFFSET.fullmatch(zone_text.strip())
    zone = UTC
    if match:
        offset = timedelta(hours=int(match[2]), minutes=int(match[3])) * (-1 if match[1] == "-" else 1)
        zone = timezone(offset) if abs(offset) < timedelta(hours=24) else UTC
    if not stamp.isdigit():  # a date before 1970 or past 2^64 s, which git fsck calls badDateOverflow
        raise SourceError(
            f"commit {sha[:12]} has a committer date git cannot read (git fsck: badDateOverflow)"
        )
    try:
        return datetime.fromtimestamp(int(stamp), zone)
    except (OverflowError, OSError, ValueError):  # git takes dates past year 9999; no window holds them
        raise SourceError(f"commit {sha[:12]} has a committer date past year 9999 (@{stamp})") from None


def file_changes(files: list[_File], patches: list[Patch] | None, counted: bool) -> tuple[FileChange, ...]:
    """The commit's files; counted: the lines added and removed are the patches' (else the files' own, from
    `--numstat`)."""
    if patches is None or len(patches) != len(files):
        # Should not happen (both calls diff alike); never pair a patch with the wrong file.
        return tuple(_change(f, f.binary, f.additions, f.deletions, None) for f in files)
    if not counted:
        return tuple(
            _change(f, f.binary, f.additions, f.deletions, p.hunks)
            for f, p in zip(files, patches, strict=True)
        )
    return tuple(
        _change(f, p.binary, p.additions, p.deletions, p.hunks) for f, p in zip(files, patches, strict=True)
    )


def _change(f: _File, binary: bool, additions: int, deletions: int, hunks: str | None) -> FileChange:
    return FileChange(
        path=f.path,
        status=f.status,
        additions=0 if binary else additions,
        deletions=0 if binary else deletions,
        patch=None if binary else hunks,
        previous_path=f.previous_path,
    )


def stamped(out: bytes) -> list[tuple[int, str]]:
    """`git rev-list --timestamp` output: (committer Unix time, sha) per commit, in walk order."""
    rows = []
    for line in text_of(out).splitlines():
        stamp, _, sha = line.partition(" ")
        rows.append((int(stamp), sha))
    return rows


def parse_batch(out: bytes) -> list[tuple[str, bytes]]:
    """`git cat-file --batch` output: "<oid> <type> <size>\\n<content>\\n" per object."""
    found = []
    i = 0
    while i < len(out):
        end = out.find(b"\n", i)
        if end < 0:
            break
        header = out[i:end].split()
        if len(header) != 3:
            i = end + 1
            continue
        size = int(header[2])
        found.append((header[0].decode("ascii"), out[end + 1 : end + 1 + size]))
        i = end + 1 + size + 1
    return found


def text_of(data: bytes) -> str:
    return data.decode("utf-8", "replace")
