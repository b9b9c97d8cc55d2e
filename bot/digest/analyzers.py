"""Which analyser a run uses, and the contract every analyser fulfils."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

from analysis import heuristic
from analysis.models import Analysis, Commit

if TYPE_CHECKING:
    from analysis.history.facts import HistoryFacts

Progress = Callable[[int, int], None]
OnResult = Callable[[Analysis], None]  # each analysis as soon as it is ready (saved at once)


class Analyzer(Protocol):
    model: str  # part of the cache key: the model name, or "heuristic"
    prompt_version: str  # part of the cache key: bump when prompts or rubric change

    async def analyze(
        self,
        commits: list[Commit],
        lang: str,
        progress: Progress | None = None,
        history: Mapping[str, HistoryFacts] | None = None,
        on_result: OnResult | None = None,
    ) -> dict[str, Analysis]:
        """An analysis for every commit given, by sha. Never raises for one commit's failure:
        a commit that could not be analysed gets a fallback analysis that says so. `history`: what
        the branch's past says about each commit (by sha), for the ranking. `on_result`: called with
        each analysis as soon as it is ready, so an interrupted run keeps what it paid for."""
        ...

    async def aclose(self) -> None:
        """Release clients (an LLM analyser's HTTP client belongs to one event loop)."""
        ...


class HeuristicAnalyzer:
    """The embedded default: no model, no network, deterministic."""

    model = "heuristic"
    prompt_version = heuristic.RUBRIC_VERSION

    async def analyze(
        self,
        commits: list[Commit],
        lang: str,
        progress: Progress | None = None,
        history: Mapping[str, HistoryFacts] | None = None,
        on_result: OnResult | None = None,
    ) -> dict[str, Analysis]:
        results: dict[str, Analysis] = {}
        for done, commit in enumerate(commits, start=1):
            results[commit.sha] = heuristic.analyze(commit, lang, history=(history or {}).get(commit.sha))
            if on_result:
                on_result(results[commit.sha])
            if progress:
                progress(done, len(commits))
        return results

    async def aclose(self) -> None:
        return None
