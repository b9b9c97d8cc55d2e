"""Where `--out` writes, without ever losing a user's file.

- no path or `-`: standard output (UTF-8, whatever the locale);
- a symlink is followed, deliberately, like a shell's `>`: its target is written, the link stays;
- the store's own files (the database, its -wal, -shm and -journal) are refused;
- a regular file (or a new one) is replaced atomically: a temporary file beside it, then a rename,
  keeping the old file's permission bits and owner, so a failed or interrupted run leaves the old
  content whole; a file with other hard links, or another user's file we could not give back, is
  written in place instead (a rename would split the links or take the file over);
- anything else that exists (a FIFO, a character device such as /dev/null) is written in place,
  as `>` would; a directory or a socket is refused. Every refusal is one DigestError line.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

from analysis.errors import InputError

STDOUT = "-"
_STORE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def store_files(db: Path | str | None) -> list[Path]:
    """The database file and the files SQLite keeps beside it."""
    if db is None or str(db) == ":memory:":
        return []
    return [Path(f"{db}{suffix}") for suffix in _STORE_SUFFIXES]


def write_text(text: str, out: str | Path | None, *, protected: Iterable[Path] = ()) -> None:
    """Write text (a final newline added) to stdout or to `out` by the rules above."""
    if not text.endswith("\n"):
        text += "\n"
    data = text.encode("utf-8")
    if out is None or str(out) == STDOUT:
        _to_stdout(text, data)
        return
    if not str(out).strip():
        raise InputError("--out is empty: give a file name, or - for standard output")
    path = Path(out).expanduser()
    target = Path(os.path.realpath(path))  # a symlink (chain) is followed to its target
    _refuse_store(path, target, protected)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise InputError(f"cannot write {path}: it is a directory; give a file name")
    if info is not None and stat.S_ISSOCK(info.st_mode):
        raise InputError(f"cannot write {path}: it is a socket")
    try:
        if info is not None and (not stat.S_ISREG(info.st_mode) or _must_keep_inode(info)):
            _in_place(target, data)  # FIFO, device, shared or foreign file: what `>` does
        else:
            _atomic(target, data, info)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _to_stdout(text: str, data: bytes) -> None:
    stream = getattr(sys.stdout, "buffer", None)
    if stream is None:  # a text-only stream (embedding): it is its own encoder
        sys.stdout.write(text)
    else:
        stream.write(data)
    sys.stdout.flush()


def _refuse_store(path: Path, target: Path, protected: Iterable[Path]) -> None:
    for own in protected:
        real = Path(os.path.realpath(own))
        same = real == target
        if not same:
            with contextlib.suppress(OSError):  # hard links: the same file under another name
                same = os.path.samefile(real, target)
        if same:
            raise InputError(f"refusing to write over {path}: it is digestbot's database ({own.name})")


def _must_keep_inode(info: os.stat_result) -> bool:
    """A file with other hard links (a rename would split them), or owned by someone else when we
    cannot give a new file away (a rename would take it over): written in place instead."""
    foreign = info.st_uid != os.geteuid() and os.geteuid() != 0
    return info.st_nlink > 1 or foreign


def _in_place(target: Path, data: bytes) -> None:
    with open(target, "wb") as stream:
        stream.write(data)


def _atomic(target: Path, data: bytes, old: os.stat_result | None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    # 0o666 through the umask, as a plain `open` would create it; an existing file's mode wins below.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        if old is not None:
            os.chmod(tmp, stat.S_IMODE(old.st_mode))
            with contextlib.suppress(OSError):  # only root may give a file away; others keep theirs
                if (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
                    os.chown(tmp, old.st_uid, old.st_gid)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def show_markdown(text: str) -> None:
    """Markdown rendered for reading on a terminal (headings, lists, tables, links) with rich."""
    from rich.console import Console
    from rich.markdown import Markdown

    Console(soft_wrap=False).print(Markdown(text, hyperlinks=True))
