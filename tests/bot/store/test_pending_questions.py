"""The store's take-over of thread questions a dead process claimed (bot/store/threads.take_over_answers):
whose claims are taken (a claimant gone from this host, a pid that is ours now, a heartbeat stopped), whose
are not (a live process's, our own), the too-old dropped, and of two processes taking over at once only one
gets each question. An older database migrates with its claims kept."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import bot.store.db
from bot.chat.pending import Claimant, record_of
from bot.ports.protocols import Question
from bot.store.db import Store
from bot.store.rows import iso
from tests.fakes.slack_api import eventually

HOST = socket.gethostname()
NOW = datetime.now(UTC)
RECENT = NOW - timedelta(hours=1)


def dead_pid() -> int:
    """The pid of a process that has ended (kill -9 or not, it is gone)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(done.stdout)


def claim_state(db: Path, message_id: str) -> str | None:
    """The state of a question's claim, read as another process would."""
    store = Store(db)
    try:
        rows = store.query("SELECT state FROM answered_questions WHERE message_id = ?", [message_id])
        return rows[0]["state"] if rows else None
    finally:
        store.close()


async def settled(runtime: Any, db: Path, message_id: str, state: str = "answered") -> None:
    """Wait (20 s at most) until a restarted runtime has put the question's claim in `state`, then stop it."""
    try:
        await eventually(lambda: claim_state(db, message_id) == state, timeout=20)
    finally:
        await runtime.stop()


def question(message_id: str, asked_at: datetime = NOW, channel: str = "C1") -> Question:
    return Question("slack", channel, message_id, "what changed?", "U1", False, asked_at, thread="1.0")


def claim(store: Store, q: Question, claimant: Claimant) -> None:
    assert store.begin_answer(q.platform, q.channel, q.message_id, record=record_of(q, claimant))


def take(store: Store, claimant: Claimant, ttl: float = 60.0) -> tuple[list[str], list[str]]:
    taken, dropped = store.take_over_answers("slack", claimant.columns(), ttl, RECENT)
    return [r["message_id"] for r in taken], [r["message_id"] for r in dropped]


def test_only_claims_of_processes_that_are_gone_are_taken_over(tmp_path):
    store = Store(tmp_path / "d.db")
    me = Claimant()
    claim(store, question("1.1"), Claimant(host=HOST, pid=dead_pid()))  # killed on this host
    claim(store, question("1.2"), Claimant(host=HOST, pid=os.getpid()))  # our pid, another run: restarted
    claim(store, question("1.3"), Claimant(host=HOST, pid=os.getppid()))  # a live process here
    claim(store, question("1.4"), Claimant(host="elsewhere", pid=1))  # another host, renewing
    claim(store, question("1.5"), me)  # our own
    assert take(store, me) == (["1.1", "1.2"], [])
    assert take(store, me) == ([], [])  # ours now: not again
    rows = {r["message_id"]: r for r in store.query("SELECT * FROM answered_questions")}
    assert {rows[m]["owner"] for m in ("1.1", "1.2")} == {me.owner}
    assert rows["1.3"]["owner"] != me.owner and rows["1.4"]["owner"] != me.owner
    # the other host's heartbeat stops: after the claim's ttl it is gone too
    assert take(store, me, ttl=0) == (["1.3", "1.4"], [])


def test_renewed_claims_stay_their_claimants(tmp_path):
    store = Store(tmp_path / "d.db")
    other, me = Claimant(host="elsewhere", pid=1), Claimant()
    claim(store, question("1.1"), other)
    old = iso(NOW - timedelta(minutes=5))
    store.db.execute("UPDATE answered_questions SET updated_at = ?", [old])
    assert store.renew_answers("slack", other.owner) == 1  # its heartbeat
    assert take(store, me) == ([], [])
    store.db.execute("UPDATE answered_questions SET updated_at = ?", [old])
    assert take(store, me) == (["1.1"], [])  # no heartbeat for 5 minutes: gone


def test_a_question_too_old_is_dropped_not_taken_and_never_claimed_again(tmp_path):
    store = Store(tmp_path / "d.db")
    gone, me = Claimant(host=HOST, pid=dead_pid()), Claimant()
    claim(store, question("1.1", asked_at=NOW - timedelta(hours=3)), gone)
    claim(store, question("1.2"), gone)
    assert take(store, me) == (["1.2"], ["1.1"])
    assert take(store, me) == ([], [])
    [state] = store.query("SELECT state FROM answered_questions WHERE message_id = '1.1'")
    assert state["state"] == "dropped"
    assert not store.begin_answer("slack", "C1", "1.1", stale_after=0)  # a late delivery: not answered


def test_the_persons_words_are_kept_only_while_an_answer_is_owed(tmp_path):
    store = Store(tmp_path / "d.db")
    gone, me = Claimant(host=HOST, pid=dead_pid()), Claimant()
    claim(store, question("1.1"), me)
    claim(store, question("1.2", asked_at=NOW - timedelta(hours=3)), gone)
    claim(store, question("1.3"), me)
    store.end_answer("slack", "C1", "1.1", answered=True)
    take(store, me)
    rows = {r["message_id"]: r for r in store.query("SELECT * FROM answered_questions")}
    assert rows["1.1"]["state"] == "answered" and rows["1.1"]["question"] is None
    assert rows["1.2"]["state"] == "dropped" and rows["1.2"]["question"] is None
    assert rows["1.3"]["question"] == "what changed?"  # still owed: kept to answer after a crash


def test_claims_without_their_question_are_left_alone(tmp_path):
    """Claims made before the question was recorded (an older version): nothing to answer them from."""
    store = Store(tmp_path / "d.db")
    assert store.begin_answer("slack", "C1", "1.1")
    store.db.execute("UPDATE answered_questions SET owner = 'x', host = ?, pid = ?", [HOST, dead_pid()])
    assert take(store, Claimant()) == ([], [])


def test_two_processes_taking_over_at_once_get_each_question_once(tmp_path):
    path = tmp_path / "d.db"
    store = Store(path)
    gone = Claimant(host=HOST, pid=dead_pid())
    for n in range(40):
        claim(store, question(f"1.{n}"), gone)
    stores = [Store(path), Store(path)]  # two processes' connections
    claimants = [Claimant(), Claimant(pid=os.getppid())]  # two processes: two pids, both running
    results: list[list[str]] = [[], []]
    start = threading.Barrier(2)

    def run(i: int) -> None:
        start.wait()
        for _ in range(5):
            results[i] += take(stores[i], claimants[i])[0]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results[0] + results[1]) == sorted(f"1.{n}" for n in range(40))  # each once
    owners = {r["owner"] for r in store.query("SELECT owner FROM answered_questions")}
    assert owners <= {c.owner for c in claimants}


def test_an_older_database_migrates_with_its_claims(tmp_path, monkeypatch):
    path = tmp_path / "d.db"
    with monkeypatch.context() as older:
        older.setattr(bot.store.db, "MIGRATIONS", bot.store.db.MIGRATIONS[:-1])
        store = Store(path)
        assert store.begin_answer("slack", "C1", "1.1")
        store.close()
    store = Store(path)  # this version
    [row] = store.query("SELECT * FROM answered_questions")
    assert row["state"] == "answering" and row["question"] is None and row["owner"] is None
    assert not store.begin_answer("slack", "C1", "1.1")  # still being answered: the claim is kept
    assert take(store, Claimant()) == ([], [])
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == len(bot.store.db.MIGRATIONS)


@pytest.mark.parametrize("state", ["answered", "dropped"])
def test_a_question_answered_or_dropped_is_never_claimed_again(tmp_path, state):
    store = Store(tmp_path / "d.db")
    claim(store, question("1.1"), Claimant())
    store.db.execute("UPDATE answered_questions SET state = ?", [state])
    assert not store.begin_answer("slack", "C1", "1.1", stale_after=0)
