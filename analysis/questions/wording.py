"""The words of data answers, in English and Chinese: one table, filled by `phrase`."""

from __future__ import annotations

from analysis.models import BREAKING_KINDS, UNALIASED_KINDS, SurfaceChange, SurfaceKind, describe
from analysis.text import filled

_W = {
    "en": {
        "riskiest": "Commits carrying the most risk ({shown} of {total} today, by risk score: size, spread, the paths' follow-up record):",
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
        "sha_none": "No commit I know of in {repo} (this thread's day and the stored history) has a SHA "
        "starting with {sha}.",
        "sha_several": "More than one commit of {repo} has a SHA starting with {sha}:",
        "sha_more": "…and more: give more of the SHA.",
        "overview": "{repo} on {day}: {total} commits — {high} high, {medium} medium, {low} low.",
        "overview_top": "High:",
        "overview_none_high": "No high commit today.",
        "overview_medium": "Medium:",
        "lines_total": "{total} lines changed today (+{add} −{dele}) in {n} commits.",
        "lines_match": "{total} lines changed today (+{add} −{dele}) in the {n} commits matching ({what}).",
        "untested_head": "{n} of {total} commits today change no test file:",
        "untested_none": "Each of the {n} commits whose files were read changes a test file.",
        "untested_unknown": "Not known for {n} commit(s): not all of their files were read.",
        "biggest_head": "The biggest commits by changed lines ({shown} of {total}):",
    },
    "zh": {
        "riskiest": "风险最高的提交（今日 {total} 个中的 {shown} 个，按风险分排序：规模、范围、路径的跟进记录）：",
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
        "sha_none": "在 {repo} 中我所知道的提交（这个讨论串当天的提交和已存储的历史）里，没有 SHA 以 {sha} 开头的提交。",
        "sha_several": "{repo} 中有不止一个提交的 SHA 以 {sha} 开头：",
        "sha_more": "……还有更多：请给出更长的 SHA。",
        "overview": "{repo} {day}：共 {total} 个提交 — 高 {high} 个，中 {medium} 个，低 {low} 个。",
        "overview_top": "高重要度：",
        "overview_none_high": "今日没有高重要度提交。",
        "overview_medium": "中重要度：",
        "lines_total": "今日 {n} 个提交共改动 {total} 行（+{add} −{dele}）。",
        "lines_match": "今日符合（{what}）的 {n} 个提交共改动 {total} 行（+{add} −{dele}）。",
        "untested_head": "今日 {total} 个提交中有 {n} 个没有修改测试文件：",
        "untested_none": "已读取文件的 {n} 个提交都修改了测试文件。",
        "untested_unknown": "另有 {n} 个提交未知：它们的文件没有全部读取。",
        "biggest_head": "按改动行数排序最大的提交（共 {total} 个，列出 {shown} 个）：",
    },
}


# A surface fact's kind in Chinese (analysis/models.describe says it in English).
SURFACE_KINDS_ZH = {
    SurfaceKind.ADDED: "新增", SurfaceKind.REMOVED: "删除", SurfaceKind.RENAMED: "重命名",
    SurfaceKind.MODULE_REMOVED: "删除模块", SurfaceKind.MODULE_RENAMED: "重命名模块",
    SurfaceKind.PARAM_ADDED: "新增参数", SurfaceKind.PARAM_REMOVED: "删除参数", SurfaceKind.PARAM_RENAMED: "重命名参数",
    SurfaceKind.PARAM_REORDERED: "位置参数顺序调整", SurfaceKind.PARAM_REQUIRED: "参数变为必填",
    SurfaceKind.DEFAULT_CHANGED: "默认值变化", SurfaceKind.FIELD_ADDED: "新增字段", SurfaceKind.FIELD_REMOVED: "删除字段",
    SurfaceKind.FIELD_RENAMED: "重命名字段", SurfaceKind.OPTION_ADDED: "新增命令行选项",
    SurfaceKind.OPTION_REMOVED: "删除命令行选项", SurfaceKind.OPTION_RENAMED: "重命名命令行选项",
    SurfaceKind.ENV_ADDED: "新增环境变量", SurfaceKind.ENV_REMOVED: "不再读取的环境变量",
    SurfaceKind.ENV_RENAMED: "重命名环境变量", SurfaceKind.DEPRECATION: "新增弃用警告", SurfaceKind.SWITCH_FLIPPED: "开关切换",
    SurfaceKind.ROUTE_ADDED: "新增 HTTP 路由", SurfaceKind.ROUTE_REMOVED: "删除 HTTP 路由", SurfaceKind.RAISES: "新增抛出异常",
    SurfaceKind.SUPPORT_DROPPED: "不再支持", SurfaceKind.SUPPORT_ADDED: "新增支持", SurfaceKind.DEPENDENCY_ADDED: "新增依赖",
    SurfaceKind.DEPENDENCY_REMOVED: "移除依赖", SurfaceKind.DEPENDENCY_CHANGED: "依赖版本范围变化",
    SurfaceKind.DEPENDENCY_OPTIONAL: "依赖改为可选",
}  # fmt: skip


def surface_fact(change: SurfaceChange, lang: str) -> str:
    """One surface fact as a line in the answer's language: "新增环境变量：X，位于 path:12"."""
    if lang != "zh":
        return describe(change)
    text = f"{SURFACE_KINDS_ZH[change.kind]}：{change.name}"
    if change.old is not None and change.new is not None:
        text += f"（{change.old} → {change.new}）"
    elif change.old is not None:
        text += f"（原为 {change.old}）"
    elif change.new is not None and change.new != change.name:
        text += f"（{change.new}）"
    if change.kind in BREAKING_KINDS and change.kind not in UNALIASED_KINDS:
        text += "；保留了旧名别名" if change.aliased else "；没有别名"
    if change.documented is False:
        text += "；文档从未提及"
    where = f"{change.path}:{change.line}" if change.line else change.path
    return f"{text}，位于 {where}"


def phrase(lang: str, key: str, **fmt: object) -> str:
    lang = "zh" if lang == "zh" else "en"
    return filled(lang, _W[lang][key], fmt)
