"""`digestbot digest` of a shallow clone whose cut falls inside the day: the clone lacks the day's commits
before the cut, and the report says so (when its history starts, how to fetch the rest) in Markdown and
JSON; a clone holding the whole day says nothing of the kind."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from analysis.labels import label
from bot.cli.main import cli
from bot.digest.pipeline import load_digest
from bot.store.db import Store
from tests.analysis.reportcheck import check_report
from tests.fakes.gitrepo import GitRepo, isolate_git_env

DAY = "2026-03-10"
KEY = f"widgets@main/{DAY}/UTC/"


@pytest.fixture
def repo(tmp_path, monkeypatch) -> GitRepo:
    """Twenty commits over the day, an hour apart from 01:00 UTC, and two before it."""
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "widgets")
    r.commit("root", {"a.txt": "-1\n"}, when="2026-03-08T12:00:00+00:00")
    r.commit("base", {"a.txt": "0\n"}, when="2026-03-09T12:00:00+00:00")
    for hour in range(1, 21):
        r.commit(f"change {hour}", {"a.txt": f"{hour}\n"}, when=f"{DAY}T{hour:02d}:00:00+00:00")
    return r


@pytest.fixture
def shallow(repo, tmp_path):
    """A clone of the last five commits: its history starts at "change 16", 16:00 of the day."""
    path = tmp_path / "shallow" / "widgets"
    repo.git("clone", "--quiet", "--depth=5", f"file://{repo.path}", str(path))
    return path


def digest(path, tmp_path, lang, *extra):
    args = ["--db", str(tmp_path / "d.db"), "digest", "--git-dir", str(path), "--date", DAY, "--tz", "UTC"]
    result = CliRunner().invoke(cli, [*args, "--lang", lang, *extra], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_day_cut_by_a_shallow_clone_says_so_in_markdown(shallow, tmp_path, lang):
    report = digest(shallow, tmp_path, lang)

    line = label(lang, "shallow_line", at="2026-03-10 16:00 (UTC+00:00)", since="2026-03-09")
    assert f"> {line}" in report.splitlines()
    assert "git fetch --shallow-since=2026-03-09" in report and "git fetch --unshallow" in report
    stored = load_digest(Store(tmp_path / "d.db"), KEY + lang)
    assert [c.title for c in stored.commits] == [f"change {h}" for h in range(20, 15, -1)]
    assert (
        stored.history_start is not None and stored.history_start.isoformat() == "2026-03-10T16:00:00+00:00"
    )
    assert check_report(report, [stored], lang) == []


def test_a_day_cut_by_a_shallow_clone_says_so_in_json(shallow, tmp_path):
    data = json.loads(digest(shallow, tmp_path, "en", "--format", "json"))

    assert data["history_start"] == "2026-03-10T16:00:00+00:00"
    assert data["stats"]["total"] == 5


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_whole_day_says_nothing_of_a_cut(repo, tmp_path, lang):
    report = digest(repo.path, tmp_path, lang)
    data = json.loads(digest(repo.path, tmp_path, lang, "--format", "json"))

    assert "git fetch" not in report and "shallow" not in report.lower() and "浅克隆" not in report
    assert data["history_start"] is None and data["stats"]["total"] == 20


def test_a_shallow_clone_holding_the_whole_day_says_nothing_of_a_cut(repo, tmp_path):
    path = tmp_path / "deep" / "widgets"
    repo.git("clone", "--quiet", "--depth=21", f"file://{repo.path}", str(path))  # the cut is "base"
    assert (path / ".git" / "shallow").read_text().strip()

    report = digest(path, tmp_path, "en")

    assert "git fetch" not in report and "20 commits today" in report
