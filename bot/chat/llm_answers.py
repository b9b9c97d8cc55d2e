"""Thread questions the data does not answer, answered by the LLM (the answerer bot/chat/answers.py calls).

The model sees the stored analysis, the commit and as much of its diff as the context allows (or the
day's commits with their analyses, the most important first), plus the thread's latest turns within a
share of the token budget, and answers in plain text, which bot/qa fact-checks before it is posted. An
answer cut by the output cap is never posted: we ask again with less context, then give up and let
bot/qa fall back to the data's answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from analysis.labels import quote_elided
from analysis.llm.budget import DiffSelection, fit_turns, select_diff
from analysis.llm.prompts import PROMPT_VERSION, diff_budget, qa_messages
from analysis.llm.schemas import strip_reasoning
from analysis.llm.tokens import estimate_messages, estimate_tokens
from analysis.text import neutralize_mentions
from bot.ports.protocols import LLM, LLMError, Message, ThreadContext

if TYPE_CHECKING:
    from bot.config.settings import Settings

HISTORY_TURNS = 12  # the thread's most recent messages given to the model, within HISTORY_SHARE
HISTORY_SHARE = 3  # the thread gets at most 1/3 of what the prompt leaves free; the diff gets the rest
QUESTION_SHARE = 4  # the question itself at most 1/4 of the context's free room (a 40 KB paste is cut)


class LLMAnswerer:
    def __init__(self, client: LLM, context_tokens: int = 8192, output_tokens: int = 1536):
        self.client = client
        self.context_tokens = context_tokens
        # An answer is short: cap its allowance so the data (diff, day, thread) keeps most of the context.
        self.output_tokens = min(output_tokens, context_tokens // 4)
        self.margin = max(256, context_tokens // 20)

    @classmethod
    def from_settings(cls, settings: Settings, client: LLM) -> LLMAnswerer:
        """The answerer on `client` (bot/app.py builds it: the analyser's wiring and call log)."""
        return cls(client, settings.llm_context_tokens, settings.llm_output_tokens)

    async def answer(self, ctx: ThreadContext, question: str, lang: str) -> str:
        history = ctx.history[-HISTORY_TURNS:]
        question = self._within_share(question, lang)
        budget: int | None = None  # None: as much as the context allows
        for _ in range(2):
            messages, budget = self._messages(ctx, question, lang, history, budget)
            reply = await self.client.complete(
                messages,
                max_tokens=self.output_tokens,
                purpose="qa",
                sha=ctx.commit.sha if ctx.commit else None,
                repo=ctx.commit.repo if ctx.commit else ctx.digest.repo if ctx.digest else None,
                prompt_version=PROMPT_VERSION,
            )
            if reply.finish_reason != "length":
                text = strip_reasoning(reply.content).strip()
                if not text:
                    raise LLMError(f"LLM {self.client.model} sent an empty answer", outcome="empty reply")
                return neutralize_mentions(text)
            # Cut off: never post half an answer. Retry once with half the diff and the latest turns only.
            budget, history = budget // 2, history[-2:]
        raise LLMError(
            f"LLM {self.client.model}: the answer exceeded the output limit twice", outcome="length"
        )

    def _within_share(self, question: str, lang: str) -> str:
        """The question as the prompt quotes it: whole, unless it alone would crowd out the data (or pass
        the context: the server would refuse the call); then its start, saying how much was left out."""
        share = (self.context_tokens - self.output_tokens - self.margin) // QUESTION_SHARE
        tokens = estimate_tokens(question)
        if tokens <= share:
            return question
        return quote_elided(lang, question, max(1, len(question) * share // tokens))

    def _messages(
        self,
        ctx: ThreadContext,
        question: str,
        lang: str,
        history: list[tuple[str, str]],
        budget: int | None,
    ) -> tuple[list[Message], int]:
        day = None
        if ctx.commit is None and ctx.digest is not None:
            d = ctx.digest
            # The most important first, so that a day too long for the context loses its low commits.
            ranked = sorted(
                (c for c in d.commits if c.sha in d.analyses), key=lambda c: d.analyses[c.sha].importance.rank
            )
            day = [(c, d.analyses[c.sha]) for c in ranked]

        def build(diff: DiffSelection | None, turns: list[tuple[str, str]]) -> list[Message]:
            return qa_messages(
                question, lang, commit=ctx.commit, analysis=ctx.analysis, diff=diff, day=day, history=turns
            )

        empty = DiffSelection(text="", files_total=ctx.commit.file_count) if ctx.commit else None
        free = self.context_tokens - self.output_tokens - self.margin
        while day and estimate_messages(build(empty, [])) > free:
            day.pop()
        # The thread's last turns, newest first, within their share of what is left.
        spare = max(0, free - estimate_messages(build(empty, [])))
        turns = fit_turns(history, spare // HISTORY_SHARE if ctx.commit else spare)
        if ctx.commit is None:
            return build(None, turns), 0
        if budget is None:  # what the prompt costs without the diff, measured; the rest is the diff's
            budget = diff_budget(self.context_tokens, self.output_tokens, build(empty, turns), self.margin)
        return build(select_diff(ctx.commit, budget), turns), budget
