"""Issue 18 item 6: `digestbot logs` beside `llm logs` — a model filter, text search, a date range, a
totals line, truncation, JSON without prompts unless --full — and LLM_LOG_PROMPTS (off, on, days:N,
default 30 days) with a purge on every CLI write and daily in the service."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest

from bot.config.settings import Settings
from bot.service.retention import apply_prompt_policy, purge_daily
from bot.store.db import Store
from tests.bot.cli.test_cli import DAY, repo, run  # noqa: F401  (the throw-away clone fixture)
from tests.bot.cli.test_cli_ops import llm_db  # noqa: F401  (a day analysed by the fake LLM)
from tests.fakes.openai_server import FakeLLM


def calls(db, *args: str) -> list[dict]:
    result = run("logs", "--format", "json", "-n", "0", *args, db=db)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_model_filter(llm_db):  # noqa: F811
    everything = calls(llm_db)
    model = everything[0]["model"]
    assert calls(llm_db, "-m", model) == everything
    assert calls(llm_db, "--model", "some-other-model") == []


def test_text_search_in_prompts_and_replies(llm_db):  # noqa: F811
    rows = Store(llm_db).query("SELECT id, sha, prompt FROM llm_calls")
    export = {r["id"] for r in rows if "Add the export command" in r["prompt"]}
    assert export and len(export) < len(rows)
    assert {c["id"] for c in calls(llm_db, "-q", "add the EXPORT command")} == export
    assert {c["id"] for c in calls(llm_db, "-q", "export", "-q", "no such words anywhere")} == set()
    assert "prompt" not in calls(llm_db, "-q", "export")[0]  # searched, not shown


def test_date_range(llm_db):  # noqa: F811
    today = datetime.now(UTC).date()
    everything = calls(llm_db, "--tz", "UTC")
    assert calls(llm_db, "--since", today.isoformat(), "--tz", "UTC") == everything
    assert calls(llm_db, "--until", today.isoformat(), "--tz", "UTC") == everything
    yesterday = (today - timedelta(days=1)).isoformat()
    assert calls(llm_db, "--until", yesterday, "--tz", "UTC") == []
    assert calls(llm_db, "--since", "2026-01-01", "--until", yesterday, "--tz", "UTC") == []


def test_totals_line_counts_every_matching_call(llm_db):  # noqa: F811
    rows = Store(llm_db).query("SELECT tokens_in, tokens_out FROM llm_calls")
    text = run("logs", "-n", "1", "-u", db=llm_db).stdout
    last = text.strip().splitlines()[-1]
    assert last.startswith(
        f"total: {len(rows)} calls (0 not ok), {sum(r['tokens_in'] for r in rows)} tokens in,"
    )
    assert f"{sum(r['tokens_out'] for r in rows)} tokens out, $" in last
    totals = json.loads(run("logs", "-u", "--format", "json", db=llm_db).stdout)["totals"]
    assert totals["calls"] == len(rows) and totals["tokens_in"] == sum(r["tokens_in"] for r in rows)


def test_truncate_puts_each_text_on_one_short_line(llm_db):  # noqa: F811
    full = run("logs", "-n", "1", "--full", db=llm_db).stdout
    short = run("logs", "-n", "1", "--full", "-t", "40", db=llm_db).stdout
    assert len(short.splitlines()) < len(full.splitlines())
    prompt_lines = [line for line in short.splitlines() if line.startswith("      [")]
    assert prompt_lines and all("… (+" in line for line in prompt_lines)
    assert all(len(line.split("] ", 1)[1].split("…")[0]) <= 40 for line in prompt_lines)
    default = run("logs", "-n", "1", "--full", "-t", db=llm_db)
    assert default.exit_code == 0 and "… (+" in default.stdout


def test_json_has_prompts_only_with_full(llm_db):  # noqa: F811
    assert all("prompt" not in c and "reply" not in c for c in calls(llm_db))
    assert all(c["prompt"] and c["reply"] for c in calls(llm_db, "--full"))


def analysed_day(repo_path, db, monkeypatch, **env: str) -> Store:
    with FakeLLM() as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("DIGEST_MODEL", llm.model)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        result = run("digest", "--git-dir", str(repo_path), "--date", DAY, "--tz", "Asia/Shanghai", db=db)
        assert result.exit_code == 0, result.output
    return Store(db)


def test_prompts_off_stores_none(repo, tmp_path, monkeypatch):  # noqa: F811
    store = analysed_day(repo.path, tmp_path / "d.db", monkeypatch, LLM_LOG_PROMPTS="off")
    rows = store.query("SELECT prompt, reply, tokens_in FROM llm_calls")
    assert rows and all(r["prompt"] is None and r["reply"] is None and r["tokens_in"] > 0 for r in rows)


def age_calls(store: Store, days: int) -> None:
    old = (datetime.now(UTC) - timedelta(days=days)).isoformat()
    store.db.execute("UPDATE llm_calls SET created_at = ?", [old])
    store.db.conn.commit()


@pytest.mark.parametrize(
    ("policy", "age", "kept"),
    [(None, 31, False), (None, 29, True), ("days:7", 8, False), ("days:7", 6, True), ("on", 4000, True)],
)
def test_a_cli_write_purges_old_prompts(repo, tmp_path, monkeypatch, policy, age, kept):  # noqa: F811
    db = tmp_path / "d.db"
    store = analysed_day(repo.path, db, monkeypatch)
    age_calls(store, age)
    if policy:
        monkeypatch.setenv("LLM_LOG_PROMPTS", policy)
    # Any command that writes the database applies the policy; one that only reads does not.
    assert run("logs", db=db).exit_code == 0
    assert all(r["prompt"] for r in store.query("SELECT prompt FROM llm_calls"))
    again = ("digest", "--git-dir", str(repo.path), "--date", DAY, "--analyzer", "heuristic")
    assert run(*again, db=db).exit_code == 0
    rows = store.query("SELECT prompt, reply, tokens_in FROM llm_calls")
    assert all(bool(r["prompt"]) == kept and bool(r["reply"]) == kept for r in rows)
    assert all(r["tokens_in"] > 0 for r in rows)  # the calls themselves stay


async def test_the_service_purges_daily(tmp_path):
    store = Store(tmp_path / "d.db")
    store.log_llm_call(model="m", outcome="ok", prompt="[]", reply="private diff", tokens_in=1)
    age_calls(store, 40)
    settings = Settings(digest_db=tmp_path / "d.db")
    task = asyncio.create_task(purge_daily(store, settings, every=0.05))
    try:
        for _ in range(100):
            await asyncio.sleep(0.05)
            if store.query("SELECT reply FROM llm_calls")[0]["reply"] is None:
                break
    finally:
        task.cancel()
    assert store.query("SELECT reply, tokens_in FROM llm_calls") == [{"reply": None, "tokens_in": 1}]


def test_policy_values(tmp_path):
    assert Settings().prompt_days == 30
    assert Settings(llm_log_prompts="OFF").prompt_days == 0
    assert Settings(llm_log_prompts="on").prompt_days is None
    assert Settings(llm_log_prompts="days: 3").prompt_days == 3
    store = Store(tmp_path / "d.db")
    apply_prompt_policy(store, Settings(llm_log_prompts="off"))
    store.log_llm_call(model="m", outcome="ok", prompt="[]", reply="r")
    assert store.query("SELECT prompt, reply FROM llm_calls") == [{"prompt": None, "reply": None}]


def test_a_bad_policy_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_LOG_PROMPTS", "weekly")
    result = run("status", db=tmp_path / "d.db")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: invalid settings: LLM_LOG_PROMPTS: must be off, on or days:N"
        " (keep prompts and replies N days), got 'weekly'"
    ]


def test_a_reply_or_error_with_terminal_escapes_is_shown_not_run(llm_db):  # noqa: F811
    store = Store(llm_db)
    [row] = store.query("SELECT id FROM llm_calls ORDER BY id DESC LIMIT 1")
    store.db.execute(
        "UPDATE llm_calls SET reply = ?, error = ? WHERE id = ?",
        ["ok \x1b]0;owned\x07\x1b[2J done\u202e", "HTTP 500: \x1b[31mboom\x1b[0m", row["id"]],
    )
    store.db.conn.commit()
    text = run("logs", "-n", "1", "--full", db=llm_db).stdout
    assert "\x1b" not in text and "\u202e" not in text
    assert "reply:\n      ok  done" in text and "error: HTTP 500: boom" in text
