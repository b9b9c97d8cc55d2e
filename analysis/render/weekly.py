"""The weekly roll-up as Markdown and JSON, in zh or en: commits per day by tier, the areas with most
high-tier and followed-up changes, the week's follow-ups with how we had ranked each original, and
what the LLM cost. The chart (adapters/chart.py) is linked by a relative path given by the caller.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

from analysis.history.followups import FollowUpKind
from analysis.labels import check_lang, importance_label, importance_word, moment, shallow_line
from analysis.render.markdown import cell, inline, safe_url
from analysis.text import code_text, file_name_part
from analysis.weekly import TIERS, Week

_WORDS = {
    "zh": {
        "title": "每周回顾 · {repo} · {week}（{start} – {end}）",
        "meta": "分支 `{branch}` · 时区 {tz} · 分析方式 {analyzers} · 生成时间 {generated}",
        "chart_alt": "{week} 每日提交（按重要度）与后续修正",
        "days": "📊 每日提交",
        "day": "日期",
        "total": "合计",
        "followups_col": "后续修正",
        "filtered": "另有 {n} 个提交按订阅的过滤规则未计入。",
        "stale": "⚠️ 该克隆在此分支上最新的提交来自 {at}，早于 {day}：若仓库此后有提交，说明克隆未及时更新，"
        "{day} 起各日的提交并未计入。请更新克隆（`git fetch`；镜像克隆用 `git remote update`）后重新生成本周回顾"
        "（`digestbot weekly --week {week} --refresh`）。",
        "areas": "🗂️ 重点目录",
        "area": "目录",
        "commits": "提交",
        "high": "高",
        "followed_up": "被回滚或修复",
        "no_areas": "本周没有高重要度或被后续修正的变更。",
        "followed_until": "「被回滚或修复」统计截至 {until} 落地的后续提交。",
        "followups": "🔁 本周后续修正",
        "no_followups": "本周没有提交回滚或修复跟进更早的提交。",
        "score_revert": "本周 {n} 个回滚；其中 {flagged} 个原提交我们曾评为中或高（{high} 个为高）。",
        "score_fix": "本周 {n} 个修复跟进；其中 {flagged} 个原提交我们曾评为中或高（{high} 个为高）。",
        "verb_revert": "回滚了",
        "verb_fix": "修复跟进了",
        "then": "当时评为{rank}",
        "unranked": "我们未曾分析",
        "llm": "🤖 LLM 用量",
        "llm_line": "本周提交的分析共 {calls} 次 LLM 调用，输入 {tin} / 输出 {tout} tokens",
        "cost": "，费用 ${cost:.4f}",
        "unpriced": "（未配置价格，不计费用）",
        "no_llm": "本周提交未使用 LLM（启发式分析）。",
        "weekdays": ("周一", "周二", "周三", "周四", "周五", "周六", "周日"),
    },
    "en": {
        "title": "Weekly roll-up · {repo} · {week} ({start} – {end})",
        "meta": "Branch `{branch}` · zone {tz} · analysis {analyzers} · generated {generated}",
        "chart_alt": "{week}: commits per day by importance, and follow-ups",
        "days": "📊 Commits per day",
        "day": "Day",
        "total": "Total",
        "followups_col": "Follow-ups",
        "filtered": "{n} more commit(s) left out by the subscription's filters.",
        "stale": "⚠️ The clone's newest commit on this branch is from {at}, before {day}: if the repository had"
        " commits since, the clone is not kept up to date and the days from {day} on are missing them. Update"
        " it (`git fetch`; `git remote update` in a mirror) and build the week again (`digestbot weekly --week"
        " {week} --refresh`).",
        "areas": "🗂️ Areas",
        "area": "Area",
        "commits": "Commits",
        "high": "High",
        "followed_up": "Reverted or fixed",
        "no_areas": "No high-importance or followed-up change this week.",
        "followed_until": "“Reverted or fixed” counts the follow-ups landed up to {until}.",
        "followups": "🔁 Follow-ups this week",
        "no_followups": "No commit this week reverted or fixed forward an earlier one.",
        "score_revert": "{n} reverted this week; we had ranked {flagged} of them medium or high ({high} high).",
        "score_fix": "{n} fixed forward this week; we had ranked {flagged} of them medium or high ({high} high).",
        "verb_revert": "reverts",
        "verb_fix": "fixes forward",
        "then": "we ranked it {rank}",
        "unranked": "not analysed by us",
        "llm": "🤖 LLM usage",
        "llm_line": "Analysing this week's commits took {calls} LLM call(s), {tin} tokens in / {tout} out",
        "cost": ", ${cost:.4f}",
        "unpriced": " (no prices configured: cost not computed)",
        "no_llm": "No LLM was used for this week's commits (heuristic analysis).",
        "weekdays": ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"),
    },
}


def word(lang: str, key: str, **fmt: object) -> Any:
    text = _WORDS[check_lang(lang)][key]
    return text.format(**fmt) if fmt else text


def weekly_filename(week: Week, ext: str) -> str:
    return f"weekly-{file_name_part(week.repo)}-{week.label}.{week.lang}.{ext}"


def stale_lines(week: Week, lang: str) -> list[str]:
    """The line saying the local clone's newest commit is older than the first of the week's days it left
    empty (each day's digest says it of itself; the roll-up says it once)."""
    if week.clone_newest is None or week.clone_newest_day is None:
        return []
    at = moment(week.clone_newest.astimezone(ZoneInfo(week.timezone)))
    return [word(lang, "stale", at=at, day=week.clone_newest_day.isoformat(), week=week.label)]


def score_lines(week: Week) -> list[str]:
    """ "4 reverted this week; we had ranked 3 of them medium or high (1 high)." (and the same for fixes)."""
    lines = []
    for kind, key in ((FollowUpKind.REVERT, "score_revert"), (FollowUpKind.FIX, "score_fix")):
        n, flagged, high = week.scored(kind)
        if n:
            lines.append(word(week.lang, key, n=n, flagged=flagged, high=high))
    return lines


def render_weekly_markdown(week: Week, chart: str | None = None) -> str:
    """The roll-up; `chart` is the chart's path relative to where this Markdown is written."""
    lang = check_lang(week.lang)
    tz = ZoneInfo(week.timezone)
    days = [d for d, _ in week.days]
    blocks = [
        "# "
        + word(
            lang,
            "title",
            repo=inline(week.repo),
            week=week.label,
            start=days[0].isoformat(),
            end=days[-1].isoformat(),
        ),
        "> "
        + word(
            lang,
            "meta",
            branch=code_text(week.branch),
            tz=inline(week.timezone),
            analyzers=inline("+".join(week.analyzers) or "none"),
            generated=week.generated_at.astimezone(tz).strftime("%Y-%m-%d %H:%M"),
        ),
    ]
    if chart:
        blocks.append(f"![{word(lang, 'chart_alt', week=week.label)}]({quote(chart, safe='/._-')})")
    blocks += [f"## {word(lang, 'days')}", _days_table(week)]
    if week.filtered_out:
        blocks.append(word(lang, "filtered", n=week.filtered_out))
    if week.history_start is not None:
        blocks.append(shallow_line(lang, week.history_start.astimezone(tz)))
    blocks += stale_lines(week, lang)
    blocks += [f"## {word(lang, 'followups')}", *_followup_blocks(week)]
    blocks += [f"## {word(lang, 'areas')}", _areas_table(week)]
    blocks += [f"## {word(lang, 'llm')}", usage_line(week)]
    return "\n\n".join(blocks) + "\n"


def _days_table(week: Week) -> str:
    lang = week.lang
    head = [word(lang, "day"), *(importance_label(lang, t) for t in TIERS), word(lang, "total")]
    head.append(word(lang, "followups_col"))
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for day, counts in week.days:
        landed = len(week.landed_on(day))
        shown = f"{day.isoformat()} {word(lang, 'weekdays')[day.weekday()]}"
        values = [shown, *(str(counts[t.value]) for t in TIERS), str(counts["total"])]
        rows.append("| " + " | ".join([*values, str(landed)]) + " |")
    totals = week.totals
    values = [f"**{word(lang, 'total')}**", *(str(totals[t.value]) for t in TIERS), str(totals["total"])]
    rows.append("| " + " | ".join([*values, str(len(week.followups))]) + " |")
    return "\n".join(rows)


def _areas_table(week: Week) -> str:
    lang = week.lang
    if not week.areas:
        return word(lang, "no_areas")
    head = [word(lang, k) for k in ("area", "commits", "high", "followed_up")]
    rows = ["| " + " | ".join(head) + " |", "|---|---|---|---|"]
    for area in week.areas:
        rows.append(f"| {cell(area.path)} | {area.commits} | {area.high} | {area.followed_up} |")
    if week.followed_up_until is not None:
        until = week.followed_up_until.strftime("%Y-%m-%d %H:%M")
        rows += ["", word(lang, "followed_until", until=until)]
    return "\n".join(rows)


def _followup_blocks(week: Week) -> list[str]:
    lang = week.lang
    if not week.followups:
        return [word(lang, "no_followups")]
    tz = ZoneInfo(week.timezone)
    lines = []
    for f in week.followups:
        revert = f.link.kind == FollowUpKind.REVERT
        verb = word(lang, "verb_revert" if revert else "verb_fix")
        rank = (
            word(lang, "then", rank=importance_word(lang, f.original_rank))
            if f.original_rank
            else word(lang, "unranked")
        )
        follow_up = _linked(f"{f.follow_up_ref} {f.follow_up_title}", f.follow_up_url)
        original = _linked(f.original_title, f.original_url)
        landed = f.link.follow_up_at.astimezone(tz).date().isoformat()
        was = f.link.original_at.astimezone(tz).date().isoformat()
        ref = "" if f.original_ref in f.original_title else f"{inline(f.original_ref)}, "
        lines.append(
            f"- {'⚠️' if revert else '🔧'} {landed} {follow_up} — {verb} {original} ({ref}{was}; {rank})"
        )
    return ["\n".join("> " + line for line in score_lines(week)), "\n".join(lines)]


def _linked(text: str, url: str | None) -> str:
    target = safe_url(url)
    return f"[{inline(text)}]({target})" if target else inline(text)


def usage_line(week: Week) -> str:
    lang, usage = week.lang, week.usage
    if not usage.calls:
        return word(lang, "no_llm")
    line = word(lang, "llm_line", calls=usage.calls, tin=usage.tokens_in, tout=usage.tokens_out)
    line += word(lang, "cost", cost=usage.cost_usd) if usage.cost_usd is not None else word(lang, "unpriced")
    return line + ("。" if lang == "zh" else ".")


def render_weekly_json(week: Week, chart: str | None = None) -> dict[str, Any]:
    tz = ZoneInfo(week.timezone)
    return {
        "repo": week.repo,
        "branch": week.branch,
        "week": week.label,
        "timezone": week.timezone,
        "generated_at": week.generated_at.astimezone(tz).isoformat(timespec="seconds"),
        "analyzer": "+".join(week.analyzers) or "none",
        "days": [{"date": d.isoformat(), **counts} for d, counts in week.days],
        "totals": week.totals,
        "filtered_out": week.filtered_out,
        "history_start": week.history_start.astimezone(tz).isoformat(timespec="seconds")
        if week.history_start
        else None,
        "clone_newest": week.clone_newest.astimezone(tz).isoformat(timespec="seconds")
        if week.clone_newest
        else None,
        "followups": [
            {
                "kind": f.link.kind.value,
                "follow_up": f.link.follow_up,
                "follow_up_title": f.follow_up_title,
                "landed_at": f.link.follow_up_at.astimezone(tz).isoformat(timespec="seconds"),
                "original": f.link.original,
                "original_title": f.original_title,
                "original_committed_at": f.link.original_at.astimezone(tz).isoformat(timespec="seconds"),
                "original_importance": f.original_rank.value if f.original_rank else None,
                "evidence": f.link.evidence,
            }
            for f in week.followups
        ],
        "scores": {
            kind.value: dict(
                zip(("count", "ranked_medium_or_high", "ranked_high"), week.scored(kind), strict=True)
            )
            for kind in FollowUpKind
        },
        "areas": [
            {"path": a.path, "commits": a.commits, "high": a.high, "followed_up": a.followed_up}
            for a in week.areas
        ],
        "followed_up_until": (
            week.followed_up_until.astimezone(tz).isoformat(timespec="seconds")
            if week.followed_up_until
            else None
        ),
        "llm": {
            "calls": week.usage.calls,
            "tokens_in": week.usage.tokens_in,
            "tokens_out": week.usage.tokens_out,
            "cost_usd": week.usage.cost_usd,
        },
        "chart": chart,
    }


SUMMARY_FOLLOWUPS = 5


def weekly_summary(week: Week) -> list[str]:
    """The roll-up in a few plain lines for a chat message (the chart follows in its thread): title,
    totals by tier, the ranking score, the latest follow-ups, the top areas, LLM usage."""
    lang = week.lang
    days = [d for d, _ in week.days]
    totals = week.totals
    title = word(
        lang, "title", repo=week.repo, week=week.label, start=days[0].isoformat(), end=days[-1].isoformat()
    )
    counts = " | ".join(f"{importance_label(lang, t)} {totals[t.value]}" for t in TIERS)
    lines = [title, f"{word(lang, 'total')} {totals['total']} | {counts}"]
    tz = ZoneInfo(week.timezone)
    if week.history_start is not None:
        lines.append(shallow_line(lang, week.history_start.astimezone(tz)))
    lines += stale_lines(week, lang)
    lines += score_lines(week) or [word(lang, "no_followups")]
    for f in week.followups[-SUMMARY_FOLLOWUPS:]:
        revert = f.link.kind == FollowUpKind.REVERT
        rank = (
            word(lang, "then", rank=importance_word(lang, f.original_rank))
            if f.original_rank
            else word(lang, "unranked")
        )
        verb = word(lang, "verb_revert" if revert else "verb_fix")
        landed = f.link.follow_up_at.astimezone(tz).date().isoformat()
        lines.append(
            f"{'⚠️' if revert else '🔧'} {landed} {f.follow_up_ref} {verb} {f.original_title} ({rank})"
        )
    if week.areas:
        top = ", ".join(f"{a.path} ({a.high}/{a.followed_up})" for a in week.areas[:3])
        lines.append(f"{word(lang, 'areas')}: {top}")
    lines.append(usage_line(week))
    return lines
