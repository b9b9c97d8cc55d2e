"""Regenerate the sample reports: a small throw-away git repository with one day of commits, and
`digestbot digest` on it in English and Chinese (heuristic analyser, no network, no token).

    .venv/bin/python docs/samples/generate.py

tests/test_samples.py checks the committed samples are what this script produces today.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DAY = "2026-01-26"

# (committer date, message, {path: content})
COMMITS: list[tuple[str, str, dict[str, str]]] = [
    (
        "2026-01-25T10:00:00+00:00",
        "Initial import",
        {
            "widgets/__init__.py": "",
            "widgets/api.py": "def make(n):\n    return [0] * n\n",
            "README.md": "# widgets\n",
        },
    ),
    (
        "2026-01-26T01:12:00+00:00",
        "[Bugfix] Reject negative sizes in make() (#12)\n\nmake(-1) returned [].\n",
        {
            "widgets/api.py": "def make(n):\n    if n < 0:\n        raise ValueError(n)\n    return [0] * n\n",
            "tests/test_api.py": "import pytest\nfrom widgets.api import make\n\n\ndef test_negative():\n"
            "    with pytest.raises(ValueError):\n        make(-1)\n",
        },
    ),
    (
        "2026-01-26T04:30:00+00:00",
        "[Doc] Explain the size argument (#13)",
        {
            "docs/usage.md": "# Usage\n\n" + "make(n) builds n widgets.\n" * 20,
        },
    ),
    (
        "2026-01-26T09:45:00+00:00",
        "[Feature] Add an export command (#14)\n\nWrites widgets as CSV.\n",
        {
            **{
                f"widgets/export/{name}.py": "import csv\n\n\ndef write(rows, out):\n    w = csv.writer(out)\n"
                "    for row in rows:\n        w.writerow(row)\n" * 12
                for name in ("csv_out", "cli", "schema", "io")
            },
            "widgets/config.py": "DEFAULT_DELIMITER = ','\nMAX_ROWS = 100_000\n",
        },
    ),
    (
        "2026-01-26T15:20:00+00:00",
        "[CI] Run the tests on Python 3.13 (#15)",
        {
            ".github/workflows/ci.yml": "on: [push]\njobs:\n  test:\n    strategy:\n      matrix:\n"
            "        python: ['3.11', '3.12', '3.13']\n",
        },
    ),
    (
        "2026-01-27T08:00:00+00:00",
        "Next day: not in the sample",
        {"widgets/api.py": "def make(n):\n    return []\n"},
    ),
]


def git(repo: Path, *args: str, when: str | None = None) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Ada Lovelace",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada Lovelace",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if when:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def build_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "remote", "add", "origin", "https://github.com/acme/widgets.git")
    for when, message, files in COMMITS:
        for name, text in files.items():
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            (path / name).write_text(text, encoding="utf-8")
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", message, when=when)
    return path


def generate(out_dir: Path) -> list[Path]:
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        repo = build_repo(Path(tmp) / "widgets")
        for lang in ("en", "zh"):
            out = out_dir / f"report.{lang}.md"
            subprocess.run(
                [sys.executable, "-m", "bot.cli", "--db", str(Path(tmp) / "digest.db"), "digest",
                 "--git-dir", str(repo), "--date", DAY, "--tz", "UTC", "--lang", lang,
                 "--analyzer", "heuristic", "--out", str(out)],
                check=True,
                env={
                    **{k: v for k, v in os.environ.items() if not k.startswith(("DIGEST_", "OPENAI_"))},
                    "PYTHONPATH": str(HERE.parents[1]),  # this tree's digestbot
                },
            )  # fmt: skip
            written.append(out)
    return written


if __name__ == "__main__":
    for path in generate(HERE):
        print(path)
