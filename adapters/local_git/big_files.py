"""Line counts of text files git diffs as binary only because they are big.

Every git call bounds what it diffs (`core.bigFileThreshold`, git_cli.BIG_FILE_BYTES): a larger file is
listed with no patch and no count, as a binary one is. A 50 MB generated source then read as "+0/−0 lines",
and its commit ranked as the smallest change of the day. Such files are counted again here, in one more
git call for the whole batch with a higher bound (COUNT_CAP): git loads and diffs them in its own process,
ours reads only the counts. Above COUNT_CAP a file stays uncounted, as GitHub leaves its patch out.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from adapters.local_git.git_cli import BIG_FILE_BYTES, LOG_OPTIONS
from adapters.local_git.git_output import META, Meta, Patch, parse_meta
from analysis.paths import PathKind, classify_path

COUNT_CAP = 8 * BIG_FILE_BYTES  # the largest file counted (git holds both versions while it diffs them)

Git = Callable[..., Awaitable[bytes]]


def _uncounted(meta: Meta, patches: Sequence[Patch]) -> list[str]:
    """The paths (and a rename's old path) of the commit's files git gave no count for, except files whose
    names say binary (images, archives: no lines to count)."""
    paths = []
    for file, patch in zip(meta.files, patches, strict=True):
        if patch.binary and classify_path(file.path) != PathKind.BINARY:
            paths += [file.path] + ([file.previous_path] if file.previous_path else [])
    return paths


async def recount(git: Git, metas: Sequence[Meta], patches: dict[str, list[Patch]]) -> dict[str, list[Patch]]:
    """`patches` with the big text files' sections counted (hunks still None); the others as they were."""
    wanted = {
        m.sha: paths
        for m in metas
        if len(patches.get(m.sha, ())) == len(m.files) and (paths := _uncounted(m, patches[m.sha]))
    }
    if not wanted:
        return patches
    pathspecs = sorted({f":(literal){p}" for paths in wanted.values() for p in paths})
    out = await git(
        "-c", f"core.bigFileThreshold={COUNT_CAP}",
        "log", *LOG_OPTIONS, "-z", "--raw", "--numstat", f"--format={META}", "--", *pathspecs,
        stdin="\n".join(wanted) + "\n",
    )  # fmt: skip
    counted = {
        (m.sha, f.path): (f.additions, f.deletions) for m in parse_meta(out) for f in m.files if not f.binary
    }
    if not counted:
        return patches
    result = dict(patches)
    for meta in metas:
        if meta.sha not in wanted:
            continue
        result[meta.sha] = [
            Patch(None, *counted[meta.sha, f.path], False)
            if p.binary and (meta.sha, f.path) in counted
            else p
            for f, p in zip(meta.files, patches[meta.sha], strict=True)
        ]
    return result
