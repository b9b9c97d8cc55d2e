"""The CLI's habits: global options anywhere, `analyze` on several refs and git names, JSON from
`status` and `post`, `post --dry-run` showing exactly what would be posted, `logs`, help everywhere."""

from __future__ import annotations

import json

import click
import pytest

from bot.cli.main import cli
from bot.json_schema import PostResultJSON
from bot.store.db import Store
from tests.bot.cli.test_cli import DAY, repo, run  # noqa: F401  (the throw-away clone fixture)
from tests.fakes.openai_server import FakeLLM
from tests.fakes.slack_api import FakeSlack


def test_global_options_after_the_verb(repo, tmp_path):  # noqa: F811
    db = tmp_path / "after.db"
    args = ["digest", "--git-dir", str(repo.path), "--date", DAY, "--tz", "UTC", "--format", "json"]
    result = run(*args, "--db", str(db), "-v")
    assert result.exit_code == 0, result.output
    assert Store(db).query("SELECT count(*) AS n FROM commits")[0]["n"] > 0
    assert " INFO " in result.stderr  # -v took effect after the verb
    quiet = run(*args, "--db", str(db))
    assert " INFO " not in quiet.stderr
    before = run("-v", "--db", str(tmp_path / "before.db"), *args)
    assert before.exit_code == 0 and (tmp_path / "before.db").exists()


def test_analyze_several_refs_head_and_branch_names(repo, tmp_path):  # noqa: F811
    head, older = repo.rev_parse("HEAD"), repo.rev_parse("HEAD~2")
    out = tmp_path / "cards.json"
    result = run(
        "analyze", "HEAD", "main", older[:10], "HEAD~2", "--git-dir", str(repo.path),
        "--format", "json", "--tz", "UTC", "--out", str(out), db=tmp_path / "d.db",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    cards = json.loads(out.read_text(encoding="utf-8"))
    assert [c["sha"] for c in cards] == [head, head, older, older]
    assert all(c["committed_at"].endswith("+00:00") for c in cards)
    shanghai = run("analyze", "HEAD", "--git-dir", str(repo.path), "--format", "json", db=tmp_path / "d.db")
    assert json.loads(shanghai.stdout)["committed_at"].endswith("+08:00")  # DIGEST_TZ's default
    markdown = run(
        "analyze", "HEAD~1", "HEAD~2", "--git-dir", str(repo.path), "--lang", "en", db=tmp_path / "d.db"
    )
    assert markdown.stdout.count("🎯 Change type") == 2


def test_analyze_takes_a_branch_named_in_any_script(repo, tmp_path):  # noqa: F811
    # git allows "修复/登录" or "café" as a branch; analyze refused them as "cannot read ... as a commit"
    older = repo.rev_parse("HEAD~1")
    repo.git("branch", "修复/登录", older)
    repo.git("branch", "café", "HEAD")
    result = run(
        "analyze", "修复/登录", "café", "--git-dir", str(repo.path), "--format", "json", db=tmp_path / "d.db"
    )
    assert result.exit_code == 0, result.output
    assert [c["sha"] for c in json.loads(result.stdout)] == [older, repo.rev_parse("HEAD")]
    dash = run("analyze", "--git-dir", str(repo.path), "--", "-rf", db=tmp_path / "d.db")
    assert dash.exit_code == 2 and "cannot read '-rf' as a commit" in dash.stderr  # never an option to git


def test_analyze_an_unknown_name_is_one_line(repo, tmp_path):  # noqa: F811
    result = run("analyze", "no-such-branch", "--git-dir", str(repo.path), db=tmp_path / "d.db")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: cannot read 'no-such-branch' as a commit: not a SHA, #PR, commit URL or owner/name@sha,"
        " and no branch or tag of that name in acme/widgets"
    )


def test_analyze_past_the_first_commit_says_so(repo, tmp_path):  # noqa: F811
    result = run("analyze", "HEAD~100", "--git-dir", str(repo.path), db=tmp_path / "d.db")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: cannot read 'HEAD~100': 'HEAD' has fewer commits than that behind it in acme/widgets"
        " (or no branch or tag is named so)"
    )


def test_every_option_of_every_verb_has_help():
    missing = [
        f"{name} {param.opts[0]}"
        for name, command in cli.commands.items()
        for param in command.params
        if isinstance(param, click.Option) and not param.help
    ]
    missing += [f"digestbot {p.opts[0]}" for p in cli.params if isinstance(p, click.Option) and not p.help]
    assert missing == []
    for name in cli.commands:
        assert run(name, "--help").exit_code == 0


def post_args(repo_path, platform="slack", channel="C0DIGEST"):
    return ["post", "--platform", platform, "--channel", channel, "--git-dir", str(repo_path),
            "--date", DAY, "--tz", "Asia/Shanghai", "--lang", "en"]  # fmt: skip


def test_dry_run_shows_exactly_what_a_post_sends(repo, tmp_path, monkeypatch):  # noqa: F811
    db = tmp_path / "d.db"
    dry = run(*post_args(repo.path), "--dry-run", "--format", "json", db=db)  # no token: no network
    assert dry.exit_code == 0, dry.output
    plan = json.loads(dry.stdout)
    items = [(m["item"], m["part"]) for m in plan["messages"]]
    assert items[0] == ("parent", 1) and items[-1] == ("report", 1)
    assert not any(m["already_posted"] for m in plan["messages"])
    for m in plan["messages"]:
        assert m["size"]["json_bytes"] == len(json.dumps(m["payload"], ensure_ascii=False).encode())
    with FakeSlack() as slack:
        monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
        monkeypatch.setenv("SLACK_API_URL", slack.api_url)
        posted = run(*post_args(repo.path), "--format", "json", db=db)
        assert posted.exit_code == 0, posted.output
        result = json.loads(posted.stdout)
        PostResultJSON.model_validate_json(posted.stdout, strict=True)
        assert result["posted"] == list(dict.fromkeys(m["item"] for m in plan["messages"]))
        [parent] = slack.channel_messages("C0DIGEST")
        sent = [parent, *[m for m in slack.thread("C0DIGEST", parent.ts) if m.ts != parent.ts]]
        text_messages = [m for m in plan["messages"] if "blocks" in m["payload"]]
        assert [(m.text, m.blocks) for m in sent if m.blocks] == [
            (m["payload"]["text"], m["payload"]["blocks"]) for m in text_messages
        ]
    again = run(*post_args(repo.path), "--dry-run", "--format", "json", db=db)
    assert all(m["already_posted"] for m in json.loads(again.stdout)["messages"])


def test_dry_run_for_discord_in_text(repo, tmp_path):  # noqa: F811
    result = run(*post_args(repo.path, "discord", "123456789012345678"), "--dry-run", db=tmp_path / "d.db")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("dry run: acme/widgets@main/2026-01-26/Asia/Shanghai/en to discord:")
    assert "── parent 1/1: json_bytes" in result.stdout and "embed_chars" in result.stdout
    assert "── report 1/1" in result.stdout


@pytest.fixture
def llm_db(repo, tmp_path, monkeypatch):  # noqa: F811
    """A day analysed by the fake LLM through the CLI: llm_calls has rows with prompts and replies."""
    db = tmp_path / "d.db"
    with FakeLLM() as llm:
        llm.force(purpose="analysis", importance="medium")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("DIGEST_MODEL", llm.model)
        monkeypatch.setenv("LLM_PRICE_IN", "1")
        monkeypatch.setenv("LLM_PRICE_OUT", "2")
        result = run("digest", "--git-dir", str(repo.path), "--date", DAY, "--tz", "Asia/Shanghai", db=db)
        assert result.exit_code == 0, result.output
    return db


def test_logs_newest_first_with_filters(llm_db, repo):  # noqa: F811
    rows = Store(llm_db).query("SELECT * FROM llm_calls ORDER BY created_at DESC, id DESC")
    assert len(rows) >= 3 and all(r["prompt"] and r["reply"] for r in rows)
    result = run("logs", "--format", "json", "-n", "0", db=llm_db)
    assert result.exit_code == 0, result.output
    calls = json.loads(result.stdout)
    assert [c["id"] for c in calls] == [r["id"] for r in rows]
    first = calls[0]
    assert first["tokens_in"] > 0 and first["latency_ms"] >= 0 and first["cost_usd"] > 0
    assert "prompt" not in first and "reply" not in first  # private diffs only with --full
    full_json = json.loads(run("logs", "--format", "json", "-n", "1", "--full", db=llm_db).stdout)
    assert full_json[0]["prompt"][0]["role"] == "system" and full_json[0]["reply"] == rows[0]["reply"]

    sha = rows[-1]["sha"]
    by_sha = json.loads(run("logs", "--format", "json", "--sha", sha[:8], db=llm_db).stdout)
    assert by_sha and {c["sha"] for c in by_sha} == {sha}
    analysis = json.loads(
        run("logs", "--format", "json", "--purpose", "analysis", "-n", "0", db=llm_db).stdout
    )
    assert analysis and {c["purpose"] for c in analysis} <= {"analysis", "analysis-batch"}
    assert len(analysis) == sum(1 for r in rows if r["purpose"].startswith("analysis"))
    assert json.loads(run("logs", "--format", "json", "--purpose", "qa", db=llm_db).stdout) == []
    assert json.loads(run("logs", "--format", "json", "--outcome", "timeout", db=llm_db).stdout) == []
    assert len(json.loads(run("logs", "--format", "json", "-n", "2", db=llm_db).stdout)) == 2

    today = rows[0]["created_at"][:10]
    on_day = json.loads(run("logs", "--format", "json", "--date", today, "--tz", "UTC", db=llm_db).stdout)
    assert len(on_day) == min(20, len(rows))
    assert json.loads(run("logs", "--format", "json", "--date", DAY, "--tz", "UTC", db=llm_db).stdout) == []

    text = run("logs", "-n", "1", db=llm_db).stdout
    assert text.startswith(f"#{rows[0]['id']}  ") and "tokens" in text and "$" in text
    assert "prompt:" not in text
    full = run("logs", "-n", "1", "--full", db=llm_db).stdout
    assert "prompt:" in full and "[system]" in full and "reply:" in full


def test_logs_on_an_empty_store(tmp_path):
    from bot.store.db import Store

    Store(tmp_path / "d.db").close()
    result = run("logs", db=tmp_path / "d.db")
    assert result.exit_code == 0 and "no LLM calls recorded" in result.stdout


def test_logs_on_a_database_that_does_not_exist_exits_1_and_says_where_the_services_is(tmp_path):
    """Run outside the service's environment, `logs` said "no LLM calls recorded" and exit 0: the model
    looked free."""
    result = run("logs", db=tmp_path / "nope.db")
    assert result.exit_code == 1 and "no LLM calls recorded" in result.stdout
    assert f"no database at {tmp_path / 'nope.db'}: nothing has run on it" in result.stderr
    assert not (tmp_path / "nope.db").exists()


def test_a_database_path_under_home_is_home_not_a_folder_named_tilde(repo, tmp_path, monkeypatch):  # noqa: F811
    """DIGEST_DB=~/digest.db in .env (no shell expands it there): the database went into a folder named "~"
    in the working directory, where `status`, which expanded it, did not look."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    (work / ".env").write_text("DIGEST_DB=~/data/digest.db\n", encoding="utf-8")
    monkeypatch.delenv("DIGEST_DB", raising=False)
    result = click.testing.CliRunner().invoke(
        cli, ["digest", "--git-dir", str(repo.path), "--date", DAY, "--tz", "UTC"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert (home / "data" / "digest.db").exists() and not (work / "~").exists()
    status = click.testing.CliRunner().invoke(cli, ["status"])
    assert f"database: {home / 'data' / 'digest.db'}" in status.output, status.output
    assert "does not exist yet" not in status.output


def test_a_bad_setting_names_what_was_set_never_a_secret(tmp_path, monkeypatch):
    """DIGEST_TZ=Beijing said "DIGEST_TZ: Value error, not an IANA time zone": pydantic's prefix, and not
    what was set (a typo in .env or the unit is found by seeing it). A secret's value is never shown."""
    monkeypatch.setenv("DIGEST_TZ", "Beijing")
    monkeypatch.setenv("DIGEST_CATCHUP_DAYS", "three")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-secret-value-1234")
    result = run("status", db=tmp_path / "d.db")
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    # the zone meant, as --tz says it
    assert "DIGEST_TZ: not an IANA time zone (did you mean Asia/Shanghai?), got 'Beijing'" in line
    assert "DIGEST_CATCHUP_DAYS: Input should be a valid integer" in line and "got 'three'" in line
    assert "Value error" not in line and "xoxb-secret" not in line
