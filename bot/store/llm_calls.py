"""`digestbot logs`: the LLM calls of the store's llm_calls table, newest first, like `llm logs`.

One row per attempt (a retried call shows each attempt), with tokens, latency, cost and outcome;
with --full the prompt (the chat messages sent) and the reply. Calls recorded before the prompt and
reply were stored, or whose text LLM_LOG_PROMPTS kept no longer, show them as absent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from typing import Any

from analysis.errors import InputError
from analysis.text import printable
from analysis.window import day_window
from bot.store.db import Store

# What the LLM client records as an outcome: "ok", a finish reason other than "stop", or a failure.
KNOWN_OUTCOMES = ("ok", "length", "content_filter", "unknown", "timeout", "connection error", "empty reply")
HTTP_OUTCOME = re.compile(r"^http \d{3}$")
KNOWN_PURPOSES = ("analysis", "repair", "qa")

_SUMMARY = (
    "id, created_at, model, prompt_version, purpose, repo, sha, tokens_in, tokens_out, latency_ms,"
    " finish_reason, outcome, error, cost_usd"
)


@dataclass(frozen=True, slots=True)
class CallFilter:
    day: date | None = None  # calls made on this calendar day in tz
    since: date | None = None  # calls made on or after this day in tz
    until: date | None = None  # calls made on or before this day in tz
    tz: tzinfo = UTC
    sha: str | None = None  # a SHA prefix
    repo: str | None = None
    model: str | None = None
    purpose: str | None = None
    outcome: str | None = None
    query: tuple[str, ...] = ()  # every one of these appears in the prompt, reply, error or model
    limit: int = 20  # 0: no limit


def check_choices(store: Store, purpose: str | None, outcome: str | None) -> None:
    """An outcome or purpose no call can have is a typo, not an empty answer: one line naming what
    exists (the known values and those recorded in this database)."""
    recorded = store.query("SELECT DISTINCT purpose, outcome FROM llm_calls")
    if outcome and not HTTP_OUTCOME.match(outcome):
        known = dict.fromkeys([*KNOWN_OUTCOMES, *sorted({r["outcome"] for r in recorded if r["outcome"]})])
        if outcome not in known:
            raise InputError(f"unknown --outcome {outcome!r}: use one of {', '.join(known)} or 'http NNN'")
    if purpose:
        base = {(r["purpose"] or "").split("-")[0] for r in recorded}
        known = dict.fromkeys([*KNOWN_PURPOSES, *sorted(p for p in base if p)])
        if purpose not in known and purpose not in {r["purpose"] for r in recorded}:
            raise InputError(f"unknown --purpose {purpose!r}: use one of {', '.join(known)}")


def _where(f: CallFilter) -> tuple[str, list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    for first, last in ((f.day, f.day), (f.since, f.until)):
        if first is not None:
            where.append("created_at >= ?")
            params.append(day_window(first, f.tz)[0].astimezone(UTC).isoformat())  # type: ignore[arg-type]
        if last is not None:
            where.append("created_at < ?")
            params.append(day_window(last, f.tz)[1].astimezone(UTC).isoformat())  # type: ignore[arg-type]
    if f.sha:
        where.append("sha LIKE ?")
        params.append(f.sha.strip().lower().replace("%", "").replace("_", "") + "%")
    for column, value in (("repo", f.repo), ("outcome", f.outcome), ("model", f.model)):
        if value:
            where.append(f"{column} = ?")
            params.append(value)
    if f.purpose:  # "analysis" also matches analysis-high and analysis-medium
        where.append("(purpose = ? OR purpose LIKE ? || '-%')")
        params += [f.purpose, f.purpose.replace("%", "").replace("_", "")]
    for text in f.query:  # like `llm logs -q`: plain text, case-insensitive, every word given must match
        where.append(
            "instr(lower(coalesce(prompt, '') || ' ' || coalesce(reply, '') || ' ' || coalesce(error, '')"
            " || ' ' || coalesce(model, '')), lower(?)) > 0"
        )
        params.append(text)
    return (" WHERE " + " AND ".join(where)) if where else "", params


def query_calls(store: Store, f: CallFilter, *, full: bool = False) -> list[dict[str, Any]]:
    """The matching calls, newest first, as plain JSON types."""
    where, params = _where(f)
    sql = f"SELECT {_SUMMARY}{', prompt, reply' if full else ''} FROM llm_calls{where}"
    sql += " ORDER BY created_at DESC, id DESC"
    if f.limit:
        sql += f" LIMIT {int(f.limit)}"
    rows = store.query(sql, params)
    if full:
        for row in rows:
            row["prompt"] = _messages(row["prompt"])
    return rows


def call_totals(store: Store, f: CallFilter) -> dict[str, Any]:
    """Totals over every matching call (not only the newest -n): calls, failures, tokens, cost."""
    where, params = _where(f)
    [row] = store.query(
        "SELECT count(*) AS calls, coalesce(sum(outcome != 'ok'), 0) AS failed,"
        " coalesce(sum(tokens_in), 0) AS tokens_in, coalesce(sum(tokens_out), 0) AS tokens_out,"
        f" sum(cost_usd) AS cost_usd, sum(latency_ms) AS latency_ms FROM llm_calls{where}",
        params,
    )
    return row


def render_totals(t: dict[str, Any]) -> str:
    cost = f"${t['cost_usd']:.6f}" if t["cost_usd"] is not None else "cost n/a"
    seconds = (t["latency_ms"] or 0) / 1000
    return (
        f"total: {t['calls']} calls ({t['failed']} not ok), {t['tokens_in']} tokens in,"
        f" {t['tokens_out']} tokens out, {cost}, {seconds:.1f} s of calls"
    )


def truncate(text: str, limit: int) -> str:
    """`-t`: one line of at most `limit` characters, saying how much was cut."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return f"{flat[:limit]}… (+{len(flat) - limit} chars)"


def _messages(raw: str | None) -> list[dict[str, Any]] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return [{"role": "user", "content": raw}]
    return value if isinstance(value, list) else [{"role": "user", "content": str(value)}]


def render_calls(
    calls: list[dict[str, Any]], tz: tzinfo, *, full: bool = False, cut: int | None = None
) -> str:
    """cut: -t, every error, message and reply on one line of at most this many characters."""
    if not calls:
        return "no LLM calls recorded (matching these filters)"
    blocks = []
    for c in calls:
        when = datetime.fromisoformat(c["created_at"]).astimezone(tz).strftime("%Y-%m-%d %H:%M:%S %z")
        about = f"{c['repo'] or '-'}@{(c['sha'] or '-')[:12]}"
        cost = f"${c['cost_usd']:.6f}" if c["cost_usd"] is not None else "cost n/a"
        latency = f"{c['latency_ms']:.0f} ms" if c["latency_ms"] is not None else "? ms"
        head = (
            f"#{c['id']}  {when}  {c['purpose'] or '-'}  {about}  {c['outcome'] or '-'}  {c['model']}"
            f"  in {c['tokens_in'] or 0} / out {c['tokens_out'] or 0} tokens  {latency}  {cost}"
        )
        lines = [head]
        # A reply, a prompt's commit text or a server's error may carry terminal escapes: shown, never run.
        if c["error"]:
            error = printable(str(c["error"]))
            lines.append(f"    error: {truncate(error, cut) if cut else error}")
        if full:
            lines.append("    prompt:")
            if c["prompt"] is None:
                lines.append("      (not stored)")
            for m in c["prompt"] or []:
                content = printable(str(m.get("content", "")))
                if cut:
                    lines.append(f"      [{m.get('role', '?')}] {truncate(content, cut)}")
                    continue
                lines.append(f"      [{m.get('role', '?')}]")
                lines += [f"        {line}" for line in content.splitlines()]
            lines.append("    reply:")
            reply = printable(c["reply"]) if c["reply"] is not None else None
            if reply is None:
                lines.append("      (none)")
            elif cut:
                lines.append(f"      {truncate(reply, cut)}")
            else:
                lines += [f"      {line}" for line in reply.splitlines()]
        blocks.append("\n".join(lines))
    return ("\n\n" if full else "\n").join(blocks)
