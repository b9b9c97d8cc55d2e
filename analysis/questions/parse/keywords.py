"""The keyword groups a question's intent, aspects, facets, tiers and scope are read from. English is matched
on lower-case text with word boundaries, Chinese as substrings; each group holds words of one meaning, so
wordings nobody listed still match."""

from __future__ import annotations

import re

from analysis.models import Importance
from analysis.questions.parse.question import Aspect, Facet


def wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _words(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns), re.IGNORECASE)


FOLLOWUP = _words(
    r"\brevert\w*", r"\broll(?:ed|s|ing)?[- ]?back", r"\bbacked[- ]out\b", r"\bback(?:ing)? out\b",
    r"\bfix(?:ed|es)?[- ]forward\w*", r"\bfollow(?:ed)?[- ]?ups?\b", r"\bfollowed up\b",
    r"\bfixed (?:later|afterwards|since|again|by)\b", r"\blater fix\w*", r"\bregress\w*", r"\bbroke\b",
    r"\bbroken\b", r"\bundo(?:ne)?\b", r"\bundid\b", r"\bre-?land\w*", r"\bhotfix(?:ed)? later\b",
    r"\bstill stand", r"\bstuck\b",
    r"回滚", r"回退", r"撤销", r"撤回", r"还原", r"修复跟进", r"后续修复", r"后来.{0,6}修", r"被.{0,8}修复",
    r"跟进", r"回归", r"引入.{0,6}问题",
)  # fmt: skip
ENV_VARS = r"\benv(?:ironment)?[ _-]?var(?:iable)?s?\b|\benvvars?\b|环境变量"
SURFACE = _words(
    r"\bbreaking\b", r"\bbreak(?:s|ing)? (?:the )?(?:public )?(?:api|apis|compat\w*|users?|callers?|clients?|"
    r"interface|cli)\b", r"\bbackwards?[- ]compat\w*", r"\bincompatib\w*", r"\bdefaults?\b",
    r"\bdefault values?\b", r"\bnew (?:cli |command[- ]line |config(?:uration)? )?(?:options?|flags?|settings?|"
    r"parameters?|params?|arguments?|args?|fields?|keys?|env(?:ironment)? var\w*|endpoints?|routes?|switch\w*)",
    r"\b(?:options?|flags?|settings?|parameters?|arguments?|env(?:ironment)? var\w*|switch\w*)\s+"
    r"(?:added|removed|renamed|changed|flipped)\b", r"\bdeprecat\w*", r"\bapi changes?\b",
    r"\bpublic (?:api|interface|names?)\b", r"\buser[- ]facing\b", r"\bsurface\b",
    r"\b(?:removed|renamed) (?:apis?|functions?|classes|class|parameters?|options?|flags?|fields?)\b",
    r"\bflipped\b", r"\bswitch(?:es)? flipped\b", ENV_VARS,
    r"\b(?:add|adds|added|adding|introduc\w*|remov\w*|renam\w*)\s+(?:any |new |an? |some )?(?:cli |command[- ]line )?"
    r"(?:options?|flags?|parameters?|params?|arguments?|settings?|fields?|endpoints?|routes?)\b",
    r"破坏性", r"不兼容", r"兼容性", r"向后兼容", r"默认", r"新增(?:了)?(?:哪些|什么|的)?.{0,4}(?:选项|参数|配置项?|开关|环境变量|字段)", r"新(?:增)?(?:的)?(?:命令行)?(?:选项|参数|配置项?|开关|环境变量|接口|字段)",
    r"(?:选项|参数|配置项?|接口|环境变量|字段|开关)(?:的)?(?:变化|变更|改动|新增|删除|重命名)", r"弃用", r"废弃",
    r"对外接口", r"公开接口", r"用户可见", r"接口变化", r"API\s*(?:变化|变更|改动)",
)  # fmt: skip
FACET_WORDS = {
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
RISK = _words(
    r"\brisk\w*", r"\bdanger\w*", r"\bunsafe\b", r"\bsafe(?:ly)?\b", r"\bscar\w+", r"\bworr\w+",
    r"\bconcern\w*", r"\b(?:could|might|may|can|will|would)(?: it| this| they)? break\b", r"\bbreak anything\b",
    r"\bwatch (?:out|for)\b", r"\bcareful\b", r"\bcaution\w*", r"\breview (?:first|carefully)\b",
    r"\bpay attention\b", r"\blook out\b", r"\bblast radius\b", r"\bproblem\w*", r"\bfragile\b", r"\bbreakage\b",
    r"\bnervous\b", r"\bafraid\b", r"\bfear\w*", r"\btrouble\w*", r"\bred flags?\b", r"\balarm\w*", r"\bhazard\w*",
    r"风险", r"危险", r"隐患", r"担心", r"注意", r"关注", r"小心", r"出问题", r"可能.{0,4}(?:坏|崩|挂|破坏|影响)",
    r"安全吗", r"稳妥", r"靠谱",
)  # fmt: skip
SUPERLATIVE = _words(
    r"\bmost\b", r"\briskiest\b", r"\bbiggest\b", r"\bhighest\b", r"\btop\b", r"\bworst\b", r"\bwhich\b",
    r"\bwhat commits\b", r"\bany\b", r"\bscariest\b", r"\bdangerous\w* ones?\b", r"\bones?\b",
    r"最", r"哪些", r"哪个", r"哪几个", r"前\s*\d", r"前[一两二三四五六七八九十]",
)  # fmt: skip
TIER = {
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
NOT_TIER = _words(r"\bhigh[- ]level\b", r"\blow[- ]level\b", r"\bmost important\b")
COUNT = _words(
    r"\bhow many\b", r"\bnumber of\b", r"\bcount\b", r"\bhow much\b", r"\btotal\b",
    r"多少", r"几个", r"几条", r"几次", r"几位", r"数量", r"总共", r"一共", r"共有",
)  # fmt: skip
OVERVIEW = _words(
    r"\bwhat happened\b", r"\bwhat'?s new\b", r"\bwhat(?: has| have)? changed today\b", r"\bwhat changed\b$",
    r"\bsummar\w* (?:of )?(?:today|the day|this day|the digest)\b", r"\boverview\b", r"\bhighlights?\b",
    r"\brecap\b", r"\btl;?dr\b", r"\bin short\b", r"\bbig picture\b", r"\bwhat landed\b",
    r"(?:今天|今日|当天|本日).{0,8}(?:变化|更新|改动|发生|合入)", r"有什么新", r"概况", r"概览", r"总结一下", r"总览",
    r"要点", r"亮点",
)  # fmt: skip
ASPECT = {
    Aspect.SUMMARY: _words(
        r"\bwhat (?:does|did|do) .{0,60}\b(?:do|change|touch|add|fix|remove|modify|introduce)\b",
        r"\bwhat (?:has|have) .{0,60} changed\b", r"\bwhat changed in\b", r"\bwhat is .{0,40} about\b",
        r"\bexplain\w*\b", r"\bsummar\w*", r"\bdescrib\w*", r"\btell me about\b", r"\bdetails?\b",
        r"\bwhat'?s in\b", r"\bwhat is (?:it|this|that)\b", r"\bwhat'?s (?:it|this|that)\b",
        r"改了什么", r"改动了什么", r"修改了什么", r"做了什么", r"干了什么", r"干什么", r"是什么", r"讲了什么",
        r"内容", r"介绍", r"解释", r"总结", r"概括", r"说明", r"详细", r"讲讲", r"说说",
    ),
    Aspect.RISKS: RISK,
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
TOP_AUTHORS = _words(
    r"\bwho\b.{0,40}\bmost\b", r"\btop (?:authors?|contributors?|committers?)\b", r"\bmost active\b",
    r"\b(?:authors?|contributors?) (?:ranked|by (?:number|count))\b", r"\bleaderboard\b",
    r"谁.{0,8}最多", r"最活跃", r"贡献最多", r"提交最多",
)  # fmt: skip
# "How many authors today?": the authors, not the commits.
AUTHORS = _words(
    r"\b(?:authors|contributors|committers|people|persons)\b", r"作者", r"贡献者", r"几位", r"多少(?:位|人)"
)
NEW = _words(r"\bnew\b", r"\badd(?:s|ed|ing)?\b", r"\bintroduc\w*", r"新")
# Aspects whose words say "a commit" by themselves; "who", "when", "why", "should we" need an "it".
STRONG_ASPECTS = frozenset({Aspect.SUMMARY, Aspect.FILES, Aspect.TESTS, Aspect.SIZE})
# "who wrote / authored / made" a commit, as opposed to commits *by* someone.
WHO_WROTE = _words(
    r"\bwho (?:wrote|authored|made|did|committed|merged|landed|created|submitted|is (?:the )?author|contributed|sent)\b",
    r"\bauthor of\b", r"\bwhose\b", r"\b(?:what|who) is (?:the|its) author\b",
    r"谁(?:写|提交|做|改|贡献|发|合)", r"作者是谁", r"作者是?哪", r"是谁的",
)  # fmt: skip

DAY = _words(
    r"\btoday\w*", r"\byesterday\w*", r"\bthis day\b", r"\bthe day\b", r"\bof the day\b", r"\bthese commits\b",
    r"\ball (?:the )?commits\b", r"\bin (?:this|the) digest\b", r"\bcommits\b", r"\bchanges\b", r"\bones\b",
    r"\b(?:what|anything|who) else\b", r"\boverall\b", r"其他提交", r"其它提交", r"别的提交", r"今天", r"今日", r"当天", r"本日", r"昨天", r"这些提交", r"所有提交", r"哪些", r"各个", r"全部",
)  # fmt: skip
ANY = _words(r"\bany(?:thing|one|body)?\b", r"有没有", r"哪些", r"什么")
THIS_COMMIT = _words(
    r"\bit\b", r"\bits\b", r"\bthis (?:commit|change|one|pr|pull request|patch)\b",
    r"\bthat (?:commit|change|one|pr|pull request|patch)\b", r"\bthe (?:commit|change|pr|patch)\b(?!s)",
    r"它", r"这个(?:提交|改动|变更|PR|补丁)", r"该(?:提交|改动|变更|PR)", r"此(?:提交|改动|变更)", r"这次(?:提交|改动)",
    r"那个(?:提交|改动)",
)  # fmt: skip

# "Which commits have no tests?", "哪些提交没有测试？": the day's commits that change no test file.
UNTESTED = _words(
    r"\b(?:no|without|lack(?:s|ing)?|missing|zero)\s+(?:any\s+|new\s+)?(?:tests?|test files?|test changes|"
    r"test coverage|unit tests?)\b", r"\buntested\b", r"\bnot (?:been )?tested\b",
    r"\b(?:don'?t|doesn'?t|do not|does not|didn'?t|did not) (?:have|touch|change|add|include|update) (?:any )?tests?\b",
    r"没有(?:任何)?(?:改动?|修改|添加|新增|加|写|带)?(?:测试|单测|用例)", r"没(?:加|写|改|带)?(?:测试|单测)", r"缺(?:少|乏)?(?:测试|单测)",
    r"未(?:经)?测试", r"不带测试", r"无测试",
)  # fmt: skip
# "What's the biggest commit?", "最大的提交是哪个？": the day's commits by changed lines.
BIGGEST = _words(
    r"\b(?:biggest|largest|hugest)\b(?!\s+(?:risks?|impact|concern|problem|worry))", r"\bmost lines\b",
    r"\bmost (?:code|churn)\b", r"\bby (?:size|lines changed)\b",
    r"(?<!风险)(?<!影响)(?<!重要性)最大的(?:提交|改动|变更|PR|commit)", r"(?:改动|修改|变更|行数|规模)最(?:大|多)的?",
    r"改(?:了|动)?(?:的)?(?:行数)?最多",
)  # fmt: skip
