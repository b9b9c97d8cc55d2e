"""`digestbot status`: what the service is subscribed to, whether each subscription's source and
channels are usable, how its last digest went, when the next one runs, and what the LLM cost over
the last week. The same data feeds the text and `--format json`."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from analysis.errors import DigestError, SourceRefused
from analysis.labels import zone_warning
from bot.config.schedule import schedule_problem, trigger_for
from bot.config.settings import Settings
from bot.config.subscriptions import Registry, Subscription
from bot.monitoring.metrics import subscription_label
from bot.store.db import Store

log = logging.getLogger(__name__)

_TOKENS = {"slack": "slack_bot_token", "discord": "discord_bot_token"}
FAILED = ("failed", "partial")  # a last run in one of these makes `digestbot status` exit 1


def failing(store: Store, file_subscriptions: list[Subscription]) -> list[str]:
    """Names of the subscriptions whose last run failed (or reached only some channels)."""
    subs = Registry(store, file_subscriptions).all()
    return [s.name for s in subs if (r := _last_run(store, s.name)) is not None and r["status"] in FAILED]


# Opens a local clone, raising a DigestError when it is not one (bot/app.py's local_clone).
CloneCheck = Callable[[Path, str], object]


def check_subscription(
    settings: Settings, sub: Subscription, check_clone: CloneCheck | None = None
) -> str | None:
    """Why this subscription cannot run, in one line, or None. Checks what needs no network: its zone
    and schedule; a local clone exists, is a git repository and has the branch (with `check_clone`);
    every destination's platform has its bot token set."""
    problems = [problem] if (problem := schedule_problem(sub)) else []
    if sub.git_dir is not None and check_clone is not None:
        try:
            source = check_clone(sub.git_dir, sub.repo)
            if sub.branch:  # a misspelt branch failed only at the first run, hours after the start
                asyncio.run(_branch_known(source, sub.branch))
        except DigestError as exc:
            problems.append(f"source: {exc}")
    for platform in sorted({d.platform for d in sub.destinations} - {"console"}):  # console: no token
        token = _TOKENS.get(platform)
        if token is None:
            problems.append(f"channels: unknown platform {platform!r}")
        elif getattr(settings, token) is None:
            problems.append(f"channels: posts to {platform} but {token.upper()} is not set")
    return "; ".join(problems) or None


# How long `run`'s start waits for a hosted repository to say whether the configured repo, branch and token work.
REMOTE_CHECK_TIMEOUT = 15.0


async def check_remote_sources(
    subs: list[Subscription], open_source: Callable[[str], Any]
) -> list[tuple[Subscription, str]]:
    """The subscriptions read from a hosted repository (no git_dir) whose repository, branch or token the
    host refuses (not found, token rejected), each asked once: found at start, not at the first run hours
    later with a notice a day in the channel. An outage is no problem here (the runs retry and say so)."""
    remote = [s for s in subs if s.git_dir is None and not schedule_problem(s)]
    keys = list(dict.fromkeys((s.repo, s.branch) for s in remote))

    async def one(repo: str, branch: str | None) -> str | None:
        try:
            source = open_source(repo)
        except DigestError as exc:
            return f"source: {exc}"
        try:
            async with asyncio.timeout(REMOTE_CHECK_TIMEOUT):
                await source.default_branch()
                if branch:
                    await source.branch_tip(branch)
        except SourceRefused as exc:
            return f"source: {exc}"
        except Exception as exc:  # down, slow, rate-limited: the runs will retry and say so
            log.info("could not check %s at start (%s); its runs will", repo, exc or type(exc).__name__)
        finally:
            await source.aclose()
        return None

    found = dict(zip(keys, await asyncio.gather(*(one(*key) for key in keys)), strict=True))
    return [(s, problem) for s in remote if (problem := found[(s.repo, s.branch)])]


async def _branch_known(source: Any, branch: str) -> None:
    try:
        await source.branch_tip(branch)  # InputError naming the known branches
    finally:
        await source.aclose()


def check_subscriptions(
    settings: Settings, subs: list[Subscription], check_clone: CloneCheck | None = None
) -> list[tuple[Subscription, str]]:
    return [(sub, problem) for sub in subs if (problem := check_subscription(settings, sub, check_clone))]


def status_data(
    settings: Settings,
    store: Store,
    file_subscriptions: list[Subscription],
    now: datetime | None = None,
    check_clone: CloneCheck | None = None,
) -> dict[str, Any]:
    now = now or datetime.now(UTC)
    registry = Registry(store, file_subscriptions)
    subs = registry.all()
    usage = store.llm_usage_since(now - timedelta(days=7))
    late = _overdue(settings, store, registry, now)
    return {
        "database": str(settings.digest_db),
        "subscriptions": [
            {**_subscription(settings, store, sub, now, check_clone), "overdue": late.get(sub.name)}
            for sub in subs
        ],
        "pending": [_pending(row) for row in store.pending_work()],
        "llm_last_7_days": {k: usage[k] for k in ("calls", "tokens_in", "tokens_out")},
    }


def _overdue(settings: Settings, store: Store, registry: Registry, now: datetime) -> dict[str, str]:
    """Subscription → the digest due past its grace that has not succeeded, as /healthz says it (the
    scheduler's own check): `status` exited 0 while the service was down and yesterday's digest never
    came. Only for subscriptions a service has run (before that nothing was due)."""
    from bot.service.scheduler import HEALTH_GRACE, DigestScheduler

    scheduler = DigestScheduler(
        registry, store, _never_run, catchup_days=settings.digest_catchup_days, clock=lambda: now
    )
    late: dict[str, str] = {}
    for sub in registry.all():
        if schedule_problem(sub) or scheduler.first_seen(sub.name) is None:
            continue
        if found := scheduler.overdue(sub, HEALTH_GRACE):
            day, due = found
            late[sub.name] = f"the digest of {day} was due at {due.isoformat()} and has not succeeded"
    return late


async def _never_run(sub: Subscription, day: Any) -> Any:
    raise AssertionError("status runs no digest")


def _pending(row: dict[str, Any]) -> dict[str, Any]:
    """Work the service still has to do (bot/delivery/outbox.py), as `status` shows it."""
    job = json.loads(row["payload"] or "{}")
    if row["kind"] == "radar":
        what = (
            f"banner and reply on message {job.get('message_id')}"
            f" ({str(job.get('follow_up'))[:7]} follows up {str(job.get('original'))[:7]})"
        )
    elif row["kind"] == "notice":
        what = f"notice {job.get('key')}"
    elif row["kind"] == "weekly":
        what = (
            f"weekly roll-up {job.get('year')}-W{int(job.get('week') or 0):02d} of {job.get('subscription')}"
        )
    else:
        what = str(row["key"])
    return {
        "key": row["key"],
        "kind": row["kind"],
        "destination": f"{row['platform']}:{row['channel']}",
        "what": what,
        "attempts": row["attempts"] or 0,
        "next_try": datetime.fromtimestamp(row["next_at"], UTC).isoformat(timespec="seconds"),
        "last_error": row["last_error"],
        "since": row["created_at"],
    }


def _subscription(
    settings: Settings, store: Store, sub: Subscription, now: datetime, check_clone: CloneCheck | None
) -> dict[str, Any]:
    nxt = None if schedule_problem(sub) else trigger_for(sub).get_next_fire_time(None, now)
    return {
        "name": sub.name,
        "metrics_id": sub.name if settings.metrics_label_names else subscription_label(sub.name),
        "origin": sub.origin,
        "repo": sub.repo,
        "branch": sub.branch,
        "git_dir": str(sub.git_dir) if sub.git_dir else None,
        "schedule": sub.schedule,
        "timezone": sub.timezone,
        "lang": sub.lang,
        "destinations": [f"{d.platform}:{d.channel}" for d in sub.destinations],
        "next_run": nxt.isoformat() if nxt else None,
        "last_run": _last_run(store, sub.name),
        "problem": check_subscription(settings, sub, check_clone),
        "warning": zone_warning("en", sub.timezone),
    }


def _last_run(store: Store, name: str) -> dict[str, Any] | None:
    rows = store.query("SELECT * FROM runs WHERE subscription = ? ORDER BY day DESC LIMIT 1", [name])
    if not rows:
        return None
    r = rows[0]
    return {
        "day": r["day"],
        "status": r["status"],
        "commits": r["commits"],
        "stats": json.loads(r["stats"] or "{}"),
        "llm_calls": r["llm_calls"] or 0,
        "tokens": r["tokens"] or 0,
        "error": r["error"],
    }


def render_status_text(data: dict[str, Any], *, missing_db: bool = False) -> str:
    note = " (does not exist yet: nothing has run on it)" if missing_db else ""
    lines = [f"database: {data['database']}{note}", ""]
    if not data["subscriptions"]:
        lines.append("no subscriptions (add them to the config file or with /digest subscribe in chat)")
    for sub in data["subscriptions"]:
        git = f"  (git: {sub['git_dir']})" if sub["git_dir"] else ""
        lines.append(f"{sub['name']}  [{sub['origin']}]")
        lines.append(f"  repo      {sub['repo']}{'@' + sub['branch'] if sub['branch'] else ''}{git}")
        lines.append(
            f"  schedule  {sub['schedule']} {sub['timezone']}, lang {sub['lang']}"
            f" → {', '.join(sub['destinations'])}"
        )
        lines.append(f"  next run  {sub['next_run'] or 'never'}")
        lines.append(f'  metrics   subscription="{sub["metrics_id"]}"')
        lines.append(f"  last run  {_last_run_text(sub['last_run'])}")
        if sub["problem"]:
            lines.append(f"  BROKEN    {sub['problem']}")
        if sub["warning"]:
            lines.append(f"  WARNING   {sub['warning']}")
        if sub.get("overdue"):
            lines.append(f"  OVERDUE   {sub['overdue']} (is the service running?)")
    if bad := [
        s["name"] for s in data["subscriptions"] if s["last_run"] and s["last_run"]["status"] in FAILED
    ]:
        lines += ["", f"last run failed: {', '.join(bad)} (exit status 1)"]
    if data["pending"]:
        lines += ["", f"pending work: {len(data['pending'])} (the running service retries it)"]
        for job in data["pending"]:
            tries = f"{job['attempts']} tr{'y' if job['attempts'] == 1 else 'ies'}"
            error = f" · last error: {job['last_error']}" if job["last_error"] else ""
            lines.append(f"  {job['destination']}  {job['what']} · {tries} · next {job['next_try']}{error}")
    usage = data["llm_last_7_days"]
    lines += [
        "",
        f"LLM, last 7 days: {usage['calls']} calls, {usage['tokens_in']} tokens in,"
        f" {usage['tokens_out']} tokens out",
    ]
    return "\n".join(lines) + "\n"


def render_status(
    settings: Settings, store: Store, file_subscriptions: list[Subscription], now: datetime | None = None
) -> str:
    return render_status_text(status_data(settings, store, file_subscriptions, now))


def _last_run_text(r: dict[str, Any] | None) -> str:
    if r is None:
        return "none yet"
    stats = r["stats"]
    counts = (
        f"{stats.get('total', r['commits'] or 0)} commits (high {stats.get('high', 0)},"
        f" medium {stats.get('medium', 0)}, low {stats.get('low', 0)})"
        if stats
        else ""
    )
    parts = [
        r["day"],
        r["status"].upper() if r["status"] in FAILED else r["status"],
        counts,
        f"{r['llm_calls']} LLM calls, {r['tokens']} tokens",
    ]
    if r["error"]:
        parts.append(f"error: {r['error']}")
    return " · ".join(p for p in parts if p)
