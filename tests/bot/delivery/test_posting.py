"""The platform-neutral posting engine: order, idempotency, resume, and concurrent posters."""

import asyncio
import os

import pytest

from analysis.errors import ServiceError
from analysis.models import key_of
from bot.delivery.posting import digest_items, post_digest
from bot.ports.protocols import Posted
from bot.store.db import Store
from tests.fakes.digests import make_digest


class RecordingPoster:
    """Records what each call posted; can fail once at a given item to simulate a crash."""

    platform = "test"

    def __init__(self, fail_at: str | None = None, delay: float = 0.0):
        self.posted: list[str] = []
        self.fail_at = fail_at
        self.delay = delay
        self._n = 0

    async def _post(self, item: str, thread: str | None) -> Posted:
        await asyncio.sleep(self.delay)
        if item == self.fail_at:
            self.fail_at = None
            raise ConnectionError("network dropped")
        self._n += 1
        self.posted.append(item)
        return Posted(message_id=f"m{self._n}", thread_id=thread or f"m{self._n}")

    async def post_parent(self, channel, digest):
        return await self._post("parent", None)

    async def post_card(self, channel, thread, digest, commit, analysis):
        return await self._post(f"card:{commit.sha}", thread)

    async def post_medium_list(self, channel, thread, digest, commits):
        return await self._post("medium", thread)

    async def post_report(self, channel, thread, digest, filename, markdown):
        assert markdown.startswith("# ") and filename.endswith(".md")
        return await self._post("report", thread)


async def test_order_and_idempotency(tmp_path):
    digest = make_digest()
    store = Store(tmp_path / "d.db")
    poster = RecordingPoster()
    first = await post_digest(poster, store, "C1", digest)
    assert poster.posted == digest_items(digest) == first.posted
    assert digest_items(digest)[0] == "parent" and digest_items(digest)[-1] == "report"
    again = await post_digest(poster, Store(tmp_path / "d.db"), "C1", digest)  # a restart: new Store
    assert again.posted == [] and set(again.skipped) == set(first.posted)
    assert poster.posted == first.posted
    other_channel = await post_digest(poster, store, "C2", digest)
    assert other_channel.posted == first.posted


async def test_interrupted_post_resumes_with_only_the_missing_items(tmp_path):
    digest = make_digest()
    items = digest_items(digest)
    store = Store(tmp_path / "d.db")
    poster = RecordingPoster(fail_at=items[2])
    with pytest.raises(ConnectionError):
        await post_digest(poster, store, "C1", digest)
    assert poster.posted == items[:2]
    resumed = await post_digest(poster, store, "C1", digest)
    assert resumed.posted == items[2:]
    assert poster.posted == items  # each item exactly once, in order
    # every thread item went to the parent's thread
    rows = store.get_posts("test", "C1", resumed.key)
    assert {r["thread_id"] for r in rows.values()} == {rows["parent"]["message_id"]}


async def test_concurrent_posts_of_one_digest_post_once(tmp_path):
    digest = make_digest()
    store = Store(tmp_path / "d.db")
    poster = RecordingPoster(delay=0.01)
    results = await asyncio.gather(*(post_digest(poster, store, "C1", digest) for _ in range(3)))
    assert poster.posted == digest_items(digest)
    assert sum(len(r.posted) for r in results) == len(digest_items(digest))


# -- across processes: the lease ------------------------------------------------------------------------

POSTER_SCRIPT = """
import asyncio, sys
from bot.delivery.posting import post_digest
from bot.ports.protocols import Posted
from bot.store.db import Store
from tests.fakes.digests import make_digest

class FilePoster:
    # Appends every item it posts to a file shared by the processes: duplicates show there.
    platform = "test"
    async def _post(self, item, thread):
        await asyncio.sleep(0.05)
        with open(sys.argv[2], "a") as log:
            log.write(item + "\\n")
        return Posted(message_id=item, thread_id=thread or item)
    async def post_parent(self, channel, digest):
        return await self._post("parent", None)
    async def post_card(self, channel, thread, digest, commit, analysis):
        return await self._post("card:" + commit.sha, thread)
    async def post_medium_list(self, channel, thread, digest, commits):
        return await self._post("medium", thread)
    async def post_report(self, channel, thread, digest, filename, markdown):
        return await self._post("report", thread)

result = asyncio.run(post_digest(FilePoster(), Store(sys.argv[1]), "C1", make_digest()))
print(len(result.posted), len(result.skipped))
"""


def test_two_processes_posting_one_digest_post_each_item_once(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    db, log = tmp_path / "d.db", tmp_path / "posted.log"
    Store(db).close()  # created (and migrated) once, before the race
    root = Path(__file__).resolve().parents[3]
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", POSTER_SCRIPT, str(db), str(log)],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=60) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    posted = log.read_text().split()
    assert sorted(posted) == sorted(digest_items(make_digest()))  # each item once, between the two
    counts = sorted(tuple(map(int, out.split())) for out, _ in outputs)
    assert counts == [(0, len(posted)), (len(posted), 0)]  # the loser waited, then found it all done


def _hold(store: Store, name: str, *, pid: int, expires_in: float) -> None:
    import socket
    import time

    store.db["leases"].insert(
        {
            "name": name,
            "holder": f"digestbot pid {pid} on {socket.gethostname()}",
            "host": socket.gethostname(),
            "pid": pid,
            "acquired_at": "2026-01-27T01:02:03+00:00",
            "expires_at": time.time() + expires_in,
        }
    )


async def test_a_post_held_elsewhere_waits_then_says_who_holds_it(tmp_path):
    import os

    digest = make_digest()
    store = Store(tmp_path / "d.db")
    name = f"post:test:C1:{key_of(digest)}"
    _hold(store, name, pid=os.getppid(), expires_in=60)  # a live process on this host
    poster = RecordingPoster()
    with pytest.raises(
        ServiceError, match=rf"is being posted by digestbot pid {os.getppid()} on .*since"
    ) as err:
        await post_digest(poster, store, "C1", digest, wait=0.3)
    assert "\n" not in str(err.value) and poster.posted == []


@pytest.mark.parametrize("why", ["expired", "holder-died"])
async def test_a_crashed_holder_does_not_block_for_ever(tmp_path, why):
    import subprocess
    import sys

    digest = make_digest()
    store = Store(tmp_path / "d.db")
    name = f"post:test:C1:{key_of(digest)}"
    if why == "expired":
        _hold(store, name, pid=os.getppid(), expires_in=-1)
    else:
        gone = subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
        )
        _hold(store, name, pid=int(gone.stdout), expires_in=60)  # kill -9'd: its lease outlives it
    poster = RecordingPoster()
    result = await post_digest(poster, store, "C1", digest, wait=0)
    assert result.posted == digest_items(digest)
    assert store.query("SELECT * FROM leases") == []  # released when done


async def test_uploaded_file_names_are_safe_for_any_repository_name(tmp_path):
    # A local clone's repository name is its folder's: spaces, quotes, a newline or a control character would
    # reach the upload's multipart header. The report, the radar's link to it and the weekly chart agree.
    from analysis.render.weekly import weekly_filename
    from bot.delivery.posting import report_filename
    from bot.digest.pipeline import save_digest
    from bot.digest.radar import report_link

    hostile = 'my "repo"\n\x07v2 (copy)'
    digest = make_digest(repo=hostile)
    name = report_filename(digest)
    assert name == f"digest-my-repo-v2-copy-{digest.day.isoformat()}.zh.md"
    poster = RecordingPoster()
    names: list[str] = []
    post_report = poster.post_report

    async def recording(channel, thread, digest, filename, markdown):
        names.append(filename)
        return await post_report(channel, thread, digest, filename, markdown)

    poster.post_report = recording
    store = Store(tmp_path / "d.db")
    await post_digest(poster, store, "C1", digest)
    assert names == [name]
    save_digest(store, digest)
    assert report_link(store, hostile, digest.commits[0].sha, "zh") == f"{name}#c-{digest.commits[0].sha[:12]}"

    class Week:
        repo, label, lang = "acme/widgets", "2026-W05", "en"

    assert weekly_filename(Week(), "png") == "weekly-acme-widgets-2026-W05.en.png"  # owner/repo as before
