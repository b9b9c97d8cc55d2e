"""The follow-up radar end to end: two consecutive days through the real pipeline, posted to the fake
Slack and the fake Discord, where the second day reverts a high commit of the first and fixes a medium
one forward. The links are put in the store as the history step leaves them (find_links over the
commits), then the second day's post banners the first day's card once, and never again."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from adapters.discord.poster import open_discord_poster
from adapters.slack.client import make_client
from adapters.slack.poster import SlackPoster
from analysis.history.followups import PastCommit, find_links
from analysis.models import Analysis, Commit, Importance
from analysis.refs import parse_ref
from analysis.render.json_report import render_json
from analysis.render.markdown import render_report
from analysis.render.slack_blocks import parent_message
from bot.config.settings import Settings
from bot.delivery.posting import post_digest
from bot.digest.analyzers import HeuristicAnalyzer
from bot.digest.pipeline import analyse_ref, build_digest
from bot.json_schema import DigestJSON
from bot.store.db import Store
from tests.fakes.digests import make_analysis, make_commit
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.slack_api import FakeSlack
from tests.fakes.sources import MemorySource

REPO = "acme/widgets"
TZ = ZoneInfo("Asia/Shanghai")
DAY1, DAY2 = date(2026, 1, 26), date(2026, 1, 27)
CHANNEL = "C0DIGEST"
DISCORD_CHANNEL = "900000000000000100"


def at(day: date, hour: int) -> datetime:
    return datetime(day.year, day.month, day.day, hour, 0, tzinfo=TZ)


FAST = make_commit("[Core] Fast path for widgets (#2001)", committed_at=at(DAY1, 10))
CACHE = make_commit("[Perf] Cache widget lookups (#2002)", committed_at=at(DAY1, 11))
DOCS = make_commit("[Docs] Typo (#2003)", committed_at=at(DAY1, 12))
REVERT = make_commit('Revert "[Core] Fast path for widgets (#2001)" (#2010)', committed_at=at(DAY2, 9))
FIX = make_commit("[Bugfix] Fix stale cache after #2002 (#2011)", committed_at=at(DAY2, 10))
OTHER = make_commit("[Feature] Widget colours (#2012)", committed_at=at(DAY2, 11))
COMMITS = [FAST, CACHE, DOCS, REVERT, FIX, OTHER]
RANKS = {FAST.sha: "high", CACHE.sha: "medium", DOCS.sha: "low", REVERT.sha: "medium", FIX.sha: "low"}


class FixedAnalyzer:
    """Known ranks, so the test says which card exists: FAST is high (a card), CACHE medium (parent)."""

    model = "fixed"
    prompt_version = "1"

    async def analyze(
        self, commits: list[Commit], lang: str, progress: Any = None, **_: Any
    ) -> dict[str, Analysis]:
        return {c.sha: make_analysis(c, RANKS.get(c.sha, "low"), lang=lang) for c in commits}

    async def aclose(self) -> None:
        return None


def store_links(store: Store) -> None:
    """What the history step stores for these commits."""
    past = [PastCommit(c.sha, c.committed_at, c.message) for c in COMMITS]
    store.save_history(REPO, "main", past)
    store.save_followups(REPO, find_links(past))


async def day(store: Store, when: date, lang: str = "en"):
    source = MemorySource(REPO, COMMITS)
    return await build_digest(source, store, FixedAnalyzer(), branch="main", day=when, tz=TZ, lang=lang)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake
        fake.check()


@pytest.fixture
def discord_fake() -> Iterator[FakeDiscord]:
    with FakeDiscord() as fake:
        yield fake
        fake.check()


def slack_poster(slack: FakeSlack, tmp_path) -> SlackPoster:
    settings = Settings(
        _env_file=None, slack_bot_token=slack.token, slack_api_url=slack.api_url, digest_db=tmp_path / "x.db"
    )
    return SlackPoster(make_client(settings))


def discord_settings(fake: FakeDiscord, tmp_path) -> Settings:
    return Settings(
        _env_file=None,
        discord_bot_token=fake.token,
        discord_api_url=fake.base_url,
        discord_guild_id=fake.guild_id,
        digest_db=tmp_path / "x.db",
    )


def block_texts(message: Any) -> str:
    blocks = message["blocks"] if isinstance(message, dict) else message.blocks
    return " ".join(str(b.get("text", {}).get("text", "")) for b in blocks or [])


# --- the day's Follow-ups ------------------------------------------------------------------------------


async def test_second_day_lists_its_followups_in_every_format(store):
    await day(store, DAY1)
    store_links(store)
    second = await day(store, DAY2)
    assert [(e.follow_up.sha, e.original_sha, e.kind.value) for e in second.followups] == [
        (FIX.sha, CACHE.sha, "fix"),
        (REVERT.sha, FAST.sha, "revert"),
    ]
    fix, revert = second.followups
    assert revert.original_rank == Importance.HIGH and fix.original_rank == Importance.MEDIUM
    assert revert.original_report == f"digest-acme-widgets-2026-01-26.en.md#c-{FAST.sha[:12]}"

    report = render_report([second], "en")
    section = report.split("### 🔁 Follow-ups", 1)[1].split("| Committed |", 1)[0]
    assert "- ⚠️ [**\\#2010** Revert" in section
    assert (
        "— reverts [\\[Core\\] Fast path for widgets (#2001)](https://github.com/acme/widgets/commit/"
        in section
    )
    assert "committed 2026-01-26; we ranked it high" in section
    assert f"(digest-acme-widgets-2026-01-26.en.md#c-{FAST.sha[:12]})" in section
    assert "- 🔧 [**\\#2011**" in section and "fixes forward" in section and "we ranked it medium" in section
    assert "- [🔁 Follow-ups](#followups-acme-widgets)" in report  # in the contents, and the anchor exists
    assert '<a id="followups-acme-widgets"></a>' in report
    # the follow-up's own analysis says what it follows up
    assert second.analyses[REVERT.sha].notes[0].startswith("This commit reverts “[Core] Fast path")

    data = render_json(second)
    DigestJSON.model_validate(data)  # the documented shape (docs/json.md)
    assert [f["kind"] for f in data["followups"]] == ["fix", "revert"]
    assert data["followups"][1]["original"] | {"report": None} == {
        "sha": FAST.sha,
        "title": FAST.title,
        "committed_at": "2026-01-26T10:00:00+08:00",
        "url": FAST.url,
        "pr_number": 2001,
        "importance": "high",
        "report": None,
    }

    parent = block_texts(parent_message(second))
    assert "*🔁 Follow-ups* (2)" in parent and "reverts" in parent and "#2010" in parent


async def test_chinese_followups_and_a_day_without_any(store):
    await day(store, DAY1, "zh")
    store_links(store)
    first_again = await day(store, DAY1, "zh")
    assert first_again.followups == []  # its commits follow up nothing
    assert "后续修正" not in render_report([first_again], "zh")
    second = await day(store, DAY2, "zh")
    report = render_report([second], "zh")
    assert "### 🔁 后续修正" in report and "回滚了" in report and "当时评为高" in report
    # the first day's analyses, read again, say they were followed up
    again = await day(store, DAY1, "zh")
    assert again.analyses[FAST.sha].notes[0] == "该提交已于 2026-01-27 被 #2010「" + REVERT.title + "」回滚"


async def test_analyze_of_the_original_says_reverted_by_what_and_when(store):
    await day(store, DAY1)
    store_links(store)
    source = MemorySource(REPO, COMMITS)
    _, analysis = await analyse_ref(
        source, store, HeuristicAnalyzer(), parse_ref(FAST.sha[:10]), branch="main", lang="en"
    )
    assert analysis.notes[0] == f"Reverted on 2026-01-27 by #2010 “{REVERT.title}”"
    _, untouched = await analyse_ref(
        source, store, HeuristicAnalyzer(), parse_ref(DOCS.sha[:10]), branch="main", lang="en"
    )
    assert not any("Reverted" in n or "Fixed forward" in n for n in untouched.notes)


async def test_a_cards_radar_starts_once_its_call_can_go_out(store, monkeypatch):
    """The radar's read of the branch would slow the way to the card's call (an LLM's SDK still being
    imported): it starts when the analyser is ready to send, and the card reads the same."""
    from bot.digest import pipeline

    await day(store, DAY1)
    store_links(store)
    events: list[str] = []
    can_send, answered = asyncio.Event(), asyncio.Event()

    class Importing(FixedAnalyzer):
        async def ready(self) -> None:
            await can_send.wait()

        async def analyze(self, commits: list[Commit], lang: str, *args: Any, **kw: Any):
            events.append("call")
            await answered.wait()
            return await super().analyze(commits, lang, *args, **kw)

    radar = pipeline.learn_followups_of

    async def spied(*args: Any) -> int:
        events.append("radar")
        return await radar(*args)

    monkeypatch.setattr(pipeline, "learn_followups_of", spied)
    source = MemorySource(REPO, COMMITS)
    card = asyncio.ensure_future(
        analyse_ref(
            source, store, Importing(), parse_ref(FAST.sha[:10]), branch="main", lang="en", refresh=True
        )
    )
    await until(lambda: events == ["call"])
    await asyncio.sleep(0)  # the radar had its turns on the loop: it waits for the analyser
    assert events == ["call"]
    can_send.set()
    await until(lambda: events == ["call", "radar"])
    answered.set()
    _, analysis = await card
    assert analysis.notes[0] == f"Reverted on 2026-01-27 by #2010 “{REVERT.title}”"


async def until(condition: Any) -> None:
    async with asyncio.timeout(10):
        while not condition():
            await asyncio.sleep(0.001)


# --- banners on Slack -----------------------------------------------------------------------------------


async def test_slack_card_and_parent_get_their_banner_once_even_after_a_restart(
    store, slack, tmp_path, caplog
):
    first = await day(store, DAY1)
    await post_digest(slack_poster(slack, tmp_path), store, CHANNEL, first)
    posts = store.get_posts("slack", CHANNEL, "acme/widgets@main/2026-01-26/Asia/Shanghai/en")
    card_ts, parent_ts = posts[f"card:{FAST.sha}"]["message_id"], posts["parent"]["message_id"]

    store_links(store)
    second = await day(store, DAY2)
    await post_digest(slack_poster(slack, tmp_path), store, CHANNEL, second)

    card = slack.find(card_ts)
    assert block_texts(card).startswith("⚠️ Reverted by #2010 on 2026-01-27")
    assert card.text.startswith("⚠️ Reverted by #2010 on 2026-01-27")
    assert "Fast path" in block_texts(card)  # the card itself is still there, under the banner
    parent = slack.find(parent_ts)  # CACHE is medium: no card, so its day's parent carries the banner
    assert block_texts(parent).startswith("🔧 Fixed forward by #2011 on 2026-01-27")
    assert slack.edits == {card_ts: 1, parent_ts: 1}
    replies = [
        m for m in slack.thread(CHANNEL, parent_ts) if m.text.startswith(("⚠️", "🔧")) and m.ts != card_ts
    ]
    assert [m.text.split(":")[0] for m in replies] == [
        "🔧 Fixed forward by #2011 on 2026-01-27",
        "⚠️ Reverted by #2010 on 2026-01-27",
    ]
    assert FIX.url in block_texts(replies[0])  # the reply links the follow-up

    messages = len(slack.messages)
    await post_digest(slack_poster(slack, tmp_path), store, CHANNEL, second)  # a re-run
    restarted = Store(store.path)  # a new process on the same database
    await post_digest(slack_poster(slack, tmp_path), restarted, CHANNEL, second)
    # a crash after the edit and the reply but before they were recorded: Slack itself is checked
    restarted.db.execute("DELETE FROM radar_banners")
    await post_digest(slack_poster(slack, tmp_path), restarted, CHANNEL, second)
    restarted.close()
    assert slack.edits == {card_ts: 1, parent_ts: 1} and len(slack.messages) == messages


async def test_slack_message_we_cannot_edit_is_skipped_and_a_failure_retried(store, slack, tmp_path, caplog):
    first = await day(store, DAY1)
    await post_digest(slack_poster(slack, tmp_path), store, CHANNEL, first)
    posts = store.get_posts("slack", CHANNEL, "acme/widgets@main/2026-01-26/Asia/Shanghai/en")
    card_ts, parent_ts = posts[f"card:{FAST.sha}"]["message_id"], posts["parent"]["message_id"]
    slack.messages.remove(slack.find(card_ts))  # someone deleted the card
    slack.fail("chat.update", "internal_error")  # and Slack stumbles once on the parent's edit
    store_links(store)
    second = await day(store, DAY2)
    with caplog.at_level(logging.INFO, logger="bot.delivery.outbox"):
        result = await post_digest(slack_poster(slack, tmp_path), store, CHANNEL, second)
    assert result.posted[0] == "parent"  # the digest went out whatever the radar met
    assert "can no longer be edited" in caplog.text and "could not banner" in caplog.text
    assert slack.edits == {}
    [pending] = store.pending_work()  # the parent's banner: recorded, retried later
    assert pending["attempts"] == 1 and "internal_error" in pending["last_error"]
    await post_digest(slack_poster(slack, tmp_path), store, CHANNEL, second)
    assert slack.edits == {parent_ts: 1}  # the transient failure was retried; the deleted card was not
    assert store.banner_record("slack", CHANNEL, card_ts, REVERT.sha)["state"] == "skipped"
    assert store.pending_work() == []


async def test_original_posted_elsewhere_or_never_is_left_alone(store, slack, tmp_path):
    first = await day(store, DAY1)
    await post_digest(slack_poster(slack, tmp_path), store, "C0OTHER", first)
    store_links(store)
    second = await day(store, DAY2)
    await post_digest(slack_poster(slack, tmp_path), store, CHANNEL, second)  # not where the card is
    assert slack.edits == {}
    assert not any(m.text.startswith(("⚠️", "🔧")) for m in slack.messages)

    # a follow-up whose original we never digested: listed with the rank its own day's digest gives it
    # (the same line as on the database that digested that day), nothing to edit anywhere
    fresh = Store(tmp_path / "fresh.db")
    store_links(fresh)
    lone = await day(fresh, DAY2)
    assert [e.original_rank for e in lone.followups] == [e.original_rank for e in second.followups]
    assert sorted(e.original_rank.value for e in lone.followups) == ["high", "medium"]
    assert [e.original_report for e in lone.followups] == [None, None]
    assert "not ranked by us" not in render_report([lone], "en")
    # the same lines, but for the link to the original's report, which only the working database wrote
    assert [line for line in render_report([lone], "en").splitlines() if "we ranked it" in line] == [
        line.split(" · [report]")[0]
        for line in render_report([second], "en").splitlines()
        if "we ranked it" in line
    ]
    await post_digest(slack_poster(slack, tmp_path), fresh, "C0FRESH", lone)
    fresh.close()
    assert slack.edits == {}

    # an original the source can no longer read (gone from the branch): "not ranked by us", truly
    gone = Store(tmp_path / "gone.db")
    store_links(gone)
    source = MemorySource(REPO, [REVERT, FIX, OTHER])
    orphan = await build_digest(source, gone, FixedAnalyzer(), branch="main", day=DAY2, tz=TZ, lang="en")
    assert [e.original_rank for e in orphan.followups] == [None, None]
    assert "not ranked by us" in render_report([orphan], "en")
    gone.close()


# --- banners on Discord ---------------------------------------------------------------------------------


async def test_discord_card_and_parent_are_edited_once(store, discord_fake, tmp_path):
    settings = discord_settings(discord_fake, tmp_path)
    first = await day(store, DAY1)
    async with open_discord_poster(settings) as poster:
        await post_digest(poster, store, DISCORD_CHANNEL, first)
    posts = store.get_posts("discord", DISCORD_CHANNEL, "acme/widgets@main/2026-01-26/Asia/Shanghai/en")
    card_id, thread = posts[f"card:{FAST.sha}"]["message_id"], posts["parent"]["thread_id"]
    parent_id = posts["parent"]["message_id"]

    store_links(store)
    second = await day(store, DAY2)
    async with open_discord_poster(settings) as poster:
        await post_digest(poster, store, DISCORD_CHANNEL, second)
        await post_digest(poster, store, DISCORD_CHANNEL, second)  # a re-run edits nothing
    restarted = Store(store.path)
    restarted.db.execute("DELETE FROM radar_banners")  # and a crash before anything was recorded
    async with open_discord_poster(settings) as poster:
        await post_digest(poster, restarted, DISCORD_CHANNEL, second)
    restarted.close()

    card = next(m for m in discord_fake.messages_in(thread) if m["id"] == card_id)
    assert card["content"] == "⚠️ Reverted by #2010 on 2026-01-27" and card["embeds"]  # the card stays
    parent = next(m for m in discord_fake.messages_in(DISCORD_CHANNEL) if m["id"] == parent_id)
    assert parent["content"] == "🔧 Fixed forward by #2011 on 2026-01-27"
    assert discord_fake.edits == {card_id: 1, parent_id: 1}
    second_parent = discord_fake.messages_in(DISCORD_CHANNEL)[1]
    [field] = [f for f in second_parent["embeds"][0]["fields"] if f["name"] == "🔁 Follow-ups"]
    assert field["value"].startswith("🔧 [\\#2011](https://github.com/acme/widgets/commit/")
    replies = [m for m in discord_fake.messages_in(thread) if m["content"].startswith(("⚠️", "🔧"))]
    assert len(replies) == 3  # the edited card, and one reply per follow-up
    assert all(am == {"parse": []} for am in discord_fake.allowed_mentions())
    assert discord_fake.rejected == []


async def test_discord_message_gone_is_skipped(store, discord_fake, tmp_path, caplog):
    settings = discord_settings(discord_fake, tmp_path)
    first = await day(store, DAY1)
    async with open_discord_poster(settings) as poster:
        await post_digest(poster, store, DISCORD_CHANNEL, first)
    store_links(store)
    second = await day(store, DAY2)
    discord_fake.fail_next(
        403, {"message": "Missing Access", "code": 50001}, route="/messages/{message_id}", count=5
    )
    with caplog.at_level(logging.INFO, logger="bot.delivery.outbox"):
        async with open_discord_poster(settings) as poster:
            result = await post_digest(poster, store, DISCORD_CHANNEL, second)
    assert result.posted and discord_fake.edits == {}
    assert caplog.text.count("can no longer be edited") == 2
    assert store.pending_work() == []  # given up, not retried


def test_banner_dates_are_the_digest_zone_days():
    from analysis.history.followups import FollowUpKind
    from analysis.render.followups import banner

    late = datetime(2026, 1, 6, 20, 0, tzinfo=ZoneInfo("UTC"))  # already the 7th in Shanghai
    assert banner("en", FollowUpKind.REVERT, "#7", late, TZ) == "⚠️ Reverted by #7 on 2026-01-07"
    assert banner("zh", FollowUpKind.FIX, "#7", late, TZ) == "🔧 已于 2026-01-07 由 #7 修复跟进"


async def test_thread_answers_about_the_original_say_it_was_reverted(store, slack, tmp_path):
    from bot.app import chat_service

    first = await day(store, DAY1)
    await post_digest(slack_poster(slack, tmp_path), store, CHANNEL, first)
    posts = store.get_posts("slack", CHANNEL, "acme/widgets@main/2026-01-26/Asia/Shanghai/en")
    card_ts, parent_ts = posts[f"card:{FAST.sha}"]["message_id"], posts["parent"]["message_id"]
    service = chat_service(Settings(_env_file=None, digest_db=store.path), store)

    async def ask(question: str) -> str:
        return (await service.answer(service.thread_context("slack", parent_ts, card_ts), question)).plain()

    assert "Reverted" not in await ask("what are its risks?")
    assert "No revert or fix-forward of it is recorded" in await ask("was it reverted?")
    store_links(store)
    ctx = service.thread_context("slack", parent_ts, card_ts)
    assert ctx.commit.sha == FAST.sha
    assert f"Reverted on 2026-01-27 by #2010 “{REVERT.title}”" in await ask("what are its risks?")
    assert f"reverted by #2010 on 2026-01-27: {REVERT.short_sha} {REVERT.title}" in await ask(
        "was it reverted?"
    )


def test_many_hostile_followups_stay_within_every_chat_limit():
    from analysis.history.followups import FollowUpKind
    from analysis.models import DayFollowUp
    from analysis.render.discord_embeds import message_problems, parent_embed
    from tests.fakes.digests import LONG_TEXT, make_digest
    from tests.fakes.slack_api import message_error

    digest = make_digest(lang="en")
    hostile = "@everyone <!channel> [x](javascript:alert(1)) " + LONG_TEXT
    digest.followups = [
        DayFollowUp(
            follow_up=digest.commits[i % len(digest.commits)],
            kind=FollowUpKind.REVERT if i % 2 else FollowUpKind.FIX,
            evidence=hostile,
            original_sha=f"{i:040x}",
            original_title=hostile,
            original_at=datetime(2026, 1, 20, tzinfo=TZ),
        )
        for i in range(60)
    ]
    assert message_problems({"embeds": [parent_embed(digest)]}) == []
    slack_parent = parent_message(digest)
    assert message_error(slack_parent) == (None, [])
    text = block_texts(slack_parent)
    assert "<!channel>" not in text and "@everyone" not in text.replace("@\u200beveryone", "")
    assert "…and 50 more" in str(slack_parent["blocks"])
    report = render_report([digest], "en")
    assert not re.search(r"(?<!\\)\]\(javascript", report)  # escaped: never a link


async def test_two_banners_on_one_card_are_each_added_once(slack, discord_fake, tmp_path):
    fix, revert = "🔧 Fixed forward by #7 on 2026-01-07", "⚠️ Reverted by #9 on 2026-01-09"
    poster = slack_poster(slack, tmp_path)
    [ts] = await poster.post_messages(
        CHANNEL,
        [{"text": "card", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "card"}}]}],
    )
    for text in (fix, revert, fix, revert):  # a lost store: each edit is asked again
        assert await poster.add_banner(CHANNEL, CHANNEL, ts, text)
    assert block_texts(slack.find(ts)) == f"{revert} {fix} card" and slack.edits == {ts: 2}

    async with open_discord_poster(discord_settings(discord_fake, tmp_path)) as dposter:
        sent = await dposter.reply_in_thread(DISCORD_CHANNEL, DISCORD_CHANNEL, "card")
        for text in (fix, revert, fix, revert):
            assert await dposter.add_banner(DISCORD_CHANNEL, DISCORD_CHANNEL, sent, text)
    [message] = discord_fake.messages_in(DISCORD_CHANNEL)
    assert message["content"] == f"{revert}\n{fix}\ncard" and discord_fake.edits == {sent: 2}


async def test_a_digest_read_back_from_the_store_keeps_its_followups(store):
    from analysis.models import key_of
    from bot.digest.pipeline import load_digest

    await day(store, DAY1)
    store_links(store)
    second = await day(store, DAY2)
    again = load_digest(store, key_of(second))
    assert [e.original_sha for e in again.followups] == [e.original_sha for e in second.followups]
    assert again.analyses[REVERT.sha].notes == second.analyses[REVERT.sha].notes  # no note twice
    assert render_report([again], "en") == render_report([second], "en")


async def test_analyze_reads_the_branch_after_the_commit_while_the_card_is_being_written(store):
    """The radar's read of the later history does not wait for the card's analysis (a model call of
    seconds): the analyser here finishes only once that read has started; in sequence it never would."""
    radar_read = asyncio.Event()

    class HistorySource(MemorySource):
        async def history(self, branch: str, start: datetime, end: datetime, **_: Any) -> list[PastCommit]:
            if start >= FAST.committed_at.astimezone(UTC).replace(hour=0):  # the span after the commit
                radar_read.set()
            return [
                PastCommit(c.sha, c.committed_at, c.message) for c in COMMITS if start <= c.committed_at < end
            ]

    class WaitsForTheRadar(FixedAnalyzer):
        async def analyze(self, commits: list[Commit], lang: str, progress: Any = None, **kw: Any):
            await asyncio.wait_for(radar_read.wait(), timeout=5)
            return await super().analyze(commits, lang, progress, **kw)

    _, analysis = await analyse_ref(
        HistorySource(REPO, COMMITS),
        store,
        WaitsForTheRadar(),
        parse_ref(FAST.sha[:10]),
        branch="main",
        lang="en",
    )
    assert analysis.importance == Importance.HIGH
    assert (
        analysis.notes[0] == f"Reverted on 2026-01-27 by #2010 “{REVERT.title}”"
    )  # the radar's links, read after
