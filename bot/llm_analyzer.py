"""The LLM analyser: triage every commit, then a tiered analysis of the high and medium ones.

One asyncio task per commit, so a commit's second call starts as soon as its own triage ends (no
barrier between the stages): a day takes about two call latencies when the concurrency limit does
not bind. Replies are validated (one repair call), a reply cut by the output cap is never used (one
retry with half the diff and 1.5× the output allowance), and whatever still fails falls back to the
heuristic analysis for that commit alone, saying so in the report language.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from adapters.llm import LLMClient, LLMError, Message
from analysis import heuristic
from analysis.budget import DiffSelection, file_list, select_diff
from analysis.echo import tidy
from analysis.grounding import consistent_change_type, ground
from analysis.models import Analysis, ChangeType, Commit, Importance
from analysis.prompts import (
    PROMPT_VERSION,
    analysis_messages,
    diff_budget,
    instruction_text,
    repair_messages,
    triage_messages,
)
from analysis.schemas import HighOut, MediumOut, ReplyInvalid, TriageOut, parse_reply
from analysis.text import neutralize_mentions
from analysis.tokens import estimate_messages
from bot import usage
from bot.analyzers import Progress

if TYPE_CHECKING:
    from analysis.history import HistoryFacts
    from bot.settings import Settings
    from bot.store import Store

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

TRIAGE_OUTPUT_TOKENS = 512  # importance, reason, type, one-line summary: ~150 tokens, room for CJK
MIN_OUTPUT_TOKENS = 128
LENGTH_GROWTH = 1.5  # output allowance multiplier on the retry after a "length" reply

FAILURE_TEXT = {
    "zh": {
        "length": "模型输出超出长度上限",
        "invalid": "模型回复不符合要求的格式",
        "service": "LLM 服务出错（{outcome}）",
        "internal": "内部错误（{kind}）",
        "full": "LLM 分析失败：{reason}；以下为启发式分析。",
        "partial": "LLM 深入分析失败：{reason}；重要程度、理由和摘要来自 LLM 初筛，其余字段为启发式分析。",
    },
    "en": {
        "length": "the model's reply exceeded the output limit",
        "invalid": "the model's reply did not match the required format",
        "service": "LLM service error ({outcome})",
        "internal": "internal error ({kind})",
        "full": "LLM analysis failed: {reason}; heuristic analysis shown.",
        "partial": "LLM detailed analysis failed: {reason}; importance, reason and summary come from the LLM"
        " triage, the other fields are heuristic.",
    },
}


class StageFailed(Exception):
    """A stage gave up: `kind` is "length" or "invalid" (the text comes from FAILURE_TEXT)."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class Budgets:
    """Token budgets derived from the model's context window and the output allowance (settings)."""

    context: int
    output: int  # one tiered analysis
    triage_output: int
    triage_diff: int
    triage_files: int
    analysis_files: int
    margin: int  # estimation error and the chat template around our messages

    @classmethod
    def for_context(cls, context: int, output: int) -> Budgets:
        return cls(
            context=context,
            output=output,
            triage_output=min(TRIAGE_OUTPUT_TOKENS, output),
            triage_diff=max(256, min(800, context // 10)),  # a short excerpt: enough to judge, cheap
            triage_files=max(128, min(600, context // 16)),
            analysis_files=max(256, min(1500, context // 10)),
            margin=max(256, context // 20),
        )


def _text(lang: str, key: str, **fmt: object) -> str:
    return FAILURE_TEXT["zh" if lang == "zh" else "en"][key].format(**fmt)


def failure_reason(exc: BaseException, lang: str) -> str:
    """Why a stage failed, in the report language, in a few words (never a traceback)."""
    if isinstance(exc, StageFailed):
        return _text(lang, exc.kind)
    if isinstance(exc, LLMError):
        return _text(lang, "service", outcome=exc.outcome)
    return _text(lang, "internal", kind=type(exc).__name__)


class LLMAnalyzer:
    """The Analyzer protocol (bot/analyzers.py) on an OpenAI-compatible model."""

    def __init__(self, client: LLMClient, *, context_tokens: int = 8192, output_tokens: int = 1536):
        self.client = client
        self.model = client.model
        self.prompt_version = PROMPT_VERSION
        self.budgets = Budgets.for_context(context_tokens, output_tokens)

    @classmethod
    def from_settings(cls, settings: Settings, store: Store) -> LLMAnalyzer:
        if not settings.digest_model:
            from analysis.errors import ConfigError

            raise ConfigError("DIGEST_MODEL is not set")
        client = LLMClient(
            model=settings.digest_model,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
            timeout=settings.llm_timeout,
            max_retries=settings.llm_max_retries,
            concurrency=settings.llm_concurrency,
            rpm=settings.llm_rpm,
            price_in=settings.llm_price_in,
            price_out=settings.llm_price_out,
            on_call=lambda fields: (store.log_llm_call(**fields), usage.record(fields)),
        )
        return cls(
            client, context_tokens=settings.llm_context_tokens, output_tokens=settings.llm_output_tokens
        )

    async def aclose(self) -> None:
        await self.client.aclose()

    # -- the day ----------------------------------------------------------------------------------
    async def analyze(
        self,
        commits: list[Commit],
        lang: str,
        progress: Progress | None = None,
        history: Mapping[str, HistoryFacts] | None = None,
    ) -> dict[str, Analysis]:
        done = 0
        known = history or {}

        async def one(commit: Commit) -> Analysis:
            nonlocal done
            result = await self.analyze_commit(commit, lang, known.get(commit.sha))
            done += 1
            if progress:
                progress(done, len(commits))
            return result

        # The client's semaphore bounds the calls in flight; tasks only wait their turn.
        results = await asyncio.gather(*(one(c) for c in commits))
        return {commit.sha: result for commit, result in zip(commits, results, strict=True)}

    async def analyze_commit(
        self, commit: Commit, lang: str, history: HistoryFacts | None = None
    ) -> Analysis:
        """Never raises (but for cancellation): a failure becomes a heuristic fallback that says why."""
        try:
            prior = heuristic.rank(commit, lang, history=history)
            facts = history.as_prompt() if history is not None else None
            triage, excerpt = await self._triage(commit, lang, prior, facts)
        except Exception as exc:
            return self._fallback(commit, lang, exc, history)
        importance = Importance(triage.importance)
        if importance == Importance.LOW:
            return self._compose(commit, lang, triage, None, excerpt, prior[1], excerpt)
        try:
            detail, selection = await self._detail(commit, lang, triage, importance)
        except Exception as exc:
            return self._partial(commit, lang, triage, exc)
        return self._compose(commit, lang, triage, detail, selection, prior[1], excerpt)

    # -- stage a: triage --------------------------------------------------------------------------
    async def _triage(
        self,
        commit: Commit,
        lang: str,
        prior: tuple[Importance, str],
        history: dict[str, object] | None = None,
    ) -> tuple[TriageOut, DiffSelection]:
        b = self.budgets
        files = file_list(commit, b.triage_files)

        def build(diff_budget: int) -> tuple[list[Message], DiffSelection]:
            diff = select_diff(commit, diff_budget)
            return triage_messages(commit, prior, files, diff, lang, history), diff

        return await self._ask(commit, "triage", build, TriageOut, b.triage_diff, b.triage_output)

    # -- stage b: the tiered analysis -------------------------------------------------------------
    async def _detail(
        self, commit: Commit, lang: str, triage: TriageOut, tier: Importance
    ) -> tuple[MediumOut, DiffSelection]:
        b = self.budgets
        files = file_list(commit, b.analysis_files)
        model: type[MediumOut] = HighOut if tier == Importance.HIGH else MediumOut

        def build(diff_budget: int) -> tuple[list[Message], DiffSelection]:
            diff = select_diff(commit, diff_budget)
            return analysis_messages(commit, triage, tier, files, diff, lang), diff

        # What the prompt costs without any diff, measured rather than guessed: the rest is the diff's.
        # (An empty selection, not select_diff(commit, 0): that would rank and cost every patch again.)
        empty = DiffSelection(text="", files_total=commit.file_count)
        budget = diff_budget(
            b.context, b.output, analysis_messages(commit, triage, tier, files, empty, lang), b.margin
        )
        return await self._ask(commit, f"analysis-{tier.value}", build, model, budget, b.output)

    # -- one structured exchange ------------------------------------------------------------------
    async def _ask(
        self,
        commit: Commit,
        purpose: str,
        build: Callable[[int], tuple[list[Message], DiffSelection]],
        model: type[T],
        diff_budget: int,
        output: int,
    ) -> tuple[T, DiffSelection]:
        """The validated reply: one repair call for an invalid reply; a "length" reply is never used,
        it is asked again once with half the diff and 1.5× the output allowance."""
        messages, selection = build(diff_budget)
        repaired = shrunk = False
        call_purpose = purpose
        while True:
            reply = await self.client.complete(
                messages,
                response_model=model,
                max_tokens=self._allowance(output, messages),
                purpose=call_purpose,
                sha=commit.sha,
                repo=commit.repo,
                prompt_version=self.prompt_version,
            )
            if reply.finish_reason == "length":
                if shrunk:
                    raise StageFailed("length")
                shrunk, call_purpose = True, f"{purpose}-retry"
                diff_budget, output = diff_budget // 2, int(output * LENGTH_GROWTH)
                messages, selection = build(diff_budget)
                continue
            try:
                return parse_reply(reply.content, model), selection
            except ReplyInvalid as exc:
                if repaired:
                    raise StageFailed("invalid") from exc
                repaired, call_purpose = True, "repair"
                messages = repair_messages(messages, reply.content, str(exc))

    def _allowance(self, output: int, messages: list[Message]) -> int:
        """The output allowance, bounded by what the context has left after the prompt."""
        room = self.budgets.context - estimate_messages(messages) - self.budgets.margin // 2
        return max(MIN_OUTPUT_TOKENS, min(output, room))

    # -- results ----------------------------------------------------------------------------------
    def _compose(
        self,
        commit: Commit,
        lang: str,
        triage: TriageOut,
        detail: MediumOut | None,
        selection: DiffSelection,
        prior_reason: str,
        excerpt: DiffSelection,
    ) -> Analysis:
        analysis = Analysis(
            sha=commit.sha,
            importance=Importance(triage.importance),
            importance_reason=_safe(triage.reason),
            change_type=consistent_change_type(commit, ChangeType(triage.change_type)),
            summary=_safe(detail.summary if detail else triage.summary),
            analyzer="llm",
            model=self.model,
            prompt_version=self.prompt_version,
            lang=lang,
        )
        if detail is not None:
            analysis.scope = [_safe(s) for s in detail.scope]
            analysis.risks = [_safe(s) for s in detail.risks]
            analysis.recommendations = [_safe(s) for s in detail.recommendations]
            if isinstance(detail, HighOut):
                analysis.insights = {k: _safe(v) for k, v in detail.insights.model_dump().items()}
        # Our own words the model saw, coverage notes included: a reply that only repeats them says nothing.
        ours = "\n".join(
            [instruction_text(lang), excerpt.coverage_note(lang) or "", selection.coverage_note(lang) or ""]
        )
        analysis = tidy(analysis, ours, lang, reason_fallback=prior_reason)
        # The prior's reason was our own text in the prompt: figures the model took from it are grounded.
        analysis = ground(analysis, commit, lang, allowed_text=prior_reason)
        note = selection.coverage_note(lang)
        if note:
            analysis.notes.append(note)
        return analysis

    def _fallback(
        self, commit: Commit, lang: str, exc: BaseException, history: HistoryFacts | None = None
    ) -> Analysis:
        _log_failure(commit, "analysis", exc)
        fallback = heuristic.analyze(commit, lang, history=history)
        note = _text(lang, "full", reason=failure_reason(exc, lang))
        return fallback.model_copy(
            update={"analyzer": "heuristic-fallback", "notes": [note, *fallback.notes]}
        )

    def _partial(self, commit: Commit, lang: str, triage: TriageOut, exc: BaseException) -> Analysis:
        """Triage succeeded, stage b did not: keep the model's ranking, take the rest from the rules."""
        _log_failure(commit, "detailed analysis", exc)
        importance = Importance(triage.importance)
        rules = heuristic.analyze(commit, lang, tier=importance)
        analysis = Analysis(
            sha=commit.sha,
            importance=importance,
            importance_reason=_safe(triage.reason),
            change_type=consistent_change_type(commit, ChangeType(triage.change_type)),
            summary=_safe(triage.summary),
            scope=rules.scope,
            risks=rules.risks,
            recommendations=rules.recommendations,
            insights=rules.insights if importance == Importance.HIGH else {},
            analyzer="heuristic-fallback",  # not cached: the next run tries the model again
            model=self.model,
            prompt_version=self.prompt_version,
            lang=lang,
        )
        allowed = "\n".join([*rules.scope, *rules.risks, *rules.recommendations, *rules.insights.values()])
        analysis = tidy(analysis, instruction_text(lang), lang, reason_fallback=rules.importance_reason)
        analysis = ground(analysis, commit, lang, allowed_text=allowed)
        analysis.notes.insert(0, _text(lang, "partial", reason=failure_reason(exc, lang)))
        return analysis


def _safe(text: Any) -> str:
    """Model text as data: no mass mention survives, whatever the commit told the model to write."""
    return neutralize_mentions(str(text).strip())


def _log_failure(commit: Commit, stage: str, exc: BaseException) -> None:
    if isinstance(exc, (StageFailed, LLMError)):
        log.warning("LLM %s of %s failed (%s); falling back", stage, commit.short_sha, exc)
    else:  # a bug: keep the traceback for -vv
        log.warning("LLM %s of %s failed unexpectedly; falling back", stage, commit.short_sha, exc_info=True)
