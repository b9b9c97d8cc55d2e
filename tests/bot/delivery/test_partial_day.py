"""A day posted before it ended (`digestbot post --partial`) is not frozen: its parent and cards so far go
up, and the next post of the day — the scheduled one once it is over — updates the parent and adds the
cards that landed since, the medium list and the report. A finished day's post stays final."""

from __future__ import annotations

from adapters.slack.client import make_client
from adapters.slack.poster import SlackPoster
from analysis.models import key_of
from bot.config.settings import Settings
from bot.delivery.dry_run import preview
from bot.delivery.posting import post_digest
from tests.fakes.digests import make_digest
from tests.fakes.slack_api import FakeSlack

WHOLE_DAY = ("high", "low", "medium", "high", "low", "high", "medium")  # newest first
LATER = 3  # the three newest had not landed when the partial post was made
CHANNEL = "C0PARTIAL"


def slack_poster(slack: FakeSlack) -> SlackPoster:
    return SlackPoster(
        make_client(Settings(_env_file=None, slack_bot_token=slack.token, slack_api_url=slack.api_url))
    )


def items_in_thread(slack: FakeSlack, parent_ts: str) -> list[str]:
    return [m.metadata["event_payload"]["item"] for m in slack.thread(CHANNEL, parent_ts) if m.metadata]


def the_day_so_far():
    whole = make_digest(WHOLE_DAY, lang="en")
    so_far = make_digest(WHOLE_DAY[LATER:], commits=whole.commits[LATER:], lang="en")
    assert key_of(so_far) == key_of(whole)
    return so_far, whole


async def test_a_partial_post_leaves_the_day_open_for_the_scheduled_post(store):
    so_far, whole = the_day_so_far()
    with FakeSlack() as slack:
        poster = slack_poster(slack)
        first = await post_digest(poster, store, CHANNEL, so_far, partial=True)
        [parent] = slack.channel_messages(CHANNEL)
        assert first.posted == ["parent", *(f"card:{c.sha}" for c in so_far.commits if _high(so_far, c))]
        assert "High 2" in parent.text.replace("*", "")
        assert store.plan_is_partial("slack", CHANNEL, key_of(whole))

        scheduled = await post_digest(poster, store, CHANNEL, whole)  # the day is over
        slack.check()
    assert scheduled.edited == ["parent"]
    [parent] = slack.channel_messages(CHANNEL)  # the same parent, updated: not a second one
    assert slack.edits == {parent.ts: 1} and "High 3" in parent.text.replace("*", "")
    new_card = f"card:{whole.commits[0].sha}"
    assert scheduled.posted == [new_card, "medium", "report"]
    assert items_in_thread(slack, parent.ts) == [*first.posted[1:], new_card, "medium"]
    assert len([m for m in slack.thread(CHANNEL, parent.ts) if m.files]) == len(slack.uploads) == 1
    assert not store.plan_is_partial("slack", CHANNEL, key_of(whole))  # now final


async def test_a_finished_day_s_post_stays_final(store):
    so_far, whole = the_day_so_far()
    with FakeSlack() as slack:
        poster = slack_poster(slack)
        await post_digest(poster, store, CHANNEL, so_far)  # not partial: what the CLI did before
        again = await post_digest(poster, store, CHANNEL, whole)
    assert again.edited == [] and again.posted == [] and slack.edits == {}


async def test_a_partial_post_posted_twice_updates_the_parent_and_adds_nothing_twice(store):
    so_far, whole = the_day_so_far()
    with FakeSlack() as slack:
        poster = slack_poster(slack)
        await post_digest(poster, store, CHANNEL, so_far, partial=True)
        later = await post_digest(poster, store, CHANNEL, whole, partial=True)
        assert len(slack.channel_messages(CHANNEL)) == 1  # one parent, updated
        assert later.edited == ["parent"] and later.posted == [f"card:{whole.commits[0].sha}"]
        assert store.plan_is_partial("slack", CHANNEL, key_of(whole))
        slack.check()


def test_the_dry_run_of_a_partial_day_lists_its_parent_and_cards_only(store):
    so_far, _ = the_day_so_far()
    items = [m["item"] for m in preview(so_far, "slack", CHANNEL, store, partial=True)["messages"]]
    assert items[0] == "parent" and all(i.startswith("card:") for i in items[1:]) and len(items) == 3


def _high(digest, commit) -> bool:
    return digest.analysis_of(commit).importance.value == "high"
