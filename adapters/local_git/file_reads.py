"""Reading files at a commit of a local clone (the surface step's reads): the paths of a commit's tree (with
their blob ids) and the text of files in it, blobs read in one batch. Paths need not be UTF-8: one shown with a
replacement character is named to git again by its own bytes, found in the commit's tree (`_raw_names`).

A long run (eval) reads the same trees and file versions again batch after batch (a file's version after one
batch is its version before the next; a batch's newest tree is where the next batch's docs are read): the
recent tree listings and blob texts are kept, within a memory budget each (kept.py)."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Sequence

from adapters.local_git.cat_file import CatFile, Header, supports_batch_command
from adapters.local_git.git_cli import GIT_TIMEOUT, GitCli
from adapters.local_git.git_output import parse_batch, text_of
from adapters.local_git.kept import Kept
from adapters.local_git.tree_listing import TreeListing
from analysis.errors import SourceError
from analysis.models import FileTexts
from analysis.refs import is_full_object_name

# `git ls-tree` listings kept (git without a long-running cat-file; tree_listing.py keeps folders otherwise): eval
# reads chunks ahead of the batches whose docs are read, so a listing is asked for again a dozen batches later; a
# listing of a 4,000-file tree is about 400 kB.
KEPT_TREE_BYTES = 32 * 1024 * 1024
KEPT_TREES = 2  # listings kept whatever their size (a batch's, then the next batch's docs)
# File texts kept by blob id (decoded; None for a binary): a file touched batch after batch is read once.
KEPT_BLOB_BYTES = 64 * 1024 * 1024


def kept_trees() -> Kept[str, bytes]:
    return Kept(KEPT_TREE_BYTES, len, keep_at_least=KEPT_TREES)


def kept_blobs() -> Kept[str, str | None]:
    return Kept(KEPT_BLOB_BYTES, lambda text: 0 if text is None else len(text))


class FileReads(GitCli):
    """The file reads of bot.ports.protocols.CommitSource, over the git calls of GitCli."""

    _trees: Kept[str, bytes]  # set by the source (kept_trees): the recent tree listings
    _blobs: Kept[str, str | None]  # set by the source (kept_blobs): the recent blob texts, by blob id
    _cat: CatFile | None = None  # the long-running cat-file (_objects), once git is known to have one
    _cat_checked = False  # whether git's version was asked
    _lister: TreeListing | None = None  # tree listings from _cat's tree objects

    async def read_files(self, wanted: Sequence[tuple[str, str]], *, max_bytes: int) -> FileTexts:
        """The text of each (commit sha, path) for the surface facts: one `git cat-file --batch-check` for
        types and sizes, then one `git cat-file --batch` for the blobs under max_bytes (a file over it, a
        binary or a submodule is skipped, never half-read). No quota: everything asked is answered."""
        asked = list(dict.fromkeys(wanted))
        # A line break in a path cannot be named on cat-file's line-based input: such a file is skipped (as a
        # binary is), not left unanswered, which would cost the commit the facts of its other files.
        unnamable = {spec for spec in asked if "\n" in spec[1] or "\r" in spec[1]}
        asked = [spec for spec in asked if spec not in unnamable]
        result = FileTexts({}, set(unnamable))
        named = {spec: raw for spec, raw in (await self._raw_names(asked)).items() if raw is not None}
        result.skipped.update(spec for spec in asked if spec not in named)
        specs = list(named)
        if not specs:
            return result
        checked = await self._check([f"{sha}:".encode() + raw for (sha, _), raw in named.items()])
        blobs: dict[str, list[tuple[str, str]]] = {}
        for spec, row in zip(specs, checked, strict=False):
            parts = row.split()
            if row.endswith(b" missing"):
                result.texts[spec] = None
            elif len(parts) == 3 and parts[1] == b"blob" and int(parts[2]) <= max_bytes:
                blobs.setdefault(parts[0].decode("ascii"), []).append(spec)
            else:
                result.skipped.add(spec)
        for oid, text in (await self._blob_texts(list(blobs))).items():
            for spec in blobs.get(oid, ()):
                if text is None:
                    result.skipped.add(spec)
                else:
                    result.texts[spec] = text
        return result

    async def _blob_texts(self, oids: list[str]) -> dict[str, str | None]:
        """The text of each blob id (None: binary), the kept ones without asking git again; git's `cat-file
        --batch` for the others."""
        found = {oid: self._blobs.get(oid) for oid in oids if oid in self._blobs}
        unread = [oid for oid in oids if oid not in found]
        if unread:
            for oid, data in await self._blob_bytes(unread):
                found[oid] = text = None if b"\0" in data else data.decode("utf-8", "replace")
                self._blobs.put(oid, text)
        return found

    async def _check(self, names: list[bytes]) -> list[Header]:
        """git's `--batch-check` header of each object name, in order."""
        cat = await self._objects()
        if cat is not None:
            return await asyncio.to_thread(cat.info, names)
        checked = await self._git_async(
            "cat-file",
            "--batch-check=%(objectname) %(objecttype) %(objectsize)",
            stdin=b"".join(name + b"\n" for name in names),
        )
        return checked.split(b"\n")

    async def _blob_bytes(self, oids: list[str]) -> list[tuple[str, bytes]]:
        """(oid, data) of each object git has, of those asked."""
        cat = await self._objects()
        if cat is None:
            return parse_batch(
                await self._git_async("cat-file", "--batch", stdin="".join(f"{oid}\n" for oid in oids))
            )
        answers = await asyncio.to_thread(cat.contents, [oid.encode("ascii") for oid in oids])
        return [(header.split()[0].decode("ascii"), data) for header, data in answers if data is not None]

    async def _objects(self) -> CatFile | None:
        """The source's long-running `git cat-file --batch-command`; None on a git without one (before 2.36),
        whose reads then start a `cat-file` process each."""
        if not self._cat_checked:
            proc = await asyncio.to_thread(self._spawn, ["version"])
            if supports_batch_command(proc.stdout):
                self._cat = CatFile(self._start_cat_file, GIT_TIMEOUT)
            self._cat_checked = True
        return self._cat

    def _start_cat_file(self) -> subprocess.Popen[bytes]:
        args = ["cat-file", "--batch-command", "--buffer"]
        return self._popen(args, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def _close_objects(self) -> None:
        if self._cat is not None:
            self._cat.close()

    async def list_blobs(self, sha: str) -> dict[str, str] | None:
        """Every file path at a commit with its blob id (symbolic links and submodules left out); None when
        git cannot list it (a commit this clone does not have)."""
        try:
            if (lister := await self._tree_lister(sha)) is not None:  # its folders' blob ids are kept
                return await asyncio.to_thread(lister.blobs, sha)
            listing = await self._tree_listing(sha)
        except SourceError:
            return None
        found: dict[str, str] = {}
        for entry in listing.split(b"\0"):
            meta, tab, path = entry.partition(b"\t")
            parts = meta.split()
            if tab and len(parts) == 3 and parts[1] == b"blob" and parts[0] != b"120000":
                found[text_of(path)] = parts[2].decode("ascii")
        return found

    async def _tree_lister(self, sha: str) -> TreeListing | None:
        """The listings from the long-running cat-file's tree objects; None on a git without one, or for a
        name that is not a full id (`git ls-tree` lists it then)."""
        cat = await self._objects()
        if cat is None or not is_full_object_name(sha):
            return None
        if self._lister is None:
            self._lister = TreeListing(cat)
        return self._lister

    async def _tree_listing(self, sha: str) -> bytes:
        """`git ls-tree -r -z --full-tree` of a commit, the recent ones kept as git wrote them (a large
        tree's listing is smaller than its parsed entries): the surface step lists a batch's newest commit,
        and the next batch's docs are read at that same commit."""
        listing = self._trees.get(sha)
        if listing is None:
            listing = await self._git_async("ls-tree", "-r", "-z", "--full-tree", sha)
            self._trees.put(sha, listing)
        return listing

    async def read_blobs(self, ids: Sequence[str], *, max_bytes: int) -> dict[str, str | None]:
        """The text of each blob id, in one `git cat-file --batch`; None for one over max_bytes, binary or
        missing."""
        wanted = [i for i in dict.fromkeys(ids) if is_full_object_name(i)]  # they go to git's stdin
        found: dict[str, str | None] = dict.fromkeys(wanted)
        if not wanted:
            return found
        small = []
        for row in await self._check([i.encode("ascii") for i in wanted]):
            parts = row.split()
            if len(parts) == 3 and parts[1] == b"blob" and int(parts[2]) <= max_bytes:
                small.append(parts[0].decode("ascii"))
        found.update(await self._blob_texts(small))
        return found

    async def paths_at(self, sha: str) -> list[str]:
        """Every file path in the commit's tree."""
        if (lister := await self._tree_lister(sha)) is not None:  # its folders' paths are kept
            return await asyncio.to_thread(lister.paths, sha)
        listing = await self._tree_listing(sha)
        return [text_of(entry.partition(b"\t")[2]) for entry in listing.split(b"\0") if entry]

    async def text_at(self, sha: str, path: str) -> str | None:
        """A file's text as of the commit (UTF-8, undecodable bytes replaced); None when it has no such file."""
        raw = (await self._raw_names([(sha, path)]))[sha, path]
        if raw is None:
            return None
        proc = await asyncio.to_thread(self._spawn, ["cat-file", "blob", f"{sha}:".encode() + raw])
        return text_of(proc.stdout) if proc.returncode == 0 else None

    async def _raw_names(self, specs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], bytes | None]:
        """The bytes git names each (commit sha, path) by. A path shown with a replacement character had
        bytes that are not UTF-8: its own are found among the paths of that commit's tree (none there: git
        answers "missing" for it); None when more than one shows so, or the tree was not listed (its text
        is then not read, never taken for an absent file)."""
        trees: dict[str, dict[str, list[bytes]] | None] = {}
        names: dict[tuple[str, str], bytes | None] = {}
        for sha, path in specs:
            if "\ufffd" not in path:
                names[sha, path] = path.encode()
                continue
            if sha not in trees:
                proc = await asyncio.to_thread(
                    self._spawn, ["ls-tree", "-r", "-z", "--name-only", "--full-tree", sha]
                )
                shown: dict[str, list[bytes]] | None = {} if proc.returncode == 0 else None
                for raw in proc.stdout.split(b"\0") if shown is not None else ():
                    if "\ufffd" in (text := text_of(raw)):
                        shown.setdefault(text, []).append(raw)
                trees[sha] = shown
            listed = trees[sha]
            found = listed.get(path, [path.encode()]) if listed is not None else []
            names[sha, path] = found[0] if len(found) == 1 else None
        return names
