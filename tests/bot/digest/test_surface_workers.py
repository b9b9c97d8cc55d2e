"""The surface step's parsing in worker processes (issue 21): the same facts as the thread's, a worker
that dies or a parser that fails there costs at most facts, and a small day starts no worker."""

from __future__ import annotations

import concurrent.futures
import logging
import os
from datetime import date
from zoneinfo import ZoneInfo

import pytest

import bot.digest.surface as surface
from adapters.local_git import LocalGitSource
from analysis.window import day_window
from bot.digest.surface import PARSER_VERSION, Parsers, fill_surface, fill_surfaces
from bot.store.db import Store
from tests.fakes.gitrepo import GitRepo, isolate_git_env

TZ = ZoneInfo("UTC")
PYPROJECT = '[build-system]\nbuild-backend = "hatchling.build"\n[project]\nname = "engine"\n'


def config(fields: list[str]) -> str:
    body = "".join(f"    {name}: int = {i}\n" for i, name in enumerate(fields))
    return f"from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n{body}"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """Two days of commits that each change the public API of a shipped package (a field renamed, a
    function added or removed), one of them "Boom"."""
    isolate_git_env(monkeypatch, tmp_path / "home")
    r = GitRepo.init(tmp_path / "engine", remote="https://github.com/acme/engine.git")
    fields = ["block_size", "swap_space"]
    r.commit(
        "Initial import",
        {"pyproject.toml": PYPROJECT, "engine/__init__.py": "", "engine/config.py": config(fields)},
        when="2026-01-25T09:00:00+00:00",
    )
    for day in (26, 27):
        for hour in range(10, 14):
            fields = [*fields[:-1], f"{fields[-1]}_{hour}"]
            title = "[Core] Boom" if (day, hour) == (27, 11) else f"[Core] Change {day}-{hour}"
            funcs = "".join(f"def api_{n}():\n    pass\n\n\n" for n in range(hour - 9))
            r.commit(
                title,
                {"engine/config.py": config(fields), "engine/api.py": funcs},
                when=f"2026-01-{day}T{hour}:00:00+00:00",
            )
    return r


async def days_of(repo) -> list[list]:
    source = LocalGitSource(repo.path)
    return [await source.commits_in_window("main", *day_window(date(2026, 1, d), TZ)) for d in (26, 27)]


@pytest.fixture
def small_batches(monkeypatch):
    """Batches of 2 commits and workers from the first commit: 4 batches for the two days."""
    monkeypatch.setattr(surface, "BATCH", 2)
    monkeypatch.setattr(surface, "POOL_MIN_COMMITS", 1)


def facts(groups) -> list[list]:
    return [[(c.sha, c.surface, c.shipped) for c in group] for group in groups]


async def test_the_workers_find_the_facts_the_thread_finds(repo, tmp_path, monkeypatch, small_batches):
    days = await days_of(repo)
    source = LocalGitSource(repo.path)
    sent: list[list[int]] = []
    real_submit = surface._submit
    monkeypatch.setattr(
        surface,
        "_submit",
        lambda pool, batches: sent.append([len(b.commits) for b in batches]) or real_submit(pool, batches),
    )
    with Parsers(workers=2) as parsers:
        in_workers = await fill_surfaces(source, Store(tmp_path / "w.db"), days, parsers)
    # every batch went to a worker, three consecutive ones to a task (the days' files parsed once a version:
    # each commit touches the same two modules), the last one alone
    assert sent == [[2, 2, 2], [2]]

    monkeypatch.setattr(surface, "POOL_MIN_COMMITS", 10**9)
    in_thread = await fill_surfaces(source, Store(tmp_path / "t.db"), days)
    assert len(sent) == 2  # no worker this time
    assert facts(in_workers) == facts(in_thread)
    assert all(c.surface for group in in_workers for c in group)  # every commit changed the API
    shas = [c.sha for group in days for c in group]
    stored = [Store(tmp_path / f"{name}.db").surfaces(source.repo, shas, PARSER_VERSION) for name in "wt"]
    assert stored[0] == stored[1] and len(stored[0]) == 8
    # the commits come back whole (their diffs were left out of what the workers were sent)
    assert [c.files for group in in_workers for c in group] == [c.files for group in days for c in group]


def _die(batches):
    os._exit(3)  # a worker killed (out of memory, a segfault in a parser's C code)


async def test_a_worker_that_dies_costs_no_facts(repo, tmp_path, monkeypatch, caplog, small_batches):
    days = await days_of(repo)
    monkeypatch.setattr(surface, "_work", _die)
    with caplog.at_level(logging.WARNING, logger="bot.digest.surface"), Parsers(workers=2) as parsers:
        filled = await fill_surfaces(LocalGitSource(repo.path), Store(tmp_path / "d.db"), days, parsers)
        assert parsers.broken and parsers.pool() is None  # not used again
    assert all(c.surface for group in filled for c in group)  # parsed in this process instead
    assert len([r for r in caplog.records if "workers failed" in r.message]) == 1


def _flaky_work(batches):
    import analysis.surface.commit as parsers

    real = parsers.commit_facts

    def flaky(commit, *args, **kwargs):
        if "Boom" in commit.message:
            raise RecursionError("boom in the parser")
        return real(commit, *args, **kwargs)

    parsers.commit_facts = flaky  # in this worker only
    try:
        return surface.parse_batches(batches)
    finally:
        parsers.commit_facts = real


async def test_a_parser_failure_in_a_worker_costs_that_commits_facts_and_is_logged_here(
    repo, tmp_path, monkeypatch, caplog, small_batches
):
    days = await days_of(repo)
    monkeypatch.setattr(surface, "_work", _flaky_work)
    store = Store(tmp_path / "d.db")
    with caplog.at_level(logging.ERROR, logger="bot.digest.surface"), Parsers(workers=2) as parsers:
        filled = await fill_surfaces(LocalGitSource(repo.path), store, days, parsers)
        assert not parsers.broken
    by_title = {c.title: c for group in filled for c in group}
    assert by_title["[Core] Boom"].surface is None
    assert all(c.surface for title, c in by_title.items() if title != "[Core] Boom")
    [record] = [r for r in caplog.records if "failed" in r.message]
    assert by_title["[Core] Boom"].short_sha in record.getMessage()
    assert "RecursionError: boom in the parser" in str(record.exc_info[1])  # the worker's traceback
    assert by_title["[Core] Boom"].sha not in store.surfaces(
        "acme/engine", list(by_title[t].sha for t in by_title), PARSER_VERSION
    )  # tried again next time


async def test_a_small_day_starts_no_worker(repo, tmp_path, monkeypatch):
    def no_pool(*args, **kwargs):
        raise AssertionError("a worker process started for a small day")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)  # imported when a pool starts
    [day, _] = await days_of(repo)
    filled = await fill_surface(LocalGitSource(repo.path), Store(tmp_path / "d.db"), day)
    assert len(filled) == 4 and all(c.surface for c in filled)
    # nor does a single batch however small the threshold: nothing to run beside it
    monkeypatch.setattr(surface, "POOL_MIN_COMMITS", 1)
    again = await fill_surface(LocalGitSource(repo.path), Store(tmp_path / "e.db"), day)
    assert facts([again]) == facts([filled])


async def test_a_worker_parses_its_next_task_against_the_files_of_its_last(repo, monkeypatch, request):
    """A worker keeps the latest version of each file it parsed: the next task's first version of a file
    is parsed with the bodies the two share blanked, and the facts are those of parsing it alone."""
    import gc

    from analysis.surface import python as surface_python

    request.addfinalizer(gc.unfreeze)  # a worker freezes what it keeps; this test runs it in-process

    days = await days_of(repo)
    source = LocalGitSource(repo.path)
    first, second = [await surface._read_batch(source, day) for day in days]
    alone = {**surface.parse_batch(first).found, **surface.parse_batch(second).found}
    monkeypatch.setattr(surface, "_WORKER_RELATIVES", None)  # a fresh worker
    blanked: list[int] = []
    real_blank = surface_python.blank

    def counted_blank(*args, **kwargs):
        out = real_blank(*args, **kwargs)
        blanked.append(len(out[1]))
        return out

    monkeypatch.setattr(surface_python, "blank", counted_blank)
    assert surface._work((first,)).found == {c.sha: alone[c.sha] for c in days[0]}
    assert surface._WORKER_RELATIVES.get("engine/api.py") is not None
    blanked.clear()
    assert surface._work((second,)).found == {c.sha: alone[c.sha] for c in days[1]}
    assert blanked and blanked[0] > 0  # its first version of a file: blanked against the last task's
    assert gc.get_freeze_count() > 0  # what it keeps is left out of later collections
