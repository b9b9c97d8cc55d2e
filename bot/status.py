"""`digestbot status`: what the service is subscribed to, how each subscription's last digest went,
when the next one runs, and what the LLM cost over the last week."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from bot.scheduler import trigger_for
from bot.settings import Settings
from bot.store import Store
from bot.subscriptions import Registry, Subscription


def render_status(
    settings: Settings, store: Store, file_subscriptions: list[Subscription], now: datetime | None = None
) -> str:
    now = now or datetime.now(UTC)
    registry = Registry(store, file_subscriptions)
    subs = registry.all()
    lines = [f"database: {settings.digest_db}", ""]
    if not subs:
        lines.append("no subscriptions (add them to the config file or with /digest subscribe in chat)")
    for sub in subs:
        dests = ", ".join(f"{d.platform}:{d.channel}" for d in sub.destinations)
        nxt = trigger_for(sub).get_next_fire_time(None, now)
        lines.append(f"{sub.name}  [{sub.origin}]")
        lines.append(
            f"  repo      {sub.repo}{'@' + sub.branch if sub.branch else ''}"
            f"{'  (git: ' + str(sub.git_dir) + ')' if sub.git_dir else ''}"
        )
        lines.append(f"  schedule  {sub.schedule} {sub.timezone}, lang {sub.lang} → {dests}")
        lines.append(f"  next run  {nxt.isoformat() if nxt else 'never'}")
        lines.append(f"  last run  {_last_run(store, sub.name)}")
    if bad := failing(store, file_subscriptions):
        lines += ["", f"last run failed: {', '.join(bad)} (exit status 1)"]
    usage = store.llm_usage_since(now - timedelta(days=7))
    lines += [
        "",
        f"LLM, last 7 days: {usage['calls']} calls, {usage['tokens_in']} tokens in, {usage['tokens_out']} tokens out",
    ]
    return "\n".join(lines) + "\n"


FAILED = ("failed", "partial")  # a last run in one of these makes `digestbot status` exit 1


def failing(store: Store, file_subscriptions: list[Subscription]) -> list[str]:
    """Names of the subscriptions whose last run failed (or reached only some channels)."""
    subs = Registry(store, file_subscriptions).all()
    return [s.name for s in subs if (r := _last_row(store, s.name)) is not None and r["status"] in FAILED]


def _last_row(store: Store, name: str) -> dict | None:
    rows = store.query("SELECT * FROM runs WHERE subscription = ? ORDER BY day DESC LIMIT 1", [name])
    return rows[0] if rows else None


def _last_run(store: Store, name: str) -> str:
    r = _last_row(store, name)
    if r is None:
        return "none yet"
    stats = json.loads(r["stats"] or "{}")
    counts = (
        f"{stats.get('total', r['commits'] or 0)} commits (high {stats.get('high', 0)}, medium {stats.get('medium', 0)},"
        f" low {stats.get('low', 0)})"
        if stats
        else ""
    )
    parts = [
        r["day"],
        r["status"].upper() if r["status"] in FAILED else r["status"],
        counts,
        f"{r['llm_calls'] or 0} LLM calls, {r['tokens'] or 0} tokens",
    ]
    if r["error"]:
        parts.append(f"error: {r['error']}")
    return " · ".join(p for p in parts if p)
