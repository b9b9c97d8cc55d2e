"""Issue 18 item 1: one guard for every path the CLI writes. Every writing option (`--out` of each verb,
`weekly --chart`) against every database file the process could use (`--db`, DIGEST_DB, the default
path, a symlink to one, their -wal/-shm/-journal): refused in one line with exit 2, the database
intact, and nothing else written (a refused command is never half done)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from bot.store.db import Store
from tests.bot.cli.test_cli import DAY, repo  # noqa: F401  (the throw-away clone fixture)

WRITERS = {
    "digest --out": lambda git, target: ["digest", "--git-dir", git, "--date", DAY, "--out", target],
    "analyze --out": lambda git, target: ["analyze", "HEAD", "--git-dir", git, "--out", target],
    "eval --out": lambda git, target: [
        "eval",
        "--git-dir",
        git,
        "--since",
        DAY,
        "--until",
        DAY,
        "--out",
        target,
    ],
    "weekly --out": lambda git, target: ["weekly", "--git-dir", git, "--week", "2026-W05", "--out", target],
    "weekly --chart": lambda git, target: [
        *("weekly", "--git-dir", git, "--week", "2026-W05", "--out", "week.md", "--chart", target)
    ],
}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def make_db(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Store(path).close()
    for suffix in ("-wal", "-shm", "-journal"):
        side = Path(f"{path}{suffix}")
        if not side.exists():
            side.write_bytes(b"sqlite side file " + suffix.encode())
    return path


@pytest.fixture
def place(tmp_path, monkeypatch):
    """Three databases the process could use at once: --db, DIGEST_DB and the default path."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    dbs = {
        "--db": make_db(tmp_path / "cli" / "digest.db"),
        "DIGEST_DB": make_db(tmp_path / "env" / "digest.db"),
        "default": make_db(tmp_path / "xdg" / "digestbot" / "digest.db"),
    }
    monkeypatch.setenv("DIGEST_DB", str(dbs["DIGEST_DB"]))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    (work / "link-to-db").symlink_to(dbs["--db"])
    (work / "link-to-env-db").symlink_to(dbs["DIGEST_DB"])
    return tmp_path, dbs


TARGETS = [
    (which, suffix)
    for which in ("--db", "DIGEST_DB", "default")
    for suffix in ("", "-wal", "-shm", "-journal")
] + [("link-to-db", ""), ("link-to-env-db", "")]


@pytest.mark.parametrize("writer", list(WRITERS))
@pytest.mark.parametrize(("which", "suffix"), TARGETS)
def test_no_writing_option_touches_any_database(repo, place, writer, which, suffix):  # noqa: F811
    root, dbs = place
    target = f"{dbs[which]}{suffix}" if which in dbs else which
    before = snapshot(root)
    args = WRITERS[writer](str(repo.path), target)
    result = CliRunner().invoke(cli, ["--db", str(dbs["--db"]), *args], catch_exceptions=False)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "it is digestbot's database" in lines[0], result.stderr
    assert writer.split()[-1] in lines[0]  # names the option
    assert snapshot(root) == before  # no database touched, no chart, no report, no analysis stored


def test_the_weekly_chart_default_path_is_guarded_too(repo, place):  # noqa: F811
    root, _ = place
    os.chdir(root / "work")
    # A database that happens to sit where the chart would go by default.
    clash = make_db(root / "work" / "weekly-acme-widgets-2026-W05.zh.png")
    before = snapshot(root)
    result = CliRunner().invoke(
        cli,
        ["--db", str(clash), "weekly", "--git-dir", str(repo.path), "--week", "2026-W05", "--out", "-"],
        catch_exceptions=False,
    )
    assert result.exit_code == 2, result.output
    assert "--chart" in result.stderr and "digestbot's database" in result.stderr
    assert result.stdout == ""  # the report was not printed either
    assert snapshot(root)[str(clash.relative_to(root))] == before[str(clash.relative_to(root))]


def test_a_refused_out_leaves_no_chart_behind(repo, place):  # noqa: F811
    root, dbs = place
    result = CliRunner().invoke(
        cli,
        ["weekly", "--git-dir", str(repo.path), "--week", "2026-W05", "--out", str(dbs["default"])],
        catch_exceptions=False,
    )
    assert result.exit_code == 2
    assert not list((root / "xdg" / "digestbot").glob("*.png")) and not list(root.rglob("*.png"))


def test_outputs_elsewhere_are_written(repo, place):  # noqa: F811
    root, _ = place
    result = CliRunner().invoke(
        cli,
        ["weekly", "--git-dir", str(repo.path), "--week", "2026-W05", "--out", "week.md", "--chart", "c.png"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert (root / "work" / "week.md").read_text(encoding="utf-8").count("](c.png)") == 1
    assert (root / "work" / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
