"""Group commit (bot/store/group.py): call-log rows and analyses handed over during a run are committed
by the store's writer thread, together when they arrive together, each durable before its future is
done, in the order handed over, and visible to every read that follows."""

import sqlite3
import threading
from datetime import UTC, datetime

import pytest

from analysis.models import Analysis, ChangeType, Importance
from bot.store.db import Store


def analysis(sha: str, **kw) -> Analysis:
    return Analysis(
        sha=sha, importance=Importance.LOW, importance_reason="r", change_type=ChangeType.BUGFIX,
        summary="s", lang="en", analyzer="llm", **kw,
    )  # fmt: skip


def hold(entered: threading.Event, release: threading.Event):
    """A write that keeps the writer (and the store's lock) until released."""

    def write() -> None:
        entered.set()
        release.wait(10)

    return write


def commits_of(store: Store) -> list[str]:
    """Every COMMIT the store's connection runs from now on."""
    seen: list[str] = []
    store.db.conn.set_trace_callback(
        lambda sql: seen.append(sql) if sql.strip().upper() == "COMMIT" else None
    )
    return seen


def rows_outside(path, table: str) -> int:
    """Rows another connection sees: what is committed, nothing else."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        conn.close()


def test_writes_handed_over_together_commit_together_each_durable_when_done(tmp_path):
    store = Store(tmp_path / "d.db")
    commits = commits_of(store)
    # Hold the writer in its first write: what is handed over meanwhile waits for the next commit.
    entered, release = threading.Event(), threading.Event()
    first = store._group.submit(hold(entered, release))
    assert entered.wait(10)
    futures = [store.log_llm_call_soon(model="m", sha=f"s{i}", outcome="ok") for i in range(3)]
    futures += [store.save_analysis_soon("o/n", analysis(f"s{i}"), "m", "p1") for i in range(3)]
    assert not any(f.done() for f in futures)
    release.set()
    first.result(10)
    for future in futures:
        future.result(10)
        # done means committed: another connection sees every row of its batch
        assert rows_outside(tmp_path / "d.db", "llm_calls") == 3
        assert rows_outside(tmp_path / "d.db", "analyses") == 3
    assert len(commits) == 2  # the held write's, then the six together
    store.close()


def test_a_failing_write_fails_alone(tmp_path):
    store = Store(tmp_path / "d.db")
    entered, release = threading.Event(), threading.Event()
    held = store._group.submit(hold(entered, release))
    assert entered.wait(10)
    good = store.log_llm_call_soon(model="m", sha="s1", outcome="ok")
    bad = store.log_llm_call_soon(model="m", sha="s2", no_such_column=1)
    after = store.save_analysis_soon("o/n", analysis("s3"), "m", "p1")
    release.set()
    held.result(10)
    good.result(10)
    after.result(10)
    with pytest.raises(sqlite3.OperationalError):
        bad.result(10)
    assert [r["sha"] for r in store.query("SELECT sha FROM llm_calls")] == ["s1"]
    assert store.get_analysis("o/n", "s3", "m", "p1", "en") == analysis("s3")
    store.close()


def test_writes_land_in_the_order_handed_over(tmp_path):
    """A grounding note goes on the newest call-log row of its commit: the row handed over before it."""
    store = Store(tmp_path / "d.db")
    store.log_llm_call_soon(model="m", repo="o/n", sha="s1", prompt_version="p1", outcome="ok")
    done = store.save_analysis_soon("o/n", analysis("s1", grounding_removed=["v9.9"]), "m", "p1")
    done.result(10)
    [row] = store.query("SELECT error FROM llm_calls WHERE sha = 's1'")
    assert row["error"] == "grounding removed: v9.9"
    store.close()


def test_reads_see_every_write_handed_over_before_them(tmp_path):
    store = Store(tmp_path / "d.db")
    entered, release = threading.Event(), threading.Event()
    store._group.submit(hold(entered, release))
    assert entered.wait(10)
    store.log_llm_call_soon(model="m", sha="s1", outcome="ok", tokens_in=5)
    store.save_analysis_soon("o/n", analysis("s1"), "m", "p1")
    release.set()
    # Each read commits what is queued first (after the held write, in order), whoever gets there first.
    assert store.llm_usage_since(datetime(2000, 1, 1, tzinfo=UTC))["tokens_in"] == 5
    assert store.get_analysis("o/n", "s1", "m", "p1", "en") == analysis("s1")
    assert store.latest_analysis("o/n", "s1") == analysis("s1")
    store.close()


def test_close_commits_what_is_queued_and_ends_the_writer(tmp_path):
    store = Store(tmp_path / "d.db")
    futures = [store.log_llm_call_soon(model="m", sha=f"s{i}", outcome="ok") for i in range(5)]
    writers = list(store._group._worker._threads)  # the executor's own threads
    store.close()
    assert all(f.done() and f.exception() is None for f in futures)
    assert rows_outside(tmp_path / "d.db", "llm_calls") == 5
    assert writers and not any(t.is_alive() for t in writers)


def test_call_rows_keep_the_store_s_prompt_policy_and_masking(tmp_path):
    store = Store(tmp_path / "d.db")
    store.keep_prompts = False
    store.log_llm_call_soon(model="m", sha="s1", prompt="[]", reply="private diff").result(10)
    [row] = store.query("SELECT prompt, reply, created_at FROM llm_calls")
    assert row["prompt"] is None and row["reply"] is None and row["created_at"]
    store.close()
