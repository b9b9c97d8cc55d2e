"""The surface step end to end: `digestbot digest/analyze --format json` on a throw-away clone shows each
commit's facts and shipped paths; a second run reads no file; a source that fails costs the facts only."""

from __future__ import annotations

import json
import logging
from datetime import date
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from adapters.local_git import LocalGitSource
from analysis.errors import SourceError
from analysis.heuristic import rank
from analysis.models import Importance, SurfaceKind
from analysis.window import day_window
from bot.cli.main import cli
from bot.digest.pipeline import load_digest
from bot.digest.surface import PARSER_VERSION, fill_surface, with_stored_surface
from bot.json_schema import CommitJSON, DigestJSON
from bot.store.db import Store
from tests.fakes.gitrepo import GitRepo, isolate_git_env

DAY = "2026-01-26"
PYPROJECT = '[build-system]\nbuild-backend = "hatchling.build"\n[project]\nname = "engine"\nrequires-python = ">=3.9"\n'
CONFIG = (
    "from dataclasses import dataclass\n\n\n@dataclass\nclass CacheConfig:\n"
    "    block_size: int = 16\n    swap_space: float = 4.0\n"
)


@pytest.fixture
def repo(tmp_path, monkeypatch):
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "engine", remote="https://github.com/acme/engine.git")
    r.commit(
        "Initial import",
        {
            "pyproject.toml": PYPROJECT,
            "engine/__init__.py": "",
            "engine/config.py": CONFIG,
            "examples/demo.py": "def run_demo():\n    pass\n",
        },
        when="2026-01-25T09:00:00+08:00",
    )
    r.commit(
        "[Config] Rename swap_space (#21)",
        {"engine/config.py": CONFIG.replace("swap_space", "cpu_swap_gb")},
        when="2026-01-26T10:00:00+08:00",
    )
    r.commit(
        "[Doc] Update the demo (#22)",
        {"examples/demo.py": "def run_example():\n    pass\n"},
        when="2026-01-26T11:00:00+08:00",
    )
    r.commit(
        "[Build] Drop Python 3.9 (#23)",
        {"pyproject.toml": PYPROJECT.replace(">=3.9", ">=3.10")},
        when="2026-01-26T12:00:00+08:00",
    )
    return r


def run(*args, db):
    return CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)


def digest_json(repo, db, *extra):
    day = ["--date", DAY, "--tz", "Asia/Shanghai", "--format", "json"]
    result = run("digest", "--git-dir", str(repo.path), *day, *extra, db=db)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_digest_json_carries_each_commits_facts_and_shipped_paths(repo, tmp_path, monkeypatch):
    reads = []
    original = LocalGitSource.read_files

    async def counting(self, wanted, *, max_bytes):
        reads.append(len(wanted))
        return await original(self, wanted, max_bytes=max_bytes)

    monkeypatch.setattr(LocalGitSource, "read_files", counting)
    data = digest_json(repo, tmp_path / "d.db")
    DigestJSON.model_validate(data)  # the documented shape (docs/json.md)
    by_title = {c["title"]: c for c in data["commits"]}
    rename = by_title["[Config] Rename swap_space (#21)"]
    [fact] = rename["surface"]
    assert fact["kind"] == "field_renamed" and fact["breaking"] and not fact["aliased"]
    assert (fact["old"], fact["new"], fact["name"]) == (
        "swap_space",
        "cpu_swap_gb",
        "engine.config.CacheConfig.cpu_swap_gb",
    )
    assert fact["text"].startswith("field renamed: engine.config.CacheConfig.cpu_swap_gb")
    assert rename["shipped"] == ["engine/config.py"] and rename["prose"] == []  # a field renamed: code
    docs = by_title["[Doc] Update the demo (#22)"]
    assert docs["surface"] == [] and docs["shipped"] == []  # the example tree is not shipped: no API facts
    drop = by_title["[Build] Drop Python 3.9 (#23)"]
    assert [(f["kind"], f["name"]) for f in drop["surface"]] == [("support_dropped", "Python 3.9")]
    assert reads, "the first run reads the files"

    reads.clear()
    again = digest_json(repo, tmp_path / "d.db")
    assert reads == []  # cached by (sha, parser version): nothing read again
    assert [c["surface"] for c in again["commits"]] == [c["surface"] for c in data["commits"]]
    # a recorded digest (thread answers, resumed posts) carries the stored facts
    digest = load_digest(Store(tmp_path / "d.db"), f"acme/engine@main/{DAY}/Asia/Shanghai/zh")
    assert [[f.kind.value for f in c.surface] for c in digest.commits] == [
        [f["kind"] for f in c["surface"]] for c in data["commits"]
    ]


def test_a_module_whose_name_is_not_utf8_gets_its_facts(repo, tmp_path):
    # a latin-1 file name (Python writes b"caf\xe9" from "caf\udce9"): its API changes are found like any
    # other's, and the name is shown with a replacement character, so the JSON and the store stay UTF-8
    repo.commit("Add a module", {"engine/caf\udce9.py": "def brew(a):\n    return a\n"},
                when="2026-01-25T10:00:00+08:00")  # fmt: skip
    repo.commit("Drop brew (#24)", {"engine/caf\udce9.py": "X = 1\n"}, when="2026-01-26T13:00:00+08:00")
    data = digest_json(repo, tmp_path / "d.db", "--lang", "en")
    [drop] = [c for c in data["commits"] if c["title"] == "Drop brew (#24)"]
    assert [(f["kind"], f["name"], f["path"]) for f in drop["surface"] if f["kind"] == "removed"] == [
        ("removed", "engine.caf\ufffd.brew", "engine/caf\ufffd.py")
    ]
    assert drop["importance"] == "high"
    json.dumps(data, ensure_ascii=False).encode("utf-8")  # no lone surrogate anywhere


def test_a_module_moved_by_git_mv_breaks_its_import_path(repo, tmp_path):
    # a pure rename (no line changed) and a case-only one: `from engine.config import ...` stops working
    repo.commit("Rename config (#24)", rename={"engine/config.py": "engine/settings.py"},
                when="2026-01-26T13:00:00+08:00")  # fmt: skip
    repo.commit(
        "Case (#25)", rename={"engine/settings.py": "engine/Settings.py"}, when="2026-01-26T14:00:00+08:00"
    )
    data = digest_json(repo, tmp_path / "d.db", "--lang", "en")
    by_title = {c["title"]: c for c in data["commits"]}
    for title, old, new in (("Rename config (#24)", "engine.config", "engine.settings"),
                            ("Case (#25)", "engine.settings", "engine.Settings")):  # fmt: skip
        commit = by_title[title]
        assert [(f["kind"], f["old"], f["new"], f["breaking"]) for f in commit["surface"]] == [
            ("module_renamed", old, new, True)
        ]
        assert commit["importance"] == "high"
        assert f"breaks users: renames module `{old}` → `{new}` (no alias)" in commit["importance_reason"]


@pytest.mark.parametrize("odd", ["engine/new\nline.py", "engine/a\rb.py", "include/a\nb.h"])
def test_a_file_with_a_line_break_in_its_name_does_not_hide_the_commits_other_facts(repo, tmp_path, odd):
    # cat-file cannot be asked for such a path: it is skipped like a binary, and the rename beside it (from a
    # hostile or careless commit) is still found
    repo.commit("Move config (#26)", {odd: "x = 1\n"}, rename={"engine/config.py": "engine/settings.py"},
                when="2026-01-26T13:00:00+08:00")  # fmt: skip
    data = digest_json(repo, tmp_path / "d.db", "--lang", "en")
    [moved] = [c for c in data["commits"] if c["title"] == "Move config (#26)"]
    assert ("module_renamed", "engine.config", "engine.settings") in [
        (f["kind"], f["old"], f["new"]) for f in moved["surface"]
    ]
    assert moved["importance"] == "high"


def test_analyze_json_shows_the_facts(repo, tmp_path):
    result = run("analyze", "#21", "--git-dir", str(repo.path), "--format", "json", db=tmp_path / "d.db")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    CommitJSON.model_validate(data)
    assert [f["kind"] for f in data["surface"]] == ["field_renamed"]


async def test_a_failing_reader_costs_the_facts_not_the_digest(repo, tmp_path, caplog):
    source = LocalGitSource(repo.path)
    commits = await source.commits_in_window(
        "main", *day_window(date(2026, 1, 26), ZoneInfo("Asia/Shanghai"))
    )

    class Broken:
        repo = source.repo

        async def list_paths(self, sha):
            return None

        async def read_files(self, wanted, *, max_bytes):
            raise SourceError("git cat-file failed")

    store = Store(tmp_path / "d.db")
    with caplog.at_level(logging.WARNING, logger="bot.digest.surface"):
        filled = await fill_surface(Broken(), store, commits)
    assert [c.surface for c in filled] == [None] * len(commits)
    assert [c.sha for c in filled] == [c.sha for c in commits]
    assert len([r for r in caplog.records if "surface facts" in r.message]) == 1
    assert (
        store.surfaces(source.repo, [c.sha for c in commits], PARSER_VERSION) == {}
    )  # tried again next time

    class NoReader:
        repo = source.repo

    assert await fill_surface(NoReader(), store, commits) == commits  # a source that cannot read files

    filled = await fill_surface(source, store, commits)
    kinds = {k for c in filled for k in (f.kind for f in c.surface)}
    assert SurfaceKind.FIELD_RENAMED in kinds and SurfaceKind.SUPPORT_DROPPED in kinds


async def test_a_parser_failure_costs_that_commits_facts_only(repo, tmp_path, monkeypatch, caplog):
    import analysis.surface.commit as parsers  # the surface step imports its parsers when it parses

    real = parsers.commit_facts

    def flaky(commit, *args, **kwargs):
        if "Rename swap_space" in commit.message:
            raise RecursionError("maximum recursion depth exceeded")
        return real(commit, *args, **kwargs)

    monkeypatch.setattr(parsers, "commit_facts", flaky)
    source = LocalGitSource(repo.path)
    commits = await source.commits_in_window(
        "main", *day_window(date(2026, 1, 26), ZoneInfo("Asia/Shanghai"))
    )
    with caplog.at_level(logging.ERROR, logger="bot.digest.surface"):
        filled = await fill_surface(source, Store(tmp_path / "d.db"), commits)
    by_title = {c.title: c for c in filled}
    assert by_title["[Config] Rename swap_space (#21)"].surface is None
    assert by_title["[Build] Drop Python 3.9 (#23)"].surface is not None
    assert any("failed" in r.message for r in caplog.records)


@pytest.mark.parametrize("collector_on", [True, False])
async def test_files_are_parsed_with_the_cycle_collector_paused_and_its_state_restored(
    repo, tmp_path, monkeypatch, collector_on
):
    """Parsing allocates syntax trees by the hundred thousand: the cyclic collector would start over the whole
    heap again and again (a quarter of a long eval's parse time). Paused during the parse, restored after,
    and left off if it was off."""
    import gc

    import analysis.surface.commit as parsers

    real = parsers.commit_facts
    seen: list[bool] = []

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(parsers, "commit_facts", watched)
    source = LocalGitSource(repo.path)
    commits = await source.commits_in_window(
        "main", *day_window(date(2026, 1, 26), ZoneInfo("Asia/Shanghai"))
    )
    was = gc.isenabled()
    (gc.enable if collector_on else gc.disable)()
    try:
        filled = await fill_surface(source, Store(tmp_path / "d.db"), commits)
        after = gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()
    assert seen == [False] * len(commits) and len(commits) == 3
    assert after is collector_on
    assert all(c.surface is not None for c in filled)


async def test_the_step_through_the_github_source(tmp_path):
    from adapters.github import GitHubSource
    from tests.fakes.github import FakeGitHub, make_commit, make_file

    base = "f" * 40
    commit = make_commit(
        "[Server] Drop the legacy health route (#7)",
        "2026-01-26T02:00:00Z",
        parents=[base],
        files=[make_file("srv/app.py", additions=1, deletions=3)],
        repo="acme/srv",
    )
    routes = (
        "from fastapi import FastAPI\napp = FastAPI()\n\n@app.get('/v1/items')\ndef items():\n    return []\n"
    )
    legacy = "\n@app.get('/healthz')\ndef health():\n    return 'ok'\n"
    pyproject = '[build-system]\nbuild-backend = "hatchling.build"\n[project]\nname = "srv"\n'
    store = Store(tmp_path / "d.db")
    with FakeGitHub("acme/srv", [commit]) as gh:
        for sha, text in ((base, routes + legacy), (commit["sha"], routes)):
            gh.set_file(sha, "srv/app.py", text)
            gh.set_file(sha, "srv/__init__.py", "")
            gh.set_file(sha, "pyproject.toml", pyproject)
        async with GitHubSource("acme/srv", store=store, base_url=gh.base_url, token="t") as source:
            [read] = await fill_surface(source, store, [await source.get_commit(commit["sha"])])
            requests = gh.requests
            [again] = await fill_surface(source, store, [read])
        assert gh.requests == requests  # the second time the store answers
    assert {(f.kind, f.name, f.breaking) for f in read.surface} == {
        (SurfaceKind.ROUTE_REMOVED, "GET /healthz", True),
        (SurfaceKind.REMOVED, "srv.app.health", True),  # its handler went with it
    }
    assert read.shipped == {"srv/app.py"}
    assert again.surface == read.surface


TYPES = '''"""Types."""

Base64Bytes = bytes
"""Bytes that are base64-encoded.

Warning:
    In older versions, `Base64Bytes` used `base64.encodebytes`.

    ```python
    import base64

    class LegacyEncoder:
        @classmethod
        def decode(cls, data: bytes) -> bytes:
            return base64.decodebytes(data)
    ```
"""


def encode(data: bytes) -> bytes:
    if not data:
        raise ValueError("nothing to encode, see the docs")
    return data
'''
TYPES_DOCUMENTED = (
    TYPES.replace(
        "Warning:\n    In older versions, `Base64Bytes` used", "/// version-changed | v2.10\nBefore, it used"
    )
    .replace("    ```python\n    import base64\n", "```python\nimport base64\n")
    .replace("    class LegacyEncoder:\n        @classmethod\n", "class LegacyEncoder:\n    @classmethod\n")
    .replace("see the docs", "see the documentation")
)


@pytest.fixture
def documented(tmp_path, monkeypatch):
    """pydantic #12737's shape: a docstring holding a code example rewritten, a message reworded. The patch
    reads the example as code; the syntax trees before and after are the same but for the strings."""
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "engine", remote="https://github.com/acme/engine.git")
    r.commit(
        "Initial import",
        {"pyproject.toml": PYPROJECT, "engine/__init__.py": "", "engine/types.py": TYPES},
        when="2026-01-25T09:00:00+08:00",
    )
    r.commit(
        "Add version directives in documentation (#24)",
        {"engine/types.py": TYPES_DOCUMENTED},
        when="2026-01-26T10:00:00+08:00",
    )
    return r


async def test_a_docstring_rewrite_is_prose_by_the_parser_and_stays_so_from_the_store(documented, tmp_path):
    source = LocalGitSource(documented.path)
    commits = await source.commits_in_window(
        "main", *day_window(date(2026, 1, 26), ZoneInfo("Asia/Shanghai"))
    )
    assert "only comments, docstrings, messages or layout" not in rank(commits[0], "en")[1]  # the patch alone
    store = Store(tmp_path / "d.db")
    [filled] = await fill_surface(source, store, commits)
    assert filled.prose_files == {"engine/types.py"} and filled.surface == ()
    importance, reason = rank(filled, "en")
    assert importance == Importance.LOW
    assert reason.startswith(
        "impact (low): only comments, docstrings, messages or layout change in `engine/types.py`"
    )
    [stored] = with_stored_surface(store, commits)  # a recorded digest reads the same verdict back
    assert stored.prose_files == {"engine/types.py"}


def test_digest_json_names_the_files_that_changed_only_prose(documented, tmp_path):
    [commit] = digest_json(documented, tmp_path / "d.db")["commits"]
    assert commit["prose"] == ["engine/types.py"] and commit["importance"] == "low"


def test_a_commit_is_judged_with_the_packaging_of_its_time_not_of_a_later_commit_that_day(
    tmp_path, monkeypatch
):
    # a batch's packaging is read at its newest commit: a package renamed later the same day made an
    # earlier removal from it "not shipped", and a breaking change ranked low
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "lib")
    project = '[build-system]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "pkg"\n'
    project += '[tool.setuptools]\npackages = ["pkg"]\n'
    r.commit("Initial", {"pyproject.toml": project, "pkg/__init__.py": "def foo():\n    pass\n\n\ndef keep():\n    pass\n"},
             when="2026-01-25T09:00:00+08:00")  # fmt: skip
    r.commit("Remove foo", {"pkg/__init__.py": "def keep():\n    pass\n"}, when="2026-01-26T10:00:00+08:00")
    r.commit("Rename the package", {"pyproject.toml": project.replace('"pkg"', '"newpkg"')},
             rename={"pkg/__init__.py": "newpkg/__init__.py"}, when="2026-01-26T11:00:00+08:00")  # fmt: skip
    commits = digest_json(r, tmp_path / "d.db", "--lang", "en")["commits"]
    removal = next(c for c in commits if c["title"] == "Remove foo")
    assert removal["importance"] == "high"
    assert [s["kind"] for s in removal["surface"]] == ["removed"]
