"""The shapes of every `--format json` output, as pydantic models: docs/json.md is generated from them
(`python -m bot.json_schema > docs/json.md`) and the tests validate real outputs against them, so the
documentation, the models and the renderers cannot drift apart.

Over 400 lines because it is one document: every `--format json` shape, generated together into docs/json.md.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from analysis.models import ChangeType, Importance, SurfaceKind


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CommitAnalysisJSON(_Out):
    """The analysis fields of the commit's tier (high: all; medium: no insights; low: summary only)."""

    change_type: ChangeType
    summary: str
    scope: list[str] | None = Field(None, description="medium and high only")
    insights: dict[str, str] | None = Field(
        None,
        description="high only; keys architecture, performance, security, maintainability,"
        " compatibility, resources (when there is something to say)",
    )
    risks: list[str] | None = Field(None, description="medium and high only")
    recommendations: list[str] | None = Field(None, description="medium and high only")
    notes: list[str] = Field(description="what the reader should know about the analysis itself")


class SurfaceChangeJSON(_Out):
    """One fact about what the change does to its users, found by parsing the files before and after."""

    kind: SurfaceKind
    name: str = Field(description='what users call it: "pkg.mod.Class.method", "--max-batch", "APP_TIMEOUT"')
    path: str
    line: int | None = Field(description="in the new file; in the old file for a removal")
    old: str | None = Field(description="the old name or value (renames, changed defaults)")
    new: str | None = Field(description="the new name or value")
    aliased: bool = Field(description="a deprecation alias or shim keeps the old name working")
    documented: bool | None = Field(
        description="a code name removed or renamed: whether the docs before the commit mention it; null when not known"
    )
    api: bool = Field(
        description="a field of an HTTP API's request or response body: every API client sees it"
    )
    breaking: bool = Field(description="breaks users' code or command lines (removed/renamed, no alias)")
    feature: bool = Field(description="gives users something new")
    behaviour: bool = Field(description="changes what existing users get without changing a name")
    text: str = Field(description="the fact as one plain English line")


class CommitJSON(_Out):
    """One commit and its analysis (`digestbot analyze --format json`; one REF: this object, several:
    an array of them)."""

    sha: str
    short_sha: str
    title: str = Field(description="the display title: first line, trailers and e-mails removed")
    author: str
    committed_at: str = Field(description="ISO 8601 with the digest zone's (or --tz) offset")
    url: str | None = Field(description="http(s) only")
    pr_number: int | None
    importance: Importance
    importance_reason: str
    change_type: ChangeType
    files_changed: int
    additions: int
    deletions: int
    analysis: CommitAnalysisJSON
    analyzer: str = Field(description="llm, heuristic, or a fallback such as heuristic-fallback")
    surface: list[SurfaceChangeJSON] | None = Field(
        None,
        description="what the change does to its users (public names, parameters, defaults, config"
        " fields, options, environment variables, routes, switches, deprecations, supported versions,"
        " dependencies); null when its files were not read, [] when nothing user-facing changed",
    )
    shipped: list[str] | None = Field(
        None,
        description="the changed paths the repository's packaging ships to users; null when no packaging"
        " file was understood",
    )
    prose: list[str] | None = Field(
        None,
        description="the changed Python files whose versions before and after parse to the same code but"
        " for comments, docstrings, message text and layout (nothing users run changed there); null when"
        " its files were not read",
    )


class WindowJSON(_Out):
    start: str
    end: str


class StatsJSON(_Out):
    high: int
    medium: int
    low: int
    total: int


class FollowUpOriginalJSON(_Out):
    sha: str
    title: str
    committed_at: str
    url: str | None
    pr_number: int | None
    importance: str | None = Field(description="the rank we gave it, when we analysed it")
    report: str | None = Field(
        description="its section of its day's report (relative link), when we wrote one"
    )


class FollowUpJSON(_Out):
    """A commit of the day that reverts or fixes forward an earlier one."""

    kind: str = Field(description="revert | fix")
    follow_up: str = Field(description="sha of the day's commit")
    evidence: str = Field(description="the words of its message that say so")
    original: FollowUpOriginalJSON


class DigestJSON(_Out):
    """A day's digest (`digestbot digest --format json`)."""

    repo: str
    branch: str
    date: str = Field(description="YYYY-MM-DD, the calendar day in timezone")
    timezone: str
    window: WindowJSON = Field(description="[start, end) by committer date")
    generated_at: str
    analyzer: str = Field(description='one name, names joined by "+" when mixed, "none" on an empty day')
    stats: StatsJSON
    filtered_out: int = Field(description="commits of the window a subscription's filters left out")
    history_start: str | None = Field(
        description="ISO 8601, set when the local clone is shallow and its history of the branch starts"
        " inside the window: commits of the day before this time may be missing (fix: git fetch"
        " --shallow-since=<a day before the window> or git fetch --unshallow in the clone); null otherwise"
    )
    clone_newest: str | None = Field(
        description="ISO 8601, set when the day has no commits and the local clone's newest commit on the"
        " branch is older than the window: a clone nobody updates reads as a quiet day (fix: update the"
        " clone, then build the day again); null otherwise"
    )
    followups: list[FollowUpJSON] = Field(description="the day's reverts and fix-forwards of earlier commits")
    commits: list[CommitJSON] = Field(description="every commit of the window, newest first")


class PostResultJSON(_Out):
    """What `digestbot post --format json` did."""

    repo: str
    date: str
    platform: str
    channel: str
    key: str
    commits: int
    posted: list[str] = Field(description="items posted now: parent, card:<sha>, high_list, medium, report")
    skipped: list[str] = Field(description="items found already posted")
    thread_id: str | None
    edited: list[str] = Field(
        description="items edited in place: the parent, with --repost or on a day posted with --partial"
    )
    partial: bool = Field(
        description="the day had not ended (--partial): its parent and cards so far; the day stays open"
    )


class PlannedMessageJSON(_Out):
    item: str
    part: int
    parts: int
    already_posted: bool
    size: dict[str, int] = Field(
        description="json_bytes, and blocks/text chars (Slack) or embeds chars (Discord)"
    )
    payload: dict[str, Any] = Field(description="the message exactly as the platform would receive it")


class DryRunJSON(_Out):
    """`digestbot post --dry-run --format json`: every message a post would send."""

    platform: str
    channel: str
    key: str
    cards: list[str] = Field(
        description="the shas of the high commits posted as cards; past DIGEST_MAX_CARDS the day's top ones,"
        " the rest listed in one `high_list` message"
    )
    messages: list[PlannedMessageJSON]


class LastRunJSON(_Out):
    day: str
    status: str
    commits: int | None
    stats: dict[str, int]
    llm_calls: int
    tokens: int
    error: str | None


class SubscriptionStatusJSON(_Out):
    name: str
    metrics_id: str = Field(
        description="its `subscription` label in /metrics (its name with METRICS_LABEL_NAMES)"
    )
    origin: str = Field(description="file or chat")
    repo: str
    branch: str | None
    git_dir: str | None
    schedule: str
    timezone: str
    lang: str
    destinations: list[str] = Field(description="platform:channel")
    next_run: str | None
    last_run: LastRunJSON | None
    problem: str | None = Field(description="why the subscription cannot run (source, channels), or null")
    warning: str | None = Field(
        description="its zone is accepted but seldom meant (EST: a fixed UTC-05:00 all year), or null;"
        " it runs all the same"
    )
    overdue: str | None = Field(
        description="a digest due more than its grace ago that has not succeeded (what /healthz says), or null"
    )


class UsageJSON(_Out):
    calls: int
    tokens_in: int
    tokens_out: int


class PendingWorkJSON(_Out):
    key: str
    kind: str = Field(
        description="radar (a banner and its reply), notice (a failed run's notice) or weekly (a roll-up)"
    )
    destination: str = Field(description="platform:channel")
    what: str
    attempts: int
    next_try: str = Field(description="when the running service tries it next (UTC)")
    last_error: str | None
    since: str = Field(description="when it was recorded (UTC)")


class StatusJSON(_Out):
    """`digestbot status --format json`."""

    database: str
    subscriptions: list[SubscriptionStatusJSON]
    pending: list[PendingWorkJSON] = Field(description="work the running service still has to do")
    llm_last_7_days: UsageJSON


class LLMCallJSON(_Out):
    """One LLM call attempt (`digestbot logs --format json` gives an array, newest first)."""

    id: int
    created_at: str = Field(description="ISO 8601, UTC")
    model: str | None
    prompt_version: str | None
    purpose: str | None
    repo: str | None
    sha: str | None
    tokens_in: int | None
    tokens_out: int | None
    latency_ms: float | None
    finish_reason: str | None
    outcome: str | None
    error: str | None
    cost_usd: float | None = Field(description="null when LLM_PRICE_IN / LLM_PRICE_OUT are unset")
    prompt: list[dict[str, Any]] | None = Field(
        None, description="only with --full: the chat messages sent (null if not stored or purged)"
    )
    reply: str | None = Field(None, description="only with --full: the reply (null if not stored or purged)")


class LLMTotalsJSON(_Out):
    """Totals over every call the filters match, not only the newest -n."""

    calls: int
    failed: int = Field(description="calls whose outcome is not ok")
    tokens_in: int
    tokens_out: int
    cost_usd: float | None = Field(description="null when no call was priced")
    latency_ms: float | None = Field(description="the calls' latencies added up")


class LLMLogsWithTotalsJSON(_Out):
    """`digestbot logs -u --format json`: the calls and their totals."""

    calls: list[LLMCallJSON] = Field(description="newest first, as without -u")
    totals: LLMTotalsJSON


# (command, model, what the output is)
class WeeklyDayJSON(_Out):
    date: str
    high: int
    medium: int
    low: int
    total: int


class WeeklyFollowUpJSON(_Out):
    kind: str = Field(description="revert | fix")
    follow_up: str
    follow_up_title: str
    landed_at: str
    original: str
    original_title: str
    original_committed_at: str
    original_importance: str | None = Field(description="the rank we had given the original")
    evidence: str


class WeeklyScoreJSON(_Out):
    count: int
    ranked_medium_or_high: int
    ranked_high: int


class WeeklyAreaJSON(_Out):
    path: str = Field(description="the first two folders of the changed files")
    commits: int
    high: int
    followed_up: int = Field(description="reverted or fixed by a commit landed before followed_up_until")


class WeeklyLLMJSON(_Out):
    calls: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None = Field(description="null when no call was priced")


class WeeklyJSON(_Out):
    """An ISO week's roll-up (`digestbot weekly --format json`)."""

    repo: str
    branch: str
    week: str = Field(description="YYYY-Www")
    timezone: str
    generated_at: str
    analyzer: str
    days: list[WeeklyDayJSON] = Field(description="Monday first")
    totals: StatsJSON
    filtered_out: int
    history_start: str | None = Field(
        description="ISO 8601, set when one of the days' digests has it (a shallow clone whose history starts"
        " inside that day): see the digest's history_start; null otherwise"
    )
    clone_newest: str | None = Field(
        description="ISO 8601, set when some of the week's days are empty and the local clone's newest commit"
        " is older than the first of them: see the digest's clone_newest; null otherwise"
    )
    followups: list[WeeklyFollowUpJSON] = Field(description="those that landed this week, in landing order")
    scores: dict[str, WeeklyScoreJSON] = Field(description="by kind: how we had ranked the originals")
    areas: list[WeeklyAreaJSON]
    followed_up_until: str | None = Field(
        description="ISO 8601: the areas' followed_up counts follow-ups landed before this (the week's end"
        " plus 30 days, or the roll-up's time)"
    )
    llm: WeeklyLLMJSON
    chart: str | None = Field(description="the chart PNG, relative to the output file")


class EvalCutJSON(_Out):
    recall: float = Field(description="weighted share of the followed-up commits at or above the cut")
    flagged_share: float
    lift: float = Field(description="recall / flagged_share (1.0 is chance)")
    precision: float
    hits: int = Field(description="followed-up commits at or above the cut (count)")
    size_recall: float = Field(description="recall of a rank by lines changed flagging the same share")


class EvalMonthJSON(_Out):
    commits: int
    followed_up: int
    cuts: dict[str, EvalCutJSON] = Field(description='by cut: "medium+high", "high"')


class IntervalJSON(_Out):
    low: float
    high: float


class VersusJSON(_Out):
    flagged: int = Field(description="commits at or above the cut")
    flagged_share: float = Field(description="weighted; also chance's recall")
    hits: int = Field(description="positive commits at or above the cut")
    recall: float
    size_recall: float = Field(description="a rank by lines changed flagging the same share")
    chance: float
    difference: IntervalJSON | None = Field(description="95% bootstrap interval of recall - size_recall")


class AucJSON(_Out):
    tier: float | None = Field(description="ROC AUC of the tier (high > medium > low; ties count half)")
    size: float | None = Field(description="ROC AUC of lines changed")
    difference: IntervalJSON | None = Field(description="95% bootstrap interval of tier - size")
    impact_score: float | None = Field(None, description="when every commit has an impact score")
    risk_score: float | None = Field(None, description="when every commit has a risk score")


class KeyScoreJSON(_Out):
    """One answer key's figures beside a rank by size and chance."""

    commits: int = Field(description="commits the key answers for")
    positives: int
    positive_share: float
    cuts: dict[str, VersusJSON] = Field(description='by cut: "medium+high", "high"')
    auc: AucJSON


class NotesCategoryJSON(_Out):
    category: str = Field(
        description="breaking, feature, change, deprecation, performance, fix, dependencies, docs, internal, other, unlisted"
    )
    commits: int
    high: int
    medium_or_high: int
    high_share: float
    medium_or_high_share: float


class NotesTargetJSON(_Out):
    name: str
    categories: list[str]
    cut: str
    goal: str
    met: bool | None
    score: KeyScoreJSON | None = Field(description="null when no commit of these categories was ranked")


class NotesKeyJSON(_Out):
    all: KeyScoreJSON | None
    shipped: KeyScoreJSON | None = Field(
        description="among commits touching the shipped package; null when unknown (shipped_known 0)"
    )


class ReleaseNotesJSON(_Out):
    file: str = Field(description="path at the branch tip, or the --changelog file")
    listed_in_file: int = Field(description="pull requests the notes list")
    home: str | None = Field(description="owner/name the notes' pull-request links point at")
    listed_in_span: int
    pull_requests_covered: int = Field(description="the span's PRs from the first to the last listed one")
    covered_from: str | None
    covered_to: str | None
    lists_changes: bool = Field(description="true: an unlisted PR counts as not release-worthy")
    reason: str
    unclassified_headings: list[str] = Field(description="headings listing PRs under no category word")
    categories: list[NotesCategoryJSON]
    targets: list[NotesTargetJSON]
    shipped_known: int = Field(description="commits with a notes answer whose shipped paths are known")
    keys: dict[str, NotesKeyJSON] = Field(description='"breaking/feature" vs the rest; "listed" vs unlisted')


class RankedCommitJSON(_Out):
    sha: str
    title: str
    committed_at: str
    tier: Importance
    impact_score: float | None
    risk_score: float | None
    changed_lines: int
    weight: float = Field(description="commits this one stands for (1 unless --sample)")
    follow_up: str | None = Field(description="sha of the first revert or fix within the horizon")
    follow_up_kind: str | None = Field(description="revert | fix")
    release_notes: str | None = Field(description="its category, unlisted, or null (the notes say nothing)")
    shipped: bool | None = Field(description="touches a path the packaging ships; null: unknown")
    reason: str


class BootstrapJSON(_Out):
    resamples: int
    seed: int
    level: float


class EvalJSON(_Out):
    """A replay of days scored against the branch's own answer keys (`digestbot eval --format json`).
    Shares are weighted (with --sample, each sampled commit stands for several); counts are integers."""

    repo: str
    branch: str
    since: str
    until: str
    timezone: str
    horizon_days: int
    analyzer: str
    sample: int | None
    span_commits: int = Field(description="commits in the span")
    commits: int = Field(description="commits ranked (fewer than span_commits with --sample)")
    followed_up: int
    tiers: dict[str, float] = Field(description="share of commits per tier")
    cuts: dict[str, EvalCutJSON] = Field(description="the follow-up key by cut")
    follow_ups: KeyScoreJSON | None = Field(description="the follow-up key beside size and chance")
    months: dict[str, EvalMonthJSON]
    release_notes: ReleaseNotesJSON | None
    release_notes_status: str | None = Field(description="why there is no release-notes key")
    bootstrap: BootstrapJSON
    ranked_commits: list[RankedCommitJSON] = Field(description="every commit ranked, oldest day first")
    missed: list[RankedCommitJSON] = Field(description="followed-up commits ranked low, oldest first")


OUTPUTS: list[tuple[str, type[BaseModel], str]] = [
    ("digestbot digest --format json", DigestJSON, "an object"),
    ("digestbot analyze REF --format json", CommitJSON, "an object; several REFs: an array of them"),
    ("digestbot post --format json", PostResultJSON, "an object"),
    ("digestbot post --dry-run --format json", DryRunJSON, "an object"),
    ("digestbot status --format json", StatusJSON, "an object"),
    ("digestbot logs --format json", LLMCallJSON, "an array of these, newest first"),
    ("digestbot logs -u --format json", LLMLogsWithTotalsJSON, "an object"),
    ("digestbot weekly --format json", WeeklyJSON, "an object"),
    ("digestbot eval --format json", EvalJSON, "an object"),
]


def markdown() -> str:
    parts = [
        "# JSON output",
        "",
        "Generated by `python -m bot.json_schema > docs/json.md` from the models in `bot/json_schema.py`;"
        " a test fails when this file is out of date. Text is raw (no Markdown escaping); times are"
        " ISO 8601; every file and stream is UTF-8.",
        "",
    ]
    for command, model, shape in OUTPUTS:
        schema = model.model_json_schema()
        parts += [
            f"## `{command}`",
            "",
            f"{(model.__doc__ or '').strip()} Output: {shape}.",
            "",
            "```json",
            json.dumps(schema, indent=2, ensure_ascii=False),
            "```",
            "",
        ]
    return "\n".join(parts)


if __name__ == "__main__":
    print(markdown(), end="")
