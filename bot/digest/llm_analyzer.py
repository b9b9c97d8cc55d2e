"""The LLM analyser: one call per commit ranks it and writes its tier's fields (issue 12).

One structured reply per commit (CommitOut): importance, reason, change type and summary, plus scope,
risks and recommendations for medium and high and the technical insights for high. A day is one call
latency when the client's adaptive concurrency does not bind, and `analyze <sha>` is never two round
trips in sequence. Replies are validated (one repair call), a reply cut by the output cap is never used
(one retry with half the diff and 1.5× the output allowance), and whatever still fails falls back to the
heuristic analysis for that commit alone, saying so in the report language.

Bounded time: the whole day's analysis has a deadline (LLM_DAY_DEADLINE); commits still waiting then
fall back, saying so. The client's circuit breaker stops calling a server that keeps timing out or
failing. An invalid key or unknown model (401/403/404) stops a `--analyzer llm` run with one line; with
`auto` it is one warning, then the heuristic for the whole run.

Over 400 lines because it is one trip per commit: plan, call, validate, repair, ground and store, under one
deadline.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from analysis import heuristic
from analysis.heuristic import prose
from analysis.heuristic.bands import judged_reason, within_one_tier
from analysis.labels import dimension_label
from analysis.llm.budget import DiffSelection, file_list, select_diff, whole_diff_cost
from analysis.llm.echo import tidy, without_echo
from analysis.llm.grounding import consistent_change_type, ground
from analysis.llm.prompts import (
    PROMPT_VERSION,
    commit_messages,
    diff_budget,
    instruction_text,
    repair_messages,
)
from analysis.llm.rules_fill import with_known_insights
from analysis.llm.schemas import CommitOut, InsightsOut, ReplyInvalid, parse_reply
from analysis.llm.stated import with_breaking_stated
from analysis.llm.tokens import estimate_messages
from analysis.models import Analysis, ChangeType, Commit, Importance
from analysis.text import neutralize_mentions
from bot.digest.analyzers import OnResult, Progress
from bot.ports.protocols import LLM, BatchRequest, LLMError, LLMFatal, Message

if TYPE_CHECKING:
    from analysis.heuristic import Judgment
    from analysis.history.facts import HistoryFacts
    from bot.config.settings import Settings

log = logging.getLogger(__name__)
R = TypeVar("R")

MIN_OUTPUT_TOKENS = 128
LENGTH_GROWTH = 1.5  # output allowance multiplier on the retry after a "length" reply
DEFAULT_DAY_DEADLINE = 1800.0  # seconds for a whole day's analysis (LLM_DAY_DEADLINE)
BATCH_MIN_COMMITS = 2  # a single commit's card (`analyze <sha>`, `/digest <sha>`) is always live

FAILURE_TEXT = {
    "zh": {
        "length": "模型输出超出长度上限",
        "invalid": "模型回复不符合要求的格式",
        "service": "LLM 服务出错（{outcome}）",
        "internal": "内部错误（{kind}）",
        "deadline": "当天分析超过时限（{seconds:.0f} 秒）",
        "filled": "模型未给出的字段由规则补全：{fields}",
        "full": "LLM 分析失败：{reason}；以下为启发式分析。",
    },
    "en": {
        "length": "the model's reply exceeded the output limit",
        "invalid": "the model's reply did not match the required format",
        "service": "LLM service error ({outcome})",
        "internal": "internal error ({kind})",
        "deadline": "the day's analysis ran past its deadline ({seconds:.0f} s)",
        "filled": "Filled in by the rules (the model left them empty): {fields}",
        "full": "LLM analysis failed: {reason}; heuristic analysis shown.",
    },
}


class StageFailed(Exception):
    """The call gave up: `kind` is "length" or "invalid" (the text comes from FAILURE_TEXT)."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


class DeadlinePassed(Exception):
    def __init__(self, seconds: float):
        super().__init__(f"deadline {seconds:.0f}s")
        self.seconds = seconds


@dataclass(frozen=True, slots=True)
class Budgets:
    """Token budgets derived from the model's context window and the output allowance (settings)."""

    context: int
    output: int  # one reply, sized for a high commit's fields
    files: int
    compact_diff: int  # the diff of a commit the rules rank low
    medium_diff: int  # the diff of a commit the rules rank medium
    margin: int  # estimation error and the chat template around our messages

    @classmethod
    def for_context(cls, context: int, output: int) -> Budgets:
        return cls(
            context=context,
            output=output,
            files=max(256, min(1500, context // 10)),
            compact_diff=max(256, min(800, context // 10)),
            medium_diff=max(512, min(3000, context * 3 // 8)),
            margin=max(256, context // 20),
        )


# A low commit's diff up to this many times the compact budget is sent whole: a 26-line docs change
# (1,100 tokens) cut to 800 left the model guessing at what it says, for 300 tokens saved.
WHOLE_SMALL_DIFF = 1.5
SMALL_DIFF_LINES = 300  # larger commits are not costed whole (the compact budget decides)


def _compact(commit: Commit, compact: int) -> int:
    """The diff budget of a commit the rules rank low: its whole diff when that is small, else `compact`."""
    if commit.changed_lines > SMALL_DIFF_LINES:
        return compact
    whole = whole_diff_cost(commit)
    return whole if whole is not None and compact < whole <= compact * WHOLE_SMALL_DIFF else compact


@dataclass(frozen=True, slots=True)
class _Plan:
    prior: tuple[Importance, str]
    judgment: Judgment  # the rubric's scores: the tier the model may move one step at most
    assessment: heuristic.Assessment  # the rules' reading of the commit, reused for fields the model left
    build: Callable[[int], tuple[list[Message], DiffSelection]]
    budget: int


# One worker for the CPU-bound parts (prompts, diff budgets, grounding): off the event loop, and only
# one thread competing with it for the GIL, so the loop (chat, in `digestbot run`) waits ~ms, not more.
_CPU_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llm-cpu")


def stop_cpu_worker() -> None:
    """Wait for the CPU worker's queued work and end its thread, as the interpreter does at exit: for a
    process that ends without the interpreter's teardown (bot/cli/exit.py). No call can follow."""
    _CPU_POOL.shutdown(wait=True)


async def _cpu(func: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    return await asyncio.get_running_loop().run_in_executor(_CPU_POOL, partial(func, *args, **kwargs))


def _text(lang: str, key: str, **fmt: object) -> str:
    return FAILURE_TEXT["zh" if lang == "zh" else "en"][key].format(**fmt)


def failure_reason(exc: BaseException, lang: str) -> str:
    """Why a commit's call failed, in the report language, in a few words (never a traceback)."""
    if isinstance(exc, StageFailed):
        return _text(lang, exc.kind)
    if isinstance(exc, DeadlinePassed):
        return _text(lang, "deadline", seconds=exc.seconds)
    if isinstance(exc, LLMError):
        return _text(lang, "service", outcome=exc.outcome)
    return _text(lang, "internal", kind=type(exc).__name__)


class LLMAnalyzer:
    """The Analyzer protocol (bot/digest/analyzers.py) on an OpenAI-compatible model.

    strict: an invalid key or unknown model raises (`--analyzer llm`); otherwise (`auto`) it is one
    warning and the heuristic for the rest of the run."""

    def __init__(
        self,
        client: LLM,
        *,
        context_tokens: int = 8192,
        output_tokens: int = 1536,
        day_deadline: float = DEFAULT_DAY_DEADLINE,
        strict: bool = False,
        batch_wait: float | None = None,
        batch_poll: float = 30.0,
    ):
        self.client = client
        self.model = client.model
        self.prompt_version = PROMPT_VERSION
        self.budgets = Budgets.for_context(context_tokens, output_tokens)
        self.day_deadline = day_deadline
        self.strict = strict
        self.batch_wait = batch_wait  # LLM_BATCH: seconds to wait for a Batch API job, None: live only
        self.batch_poll = batch_poll
        self.disabled: LLMFatal | None = None  # set by the first 401/403/404 of a non-strict run

    @classmethod
    def from_settings(cls, settings: Settings, client: LLM, *, strict: bool = False) -> LLMAnalyzer:
        """The analyser on `client` (bot/app.py builds it) with the settings' budgets and deadline."""
        return cls(
            client,
            context_tokens=settings.llm_context_tokens,
            output_tokens=settings.llm_output_tokens,
            day_deadline=settings.llm_day_deadline,
            strict=strict,
            batch_wait=settings.llm_batch_wait if settings.llm_batch else None,
        )

    async def aclose(self) -> None:
        await self.client.aclose()

    async def ready(self) -> None:
        """Until a call can go out at once (a client whose SDK is imported in the background waits for
        it, bot/app.py): what a card's radar waits for before its own work (pipeline.analyse_ref)."""
        ready = getattr(self.client, "ready", None)
        if ready is not None:
            await ready()

    # -- the day ----------------------------------------------------------------------------------
    async def analyze(
        self,
        commits: list[Commit],
        lang: str,
        progress: Progress | None = None,
        history: Mapping[str, HistoryFacts] | None = None,
        on_result: OnResult | None = None,
    ) -> dict[str, Analysis]:
        """on_result gets every analysis as soon as it is ready, so an interrupted run keeps what it
        paid for. Past the day's deadline, the commits still waiting fall back, saying so."""
        history = history or {}
        results: dict[str, Analysis] = {}

        def finish(commit: Commit, result: Analysis) -> None:
            results[commit.sha] = result
            if on_result:
                on_result(result)
            if progress:
                progress(len(results), len(commits))

        async def one(commit: Commit) -> None:
            finish(commit, await self.analyze_commit(commit, lang, history.get(commit.sha)))

        self.disabled = None  # a bad key is a per-run verdict: a long-lived service tries again
        todo = commits
        if self.batch_wait and len(commits) >= BATCH_MIN_COMMITS:
            todo = await self._batched(commits, lang, history, finish)
        # The client's adaptive limit bounds the calls in flight; tasks only wait their turn.
        tasks = [asyncio.create_task(one(c)) for c in todo]
        try:
            done, pending = await asyncio.wait(tasks, timeout=self.day_deadline) if tasks else (set(), set())
        except BaseException:
            for task in tasks:
                task.cancel()
            raise
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
            log.warning(
                "LLM analysis passed its deadline (%.0f s): %d commit(s) fall back",
                self.day_deadline,
                len(pending),
            )
        for task in done:
            if task.exception() is not None:  # a 401/403/404 in strict mode: one clear line, stop
                for other in tasks:
                    other.cancel()
                raise task.exception()  # type: ignore[misc]
        late = DeadlinePassed(self.day_deadline)
        for commit in commits:
            if commit.sha not in results:
                finish(commit, self._fallback(commit, lang, late, history.get(commit.sha)))
        return {c.sha: results[c.sha] for c in commits}

    async def _batched(
        self,
        commits: list[Commit],
        lang: str,
        history: Mapping[str, HistoryFacts],
        finish: Callable[[Commit, Analysis], None],
    ) -> list[Commit]:
        """The day's first calls through the Batch API (LLM_BATCH): every commit whose reply came back
        valid by the batch deadline is finished here; the rest (returned) go live."""

        def prepare(c: Commit) -> tuple[_Plan, list[Message], DiffSelection]:
            plan = self._plan(c, lang, history.get(c.sha))
            return (plan, *plan.build(plan.budget))

        prepared = {c.sha: await _cpu(prepare, c) for c in commits}
        plans = {sha: p[0] for sha, p in prepared.items()}
        selections = {sha: p[2] for sha, p in prepared.items()}
        requests = []
        for c in commits:
            messages = prepared[c.sha][1]
            requests.append(
                BatchRequest(
                    custom_id=c.sha,
                    messages=messages,
                    max_tokens=self._allowance(self.budgets.output, messages),
                    purpose="analysis",
                    response_model=CommitOut,
                    sha=c.sha,
                    repo=c.repo,
                )
            )
        replies = await self.client.batch(
            requests, deadline=self.batch_wait, poll=self.batch_poll, prompt_version=self.prompt_version
        )
        live = []
        for c in commits:
            reply = replies.get(c.sha)
            parsed = None
            if reply is not None and reply.finish_reason == "stop":
                try:
                    parsed = parse_reply(reply.content, CommitOut)
                except ReplyInvalid:
                    parsed = None  # asked again live, where a repair call is possible
            if parsed is None:
                live.append(c)
                continue
            composed = await _cpu(
                self._compose, c, lang, parsed, selections[c.sha], plans[c.sha], history.get(c.sha)
            )
            finish(c, composed)
        log.info(
            "LLM batch: %d of %d commits answered, %d go live",
            len(commits) - len(live),
            len(commits),
            len(live),
        )
        return live

    async def analyze_commit(
        self, commit: Commit, lang: str, history: HistoryFacts | None = None
    ) -> Analysis:
        """Never raises (but for cancellation, and a 401/403/404 in strict mode): a failure becomes a
        heuristic fallback that says why."""
        # CPU work (diff budgets, prompts, grounding) runs in worker threads: in `digestbot run` the
        # event loop also serves chat, and a day's prompts would stall it for a noticeable while.
        if self.disabled is not None:
            return await _cpu(self._fallback, commit, lang, self.disabled, history, quiet=True)
        try:
            # The plan and the first prompt in one step of the CPU worker: each commit's call goes out as
            # soon as its own prompt is ready (not after every commit's plan), so the replies come back
            # spread out and their checks overlap the calls still in flight.
            plan, first = await _cpu(self._prepare, commit, lang, history)
            reply, selection = await self._ask(
                commit, "analysis", plan.build, plan.budget, self.budgets.output, first=first
            )
        except LLMFatal as exc:
            if self.strict:
                raise
            if self.disabled is None:
                self.disabled = exc
                log.warning("%s; using the heuristic analyser for this run", exc)
            return await _cpu(self._fallback, commit, lang, exc, history, quiet=True)
        except Exception as exc:
            return await _cpu(self._fallback, commit, lang, exc, history)
        return await _cpu(self._compose, commit, lang, reply, selection, plan, history)

    # -- the one call -------------------------------------------------------------------------------
    def _prepare(
        self, commit: Commit, lang: str, history: HistoryFacts | None
    ) -> tuple[_Plan, tuple[list[Message], DiffSelection]]:
        plan = self._plan(commit, lang, history)
        return plan, plan.build(plan.budget)

    def _plan(self, commit: Commit, lang: str, history: HistoryFacts | None) -> _Plan:
        """The rule-based prior, the prompt builder (by diff budget) and the diff budget of one commit."""
        b = self.budgets
        assessment = heuristic.assess(commit, history)
        judgment, reason = heuristic.rubric(commit, lang, history=history, assessment=assessment)
        prior = (judgment.importance, reason)
        files = file_list(commit, b.files)

        def build(budget: int) -> tuple[list[Message], DiffSelection]:
            diff = select_diff(commit, budget)
            return commit_messages(commit, prior, files, diff, lang, history, judgment), diff

        # What the prompt costs without any diff, measured rather than guessed: the rest is the diff's.
        # (An empty selection, not select_diff(commit, 0): that would rank and cost every patch again.)
        empty = DiffSelection(text="", files_total=commit.file_count)
        budget = diff_budget(
            b.context,
            b.output,
            commit_messages(commit, prior, files, empty, lang, history, judgment),
            b.margin,
        )
        # The compact view where it is enough: what the rules rank low (docs, tests, CI, small cleanups)
        # is judged from the file list and its most telling hunks, a medium prior gets a mid-sized diff,
        # and the whole budget goes where depth is most likely needed (issue 12: tokens).
        if prior[0] == Importance.LOW:
            budget = min(budget, _compact(commit, b.compact_diff))
        elif prior[0] == Importance.MEDIUM:
            budget = min(budget, b.medium_diff)
        return _Plan(prior, judgment, assessment, build, budget)

    async def _ask(
        self,
        commit: Commit,
        purpose: str,
        build: Callable[[int], tuple[list[Message], DiffSelection]],
        diff_budget: int,
        output: int,
        first: tuple[list[Message], DiffSelection] | None = None,
    ) -> tuple[CommitOut, DiffSelection]:
        """The validated reply: one repair call for an invalid reply; a "length" reply is never used,
        it is asked again once with half the diff and 1.5× the output allowance. `first`: the prompt at
        `diff_budget`, when it is built already."""
        messages, selection = first or await _cpu(build, diff_budget)
        repaired = shrunk = False
        call_purpose = purpose
        while True:
            reply = await self.client.complete(
                messages,
                response_model=CommitOut,
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
                messages, selection = await _cpu(build, diff_budget)
                continue
            try:
                return await _cpu(parse_reply, reply.content, CommitOut), selection
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
        reply: CommitOut,
        selection: DiffSelection,
        plan: _Plan,
        history: HistoryFacts | None = None,
    ) -> Analysis:
        prior_reason = plan.prior[1]
        rubric = plan.judgment.importance
        asked = Importance(reply.importance)
        ceiling, floor = plan.judgment.ceiling, plan.judgment.floor
        tier = within_one_tier(asked, rubric, ceiling, floor)
        reply = _shaped(reply, tier)
        missing = reply.missing()
        allowed = prior_reason
        if missing:  # cheaper than a second round trip: the rules write what the model left empty
            rules = heuristic.analyze(commit, lang, tier=tier, history=history, assessment=plan.assessment)
            allowed = "\n".join(
                [prior_reason, *rules.scope, *rules.risks, *rules.recommendations, *rules.insights.values()]
            )
            reply = reply.model_copy(
                update={
                    "scope": reply.scope or rules.scope,
                    "risks": reply.risks or rules.risks,
                    "recommendations": reply.recommendations or rules.recommendations,
                    "insights": reply.insights or (InsightsOut(**rules.insights) if rules.insights else None),
                }
            )
        analysis = Analysis(
            sha=commit.sha,
            importance=tier,
            importance_reason=_safe(reply.reason),
            change_type=consistent_change_type(commit, ChangeType(reply.change_type), plan.assessment),
            summary=_safe(reply.summary),
            scope=[_safe(s) for s in reply.scope],
            risks=[_safe(s) for s in reply.risks],
            recommendations=[_safe(s) for s in reply.recommendations],
            insights={k: _safe(v) for k, v in reply.insights.model_dump().items()} if reply.insights else {},
            analyzer="llm",
            model=self.model,
            prompt_version=self.prompt_version,
            lang=lang,
            impact_score=plan.judgment.impact,
            risk_score=round(plan.judgment.risk, 3),
            rubric_importance=rubric,
            ceiling=ceiling,
            floor=floor,
            model_score=reply.score,
        )
        # Our own words the model saw, coverage notes and the prior's scoring included: a reply that only
        # repeats them says nothing (the prior's impact facts are the change's: a risk may restate them).
        ours = [selection.coverage_note(lang), prose.scoring_words(prior_reason, lang)]
        analysis = tidy(
            analysis,
            instruction_text(lang),
            lang,
            reason_fallback=prior_reason,
            extra="\n".join(filter(None, ours)),
        )
        # The prior's reason was our own text in the prompt: figures the model took from it are grounded.
        analysis = ground(analysis, commit, lang, allowed_text=allowed)
        breaking = heuristic.breaking_statement(plan.assessment, lang)  # its tier is high: the floor
        if breaking is not None:  # the code's breaking change named in Compatibility and Risks (stated.py)
            analysis = with_breaking_stated(analysis, breaking, lang)
        # A reason that copies the rubric's or the summary (small models do both) would print it twice.
        own = without_echo(without_echo(analysis.importance_reason, prior_reason), analysis.summary)
        analysis.importance_reason = judged_reason(
            lang, prior_reason, rubric, tier, own, asked, ceiling, floor
        )
        # rows of a high card the model left unknown: the rules' facts for them, where they have some
        rows: list[str] = []
        if analysis.insights:  # a high card's: the rules' insights are not written for the others
            found = prose.found_insights(plan.assessment.facts, list(plan.assessment.judgment.signals), lang)
            analysis, rows = with_known_insights(analysis, found, lang)
        note = selection.coverage_note(lang)
        if note:
            analysis.notes.append(note)
        if rows:
            missing = [*missing, f"insights ({', '.join(dimension_label(lang, r) for r in rows)})"]
        if missing:
            analysis.notes.append(_text(lang, "filled", fields=", ".join(missing)))
        return analysis

    def _fallback(
        self,
        commit: Commit,
        lang: str,
        exc: BaseException,
        history: HistoryFacts | None = None,
        *,
        quiet: bool = False,
    ) -> Analysis:
        if not quiet:
            _log_failure(commit, exc)
        fallback = heuristic.analyze(commit, lang, history=history)
        note = _text(lang, "full", reason=failure_reason(exc, lang))
        return fallback.model_copy(
            update={"analyzer": "heuristic-fallback", "notes": [note, *fallback.notes]}
        )


def _shaped(reply: CommitOut, tier: Importance) -> CommitOut:
    """The reply with the fields of `tier` (the model's tier moved back within one of the rubric's):
    deeper fields of a higher tier dropped; what a higher tier needs is then `missing()`."""
    update: dict[str, Any] = {"importance": tier.value}
    if tier == Importance.LOW:
        update.update(scope=[], risks=[], recommendations=[], insights=None)
    elif tier == Importance.MEDIUM:
        update["insights"] = None
    return reply.model_copy(update=update)


def _safe(text: Any) -> str:
    """Model text as data: no mass mention survives, whatever the commit told the model to write."""
    return neutralize_mentions(str(text).strip())


def _log_failure(commit: Commit, exc: BaseException) -> None:
    if isinstance(exc, DeadlinePassed) or (isinstance(exc, LLMError) and exc.outcome.startswith("circuit")):
        # Said once for the run (the deadline, the breaker opening); each report states it per commit.
        log.info("LLM analysis of %s skipped (%s); falling back", commit.short_sha, exc)
    elif isinstance(exc, (StageFailed, LLMError)):
        log.warning("LLM analysis of %s failed (%s); falling back", commit.short_sha, exc)
    else:  # a bug: keep the traceback for -vv
        log.warning("LLM analysis of %s failed unexpectedly; falling back", commit.short_sha, exc_info=exc)
