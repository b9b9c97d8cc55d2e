"""Chat subscriptions read while the store is busy: a /digest command reads its channel's subscription before
acknowledging, and Slack and Discord want the acknowledgement within 3 s. A write waiting for another
process's write lock (up to the busy timeout, 30 s) holds the store's connection; the read serves the last
rows it read instead of waiting behind it."""

from __future__ import annotations

import sqlite3
import threading

from bot.config.subscriptions import Registry
from bot.store.db import Store


def test_a_busy_store_serves_the_last_subscriptions_read_and_fresh_ones_once_free(tmp_path) -> None:
    path = tmp_path / "d.db"
    store = Store(path)
    registry = Registry(store)
    registry.chat.add("slack", "C1", "acme/widget", time="09:00", tz="UTC", lang="en")
    assert registry.lang_for_channel("slack", "C1") == "en"  # read once: the rows are kept

    # Another process holds SQLite's write lock; a call-log row handed over meanwhile makes our writer take
    # the connection and wait for that lock.
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    pending = store.log_llm_call_soon(model="m", sha="s1", outcome="ok")
    writer_waits = threading.Event()
    threading.Thread(target=lambda: (store._lock.acquire(), writer_waits.set(), store._lock.release())).start()
    try:
        # the chat subscription changed in the other process: not seen while busy, the last rows serve
        other.execute("UPDATE subscriptions SET lang = 'zh' WHERE channel = 'C1'")  # not committed yet
        assert not writer_waits.wait(0.5)  # the writer still holds the connection
        assert registry.lang_for_channel("slack", "C1") == "en"
        assert registry.repo_for_channel("slack", "C1") == "acme/widget"
        # answered while the write still waits: not after it gave up at the busy timeout
        assert not pending.done()
    finally:
        other.execute("COMMIT")
        other.close()
    pending.result(timeout=30)  # the writer got the lock and committed
    assert writer_waits.wait(30)
    assert registry.lang_for_channel("slack", "C1") == "zh"  # free again: read fresh
    store.close()


def test_the_first_read_waits_when_nothing_was_read_yet(tmp_path) -> None:
    store = Store(tmp_path / "d.db")
    registry = Registry(store)
    registry.chat.add("discord", "42", "acme/widget", time="09:00", tz="UTC", lang="zh")
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with store._lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(5)
    threading.Timer(0.5, release.set).start()
    assert registry.lang_for_channel("discord", "42") == "zh"  # waited for the store: nothing to serve
    holder.join(10)
    store.close()
