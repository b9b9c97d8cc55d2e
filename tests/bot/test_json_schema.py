"""docs/json.md is generated from bot/json_schema.py, and real `--format json` outputs validate
against those models strictly (no unknown key, no missing key, no coercion)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import TypeAdapter

from bot.json_schema import (
    CommitJSON,
    DigestJSON,
    DryRunJSON,
    LLMCallJSON,
    LLMLogsWithTotalsJSON,
    StatusJSON,
    markdown,
)
from tests.bot.cli.test_cli import DAY, repo, run  # noqa: F401
from tests.bot.cli.test_cli_ops import llm_db  # noqa: F401

DOCS = Path(__file__).resolve().parents[2] / "docs" / "json.md"


def test_docs_json_md_is_current():
    assert DOCS.read_text(encoding="utf-8") == markdown(), "run: python -m bot.json_schema > docs/json.md"


def strictly(model, text: str):
    return TypeAdapter(model).validate_json(text, strict=True)


def test_digest_analyze_and_dry_run_outputs_match(repo, tmp_path):  # noqa: F811
    db = tmp_path / "d.db"
    for lang in ("zh", "en"):
        out = run(
            "digest", "--git-dir", str(repo.path), "--date", DAY, "--lang", lang, "--format", "json", db=db
        )
        digest = strictly(DigestJSON, out.stdout)
        assert digest.stats.total == len(digest.commits) == 3
        assert {c.importance for c in digest.commits} >= {"low"}
    one = run("analyze", "HEAD~1", "--git-dir", str(repo.path), "--format", "json", db=db).stdout
    assert strictly(CommitJSON, one).title.startswith("[Feature]")
    two = run("analyze", "HEAD~1", "HEAD~2", "--git-dir", str(repo.path), "--format", "json", db=db).stdout
    assert len(strictly(list[CommitJSON], two)) == 2
    for platform, channel in (("slack", "C1"), ("discord", "123456789012345678")):
        plan = run("post", "--platform", platform, "--channel", channel, "--git-dir", str(repo.path),
                   "--date", DAY, "--dry-run", "--format", "json", db=db).stdout  # fmt: skip
        assert strictly(DryRunJSON, plan).messages


def test_status_output_matches(repo, tmp_path):  # noqa: F811
    config = tmp_path / "digest.toml"
    config.write_text(
        f'[[subscription]]\nname = "w"\nrepo = "acme/widgets"\ngit_dir = "{repo.path}"\nslack_channels = ["C1"]\n',
        encoding="utf-8",
    )
    out = run("status", "--config", str(config), "--format", "json", db=tmp_path / "d.db").stdout
    status = strictly(StatusJSON, out)
    assert [s.name for s in status.subscriptions] == ["w"]


def test_logs_output_matches(llm_db):  # noqa: F811
    calls = strictly(list[LLMCallJSON], run("logs", "--format", "json", db=llm_db).stdout)
    assert calls and all(c.prompt is None and c.reply is None for c in calls)
    calls = strictly(list[LLMCallJSON], run("logs", "--format", "json", "--full", db=llm_db).stdout)
    assert calls and all(c.prompt and c.reply for c in calls)
    both = strictly(LLMLogsWithTotalsJSON, run("logs", "-u", "--format", "json", db=llm_db).stdout)
    assert both.totals.calls == len(both.calls) and both.totals.tokens_in > 0
    assert json.loads(run("logs", "--format", "json", "--sha", "ffff", db=llm_db).stdout) == []


def test_every_verb_with_json_output_has_its_schema_in_docs():
    """`--format json`'s help points at docs/json.md: each such verb must have its section there."""
    import click

    from bot.cli.main import cli

    text = DOCS.read_text(encoding="utf-8")
    verbs = [
        name
        for name, command in cli.commands.items()
        if any(
            isinstance(p.type, click.Choice) and "json" in p.type.choices and p.name == "fmt"
            for p in command.params
        )
    ]
    assert "eval" in verbs
    missing = [name for name in verbs if f"## `digestbot {name} " not in text]
    assert missing == []
