"""Reading a thread question without a model: intents and entities, in English and Chinese."""

import pytest

from analysis.models import Importance
from analysis.questions.parse import Aspect, Facet, Intent, NamedCommit, named_commits, parse_question

AUTHORS = ["Grace Hopper", "linus-t", "Ada Lovelace"]


def ask(text: str):
    return parse_question(text, authors=AUTHORS)


@pytest.mark.parametrize(
    "text",
    [
        "Which of today's commits carry the most risk?",
        "what are the riskiest changes?",
        "top 3 most dangerous commits today",
        "anything scary landed today?",
        "今天哪些提交风险最大？",
        "前三个风险最高的提交",
        "有哪些需要特别注意的改动？",
    ],
)
def test_the_day_riskiest(text):
    q = ask(text)
    assert q.intent == Intent.RISKIEST and q.scope == "day" and not q.commits


def test_how_many_riskiest_to_list():
    assert ask("top 3 riskiest commits").limit == 3
    assert ask("the two most risky changes").limit == 2
    assert ask("前三个风险最高的提交").limit == 3
    assert ask("风险最大的5个提交").limit == 5
    assert ask("which commits are risky?").limit is None


@pytest.mark.parametrize(
    ("text", "tiers"),
    [
        ("list the high commits", {Importance.HIGH}),
        ("which ones are high-risk?", {Importance.HIGH}),
        ("show me the medium and low changes", {Importance.MEDIUM, Importance.LOW}),
        ("高风险的提交有哪些？", {Importance.HIGH}),
        ("重要程度为中的提交", {Importance.MEDIUM}),
        ("低重要度的改动", {Importance.LOW}),
    ],
)
def test_tiers(text, tiers):
    q = ask(text)
    assert q.intent == Intent.LIST and q.tiers == tiers and not q.terms


def test_high_level_is_not_a_tier():
    assert not ask("give me a high-level summary of today").tiers


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("was #33350 reverted?", "#33350"),
        ("Did anyone roll back PR 1234?", "#1234"),
        ("was 5e73e49 fixed forward later?", "5e73e49"),
        ("#42 被回滚了吗？", "#42"),
        ("abc1234 后来有没有被修复？", "abc1234"),
    ],
)
def test_followups_of_a_commit(text, ref):
    q = ask(text)
    assert q.intent == Intent.FOLLOWUPS and [c.text for c in q.commits] == [ref]
    assert q.about_commit(has_focus=False)


def test_followups_of_the_day_and_of_the_thread():
    day = ask("Was anything reverted today?")
    assert day.intent == Intent.FOLLOWUPS and day.scope == "day" and not day.about_commit(True)
    assert ask("今天有哪些回滚？").scope == "day"
    again = ask("reverted since?")  # a follow-up turn: the thread's commit
    assert again.intent == Intent.FOLLOWUPS and again.about_commit(True) and not again.about_commit(False)


@pytest.mark.parametrize(
    ("text", "aspects"),
    [
        ("what does #12 change?", {Aspect.SUMMARY}),
        ("who wrote #12?", {Aspect.AUTHOR}),
        ("#12 是谁写的？", {Aspect.AUTHOR}),
        ("which files did #12 touch?", {Aspect.FILES}),
        ("and what about its tests?", {Aspect.TESTS}),
        ("它的测试呢？", {Aspect.TESTS}),
        ("how big is #12?", {Aspect.SIZE}),
        ("when did #12 land?", {Aspect.WHEN}),
        ("why is #12 ranked high?", {Aspect.REASON}),
        ("what kind of change is #12?", {Aspect.TYPE}),
        ("这个提交改了什么？", {Aspect.SUMMARY}),
        ("what could #12 break?", {Aspect.RISKS}),
        ("is #12 safe to deploy?", {Aspect.RISKS}),
    ],
)
def test_aspects_of_a_commit(text, aspects):
    q = ask(text)
    assert q.intent == Intent.EXPLAIN and aspects <= q.aspects
    assert q.about_commit(has_focus=True)


def test_a_bare_reference_is_vague():
    q = ask("and #33046?")
    assert q.intent == Intent.EXPLAIN and q.vague and q.commits == (NamedCommit("pr", "33046"),)
    assert not ask("what does #33046 change?").vague


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("what touches the scheduler today?", ("scheduler",)),
        ("which commits touch vllm/v1/core?", ("vllm/v1/core",)),
        ("anything changing src/app/config.py?", ("src/app/config.py",)),
        ("any LoRA changes today?", ("lora",)),
        ("what's changed in the attention backends?", ("attention backends",)),
        ("commits related to `kv_cache`", ("kv_cache",)),
        ("哪些提交涉及 LoRA？", ("lora",)),
        ("哪些提交改动了调度器？", ("sched",)),
        ("和量化相关的提交", ("quant",)),
    ],
)
def test_paths_and_areas(text, terms):
    q = ask(text)
    assert q.intent == Intent.LIST and set(terms) <= set(q.terms)


@pytest.mark.parametrize(
    ("text", "author"),
    [
        ("commits by Grace Hopper", "Grace Hopper"),
        ("what did linus-t land today?", "linus-t"),
        ("ada lovelace's changes", "Ada Lovelace"),
        ("anything from @someone_new today?", "someone_new"),
        ("Grace Hopper 的提交有哪些？", "Grace Hopper"),
        ("作者是 bob 的提交", "bob"),
    ],
)
def test_authors(text, author):
    q = ask(text)
    assert q.intent == Intent.LIST and q.author == author


def test_by_is_not_always_an_author():
    assert ask("which commits were broken by #12?").author is None
    assert ask("commits sorted by risk").author is None


@pytest.mark.parametrize(
    ("text", "facets"),
    [
        ("any breaking changes today?", {Facet.BREAKING}),
        ("what changed in the config defaults?", {Facet.BEHAVIOUR}),
        ("new options or flags added?", {Facet.FEATURE}),
        ("anything deprecated?", {Facet.BEHAVIOUR}),
        ("有破坏性变更吗？", {Facet.BREAKING}),
        ("默认值有变化吗？", {Facet.BEHAVIOUR}),
        ("新增了哪些参数？", {Facet.FEATURE}),
    ],
)
def test_surface(text, facets):
    q = ask(text)
    assert q.intent == Intent.SURFACE and facets <= q.facets
    assert not q.about_commit(has_focus=True)  # the day's, even in a thread about one commit


def test_counts():
    q = ask("how many commits today?")
    assert q.intent == Intent.LIST and q.count and not (q.tiers or q.terms or q.author)
    q = ask("how many high-risk commits are there?")
    assert q.count and q.tiers == {Importance.HIGH}
    assert ask("今天有多少个提交？").count
    assert ask("how many commits touch tests?").terms == ("tests",)


def test_overview_and_unknown():
    assert ask("what's new today?").intent == Intent.OVERVIEW
    assert ask("今天有什么变化？").intent == Intent.OVERVIEW
    assert ask("what do you think of the weather?").intent == Intent.UNKNOWN
    assert ask("thanks!").intent == Intent.UNKNOWN


def test_language():
    assert ask("今天哪些提交风险最大？").lang == "zh"
    assert ask("what are the risks?").lang == "en"


def test_commits_named_by_url_sha_and_number():
    sha = "5e73e4900c1a2b3c4d5e6f708192a3b4c5d6e7f8"
    found, rest = named_commits(
        f"compare https://github.com/o/r/commit/{sha} with <https://github.com/o/r/pull/77|#77>,"
        " other/repo@abc1234def and #9 — not 20260129, not deadbeef-ish words like defaced"
    )
    assert found[0] == NamedCommit("sha", sha, "o/r")
    assert NamedCommit("pr", "77", "o/r") in found
    assert NamedCommit("sha", "abc1234def", "other/repo") in found
    assert NamedCommit("pr", "9") in found
    assert all(c.value not in ("20260129", "defaced") for c in found)
    assert sha not in rest
    digits = ask("what about 1234567?").commits
    assert digits == (NamedCommit("sha", "1234567", weak=True),)


def test_a_sha256_repositorys_commit_names_are_read():
    sha = "5e73e4900c1a2b3c4d5e6f708192a3b4c5d6e7f8" + "a1b2c3d4e5f60718293a4b5c"  # 64 hex
    assert ask(f"what does {sha} change?").commits == (NamedCommit("sha", sha),)
    found, _ = named_commits(f"see https://git.example/o/r/commit/{sha} and o/r@{sha[:12]}")
    assert NamedCommit("sha", sha, "o/r") in found and NamedCommit("sha", sha[:12], "o/r") in found


def test_chat_markup_is_read_through():
    q = ask("<@U0BOT> was <https://github.com/o/r/pull/5|this one> reverted?")
    assert q.intent == Intent.FOLLOWUPS and q.commits == (NamedCommit("pr", "5", "o/r"),)
    assert ask("what touches src/a.py &amp; src/b.py?").terms == ("src/a.py", "src/b.py")


def test_new_wordings_found_by_the_held_out_check():
    assert ask("Anything I should be nervous about in today's merges?").intent == Intent.RISKIEST
    scary = ask("give me the 2 scariest commits")
    assert scary.intent == Intent.RISKIEST and scary.limit == 2 and not scary.terms
    assert (
        ask("今天谁的提交最多？").authors_ranked and ask("who landed the most commits today?").authors_ranked
    )
    assert ask("mamba 相关的改动有哪些？").terms == ("mamba",)
    size = ask("它改了多少个文件？")
    assert size.intent == Intent.EXPLAIN and size.aspects == {Aspect.SIZE} and not size.terms
    assert ask("which commits changed test files today?").terms == ("test",)
    assert ask("would you ship today's changes to production?").author is None  # "ship today's" is no name


def test_the_one_is_no_count_and_dot_folders_keep_their_dot():
    assert ask("which is the one that scares you most?").limit is None
    assert ask("the two riskiest, please").limit == 2
    assert ask("which commits touch ./.github/workflows?").terms[0] == ".github/workflows"


# --- found by asking a realistic thread (thread-answers review) --------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "whcih comits are riskeist?",
        "waht are teh riskiest commmits today?",
        "which comits carry the most rsik?",
    ],
)
def test_slips_of_the_keyboard_read_as_the_keyword(text):
    q = ask(text)
    assert q.intent == Intent.RISKIEST and q.scope == "day"


def test_a_slip_is_one_swap_missing_or_doubled_letter_never_another_word():
    assert ask("waht are teh risks of #12?").aspects == {Aspect.RISKS}
    # "rises" is one letter from "risks", but a different letter is no slip
    assert Aspect.RISKS not in ask("what rises when the cache fills?").aspects
    assert ask("what touches src/widgets/tset.py?").terms == ("src/widgets/tset.py",)  # paths untouched


def test_a_two_character_chinese_name_is_an_author():
    q = parse_question("李明今天提交了什么？", authors=["李明", "Grace Hopper"])
    assert q.intent == Intent.LIST and q.author == "李明"


@pytest.mark.parametrize("text", ["how many authors today?", "今天有几位作者？"])
def test_how_many_authors_counts_authors(text):
    q = ask(text)
    assert q.intent == Intent.LIST and q.authors_ranked


@pytest.mark.parametrize(
    ("text", "facets"),
    [
        ("do any commits add environment variables?", {Facet.FEATURE}),
        ("new env vars?", {Facet.FEATURE}),
        ("which commits touch env vars?", set(Facet)),
        ("哪些提交新增了环境变量？", {Facet.FEATURE}),
    ],
)
def test_environment_variables_are_surface_questions(text, facets):
    q = ask(text)
    assert q.intent == Intent.SURFACE and q.env_vars and set(q.facets) == facets and not q.terms


@pytest.mark.parametrize(
    ("text", "ordinal"),
    [
        ("what does the second one do?", 2),
        ("and the first one?", 1),
        ("is the last one risky?", -1),
        ("第二个有什么风险？", 2),
        ("最后一个是谁写的？", -1),
    ],
)
def test_an_ordinal_names_one_commit_of_the_last_list(text, ordinal):
    q = ask(text)
    assert q.ordinal == ordinal and q.about_commit(False) and q.limit is None
    assert q.intent in (Intent.EXPLAIN, Intent.RISKIEST)


@pytest.mark.parametrize(
    "text",
    [
        "what was the last commit today?",
        "who made the first commit of the day?",
        "which was the last change before the release?",
        "the last commit by Grace?",
        "今天的第一个提交是谁写的？",
    ],
)
def test_first_and_last_in_words_are_no_place_in_a_list(text):
    assert ask(text).ordinal is None


def test_number_n_is_a_place_in_the_list_and_the_nth_commit_only_with_a_list():
    assert ask("what about number 2?").ordinal == 2
    assert ask("the first commit in the list?").ordinal == 1
    assert parse_question("what was the last commit?").ordinal == -1
    assert parse_question("what was the last commit?", listed=False).ordinal is None
    assert parse_question("is the last one risky?", listed=False).ordinal == -1  # nothing else it can be


@pytest.mark.parametrize(
    ("text", "words", "intent", "aspect"),
    [
        ("what does the bump version commit change?", ("bump", "version"), Intent.EXPLAIN, Aspect.SUMMARY),
        ("who wrote the scheduler revert?", ("scheduler", "revert"), Intent.EXPLAIN, Aspect.AUTHOR),
        ("what about the preempt commit?", ("preempt",), Intent.EXPLAIN, Aspect.SUMMARY),
        (
            "what are the risks of the scheduler rewrite?",
            ("scheduler", "rewrite"),
            Intent.EXPLAIN,
            Aspect.RISKS,
        ),
    ],
)
def test_a_commit_called_by_its_title(text, words, intent, aspect):
    q = ask(text)
    assert q.title_words == words and q.intent == intent and aspect in q.aspects and q.about_commit(False)


@pytest.mark.parametrize(
    "text", ["what are the risks of this change?", "is the big one risky?", "what does the commit change?"]
)
def test_words_around_the_commit_are_no_title(text):
    assert ask(text).title_words == ()


def test_a_pasted_log_is_read_by_its_start_and_its_end():
    log = "\n".join(f"ERROR worker-{i}: CUDA out of memory at step {i}" for i in range(1200))  # ~60 KB
    q = ask(f"did #123 cause this?\n{log}\nwas it reverted?")
    assert [c.value for c in q.commits] == ["123"] and q.intent == Intent.FOLLOWUPS
    assert q.text.endswith("was it reverted?")  # the question is kept whole; only its reading is bounded


@pytest.mark.parametrize(
    "shape",
    ["a-" * 20_000, "alice的提交" * 5_000, "a" * 40_000, "1" * 40_000, "Grace's " * 5_000, "#1 " * 13_000],
)
def test_hostile_40_kb_messages_are_read(shape):
    # Each of these once held the event loop for minutes (a pattern retried at every place in the text:
    # 40 KB of "a-" ran past an hour); the figures are bench/bench_hostile.py's.
    q = ask(shape)
    assert q.text == shape and len(q.commits) <= 700


def test_names_and_areas_are_read_only_from_word_starts():
    from analysis.questions.parse.areas import AREA_BEFORE
    from analysis.questions.parse.authors import POSSESSIVE, ZH_AUTHOR

    assert AREA_BEFORE.search("a-" * 20_000) is None and POSSESSIVE.search("a" * 40_000) is None
    assert ask("any spec-decode changes today?").terms == ("spec-decode",)
    assert ask("Grace Hopper's commits?").author == "Grace Hopper"
    assert ZH_AUTHOR.search("今天alice的提交").group("b") == "alice"


def test_short_shas_need_a_digit_and_a_letter_and_one_run_of_each_is_weak():
    assert ask("what does a1b2c3 change?").commits == (NamedCommit("sha", "a1b2c3"),)
    assert ask("and 3f9c2e?").commits == (NamedCommit("sha", "3f9c2e"),)
    assert ask("is the c10d change risky?").commits == (NamedCommit("sha", "c10d", weak=True),)  # a name too
    for word in ("what landed in 2025?", "is the cafe commit risky?", "how about 123?"):
        assert ask(word).commits == (), word  # a year, a hex word, three characters: no SHA
    q = ask("which commits touch a100 kernels?")
    assert q.commits == (NamedCommit("sha", "a100", weak=True),) and "a100" in " ".join(q.terms)
    as_word = parse_question("which commits touch a100 kernels?", words=["a100"])
    assert as_word.commits == () and as_word.intent == Intent.LIST and "a100 kernels" in as_word.terms


def test_the_days_measures_are_read_in_both_languages():
    for text in ("how many lines changed today?", "今天改了多少行？"):
        assert ask(text).lines_total and ask(text).intent == Intent.LIST, text
    for text in ("which commits have no tests?", "which commits lack tests?", "哪些提交没有测试？"):
        assert ask(text).untested, text
    for text in ("what's the biggest commit?", "which commit is the largest?", "最大的提交是哪个？"):
        assert ask(text).biggest, text
    for text in (
        "how many lines did it change?",
        "does it have no tests?",
        "what is the biggest risk today?",
    ):
        q = ask(text)
        assert not (q.lines_total or q.untested or q.biggest), text  # about the commit, or about risk
