"""Every label, heading and fixed phrase of our output, per language.

The renderers take labels only from here, so they never drift (DESIGN.md §4) and the LLM
writes field contents only, never labels.
"""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

from analysis.langs import LANGS as LANGS  # read from here by the renderers and prompts
from analysis.models import ChangeType, Digest, Importance
from analysis.text import filled
from analysis.window import shallow_fetch_since

_LABELS: dict[str, dict[str, str]] = {
    "zh": {
        "report_title": "每日更新报告（{date}）",
        "toc": "📋 目录",
        "stats": "📊 统计摘要",
        "stats_line": "本日共 {total} 个提交 | 🔴 高 {high} | 🟡 中 {medium} | 🟢 低 {low}",
        "filtered_line": "另有 {n} 个提交按本订阅的过滤规则（路径、作者或标题）未列入。",
        "stale_line": "⚠️ 该克隆在此分支上最新的提交来自 {at}，早于本日：若仓库当日有提交，说明克隆未及时更新。请更新克隆（`git fetch`；镜像克隆用 `git remote update`）后重新生成本日报告（`digestbot post --date YYYY-MM-DD --repost`）。",
        "shallow_line": "⚠️ 本报告可能不完整：仓库是浅克隆，其分支历史从 {at} 开始，在本日之内，此前的当日提交可能缺失。请在该克隆中运行 `git fetch --shallow-since={since}`（或 `git fetch --unshallow`）后重新生成。",
        "zone_changed_line": "🕘 时区已由 {old} 改为 {new}：本期从 {at} 开始，即上一期摘要结束之处，两期之间的提交不漏也不重。",
        "zone_fixed_warning": "{zone} 全年固定为 {offset}，不实行夏令时：若指实行夏令时的{place}，请用 {region}。",
        "zone_rule_warning": "{zone} 是 POSIX 式的时区规则而非地区（tz 数据库只为旧系统保留它）：{place}请用 {region}。",
        "zone_host_warning": "{zone} 是运行 digestbot 的这台机器设定的时区（/etc/localtime），换一台机器或容器可能就不同："
        "请写明时区名，如 Asia/Shanghai。",
        "no_commits": "该时间窗口内没有提交。",
        "window": "时间窗口",
        "analyzer": "分析方式",
        "col_time": "提交时间",
        "col_author": "作者",
        "col_title": "提交信息",
        "tier_high": "🔴 高重要度变更",
        "tier_medium": "🟡 中重要度变更",
        "tier_low": "🟢 低重要度变更",
        "view_commit": "查看提交",
        "change_type": "🎯 变更类型",
        "importance": "⚡ 重要程度",
        "summary": "📋 变更摘要",
        "summary_low": "📋 摘要",
        "scope": "🎯 影响范围",
        "insights": "🔍 技术洞察",
        "dimension": "维度",
        "assessment": "分析",
        "risks": "⚠️ 潜在风险",
        "recommendations": "💡 关注建议",
        "notes": "ℹ️ 说明",
        "none_stated": "未发现",
        "unknown": "未知",
        "files": "文件",
        "generated": "生成时间",
        "medium_list": "🟡 中重要度变更",
        "high_list": "🔴 其余高重要度变更（{n} 个，未单独成卡；完整分析见报告）",
        "full_report": "完整报告",
        "more": "更多",
        # Report renderer (analysis/render/markdown.py)
        "field_sep": "：",
        "analyzer_none": "无",
        "heuristic_note": "启发式分析（未使用大模型）：内容由规则根据文件、行数、提交说明和分支历史生成。",
        # Slack (analysis/render/slack_blocks.py, adapters/slack/)
        "slack_ask": "💬 在此讨论串中回复（或提及我）即可询问这些提交",
        "slack_more_high": "……另有 {n} 个高重要度提交，见讨论串",
        "slack_no_high": "今日没有高重要度提交",
        "slack_continued": "续 {part}/{parts}",
        "elided": "……（另有 {n} 个字符未引用）",
        "slack_working_card": "⏳ 正在分析 {ref} ……",
        "slack_working_day": "⏳ 正在生成 {day} 的摘要 ……",
        "slack_already_posted": "该摘要已在本频道发布过，没有需要补发的内容。",
        "card_posted_recently": "{sha} 的卡片 {minutes} 分钟前已发在本频道，没有重复发送：{where}",
        "card_posted_just_now": "{sha} 的卡片刚刚已发在本频道，没有重复发送：{where}",
        "card_above": "见上方",
        "cards_limited": "过去一分钟里模型已在这里为你新分析了 {n} 个提交，已达上限；请 {s} 秒后再问 {sha}（已分析过的提交不受此限）。",
        "days_limited": "过去一小时里你已让我新生成了 {n} 天的摘要，这是每人的上限；请 {m} 分钟后再要 {day}（已生成过的日期不受此限）。",
        "thread_lost_commits": "这个讨论串是 {repo} {day} 的摘要，但其中 {n} 个提交已不在我的数据库中，也无法重新获取（{error}）。请在频道中发送 /digest {day} {repo} 重新生成它，然后再在这里提问。",
        "thread_lost_card": "这个讨论串是 {repo} 提交 {sha} 的卡片，但该提交已不在我的数据库中，也无法重新获取（{error}）。请在频道中发送 /digest {repo}@{sha} 获取新卡片。",
        "thread_forgotten_digest": "这个讨论串是 {repo} {day} 的摘要，但我的数据库里已没有它（数据库被重置过，或我运行在另一台主机上）。"
        "想了解某个提交，请在频道中发送 /digest <sha>；发送 /digest {day} {repo} 可重新生成这一天（已发布的内容不会重复发布）。",
        "thread_lost_digest": "这个讨论串是 {repo} {day} 的摘要，但该摘要的记录已不在我的数据库中。请在频道中发送 /digest {day} {repo} 重新生成它（已发布的内容不会重复发布），然后再在这里提问。",
        "slack_cannot_post": "无法在本频道发帖（{error}）：请先邀请我加入，例如 /invite @digestbot",
        "slack_failed": "出错了：{error}",
        "failed_inside": "这次出错的是我这边（运维人员可在服务日志中看到原因）；请稍后再试。",
        "store_failed": "我现在无法写入自己的数据库，所以这次没有完成；运维人员可在服务日志中看到原因。",
        # Discord (analysis/render/discord_embeds.py, adapters/discord/)
        "discord_continued": "{name}（续）",
        "discord_more_in_thread": "……另有 {count} 项，见讨论串",
        "discord_posted": "已在本频道发布 {repo} {day} 的摘要：{link}",
        "discord_already_posted": "{repo} {day} 的摘要已在本频道发布过：{link}",
        "discord_not_here": "请在服务器的文字频道中使用 /digest date:（讨论串和私信中不行）。",
        "discord_failed": "出错了：{error}",
        "discord_partial": "回答的其余部分未能发送：{error}",
    },
    "en": {
        "report_title": "Daily Update Report ({date})",
        "toc": "📋 Contents",
        "stats": "📊 Summary",
        "stats_line": "{total} commits today | 🔴 High {high} | 🟡 Medium {medium} | 🟢 Low {low}",
        "filtered_line": "{n} more commit(s) of the day left out by this subscription's filters (paths, authors or titles).",
        "stale_line": "⚠️ The clone's newest commit on this branch is from {at}, before this day: if the repository had commits that day, the clone is not kept up to date. Update it (`git fetch`; `git remote update` in a mirror) and build the day again (`digestbot post --date YYYY-MM-DD --repost`).",
        "shallow_line": "⚠️ This report may be incomplete: the repository is a shallow clone whose history of the branch starts at {at}, inside the day, so commits of the day before then may be missing. Run `git fetch --shallow-since={since}` (or `git fetch --unshallow`) in the clone and build it again.",
        "zone_changed_line": "🕘 Time zone changed from {old} to {new}: this digest starts at {at}, where the previous day's digest ended, so no commit between the two is missed or posted twice.",
        "zone_fixed_warning": "{zone} is a fixed {offset} all year: for {place} with daylight saving use {region}",
        "zone_rule_warning": "{zone} is a POSIX-style rule, not a place (the tz database keeps it for old systems): for {place} use {region}",
        "zone_host_warning": "{zone} is the zone this machine is set to (its /etc/localtime), which another machine or container may not share: name the zone, e.g. Asia/Shanghai",
        "no_commits": "No commits in this window.",
        "window": "Window",
        "analyzer": "Analysis",
        "col_time": "Committed",
        "col_author": "Author",
        "col_title": "Message",
        "tier_high": "🔴 High importance",
        "tier_medium": "🟡 Medium importance",
        "tier_low": "🟢 Low importance",
        "view_commit": "View commit",
        "change_type": "🎯 Change type",
        "importance": "⚡ Importance",
        "summary": "📋 Summary",
        "summary_low": "📋 Summary",
        "scope": "🎯 Impact scope",
        "insights": "🔍 Technical insights",
        "dimension": "Dimension",
        "assessment": "Assessment",
        "risks": "⚠️ Potential risks",
        "recommendations": "💡 Recommendations",
        "notes": "ℹ️ Notes",
        "none_stated": "None identified",
        "unknown": "Unknown",
        "files": "files",
        "generated": "Generated",
        "medium_list": "🟡 Medium importance",
        "high_list": "🔴 More high-importance commits ({n}, no card of their own; the report has them in full)",
        "full_report": "Full report",
        "more": "more",
        # Report renderer (analysis/render/markdown.py)
        "field_sep": ": ",
        "analyzer_none": "none",
        "heuristic_note": "Heuristic analysis (no LLM): derived by rules from the files, line counts, commit"
        " message and branch history.",
        # Slack (analysis/render/slack_blocks.py, adapters/slack/)
        "slack_ask": "💬 Reply in this thread (or mention me) to ask about these commits",
        "slack_more_high": "…and {n} more high-importance commits in the thread",
        "slack_no_high": "No high-importance commits today",
        "slack_continued": "continued {part}/{parts}",
        "elided": "… ({n} more characters not quoted)",
        "slack_working_card": "⏳ Analysing {ref}…",
        "slack_working_day": "⏳ Building the digest of {day}…",
        "slack_already_posted": "That digest is already in this channel; nothing was missing.",
        "card_posted_recently": "The card for {sha} was posted in this channel {minutes} min ago, so it was not posted again: {where}",
        "card_posted_just_now": "The card for {sha} was just posted in this channel, so it was not posted again: {where}",
        "card_above": "see above",
        "cards_limited": "That is past the limit on new commit analyses here ({n} a minute); ask for {sha} again in {s} s (commits analysed before come at once).",
        "days_limited": "You have had {n} new days digested in the last hour, the limit per person; ask for {day} again in {m} min (days digested before come at once).",
        "thread_lost_commits": "This thread is the digest of {repo} for {day}, but {n} of its commits are no longer in my database and could not be fetched again ({error}). Ask /digest {day} {repo} in the channel to build it again, then ask here.",
        "thread_lost_card": "This thread is the card of {sha} in {repo}, but that commit is no longer in my database and could not be fetched again ({error}). Ask /digest {repo}@{sha} in the channel for a new card.",
        "thread_forgotten_digest": "This thread is the digest of {repo} for {day}, which my database no longer"
        " holds (it was reset, or I run on another host). Ask about one commit with /digest <sha> in the channel;"
        " /digest {day} {repo} builds the day again (nothing already posted is posted twice).",
        "thread_lost_digest": "This thread is the digest of {repo} for {day}, but that digest's record is no longer in my database. Ask /digest {day} {repo} in the channel to build it again (nothing already posted is posted twice), then ask here.",
        "slack_cannot_post": "I can't post in this channel ({error}): invite me first, e.g. /invite @digestbot",
        "slack_failed": "Something went wrong: {error}",
        "failed_inside": "Something failed on my side (my operator can see what in the service log); please try again in a moment.",
        "store_failed": "I can't write my database right now, so this was not done; my operator can see why "
        "in the service log.",
        # Discord (analysis/render/discord_embeds.py, adapters/discord/)
        "discord_continued": "{name} (cont.)",
        "discord_more_in_thread": "…and {count} more in the thread",
        "discord_posted": "Posted the {day} digest of {repo}: {link}",
        "discord_already_posted": "The {day} digest of {repo} is already in this channel: {link}",
        "discord_not_here": "Use /digest date: in a server text channel (not in a thread or a DM).",
        "discord_failed": "Something went wrong: {error}",
        "discord_partial": "The rest of this answer could not be sent: {error}",
    },
}

_IMPORTANCE = {
    "zh": {Importance.HIGH: "🔴 高", Importance.MEDIUM: "🟡 中", Importance.LOW: "🟢 低"},
    "en": {Importance.HIGH: "🔴 High", Importance.MEDIUM: "🟡 Medium", Importance.LOW: "🟢 Low"},
}

# The tier as a plain word, inside a sentence ("size prior: medium", "rated high importance").
_IMPORTANCE_WORDS = {
    "zh": {Importance.HIGH: "高", Importance.MEDIUM: "中", Importance.LOW: "低"},
    "en": {Importance.HIGH: "high", Importance.MEDIUM: "medium", Importance.LOW: "low"},
}

_CHANGE_TYPES = {
    "zh": {
        ChangeType.FEATURE: "功能",
        ChangeType.BUGFIX: "缺陷修复",
        ChangeType.PERFORMANCE: "性能优化",
        ChangeType.REFACTOR: "重构",
        ChangeType.DOCS: "文档",
        ChangeType.TESTS: "测试",
        ChangeType.CI_BUILD: "CI/构建",
        ChangeType.CONFIG: "配置",
        ChangeType.DEPENDENCY: "依赖",
        ChangeType.REVERT: "回滚",
        ChangeType.SECURITY: "安全",
        ChangeType.OTHER: "其他",
    },
    "en": {
        ChangeType.FEATURE: "Feature",
        ChangeType.BUGFIX: "Bug fix",
        ChangeType.PERFORMANCE: "Performance",
        ChangeType.REFACTOR: "Refactor",
        ChangeType.DOCS: "Docs",
        ChangeType.TESTS: "Tests",
        ChangeType.CI_BUILD: "CI/build",
        ChangeType.CONFIG: "Config",
        ChangeType.DEPENDENCY: "Dependency",
        ChangeType.REVERT: "Revert",
        ChangeType.SECURITY: "Security",
        ChangeType.OTHER: "Other",
    },
}

_DIMENSIONS = {
    "zh": {
        "architecture": "架构影响",
        "performance": "性能影响",
        "security": "安全考虑",
        "maintainability": "可维护性",
        "compatibility": "兼容性",
        "resources": "资源消耗",
    },
    "en": {
        "architecture": "Architecture",
        "performance": "Performance",
        "security": "Security",
        "maintainability": "Maintainability",
        "compatibility": "Compatibility",
        "resources": "Resources",
    },
}


def check_lang(lang: str) -> str:
    if lang not in LANGS:
        from analysis.errors import InputError

        raise InputError(f"unknown language {lang!r}: use one of {', '.join(LANGS)}")
    return lang


def label(lang: str, key: str, **fmt: object) -> str:
    return filled(lang, _LABELS[lang][key], fmt)


def repeat_card_notice(lang: str, short_sha: str, minutes_ago: int, where: str | None) -> str:
    """What someone who asks for a card the channel got minutes ago hears: where it is (its link, else
    "see above"), instead of a second copy (bot/chat/card_turns.py)."""
    where = where or label(lang, "card_above")
    if minutes_ago < 1:
        return label(lang, "card_posted_just_now", sha=short_sha, where=where)
    return label(lang, "card_posted_recently", sha=short_sha, minutes=minutes_ago, where=where)


def quote_elided(lang: str, text: str, limit: int) -> str:
    """Quoted commit text of at most about `limit` characters: longer text is cut at a word boundary
    and says how much was left out (a commit message can be 190 KB; a chat card must stay small)."""
    if len(text) <= limit:
        return text
    kept = text[:limit]
    space = kept.rfind(" ")
    if space > limit * 0.8:
        kept = kept[:space]
    kept = kept.rstrip()
    return kept + label(lang, "elided", n=f"{len(text) - len(kept):,}")


def importance_label(lang: str, level: Importance) -> str:
    return _IMPORTANCE[lang][level]


def importance_word(lang: str, level: Importance) -> str:
    return _IMPORTANCE_WORDS[lang][level]


def change_type_label(lang: str, kind: ChangeType) -> str:
    return _CHANGE_TYPES[lang][kind]


def dimension_label(lang: str, key: str) -> str:
    return _DIMENSIONS[lang].get(key, key)


def join_notes(lang: str, notes: list[str]) -> str:
    """Notes as one run of sentences: each starts with a capital (English: "covered 12 of 14 files" is
    written to follow other words too) and ends with its full stop, none gets a second one (a note
    ending in "(…)" gets one after it, unless the parenthesis closes a sentence of its own)."""
    sep = "" if lang == "zh" else " "
    return sep.join(note_sentence(lang, n) for n in (n.strip() for n in notes) if n)


_STOPS = ("。", "！", "？", ".", "!", "?")


def note_sentence(lang: str, note: str) -> str:
    """One note as a sentence of its own (join_notes' rule; Discord lists the notes as bullets)."""
    stop = "。" if lang == "zh" else "."
    note = note.strip()
    if re.match(r"[a-z]+\b(?![./:\w-])", note):  # a lower-case first word, not "pkg.mod", "pkg/x.py" or "iOS"
        note = note[0].upper() + note[1:]
    ended = note.endswith(_STOPS) or (note.endswith((")", "）")) and note[:-1].endswith(_STOPS))
    return note if ended else note + stop


def stats_lines(lang: str, stats: dict[str, int], digest: Digest) -> list[str]:
    """The counts line, and what the digest states beside them: the zone line when the window starts where
    the previous day's, posted in another zone, ended; the filtered-out line when a subscription's filters
    left commits out; the shallow line when the source's history starts inside the day's window; the stale
    line when the local clone's newest commit is older than the day: a commit is never dropped without
    saying so."""
    lines = [label(lang, "stats_line", **stats)]
    if digest.previous_zone is not None:
        lines.append(zone_changed_line(lang, digest.previous_zone, digest.timezone, digest.window_start))
    if digest.filtered_out:
        lines.append(label(lang, "filtered_line", n=digest.filtered_out))
    if digest.history_start is not None:
        lines.append(shallow_line(lang, digest.history_start, digest.window_start))
    if digest.clone_newest is not None:
        lines.append(label(lang, "stale_line", at=moment(digest.clone_newest)))
    return lines


def shallow_line(lang: str, history_start: datetime, window_start: datetime | None = None) -> str:
    """The line saying a shallow clone's history starts at history_start, inside a day (from window_start,
    the day's start: the fetch that covers it; else from history_start's own day)."""
    since = shallow_fetch_since(window_start or history_start)
    return label(lang, "shallow_line", at=moment(history_start), since=f"{since:%Y-%m-%d}")


def zone_changed_line(lang: str, previous_zone: str, zone: str, window_start: datetime) -> str:
    """The line of a day whose window starts where the previous day's, in another zone, ended."""
    return label(
        lang, "zone_changed_line", old=zone_name(previous_zone), new=zone_name(zone), at=moment(window_start)
    )


# Zones of the tz database that are accepted but seldom meant: the US abbreviations that keep one offset all
# year (EST is never daylight-saving, surprising a New York team half the year), and the POSIX-style rules that
# name no place. Each with the region people likely meant (place names per language).
_FIXED_ZONES = {
    "EST": ("America/New_York", {"en": "New York", "zh": "纽约"}),
    "MST": ("America/Denver", {"en": "Denver", "zh": "丹佛"}),
}
_RULE_ZONES = {
    "EST5EDT": ("America/New_York", {"en": "New York", "zh": "纽约"}),
    "CST6CDT": ("America/Chicago", {"en": "Chicago", "zh": "芝加哥"}),
    "MST7MDT": ("America/Denver", {"en": "Denver", "zh": "丹佛"}),
    "PST8PDT": ("America/Los_Angeles", {"en": "Los Angeles", "zh": "洛杉矶"}),
    "CET": ("Europe/Berlin", {"en": "Berlin", "zh": "柏林"}),
    "MET": ("Europe/Berlin", {"en": "Berlin", "zh": "柏林"}),
    "EET": ("Europe/Athens", {"en": "Athens", "zh": "雅典"}),
    "WET": ("Europe/Lisbon", {"en": "Lisbon", "zh": "里斯本"}),
}


def zone_warning(lang: str, name: str) -> str | None:
    """What to tell whoever chose zone `name` (canonical, as bot/config/settings.py `zone` gives it) when it
    is one accepted but seldom meant, or None: said at start, in `status`, on `/digest subscribe` and by
    every verb that takes `--tz`, never refused (a fixed offset may be wanted; `localtime` is a zone, if
    only this host's)."""
    if name in _FIXED_ZONES:
        region, places = _FIXED_ZONES[name]
        offset = offset_name(datetime(2000, 1, 1, tzinfo=ZoneInfo(name)))
        return label(lang, "zone_fixed_warning", zone=name, offset=offset, place=places[lang], region=region)
    if name in _RULE_ZONES:
        region, places = _RULE_ZONES[name]
        return label(lang, "zone_rule_warning", zone=name, place=places[lang], region=region)
    if name == "localtime":  # the days would move with the host's setting, or a move to another host
        return label(lang, "zone_host_warning", zone=name)
    return None


def zone_name(name: str) -> str:
    """A zone as a reader knows it: a fixed offset's Etc name ("Etc/GMT-8", whose sign POSIX counts the
    other way round) as "UTC+08:00"; any other name as it is."""
    m = re.fullmatch(r"Etc/GMT([+-])(\d{1,2})", name)
    if m is None:
        return name
    return f"UTC{'-' if m.group(1) == '+' else '+'}{int(m.group(2)):02d}:00"


def moment(at: datetime) -> str:
    """`YYYY-MM-DD HH:MM (UTC+08:00)`, in at's own zone."""
    return f"{at:%Y-%m-%d %H:%M} ({offset_name(at)})"


def offset_name(at: datetime) -> str:
    """at's offset from UTC as a reader knows it: "UTC+08:00", "UTC-05:00"."""
    offset = at.strftime("%z") or "+0000"
    return f"UTC{offset[:3]}:{offset[3:5]}"
