"""`digestbot logs`: the LLM calls of the store's llm_calls table, newest first, like `llm logs`.

One row per attempt (a retried call shows each attempt), with tokens, latency, cost and outcome;
with --full the prompt (the chat messages sent) and the reply. Calls recorded before the prompt and
reply were stored show them as absent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from typing import Any

from analysis.window import day_window
from bot.store import Store

_SUMMARY = (
    "id, created_at, model, prompt_version, purpose, repo, sha, tokens_in, tokens_out, latency_ms,"
    " finish_reason, outcome, error, cost_usd"
)


@dataclass(frozen=True, slots=True)
class CallFilter:
    day: date | None = None  # calls made on this calendar day in tz
    tz: tzinfo = UTC
    sha: str | None = None  # a SHA prefix
    repo: str | None = None
    purpose: str | None = None
    outcome: str | None = None
    limit: int = 20  # 0: no limit


def query_calls(store: Store, f: CallFilter, *, full: bool = False) -> list[dict[str, Any]]:
    """The matching calls, newest first, as plain JSON types."""
    where: list[str] = []
    params: list[Any] = []
    if f.day is not None:
        start, end = day_window(f.day, f.tz)  # type: ignore[arg-type]
        where.append("created_at >= ? AND created_at < ?")
        params += [start.astimezone(UTC).isoformat(), end.astimezone(UTC).isoformat()]
    if f.sha:
        where.append("sha LIKE ?")
        params.append(f.sha.strip().lower().replace("%", "").replace("_", "") + "%")
    for column, value in (("repo", f.repo), ("outcome", f.outcome)):
        if value:
            where.append(f"{column} = ?")
            params.append(value)
    if f.purpose:  # "analysis" also matches analysis-high and analysis-medium
        where.append("(purpose = ? OR purpose LIKE ? || '-%')")
        params += [f.purpose, f.purpose.replace("%", "").replace("_", "")]
    has_text = {"prompt", "reply"} <= set(store.db["llm_calls"].columns_dict)
    columns = _SUMMARY + (", prompt, reply" if full and has_text else "")
    sql = f"SELECT {columns} FROM llm_calls"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY created_at DESC, id DESC"
    if f.limit:
        sql += f" LIMIT {int(f.limit)}"
    rows = store.query(sql, params)
    if full:
        for row in rows:
            row.setdefault("prompt", None)
            row.setdefault("reply", None)
            row["prompt"] = _messages(row["prompt"])
    return rows


def _messages(raw: str | None) -> list[dict[str, Any]] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return [{"role": "user", "content": raw}]
    return value if isinstance(value, list) else [{"role": "user", "content": str(value)}]


def render_calls(calls: list[dict[str, Any]], tz: tzinfo, *, full: bool = False) -> str:
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
        if c["error"]:
            lines.append(f"    error: {c['error']}")
        if full:
            lines.append("    prompt:")
            if c["prompt"] is None:
                lines.append("      (not stored)")
            for m in c["prompt"] or []:
                lines.append(f"      [{m.get('role', '?')}]")
                lines += [f"        {line}" for line in str(m.get("content", "")).splitlines()]
            lines.append("    reply:")
            reply = c["reply"]
            lines += (
                [f"      {line}" for line in reply.splitlines()] if reply is not None else ["      (none)"]
            )
        blocks.append("\n".join(lines))
    return ("\n\n" if full else "\n").join(blocks)
