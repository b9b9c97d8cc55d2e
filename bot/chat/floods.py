"""How much chat the bot takes in a minute, counted in memory (no I/O): `/digest <sha>` card requests per
channel (CHAT_CHANNEL_CARDS_PER_MINUTE) and new model analyses across the bot (CHAT_MODEL_CARDS_PER_MINUTE,
the model's budget); thread answers per thread, per asker and in all (QA_ANSWERS_PER_MINUTE,
QA_ASKER_ANSWERS_PER_MINUTE, QA_ANSWERS_PER_MINUTE_ALL).

A request passes only when every window it is counted in has room, and only then is it counted in each: a
refusal costs no one a slot. Past a cap, a channel (or thread) hears it once a minute, not once a request:
a flood must not turn into a flood of notices."""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

Clock = Callable[[], float]


class ThreadLimiter:
    """At most `limit` calls for one key (a thread, an asker) in any `window` seconds (a sliding window,
    a minute unless given); keys seen least recently are forgotten past `threads`."""

    def __init__(
        self, limit: int, *, window: float = 60.0, threads: int = 4096, clock: Clock = time.monotonic
    ):
        self.limit = limit
        self.window = window
        self.threads = threads
        self.clock = clock
        self._calls: OrderedDict[str, deque[float]] = OrderedDict()

    def wait(self, key: str) -> float:
        """0 when a call may go now (nothing is counted); else the seconds until one may."""
        now = self.clock()
        calls = self._calls.get(key)
        if calls is None:
            return 0.0
        while calls and now - calls[0] >= self.window:
            calls.popleft()
        return max(0.1, self.window - (now - calls[0])) if len(calls) >= self.limit else 0.0

    def give_back(self, key: str) -> None:
        """Uncount the latest call of `key`: it turned out to cost nothing (a thread that is not ours)."""
        calls = self._calls.get(key)
        if calls:
            calls.pop()

    def take(self, key: str) -> float:
        """0 when a call may go now (and it is counted); else the seconds until one may."""
        wait = self.wait(key)
        if wait:
            return wait
        self._calls.setdefault(key, deque()).append(self.clock())
        self._calls.move_to_end(key)
        while len(self._calls) > self.threads:
            self._calls.popitem(last=False)
        return 0.0


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request was not taken: the cap (`reason`, its `limit` a minute), the seconds until it may be
    asked again, and whether this refusal is the one its channel or thread hears this minute."""

    reason: str
    limit: int
    wait: float
    notice: bool = False


class Caps:
    """Several windows, each keyed its own way, that a request must all pass."""

    def __init__(self, windows: dict[str, ThreadLimiter]):
        self.windows = windows

    def refusal(self, keys: dict[str, str]) -> Refusal | None:
        """The window that holds the request back longest (nothing counted), or None."""
        waits = [(self.windows[reason].wait(key), reason) for reason, key in keys.items()]
        wait, reason = max(waits, default=(0.0, ""))
        return Refusal(reason, self.windows[reason].limit, wait) if wait else None

    def admit(self, keys: dict[str, str]) -> Refusal | None:
        """None, and the request counted in every window; else why not (counted nowhere)."""
        refused = self.refusal(keys)
        if refused is None:
            for reason, key in keys.items():
                self.windows[reason].take(key)
        return refused

    def give_back(self, keys: dict[str, str]) -> None:
        for reason, key in keys.items():
            self.windows[reason].give_back(key)


class Notices:
    """One notice per place (a channel, a thread) in any `window` seconds."""

    def __init__(self, window: float = 60.0, clock: Clock = time.monotonic):
        self._given = ThreadLimiter(1, window=window, clock=clock)

    def due(self, place: str) -> bool:
        """Whether `place` may be told now (and it is counted as told)."""
        return not self._given.take(place)

    def given(self, place: str) -> bool:
        """Whether `place` was told within the window (nothing counted)."""
        return bool(self._given.wait(place))


class CardFloods:
    """`/digest <sha>` requests per channel, counted before the acknowledgement (the bot-wide model budget
    is counted where the cache misses: bot/chat/rates.py)."""

    def __init__(self, per_channel: int, clock: Clock = time.monotonic):
        self.channels = Caps({"channel": ThreadLimiter(per_channel, clock=clock)})
        self.notices = Notices(clock=clock)

    def admit(self, channel: str) -> Refusal | None:
        refused = self.channels.admit({"channel": channel})
        if refused is None:
            return None
        return Refusal(refused.reason, refused.limit, refused.wait, self.notices.due(channel))


class AnswerFloods:
    """Thread answers per thread, per asker and in all; a thread hears of a refusal once a minute."""

    def __init__(self, per_thread: int, per_asker: int, in_all: int, clock: Clock = time.monotonic):
        self.caps = Caps(
            {
                "thread": ThreadLimiter(per_thread, clock=clock),
                "asker": ThreadLimiter(per_asker, clock=clock),
                "all": ThreadLimiter(in_all, threads=1, clock=clock),
            }
        )
        self.notices = Notices(clock=clock)

    @staticmethod
    def _keys(thread: str, asker: str) -> dict[str, str]:
        keys = {"thread": thread, "all": "*"}
        if asker:
            keys["asker"] = asker
        return keys

    def admit(self, thread: str, asker: str) -> Refusal | None:
        """Counted before the thread is loaded, so that a flood's later questions are refused without
        loading it; `give_back` when the thread turns out not to be ours."""
        refused = self.caps.admit(self._keys(thread, asker))
        if refused is None:
            return None
        return Refusal(refused.reason, refused.limit, refused.wait, self.notices.due(thread))

    def give_back(self, thread: str, asker: str) -> None:
        self.caps.give_back(self._keys(thread, asker))


_WORDS = {
    "en": {
        "channel": "Card requests are paused in this channel: {n} were asked for in the last minute, the limit "
        "here. Ask again in {s} s.",
        "model": "The model has analysed {n} new commits for cards in the last minute, its limit across the "
        "bot; ask for {sha} again in {s} s (commits analysed before come at once).",
        "thread": "I've answered {n} questions in this thread in the last minute, the limit here; I'll take "
        "new ones in {s} s.",
        "asker": "I've answered {n} questions from one person in the last minute, the limit per person; ask "
        "again in {s} s.",
        "all": "I've answered {n} questions across all threads in the last minute, my limit; ask again in "
        "{s} s.",
    },
    "zh": {
        "channel": "本频道的卡片请求已暂停：过去一分钟内已请求 {n} 次，达到本频道上限。请 {s} 秒后再试。",
        "model": "过去一分钟内模型已为卡片新分析了 {n} 个提交，达到全局上限；请 {s} 秒后再要 {sha}（已分析过的提交不受此限）。",
        "thread": "过去一分钟内我已在这个讨论串回答了 {n} 个问题，达到上限；{s} 秒后再接受新问题。",
        "asker": "过去一分钟内我已回答同一个人的 {n} 个问题，达到每人上限；请 {s} 秒后再问。",
        "all": "过去一分钟内我已在所有讨论串共回答了 {n} 个问题，达到上限；请 {s} 秒后再问。",
    },
}


def refusal_text(lang: str, refused: Refusal, sha: str = "") -> str:
    """What a refused request hears: which cap, and when to ask again (whole seconds, at least 1)."""
    words = _WORDS["zh" if lang == "zh" else "en"][refused.reason]
    return words.format(n=refused.limit, s=max(1, round(refused.wait + 0.49)), sha=sha)
