"""What one person (or one thread) may have the bot pay for: new model analyses of commits through cards
(CHAT_CARDS_PER_MINUTE) and new days through `/digest <date>` (CHAT_DAYS_PER_HOUR); and what all of them
together may: new model analyses for cards across the bot (CHAT_MODEL_CARDS_PER_MINUTE). What was paid for
before costs nothing and is never counted; past the rate the asker hears, privately, when to ask again."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable
from datetime import date
from zoneinfo import ZoneInfo

from analysis.errors import OverLimit
from analysis.labels import label
from analysis.models import Commit, digest_key
from bot.chat.floods import Refusal, ThreadLimiter, refusal_text
from bot.config.settings import Settings
from bot.digest.analyzers import Analyzer, HeuristicAnalyzer
from bot.store.db import Store

HOUR = 3600.0
MODEL = "*"  # the one key of the bot-wide model budget


class ChatRates:
    """The per-asker limiters and the checks that decide whether a request costs anything."""

    def __init__(self, settings: Settings, store: Store):
        self.store = store
        self.cards = ThreadLimiter(settings.chat_cards_per_minute)  # new model analyses per asker a minute
        self.days = ThreadLimiter(settings.chat_days_per_hour, window=HOUR)  # new days per asker an hour
        # new model analyses for cards across the bot a minute: the model's budget, whoever asks
        self.model = ThreadLimiter(settings.chat_model_cards_per_minute)

    def card_admission(self, asker: str, lang: str, analyzer: Analyzer) -> Callable[[Commit], None] | None:
        """What refuses a new model analysis past the asker's rate or the bot's model budget (None: nothing
        to count: no model — the heuristic costs nothing). `analyse_ref` asks it only when nothing is
        cached. Neither is counted unless both have room: a refusal costs no one a slot."""
        if isinstance(analyzer, HeuristicAnalyzer):
            return None

        def admit(commit: Commit) -> None:
            mine = self.cards.wait(asker) if asker else 0.0
            budget = self.model.wait(MODEL)
            if mine >= budget and mine:
                raise OverLimit(
                    label(lang, "cards_limited", n=self.cards.limit, s=f"{mine:.0f}", sha=commit.short_sha)
                )
            if budget:
                refused = Refusal("model", self.model.limit, budget)
                raise OverLimit(refusal_text(lang, refused, commit.short_sha))
            if asker:
                self.cards.take(asker)
            self.model.take(MODEL)

        return admit

    async def admit_day(
        self, asker: str, analyzer: Analyzer, repo: str, branch: str, day: date, tz: ZoneInfo, lang: str
    ) -> None:
        """Raises OverLimit when `asker` has had CHAT_DAYS_PER_HOUR new days built in the last hour. Asked
        before the day is fetched: a new day costs the source's quota (a listing, each commit's details) and
        a model call per commit. A day stored before with every analysis cached costs neither: not counted.
        The store is read in a worker thread (a query per commit of the day), off the loop that serves chat."""
        key = digest_key(repo, branch, day.isoformat(), tz.key, lang)
        if not asker or await asyncio.to_thread(self.paid_for, analyzer, key):
            return
        wait = self.days.take(asker)
        if wait:
            raise OverLimit(
                label(
                    lang,
                    "days_limited",
                    n=self.days.limit,
                    m=max(1, math.ceil(wait / 60)),
                    day=day.isoformat(),
                )
            )

    def paid_for(self, analyzer: Analyzer, key: str) -> bool:
        """Whether the digest `key` is stored and every one of its commits has this analyser's analysis
        (the heuristic's are free to redo): building it again fetches and asks nothing new."""
        row = self.store.get_digest(key)
        if row is None:
            return False
        if isinstance(analyzer, HeuristicAnalyzer):
            return True
        repo, lang = row["repo"], row["lang"]
        return all(
            self.store.get_analysis(repo, sha, analyzer.model, analyzer.prompt_version, lang) is not None
            for sha in json.loads(row["shas"])
        )
