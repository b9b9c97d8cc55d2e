"""The collector's pauses (bot/digest/collector.py): overlapping pauses end with the last one, the state
before the first comes back, a freeze asked by any of them is done."""

from __future__ import annotations

import gc

import pytest

from bot.digest import collector
from bot.digest.collector import collector_paused


@pytest.fixture(autouse=True)
def collector_on():
    gc.enable()
    yield
    # a failing test must not leave the process's collector off
    collector._holders, collector._freeze = 0, False
    gc.unfreeze()
    gc.enable()


def test_a_pause_turns_it_off_and_back_on():
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_pause_leaves_it_off_when_it_was_off():
    gc.disable()
    with collector_paused(freeze=True):
        assert not gc.isenabled()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0  # nothing frozen either: the collector was not ours to resume


def test_overlapping_pauses_end_with_the_last_one_whichever_order():
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the one begun first ends first: the other still runs
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_a_freeze_asked_by_an_earlier_ending_pause_is_done_when_the_last_ends():
    outer, inner = collector_paused(), collector_paused(freeze=True)
    outer.__enter__()
    inner.__enter__()
    inner.__exit__(None, None, None)
    assert gc.get_freeze_count() == 0 and not gc.isenabled()
    kept = [object() for _ in range(10)]
    outer.__exit__(None, None, None)
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(kept)
    with collector_paused():  # a later pause without a freeze freezes nothing more
        pass
    frozen = gc.get_freeze_count()
    with collector_paused():
        _more = [[] for _ in range(100)]
    assert gc.get_freeze_count() == frozen
