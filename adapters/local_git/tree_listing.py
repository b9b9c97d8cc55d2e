"""A commit's `git ls-tree -r -z --full-tree` listing built from its tree objects, read through the source's
long-running cat-file: eval listed a tree for every batch (230 `ls-tree` processes for four months of a large
repository), each walking the whole tree again although a batch changes a few folders. Trees are immutable, so
each folder's render is kept by (tree id, its path): a commit's listing re-reads only the folders that changed.

What is rendered is what the callers took from ls-tree's bytes, without the bytes: the paths (entries in the
tree's order, a folder's entries where the folder stands), or the files' blob ids (modes as git canonicalizes
them, tree-walk.c, tell the files from the symbolic links and submodules)."""

from __future__ import annotations

import threading
from typing import cast

from adapters.local_git.cat_file import CatFile
from adapters.local_git.git_output import text_of
from adapters.local_git.kept import Kept
from analysis.errors import SourceError

KEPT_FOLDER_BYTES = (
    8 * 1024 * 1024
)  # folders kept: a 4,000-file tree's paths and blob ids, its folders' in a few MB
# what one path or one blob id kept is counted as (about its ls-tree line, or its strings and their slot)
ENTRY_BYTES = 100
_TREE, _LINK, _GITLINK = 0o040000, 0o120000, 0o160000
Entries = list[tuple[int, bytes, bytes]]  # a tree object's (canonical mode, name, hex id)
Folder = list[str] | dict[str, str]  # a folder's paths, or its files' blob ids (by path)
PATHS, BLOBS = "paths", "blobs"  # what a folder's render gives


class TreeListing:
    """ls-tree's recursive listing of a commit, from `cat`'s tree objects: its paths, or its files' blob ids."""

    def __init__(self, cat: CatFile) -> None:
        self._cat = cat
        # by (what, tree id, path): a folder's paths and its blob ids are kept apart, each rendered only when
        # asked (the surface step asks a batch's paths, the docs the blob ids of the tree before it)
        self._folders: Kept[tuple[str, bytes, bytes], Folder] = Kept(
            KEPT_FOLDER_BYTES, lambda f: ENTRY_BYTES * len(f)
        )
        # tree objects' entries by id (a tuple, a name and an id each): a tree whose paths were rendered is read
        # again for its blob ids, and a folder whose render was dropped from the budget again
        self._parsed: Kept[bytes, Entries] = Kept(KEPT_FOLDER_BYTES, lambda e: 2 * ENTRY_BYTES * len(e))
        self._lock = threading.Lock()  # the kept folders are shared by the reader threads

    def paths(self, commit: str) -> list[str]:
        """Every path of a commit given by its full id (decoded as text_of decodes it), submodules and
        symbolic links too, in ls-tree's order: what FileReads.paths_at made of ls-tree's listing."""
        return list(self._folder(PATHS, commit))

    def blobs(self, commit: str) -> dict[str, str]:
        """Each file's path (decoded as text_of decodes it) with its blob id, symbolic links and submodules left
        out: what FileReads.list_blobs makes of ls-tree's listing."""
        return dict(cast(dict[str, str], self._folder(BLOBS, commit)))

    def _folder(self, what: str, commit: str) -> Folder:
        [header] = self._cat.info([commit.encode("ascii") + b"^{tree}"])
        parts = header.split()
        if len(parts) != 3 or parts[1] != b"tree":
            raise SourceError(f"git cannot list the tree of {commit[:12]}")
        with self._lock:
            trees: dict[bytes, Entries] = {}
            self._read_changed(what, parts[0], b"", trees)
            return self._render(what, parts[0], b"", trees)

    def _read_changed(self, what: str, top: bytes, prefix: bytes, trees: dict[bytes, Entries]) -> None:
        """Into trees: the entries of every folder under top whose render is not kept, read a level at a time
        (one round of requests per level)."""
        level = [(top, prefix)]
        while level:
            wanted = []
            for oid, prefix in level:
                if (what, oid, prefix) not in self._folders and oid not in trees:
                    parsed = self._parsed.get(oid)
                    if parsed is None:
                        wanted.append(oid)
                    else:
                        trees[oid] = parsed
            for oid, (header, data) in zip(wanted, self._cat.contents(wanted), strict=True):
                if data is None or header.split()[1:2] != [b"tree"]:
                    raise SourceError(f"git has no tree {oid.decode('ascii', 'replace')[:12]}")
                trees[oid] = _entries(data, len(oid) // 2)
                self._parsed.put(oid, trees[oid])
            level = [
                (child, prefix + name + b"/")
                for oid, prefix in level
                if oid in trees and (what, oid, prefix) not in self._folders
                for mode, name, child in trees[oid]
                if mode == _TREE
            ]

    def _render(self, what: str, oid: bytes, prefix: bytes, trees: dict[bytes, Entries]) -> Folder:
        kept = self._folders.get((what, oid, prefix))
        if kept is not None:
            return kept
        # kept when the levels were read, dropped since for the folders rendered before it
        if oid not in trees:
            self._read_changed(what, oid, prefix, trees)
        folder: Folder
        if what == PATHS:  # ls-tree's order: a folder's paths where the folder stands
            folder = []
            for mode, name, child in trees[oid]:
                if mode == _TREE:
                    folder.extend(self._render(what, child, prefix + name + b"/", trees))
                else:
                    folder.append(text_of(prefix + name))
        else:
            folder = {}
            for mode, name, child in trees[oid]:
                if mode == _TREE:
                    folder.update(self._render(what, child, prefix + name + b"/", trees))
                elif mode != _GITLINK and mode != _LINK:
                    folder[text_of(prefix + name)] = child.decode("ascii")
        self._folders.put((what, oid, prefix), folder)
        return folder


def _entries(data: bytes, id_bytes: int) -> list[tuple[int, bytes, bytes]]:
    """(canonical mode, name, hex id) of each entry of a tree object ("<octal mode> <name>\\0<raw id>")."""
    entries = []
    i, end = 0, len(data)
    while i < end:
        space = data.index(b" ", i)
        nul = data.index(b"\0", space)
        raw = data[nul + 1 : nul + 1 + id_bytes]
        if len(raw) != id_bytes:
            raise SourceError("a tree object git returned is cut short")
        entries.append((_canonical(int(data[i:space], 8)), data[space + 1 : nul], raw.hex().encode("ascii")))
        i = nul + 1 + id_bytes
    return entries


def _canonical(mode: int) -> int:
    """git's canon_mode: a file is 100644 or 100755 whatever else its bits say (old trees hold 100664)."""
    kind = mode & 0o170000
    if kind == 0o100000:
        return 0o100755 if mode & 0o100 else 0o100644
    if kind in (_LINK, _TREE):
        return kind
    return _GITLINK
