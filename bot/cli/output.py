"""Where the CLI writes (`--out`, `--chart`, any later output option), without ever losing a user's file.

- no path or `-`: standard output (UTF-8, whatever the locale); a full disk or another write error on
  it is one line, like any other refusal;
- a symlink is followed, deliberately, like a shell's `>`: its target is written, the link stays;
- the store's own files are refused: every database the process could use (`--db`, DIGEST_DB, the
  default path), each by its name and through symlinks, and its -wal, -shm and -journal;
- a regular file (or a new one) is replaced atomically: a temporary file beside it, then a rename,
  keeping the old file's permission bits and owner, so a failed or interrupted run leaves the old
  content whole; a file with other hard links, or another user's file we could not give back, is
  written in place instead (a rename would split the links or take the file over);
- anything else that exists (a FIFO, a character device such as /dev/null) is written in place,
  as `>` would; a directory or a socket is refused. Every refusal is one DigestError line.

`check_target` makes every refusal without writing anything, so a command checks all of its outputs
before it writes the first one (bot/cli/main.py does so before the command even starts).
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


def store_files(*dbs: Path | str | None) -> list[Path]:
    """The database files and the files SQLite keeps beside them, each under its own name and under
    its real path (SQLite puts the -wal beside the symlink's target)."""
    files: list[Path] = []
    for db in dbs:
        if db is None or not str(db).strip() or str(db) == ":memory:":
            continue
        named = Path(db).expanduser()
        for base in dict.fromkeys([str(named), os.path.realpath(named)]):
            files += [Path(f"{base}{suffix}") for suffix in _STORE_SUFFIXES]
    return files


def check_target(
    out: str | Path | None, *, protected: Iterable[Path] = (), option: str = "--out"
) -> os.stat_result | None:
    """Every refusal of write_text/write_bytes for `out`, without writing: an empty name, digestbot's
    database, a directory, a socket. Returns the target's stat (None: new file or stdout)."""
    if out is None or str(out) == STDOUT:
        return None
    if not str(out).strip():
        raise InputError(f"{option} is empty: give a file name, or - for standard output")
    path = Path(out).expanduser()
    target = Path(os.path.realpath(path))  # a symlink (chain) is followed to its target
    _refuse_store(path, target, protected, option)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"cannot write {path}: it is a directory; give a file name")
    if stat.S_ISSOCK(info.st_mode):
        raise InputError(f"cannot write {path}: it is a socket")
    return info


def write_text(
    text: str, out: str | Path | None, *, protected: Iterable[Path] = (), option: str = "--out"
) -> None:
    """Write text (a final newline added) to stdout or to `out` by the rules above."""
    if not text.endswith("\n"):
        text += "\n"
    if out is None or str(out) == STDOUT:
        _to_stdout(text, text.encode("utf-8"))
        return
    write_bytes(text.encode("utf-8"), out, protected=protected, option=option)


def write_bytes(
    data: bytes, out: str | Path, *, protected: Iterable[Path] = (), option: str = "--out"
) -> None:
    """Write data to the file `out` by the rules above (a PNG, a report)."""
    protected = list(protected)
    info = check_target(out, protected=protected, option=option)
    path = Path(out).expanduser()
    target = Path(os.path.realpath(path))
    try:
        if info is not None and (not stat.S_ISREG(info.st_mode) or _must_keep_inode(info)):
            _in_place(target, data)  # FIFO, device, shared or foreign file: what `>` does
        else:
            _atomic(target, data, info)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _to_stdout(text: str, data: bytes) -> None:
    try:
        stream = getattr(sys.stdout, "buffer", None)
        if stream is None:  # a text-only stream (embedding): it is its own encoder
            sys.stdout.write(text)
        else:
            stream.write(data)
        sys.stdout.flush()
    except BrokenPipeError:
        raise  # the reader went away: the CLI ends quietly (exit 141)
    except OSError as exc:  # a full disk (ENOSPC), a quota, an I/O error
        _drop_stdout()
        raise InputError(f"cannot write to standard output: {exc.strerror or exc}") from None


def _drop_stdout() -> None:
    """Point stdout at /dev/null: what is still buffered cannot fail again at the interpreter's exit
    and add a second, unreadable error."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _refuse_store(path: Path, target: Path, protected: Iterable[Path], option: str = "--out") -> None:
    for own in protected:
        real = Path(os.path.realpath(own))
        same = real == target
        if not same:
            with contextlib.suppress(OSError):  # hard links: the same file under another name
                same = os.path.samefile(real, target)
        if same:
            raise InputError(
                f"refusing to write {option} over {path}: it is digestbot's database ({own.name})"
            )


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
