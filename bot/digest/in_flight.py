"""One model call per commit at a time in a process. Ten people typing `/digest <sha>` for the same new
commit, or `/digest <day>` while the scheduler builds that day, would each miss the cache (nothing is
stored until an answer arrives) and each pay for the same analysis. A call that finds a commit already
being asked for by another waits for that answer instead (bot/digest/pipeline.py's analyse_commits), for
at most WAIT_FOR_OTHERS: a day sent through the Batch API may take hours, a card must not wait for it."""

from __future__ import annotations

import asyncio
from typing import Any

from analysis.models import Analysis

WAIT_FOR_OTHERS = 120.0  # seconds; then the waiting call asks for itself (a live call takes seconds)

# (store, repo, model, prompt version, lang, sha) → the answer the asking call will hand over; None when
# it ended without one (cancelled, failed). Entries leave as soon as their answer is in.
_asked: dict[tuple[Any, ...], asyncio.Future[Analysis | None]] = {}


class Flight:
    """The commits one call analyses: those it asks the analyser for (others wait for them), and those
    another call is asking for already (this one waits). `share` False: it asks for all, tells nobody."""

    def __init__(self, key: tuple[Any, ...], shas: list[str], *, share: bool):
        self._key = key
        self.mine: dict[str, asyncio.Future[Analysis | None]] = {}
        self.theirs: dict[str, asyncio.Future[Analysis | None]] = {}
        if not share:
            return
        loop = asyncio.get_running_loop()
        for sha in shas:
            asked = _asked.get((*key, sha))
            if asked is not None and not asked.done():
                self.theirs[sha] = asked
            else:
                self.mine[sha] = _asked[(*key, sha)] = loop.create_future()

    def asks(self, sha: str) -> bool:
        return sha not in self.theirs

    def landed(self, sha: str, analysis: Analysis | None) -> None:
        """This call's answer for `sha`: handed to whoever waits for it."""
        future = self.mine.pop(sha, None)
        if future is None:
            return
        if not future.done():
            future.set_result(analysis)
        if _asked.get((*self._key, sha)) is future:
            del _asked[(*self._key, sha)]

    def close(self) -> None:
        """The call is over: what it did not answer is answered None (the waiters fall back)."""
        for sha in list(self.mine):
            self.landed(sha, None)

    async def waited(self) -> dict[str, Analysis | None]:
        """The other calls' answers within WAIT_FOR_OTHERS; None for those that ended without one or are not
        in yet (this call asks for them itself). Waiting never cancels their futures."""
        if not self.theirs:
            return {}
        await asyncio.wait(set(self.theirs.values()), timeout=WAIT_FOR_OTHERS)
        return {
            sha: future.result() if future.done() and not future.cancelled() else None
            for sha, future in self.theirs.items()
        }
