"""Thread answers found wrong by an audit of real threads: short SHAs, a title naming one commit with a
risk word, day-wide questions after a focus, the model's Markdown and echoes, the data's new questions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from analysis.models import Importance
from bot.config.settings import Settings
from tests.bot.chat.test_qa import REPO, ask, commits, make_service, model_settings, posted
from tests.fakes.digests import make_analysis, make_commit
from tests.fakes.openai_server import FakeLLM


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(_env_file=None, digest_db=tmp_path / "digest.db", digest_repo=REPO, digest_lang="en")


@pytest.fixture
def llm():
    with FakeLLM() as fake:
        yield fake


def stored(store, *commits) -> None:
    """Commits of other days, analysed and stored (as a digest or a card leaves them)."""
    store.save_commits(commits)
    for commit in commits:
        store.save_analysis(REPO, make_analysis(commit, Importance.MEDIUM, lang="en"), "m", "v1")


# --- 1. a short SHA is that commit, or said to be none or several; never the focus -------------------


async def test_a_six_character_sha_of_the_day_is_that_commit_not_the_focus(settings, store):
    service = make_service(settings, store)
    await posted(service)
    day, _ = commits()
    await ask(service, "what does #103 change?")  # the focus is the typo
    answer = await ask(service, f"what are the risks of {day[1].sha[:6]}?")
    assert answer.cites == [day[1].sha] and "Fix cache eviction" in answer.plain()
    assert store.thread_focus("slack", "100.1") == (REPO, day[1].sha)


async def test_a_short_sha_no_commit_has_says_so_and_never_answers_about_the_focus(settings, store):
    service = make_service(settings, store)
    await posted(service)
    day, _ = commits()
    await ask(service, "what does #103 change?")
    unknown = "c0ffe3" if not any(c.sha.startswith("c0ffe3") for c in day) else "e0ffc3"
    answer = await ask(service, f"what does {unknown} change?")
    text = answer.plain()
    assert answer.cites == [] and "Doc] typo" not in text
    assert text.startswith(f"No commit I know of in {REPO} (this thread's day and the stored history) has")
    assert f"starting with {unknown}." in text
    assert store.thread_focus("slack", "100.1") == (REPO, day[2].sha)  # unchanged
    zh = await ask(service, f"{unknown} 改了什么？")
    assert zh.cites == [] and f"没有 SHA 以 {unknown} 开头的提交" in zh.plain()


async def test_a_short_sha_several_commits_start_lists_them_and_asks_which(settings, store):
    service = make_service(settings, store)
    await posted(service)
    twins = [make_commit(f"[Misc] Twin {i} (#{900 + i})", sha=f"a1b2c3{i}" + "0" * 33) for i in range(2)]
    stored(store, *twins)
    answer = await ask(service, "what does a1b2c3 change?")
    text = answer.plain()
    assert text.startswith(f"More than one commit of {REPO} has a SHA starting with a1b2c3:")
    assert "Twin 0" in text and "Twin 1" in text and answer.cites == []
    exact = await ask(service, "what does a1b2c31 change?")  # one more character: one commit
    assert exact.cites == [twins[1].sha]


async def test_a_weak_short_token_no_commit_has_is_read_as_a_word(settings, store):
    service = make_service(settings, store)
    await posted(service)
    await ask(service, "what does #103 change?")
    about_it = await ask(service, "what does abc123 change?")  # one run of letters, one of digits
    assert about_it.cites == [] and "starting with abc123" in about_it.plain()
    area = await ask(service, "which commits touch a100 kernels?")  # a product name, not a SHA
    assert area.kind == "list" and "starting with" not in area.plain()
    year = await ask(service, "what does 1234567 change?")  # digits only: a SHA only if a commit has it
    assert year.cites == [] and "starting with 1234567" in year.plain()


async def test_a_weak_short_token_is_a_commit_of_the_threads_day_never_one_of_the_long_history(
    settings, store
):
    service = make_service(settings, store)
    await posted(service)
    day, _ = commits()
    commit, prefix = next(
        (c, c.sha[:5])
        for c in day
        if any(ch.isdigit() for ch in c.sha[:5]) and any(ch.isalpha() for ch in c.sha[:5])
    )
    answer = await ask(service, f"who wrote {prefix}?")  # under six characters: weak, but the day's
    assert answer.cites == [commit.sha]
    special = replace(day[0], sha="abc123" + day[0].sha[6:])  # one run of letters, one of digits
    stored(store, special)  # stored, not of the day: as likely a chance prefix as the commit meant
    assert (await ask(service, "who wrote abc123?")).cites == []


# --- 2. words of exactly one title and a risk word: that commit's risks ------------------------------


async def test_a_word_of_one_title_with_a_risk_word_is_about_that_commit(settings, store):
    service = make_service(settings, store)
    await posted(service)
    day, _ = commits()
    await ask(service, "what does #101 change?")  # a focus that must not win either
    answer = await ask(service, "is eviction safe?")
    assert answer.cites == [day[1].sha] and answer.kind == "riskiest" and "Risks" in answer.plain()
    assert store.thread_focus("slack", "100.1") == (REPO, day[1].sha)
    zh = await ask(service, "eviction 安全吗？")
    assert zh.cites == [day[1].sha] and "潜在风险" in zh.plain()
    day_wide = await ask(service, "which commits are risky today?")  # the day's, as before
    assert len(day_wide.cites) >= 2


async def test_words_several_commits_hold_name_an_area_the_riskiest_among_them(settings, store):
    """Words in the paths of several commits ("are the kernels safe?") were dropped: the day's riskiest
    list came back, of all its commits."""
    service = make_service(settings, store)
    await posted(service)
    day, _ = commits()
    answer = await ask(service, "is app safe?")
    assert answer.kind == "riskiest" and sorted(answer.cites) == sorted([day[0].sha, day[1].sha])
    assert "the most risk among 2 matching" in answer.plain()


# --- 3. a day-wide question to the model after a focus: the day's commits ----------------------------


async def test_a_day_wide_question_to_the_model_gets_the_day_not_the_focus(settings, store, llm):
    service = make_service(model_settings(settings, llm), store)
    await posted(service)
    day, _ = commits()
    await ask(service, "what does #103 change?")  # the focus: the typo
    answer = await ask(service, "what else landed today?")
    assert answer.source == "llm"
    [request] = llm.log
    assert "the day's commits" in request.text and all(c.short_sha in request.text for c in day)
    assert "docs/index.md" not in request.text  # the focus's file list and diff are not the context
    followup = await ask(service, "hmm, and then?")  # no day in it: still the focus
    assert followup.source == "llm" and "docs/index.md" in llm.log[-1].text


# --- 4. the model's Markdown rendered, outside links dropped; its echo is no answer -------------------


async def test_the_models_markdown_is_posted_as_our_spans_without_outside_links(settings, store, llm):
    from analysis.questions.document import Strong
    from analysis.render.answer import slack_mrkdwn

    day, _ = commits()
    llm.reply(
        "## Watch\n| Commit | Why |\n|---|---|\n"
        f"| {day[0].short_sha} | the [rewrite](https://evil.example/phish) is large |\n"
        "Ping @channel if it stalls.",
        purpose="qa",
    )
    service = make_service(model_settings(settings, llm), store)
    await posted(service)
    answer = await ask(service, "so what should the on-call person expect tonight?")
    assert answer.source == "llm" and answer.lines[0] == (Strong("Watch"),)
    slack = slack_mrkdwn(answer)
    assert "evil.example" not in slack and "##" not in slack and "|---" not in slack
    assert "@channel" not in slack and f"• {day[0].short_sha} · the rewrite is large" in answer.plain()


async def test_a_model_answer_echoing_its_instructions_falls_back_to_the_data(settings, store, llm):
    llm.reply(
        "You answer questions asked in a chat thread about the commits of a software repository. Answer "
        "only from the data given (the stored analysis, the commit and its diff, the day's commits).",
        purpose="qa",
    )
    service = make_service(model_settings(settings, llm), store)
    await posted(service)
    answer = await ask(service, "so what should the on-call person expect tonight?")
    assert answer.source == "fallback"
    assert answer.plain().startswith(
        "(No model answer (it repeated its instructions). From the stored data:)"
    )
    assert "acme/widgets on 2026-01-26: 3 commits" in answer.plain()


async def test_a_looping_model_reply_is_cut_fast_and_an_invisible_one_falls_back(settings, store, llm):
    """A model caught in a loop wrote 24,000 characters of "a-": the fact check took 11 s on the event loop
    and the thread got dozens of messages; a reply of zero-width characters was posted as empty messages."""
    import time

    llm.reply("The scheduler rewrite is the riskiest change. " + "a-" * 12000, purpose="qa")
    service = make_service(model_settings(settings, llm), store)
    await posted(service)
    began = time.monotonic()
    answer = await ask(service, "so what should the on-call person expect tonight?")
    assert time.monotonic() - began < 5
    assert answer.source == "llm" and "the rest is not shown" in answer.plain()
    assert len(answer.plain()) < 5000
    llm.reply("\u200b\u200d\ufeff " * 3000, purpose="qa")
    empty = await ask(service, "so what should the on-call person expect tomorrow?")
    assert empty.source == "fallback" and empty.plain().startswith(
        "(No model answer (it had no visible text)."
    )


def test_zero_width_characters_in_a_question_are_not_read():
    from analysis.questions.parse import parse_question

    [named] = parse_question("was #1\u200b01 reverted?").commits
    assert named.value == "101"


# --- 6. measures of the day the data answers ---------------------------------------------------------


async def test_lines_untested_biggest_and_an_authors_first_name_need_no_model(settings, store, llm):
    service = make_service(model_settings(settings, llm), store)
    await posted(service)
    day, _ = commits()
    lines = await ask(service, "how many lines changed today?")
    assert lines.source == "data" and lines.plain().startswith(
        "1051 lines changed today (+1051 −0) in 3 commits"
    )
    untested = await ask(service, "哪些提交没有测试？")
    assert untested.source == "data" and untested.cites == [day[0].sha, day[2].sha]
    biggest = await ask(service, "what's the biggest commit?")
    assert biggest.cites[0] == day[0].sha
    second = await ask(service, "who wrote the second one?")  # a list like the others
    assert second.cites == [biggest.cites[1]]
    grace = await ask(service, "what did Grace do today?")
    assert grace.source == "data" and grace.cites == [day[1].sha] and "by Grace Hopper" in grace.plain()
    assert llm.calls == 0


async def test_a_busy_database_costs_a_threads_memory_a_quarter_second_not_the_loop(settings, store, caplog):
    """Another process holding the write lock made the focus write wait SQLite's 30 s busy timeout on the
    event loop: every ack of the service waited with it."""
    import logging
    import sqlite3
    import time

    service = make_service(settings, store)
    await posted(service)
    day, _ = commits()
    other = sqlite3.connect(store.path, timeout=0)
    other.execute("BEGIN IMMEDIATE")  # another digestbot process in a write transaction
    try:
        began = time.monotonic()
        with caplog.at_level(logging.WARNING):
            answer = await ask(service, "what does #102 change?")
        took = time.monotonic() - began
    finally:
        other.rollback()
        other.close()
    assert answer.cites == [day[1].sha] and took < 3
    assert "the thread's focus is not remembered" in caplog.text and "is busy" in caplog.text
    # the connection's own patience is back for everything else
    assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] == int(store.BUSY_TIMEOUT * 1000)
