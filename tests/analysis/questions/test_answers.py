"""Answers from the data: every question kind, in both languages, citing the commits it speaks about."""

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from analysis.history.followups import FollowUpKind
from analysis.models import FileChange, Importance, SurfaceChange, SurfaceKind
from analysis.questions.answers import answer_from_data, focus_answer, help_answer, unresolved_answer
from analysis.questions.day_answers import LIST_MAX
from analysis.questions.document import FollowUpFact, QAData
from analysis.questions.matching import author_matches, titled, touches
from analysis.questions.parse import parse_question
from tests.fakes.digests import make_analysis, make_commit

TZ = ZoneInfo("Asia/Shanghai")
NOON = datetime(2026, 1, 26, 12, 0, tzinfo=TZ)


def fc(path: str, add: int = 10, dele: int = 2) -> FileChange:
    return FileChange(path, "modified", add, dele, "@@ -1 +1 @@\n-a\n+b")


def day() -> QAData:
    """Five commits: a scheduler rewrite (high, riskiest by score), an API change with surface facts
    (high), a cache fix with tests (medium), a docs typo (low), and one whose files were not read."""
    sched = make_commit(
        "[Core] Rewrite the scheduler (#101)",
        author="Grace Hopper",
        committed_at=NOON,
        files=[fc("src/app/core/sched/scheduler.py", 800, 200)],
    )
    api = make_commit(
        "[API] Rename serve options (#102)",
        author="linus-t",
        committed_at=NOON - timedelta(hours=1),
        files=[fc("src/app/cli/serve.py", 120, 40)],
    )
    api = _with_surface(
        api,
        (
            SurfaceChange(
                SurfaceKind.OPTION_RENAMED,
                "--max-batch",
                "src/app/cli/serve.py",
                10,
                "--batch",
                "--max-batch",
            ),
            SurfaceChange(
                SurfaceKind.DEFAULT_CHANGED, "serve.timeout", "src/app/cli/serve.py", 20, "30", "60"
            ),
            SurfaceChange(SurfaceKind.OPTION_ADDED, "--trace", "src/app/cli/serve.py", 30),
        ),
    )
    cache = make_commit(
        "[Bugfix] Fix cache eviction (#103)",
        author="Ada Lovelace",
        committed_at=NOON - timedelta(hours=2),
        files=[fc("src/app/cache/evict.py"), fc("tests/cache/test_evict.py", 40, 0)],
    )
    cache = _with_surface(cache, ())
    typo = make_commit(
        "[Doc] typo (#104)",
        author="Ada Lovelace",
        committed_at=NOON - timedelta(hours=3),
        files=[fc("docs/index.md", 1, 1)],
    )
    typo = _with_surface(typo, ())
    commits = [sched, api, cache, typo]
    analyses = {
        sched.sha: make_analysis(
            sched, Importance.HIGH, risks=["scheduler stalls under load"], lang="en"
        ).model_copy(update={"risk_score": 0.9}),
        api.sha: make_analysis(
            api, Importance.HIGH, risks=["scripts using --batch break"], lang="en"
        ).model_copy(update={"risk_score": 0.5}),
        cache.sha: make_analysis(cache, Importance.MEDIUM, risks=["stale entries"], lang="en"),
        typo.sha: make_analysis(typo, Importance.LOW, lang="en"),
    }
    return QAData(repo="acme/widgets", tz=TZ, commits=commits, analyses=analyses, day=date(2026, 1, 26))


def _with_surface(commit, surface):
    from dataclasses import replace

    return replace(commit, surface=surface)


def answer(text: str, data: QAData | None = None):
    data = data or day()
    result = answer_from_data(parse_question(text, authors=data.authors()), data)
    assert result is not None
    return result, result.plain(), data


def test_riskiest_follows_the_risk_score_then_the_tier():
    a, text, data = answer("Which of today's commits carry the most risk?")
    sched, api, cache, _ = data.commits
    assert a.cites == [sched.sha, api.sha, cache.sha]  # the low commit lists no risks: not risky
    assert text.index("Rewrite the scheduler") < text.index("Rename serve options")
    assert "scheduler stalls under load" in text and "(3 of 4 today" in text
    top, text, _ = answer("top 1 riskiest commits")
    assert top.cites == [sched.sha]


def test_riskiest_in_chinese():
    _, text, _ = answer("今天哪些提交风险最大？")
    assert text.startswith("风险最高的提交") and "风险：scheduler stalls" in text


def test_a_tier_lists_its_commits_with_one_line_each():
    a, text, data = answer("list the high commits")
    assert a.cites == [c.sha for c in data.commits[:2]]
    assert "high commits today: 2 of 4" in text
    mid, text, data = answer("中等重要度的提交有哪些？")
    assert mid.cites == [data.commits[2].sha] and "今日中重要度提交：1 个" in text


def test_commits_touching_a_path_or_an_area():
    a, _, data = answer("what touches the scheduler today?")
    assert a.cites == [data.commits[0].sha]
    a, _, data = answer("which commits touch src/app/cli?")
    assert a.cites == [data.commits[1].sha]
    a, _, data = answer("which commits touch tests?")
    assert a.cites == [data.commits[2].sha]
    a, _, data = answer("哪些提交改动了调度器？")
    assert a.cites == [data.commits[0].sha]
    a, text, _ = answer("anything touching the renderer?")
    assert a.cites == [] and "No commit today matches (touching renderer)" in text


def test_area_words_match_at_word_starts_only():
    data = day()
    sched = data.commits[0]
    assert touches(sched, None, "sched") and touches(sched, None, "core")
    assert not touches(sched, None, "heduler") and not touches(sched, None, "ore")
    assert touches(sched, None, "src/app/core") and not touches(sched, None, "src/ap")


def test_a_plural_finds_its_singular_as_a_whole_word_only():
    from analysis.questions.matching import term_in

    # "which commits touch docs?" listed commits that only changed docker/Dockerfile
    assert not term_in(["docker/dockerfile", "[ci] fix the docker build"], "docs")
    assert term_in(["doc/usage.md"], "docs") and term_in(["docs/usage.md"], "docs")
    assert term_in(["tests/test_x.py"], "tests") and term_in(["test_x.py"], "tests")


def test_commits_by_an_author():
    a, text, data = answer("commits by Ada Lovelace")
    assert (
        a.cites == [c.sha for c in data.commits[2:]]
        and "2 of 4 commits today match (by Ada Lovelace)" in text
    )
    a, text, _ = answer("what did nobody-here land today?")
    assert a.cites == [] and "Authors today: Ada Lovelace, Grace Hopper, linus-t" in text
    assert author_matches("ada", data.commits[2]) and not author_matches("grace", data.commits[2])


def test_counts():
    _, text, _ = answer("how many commits today?")
    assert text == "4 commits today: 2 high, 1 medium, 1 low."
    a, text, _ = answer("how many high-risk commits are there?")
    assert "2 of 4 commits today match (high)" in text and len(a.cites) == 2
    _, text, _ = answer("今天有多少个提交？")
    assert text == "今日共 4 个提交：高 2 个，中 1 个，低 1 个。"


def test_a_commits_follow_ups():
    data = day()
    sched = data.commits[0]
    later = datetime(2026, 1, 28, 3, 0, tzinfo=UTC)
    data.later[sched.sha] = [
        FollowUpFact(FollowUpKind.REVERT, "f" * 40, 'Revert "Rewrite the scheduler"', "#130", None, later)
    ]
    a, text, _ = answer("was #101 reverted?", data)
    assert a.cites == [sched.sha]
    assert "⚠️ reverted by #130 on 2026-01-28: fffffff Revert" in text
    data.later.clear()
    data.history_until = datetime(2026, 2, 3, tzinfo=UTC)
    _, text, _ = answer("was #101 reverted?", data)
    assert "No revert or fix-forward of it is recorded (history known up to 2026-02-03)." in text
    _, zh, _ = answer("#101 被回滚了吗？", data)
    assert "没有记录显示它被回滚或修复跟进（已知历史截至 2026-02-03）" in zh


def test_the_days_follow_ups():
    data = day()
    cache = data.commits[2]
    earlier = datetime(2026, 1, 20, tzinfo=UTC)
    data.earlier[cache.sha] = [
        FollowUpFact(FollowUpKind.FIX, "e" * 40, "Add cache (#90)", "#90", None, earlier)
    ]
    a, text, _ = answer("Was anything reverted or fixed today?", data)
    assert a.cites == [cache.sha] and "fixes forward #90 (committed 2026-01-20)" in text
    data.earlier.clear()
    _, text, _ = answer("any reverts?", data)
    assert text.startswith("No commit of this day is known to have been reverted")


def test_what_a_commit_changes_and_each_aspect():
    data = day()
    cache = data.commits[2]
    data.focus = cache
    a, text, _ = answer("what does it change?", data)
    assert a.cites == [cache.sha] and f"Summary of {cache.short_sha}" in text and "Medium" in text
    _, text, _ = answer("and its tests?", data)
    assert "Tests changed (1):" in text and "tests/cache/test_evict.py (+40 −0)" in text
    _, text, _ = answer("which files did it touch?", data)
    assert "Files changed (2, +50 −2):" in text
    _, text, _ = answer("who wrote it?", data)
    assert "Author: Ada Lovelace" in text
    _, text, _ = answer("when did it land?", data)
    assert "Committed 2026-01-26 10:00 (Asia/Shanghai)." in text
    _, text, _ = answer("how big is it?", data)
    assert "Size: 52 lines changed (+50 −2) in 2 files." in text
    _, text, _ = answer("why was it ranked like that?", data)
    assert "Ranked medium: " in text
    _, text, _ = answer("should we do anything about it?", data)
    assert f"check {cache.short_sha}" in text
    _, text, _ = answer("what kind of change is it?", data)
    assert "Change type: " in text
    data.focus = data.commits[3]
    _, text, _ = answer("这个提交有什么风险？", data)
    assert "潜在风险：分析中没有列出。" in text


def test_a_commit_question_without_a_commit_asks_which():
    _, text, data = answer("who wrote it?")
    assert text.startswith("Which commit?") and f"#{data.commits[0].pr_number}" in text


def test_surface_changes_of_the_day():
    data = day()
    api = data.commits[1]
    a, text, _ = answer("any breaking changes today?", data)
    assert a.cites == [api.sha]
    assert (
        "command-line option renamed: --max-batch (--batch → --max-batch); no alias at src/app/cli/serve.py:10"
        in text
    )
    assert "default changed" not in text
    assert "Not known for 1 of 4 commits" in text  # the scheduler rewrite's files were not read
    _, text, _ = answer("what changed in the defaults?", data)
    assert (
        "default changed: serve.timeout (30 → 60) at src/app/cli/serve.py:20" in text
        and "--trace" not in text
    )
    _, text, _ = answer("新增了哪些参数？", data)
    assert "新增命令行选项：--trace，位于 src/app/cli/serve.py:30" in text and "added" not in text


def test_a_surface_fact_in_a_vendored_looking_tree_is_not_an_answer():
    # The surface step reads third_party/<name>/ trees in case the branch maintains them; without the
    # history that says so, a fact there is someone else's code's.
    data = day()
    copied = SurfaceChange(SurfaceKind.REMOVED, "zlib.inflate_fast", "third_party/zlib/inflate.py", 3)
    data.commits[1] = _with_surface(data.commits[1], (*data.commits[1].surface, copied))
    _, text, _ = answer("any breaking changes today?", data)
    assert "--max-batch" in text and "inflate_fast" not in text


def test_surface_not_known_is_said_plainly():
    data = day()
    data.commits = [data.commits[0]]  # surface None: its files were not read
    _, text, _ = answer("any breaking changes today?", data)
    assert text.startswith("Not known: the files before and after today's commits were not read")
    _, zh, _ = answer("有破坏性变更吗？", data)
    assert zh.startswith("未知：")
    data = day()
    data.focus = data.commits[0]
    _, text, _ = answer("does it change any defaults?", data)
    assert "Not known: the files of #101 before and after were not read" in text


def test_overview_and_long_lists_cite_every_commit():
    base = day()
    many = [
        make_commit(
            f"[Core] step {i} (#{500 + i})",
            committed_at=NOON - timedelta(minutes=i),
            files=[fc("src/core/x.py")],
        )
        for i in range(LIST_MAX + 5)
    ]
    data = QAData(
        repo="acme/widgets",
        tz=TZ,
        commits=many,
        analyses={c.sha: make_analysis(c, Importance.HIGH, lang="en") for c in many},
        day=base.day,
    )
    a, text, _ = answer("what's new today?", data)
    assert "acme/widgets on 2026-01-26: 20 commits — 20 high, 0 medium, 0 low." in text
    assert a.cites == [c.sha for c in many]  # the last five in one line of links, none dropped
    assert "…and 5 more: " in text


def test_help_names_two_real_examples_and_differs_from_the_data_answers():
    data = day()
    first, second = help_answer("en", data).plain().splitlines()[-2:]
    assert first == "• Which of today's commits carry the most risk?" and second == "• Was #101 reverted?"
    assert (
        "不能" not in help_answer("zh", data).plain()
        and "#101 被回滚了吗？" in help_answer("zh", data).plain()
    )
    assert answer_from_data(parse_question("what's the weather?"), data) is None
    texts = {
        answer(q)[1] for q in ("which commits are risky?", "how many commits today?", "list the high commits")
    }
    assert len(texts) == 3  # never one template for everything


def test_the_fallback_is_the_focus_or_the_day():
    data = day()
    assert (
        "Commits" not in focus_answer(data, "en").plain()
        and "acme/widgets on 2026-01-26" in focus_answer(data, "en").plain()
    )
    data.focus = data.commits[0]
    assert "scheduler stalls under load" in focus_answer(data, "en").plain()


def test_who_landed_the_most():
    a, text, data = answer("who landed the most commits today?")
    lines = text.splitlines()
    assert lines[0] == "3 authors landed 4 commits today, most first:"
    assert lines[1].startswith("• Ada Lovelace (2): ") and a.cites[:2] == [c.sha for c in data.commits[2:]]
    _, zh, _ = answer("今天谁的提交最多？")
    assert zh.splitlines()[0] == "今日 3 位作者提交了 4 个提交，按数量排序："


def test_an_area_nothing_touches_may_be_a_misreading():
    a, text, _ = answer("would you ship today's changes to production?")
    assert "No commit today matches (touching production)" in text and not a.confident  # the model may try
    assert answer("anything touching src/renderer.py?")[0].confident  # a path means what it says
    assert answer("list the high commits")[0].confident


def test_environment_variable_questions_list_only_environment_variables():
    data = day()
    api = data.commits[1]
    env = SurfaceChange(SurfaceKind.ENV_ADDED, "APP_TRACE_DIR", "src/app/cli/serve.py", 31)
    data.commits[1] = _with_surface(api, (*api.surface, env))
    a, text, _ = answer("do any commits add environment variables?", data)
    assert a.cites == [api.sha] and "environment variable added: APP_TRACE_DIR" in text
    assert "--trace" not in text and "--max-batch" not in text  # options are not environment variables
    assert text.startswith("User-facing changes found today (new environment variables): 1 in 1 commit(s).")
    _, none, _ = answer("which commits touch env vars?", day())
    assert none.startswith("No environment variables added, removed or renamed found in the 3 commits")


def test_a_surface_answer_says_how_many_it_found():
    _, text, _ = answer("how many breaking changes today?")
    assert text.startswith("User-facing changes found today (breaking changes): 1 in 1 commit(s).")
    _, zh, _ = answer("今天有几处默认值变化？")
    assert zh.startswith("今日发现的对用户可见的变化（默认值与行为变化）：1 个提交中共 1 处。")


def test_a_title_phrase_several_commits_share_lists_them_and_guesses_none():
    data = day()
    data.commits.append(make_commit("[Bugfix] Fix scheduler stall (#105)", committed_at=NOON))
    q = parse_question("who wrote the scheduler commit?", authors=data.authors())
    matches = titled(q, data)
    assert [c.pr_number for c in matches] == [101, 105]
    a = unresolved_answer(q, data, matches)
    assert a.cites == [c.sha for c in matches] and a.kind == "which commit"
    assert a.plain().startswith("2 of this thread's commits have “scheduler” in their title:")
    assert "Which commit? Name it with #N" in a.plain()


def test_an_overview_of_a_day_without_high_commits_lists_the_medium_ones():
    data = day()
    for sha, an in list(data.analyses.items()):
        if an.importance == Importance.HIGH:
            data.analyses[sha] = an.model_copy(update={"importance": Importance.MEDIUM})
    a, text, _ = answer("what's new today?", data)
    assert "No high commit today.\nMedium:\n• " in text
    assert a.cites == [c.sha for c in data.commits[:3]]  # the three medium ones, the low typo left out


def test_words_of_exactly_one_title_name_that_commit():
    from dataclasses import replace

    from analysis.questions.matching import loosely_titled

    data = day()
    xxhash = replace(data.commits[0], sha="f" * 40, message="[Perf] Use xxhash for the prefix cache (#105)")
    data.commits.append(xxhash)
    assert loosely_titled(parse_question("is xxhash safe?"), data) is xxhash
    assert loosely_titled(parse_question("xxhash 有风险吗？"), data) is xxhash
    assert loosely_titled(parse_question("Is xxhash safe to use?"), data) is xxhash
    for text in ("is it safe?", "which commits are risky today?", "is the cache safe?"):
        assert loosely_titled(parse_question(text), data) is None, text  # "it", the day, two titles
    data.commits[3] = replace(data.commits[3], files=(fc("src/app/xxhash/bindings.py"),))
    assert loosely_titled(parse_question("is xxhash safe?"), data) is None  # an area another commit touches


def test_surface_facts_in_a_chinese_answer_are_worded_in_chinese():
    from analysis.questions.wording import SURFACE_KINDS_ZH

    assert set(SURFACE_KINDS_ZH) == set(SurfaceKind)  # every kind a parser finds has its words
    data = day()
    api = data.commits[1]
    env = SurfaceChange(SurfaceKind.ENV_ADDED, "APP_TRACE_DIR", "src/app/cli/serve.py", 31)
    data.commits[1] = _with_surface(api, (*api.surface, env))
    _, text, _ = answer("今天有破坏性变更吗？", data)
    assert (
        "重命名命令行选项：--max-batch（--batch → --max-batch）；没有别名，位于 src/app/cli/serve.py:10"
        in text
    )
    assert "renamed" not in text and "no alias" not in text
    _, env_text, _ = answer("有新增的环境变量吗？", data)
    assert "新增环境变量：APP_TRACE_DIR，位于 src/app/cli/serve.py:31" in env_text
    assert "environment variable added" not in env_text
    _, one, _ = answer(f"{api.short_sha} 有破坏性变更吗？", data)
    assert "• 重命名命令行选项：--max-batch" in one


def test_lines_changed_today_are_summed():
    _, text, data = answer("how many lines changed today?")
    add = sum(c.total_additions for c in data.commits)
    dele = sum(c.total_deletions for c in data.commits)
    assert text == f"{add + dele} lines changed today (+{add} −{dele}) in 4 commits."
    _, zh, _ = answer("今天改了多少行？")
    assert zh == f"今日 4 个提交共改动 {add + dele} 行（+{add} −{dele}）。"
    _, ada, _ = answer("how many lines did Ada change today?")
    assert ada == "54 lines changed today (+51 −3) in the 2 commits matching (by Ada Lovelace)."


def test_commits_without_tests_are_listed_the_most_important_first():
    a, text, data = answer("which commits have no tests?")
    sched, api, cache, typo = data.commits
    assert a.cites == [sched.sha, api.sha, typo.sha] and cache.sha not in a.cites  # the cache fix has tests
    assert text.startswith("3 of 4 commits today change no test file:")
    zh, zh_text, _ = answer("哪些提交没有测试？")
    assert zh.cites == a.cites and zh_text.startswith("今日 4 个提交中有 3 个没有修改测试文件：")
    from dataclasses import replace

    data.commits[0] = replace(sched, files_total=5)  # four of its files were not read: it may have tests
    partly, partly_text, _ = answer("which commits lack tests?", data)
    assert sched.sha not in partly.cites and "Not known for 1 commit(s)" in partly_text


def test_the_biggest_commits_by_changed_lines():
    a, text, data = answer("what's the biggest commit?")
    sched, api, cache, _ = data.commits
    assert a.cites == [sched.sha, api.sha, cache.sha]
    assert text.startswith("The biggest commits by changed lines (3 of 4):")
    assert "Rewrite the scheduler (#101) (high) — Size: 1000 lines changed (+800 −200) in 1 file." in text
    assert answer("top 1 biggest commits")[0].cites == [sched.sha]
    zh, zh_text, _ = answer("最大的提交是哪个？")
    assert zh.cites == a.cites and "规模：1 个文件，共改动 1000 行" in zh_text
    assert answer("风险最大的提交是哪个？")[0].kind == "riskiest"  # the most risk, not the most lines


def test_what_an_author_did_by_first_or_last_name_or_login():
    for question in ("what did Ada do?", "what did lovelace do today?", "Ada 今天做了什么？"):
        a, _, data = answer(question)
        assert a.cites == [data.commits[2].sha, data.commits[3].sha], question
    linus, _, data = answer("what did linus do?")
    assert linus.cites == [data.commits[1].sha]
