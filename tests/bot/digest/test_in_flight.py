"""analyse_commits asks the analyser about a commit once at a time per process: a second call for a
commit being asked about waits for that answer; when the asking call ends without one (cancelled) or
takes longer than WAIT_FOR_OTHERS (a day in the Batch API), the waiter asks for itself instead of hanging;
refresh always asks."""

from __future__ import annotations

import asyncio

import bot.digest.in_flight
from analysis import heuristic
from bot.digest.pipeline import analyse_commits
from tests.fakes.digests import make_commit

REPO = "acme/widgets"


class GatedModel:
    """A model analyser held until the test opens the gate; counts the commits it is asked about."""

    model = "gated-model"
    prompt_version = "t1"

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.asked: list[str] = []

    async def analyze(self, commits, lang, progress=None, history=None, on_result=None):
        self.asked += [c.sha for c in commits]
        await self.gate.wait()
        out = {}
        for c in commits:
            a = heuristic.analyze(c, lang)
            a.analyzer = "llm"
            out[c.sha] = a
            if on_result:
                on_result(a)
        return out

    async def aclose(self) -> None:
        return None


async def started(model: GatedModel, n: int) -> None:
    while len(model.asked) < n:
        await asyncio.sleep(0.01)


async def test_a_commit_being_asked_about_is_waited_for_not_asked_again(store):
    model = GatedModel()
    a, b = make_commit("[Core] One (#1)", repo=REPO), make_commit("[Core] Two (#2)", repo=REPO)
    day = asyncio.ensure_future(analyse_commits(store, model, REPO, [a, b], "en"))
    await started(model, 2)
    card = asyncio.ensure_future(analyse_commits(store, model, REPO, [b], "en"))
    refreshed = asyncio.ensure_future(analyse_commits(store, model, REPO, [b], "en", refresh=True))
    await started(model, 3)
    model.gate.set()
    day_result, card_result, _ = await asyncio.gather(day, card, refreshed)
    assert model.asked == [a.sha, b.sha, b.sha]  # the day's call, and the refresh; the card waited
    assert card_result[b.sha].analyzer == "llm" and card_result[b.sha].summary == day_result[b.sha].summary


async def test_when_the_asking_call_is_cancelled_the_waiter_asks_itself(store):
    model = GatedModel()
    commit = make_commit("[Core] One (#1)", repo=REPO)
    first = asyncio.ensure_future(analyse_commits(store, model, REPO, [commit], "en"))
    await started(model, 1)
    second = asyncio.ensure_future(analyse_commits(store, model, REPO, [commit], "en"))
    await asyncio.sleep(0.05)
    first.cancel()
    await started(model, 2)
    model.gate.set()
    result = await asyncio.wait_for(second, 5)
    assert result[commit.sha].analyzer == "llm" and model.asked == [commit.sha, commit.sha]


async def test_an_asking_call_slower_than_the_wait_is_not_waited_out(store, monkeypatch):
    monkeypatch.setattr(bot.digest.in_flight, "WAIT_FOR_OTHERS", 0.05)
    slow, quick = GatedModel(), GatedModel()
    quick.gate.set()
    commit = make_commit("[Core] One (#1)", repo=REPO)
    day = asyncio.ensure_future(analyse_commits(store, slow, REPO, [commit], "en"))
    await started(slow, 1)
    card = await asyncio.wait_for(analyse_commits(store, quick, REPO, [commit], "en"), 5)
    assert card[commit.sha].analyzer == "llm" and quick.asked == [commit.sha]
    slow.gate.set()
    await day
