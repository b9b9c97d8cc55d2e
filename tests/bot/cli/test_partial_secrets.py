"""Issue 17 item 6: a server that echoes our key where an error message is cut must not leave part of
the key anywhere — stderr, the log, llm_calls.error. Masking runs before every cut; and what is left of
a secret that someone else cut is masked too. Each case moves the key across the cut."""

from __future__ import annotations

import logging
import sqlite3

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from bot.ports.secrets import clip, scrub
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.github import FakeGitHub
from tests.fakes.openai_server import FakeLLM

DAY = "2026-01-26"
LLM_KEY = "sk-SECRET555zqopXq7Rm2Lw9Tb4Hc8Nd1Vf6Yk3"
DISCORD_TOKEN = "MTEyNjQ5.SECRET444.xW9qLm2Rt7Zp4Kc8Vb1Nd6Hf3Jg"
GITHUB_TOKEN = "ghp_SECRET666aB3cD5eF7gH9iJ1kL3mN5oP7qR9s"


def leaked(text: str, secret: str, shortest: int = 6) -> list[str]:
    """Pieces of `secret` (at least `shortest` characters) found in `text`."""
    return sorted(
        {
            secret[i : i + shortest]
            for i in range(len(secret) - shortest + 1)
            if secret[i : i + shortest] in text
        }
    )


def test_clip_masks_before_it_cuts():
    from bot.ports.secrets import register_secrets

    register_secrets([LLM_KEY])
    try:
        for at in range(0, 60, 3):
            line = "e" * at + "Bearer " + LLM_KEY + " rejected"
            assert leaked(clip(line, 50), LLM_KEY) == []
        # and a line someone else cut inside the key: what is left of it is masked
        assert scrub("401: Bearer " + LLM_KEY[:12] + "…") == "401: Bearer ***…"
        assert scrub("sk-SE is a prefix too short to tell") == "sk-SE is a prefix too short to tell"
    finally:
        register_secrets([])


@pytest.mark.parametrize("offset", [3, 10, 20, 30])
def test_an_llm_server_echoing_the_key_at_the_cut(repo, tmp_path, monkeypatch, offset):
    with FakeLLM() as llm:
        # the key straddles character 300, where an error line is cut
        message = (
            "x" * (300 - offset - len("Incorrect API key provided: Bearer "))
            + "Incorrect API key provided: Bearer "
        )
        llm.fail(401, body={"error": {"message": message + LLM_KEY + " end"}}, times=None)
        for name, value in {
            "OPENAI_API_KEY": LLM_KEY,
            "OPENAI_BASE_URL": llm.base_url,
            "DIGEST_MODEL": llm.model,
        }.items():
            monkeypatch.setenv(name, value)
        db = tmp_path / "d.db"
        result = CliRunner().invoke(
            cli,
            ["-v", "--db", str(db), "digest", "--git-dir", str(repo.path), "--date", DAY,
             "--tz", "Asia/Shanghai", "--analyzer", "llm"],
        )  # fmt: skip
    assert result.exit_code in (0, 2), result.output
    with sqlite3.connect(db) as conn:
        errors = [r[0] for r in conn.execute("SELECT error FROM llm_calls")]
    assert errors and all("Bearer *" in e for e in errors), errors
    for sink in (result.output, *errors):
        assert leaked(sink, LLM_KEY) == [], sink


@pytest.mark.parametrize("offset", [2, 9, 17])
def test_a_discord_error_echoing_the_token_at_the_cut(repo, tmp_path, monkeypatch, offset):
    with FakeDiscord(token=DISCORD_TOKEN) as fake:
        channel = "900000000000000333"
        fake.add_channel(channel)
        text = "y" * (200 - offset - len("Unauthorized header: Bot ")) + "Unauthorized header: Bot "
        fake.fail_next(400, {"message": text + DISCORD_TOKEN, "code": 0}, route="/messages", count=99)
        monkeypatch.setenv("DISCORD_BOT_TOKEN", DISCORD_TOKEN)
        monkeypatch.setenv("DISCORD_API_URL", fake.base_url)
        result = CliRunner().invoke(
            cli,
            ["-v", "--db", str(tmp_path / "d.db"), "post", "--platform", "discord", "--channel", channel,
             "--git-dir", str(repo.path), "--date", DAY, "--tz", "Asia/Shanghai"],
        )  # fmt: skip
    assert result.exit_code == 2 and "HTTP 400" in result.stderr, result.output
    assert leaked(result.output, DISCORD_TOKEN) == [], result.stderr


def test_a_github_error_echoing_the_token_at_the_cut(tmp_path, monkeypatch, caplog):
    with FakeGitHub("acme/widgets", token=GITHUB_TOKEN) as gh:
        text = "z" * (200 - 8 - len("Bad credentials: token ")) + "Bad credentials: token "
        gh.fail_next(500, body={"message": text + GITHUB_TOKEN}, count=99)
        monkeypatch.setenv("GITHUB_TOKEN", GITHUB_TOKEN)
        monkeypatch.setenv("GITHUB_API_URL", gh.base_url)
        monkeypatch.setenv("GITHUB_MAX_WAIT", "0")
        with caplog.at_level(logging.DEBUG):
            result = CliRunner().invoke(
                cli,
                ["-vv", "--db", str(tmp_path / "d.db"), "digest", "--repo", "acme/widgets", "--date", DAY],
            )
    assert result.exit_code != 0 and "error" in result.stderr, result.output
    assert leaked(result.output, GITHUB_TOKEN) == [], result.stderr
