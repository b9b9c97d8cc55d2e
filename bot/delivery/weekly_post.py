"""Posting the weekly roll-up into a chat channel once: its text and its chart, each recorded as soon
as it is up, under the posting lease like a day's digest (two services on one database post one
roll-up)."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.weekly import Week, weekly_key
from bot.delivery.leases import posting_lock
from bot.ports.protocols import ChartRenderer, WeeklyPoster
from bot.store.db import Store


@dataclass(slots=True)
class WeeklyPost:
    key: str
    posted: list[str]


async def post_weekly(
    poster: WeeklyPoster, store: Store, channel: str, week: Week, *, chart: ChartRenderer
) -> WeeklyPost:
    """Post the roll-up and its chart where they are missing; each recorded as soon as it is up. Under
    the posting lease like a day's digest: two services on one database post one roll-up."""
    key = weekly_key(week)
    async with posting_lock(store, poster.platform, channel, key):
        return await _post_weekly(poster, store, channel, week, key, chart)


async def _post_weekly(
    poster: WeeklyPoster, store: Store, channel: str, week: Week, key: str, chart: ChartRenderer
) -> WeeklyPost:
    from analysis.render.weekly import render_weekly_markdown, weekly_filename

    done = store.get_posts(poster.platform, channel, key)
    result = WeeklyPost(key, [])
    if "parent" in done:
        thread = done["parent"]["thread_id"]
    else:
        message_id, thread = await poster.post_weekly(channel, week, render_weekly_markdown(week))
        store.record_post(poster.platform, channel, key, "parent", message_id, thread)
        result.posted.append("parent")
    if "chart" not in done:
        name = weekly_filename(week, "png")
        chart_id = await poster.post_chart(channel, thread, week, name, chart(week))
        store.record_post(poster.platform, channel, key, "chart", chart_id, thread)
        result.posted.append("chart")
    return result
