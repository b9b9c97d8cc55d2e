"""DIGEST_MAX_CARDS: a day with more high commits than the cap posts its top ones (by the day's rank) as
cards and lists the rest in one thread item, so none is dropped; the item names stay the idempotency keys."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from analysis.heuristic.bands import day_order
from analysis.models import Analysis, Commit, Digest, Importance, key_of
from bot.delivery.dry_run import preview, render_text
from bot.delivery.posting import HIGH_LIST, digest_items, post_digest
from bot.ports.protocols import Posted
from bot.store.db import Store
from tests.fakes.digests import make_analysis, make_commit, make_digest

CHANNEL = "C1"
END = make_digest(()).window_end


def day(impacts: list[float], mediums: int = 1) -> Digest:
    """High commits with these impact scores (newest first), then `mediums` medium ones."""
    commits = [
        make_commit(f"[Feature] High {i} (#{3000 + i})", committed_at=END - timedelta(minutes=i + 1))
        for i in range(len(impacts) + mediums)
    ]
    analyses = [
        make_analysis(c, "high", lang="en").model_copy(update={"impact_score": impact})
        for c, impact in zip(commits, impacts, strict=False)
    ] + [make_analysis(c, "medium", lang="en") for c in commits[len(impacts) :]]
    return make_digest(commits=commits, analyses=analyses, lang="en")


class Poster:
    """Records items as they are posted (the high list with the shas it holds); can fail at one item."""

    platform = "test"

    def __init__(self, fail_at: str | None = None) -> None:
        self.posted: list[str] = []
        self.listed: list[str] = []
        self.fail_at = fail_at

    async def _post(self, item: str, thread: str | None) -> Posted:
        if item == self.fail_at:
            self.fail_at = None
            raise ConnectionError("killed")
        self.posted.append(item)
        n = str(len(self.posted))
        return Posted(n, thread or n)

    async def post_parent(self, channel: str, digest: Digest) -> Posted:
        return await self._post("parent", None)

    async def post_card(
        self, channel: str, thread: str, digest: Digest, commit: Commit, a: Analysis
    ) -> Posted:
        return await self._post(f"card:{commit.sha}", thread)

    async def post_high_list(
        self, channel: str, thread: str, digest: Digest, commits: list[Commit]
    ) -> Posted:
        assert commits, "an empty high list is never posted"
        posted = await self._post(HIGH_LIST, thread)
        self.listed += [c.sha for c in commits]
        return posted

    async def post_medium_list(self, channel: str, thread: str, digest: Digest, commits: Any) -> Posted:
        return await self._post("medium", thread)

    async def post_report(self, channel: str, thread: str, digest: Digest, filename: str, md: str) -> Posted:
        return await self._post("report", thread)

    async def edit_parent(self, channel: str, message_id: str, digest: Digest, banners: list[str]) -> None:
        self.posted.append("(edit parent)")


def cards(items: list[str]) -> list[str]:
    return [i.removeprefix("card:") for i in items if i.startswith("card:")]


def test_the_top_of_the_days_rank_become_cards_in_the_digests_order():
    digest = day([1.0, 9.0, 3.0, 8.0, 2.0, 7.0])
    highs = [c.sha for c in digest.commits[:6]]
    items = digest_items(digest, max_cards=3)
    assert cards(items) == [highs[1], highs[3], highs[5]]  # impact 9, 8, 7, newest first as posted
    assert items[4:] == [HIGH_LIST, "medium", "report"]
    assert digest_items(digest, max_cards=6) == digest_items(digest, max_cards=200)  # at or under the cap
    assert HIGH_LIST not in digest_items(digest, max_cards=6)


def test_the_days_rank_puts_the_models_score_first_and_breaks_ties_the_same_way_every_run():
    digest = day([5.0, 5.0, 5.0, 1.0], mediums=0)
    a, b, c, d = digest.commits
    scored = {
        **digest.analyses,
        d.sha: digest.analyses[d.sha].model_copy(
            update={"analyzer": "llm", "model_score": 90, "rubric_importance": Importance.HIGH}
        ),
    }
    order = day_order(digest.commits, scored)
    assert order[0] == d  # the model's 90 before every unscored impact
    assert order[1:] == sorted([a, b, c], key=lambda x: x.sha)  # equal scores: by sha, stable
    assert day_order(list(reversed(digest.commits)), scored) == order


async def test_past_the_cap_none_is_dropped_and_a_rerun_posts_nothing(tmp_path):
    digest = day([float(i) for i in range(10)])
    poster = Poster()
    first = await post_digest(poster, Store(tmp_path / "d.db"), CHANNEL, digest, max_cards=4)
    assert len(cards(first.posted)) == 4 and first.posted.count(HIGH_LIST) == 1
    highs = {c.sha for c in digest.commits[:10]}
    assert set(cards(first.posted)) | set(poster.listed) == highs  # every high commit, once
    assert not set(cards(first.posted)) & set(poster.listed)
    # a restart, even with another cap, posts nothing: the parent announced these items
    for cap in (4, 1, 20):
        again = await post_digest(poster, Store(tmp_path / "d.db"), CHANNEL, digest, max_cards=cap)
        assert again.posted == []
    assert poster.posted == first.posted


@pytest.mark.parametrize("at", ["card", HIGH_LIST, "medium"])
async def test_a_crash_mid_post_with_one_card_resumes_with_only_the_rest(tmp_path, at):
    digest = day([3.0, 1.0, 2.0])
    items = digest_items(digest, max_cards=1)
    fail_at = items[1] if at == "card" else at
    poster = Poster(fail_at=fail_at)
    with pytest.raises(ConnectionError):
        await post_digest(poster, Store(tmp_path / "d.db"), CHANNEL, digest, max_cards=1)
    resumed = await post_digest(poster, Store(tmp_path / "d.db"), CHANNEL, digest, max_cards=1)
    assert (
        poster.posted == items == ["parent", f"card:{digest.commits[0].sha}", HIGH_LIST, "medium", "report"]
    )
    assert resumed.posted == items[items.index(fail_at) :]
    assert sorted(poster.listed) == sorted(c.sha for c in digest.commits[1:3])


async def test_a_partial_days_cards_stay_cards_and_the_cap_fills_around_them(tmp_path):
    """Cards posted while the day ran stay up; the whole day's post adds the list of the rest, not a card
    past the cap, even when commits that landed later rank higher."""
    whole = day([1.0, 2.0, 9.0, 8.0])  # the two newest landed after the partial post
    so_far = make_digest(
        commits=whole.commits[2:], analyses=[whole.analyses[c.sha] for c in whole.commits[2:]], lang="en"
    )
    poster = Poster()
    store = Store(tmp_path / "d.db")
    await post_digest(poster, store, CHANNEL, so_far, partial=True, max_cards=2)
    assert poster.posted == ["parent", *(f"card:{c.sha}" for c in whole.commits[2:4])]
    final = await post_digest(poster, store, CHANNEL, whole, max_cards=2)
    assert final.edited == ["parent"] and final.posted == [HIGH_LIST, "medium", "report"]
    assert sorted(poster.listed) == sorted(c.sha for c in whole.commits[:2])


def test_the_dry_run_says_which_commits_become_cards(tmp_path):
    digest = day([1.0, 5.0, 3.0])
    plan = preview(digest, "slack", CHANNEL, Store(tmp_path / "d.db"), max_cards=2)
    assert plan["cards"] == [digest.commits[1].sha, digest.commits[2].sha]
    assert [m["item"] for m in plan["messages"] if not m["item"].startswith("card:")] == [
        "parent",
        HIGH_LIST,
        "medium",
        "report",
    ]
    [listed] = [m for m in plan["messages"] if m["item"] == HIGH_LIST]
    assert digest.commits[0].short_sha in str(listed["payload"])
    assert "2 card(s)" in render_text(plan)
    discord = preview(digest, "discord", CHANNEL, max_cards=2)
    assert discord["cards"] == plan["cards"] and discord["key"] == key_of(digest)
