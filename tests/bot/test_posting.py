"""The platform-neutral posting engine: order, idempotency, resume, and concurrent posters."""

import asyncio

import pytest

from bot.posting import Posted, digest_items, post_digest
from bot.store import Store
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
