"""Thread answers through the chat service: the conversation's focus (named, recalled, fetched from
another day), the model's answer fact-checked before posting, the per-thread cap, and the accounting
(llm_calls with purpose qa, `digestbot logs --purpose qa`, the metrics)."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner
from prometheus_client import generate_latest

from analysis.models import FileChange, key_of
from bot.app import chat_service
from bot.chat.floods import ThreadLimiter
from bot.chat.service import ChatService
from bot.cli.main import cli
from bot.config.settings import Settings
from bot.digest.analyzers import HeuristicAnalyzer
from bot.monitoring import metrics
from tests.fakes.digests import make_commit
from tests.fakes.openai_server import FakeLLM
from tests.fakes.sources import MemorySource

REPO = "acme/widgets"
TZ = ZoneInfo("Asia/Shanghai")
DAY = date(2026, 1, 26)
NOON = datetime(2026, 1, 26, 12, 0, tzinfo=TZ)


def fc(path: str, lines: int) -> FileChange:
    patch = f"@@ -1,1 +1,{lines} @@\n" + "\n".join(f"+limit_{i} = {i * 7}" for i in range(lines))
    return FileChange(path, "modified", lines, 0, patch)


def commits():
    day = [
        make_commit(
            "[Core] Rewrite the scheduler (#101)",
            committed_at=NOON,
            files=[fc("src/app/core/scheduler.py", 900)],
        ),
        make_commit(
            "[Bugfix] Fix cache eviction (#102)",
            author="Grace Hopper",
            committed_at=NOON - timedelta(hours=1),
            files=[fc("src/app/cache/evict.py", 120), fc("tests/cache/test_evict.py", 30)],
        ),
        make_commit(
            "[Doc] typo (#103)", committed_at=NOON - timedelta(hours=2), files=[fc("docs/index.md", 1)]
        ),
    ]
    older = make_commit(
        "[Feature] Add the cache (#90)",
        author="Ada Lovelace",
        committed_at=NOON - timedelta(days=20),
        files=[fc("src/app/cache/store.py", 300)],
    )
    return day, older


def make_service(settings: Settings, store, **kw) -> ChatService:
    day, older = commits()
    return chat_service(
        settings,
        store,
        source_factory=lambda repo: MemorySource(repo, [*day, older]),
        analyzer=HeuristicAnalyzer(),
        **kw,
    )


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(_env_file=None, digest_db=tmp_path / "digest.db", digest_repo=REPO, digest_lang="en")


async def posted(service: ChatService, thread: str = "100.1", channel: str = "C1") -> None:
    digest = await service.day_digest(REPO, DAY, "en", "Asia/Shanghai")
    service.store.record_post("slack", channel, key_of(digest), "parent", thread, thread)


async def ask(service: ChatService, question: str, thread: str = "100.1"):
    return await service.answer(service.thread_context("slack", thread), question)


async def test_a_named_commit_stays_the_focus_until_another_is_named(settings, store):
    service = make_service(settings, store)
    await posted(service)
    day, _ = commits()
    first = await ask(service, "what does #102 change?")
    assert first.cites == [day[1].sha] and first.source == "data"
    tests = await ask(service, "and what about its tests?")
    assert tests.cites == [day[1].sha] and "tests/cache/test_evict.py" in tests.plain()
    assert store.thread_focus("slack", "100.1") == (REPO, day[1].sha)
    restarted = make_service(settings, store)  # a new process: the focus is in the database
    assert (await ask(restarted, "who wrote it?")).plain().endswith("Author: Grace Hopper")
    other = await ask(restarted, f"and {day[0].short_sha}, is it risky?")
    assert other.cites == [day[0].sha]
    assert (await ask(restarted, "its size?")).cites == [day[0].sha]
    day_question = await ask(restarted, "which commits are risky today?")
    assert day_question.kind == "riskiest" and day[0].sha in day_question.cites  # the day, not the focus


async def test_a_commit_of_another_day_is_fetched_and_analysed_on_demand(settings, store):
    service = make_service(settings, store)
    await posted(service)
    _, older = commits()
    assert store.get_commit(REPO, older.sha) is None
    answer = await ask(service, "what are the risks of #90?")
    assert answer.cites == [older.sha] and "Add the cache" in answer.plain()
    assert store.get_commit(REPO, older.sha) is not None and store.latest_analysis(REPO, older.sha, "en")
    assert "Author: Ada Lovelace" in (await ask(service, "who wrote it?")).plain()
    missing = await ask(service, "was #4242 reverted?")
    assert missing.plain().startswith("I can't find #4242 in acme/widgets:") and missing.cites == []


async def test_without_a_model_an_unknown_question_gets_what_the_bot_can_answer(settings, store):
    service = make_service(settings, store)
    await posted(service)
    answer = await ask(service, "should we celebrate?")
    assert answer.source == "help" and "Was #101 reverted?" in answer.plain()
    zh = await ask(service, "今天天气怎么样？")
    assert zh.source == "help" and "#101 被回滚了吗？" in zh.plain()


HALLUCINATION = (
    "The scheduler rewrite {sha} (#101) is the riskiest change. It was reverted by 9f8e7d6c5b1a (#4242). "
    "It also rewrites src/app/engine/loop.py.\n"
    "Throughput improves by 37% and latency drops 2.5x.\n"
    "It touches 4321 lines; the cache fix {cache} adds 30 lines of tests."
)


@pytest.fixture
def llm():
    with FakeLLM() as fake:
        yield fake


def model_settings(settings: Settings, llm: FakeLLM, **kw) -> Settings:
    return settings.model_copy(update={"openai_base_url": llm.base_url, "digest_model": llm.model, **kw})


async def test_the_models_answer_is_fact_checked_before_posting(settings, store, llm):
    day, _ = commits()
    llm.reply(HALLUCINATION.format(sha=day[0].short_sha, cache=day[1].short_sha), purpose="qa")
    service = make_service(model_settings(settings, llm), store)
    await posted(service)
    answer = await ask(service, "so what should the on-call person expect tonight?")
    text = answer.plain()
    assert answer.source == "llm" and answer.removed == 4
    for invented in ("9f8e7d6c5b1a", "#4242", "src/app/engine/loop.py", "37%", "2.5x", "4321"):
        assert invented not in text
    assert f"The scheduler rewrite {day[0].short_sha} (#101) is the riskiest change." in text
    assert f"the cache fix {day[1].short_sha} adds 30 lines of tests" in text
    assert "4 statement(s) naming commits, files or figures that are not in the data were removed" in text
    assert answer.cites == [day[0].sha, day[1].sha]  # the commits it speaks about, linked
    assert set(answer.removed_items) >= {"9f8e7d6c5b1a", "#4242", "37%"}


async def test_a_model_answer_with_nothing_left_falls_back_to_the_data(settings, store, llm):
    llm.reply("Reverted by abcdef1234 (#4242); 99% of users saw src/app/x.py break.", purpose="qa")
    service = make_service(model_settings(settings, llm), store)
    await posted(service)
    day, _ = commits()
    answer = await ask(service, f"hmm, and {day[1].short_sha}?")  # vague: the model's turn
    text = answer.plain()
    assert answer.source == "fallback" and answer.removed == 2
    assert "was withheld" in text and "abcdef1234" not in text and "99%" not in text
    assert answer.cites == [day[1].sha] and "Fix cache eviction" in text


async def test_the_store_vouches_for_a_commit_the_day_does_not_hold(settings, store, llm):
    _, older = commits()
    llm.reply(f"It builds on {older.short_sha} (#90).", purpose="qa")
    service = make_service(model_settings(settings, llm), store)
    await posted(service)
    await ask(service, "what does #90 change?")  # now stored
    answer = await ask(service, "what do you make of the scheduler rewrite?", thread="100.1")
    assert answer.removed == 0 and f"{older.short_sha} (#90)" in answer.plain()


async def test_questions_the_data_answers_never_call_the_model(settings, store, llm):
    service = make_service(model_settings(settings, llm), store)
    await posted(service)
    for question in (
        "which commits are risky?",
        "was #101 reverted?",
        "how many commits today?",
        "谁写的 #102？",
    ):
        assert (await ask(service, question)).source == "data"
    assert llm.calls == 0


async def test_the_per_thread_cap_answers_politely(settings, store, llm):
    service = make_service(model_settings(settings, llm, qa_calls_per_minute=2), store)
    await posted(service)
    await posted(service, thread="200.1", channel="C2")
    for _ in range(2):
        assert (await ask(service, "thoughts on today?")).source == "llm"
    limited = await ask(service, "and more thoughts?")
    assert limited.source == "limited" and "please ask again in" in limited.plain()
    assert "Which of today's commits carry the most risk?" in limited.plain()
    assert (await ask(service, "which commits are risky?")).source == "data"  # the data needs no model
    assert (await ask(service, "thoughts?", thread="200.1")).source == "llm"  # another thread
    assert llm.by_purpose["qa"] == 3


def test_the_limiter_is_a_sliding_minute():
    now = [0.0]
    limiter = ThreadLimiter(2, clock=lambda: now[0])
    assert limiter.take("t") == 0 and limiter.take("t") == 0
    now[0] = 30.0
    assert limiter.take("t") == pytest.approx(30.0)
    now[0] = 60.0
    assert limiter.take("t") == 0


async def test_answer_calls_are_logged_counted_and_listed(settings, store, llm):
    service = make_service(model_settings(settings, llm), store)
    await posted(service)

    def count(name: str, **labels: str) -> float:
        return metrics.REGISTRY.get_sample_value(name, labels) or 0.0

    before_calls = count("digestbot_llm_calls_total", purpose="qa", outcome="ok")
    before_answers = count("digestbot_qa_answers_total", source="llm")
    before_data = count("digestbot_qa_answers_total", source="data")
    await ask(service, "what would you watch tonight?")
    await ask(service, "how many commits today?")
    rows = store.query("SELECT purpose, repo, outcome, prompt, reply FROM llm_calls WHERE purpose = 'qa'")
    assert len(rows) == 1 and rows[0]["repo"] == REPO and rows[0]["outcome"] == "ok"
    assert "what would you watch tonight?" in rows[0]["prompt"] and rows[0]["reply"]
    assert count("digestbot_llm_calls_total", purpose="qa", outcome="ok") == before_calls + 1
    assert count("digestbot_qa_answers_total", source="llm") == before_answers + 1
    assert count("digestbot_qa_answers_total", source="data") == before_data + 1
    assert b"digestbot_qa_removed_statements_total" in generate_latest(metrics.REGISTRY)
    logged = CliRunner().invoke(
        cli,
        ["--db", str(settings.digest_db), "logs", "--purpose", "qa", "--format", "json"],
        catch_exceptions=False,
    )
    assert logged.exit_code == 0 and [c["purpose"] for c in json.loads(logged.stdout)] == ["qa"]


async def test_the_thread_goes_to_the_model_newest_turns_first_within_the_budget(settings, store, llm):
    service = make_service(model_settings(settings, llm, llm_context_tokens=4096), store)
    await posted(service)
    ctx = service.thread_context("slack", "100.1")
    ctx.history = [("user", f"old remark {i} " + "blah " * 300) for i in range(40)] + [
        ("user", "LATEST TURN")
    ]
    await service.answer(ctx, "what do you think?")
    [request] = llm.log
    assert "LATEST TURN" in request.text and "old remark 0 " not in request.text
    assert request.prompt_tokens + (request.max_tokens or 0) <= 4096


async def test_a_question_naming_two_commits_answers_about_each(settings, store):
    service = make_service(settings, store)
    await posted(service)
    day, _ = commits()
    answer = await ask(service, "compare the risks of #101 and #102")
    assert answer.cites == [day[0].sha, day[1].sha]
    assert store.thread_focus("slack", "100.1") == (REPO, day[0].sha)  # the first named leads


async def test_a_reading_the_data_cannot_confirm_goes_to_the_model(settings, store, llm):
    service = make_service(model_settings(settings, llm), store)
    await posted(service)
    answer = await ask(service, "would you ship today's changes to production?")
    assert answer.source == "llm" and llm.by_purpose["qa"] == 1
    without = make_service(settings, store)
    plain = await ask(without, "would you ship today's changes to production?")
    assert plain.source == "data" and "No commit today matches (touching production)" in plain.plain()


# --- found by asking a realistic thread (thread-answers review) --------------------------------------


async def test_a_commit_called_by_its_title_is_that_commit_never_the_focus(settings, store):
    service = make_service(settings, store)
    await posted(service)
    day, _ = commits()
    await ask(service, "what does #103 change?")  # the focus is the typo
    answer = await ask(service, "who wrote the cache eviction fix?")
    assert answer.cites == [day[1].sha] and answer.plain().endswith("Author: Grace Hopper")
    assert store.thread_focus("slack", "100.1") == (REPO, day[1].sha)
    await ask(service, "what does #101 change?")
    fix = await ask(service, "what about the fix commit?")  # "Fix" starts a word of #102's title only
    assert fix.cites == [day[1].sha]
    none = await ask(service, "what about the frobnicator commit?")
    assert none.kind == "which commit" and none.cites == []
    assert none.plain().startswith("None of this thread's commits has “frobnicator” in its title.")


async def test_a_title_phrase_no_title_holds_is_not_answered_about_the_focus(settings, store):
    service = make_service(settings, store)
    await posted(service)
    day, _ = commits()
    await ask(service, "what does #101 change?")
    answer = await ask(service, "is the app commit risky?")  # no title says "app": paths do not count
    assert answer.kind == "which commit" and answer.cites == [] and day[0].short_sha not in answer.plain()
    typo = await ask(service, "who wrote the [doc] typo commit?")  # "[doc]" is no word; "typo" is
    assert typo.cites == [day[2].sha]


async def test_the_second_one_is_the_second_of_the_threads_last_list(settings, store):
    service = make_service(settings, store)
    await posted(service)
    before = await ask(service, "what does the second one do?")
    assert before.kind == "which commit" and before.plain().startswith("I have not listed commits")
    listed = await ask(service, "which commits are risky today?")
    assert len(listed.cites) >= 2
    second = await ask(service, "what does the second one do?")
    assert second.cites == [listed.cites[1]] and second.source == "data"
    restarted = make_service(settings, store)  # the list is in the database
    assert (await ask(restarted, "and the first one?")).cites == [listed.cites[0]]
    assert (await ask(restarted, "最后一个是谁写的？")).cites == [listed.cites[-1]]
    beyond = await ask(restarted, "the ninth one?")
    assert beyond.plain().startswith(f"My last list in this thread had {len(listed.cites)} commit(s)")


async def test_only_a_list_answer_becomes_the_threads_list(settings, store):
    service = make_service(settings, store)
    await posted(service)
    day, _ = commits()
    listed = await ask(service, "which commits are risky today?")
    assert len(listed.cites) >= 2 and store.thread_listing("slack", "100.1")[1] == listed.cites
    both = await ask(service, "what do #101 and #103 change?")  # two commits cited, about each: no list
    assert both.cites == [day[0].sha, day[2].sha]
    assert store.thread_listing("slack", "100.1")[1] == listed.cites
    assert (await ask(service, "what does the second one do?")).cites == [listed.cites[1]]


async def test_first_and_last_in_words_are_the_days_without_a_list(settings, store):
    service = make_service(settings, store)
    await posted(service)
    for question in ("who made the first commit of the day?", "what was the last commit?"):
        answer = await ask(service, question)
        assert not answer.plain().startswith("I have not listed commits"), question
    store.set_thread_listing("slack", "100.1", REPO, ["d" * 40, "e" * 40])  # listed, since gone everywhere
    gone = await ask(service, "what does the second one do?")
    assert gone.kind == "not found" and gone.plain().startswith("I can't find eeeeeeeeeeee in acme/widgets:")
    assert "My last list" not in gone.plain()


async def test_a_question_in_a_thread_that_is_not_ours_says_where_to_ask(settings, store):
    service = make_service(settings, store)
    answer = await service.answer(service.thread_context("slack", "999.9"), "what are the risks today?")
    text = answer.plain()
    assert text.startswith("I don't know which digest this thread belongs to.") and "/digest <sha>" in text


async def test_a_model_that_never_answers_leaves_the_data_answer_after_the_qa_timeout(settings, store, llm):
    service = make_service(model_settings(settings, llm, qa_answer_timeout=5), store)
    await posted(service)
    assert (await ask(service, "what would you watch today?")).source == "llm"  # the client is up
    service.settings = service.settings.model_copy(update={"qa_answer_timeout": 0.5})
    llm.delay(30, purpose="qa", times=1)  # hung: the client alone would wait LLM_TIMEOUT per attempt
    late = await ask(service, "what would you watch tonight?")
    assert late.source == "fallback" and late.plain().startswith("(No model answer (none within 0.5 s).")
    assert "acme/widgets on 2026-01-26: 3 commits" in late.plain()
    assert (await ask(service, "and tomorrow?")).source == "llm"  # the client took no harm from the cut


async def test_a_card_whose_analysis_was_deleted_is_analysed_again_for_its_question(settings, store):
    """A `/digest <sha>` card's thread reads the commit's stored analysis: with that row gone (deleted, a
    database restored without it), "what are the risks?" got the bare title and nothing else."""
    from analysis.refs import parse_ref
    from bot.ports.protocols import Posted

    service = make_service(settings, store)
    day, _ = commits()
    commit, _ = await service.card(parse_ref(day[1].sha, REPO), "en")
    service.record_card("slack", "C1", commit, "en", Posted("200.1", "200.1"))
    before = (await ask(service, "what are the risks?", thread="200.1")).plain()
    assert "Risks:" in before
    store.db.execute("DELETE FROM analyses")
    after = await ask(service, "what are the risks?", thread="200.1")
    assert after.plain() == before and after.cites == [commit.sha]
    assert store.latest_analysis(REPO, commit.sha, "en") is not None  # stored again


class PaidAnalyzer:
    """The heuristic's analyses under another name: an analyser whose calls count against the card rate."""

    def __init__(self) -> None:
        self._inner = HeuristicAnalyzer()
        self.model, self.prompt_version = "paid-model", "p-test"

    def __getattr__(self, name: str):
        return getattr(self._inner, name)


async def test_a_thread_naming_new_commits_is_held_to_the_card_rate(settings, store):
    service = make_service(settings.model_copy(update={"chat_cards_per_minute": 1}), store)
    service._analyzer = PaidAnalyzer()
    await posted(service)
    _, older = commits()
    first = await ask(service, "what are the risks of #90?")  # fetched and analysed: counted
    assert first.cites == [older.sha]
    store.db.execute("DELETE FROM analyses WHERE sha = ?", [older.sha])  # as if it were another new commit
    refused = await ask(service, "and the risks of #90 again?")
    assert refused.cites == [] and "limit on new commit analyses here (1 a minute)" in refused.plain()
    await posted(service, thread="200.2", channel="C2")
    other_thread = await ask(service, "what are the risks of #90?", thread="200.2")
    assert other_thread.cites == [older.sha]  # the rate is the thread's, not the bot's


async def test_a_card_analysed_again_for_its_thread_is_held_to_the_card_rate(settings, store):
    """The thread of a card whose analysis row is gone has the commit analysed again: a new model
    analysis, counted against the thread's CHAT_CARDS_PER_MINUTE like a commit the thread names; past it
    the asker hears when to ask again instead of the model being asked once per question."""
    from analysis.refs import parse_ref
    from bot.ports.protocols import Posted

    service = make_service(settings.model_copy(update={"chat_cards_per_minute": 1}), store)
    paid = service._analyzer = PaidAnalyzer()
    calls: list[str] = []
    analyze = paid._inner.analyze

    async def counted(batch, lang, **kw):
        calls.extend(c.sha for c in batch)
        return await analyze(batch, lang, **kw)

    paid._inner.analyze = counted
    day, _ = commits()
    commit, _ = await service.card(parse_ref(day[1].sha, REPO), "en")  # no asker: not counted
    service.record_card("slack", "C1", commit, "en", Posted("200.1", "200.1"))
    store.db.execute("DELETE FROM analyses")
    again = await ask(service, "what are the risks?", thread="200.1")  # analysed again: counted
    assert "Risks:" in again.plain() and again.cites == [commit.sha]
    store.db.execute("DELETE FROM analyses")
    refused = await ask(service, "what are the risks now?", thread="200.1")
    assert "limit on new commit analyses here (1 a minute)" in refused.plain()
    assert commit.short_sha in refused.plain() and refused.cites == []
    assert calls == [commit.sha, commit.sha]  # the card, the first re-analysis; not the refused one
