"""A commit's `git ls-tree -r -z --full-tree` output built from its tree objects, read through the source's
long-running cat-file: eval listed a tree for every batch (230 `ls-tree` processes for four months of a large
repository), each walking the whole tree again although a batch changes a few folders. Trees are immutable, so
each folder's listing is kept by (tree id, its path): a commit's listing re-reads only the folders that changed.

The bytes are ls-tree's own: entries in the tree's order, a folder's entries where the folder stands, modes as
git canonicalizes them (tree-walk.c), "<mode> <type> <id>\\t<path>\\0"."""

from __future__ import annotations

import threading

from adapters.local_git.cat_file import CatFile
from adapters.local_git.git_output import text_of
from adapters.local_git.kept import Kept
from analysis.errors import SourceError

KEPT_FOLDER_BYTES = 8 * 1024 * 1024  # folder listings kept: a 4,000-file tree lists in ~400 kB, its folders in a few MB
_TREE, _LINK, _GITLINK = 0o040000, 0o120000, 0o160000
Folder = tuple[bytes, dict[str, str]]  # a folder's listing and its files' blob ids


class TreeListing:
    """ls-tree's recursive listing of a commit, from `cat`'s tree objects."""

    def __init__(self, cat: CatFile) -> None:
        self._cat = cat
        # (listing, {path: blob id} of its files but symbolic links): a folder's blob ids are kept beside its
        # listing (list_blobs, for the docs of batch after batch), each costing about its listing's size again
        self._folders: Kept[tuple[bytes, bytes], Folder] = Kept(KEPT_FOLDER_BYTES, lambda f: 2 * len(f[0]))
        self._lock = threading.Lock()  # the kept folders are shared by the reader threads

    def listing(self, commit: str) -> bytes:
        """The listing of a commit given by its full id."""
        return self._folder(commit)[0]

    def blobs(self, commit: str) -> dict[str, str]:
        """Each file's path (decoded as text_of decodes it) with its blob id, symbolic links and submodules left
        out: what FileReads.list_blobs makes of the listing, without parsing it again."""
        return dict(self._folder(commit)[1])

    def _folder(self, commit: str) -> Folder:
        [header] = self._cat.info([commit.encode("ascii") + b"^{tree}"])
        parts = header.split()
        if len(parts) != 3 or parts[1] != b"tree":
            raise SourceError(f"git cannot list the tree of {commit[:12]}")
        with self._lock:
            trees: dict[bytes, list[tuple[int, bytes, bytes]]] = {}
            self._read_changed(parts[0], b"", trees)
            return self._render(parts[0], b"", trees)

    def _read_changed(
        self, top: bytes, prefix: bytes, trees: dict[bytes, list[tuple[int, bytes, bytes]]]
    ) -> None:
        """Into trees: the entries of every folder under top whose listing is not kept, read a level at a time
        (one round of requests per level)."""
        level = [(top, prefix)]
        while level:
            wanted = [oid for oid, prefix in level if (oid, prefix) not in self._folders and oid not in trees]
            for oid, (header, data) in zip(wanted, self._cat.contents(wanted), strict=True):
                if data is None or header.split()[1:2] != [b"tree"]:
                    raise SourceError(f"git has no tree {oid.decode('ascii', 'replace')[:12]}")
                trees[oid] = _entries(data, len(oid) // 2)
            level = [
                (child, prefix + name + b"/")
                for oid, prefix in level
                if oid in trees and (oid, prefix) not in self._folders
                for mode, name, child in trees[oid]
                if mode == _TREE
            ]

    def _render(
        self, oid: bytes, prefix: bytes, trees: dict[bytes, list[tuple[int, bytes, bytes]]]
    ) -> Folder:
        kept = self._folders.get((oid, prefix))
        if kept is not None:
            return kept
        # kept when the levels were read, dropped since for the folders rendered before it
        if oid not in trees:
            self._read_changed(oid, prefix, trees)
        out = []
        blobs: dict[str, str] = {}
        for mode, name, child in trees[oid]:
            if mode == _TREE:
                listing, inner = self._render(child, prefix + name + b"/", trees)
                out.append(listing)
                blobs.update(inner)
            else:
                kind = b"commit" if mode == _GITLINK else b"blob"
                out.append(b"%06o %s %s\t%s%s\0" % (mode, kind, child, prefix, name))
                if mode != _GITLINK and mode != _LINK:
                    blobs[text_of(prefix + name)] = child.decode("ascii")
        folder = (b"".join(out), blobs)
        self._folders.put((oid, prefix), folder)
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
