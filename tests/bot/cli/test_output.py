"""`--out` never loses a user's file (bot/cli/output.py), against a temporary directory."""

from __future__ import annotations

import os
import socket
import stat
import threading

import pytest

from analysis.errors import InputError
from bot.cli.output import store_files, write_text
from bot.store.db import Store


def test_new_file_gets_the_umask_mode_and_parent_folders(tmp_path):
    old = os.umask(0o027)
    try:
        write_text("hello", tmp_path / "a" / "b" / "r.md")
    finally:
        os.umask(old)
    out = tmp_path / "a" / "b" / "r.md"
    assert out.read_text(encoding="utf-8") == "hello\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert [p.name for p in out.parent.iterdir()] == ["r.md"]  # no temporary file left behind


def test_existing_file_is_replaced_keeping_its_mode(tmp_path):
    out = tmp_path / "r.md"
    out.write_text("old", encoding="utf-8")
    out.chmod(0o640)
    write_text("新的报告", out)
    assert out.read_text(encoding="utf-8") == "新的报告\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


def test_symlink_is_followed_and_stays_a_link(tmp_path):
    target = tmp_path / "real.md"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o600)
    link = tmp_path / "link.md"
    link.symlink_to(target)
    write_text("new", link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8") == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.md"
    link.symlink_to(tmp_path / "later.md")
    write_text("x", link)
    assert link.is_symlink() and (tmp_path / "later.md").read_text(encoding="utf-8") == "x\n"


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
def test_the_store_files_are_refused(tmp_path, suffix):
    db = tmp_path / "digest.db"
    Store(db).close()
    own = tmp_path / f"digest.db{suffix}"
    if not own.exists():
        own.write_bytes(b"sqlite side file")
    before = own.read_bytes()
    with pytest.raises(InputError, match="digestbot's database"):
        write_text("report", own, protected=store_files(db))
    assert own.read_bytes() == before


def test_the_store_is_refused_through_a_symlink_and_a_hard_link(tmp_path):
    db = tmp_path / "digest.db"
    Store(db).close()
    before = db.read_bytes()
    (tmp_path / "sym").symlink_to(db)
    os.link(db, tmp_path / "hard")
    for alias in ("sym", "hard"):
        with pytest.raises(InputError, match="digestbot's database"):
            write_text("report", tmp_path / alias, protected=store_files(db))
    assert db.read_bytes() == before


def test_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_text("through the pipe", fifo)
    reader.join(timeout=10)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)  # still a FIFO, not replaced by a file


def test_character_device_is_written_in_place():
    write_text("discarded", "/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_device_is_one_error():
    with pytest.raises(InputError, match="No space left"):
        write_text("x", "/dev/full")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_directory_empty_and_socket_are_refused(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        write_text("x", "/")
    with pytest.raises(InputError, match="is a directory"):
        write_text("x", tmp_path)
    with pytest.raises(InputError, match="empty"):
        write_text("x", "")
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        with pytest.raises(InputError, match="socket"):
            write_text("x", path)
    finally:
        server.close()


def test_dash_is_stdout(tmp_path, capsysbinary, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_text("to stdout", "-")
    assert capsysbinary.readouterr().out == b"to stdout\n"
    assert not (tmp_path / "-").exists()


def test_unwritable_folder_is_one_error_and_the_old_file_survives(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    folder = tmp_path / "ro"
    folder.mkdir()
    out = folder / "r.md"
    out.write_text("keep me", encoding="utf-8")
    folder.chmod(0o500)
    try:
        with pytest.raises(InputError, match="cannot write"):
            write_text("new", out)
    finally:
        folder.chmod(0o700)
    assert out.read_text(encoding="utf-8") == "keep me"


def test_a_hard_linked_file_is_written_in_place_so_both_names_agree(tmp_path):
    first = tmp_path / "a.md"
    first.write_text("old", encoding="utf-8")
    os.link(first, tmp_path / "b.md")
    write_text("new", first)
    assert (tmp_path / "b.md").read_text(encoding="utf-8") == "new\n"
    assert os.path.samefile(first, tmp_path / "b.md")


def test_an_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch):
    out = tmp_path / "r.md"
    out.write_text("keep me", encoding="utf-8")

    def boom(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(InputError, match="No space left"):
        write_text("new", out)
    assert out.read_text(encoding="utf-8") == "keep me"
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]
