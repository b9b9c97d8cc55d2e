"""No configured secret reaches a printed line, whatever path printed it: the final error line,
an unexpected error, a -vv traceback, the report itself."""

from __future__ import annotations

import logging

import pytest
from click.testing import CliRunner

import bot.cli.digest
from bot.cli.main import cli
from bot.monitoring.logs import RedactSecrets
from tests.fakes.slack_api import FakeSlack

DAY = "2026-01-26"


def post_to_slack(repo, tmp_path):
    """`digestbot post` of DAY to the fake Slack the environment names."""
    return CliRunner().invoke(
        cli,
        ["--db", str(tmp_path / "d.db"), "post", "--platform", "slack", "--channel", "C0DIGEST",
         "--git-dir", str(repo.path), "--date", DAY, "--tz", "Asia/Shanghai"],
    )  # fmt: skip


def test_a_slack_error_echoing_the_token_is_scrubbed_from_the_final_line(repo, tmp_path, monkeypatch):
    with FakeSlack() as slack:
        monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)
        monkeypatch.setenv("SLACK_API_URL", slack.api_url)
        # An endpoint that echoes the request it refused, Authorization header included.
        slack.fail("chat.postMessage", error=f"bad request: Authorization: Bearer {slack.token}", times=10)
        result = post_to_slack(repo, tmp_path)
    assert result.exit_code == 2, result.output
    assert "Bearer ***" in result.stderr
    assert slack.token not in result.output


@pytest.mark.parametrize("pasted", ["Bearer {}", "  {}  "])
def test_a_token_pasted_with_its_scheme_or_spaces_is_masked_as_sent(repo, tmp_path, monkeypatch, pasted):
    """The token sent is the pasted value without its scheme and spaces (bot.ports.secrets.without_scheme); the
    masking looked for the pasted value itself, so a server echoing the token as sent leaked it whole."""
    with FakeSlack() as slack:
        monkeypatch.setenv("SLACK_BOT_TOKEN", pasted.format(slack.token))
        monkeypatch.setenv("SLACK_API_URL", slack.api_url)
        slack.fail(
            "chat.postMessage", error=f"bad request: token {slack.token} is not allowed here", times=10
        )
        result = post_to_slack(repo, tmp_path)
    assert result.exit_code == 2, result.output
    assert "token *** is not allowed" in result.stderr
    assert slack.token not in result.output


def test_a_secret_is_masked_as_pasted_and_as_sent():
    from bot.ports.secrets import scrub

    for pasted in ("Bearer sk-live-0123456789", "token sk-live-0123456789", "\tsk-live-0123456789 \n"):
        assert scrub("401: key sk-live-0123456789 rejected", [pasted]) == "401: key *** rejected"
    assert scrub("Bearer tokens are refused", ["Bearer sk-live-0123456789"]) == "Bearer tokens are refused"


def test_an_unexpected_error_and_its_traceback_are_scrubbed(repo, tmp_path, monkeypatch):
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)

    async def explode(*args, **kwargs):
        raise RuntimeError(f"client built with api_key={secret}")

    monkeypatch.setattr(bot.cli.digest, "build_day", explode)
    result = CliRunner().invoke(
        cli, ["-vv", "--db", str(tmp_path / "d.db"), "digest", "--git-dir", str(repo.path), "--date", DAY]
    )
    assert result.exit_code == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last == "error: unexpected RuntimeError: client built with api_key=*** (run with -vv for details)"
    assert secret not in result.output


def test_the_report_itself_is_scrubbed(repo, tmp_path, monkeypatch):
    secret = "ghpABCDEFGHIJKLMNOP0123"  # no Markdown-escaped characters
    monkeypatch.setenv("GITHUB_TOKEN", secret)
    repo.commit(f"Oops, committed {secret} (#13)", {"b.py": "y = 2\n"}, when="2026-01-26T11:00:00+08:00")
    result = CliRunner().invoke(
        cli,
        ["--db", str(tmp_path / "d.db"), "digest", "--git-dir", str(repo.path), "--date", DAY,
         "--tz", "Asia/Shanghai"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Oops, committed ***" in result.stdout and secret not in result.output


def test_log_filter_masks_exception_text():
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", None, None)
    try:
        raise ValueError("token xoxb-123456789 refused")
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    RedactSecrets(["xoxb-123456789"]).filter(record)
    text = logging.Formatter().format(record)
    assert "token *** refused" in text and "xoxb-123456789" not in text


async def test_a_chat_error_reply_is_scrubbed(store):
    from analysis.errors import SourceError
    from bot.app import chat_service
    from bot.chat.commands import parse_command
    from bot.config.settings import Settings

    token = "ghp_chat0123456789abcdef"

    class EchoingSource:
        repo = "acme/widgets"

        async def default_branch(self) -> str:
            raise SourceError(f"GitHub refused the request (Authorization: token {token})")

        async def aclose(self) -> None:
            return None

    service = chat_service(Settings(github_token=token), store, source_factory=lambda repo: EchoingSource())
    result = await service.execute("slack", "C1", parse_command("subscribe acme/widgets 08:00"))
    assert result.kind == "error" and "Authorization: token ***" in result.text
    assert token not in result.text


def test_json_log_fields_are_masked_like_the_message():
    """LOG_FORMAT=json prints a record's `extra` fields (a run's `error`, say) as fields of their own:
    the secret filter masks them too, a key's cut-off beginning included."""
    import json

    from bot.monitoring.logs import formatter

    secret = "sk-SECRET555zqopxyz"
    record = logging.makeLogRecord(
        {
            "name": "bot.service.scheduler",
            "levelno": logging.INFO,
            "levelname": "INFO",
            "msg": "digest %s: %s",
            "args": ("nightly", "failed"),
            "error": f"401 Bearer {secret[:9]}…",
            "counts": {"detail": f"key {secret}", "high": 2},
            "seen": [f"{secret}"],
        }
    )
    RedactSecrets([secret]).filter(record)
    line = json.loads(formatter("json").format(record))
    assert line["error"] == "401 Bearer ***…" and line["counts"] == {"detail": "key ***", "high": 2}
    assert line["seen"] == ["***"] and "SECRET555" not in json.dumps(line)
