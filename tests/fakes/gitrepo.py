"""Throw-away git repositories with fixed dates, for tests of anything that reads a local clone.

    repo = GitRepo.init(tmp_path / "widgets", remote="https://github.com/acme/widgets.git")
    sha = repo.commit("[Bugfix] Fix x (#12)", files={"a.py": "x = 1\\n"}, when="2026-01-26T10:00:00+08:00")
    repo.commit("Move", rename={"a.py": "src/b.py"}, delete=["README"], when="2026-01-26T11:00:00+08:00")
    bare = repo.clone(tmp_path / "widgets.git", bare=True)

Every git call runs with an environment of its own (HOME, GIT_CONFIG_GLOBAL=/dev/null,
GIT_CONFIG_NOSYSTEM=1, fixed identities), so results do not depend on the user's git config, and
the same dates give the same SHAs. Code under test that runs git itself still sees the process
environment: `isolate_git_env(monkeypatch, home)` pins that too.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

AUTHOR = ("Ada Lovelace", "ada@example.com")
COMMITTER = ("Grace Hopper", "grace@example.com")

_STRIP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_CONFIG_PARAMETERS")


def git_env(home: Path) -> dict[str, str]:
    """Variables that make git ignore the user's and the system's configuration."""
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
        "TZ": "UTC",
    }


def isolate_git_env(monkeypatch: Any, home: Path) -> None:
    """Pin the process environment (a pytest monkeypatch) so code under test runs git like GitRepo does."""
    for name in _STRIP:
        monkeypatch.delenv(name, raising=False)
    for name, value in git_env(home).items():
        monkeypatch.setenv(name, value)


def git_date(when: str | datetime) -> str:
    """git's internal date format '<unix seconds> <+hhmm>' from an aware ISO 8601 time: exact, no parsing
    surprises. The offset is kept, so the commit records the zone it was made in."""
    moment = datetime.fromisoformat(when) if isinstance(when, str) else when
    offset = moment.utcoffset()
    if offset is None:
        raise ValueError(f"{when!r} needs a UTC offset, e.g. 2026-01-26T10:00:00+08:00")
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"{int(moment.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class GitRepo:
    """A non-bare repository in `path`, built commit by commit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # HOME for git: never read (GIT_CONFIG_GLOBAL wins) and never created; inside the repository so
        # that nothing is written outside the test's directory.
        self._home = path / ".git" / "home"

    @classmethod
    def init(cls, path: Path, *, remote: str | None = None, branch: str = "main") -> GitRepo:
        path.mkdir(parents=True, exist_ok=True)
        repo = cls(path)
        repo.git("init", "--quiet", f"--initial-branch={branch}")
        if remote:
            repo.git("remote", "add", "origin", remote)
        return repo

    def git(self, *args: str, input: bytes | str | None = None, env: Mapping[str, str] | None = None) -> str:
        """Run git in the work tree; stdout as text, stripped. Raises CalledProcessError on failure."""
        return self.git_bytes(*args, input=input, env=env).decode("utf-8", "replace").strip()

    def git_bytes(
        self, *args: str, input: bytes | str | None = None, env: Mapping[str, str] | None = None
    ) -> bytes:
        """Run git in the work tree; raw stdout."""
        full_env = {k: v for k, v in os.environ.items() if k not in _STRIP}
        full_env.update(git_env(self._home))
        full_env.update(
            GIT_AUTHOR_NAME=AUTHOR[0],
            GIT_AUTHOR_EMAIL=AUTHOR[1],
            GIT_COMMITTER_NAME=COMMITTER[0],
            GIT_COMMITTER_EMAIL=COMMITTER[1],
        )
        full_env.update(env or {})
        data = input.encode() if isinstance(input, str) else input
        proc = subprocess.run(
            ["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args],
            cwd=self.path,
            input=data,
            capture_output=True,
            env=full_env,
            check=False,
        )
        if proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, ["git", *args], proc.stdout, proc.stderr)
        return proc.stdout

    def commit(
        self,
        message: str | bytes,
        files: Mapping[str, str | bytes] | None = None,
        *,
        when: str | datetime,
        author_when: str | datetime | None = None,
        delete: Iterable[str] = (),
        rename: Mapping[str, str] | None = None,
        author: str | None = None,
        email: str | None = None,
        encoding: str | None = None,
    ) -> str:
        """Commit on the current branch and return the SHA.

        files: path → content (str is written as UTF-8, bytes as is); rename: old → new path (applied
        first, so a renamed file can also be rewritten via files); delete: paths to remove.
        when: committer date, author_when: author date (default: when), both aware ISO 8601 times.
        encoding: recorded as the commit's encoding header. A bytes message that is not UTF-8 and has no
        encoding is stored byte for byte (git commit would re-encode it from Latin-1)."""
        for old, new in (rename or {}).items():
            (self.path / new).parent.mkdir(parents=True, exist_ok=True)
            self.git("mv", "--", old, new)
        for old in delete:
            self.git("rm", "--quiet", "--", old)
        for name, content in (files or {}).items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        self.git("add", "--all")
        env = {"GIT_COMMITTER_DATE": git_date(when), "GIT_AUTHOR_DATE": git_date(author_when or when)}
        if author:
            env["GIT_AUTHOR_NAME"] = author
        if email:
            env["GIT_AUTHOR_EMAIL"] = email
        options = ["-c", f"i18n.commitEncoding={encoding}"] if encoding else []
        # whitespace cleanup only: a line starting with '#' is part of the message, not a comment
        self.git(*options, "commit", "--quiet", "--allow-empty", "--cleanup=whitespace", "-F", "-",
                 input=message, env=env)  # fmt: skip
        if isinstance(message, bytes) and encoding is None and not _is_utf8(message):
            self._replace_head_message(message)
        return self.head()

    def commit_raw(self, message: str, files: Mapping[str, str], *, date: str) -> str:
        """Commit files on the current branch with committer and author date `date` written as is
        ('<unix seconds> <+hhmm>'): dates `git commit` refuses or rewrites, such as '86400 +0000' (1970)
        or an offset past a day ('1794999600 +2500'), which old tools wrote; a root commit in an empty
        repository. Returns the SHA."""
        for name, content in files.items():
            (self.path / name).parent.mkdir(parents=True, exist_ok=True)
            (self.path / name).write_text(content, encoding="utf-8")
        self.git("add", "--all")
        parent = self._head_or_none()
        head = f"tree {self.git('write-tree')}\n" + (f"parent {parent}\n" if parent else "")
        who = f"{AUTHOR[0]} <{AUTHOR[1]}> {date}"
        raw = f"{head}author {who}\ncommitter {who}\n\n{message}\n"
        sha = self.git("hash-object", "-t", "commit", "-w", "--stdin", input=raw)
        self.git("update-ref", "HEAD", sha)
        return sha

    def _head_or_none(self) -> str | None:
        try:
            return self.head()
        except subprocess.CalledProcessError:  # an empty repository
            return None

    def _replace_head_message(self, message: bytes) -> None:
        header = self.git_bytes("cat-file", "commit", "HEAD").partition(b"\n\n")[0]
        raw = header + b"\n\n" + message.rstrip(b"\n") + b"\n"
        sha = self.git("hash-object", "-t", "commit", "-w", "--stdin", input=raw)
        self.git("update-ref", "HEAD", sha)

    def branch(self, name: str, start: str = "HEAD") -> None:
        self.git("branch", name, start)

    def checkout(self, name: str) -> None:
        self.git("checkout", "--quiet", name)

    def merge(self, branch: str, *, when: str | datetime, message: str | None = None) -> str:
        """A merge commit (--no-ff) of branch into the current branch; returns its SHA."""
        env = {"GIT_COMMITTER_DATE": git_date(when), "GIT_AUTHOR_DATE": git_date(when)}
        text = message or f"Merge branch '{branch}'"
        self.git("merge", "--quiet", "--no-ff", "--no-edit", "-m", text, branch, env=env)
        return self.head()

    def tag(self, name: str, ref: str = "HEAD") -> None:
        self.git("tag", name, ref)

    def head(self) -> str:
        return self.rev_parse("HEAD")

    def rev_parse(self, ref: str) -> str:
        return self.git("rev-parse", "--verify", f"{ref}^{{commit}}")

    def clone(self, dest: Path, *, bare: bool = False) -> Path:
        """A clone of this repository (origin = this path; branches become origin/<name>)."""
        self.git("clone", "--quiet", *(["--bare"] if bare else []), "--", str(self.path), str(dest))
        return dest
