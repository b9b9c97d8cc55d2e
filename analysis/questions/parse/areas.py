"""The paths and areas a question names: explicit paths, `code spans`, the words after "touching" or before
"changes", and Chinese areas mapped to the stems paths use."""

from __future__ import annotations

import re

from analysis.questions.parse.keywords import RISK, TIER, wordset

_CODE_SPAN = re.compile(r"`([^`\n]{2,80})`")


# Words around a path or area term that are not part of it.
STOP = wordset(
    "the a an any some this that these those today todays today's yesterday in on of to for at from with and or "
    "code module modules area areas file files folder folders directory directories dir package packages part "
    "parts stuff things thing changes change changed commits commit pr prs what which anything something "
    "now digest day please me us our my here there is are was were be been do does did it its all "
    "only just also more most new recent latest lately again much many how who where when why "
    "related relating regarding concerning about around inside under within path paths subsystem component "
    "components layer layers logic side list show give tell top first last every each one ones"
)
# Words that say what a filter means, never an area: tiers, risk, surface, intents.
NOT_AREA = wordset(
    "high medium low risky risk risks riskiest important minor major trivial critical breaking default defaults "
    "big small large biggest largest reverted revert fixed fix forward bug bugs follow followups "
    "surface behaviour behavior option options flag flags deprecated env envvar envvars var vars variable "
    "variables environment"
)
_AREA_TRIGGER = re.compile(
    r"\b(?:touch(?:es|ed|ing)?|chang(?:es|ed|ing)? (?:to|in)|changes? (?:to|in)|changed|changing|modif(?:y|ies|ied|ying)|"
    r"affect(?:s|ed|ing)?|involv(?:e|es|ed|ing)|related to|relating to|concerning|regarding|"
    r"(?:land(?:ed)?|work|commits?|anything|something|changes?) (?:in|on|under|to|for)|edit(?:s|ed|ing)?|"
    r"updat(?:e|es|ed|ing)|rewr(?:ite|ote|itten)s?|refactor(?:s|ed|ing)?)\s+(?P<rest>(?:[^?？!.,;:，。；！]|\.(?=\w))+)",
    re.IGNORECASE,
)
AREA_BEFORE = re.compile(
    r"(?<![\w./])(?P<area>[\w./]+(?:[ -][\w./]+){0,2})[ -](?:changes|commits|updates|fixes|work|related|stuff|code)\b",
    re.IGNORECASE,
)
_ZH_AREA_AFTER = re.compile(
    r"(?:涉及|改动了?|修改了?|改了|动了|影响了?|碰了|更新了?|重写了?|重构了?)(?:到)?\s*(?P<area>[^\s？?，,。！!的吗呢和与及]{1,24})"
)
_ZH_AREA_BEFORE = re.compile(
    r"(?:和|与|跟|同|对)?\s*(?P<area>[^\s？?，,。！!的吗呢哪些是]{1,24}?)\s*(?:相关|有关|方面|部分|模块|目录)"
)
# Common software areas in Chinese, to the stems they are written as in paths and titles.
_ZH_AREAS = {
    "调度": ("sched",), "缓存": ("cache",), "测试": ("test",), "文档": ("doc",), "注意力": ("attention", "attn"),
    "量化": ("quant",), "内核": ("kernel",), "算子": ("kernel", "op"), "模型": ("model",), "配置": ("config",),
    "依赖": ("requirements", "deps", "dependenc"), "构建": ("build", "docker", "cmake"), "持续集成": ("ci",),
    "采样": ("sampl",), "分布式": ("distributed",), "并行": ("parallel",), "多模态": ("multimodal", "mm"),
    "视觉": ("vision", "vit", "vl"), "语音": ("audio", "speech", "asr"), "音频": ("audio",),
    "推测解码": ("spec_decode", "speculative"), "投机解码": ("spec_decode", "speculative"), "基准": ("bench",),
    "示例": ("example",), "例子": ("example",), "工具": ("tool",), "编译": ("compil",), "内存": ("memory", "mem"),
    "显存": ("memory", "mem"), "日志": ("log",), "安全": ("security", "auth"), "网络": ("network", "net"),
    "路由": ("route", "router"), "认证": ("auth",), "插件": ("plugin",), "解析": ("pars",), "存储": ("storage",),
    "接口": ("api",), "前端": ("frontend", "entrypoint"), "服务": ("server", "serving"), "引擎": ("engine",),
    "执行器": ("executor",), "工作进程": ("worker",), "分词": ("tokeniz",), "通信": ("comm", "distributed"),
    "专家": ("moe", "expert"), "混合专家": ("moe",), "张量": ("tensor",), "流水线": ("pipeline",),
    "发布": ("release",), "镜像": ("docker",), "类型注解": ("typ",), "类型检查": ("mypy", "typ"),
}  # fmt: skip


def area_terms(rest: str, low: str, paths: list[str], author: str | None) -> tuple[str, ...]:
    """Paths and areas named: explicit paths, `code spans`, the words after "touching" / before
    "changes", and Chinese areas mapped to the stems paths use."""
    found: list[str] = list(paths)
    found += [m.group(1).strip().lower() for m in _CODE_SPAN.finditer(rest)]
    for m in _AREA_TRIGGER.finditer(low):
        found.append(_area_words(m.group("rest")))
    for m in AREA_BEFORE.finditer(re.sub(r"'s\b", "", low)):  # "today's commits": not an area "s"
        found.append(_area_words(m.group("area"), last=True))
    for pattern in (_ZH_AREA_AFTER, _ZH_AREA_BEFORE):
        for m in pattern.finditer(rest):
            found += _zh_area(m.group("area"))
    author_words = set((author or "").lower().split())
    out: list[str] = []
    for term in found:
        term = term.strip(" -/").lower()
        if not term or term in out or set(term.split()) <= author_words:
            continue
        out.append(term)
    return tuple(t for t in out if t)


def _area_words(phrase: str, *, last: bool = False) -> str:
    """The content words of a phrase after a trigger ("the scheduler today" → "scheduler"); `last`: the
    words just before "changes" ("any scheduler changes" → "scheduler")."""
    words = [w.strip("'\"`") for w in phrase.split()]
    kept: list[str] = []
    for w in reversed(words) if last else words:
        parts = set(re.split(r"[-_]", w)) | {w}
        if RISK.fullmatch(w) or RISK.match(w) or any(p.fullmatch(w) for p in TIER.values()):
            parts.add("risk")  # "the scariest commits", "the major ones": what they are, not where
        if last and parts & NOT_AREA:
            break  # "the high-risk changes": a modifier, not an area
        if parts & (STOP | NOT_AREA) or not re.search(r"[a-z]", w):
            if kept or last:  # "the most commits": no area right before "commits"
                break
            continue
        kept.append(w)
        if len(kept) == 3:
            break
    if last:
        kept.reverse()
    return " ".join(kept)


def _zh_area(area: str) -> list[str]:
    if re.search(r"多少|几|哪|什么|谁|吗|呢|怎么|如何", area):
        return []  # a question word: "改了多少个文件", "改动有哪些" name no area
    area = re.sub(
        r"^(?:今天|今日|当天|本日|哪些|什么|一下|了|的|到)+|(?:今天|今日|了|的)+$", "", area.strip()
    )
    if not area or area in ("提交", "改动", "变更", "代码", "文件", "哪些提交", "什么"):
        return []
    latin = re.findall(r"[A-Za-z][\w./-]*", area)
    if latin:
        return [w.lower() for w in latin if w.lower() not in STOP and w.lower() not in NOT_AREA]
    for word in sorted(_ZH_AREAS, key=len, reverse=True):
        if word in area:
            return ["|".join(_ZH_AREAS[word])]  # any of the stems
    return [area]
