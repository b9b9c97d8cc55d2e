"""Answers to thread questions from the stored data alone: the day's commits and analyses, the
follow-up links, the surface changes. Pure: bot/chat/answers.py gathers `QAData` from the store and the sources.

An answer is a small document (lines of text and links) that each chat renderer turns into its own
markup (analysis/render/answer.py), so commit text stays inert on every platform and every commit an
answer speaks about is cited as a link.

Over 400 lines because it is one table: an answer per intent of parse.py, all built from the same `QAData`
with the same citation rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo

from analysis.history.followups import FollowUpKind
from analysis.labels import change_type_label, importance_label, importance_word
from analysis.models import Analysis, Commit, Importance, SurfaceChange, SurfaceKind, commit_ref, describe
from analysis.paths import PathKind, classify_path
from analysis.questions.parse import Aspect, Facet, Intent, Question
from analysis.text import display_author, display_title, filled

LIST_MAX = 15  # commits listed one per line; the rest are named in one line of links
FILES_MAX = 15
RISKIEST_DEFAULT = 5


# --------------------------------------------------------------------------------------------
# The answer document
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Link:
    text: str  # our own label (a short SHA, "#N")
    url: str | None


@dataclass(frozen=True, slots=True)
class Strong:
    text: str  # our own words


Span = str | Link | Strong  # str: any text, ours or untrusted; renderers escape it
Line = tuple[Span, ...]


@dataclass(slots=True)
class Answer:
    lang: str
    lines: list[Line] = field(default_factory=list)
    # data: from the store; llm: the model's (checked); fallback: the data's after the model failed or
    # said nothing that survived the check; help: what the bot can answer; limited: the per-thread cap.
    source: str = "data"
    kind: str = ""  # the intent answered
    cites: list[str] = field(default_factory=list)  # full SHAs of the commits cited, in order
    removed: int = 0  # statements the fact-check took out of the model's answer
    removed_items: list[str] = field(default_factory=list)  # what they cited: for logs, never shown
    # False when the question may not have meant what we read ("changes to production": no commit
    # touches a "production" area): a model, when there is one, gets to answer instead.
    confident: bool = True
    # A list of the day's commits (riskiest, by tier, path, author, surface...): "the second one" in a
    # later turn is its second. An answer about one commit cites others too (its revert) and is no list.
    listing: bool = False

    def add(self, *spans: Span) -> None:
        self.lines.append(tuple(s for s in spans if s != ""))

    def cite(self, commit: Commit) -> Link:
        if commit.sha not in self.cites:
            self.cites.append(commit.sha)
        return Link(commit.short_sha, commit.url)

    def plain(self) -> str:
        """The answer as plain text (thread history, logs, console)."""
        return "\n".join("".join(_plain_span(s) for s in line) for line in self.lines)


def _plain_span(span: Span) -> str:
    if isinstance(span, Link):
        return span.text
    if isinstance(span, Strong):
        return span.text
    return span


# --------------------------------------------------------------------------------------------
# What an answer is made from
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FollowUpFact:
    """A stored follow-up link seen from one side: the other commit, what it did, when."""

    kind: FollowUpKind
    sha: str  # the other commit
    title: str
    ref: str  # "#N" or a short SHA
    url: str | None
    at: datetime  # when the later of the two landed (a revert's date, or the original's for `earlier`)


@dataclass(slots=True)
class QAData:
    repo: str
    tz: tzinfo
    commits: list[Commit] = field(default_factory=list)  # the thread's day, newest first; [] for a card
    analyses: dict[str, Analysis] = field(default_factory=dict)  # by SHA: the day's and the focus's
    day: date | None = None
    focus: Commit | None = None  # the commit the conversation is about
    later: dict[str, list[FollowUpFact]] = field(default_factory=dict)  # SHA → what reverted/fixed it later
    earlier: dict[str, list[FollowUpFact]] = field(default_factory=dict)  # SHA → what it reverts/fixes
    history_until: datetime | None = None  # the stored history's end: "none known as of …"

    def authors(self) -> list[str]:
        names = {c.author for c in self.commits} | {c.author_login or "" for c in self.commits}
        if self.focus is not None:
            names |= {self.focus.author, self.focus.author_login or ""}
        return sorted(n for n in names if n)


# --------------------------------------------------------------------------------------------
# Words
# --------------------------------------------------------------------------------------------

_W = {
    "en": {
        "riskiest": "Commits carrying the most risk ({shown} of {total} today, by tier and stated risks):",
        "riskiest_filtered": "Commits carrying the most risk among {n} matching ({shown} shown):",
        "no_risks": "No risks were recorded for today's {what}.",
        "list_tier": "{tiers} commits today: {n} of {total}.",
        "list_match": "{n} of {total} commits today match ({what}).",
        "list_none": "No commit today matches ({what}); {total} commits in the day.",
        "count_all": "{total} commits today: {high} high, {medium} medium, {low} low.",
        "count_match": "{n} of {total} commits today match ({what}).",
        "by": "by {who}",
        "touching": "touching {what}",
        "tier": "{tier}",
        "more": "…and {n} more: ",
        "risk": "risk: ",
        "authors_today": "Authors today: ",
        "authors_head": "{n} authors landed {total} commits today, most first:",
        "authors_more": "…and {n} more authors ({commits} commits).",
        "surface_head": "User-facing changes found today ({what}): {n} in {commits} commit(s).",
        "surface_none": "No {what} found in the {n} commits whose files were read.",
        "surface_unknown_some": "Not known for {n} of {total} commits (their files before and after were not read).",
        "surface_unknown_all": "Not known: the files before and after today's commits were not read, so "
        "{what} cannot be told from the data.",
        "surface_commit_unknown": "Not known: the files of {ref} before and after were not read, so its "
        "{what} cannot be told from the data.",
        "surface_commit_none": "{ref} changes nothing user-facing that the parsers recognise ({what}).",
        "facet_breaking": "breaking changes",
        "facet_behaviour": "changed defaults and behaviour",
        "facet_feature": "new options and names",
        "facet_env": "environment variables added, removed or renamed",
        "facet_env_new": "new environment variables",
        "followups_day_none": "No commit of this day is known to have been reverted or fixed forward{asof}, "
        "and none of them reverts or fixes an earlier one.",
        "followups_day_head": "Follow-ups involving this day's commits{asof}:",
        "reverted_by": "reverted by {ref} on {day}: ",
        "fixed_by": "fixed forward by {ref} on {day}: ",
        "reverts": "reverts {ref} (committed {day}): ",
        "fixes": "fixes forward {ref} (committed {day}): ",
        "not_followed": "No revert or fix-forward of it is recorded{asof}.",
        "asof": " (history known up to {day})",
        "header": "{tier} · {ctype}",
        "summary": "Summary: ",
        "risks": "Risks:",
        "no_risk_listed": "Risks: none listed in its analysis.",
        "advice": "Recommendations:",
        "no_advice": "Recommendations: none in its analysis.",
        "tests_changed": "Tests changed ({n}):",
        "no_tests": "It changes no test files (files changed: {n}).",
        "files": "Files changed ({n}, +{add} −{dele}):",
        "files_more": "…and {n} more files",
        "author": "Author: {who}",
        "when": "Committed {when} ({tz}).",
        "size": "Size: {total} lines changed (+{add} −{dele}) in {n} files.",
        "reason": "Ranked {tier}: ",
        "type": "Change type: {ctype}.",
        "notes": "Notes: ",
        "no_analysis": "It has no stored analysis.",
        "which_commit": "Which commit? Name it with #N, a SHA or a commit link, e.g. “{example}”.",
        "title_several": "{n} of this thread's commits have “{phrase}” in their title:",
        "title_none": "None of this thread's commits has “{phrase}” in its title.",
        "ordinal_none": "I have not listed commits in this thread yet, so I can't tell which one you mean.",
        "ordinal_short": "My last list in this thread had {n} commit(s), so I can't tell which one you mean.",
        "no_day": "This thread is about one commit; ask about the day in a digest's thread.",
        "overview": "{repo} on {day}: {total} commits — {high} high, {medium} medium, {low} low.",
        "overview_top": "High:",
        "overview_none_high": "No high commit today.",
        "overview_medium": "Medium:",
    },
    "zh": {
        "riskiest": "风险最高的提交（今日 {total} 个中的 {shown} 个，按重要程度和所列风险排序）：",
        "riskiest_filtered": "符合条件的 {n} 个提交中风险最高的（列出 {shown} 个）：",
        "no_risks": "今日{what}的分析中没有记录风险。",
        "list_tier": "今日{tiers}重要度提交：{n} 个（共 {total} 个）。",
        "list_match": "今日 {total} 个提交中有 {n} 个符合（{what}）。",
        "list_none": "今日没有符合（{what}）的提交；当天共 {total} 个提交。",
        "count_all": "今日共 {total} 个提交：高 {high} 个，中 {medium} 个，低 {low} 个。",
        "count_match": "今日 {total} 个提交中有 {n} 个符合（{what}）。",
        "by": "作者 {who}",
        "touching": "涉及 {what}",
        "tier": "{tier}重要度",
        "more": "……另有 {n} 个：",
        "risk": "风险：",
        "authors_today": "今日的作者：",
        "authors_head": "今日 {n} 位作者提交了 {total} 个提交，按数量排序：",
        "authors_more": "……另有 {n} 位作者（共 {commits} 个提交）。",
        "surface_head": "今日发现的对用户可见的变化（{what}）：{commits} 个提交中共 {n} 处。",
        "surface_none": "在已读取文件的 {n} 个提交中没有发现{what}。",
        "surface_unknown_some": "另有 {n} 个提交（共 {total} 个）未知：未读取它们修改前后的文件。",
        "surface_unknown_all": "未知：今日提交修改前后的文件没有被读取，数据无法说明{what}。",
        "surface_commit_unknown": "未知：没有读取 {ref} 修改前后的文件，数据无法说明它的{what}。",
        "surface_commit_none": "{ref} 没有解析器能识别的对用户可见的变化（{what}）。",
        "facet_breaking": "破坏性变更",
        "facet_behaviour": "默认值与行为变化",
        "facet_feature": "新增选项与名称",
        "facet_env": "新增、删除或重命名的环境变量",
        "facet_env_new": "新增的环境变量",
        "followups_day_none": "没有记录显示当天的提交被回滚或修复跟进{asof}，当天的提交也没有回滚或修复更早的提交。",
        "followups_day_head": "与当天提交有关的后续修正{asof}：",
        "reverted_by": "已于 {day} 被 {ref} 回滚：",
        "fixed_by": "已于 {day} 由 {ref} 修复跟进：",
        "reverts": "回滚了 {ref}（提交于 {day}）：",
        "fixes": "修复跟进了 {ref}（提交于 {day}）：",
        "not_followed": "没有记录显示它被回滚或修复跟进{asof}。",
        "asof": "（已知历史截至 {day}）",
        "header": "{tier} · {ctype}",
        "summary": "摘要：",
        "risks": "潜在风险：",
        "no_risk_listed": "潜在风险：分析中没有列出。",
        "advice": "关注建议：",
        "no_advice": "关注建议：分析中没有给出。",
        "tests_changed": "修改的测试文件（{n} 个）：",
        "no_tests": "它没有修改测试文件（共修改了 {n} 个文件）。",
        "files": "修改的文件（{n} 个，+{add} −{dele}）：",
        "files_more": "……另有 {n} 个文件",
        "author": "作者：{who}",
        "when": "提交于 {when}（{tz}）。",
        "size": "规模：{n} 个文件，共改动 {total} 行（+{add} −{dele}）。",
        "reason": "评为{tier}的依据：",
        "type": "变更类型：{ctype}。",
        "notes": "说明：",
        "no_analysis": "没有已保存的分析。",
        "which_commit": "是哪个提交？请用 #N、SHA 或提交链接指明，例如“{example}”。",
        "title_several": "这个讨论串中有 {n} 个提交的标题包含“{phrase}”：",
        "title_none": "这个讨论串中没有标题包含“{phrase}”的提交。",
        "ordinal_none": "我还没有在这个讨论串里列出过提交，无法确定你指的是哪一个。",
        "ordinal_short": "我在这个讨论串里上一次列出了 {n} 个提交，无法确定你指的是哪一个。",
        "no_day": "这个讨论串只关于一个提交；关于当天的问题请在摘要的讨论串中提问。",
        "overview": "{repo} {day}：共 {total} 个提交 — 高 {high} 个，中 {medium} 个，低 {low} 个。",
        "overview_top": "高重要度：",
        "overview_none_high": "今日没有高重要度提交。",
        "overview_medium": "中重要度：",
    },
}


def _w(lang: str, key: str, **fmt: object) -> str:
    lang = "zh" if lang == "zh" else "en"
    return filled(lang, _W[lang][key], fmt)


# --------------------------------------------------------------------------------------------
# Answering
# --------------------------------------------------------------------------------------------


def answer_from_data(q: Question, data: QAData) -> Answer | None:
    """The data's answer to a recognised question; None for UNKNOWN (the model's turn, or help)."""
    if q.intent == Intent.UNKNOWN:
        return None
    a = Answer(q.lang, kind=q.intent.value)
    if q.about_commit(data.focus is not None):
        commit = _named(q, data) or data.focus
        if commit is None:
            a.add(_w(q.lang, "which_commit", example=example_questions(q.lang, data)[1]))
            return a
        _commit_answer(a, q, data, commit)
        return a
    if not data.commits:
        a.add(_w(q.lang, "no_day"))
        return a
    {
        Intent.RISKIEST: _riskiest,
        Intent.LIST: _listing,
        Intent.FOLLOWUPS: _day_followups,
        Intent.SURFACE: _day_surface,
        Intent.OVERVIEW: _overview,
        Intent.EXPLAIN: _which_commit,
    }[q.intent](a, q, data)
    a.listing = True
    return a


def _named(q: Question, data: QAData) -> Commit | None:
    """The first commit the question names among those at hand (the caller resolves the others)."""
    pool = [*data.commits, *([data.focus] if data.focus else [])]
    for named in q.commits:
        for commit in pool:
            if (named.kind == "pr" and commit.pr_number == int(named.value)) or (
                named.kind == "sha" and commit.sha.lower().startswith(named.value)
            ):
                return commit
    return None


def focus_answer(data: QAData, lang: str) -> Answer:
    """What the thread is about, from the data: the focused commit's analysis, else the day in short.
    The fallback when the model's answer is unusable."""
    a = Answer(lang, kind="explain" if data.focus else "overview")
    if data.focus is not None:
        _explain(a, lang, data, data.focus, frozenset({Aspect.SUMMARY, Aspect.RISKS}))
    elif data.commits:
        _overview(a, Question(text="", lang=lang, intent=Intent.OVERVIEW), data)
    return a


# --- one commit ------------------------------------------------------------------------------------


def _commit_answer(a: Answer, q: Question, data: QAData, commit: Commit) -> None:
    lang = q.lang
    if q.intent == Intent.FOLLOWUPS:
        _header(a, lang, data, commit)
        _commit_followups(a, lang, data, commit)
    elif q.intent == Intent.SURFACE:
        _header(a, lang, data, commit)
        _commit_surface(a, q, commit)
    else:
        aspects = set(q.aspects) or {Aspect.SUMMARY}
        if q.intent == Intent.RISKIEST:
            aspects.add(Aspect.RISKS)
        _explain(a, lang, data, commit, frozenset(aspects))


def _header(a: Answer, lang: str, data: QAData, commit: Commit) -> None:
    analysis = data.analyses.get(commit.sha)
    head: list[Span] = [a.cite(commit), " ", display_title(commit)]
    if analysis is not None:
        head += [
            " — ",
            _w(
                lang,
                "header",
                tier=importance_label(lang, analysis.importance),
                ctype=change_type_label(lang, analysis.change_type),
            ),
        ]
    a.add(*head)


_ASPECT_ORDER = (
    Aspect.SUMMARY, Aspect.TYPE, Aspect.REASON, Aspect.AUTHOR, Aspect.WHEN, Aspect.SIZE, Aspect.FILES,
    Aspect.TESTS, Aspect.RISKS, Aspect.ADVICE,
)  # fmt: skip


def _explain(a: Answer, lang: str, data: QAData, commit: Commit, aspects: frozenset[Aspect]) -> None:
    _header(a, lang, data, commit)
    analysis = data.analyses.get(commit.sha)
    for aspect in _ASPECT_ORDER:
        if aspect in aspects:
            _ASPECTS[aspect](a, lang, data, commit, analysis)
    if analysis is not None and analysis.notes and (aspects & {Aspect.SUMMARY, Aspect.RISKS}):
        # Reverted / fixed forward later, coverage, fallbacks: facts a reader must not miss.
        a.add(_w(lang, "notes"), " ".join(analysis.notes))
    if Aspect.SUMMARY in aspects and data.later.get(commit.sha):
        _commit_followups(a, lang, data, commit)


def _summary(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    if an is None:
        a.add(_w(lang, "no_analysis"))
    else:
        a.add(_w(lang, "summary"), an.summary)


def _risks(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    if an is not None:
        _items(a, lang, an.risks, "risks", "no_risk_listed")


def _advice(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    if an is not None:
        _items(a, lang, an.recommendations, "advice", "no_advice")


def _items(a: Answer, lang: str, items: list[str], head: str, none: str) -> None:
    """A field of the analysis as a list, or a line saying the analysis has none."""
    if not items:
        a.add(_w(lang, none))
        return
    a.add(Strong(_w(lang, head)))
    for item in items:
        a.add("• ", item)


def _tests(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    tests = [f for f in commit.files if classify_path(f.path) == PathKind.TESTS]
    if not tests:
        a.add(_w(lang, "no_tests", n=commit.file_count))
        return
    a.add(Strong(_w(lang, "tests_changed", n=len(tests))))
    for f in tests[:FILES_MAX]:
        a.add("• ", f.path, f" (+{f.additions} −{f.deletions})")
    if len(tests) > FILES_MAX:
        a.add(_w(lang, "files_more", n=len(tests) - FILES_MAX))


def _files(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    a.add(
        Strong(
            _w(lang, "files", n=commit.file_count, add=commit.total_additions, dele=commit.total_deletions)
        )
    )
    for f in commit.files[:FILES_MAX]:
        a.add("• ", f.path, f" (+{f.additions} −{f.deletions})")
    if commit.file_count > FILES_MAX:
        a.add(_w(lang, "files_more", n=commit.file_count - min(FILES_MAX, len(commit.files))))


def _author(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    who = display_author(commit) or "?"
    if commit.author_login and commit.author_login.lower() not in who.lower():
        who += f" ({commit.author_login})"
    a.add(_w(lang, "author", who=who))


def _when(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    moment = commit.committed_at.astimezone(data.tz)
    a.add(_w(lang, "when", when=moment.strftime("%Y-%m-%d %H:%M"), tz=str(data.tz)))


def _size(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    a.add(
        _w(
            lang,
            "size",
            total=commit.changed_lines,
            add=commit.total_additions,
            dele=commit.total_deletions,
            n=commit.file_count,
        )
    )


def _reason(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    if an is not None:
        a.add(_w(lang, "reason", tier=importance_word(lang, an.importance)), an.importance_reason)


def _type(a: Answer, lang: str, data: QAData, commit: Commit, an: Analysis | None) -> None:
    if an is not None:
        a.add(_w(lang, "type", ctype=change_type_label(lang, an.change_type)))


_ASPECTS = {
    Aspect.SUMMARY: _summary,
    Aspect.RISKS: _risks,
    Aspect.ADVICE: _advice,
    Aspect.TESTS: _tests,
    Aspect.FILES: _files,
    Aspect.AUTHOR: _author,
    Aspect.WHEN: _when,
    Aspect.SIZE: _size,
    Aspect.REASON: _reason,
    Aspect.TYPE: _type,
}


def _asof(lang: str, data: QAData) -> str:
    if data.history_until is None:
        return ""
    return _w(lang, "asof", day=data.history_until.astimezone(data.tz).date().isoformat())


def _commit_followups(a: Answer, lang: str, data: QAData, commit: Commit) -> None:
    later, earlier = data.later.get(commit.sha, []), data.earlier.get(commit.sha, [])
    for fact in later:
        a.add("⚠️ " if fact.kind == FollowUpKind.REVERT else "🔧 ", *_fact_spans(lang, data, fact, later=True))
    for fact in earlier:
        a.add(*_fact_spans(lang, data, fact, later=False))
    if not later:
        a.add(_w(lang, "not_followed", asof=_asof(lang, data)))


def _fact_spans(lang: str, data: QAData, fact: FollowUpFact, *, later: bool) -> list[Span]:
    """ "reverted by #N on DAY: <sha> title" (a later commit) or "reverts #N (committed DAY): …"."""
    revert = fact.kind == FollowUpKind.REVERT
    key = ("reverted_by" if revert else "fixed_by") if later else ("reverts" if revert else "fixes")
    return [
        _w(lang, key, ref=fact.ref, day=_day(fact.at, data.tz)),
        Link(fact.sha[:7], fact.url),
        " ",
        fact.title,
    ]


def _day(moment: datetime, tz: tzinfo) -> str:
    return moment.astimezone(tz).date().isoformat()


# --- surface -----------------------------------------------------------------------------------------


def _facet_names(lang: str, facets: frozenset[Facet], env_vars: bool = False) -> str:
    if env_vars:
        return _w(lang, "facet_env_new" if facets == {Facet.FEATURE} else "facet_env")
    chosen = [f for f in Facet if f in facets] or list(Facet)
    return ("、" if lang == "zh" else ", ").join(_w(lang, f"facet_{f.value}") for f in chosen)


_ENV_KINDS = frozenset({SurfaceKind.ENV_ADDED, SurfaceKind.ENV_REMOVED, SurfaceKind.ENV_RENAMED})


def _wanted(
    change: SurfaceChange, facets: frozenset[Facet], terms: Sequence[str], env_vars: bool = False
) -> bool:
    if env_vars and change.kind not in _ENV_KINDS:
        return False
    kinds = (
        (Facet.BREAKING in facets and change.breaking)
        or (Facet.BEHAVIOUR in facets and change.behaviour)
        or (Facet.FEATURE in facets and change.feature)
    )
    if not kinds:
        return False
    if not terms:
        return True
    text = f"{change.name} {change.path} {change.old or ''} {change.new or ''}".lower()
    return any(_term_in([text], term) for term in terms)


def _commit_surface(a: Answer, q: Question, commit: Commit) -> None:
    lang, what = q.lang, _facet_names(q.lang, q.facets, q.env_vars)
    ref = commit_ref(commit)
    if commit.surface is None:
        a.add(_w(lang, "surface_commit_unknown", ref=ref, what=what))
        return
    changes = [c for c in commit.surface if _wanted(c, q.facets or frozenset(Facet), (), q.env_vars)]
    if not changes:
        a.add(_w(lang, "surface_commit_none", ref=ref, what=what))
    for change in changes:
        a.add("• ", describe(change))


def _day_surface(a: Answer, q: Question, data: QAData) -> None:
    lang, what = q.lang, _facet_names(q.lang, q.facets, q.env_vars)
    facets = q.facets or frozenset(Facet)
    commits = _filtered(q, data, use_terms=False)
    read = [c for c in commits if c.surface is not None]
    unknown = len(commits) - len(read)
    if not read:
        a.add(_w(lang, "surface_unknown_all", what=what))
        return
    found = [(c, [s for s in c.surface or () if _wanted(s, facets, q.terms, q.env_vars)]) for c in read]
    found = [(c, changes) for c, changes in found if changes]
    if not found:
        a.add(_w(lang, "surface_none", what=what, n=len(read)))
    else:
        n = sum(len(changes) for _, changes in found)
        a.add(Strong(_w(lang, "surface_head", what=what, n=n, commits=len(found))))
        for commit, changes in found:
            a.add("• ", a.cite(commit), " ", display_title(commit))
            for change in changes:
                a.add("    ◦ ", describe(change))
    if unknown:
        a.add(_w(lang, "surface_unknown_some", n=unknown, total=len(commits)))


# --- the day -----------------------------------------------------------------------------------------


def _analysis(data: QAData, commit: Commit) -> Analysis | None:
    return data.analyses.get(commit.sha)


def _risk_key(data: QAData, commit: Commit) -> tuple[float, int, int, int]:
    an = _analysis(data, commit)
    if an is None:
        return (1.0, 3, 0, 0)
    score = an.risk_score if an.risk_score is not None else 0.0
    return (-score, an.importance.rank, -len(an.risks), -commit.changed_lines)


def _filtered(q: Question, data: QAData, *, use_terms: bool = True) -> list[Commit]:
    out = []
    for commit in data.commits:
        an = _analysis(data, commit)
        if q.tiers and (an is None or an.importance not in q.tiers):
            continue
        if q.author and not author_matches(q.author, commit):
            continue
        if use_terms and q.terms and not all(touches(commit, an, term) for term in q.terms):
            continue
        out.append(commit)
    return out


def _what(q: Question) -> str:
    parts = []
    zh = q.lang == "zh"
    if q.tiers:
        tiers = "/".join(importance_word(q.lang, t) for t in Importance if t in q.tiers)
        parts.append(_w(q.lang, "tier", tier=tiers))
    if q.terms:
        parts.append(
            _w(q.lang, "touching", what=("、" if zh else ", ").join(_term_label(t) for t in q.terms))
        )
    if q.author:
        parts.append(_w(q.lang, "by", who=q.author))
    return ("，" if zh else "; ").join(parts)


def _term_label(term: str) -> str:
    return " / ".join(term.split("|"))


def _riskiest(a: Answer, q: Question, data: QAData) -> None:
    pool = _filtered(q, data)
    ranked = sorted(pool, key=lambda c: _risk_key(data, c))
    risky = [c for c in ranked if (an := _analysis(data, c)) is not None and an.risks]
    if not risky:
        a.add(_w(q.lang, "no_risks", what=_what(q)))
        return
    shown = risky[: q.limit or RISKIEST_DEFAULT]
    if q.terms or q.author or q.tiers:
        a.add(Strong(_w(q.lang, "riskiest_filtered", n=len(pool), shown=len(shown))))
    else:
        a.add(Strong(_w(q.lang, "riskiest", shown=len(shown), total=len(data.commits))))
    for commit in shown:
        an = _analysis(data, commit)
        assert an is not None
        a.add(
            "• ", a.cite(commit), " ", display_title(commit),
            f" ({importance_word(q.lang, an.importance)}) — ", _w(q.lang, "risk"), an.risks[0],
        )  # fmt: skip


def _listing(a: Answer, q: Question, data: QAData) -> None:
    if q.authors_ranked:
        _authors(a, q, data)
        return
    total = len(data.commits)
    if not (q.tiers or q.terms or q.author):
        stats = {lvl.value: 0 for lvl in Importance}
        for commit in data.commits:
            an = _analysis(data, commit)
            if an is not None:
                stats[an.importance.value] += 1
        a.add(_w(q.lang, "count_all", total=total, **stats))
        return
    matches = _filtered(q, data)
    what = _what(q)
    if not matches:
        a.add(_w(q.lang, "list_none", what=what, total=total))
        # A tier or a path means what it says; an area or a name nobody has may be a misreading.
        a.confident = bool(q.tiers) or any(_path_like(t) for t in q.terms)
        if q.author:
            a.add(_w(q.lang, "authors_today"), ", ".join(sorted({display_author(c) for c in data.commits})))
        return
    if q.count:
        a.add(_w(q.lang, "count_match", n=len(matches), total=total, what=what))
    elif q.tiers and not (q.terms or q.author):
        tiers = "/".join(importance_word(q.lang, t) for t in Importance if t in q.tiers)
        a.add(Strong(_w(q.lang, "list_tier", tiers=tiers, n=len(matches), total=total)))
    else:
        a.add(Strong(_w(q.lang, "list_match", n=len(matches), total=total, what=what)))
    _commit_lines(a, q.lang, data, matches, risks=Aspect.RISKS in q.aspects)


def _authors(a: Answer, q: Question, data: QAData) -> None:
    """Authors by how many of the (matching) commits they landed, most first, with those commits."""
    by: dict[str, list[Commit]] = {}
    for commit in _filtered(q, data):
        by.setdefault(display_author(commit) or "?", []).append(commit)
    ranked = sorted(by.items(), key=lambda item: (-len(item[1]), item[0].lower()))
    a.add(Strong(_w(q.lang, "authors_head", n=len(ranked), total=sum(len(c) for _, c in ranked))))
    for name, commits in ranked[:LIST_MAX]:
        spans: list[Span] = ["• ", name, f" ({len(commits)}): "]
        for i, commit in enumerate(commits):
            spans += ([", "] if i else []) + [a.cite(commit)]
        a.add(*spans)
    rest = ranked[LIST_MAX:]
    if rest:
        a.add(_w(q.lang, "authors_more", n=len(rest), commits=sum(len(c) for _, c in rest)))


def _commit_lines(
    a: Answer, lang: str, data: QAData, commits: Sequence[Commit], *, risks: bool = False
) -> None:
    for commit in commits[:LIST_MAX]:
        an = _analysis(data, commit)
        line: list[Span] = ["• ", a.cite(commit), " ", display_title(commit)]
        if an is not None:
            line.append(f" ({importance_word(lang, an.importance)}) — ")
            if risks and an.risks:
                line += [_w(lang, "risk"), an.risks[0]]
            else:
                line.append(_first_sentence(an.summary))
        a.add(*line)
    rest = list(commits[LIST_MAX:])
    if rest:
        spans: list[Span] = [_w(lang, "more", n=len(rest))]
        for i, commit in enumerate(rest):
            spans += ([", "] if i else []) + [a.cite(commit)]
        a.add(*spans)


def _first_sentence(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    m = re.search(r"(?<=[。！？.!?])\s", text)
    head = text[: m.start()] if m and m.start() <= limit else text
    return head if len(head) <= limit else head[: limit - 1].rstrip() + "…"


def _day_followups(a: Answer, q: Question, data: QAData) -> None:
    asof = _asof(q.lang, data)
    involved = [c for c in _filtered(q, data) if data.later.get(c.sha) or data.earlier.get(c.sha)]
    if not involved:
        a.add(_w(q.lang, "followups_day_none", asof=asof))
        return
    a.add(Strong(_w(q.lang, "followups_day_head", asof=asof)))
    for commit in involved:
        a.add("• ", a.cite(commit), " ", display_title(commit))
        for fact in data.later.get(commit.sha, []):
            a.add("    ◦ ", *_fact_spans(q.lang, data, fact, later=True))
        for fact in data.earlier.get(commit.sha, []):
            a.add("    ◦ ", *_fact_spans(q.lang, data, fact, later=False))


def _overview(a: Answer, q: Question, data: QAData) -> None:
    stats = {lvl.value: 0 for lvl in Importance}
    for commit in data.commits:
        an = _analysis(data, commit)
        if an is not None:
            stats[an.importance.value] += 1
    day = data.day.isoformat() if data.day else ""
    a.add(_w(q.lang, "overview", repo=data.repo, day=day, total=len(data.commits), **stats))
    high = [
        c for c in data.commits if (an := _analysis(data, c)) is not None and an.importance == Importance.HIGH
    ]
    if high:
        a.add(Strong(_w(q.lang, "overview_top")))
        _commit_lines(a, q.lang, data, high)
        return
    a.add(_w(q.lang, "overview_none_high"))
    medium = [
        c
        for c in data.commits
        if (an := _analysis(data, c)) is not None and an.importance == Importance.MEDIUM
    ]
    if medium:  # a day without high commits still has something to say
        a.add(Strong(_w(q.lang, "overview_medium")))
        _commit_lines(a, q.lang, data, medium)


def titled(q: Question, data: QAData) -> list[Commit]:
    """The day's commits (a card's thread: its commit) whose title holds every word the question calls a
    commit by ("the bump version commit")."""
    if not q.title_words:
        return []
    pool = data.commits or ([data.focus] if data.focus else [])
    return [c for c in pool if _term_in([c.title.lower()], " ".join(q.title_words))]


def unresolved_answer(q: Question, data: QAData, matches: Sequence[Commit], listed: int = 0) -> Answer:
    """A commit called by its title's words or by its place in a list, when that is not one commit: the
    candidates (never a guess), or why none fits. `listed`: how long the thread's last list was."""
    a = Answer(q.lang, source="data", kind="which commit")
    example = example_questions(q.lang, data)[1]
    phrase = " ".join(q.title_words)
    if matches:
        a.add(Strong(_w(q.lang, "title_several", phrase=phrase, n=len(matches))))
        _commit_lines(a, q.lang, data, matches)
        a.listing = True  # "which one? ... the second one"
    elif q.ordinal is not None:
        a.add(_w(q.lang, "ordinal_short", n=listed) if listed else _w(q.lang, "ordinal_none"))
    else:
        a.add(_w(q.lang, "title_none", phrase=phrase))
        a.confident = False  # the words may not be a title at all: a model, when there is one, may know
    a.add(_w(q.lang, "which_commit", example=example))
    return a


def _which_commit(a: Answer, q: Question, data: QAData) -> None:
    a.add(_w(q.lang, "which_commit", example=example_questions(q.lang, data)[1]))


# --------------------------------------------------------------------------------------------
# Matching
# --------------------------------------------------------------------------------------------


def _term_in(texts: Iterable[str], term: str) -> bool:
    """Every word of the term (any of its '|' alternatives) starts a word in one of the texts:
    "sched" finds "pkg/core/sched/x.py" and "scheduler.py", never "rescheduled"."""
    texts = list(texts)
    for word in term.split():
        options = [o for o in word.split("|") if o]
        found = False
        for option in options:
            forms = {option}
            if len(option) > 3 and option.endswith("s"):
                forms.add(option[:-1])
            for form in forms:
                if re.search(r"[\u4e00-\u9fff]", form):
                    hit = any(form in t for t in texts)
                else:
                    hit = any(re.search(rf"(?<![a-z0-9]){re.escape(form)}", t) for t in texts)
                if hit:
                    found = True
                    break
            if found:
                break
        if not found:
            return False
    return True


def _path_like(term: str) -> bool:
    return "/" in term or bool(re.search(r"\.\w{1,6}$", term))


def touches(commit: Commit, analysis: Analysis | None, term: str) -> bool:
    """Whether a commit touches a path or area: a path term matches changed paths (as a prefix or a
    folder inside); an area term matches paths, the title and the analysis's scope."""
    paths = [f.path.lower() for f in commit.files] + [
        f.previous_path.lower() for f in commit.files if f.previous_path
    ]
    if _path_like(term):
        wanted = term.strip("/")
        return any(
            p == wanted or p.startswith(wanted + "/") or f"/{wanted}/" in f"/{p}/" or p.endswith("/" + wanted)
            for p in paths
        )
    texts = [*paths, commit.title.lower()]
    if analysis is not None:
        texts += [s.lower() for s in analysis.scope]
    return _term_in(texts, term)


def author_matches(name: str, commit: Commit) -> bool:
    """A name as people type it against the commit's author and login: "woosuk", "Woosuk Kwon", "kwon"."""
    wanted = name.lower().split()
    author = commit.author.lower().split()
    login = (commit.author_login or "").lower()
    if " ".join(wanted) in (" ".join(author), login):
        return True
    if all(any(a == w or (len(w) >= 3 and a.startswith(w)) for a in author) for w in wanted):
        return True
    return len(wanted) == 1 and len(wanted[0]) >= 3 and bool(login) and login.startswith(wanted[0])


# --------------------------------------------------------------------------------------------
# What the bot can answer
# --------------------------------------------------------------------------------------------


def example_questions(lang: str, data: QAData) -> tuple[str, str]:
    """Two questions this thread's data can answer, naming a real commit when there is one."""
    commit = data.focus or (data.commits[0] if data.commits else None)
    ref = commit_ref(commit) if commit is not None else "#123"
    if lang == "zh":
        first = "今天哪些提交风险最高？" if data.commits else f"{ref} 有什么风险？"
        return first, f"{ref} 被回滚了吗？"
    first = (
        "Which of today's commits carry the most risk?" if data.commits else f"What are the risks of {ref}?"
    )
    return first, f"Was {ref} reverted?"


_HELP = {
    "en": (
        "I can't answer that from the data, and no model is configured to try. In this thread I can "
        "answer: the day's riskiest, high or medium commits; whether a commit was reverted or fixed "
        "forward; what a commit changes (risks, tests, files, author, size); commits touching a path or "
        "area, or by an author; breaking changes, defaults and new options; counts. For example:"
    ),
    "zh": (
        "这个问题无法从数据中回答，也没有配置可以尝试回答的模型。在这个讨论串里我可以回答：当天风险最高、高或中重要度的"
        "提交；某个提交是否被回滚或修复跟进；某个提交改了什么（风险、测试、文件、作者、规模）；涉及某个路径或模块、"
        "或某位作者的提交；破坏性变更、默认值和新选项；数量统计。例如："
    ),
}


def help_answer(lang: str, data: QAData) -> Answer:
    a = Answer(lang, source="help", kind="unknown")
    a.add(_HELP["zh" if lang == "zh" else "en"])
    for example in example_questions(lang, data):
        a.add("• ", example)
    return a
