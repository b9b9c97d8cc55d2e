"""What a thread question asks, read without a model: the intent (the day's riskiest commits, a tier,
follow-ups, what a commit changes, commits touching an area or by an author, surface changes, counts)
and what it names (commits by #N, SHA or URL; paths and areas; an author; tiers; "top 3").

Pure parsing, in English and Chinese. Keywords are grouped by meaning and matched as patterns, and
entities are extracted by shape (a SHA is hex with a digit and a letter, a path has a '/' or a file
extension), so questions worded in ways nobody listed still land on the right intent. What the parser
cannot place is UNKNOWN: the caller then asks the model, or says what it can answer.

Over 400 lines because it is one parser: intents and entities in two languages share the same keyword groups
and patterns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from analysis.models import Importance


class Intent(StrEnum):
    RISKIEST = "riskiest"  # the day's commits carrying the most risk (or the focused commit's risks)
    LIST = "list"  # the day's commits matching filters: tier, path/area, author (or how many)
    FOLLOWUPS = "followups"  # reverted or fixed forward: a commit's, or the day's
    EXPLAIN = "explain"  # what a commit changes, or one aspect of it
    SURFACE = "surface"  # breaking changes, changed defaults, new options
    OVERVIEW = "overview"  # the day in short
    UNKNOWN = "unknown"


class Aspect(StrEnum):
    """What part of one commit a question is about."""

    SUMMARY = "summary"
    RISKS = "risks"
    ADVICE = "advice"
    TESTS = "tests"
    FILES = "files"
    AUTHOR = "author"
    WHEN = "when"
    SIZE = "size"
    REASON = "reason"  # why it was ranked as it was
    TYPE = "type"


class Facet(StrEnum):
    """Which surface changes a question is about (analysis/surface/)."""

    BREAKING = "breaking"
    BEHAVIOUR = "behaviour"  # changed defaults, flipped switches, new exceptions, deprecations
    FEATURE = "feature"  # new options, parameters, fields, routes


@dataclass(frozen=True, slots=True)
class NamedCommit:
    """A commit the question names: `#123`, a SHA, or a commit / pull-request URL."""

    kind: Literal["pr", "sha"]
    value: str  # the PR number, or a lower-case hex SHA (prefix)
    repo: str | None = None  # from a URL or owner/name@sha
    weak: bool = False  # all digits: a SHA only if a commit of the thread has it

    @property
    def text(self) -> str:
        return f"#{self.value}" if self.kind == "pr" else self.value[:12]


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    lang: str
    intent: Intent
    commits: tuple[NamedCommit, ...] = ()
    aspects: frozenset[Aspect] = frozenset()
    tiers: frozenset[Importance] = frozenset()
    terms: tuple[str, ...] = ()  # paths and areas, lower-case; each may hold several words
    author: str | None = None
    facets: frozenset[Facet] = frozenset()
    count: bool = False  # "how many"
    limit: int | None = None  # "top 3"
    # "day": the question is about the day's commits; "commit": about one commit (a pronoun, a name);
    # None: the thread decides (its focused commit if it has one, else the day).
    scope: Literal["day", "commit"] | None = None
    vague: bool = False  # a bare reference ("and #123?"): a model, when there is one, answers it better
    authors_ranked: bool = False  # "who landed the most commits?"
    env_vars: bool = False  # about environment variables: only those surface changes
    # A commit named by what it is, not by #N or SHA: "the bump version commit" (words of its title),
    # "the second one" (the n-th commit of the thread's last list; -1: the last).
    title_words: tuple[str, ...] = ()
    ordinal: int | None = None

    def about_commit(self, has_focus: bool) -> bool:
        """Whether the answer is about one commit: one is named, or the wording or the thread says so."""
        if self.commits or self.title_words or self.ordinal is not None:
            return True
        if self.scope is not None:
            return self.scope == "commit" and has_focus
        # "and its risks?", "reverted?" follow the thread's commit; surface questions are the day's.
        return has_focus and self.intent in (Intent.EXPLAIN, Intent.RISKIEST, Intent.FOLLOWUPS)


# --------------------------------------------------------------------------------------------
# Entities
# --------------------------------------------------------------------------------------------

# Chat markup first: Slack wraps links as <url|label> and mentions as <@U123>; Discord writes <@123>.
_CHAT_LINK = re.compile(r"<(https?://[^>|\s]+)(?:\|[^>]*)?>")
_CHAT_MENTION = re.compile(r"<[@#!][^>]*>")
_COMMIT_URL = re.compile(
    r"https?://[^\s/]+/(?P<repo>[\w.-]+/[\w.-]+)/(?:-/)?commits?/(?P<sha>[0-9a-fA-F]{7,40})\b[^\s]*"
)
_PR_URL = re.compile(
    r"https?://[^\s/]+/(?P<repo>[\w.-]+/[\w.-]+)/(?:pull|pulls|merge_requests)/(?P<num>\d{1,9})\b[^\s]*"
)
_ANY_URL = re.compile(r"https?://\S+")
_REPO_AT_SHA = re.compile(r"(?<![\w./-])(?P<repo>[\w.-]+/[\w.-]+)@(?P<sha>[0-9a-fA-F]{7,40})\b")
_PR_NUMBER = re.compile(
    r"(?<![\w&])#\s?(\d{1,9})\b|\b(?:PR|pull request|pull|MR)\s*(?:#|no\.?|number)?\s*(\d{2,9})\b",
    re.IGNORECASE,
)
_HEX = re.compile(r"(?<![\w/#.@-])([0-9a-fA-F]{7,40})(?![\w/@-]|\.\w)")
_PATH = re.compile(
    r"(?<![\w@:/.-])((?:[\w.-]+/)+[\w.*-]*|[\w-]+\.(?:py|pyi|pyx|cu|cuh|c|cc|cpp|h|hpp|rs|go|java|kt|js|jsx|ts|"
    r"tsx|rb|php|swift|cs|sh|md|rst|txt|toml|ya?ml|json|cfg|ini|proto|sql|html|css|cmake|lock|ipynb))(?![\w/])"
)
# Slashes that are prose, not paths.
_NOT_PATHS = frozenset(
    {"and/or", "i/o", "n/a", "w/o", "w/", "tcp/ip", "input/output", "read/write", "on/off"}
)
_CODE_SPAN = re.compile(r"`([^`\n]{2,80})`")
_CJK = re.compile(r"[\u4e00-\u9fff]")

_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
    "十": 10,
}  # fmt: skip
_NUM = r"(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|[一两二三四五六七八九十])"
_LIMIT = (
    re.compile(rf"\b(?:top|first)\s+{_NUM}\b", re.IGNORECASE),
    re.compile(
        r"\bthe\s+(\d{1,3}|two|three|four|five|six|seven|eight|nine|ten)\b", re.IGNORECASE
    ),  # not "the one"
    re.compile(rf"\b{_NUM}\s+(?:most|riskiest|biggest|largest|highest|worst|top|main)\b", re.IGNORECASE),
    re.compile(rf"前\s*{_NUM}\s*(?:个|条|名|项)?"),
    re.compile(rf"最[\u4e00-\u9fff]{{1,4}}的\s*{_NUM}\s*(?:个|条|项)"),
)


def _clean(text: str) -> str:
    text = _CHAT_LINK.sub(r" \1 ", text)
    text = _CHAT_MENTION.sub(" ", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def named_commits(text: str) -> tuple[list[NamedCommit], str]:
    """The commits a text names, in order, and the text with URLs and references taken out (so a SHA
    inside a URL is not read again as a path)."""
    found: list[NamedCommit] = []
    rest = text

    def take(pattern: re.Pattern[str], make) -> None:
        nonlocal rest
        for m in pattern.finditer(rest):
            found.append(make(m))
        rest = pattern.sub(" ", rest)

    take(_COMMIT_URL, lambda m: NamedCommit("sha", m.group("sha").lower(), _repo(m.group("repo"))))
    take(_PR_URL, lambda m: NamedCommit("pr", m.group("num"), _repo(m.group("repo"))))
    rest = _ANY_URL.sub(" ", rest)  # other links name nothing we can read
    take(_REPO_AT_SHA, lambda m: NamedCommit("sha", m.group("sha").lower(), m.group("repo")))
    take(_PR_NUMBER, lambda m: NamedCommit("pr", str(int(m.group(1) or m.group(2)))))
    for m in _HEX.finditer(rest):
        token = m.group(1)
        has_digit, has_letter = any(c.isdigit() for c in token), any(c.isalpha() for c in token)
        if has_digit and has_letter:
            found.append(NamedCommit("sha", token.lower()))
        elif has_digit and not _looks_like_date(token):
            found.append(NamedCommit("sha", token, weak=True))
        # all letters ("defaced", "facade"): a word, not a SHA
    rest = _HEX.sub(" ", rest)
    unique = list(dict.fromkeys(found))
    return unique, rest


def _repo(name: str) -> str:
    return name[:-4] if name.endswith(".git") else name


def _looks_like_date(token: str) -> bool:
    return bool(re.fullmatch(r"(19|20)\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])", token))


def _paths(text: str) -> list[str]:
    out = []
    for m in _PATH.finditer(text):
        token = m.group(1).strip(".").rstrip("*").lower()
        if token.lower() in _NOT_PATHS or len(token.strip("/")) < 2:
            continue
        if "/" in token and all(len(p) <= 1 for p in token.split("/") if p):
            continue
        out.append(token[2:] if token.startswith("./") else token)
    return out


def _limit(text: str) -> int | None:
    for pattern in _LIMIT:
        m = pattern.search(text)
        if m:
            raw = m.group(1).lower()
            value = int(raw) if raw.isdigit() else _NUMBER_WORDS.get(raw)
            if value:
                return max(1, min(value, 50))
    return None


# --------------------------------------------------------------------------------------------
# Keyword groups (English matched on lower-case text with word boundaries; Chinese as substrings)
# --------------------------------------------------------------------------------------------


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _words(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns), re.IGNORECASE)


_FOLLOWUP = _words(
    r"\brevert\w*", r"\broll(?:ed|s|ing)?[- ]?back", r"\bbacked[- ]out\b", r"\bback(?:ing)? out\b",
    r"\bfix(?:ed|es)?[- ]forward\w*", r"\bfollow(?:ed)?[- ]?ups?\b", r"\bfollowed up\b",
    r"\bfixed (?:later|afterwards|since|again|by)\b", r"\blater fix\w*", r"\bregress\w*", r"\bbroke\b",
    r"\bbroken\b", r"\bundo(?:ne)?\b", r"\bundid\b", r"\bre-?land\w*", r"\bhotfix(?:ed)? later\b",
    r"\bstill stand", r"\bstuck\b",
    r"回滚", r"回退", r"撤销", r"撤回", r"还原", r"修复跟进", r"后续修复", r"后来.{0,6}修", r"被.{0,8}修复",
    r"跟进", r"回归", r"引入.{0,6}问题",
)  # fmt: skip
_ENV_VARS = r"\benv(?:ironment)?[ _-]?var(?:iable)?s?\b|\benvvars?\b|环境变量"
_SURFACE = _words(
    r"\bbreaking\b", r"\bbreak(?:s|ing)? (?:the )?(?:public )?(?:api|apis|compat\w*|users?|callers?|clients?|"
    r"interface|cli)\b", r"\bbackwards?[- ]compat\w*", r"\bincompatib\w*", r"\bdefaults?\b",
    r"\bdefault values?\b", r"\bnew (?:cli |command[- ]line |config(?:uration)? )?(?:options?|flags?|settings?|"
    r"parameters?|params?|arguments?|args?|fields?|keys?|env(?:ironment)? var\w*|endpoints?|routes?|switch\w*)",
    r"\b(?:options?|flags?|settings?|parameters?|arguments?|env(?:ironment)? var\w*|switch\w*)\s+"
    r"(?:added|removed|renamed|changed|flipped)\b", r"\bdeprecat\w*", r"\bapi changes?\b",
    r"\bpublic (?:api|interface|names?)\b", r"\buser[- ]facing\b", r"\bsurface\b",
    r"\b(?:removed|renamed) (?:apis?|functions?|classes|class|parameters?|options?|flags?|fields?)\b",
    r"\bflipped\b", r"\bswitch(?:es)? flipped\b", _ENV_VARS,
    r"\b(?:add|adds|added|adding|introduc\w*|remov\w*|renam\w*)\s+(?:any |new |an? |some )?(?:cli |command[- ]line )?"
    r"(?:options?|flags?|parameters?|params?|arguments?|settings?|fields?|endpoints?|routes?)\b",
    r"破坏性", r"不兼容", r"兼容性", r"向后兼容", r"默认", r"新增(?:了)?(?:哪些|什么|的)?.{0,4}(?:选项|参数|配置项?|开关|环境变量|字段)", r"新(?:增)?(?:的)?(?:命令行)?(?:选项|参数|配置项?|开关|环境变量|接口|字段)",
    r"(?:选项|参数|配置项?|接口|环境变量|字段|开关)(?:的)?(?:变化|变更|改动|新增|删除|重命名)", r"弃用", r"废弃",
    r"对外接口", r"公开接口", r"用户可见", r"接口变化", r"API\s*(?:变化|变更|改动)",
)  # fmt: skip
_FACET_WORDS = {
    Facet.BREAKING: _words(
        r"\bbreak\w*", r"\bincompatib\w*", r"\bbackwards?[- ]compat\w*", r"\bremoved\b", r"\brenamed\b",
        r"破坏", r"不兼容", r"兼容", r"删除", r"重命名",
    ),
    Facet.BEHAVIOUR: _words(
        r"\bdefaults?\b", r"\bbehaviou?r\b", r"\bswitch\w*", r"\bflipped\b", r"\bdeprecat\w*",
        r"默认", r"行为", r"开关", r"弃用", r"废弃",
    ),
    Facet.FEATURE: _words(
        r"\bnew\b", r"\badd(?:s|ed|ing)?\b", r"\bintroduc\w*", r"\boptions?\b", r"\bflags?\b", r"\bparameters?\b", r"\bsettings?\b",
        r"\benv(?:ironment)? var\w*", r"\bendpoints?\b", r"\broutes?\b", r"新", r"选项", r"参数", r"环境变量",
    ),
}  # fmt: skip
_RISK = _words(
    r"\brisk\w*", r"\bdanger\w*", r"\bunsafe\b", r"\bsafe(?:ly)?\b", r"\bscar\w+", r"\bworr\w+",
    r"\bconcern\w*", r"\b(?:could|might|may|can|will|would)(?: it| this| they)? break\b", r"\bbreak anything\b",
    r"\bwatch (?:out|for)\b", r"\bcareful\b", r"\bcaution\w*", r"\breview (?:first|carefully)\b",
    r"\bpay attention\b", r"\blook out\b", r"\bblast radius\b", r"\bproblem\w*", r"\bfragile\b", r"\bbreakage\b",
    r"\bnervous\b", r"\bafraid\b", r"\bfear\w*", r"\btrouble\w*", r"\bred flags?\b", r"\balarm\w*", r"\bhazard\w*",
    r"风险", r"危险", r"隐患", r"担心", r"注意", r"关注", r"小心", r"出问题", r"可能.{0,4}(?:坏|崩|挂|破坏|影响)",
    r"安全吗", r"稳妥", r"靠谱",
)  # fmt: skip
_SUPERLATIVE = _words(
    r"\bmost\b", r"\briskiest\b", r"\bbiggest\b", r"\bhighest\b", r"\btop\b", r"\bworst\b", r"\bwhich\b",
    r"\bwhat commits\b", r"\bany\b", r"\bscariest\b", r"\bdangerous\w* ones?\b", r"\bones?\b",
    r"最", r"哪些", r"哪个", r"哪几个", r"前\s*\d", r"前[一两二三四五六七八九十]",
)  # fmt: skip
_TIER = {
    Importance.HIGH: _words(
        r"\bhigh(?:[- ](?:risk|impact|importance|priority|tier))?\b", r"\bimportant\b", r"\bcritical\b",
        r"\bmajor\b", r"🔴", r"高(?:重要|风险|危|优先|级|档|影响)", r"(?:重要(?:程度|度|性)?|风险|级别)(?:为|是)?高", r"重要的",
        r"重大",
    ),
    Importance.MEDIUM: _words(
        r"\bmedium\b", r"\bmoderate\b", r"\bmid(?:dle)?(?:[- ](?:risk|tier|importance))?\b", r"🟡",
        r"中(?:等|重要|风险|优先|级|档)", r"(?:重要(?:程度|度|性)?|风险|级别)(?:为|是)?中",
    ),
    Importance.LOW: _words(
        r"\blow(?:[- ](?:risk|impact|importance|priority|tier))?\b", r"\bminor\b", r"\btrivial\b",
        r"\bunimportant\b", r"🟢", r"低(?:重要|风险|优先|级|档|影响)", r"(?:重要(?:程度|度|性)?|风险|级别)(?:为|是)?低",
        r"不重要", r"小改动",
    ),
}  # fmt: skip
_NOT_TIER = _words(r"\bhigh[- ]level\b", r"\blow[- ]level\b", r"\bmost important\b")
_COUNT = _words(
    r"\bhow many\b", r"\bnumber of\b", r"\bcount\b", r"\bhow much\b", r"\btotal\b",
    r"多少", r"几个", r"几条", r"几次", r"几位", r"数量", r"总共", r"一共", r"共有",
)  # fmt: skip
_OVERVIEW = _words(
    r"\bwhat happened\b", r"\bwhat'?s new\b", r"\bwhat(?: has| have)? changed today\b", r"\bwhat changed\b$",
    r"\bsummar\w* (?:of )?(?:today|the day|this day|the digest)\b", r"\boverview\b", r"\bhighlights?\b",
    r"\brecap\b", r"\btl;?dr\b", r"\bin short\b", r"\bbig picture\b", r"\bwhat landed\b",
    r"(?:今天|今日|当天|本日).{0,8}(?:变化|更新|改动|发生|合入)", r"有什么新", r"概况", r"概览", r"总结一下", r"总览",
    r"要点", r"亮点",
)  # fmt: skip
_ASPECT = {
    Aspect.SUMMARY: _words(
        r"\bwhat (?:does|did|do) .{0,60}\b(?:do|change|touch|add|fix|remove|modify|introduce)\b",
        r"\bwhat (?:has|have) .{0,60} changed\b", r"\bwhat changed in\b", r"\bwhat is .{0,40} about\b",
        r"\bexplain\w*\b", r"\bsummar\w*", r"\bdescrib\w*", r"\btell me about\b", r"\bdetails?\b",
        r"\bwhat'?s in\b", r"\bwhat is (?:it|this|that)\b", r"\bwhat'?s (?:it|this|that)\b",
        r"改了什么", r"改动了什么", r"修改了什么", r"做了什么", r"干了什么", r"干什么", r"是什么", r"讲了什么",
        r"内容", r"介绍", r"解释", r"总结", r"概括", r"说明", r"详细", r"讲讲", r"说说",
    ),
    Aspect.RISKS: _RISK,
    Aspect.ADVICE: _words(
        r"\bshould (?:i|we|you)\b", r"\brecommend\w*", r"\badvi[cs]e\w*", r"\bwhat to (?:check|do|watch|test)\b",
        r"\bsuggest\w*", r"\bhow (?:to|do we|should we) (?:test|verify|deploy|check|roll out)\b", r"\bnext steps?\b",
        r"建议", r"应该", r"需要做什么", r"怎么办", r"如何验证", r"怎么验证", r"要不要",
    ),
    Aspect.TESTS: _words(r"\btest\w*", r"\bcoverage\b", r"\bcovered by\b", r"测试", r"单测", r"用例", r"覆盖"),
    Aspect.FILES: _words(
        r"\b(?:which|what) files?\b", r"\bfiles? (?:changed|touched|modified)\b", r"\bwhich paths?\b",
        r"\bfile list\b", r"\bwhere (?:in the code|does it change)\b",
        r"哪些文件", r"什么文件", r"哪个文件", r"改了哪些", r"文件列表", r"哪些路径",
    ),
    Aspect.AUTHOR: _words(
        r"\bwho\b", r"\bauthor\w*", r"\bwritten by\b",
        r"谁", r"作者",
    ),
    Aspect.WHEN: _words(
        r"\bwhen\b", r"\bwhat time\b", r"\bwhich day\b", r"\bdate\b", r"\blanded\b",
        r"什么时候", r"何时", r"哪天", r"几点", r"时间",
    ),
    Aspect.SIZE: _words(
        r"\bhow (?:big|large|small)\b", r"\bhow many lines\b", r"\bsize\b", r"\blines? (?:changed|of code)\b",
        r"\bloc\b", r"\bdiffstat\b", r"多大", r"多少行", r"规模", r"行数", r"改动量",
    ),
    Aspect.REASON: _words(
        r"\bwhy\b", r"\breason\w*", r"\bhow (?:was|is) it (?:ranked|rated|judged)\b",
        r"为什么", r"为何", r"原因", r"理由", r"依据",
    ),
    Aspect.TYPE: _words(
        r"\bwhat (?:kind|type|sort) of\b", r"\bchange type\b", r"\bis (?:it|this) a (?:fix|bugfix|feature|refactor)\b",
        r"什么类型", r"哪种类型", r"类型", r"什么性质",
    ),
}  # fmt: skip
# "Who landed the most today?", "top contributors", "谁的提交最多".
_TOP_AUTHORS = _words(
    r"\bwho\b.{0,40}\bmost\b", r"\btop (?:authors?|contributors?|committers?)\b", r"\bmost active\b",
    r"\b(?:authors?|contributors?) (?:ranked|by (?:number|count))\b", r"\bleaderboard\b",
    r"谁.{0,8}最多", r"最活跃", r"贡献最多", r"提交最多",
)  # fmt: skip
# "How many authors today?": the authors, not the commits.
_AUTHORS = _words(
    r"\b(?:authors|contributors|committers|people|persons)\b", r"作者", r"贡献者", r"几位", r"多少(?:位|人)"
)
_NEW = _words(r"\bnew\b", r"\badd(?:s|ed|ing)?\b", r"\bintroduc\w*", r"新")
# Aspects whose words say "a commit" by themselves; "who", "when", "why", "should we" need an "it".
_STRONG_ASPECTS = frozenset({Aspect.SUMMARY, Aspect.FILES, Aspect.TESTS, Aspect.SIZE})
# "who wrote / authored / made" a commit, as opposed to commits *by* someone.
_WHO_WROTE = _words(
    r"\bwho (?:wrote|authored|made|did|committed|merged|landed|created|submitted|is (?:the )?author|contributed|sent)\b",
    r"\bauthor of\b", r"\bwhose\b", r"\b(?:what|who) is (?:the|its) author\b",
    r"谁(?:写|提交|做|改|贡献|发|合)", r"作者是谁", r"作者是?哪", r"是谁的",
)  # fmt: skip

_DAY = _words(
    r"\btoday\w*", r"\byesterday\w*", r"\bthis day\b", r"\bthe day\b", r"\bof the day\b", r"\bthese commits\b",
    r"\ball (?:the )?commits\b", r"\bin (?:this|the) digest\b", r"\bcommits\b", r"\bchanges\b", r"\bones\b",
    r"今天", r"今日", r"当天", r"本日", r"昨天", r"这些提交", r"所有提交", r"哪些", r"各个", r"全部",
)  # fmt: skip
_ANY = _words(r"\bany(?:thing|one|body)?\b", r"有没有", r"哪些", r"什么")
_THIS_COMMIT = _words(
    r"\bit\b", r"\bits\b", r"\bthis (?:commit|change|one|pr|pull request|patch)\b",
    r"\bthat (?:commit|change|one|pr|pull request|patch)\b", r"\bthe (?:commit|change|pr|patch)\b(?!s)",
    r"它", r"这个(?:提交|改动|变更|PR|补丁)", r"该(?:提交|改动|变更|PR)", r"此(?:提交|改动|变更)", r"这次(?:提交|改动)",
    r"那个(?:提交|改动)",
)  # fmt: skip

# Words around a path or area term that are not part of it.
_STOP = _wordset(
    "the a an any some this that these those today todays today's yesterday in on of to for at from with and or "
    "code module modules area areas file files folder folders directory directories dir package packages part "
    "parts stuff things thing changes change changed commits commit pr prs what which anything something "
    "now digest day please me us our my here there is are was were be been do does did it its all "
    "only just also more most new recent latest lately again much many how who where when why "
    "related relating regarding concerning about around inside under within path paths subsystem component "
    "components layer layers logic side list show give tell top first last every each one ones"
)
# Words that say what a filter means, never an area: tiers, risk, surface, intents.
_NOT_AREA = _wordset(
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
_AREA_BEFORE = re.compile(
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

# Authors: "commits by X", "X's commits", "did X land", "X 的提交".
_BY_AUTHOR = re.compile(
    r"\b(?i:by|from|authored by|written by|committed by|landed by|made by)\s+@?(?P<name>[A-Za-z][\w.-]*(?:\s+[A-Z][\w.-]*)?)",
)
# Case-sensitive names (a second word must be capitalised: "Grace Hopper's", not "ship today's");
# the keywords around them are matched in any case.
_POSSESSIVE = re.compile(
    r"(?<![A-Za-z0-9_.-])(?P<name>[A-Za-z][\w.-]*(?:\s+[A-Z][\w.-]*)?)'s\s+(?i:commits?|changes?|prs?|work|patches)\b"
)
_DID_AUTHOR = re.compile(
    r"\b(?i:did|has|have)\s+@?(?P<name>[A-Za-z][\w.-]*(?:\s+[A-Z][\w.-]*)?)\s+(?i:commit|land|merge|push|write|"
    r"author|change|ship|contribute|submit)\w*"
)
_ZH_AUTHOR = re.compile(
    r"(?:作者(?:是|为)|由)\s*(?P<a>[A-Za-z][A-Za-z0-9_.-]*(?:\s[A-Za-z][A-Za-z0-9_.-]*)?|[\u4e00-\u9fff]{2,4})"
    r"|(?<![A-Za-z0-9_.-])(?P<b>[A-Za-z][A-Za-z0-9_.-]*(?:\s[A-Za-z][A-Za-z0-9_.-]*)?)\s*(?:今天|今日|昨天)?\s*(?:的提交|提交了|写的|做的|的改动|的PR|合入了|贡献了|的修改)"
)
_NOT_NAMES = _wordset(
    "the a an what which who whom whose me us them it this that those these default risk size date time tier "
    "importance type path file files area today yesterday now pr commit commits anyone someone somebody anybody "
    "one ones hand mistake accident design far all any each"
)


# Typed in a hurry: "whcih comits are riskeist?". A word that is one slip (two letters swapped, one left
# out, one doubled) from a keyword of the patterns above is read as that keyword. A different letter is
# not a slip ("rises" stays "rises"), and words of the vocabulary are never changed.
_VOCAB = _wordset(
    "which what commits commit riskiest risky risks risk reverted revert reverts breaking changes change "
    "changed defaults default options option today today's many authors author wrote files tests test "
    "highest important medium deprecated parameters environment variables landed summary summarize "
    "explain recommend should anything yesterday the file"
)


def _slips_of(vocab: Iterable[str]) -> dict[str, str]:
    """Each slip of a question word (one letter left out of a long word, one doubled, two swapped) → the
    word; never a word of the vocabulary itself. In sorted order: a slip of two words is the same one's in
    every process (a set's order changes with the string hash seed)."""
    slips: dict[str, str] = {}
    for word in sorted(vocab):
        for i in range(len(word)):
            if len(word) >= 5:  # "comits", "reverte": one letter left out of a long word
                slips.setdefault(word[:i] + word[i + 1 :], word)
            slips.setdefault(word[:i] + word[i] + word[i:], word)  # "commmits": one doubled
            if i + 1 < len(word) and word[i] != word[i + 1]:  # "whcih", "teh": two swapped
                slips.setdefault(word[:i] + word[i + 1] + word[i] + word[i + 2 :], word)
    for word in vocab:
        slips.pop(word, None)
    return slips


_SLIPS = _slips_of(_VOCAB)


def _fix_slips(low: str) -> str:
    return re.sub(r"(?<![\w./-])[a-z']{3,}(?![\w./-])", lambda m: _SLIPS.get(m.group(0), m.group(0)), low)


# "the second one", "the 2nd commit", "the last one", "第二个", "number 2": a commit of the thread's last
# list. Not when the words place it in time or relation: "the last commit today", "the first commit of the
# day", "the last change before the release", "今天的第一个提交" are the day's, not the list's.
_ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5,
    "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8, "ninth": 9, "9th": 9,
    "tenth": 10, "10th": 10, "last": -1,
}  # fmt: skip
_LIST_WORDS = r"(?:the|your|that|this|my)\s+(?:list|answer|reply|message)\b"
# Words after "the last commit" that place it in time or relation: then it is the day's, not the list's.
_PLACED = (
    r"\s+(?:today|tonight|yesterday|ever|this\s+(?:morning|afternoon|evening|week|month|year)\b"
    rf"|(?:of|on|in|from|for|at)\s+(?!{_LIST_WORDS})|before|after|since|until|till|to\s|by\s|that\s"
    r"|which\s|merged|landed|pushed|made|committed)"
)
_ORDINAL = re.compile(
    rf"\b(?:the\s+)?(?P<n>{'|'.join(_ORDINALS)})\s+(?P<noun>one|commit|change|pr|item|entry|patch)\b(?!s)"
    rf"(?!{_PLACED})"
    r"|\bnumber\s+(?P<num>\d{1,2})\b(?!\s*(?:commits|changes|prs|files|lines|%))"
    r"|(?<!今天的)(?<!昨天的)(?<!今天)(?<!昨天)(?<!当天的)(?<!本周的)"
    r"(?:第\s*(?P<zh>\d{1,2}|[一二两三四五六七八九十])\s*(?:个|条|项|次提交)|最后(?:一|那)个)"
)
# "the bump version commit", "the scheduler revert", "the preempt PR": words of one commit's title.
_TITLE_PHRASE = re.compile(
    r"\b(?:the|that|this)\s+(?P<words>(?:[\w.-]+\s+){0,3}?[\w.-]+?)\s+"
    r"(?P<noun>commit|change|pr|patch|one|revert|fix|bugfix|rewrite|refactor|rename|bump)\b(?!s)",
    re.IGNORECASE,
)
_NOT_TITLE = _wordset(
    "big small large huge tiny same other new old first last next previous second third risky riskiest "
    "scary important high medium low breaking reverted latest recent earlier later main whole entire "
    "one only most biggest largest smallest worst best top risk risks scary dangerous critical major minor "
    "trivial medium-risk high-risk low-risk"
)


def _ordinal(low: str, listed: bool = True) -> int | None:
    """The place in the thread's last list the question names. Without a list (`listed=False`) only a
    phrase that can be nothing else ("the second one", "number 2", "第二个") is one: "the last commit" is
    then read as words."""
    m = _ORDINAL.search(low)
    if m is None:
        return None
    if m.group("n"):
        if not listed and m.group("noun") not in ("one", "item", "entry"):
            return None
        return _ORDINALS[m.group("n")]
    if m.group("num"):
        return int(m.group("num")) or None
    zh = m.group("zh")
    if zh is None:
        return -1  # 最后一个
    return int(zh) if zh.isdigit() else _NUMBER_WORDS.get(zh)


def _title_words(low: str) -> tuple[tuple[str, ...], str]:
    """The title words of "the bump version commit", and the question with that phrase read as "the
    commit" (so "who wrote the scheduler revert?" asks who wrote a commit, not about reverts)."""
    text = " ".join(re.sub(r"[\[\]\"“”]", " ", low).split())  # "the [doc] typo commit", quoted titles
    # Each "the" in turn: "the risks of the scheduler rewrite" holds its phrase after the second one.
    for start in (m.start() for m in re.finditer(r"\b(?:the|that|this)\b", text)):
        m = _TITLE_PHRASE.match(text, start)
        if m is None:
            continue
        phrase = m.group("words").split()
        if any(w in _STOP for w in phrase):
            continue  # "the risks of this change": a phrase, not a title
        words = [w for w in phrase if w not in _NOT_TITLE]
        noun = m.group("noun")
        if noun not in ("commit", "change", "pr", "patch", "one"):
            words.append(noun)  # "the scheduler revert": a revert of the scheduler
        if words and any(w != noun for w in words):
            return tuple(words), f"{text[: m.start()]}the commit{text[m.end() :]}"
    return (), low


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


READ_CHARS = 2000  # of a longer message (a pasted log), its start and its end are read as the question


def _readable(text: str) -> str:
    """A question of at most READ_CHARS: its start and end when longer. A 40 KB paste is read in
    milliseconds, not seconds on the event loop (several patterns look at every place in the text)."""
    if len(text) <= READ_CHARS:
        return text
    half = READ_CHARS // 2
    return f"{text[:half]} … {text[-half:]}"


def question_lang(text: str) -> str:
    """Answer in the asker's language: any CJK ideograph means Chinese."""
    return "zh" if _CJK.search(text) else "en"


def parse_question(text: str, authors: Iterable[str] = (), *, listed: bool = True) -> Question:
    """Read a thread question. `authors` are the names and logins of the thread's commits: a question
    naming one of them is about that author's commits even when no pattern says so. `listed=False`: the
    thread has no list, so "the last commit" is read as words, not as a place in one."""
    raw = _clean(_readable(text))
    lang = question_lang(raw)
    commits, rest = named_commits(raw)
    low = _fix_slips(" ".join(rest.lower().replace("’", "'").split()))
    ordinal = None if commits else _ordinal(low, listed)
    title_words: tuple[str, ...] = ()
    if not commits and ordinal is None:
        title_words, low = _title_words(low)
    paths = _paths(rest)
    aspects = frozenset(a for a, pattern in _ASPECT.items() if pattern.search(low))
    tiers = _tiers(low)
    author = _author(rest, authors)
    terms = _terms(rest, low, paths, author)
    count = bool(_COUNT.search(low))
    limit = _limit(low)
    scope = "commit" if ordinal is not None or title_words else _scope(low, commits)
    if ordinal is not None:
        limit = None  # "the first one" is one commit, not "the top 1"
    env_vars = bool(re.search(_ENV_VARS, low))
    common = dict(
        text=text, lang=lang, commits=tuple(commits), tiers=tiers, terms=terms, author=author, count=count,
        limit=limit, scope=scope, env_vars=env_vars,
        ordinal=ordinal, title_words=title_words,
    )  # fmt: skip

    if _FOLLOWUP.search(low):
        if scope is None and _ANY.search(low):  # "anything reverted?", "any reverts?": the day's
            common["scope"] = "day"
        return Question(intent=Intent.FOLLOWUPS, aspects=aspects, **common)
    if _SURFACE.search(low):
        facets = frozenset(f for f, pattern in _FACET_WORDS.items() if pattern.search(low))
        if env_vars:  # "env vars" says what, not which change: added, removed or renamed ones
            facets = facets & {Facet.FEATURE} if _NEW.search(low) else frozenset()
        return Question(intent=Intent.SURFACE, facets=facets or frozenset(Facet), **common)
    if (_TOP_AUTHORS.search(low) or (count and _AUTHORS.search(low) and not author)) and not commits:
        return Question(intent=Intent.LIST, authors_ranked=True, **{**common, "scope": "day"})
    if _WHO_WROTE.search(low) and (commits or scope == "commit" or not (terms or tiers)):
        return Question(
            intent=Intent.EXPLAIN, aspects=frozenset({Aspect.AUTHOR}), **{**common, "author": None}
        )
    risky = bool(_RISK.search(low)) and not count
    if count and scope == "commit" and not _DAY.search(low):  # "how many files did it change?": its size
        return Question(intent=Intent.EXPLAIN, aspects=aspects or frozenset({Aspect.SIZE}), **common)
    if terms or author or tiers:
        if commits and not count:  # "is #123 a high-risk change?": about that commit
            return Question(intent=Intent.EXPLAIN, aspects=aspects or frozenset({Aspect.SUMMARY}), **common)
        intent = Intent.RISKIEST if risky and _SUPERLATIVE.search(low) and not tiers else Intent.LIST
        return Question(intent=intent, aspects=aspects, **{**common, "scope": "day"})
    if risky:
        if commits or scope == "commit":
            return Question(intent=Intent.EXPLAIN, aspects=aspects | {Aspect.RISKS}, **common)
        day = scope == "day" or bool(_SUPERLATIVE.search(low)) or limit is not None
        return Question(
            intent=Intent.RISKIEST, aspects=aspects, **{**common, "scope": "day" if day else scope}
        )
    if count:
        return Question(intent=Intent.LIST, aspects=aspects, **{**common, "scope": "day"})
    if _OVERVIEW.search(low) and not commits and scope != "commit":
        return Question(intent=Intent.OVERVIEW, **common)
    if aspects and (scope == "commit" or aspects & _STRONG_ASPECTS):
        return Question(intent=Intent.EXPLAIN, aspects=aspects, **common)
    if commits or title_words or ordinal is not None:  # a bare reference ("and #123?", "the second one?")
        return Question(intent=Intent.EXPLAIN, aspects=frozenset({Aspect.SUMMARY}), vague=True, **common)
    return Question(intent=Intent.UNKNOWN, **common)


def _tiers(low: str) -> frozenset[Importance]:
    text = _NOT_TIER.sub(" ", low)
    return frozenset(level for level, pattern in _TIER.items() if pattern.search(text))


def _scope(low: str, commits: list[NamedCommit]) -> Literal["day", "commit"] | None:
    if commits or _THIS_COMMIT.search(low):
        return "commit"
    if _DAY.search(low):
        return "day"
    return None


def _author(text: str, authors: Iterable[str]) -> str | None:
    """An author the question names: a known name or login of the thread's commits, else a name in an
    "by X" / "X's commits" / "X 的提交" pattern."""
    low = f" {' '.join(text.lower().split())} "
    known = sorted(
        {a.strip() for a in authors if a and len(a.strip()) >= (2 if _CJK.search(a) else 3)},
        key=len,
        reverse=True,
    )
    for name in known:
        if _CJK.search(name):  # "李明今天提交了什么": Chinese runs words together
            if name.lower() in low:
                return name
        elif re.search(rf"(?<![\w@]){re.escape(name.lower())}(?![\w])", low):
            return name
    for pattern in (_BY_AUTHOR, _POSSESSIVE, _DID_AUTHOR):
        for m in pattern.finditer(text):
            name = _trim_name(m.group("name"))
            if name:
                return name
    for m in _ZH_AUTHOR.finditer(text):
        name = _trim_name(m.group("a") or m.group("b") or "")
        if name:
            return name
    return None


def _trim_name(name: str) -> str | None:
    words = [w for w in name.split() if w.lower() not in _NOT_NAMES and w.lower() not in _STOP]
    if not words or words[0].lower() in _NOT_AREA:
        return None
    # "by Cyrus Leung" keeps both words; "by alice today" stops at the first non-name.
    kept = [words[0]] + [w for w in words[1:2] if w[:1].isupper()]
    value = " ".join(kept).strip(".-")
    return value if len(value) >= 2 and not value.isdigit() else None


def _terms(rest: str, low: str, paths: list[str], author: str | None) -> tuple[str, ...]:
    """Paths and areas named: explicit paths, `code spans`, the words after "touching" / before
    "changes", and Chinese areas mapped to the stems paths use."""
    found: list[str] = list(paths)
    found += [m.group(1).strip().lower() for m in _CODE_SPAN.finditer(rest)]
    for m in _AREA_TRIGGER.finditer(low):
        found.append(_area_words(m.group("rest")))
    for m in _AREA_BEFORE.finditer(re.sub(r"'s\b", "", low)):  # "today's commits": not an area "s"
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
        if _RISK.fullmatch(w) or _RISK.match(w) or any(p.fullmatch(w) for p in _TIER.values()):
            parts.add("risk")  # "the scariest commits", "the major ones": what they are, not where
        if last and parts & _NOT_AREA:
            break  # "the high-risk changes": a modifier, not an area
        if parts & (_STOP | _NOT_AREA) or not re.search(r"[a-z]", w):
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
        return [w.lower() for w in latin if w.lower() not in _STOP and w.lower() not in _NOT_AREA]
    for word in sorted(_ZH_AREAS, key=len, reverse=True):
        if word in area:
            return ["|".join(_ZH_AREAS[word])]  # any of the stems
    return [area]


_QUESTION = re.compile(
    r"[?？]|\b(what|why|how|which|who|when|where|should|could|would|can|does|do|is|are|will|risk\w*)\b"
    r"|什么|为什么|为何|怎么|怎样|如何|哪|吗|呢|是否|有没有|风险|影响|多少|几个",
    re.IGNORECASE,
)


def is_question(text: str) -> bool:
    """A reply worth an answer when nobody mentioned the bot: a question, not "thanks!" or "+1"."""
    return bool(_QUESTION.search(text))
