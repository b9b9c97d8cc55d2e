"""Reading files before and after a commit for the surface facts: from a throw-away git repository and from
the fake GitHub over real HTTP (contents endpoint, recursive tree, the request budget)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from adapters.github import GitHubSource
from adapters.github import source as github
from adapters.local_git import LocalGitSource, tree_listing
from tests.fakes.github import FakeGitHub
from tests.fakes.gitrepo import GitRepo, isolate_git_env

WHEN = "2026-01-26T10:00:00+08:00"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git_env(monkeypatch, tmp_path / "home")
    return GitRepo.init(tmp_path / "kit")


async def test_local_git_reads_blobs_in_one_batch_and_skips_binaries_and_large_files(repo, tmp_path):
    first = repo.commit(
        "Start",
        {
            "kit/api.py": "def go():\n    pass\n",
            "logo.png": b"\x89PNG\r\n\x00\x00",
            "big.py": "x = 1\n" * 100,
        },
        when=WHEN,
    )
    second = repo.commit(
        "Change", {"kit/api.py": "def go(fast=False):\n    pass\n"}, delete=["big.py"], when=WHEN
    )
    bare = repo.clone(tmp_path / "kit.git", bare=True)
    source = LocalGitSource(bare)
    texts = await source.read_files(
        [
            (first, "kit/api.py"),
            (second, "kit/api.py"),
            (second, "big.py"),  # deleted: absent
            (first, "big.py"),  # over the cap: skipped, not half-read
            (first, "logo.png"),  # binary
            (first, "kit"),  # a folder
            (first, "kit/api.py"),  # asked twice: read once
        ],
        max_bytes=200,
    )
    assert texts.texts == {
        (first, "kit/api.py"): "def go():\n    pass\n",
        (second, "kit/api.py"): "def go(fast=False):\n    pass\n",
        (second, "big.py"): None,
    }
    assert texts.skipped == {(first, "big.py"), (first, "logo.png"), (first, "kit")}
    assert sorted(await source.list_paths(second)) == ["kit/api.py", "logo.png"]


async def test_local_git_reads_files_whose_names_are_not_utf8(repo, tmp_path):
    # Linux and git take any bytes for a name: these are latin-1 (Python writes b"\xe9" from "\udce9").
    cafe, naive, cafe_e8 = "kit/caf\udce9.py", "kit/na\udcefve.py", "kit/caf\udce8.py"
    first = repo.commit("Start", {cafe: "def brew(a):\n    return a\n", naive: "x = 1\n"}, when=WHEN)
    second = repo.commit("Change", {cafe: "def other(a):\n    return a\n"}, delete=[naive], when=WHEN)
    twins = repo.commit("Twin", {cafe_e8: "y = 2\n"}, when=WHEN)
    source = LocalGitSource(repo.clone(tmp_path / "kit.git", bare=True))
    commit = await source.get_commit(second)
    # shown and stored with replacement characters, as the commit's files list them
    assert sorted((f.path, f.status) for f in commit.files) == [
        ("kit/caf\ufffd.py", "modified"),
        ("kit/na\ufffdve.py", "removed"),
    ]
    texts = await source.read_files(
        [(first, "kit/caf\ufffd.py"), (second, "kit/caf\ufffd.py"), (first, "kit/na\ufffdve.py"),
         (second, "kit/na\ufffdve.py"), (twins, "kit/caf\ufffd.py")],
        max_bytes=1_000,
    )  # fmt: skip
    assert texts.texts == {
        (first, "kit/caf\ufffd.py"): "def brew(a):\n    return a\n",
        (second, "kit/caf\ufffd.py"): "def other(a):\n    return a\n",
        (first, "kit/na\ufffdve.py"): "x = 1\n",
        (second, "kit/na\ufffdve.py"): None,  # deleted: absent
    }
    # two names that show alike: neither is read (nor taken for an absent file)
    assert texts.skipped == {(twins, "kit/caf\ufffd.py")}
    assert await source.text_at(first, "kit/na\ufffdve.py") == "x = 1\n"
    assert await source.text_at(second, "kit/na\ufffdve.py") is None
    assert "kit/caf\ufffd.py" in await source.list_paths(first)


@pytest.fixture
def fake():
    with FakeGitHub("acme/kit") as gh:
        yield gh


async def test_github_reads_contents_with_etags_and_absent_files(fake, store):
    sha = "a" * 40
    fake.set_file(sha, "kit/api.py", "def go():\n    pass\n")
    fake.set_file(sha, "assets/logo.png", b"\x89PNG\x00")
    fake.set_file(sha, "data/huge.py", "x" * 2_000_000)
    async with GitHubSource("acme/kit", store=store, base_url=fake.base_url, token="t") as source:
        wanted = [(sha, "kit/api.py"), (sha, "kit/gone.py"), (sha, "assets/logo.png"), (sha, "data/huge.py")]
        texts = await source.read_files(wanted, max_bytes=1_000_000)
        assert texts.texts == {(sha, "kit/api.py"): "def go():\n    pass\n", (sha, "kit/gone.py"): None}
        assert texts.skipped == {(sha, "assets/logo.png"), (sha, "data/huge.py")}
        assert sorted(await source.list_paths(sha)) == ["assets/logo.png", "data/huge.py", "kit/api.py"]
        again = await source.read_files([(sha, "kit/api.py")], max_bytes=1_000_000)
        assert again.texts[(sha, "kit/api.py")] == "def go():\n    pass\n"
    contents = [r for r in fake.log if "/contents/" in r.path]
    assert contents[-1].status == 304  # revalidated: no quota spent on a re-read
    assert contents[0].query == {"ref": sha}


async def test_github_without_a_token_reads_within_a_small_budget(fake, store):
    sha = "b" * 40
    for i in range(30):
        fake.set_file(sha, f"kit/m{i}.py", f"X{i} = {i}\n")
    async with GitHubSource("acme/kit", store=store, base_url=fake.base_url) as source:
        texts = await source.read_files([(sha, f"kit/m{i}.py") for i in range(30)], max_bytes=10_000)
        read = [k for k in texts.texts if texts.read(k)]
        assert len(read) == github.SURFACE_READS_ANONYMOUS
        assert not any(texts.read((sha, f"kit/m{i}.py")) for i in range(github.SURFACE_READS_ANONYMOUS, 30))
        assert await source.list_paths(sha) is None  # the budget is spent: no more requests
    assert fake.requests == github.SURFACE_READS_ANONYMOUS


async def test_github_rate_limit_stops_the_reads_without_waiting(fake, store):
    sha = "c" * 40
    fake.set_file(sha, "kit/a.py", "A = 1\n")
    fake.set_file(sha, "kit/b.py", "B = 1\n")
    reset = int(datetime.now(UTC).timestamp()) + 3600
    fake.fail_next(
        403,
        path_contains="/contents/",
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
    )
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async with GitHubSource(
        "acme/kit", store=store, base_url=fake.base_url, token="t", sleep=sleep
    ) as source:
        texts = await source.read_files([(sha, "kit/a.py"), (sha, "kit/b.py")], max_bytes=10_000)
        later = await source.read_files([(sha, "kit/a.py")], max_bytes=10_000)
    assert slept == []  # facts are never worth waiting an hour for
    assert len(texts.texts) <= 1 and later.texts == {}


async def test_local_git_lists_blob_ids_and_reads_blobs_by_id(repo, tmp_path, monkeypatch):
    first = repo.commit(
        "Start",
        {"docs/a.md": "# A\n", "logo.png": b"\x89PNG\r\n\x00\x00", "big.md": "x\n" * 200},
        when=WHEN,
    )
    (repo.path / "link.md").symlink_to("docs/a.md")
    linked = repo.commit("Link", when=WHEN)  # `git add --all` takes the link
    source = LocalGitSource(repo.clone(tmp_path / "kit.git", bare=True))
    blobs = await source.list_blobs(first)
    assert set(blobs) == {"docs/a.md", "logo.png", "big.md"}
    assert "link.md" not in await source.list_blobs(linked)  # a symbolic link is no file to read
    texts = await source.read_blobs([*blobs.values(), "not-an-id", "0" * 40], max_bytes=100)
    assert texts[blobs["docs/a.md"]] == "# A\n"
    assert texts[blobs["logo.png"]] is None and texts[blobs["big.md"]] is None  # binary, over the cap
    assert texts["0" * 40] is None and "not-an-id" not in texts  # missing: None; not an id: never asked
    assert await source.list_blobs("0" * 40) is None  # a commit this clone does not have
    # a batch's newest commit is listed for its paths, and the next batch's docs are read at it: its tree
    # objects are read once
    source = LocalGitSource(source.git_dir)
    parsed = _parsed_trees(monkeypatch)
    assert sorted(await source.list_paths(linked)) == ["big.md", "docs/a.md", "link.md", "logo.png"]
    assert set(await source.list_blobs(linked)) == {"big.md", "docs/a.md", "logo.png"}
    assert sorted(parsed) == sorted(_tree_objects(repo, linked))


def _parsed_trees(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The tree objects the local source's tree listings parse from here on (their data, one per read)."""
    parsed: list[bytes] = []
    original = tree_listing._entries

    def parsing(data: bytes, id_bytes: int) -> list[tuple[int, bytes, bytes]]:
        parsed.append(data)
        return original(data, id_bytes)

    monkeypatch.setattr(tree_listing, "_entries", parsing)
    return parsed


def _tree_objects(repo: GitRepo, *shas: str) -> list[bytes]:
    """The data of every distinct tree object of the commits, each once."""
    ids = {repo.git("rev-parse", f"{sha}^{{tree}}").strip() for sha in shas}
    for sha in shas:
        ids.update(
            row.split()[2] for row in repo.git("ls-tree", "-r", "-t", sha).splitlines() if " tree " in row
        )
    return [repo.git_bytes("cat-file", "tree", oid) for oid in ids]


async def test_github_lists_blob_ids_from_the_tree_it_lists_paths_from(fake, store):
    sha = "b" * 40
    fake.set_file(sha, "docs/a.md", "# A\n")
    fake.set_file(sha, "kit/api.py", "def go():\n    pass\n")
    async with GitHubSource("acme/kit", store=store, base_url=fake.base_url, token="t") as source:
        left = source.surface_reads_left
        paths = await source.list_paths(sha)
        blobs = await source.list_blobs(sha)
        assert source.surface_reads_left == left - 1  # one listing serves both
        texts = await source.read_blobs([blobs["docs/a.md"], "not-an-id"], max_bytes=100)
        small = await source.read_blobs([blobs["kit/api.py"]], max_bytes=5)
    assert sorted(paths) == sorted(blobs) == ["docs/a.md", "kit/api.py"]
    assert texts == {blobs["docs/a.md"]: "# A\n"}  # not an id: never asked
    assert small == {blobs["kit/api.py"]: None}  # over the cap


async def test_local_git_reads_a_blob_once_for_batch_after_batch_and_commits_by_sha(
    repo, tmp_path, monkeypatch
):
    """A file version the next batch reads again (its "before"), or the docs read at a listed tree, costs
    no second `cat-file --batch` or `ls-tree`; commits read by sha are those get_commit reads, in order."""
    first = repo.commit("Start", {"kit/api.py": "def go():\n    pass\n", "docs/a.md": "# A\n"}, when=WHEN)
    second = repo.commit("Change", {"kit/api.py": "def go(fast=False):\n    pass\n"}, when=WHEN)
    source = LocalGitSource(repo.clone(tmp_path / "kit.git", bare=True))
    calls: list[str] = []
    original = source._git_async

    async def counting(*args, **kw):
        calls.append(" ".join(a for a in args[:2] if not a.startswith("--batch-check")))
        return await original(*args, **kw)

    async def reading(oids):
        calls.append("blobs")
        return await original_reads(oids)

    source._git_async = counting
    original_reads, source._blob_bytes = source._blob_bytes, reading
    parsed = _parsed_trees(monkeypatch)
    texts = await source.read_files([(first, "kit/api.py"), (second, "kit/api.py")], max_bytes=1000)
    again = await source.read_files([(second, "kit/api.py"), (second, "docs/a.md")], max_bytes=1000)
    assert again.texts == {
        (second, "kit/api.py"): texts.texts[second, "kit/api.py"],
        (second, "docs/a.md"): "# A\n",
    }
    blobs = await source.list_blobs(second)
    for sha in (first, second, first):
        await source.list_paths(sha)
    read = await source.read_blobs(list(blobs.values()), max_bytes=1000)
    assert read == {blobs["kit/api.py"]: "def go(fast=False):\n    pass\n", blobs["docs/a.md"]: "# A\n"}
    # each blob read once (the docs file only by the second call), each tree object once, no ls-tree
    assert calls.count("blobs") == 2 and sorted(parsed) == sorted(_tree_objects(repo, first, second))
    assert not any(call.startswith("ls-tree") for call in calls)
    assert await source.read_commits([second, first]) == [await source.get_commit(s) for s in (second, first)]


def test_kept_drops_the_least_recently_used_past_its_byte_budget_but_keeps_the_newest() -> None:
    from adapters.local_git.kept import Kept

    kept: Kept[str, str | None] = Kept(10, lambda v: len(v or ""), keep_at_least=1)
    kept.put("a", "1234")
    kept.put("b", None)  # a binary: kept, costs nothing
    kept.put("c", "1234")
    assert kept.get("a") == "1234"  # now the most recent: "b" and "c" are older
    kept.put("d", "12345")  # 13 bytes: the oldest go until it fits
    assert [k for k in "abcd" if k in kept] == ["a", "d"] and kept.bytes == 9
    kept.put("huge", "x" * 50)  # over the budget alone: the newest stays
    assert len(kept) == 1 and kept.get("huge") == "x" * 50 and kept.bytes == 50
