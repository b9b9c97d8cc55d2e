"""Issue 17 item 7: a day posted in a channel is what it was. Posting it again after the ranking changed
adds no card under a parent that does not announce it; `post --repost` edits the parent first (keeping
its radar banners) and then adds what the new parent announces."""

from __future__ import annotations

from click.testing import CliRunner

from adapters.discord.poster import open_discord_poster
from adapters.slack.client import make_client
from adapters.slack.poster import SlackPoster
from analysis.models import key_of
from bot.config.settings import Settings
from bot.delivery.posting import post_digest
from tests.fakes.digests import make_digest
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.slack_api import FakeSlack

BEFORE = ("low", "high", "medium", "low", "medium", "high", "low")  # 2 high
AFTER = ("high", "high", "medium", "high", "medium", "high", "low")  # a new model: 4 high
CHANNEL = "C0REPOST"


def card_items(slack: FakeSlack, parent_ts: str) -> list[str]:
    return [
        m.metadata["event_payload"]["item"]
        for m in slack.thread(CHANNEL, parent_ts)
        if m.metadata and m.metadata["event_payload"]["item"].startswith("card:")
    ]


def slack_poster(slack: FakeSlack) -> SlackPoster:
    return SlackPoster(
        make_client(Settings(_env_file=None, slack_bot_token=slack.token, slack_api_url=slack.api_url))
    )


async def test_a_re_ranked_day_adds_nothing_unless_reposted(store):
    old, new = make_digest(BEFORE, lang="en"), make_digest(AFTER, lang="en")
    with FakeSlack() as slack:
        poster = slack_poster(slack)
        await post_digest(poster, store, CHANNEL, old)
        [parent] = slack.channel_messages(CHANNEL)
        assert len(card_items(slack, parent.ts)) == 2 and "High 2" in parent.text.replace("*", "")

        again = await post_digest(poster, store, CHANNEL, new)  # a restart after an upgrade, say
        assert again.posted == [] and again.edited == []
        assert len(card_items(slack, parent.ts)) == 2 and slack.edits == {}

        store.db.execute("DELETE FROM post_plans")  # a day posted by a version that kept no plan
        assert (await post_digest(poster, store, CHANNEL, new)).posted == []

        reposted = await post_digest(poster, store, CHANNEL, new, repost=True)
        slack.check()
    assert reposted.edited == ["parent"] and len(reposted.posted) == 2
    assert all(item.startswith("card:") for item in reposted.posted)
    [parent] = slack.channel_messages(CHANNEL)
    assert slack.edits == {parent.ts: 1} and "High 4" in parent.text.replace("*", "")
    assert len(card_items(slack, parent.ts)) == 4
    assert store.get_plan("slack", CHANNEL, key_of(new))[:1] == ["parent"]


async def test_a_repost_keeps_the_radar_banner_on_the_parent(store):
    old, new = make_digest(BEFORE, lang="en"), make_digest(AFTER, lang="en")
    with FakeSlack() as slack:
        poster = slack_poster(slack)
        await post_digest(poster, store, CHANNEL, old)
        [parent] = slack.channel_messages(CHANNEL)
        banner = "🔧 Fixed forward by #2100 on 2026-01-27"
        store.add_work(  # what the radar recorded when it put the banner there
            f"radar:slack:{CHANNEL}:{parent.ts}:{'f' * 40}",
            "radar",
            "slack",
            CHANNEL,
            {"message_id": parent.ts, "follow_up": "f" * 40, "banner": banner},
        )
        store.record_banner("slack", CHANNEL, parent.ts, "f" * 40, "a" * 40, "replied", "1.2")
        await post_digest(poster, store, CHANNEL, new, repost=True)
        edited = slack.find(parent.ts)
    assert edited.blocks[0]["text"]["text"] == banner and edited.text.startswith(banner)
    assert "High 4" in edited.text.replace("*", "")


async def test_discord_repost_edits_the_embed_and_keeps_the_banner_content(store, tmp_path):
    old, new = make_digest(BEFORE, lang="en"), make_digest(AFTER, lang="en")
    with FakeDiscord() as dc:
        channel = str(next(iter(dc.channels)))
        settings = Settings(_env_file=None, discord_bot_token=dc.token, discord_api_url=dc.base_url)
        async with open_discord_poster(settings) as poster:
            await post_digest(poster, store, channel, old)
            [parent] = dc.messages_in(channel)
            dc.messages[channel][0]["content"] = "⚠️ Reverted by #2100 on 2026-01-27"  # the radar's banner
            posted_before = len(dc.messages_in(parent["id"]))
            assert (await post_digest(poster, store, channel, new)).posted == []
            assert len(dc.messages_in(parent["id"])) == posted_before
            reposted = await post_digest(poster, store, channel, new, repost=True)
        dc.check()
        [parent] = dc.messages_in(channel)
    assert reposted.edited == ["parent"] and len(reposted.posted) == 2
    assert parent["content"] == "⚠️ Reverted by #2100 on 2026-01-27"
    assert "High 4" in parent["embeds"][0]["description"].replace("*", "")
    assert dc.edits == {parent["id"]: 1}
    assert len(dc.messages_in(parent["id"])) == posted_before + 2


def test_repost_is_a_post_option(tmp_path):
    from bot.cli.main import cli

    result = CliRunner().invoke(cli, ["post", "--help"])
    assert result.exit_code == 0 and "--repost" in result.output


async def test_an_interrupted_post_resumes_what_its_parent_announced_whatever_the_new_ranking(store):
    old = make_digest(BEFORE, lang="en")
    new = make_digest(("low", "medium", "medium", "low", "medium", "high", "low"), lang="en")  # 1 high
    with FakeSlack() as slack:
        poster = slack_poster(slack)
        await post_digest(poster, store, CHANNEL, old)
        demoted = next(i for i in store.get_plan("slack", CHANNEL, key_of(old)) if i.startswith("card:"))
        # a crash before these were recorded: the card the parent announced, and the report
        store.db.execute("DELETE FROM posts WHERE item IN (?, 'report')", [demoted])
        resumed = await post_digest(poster, store, CHANNEL, new)
        slack.check()
        [parent] = slack.channel_messages(CHANNEL)
    assert demoted in resumed.posted and "report" in resumed.posted  # found in the thread, recorded
    assert len(card_items(slack, parent.ts)) == 2  # nothing added, nothing twice
