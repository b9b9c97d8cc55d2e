"""DIGEST_MAX_CARDS against the fake Slack: a flood of high commits gives at most the cap of cards and one
list of the rest, and `digestbot post` killed (kill -9) mid-post with a cap of 1 then run again posts
nothing twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.poster import open_slack_poster
from analysis.models import Digest
from bot.config.settings import Settings
from bot.delivery.posting import HIGH_LIST, post_digest
from bot.store.db import Store
from tests.fakes.digests import make_analysis, make_commit, make_digest
from tests.fakes.gitrepo import GitRepo
from tests.fakes.slack_api import FakeSlack

CHANNEL = "C0CAP"
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def slack():
    with FakeSlack() as fake:
        yield fake
        fake.check()


def flood(highs: int) -> Digest:
    """A day of `highs` high commits (impact rising with age: the oldest rank first) and one medium."""
    end = make_digest(()).window_end
    commits = [
        make_commit(f"[Feature] Flood {i} (#{5000 + i})", committed_at=end - timedelta(seconds=60 * i + 1))
        for i in range(highs + 1)
    ]
    analyses = [
        make_analysis(c, "high", lang="en").model_copy(update={"impact_score": float(i)})
        for i, c in enumerate(commits[:highs])
    ]
    return make_digest(commits=commits, analyses=[*analyses, make_analysis(commits[-1], "medium")], lang="en")


def items_in_thread(slack: FakeSlack) -> list[tuple[str, int]]:
    [parent] = slack.channel_messages(CHANNEL)
    return [
        (m.metadata["event_payload"]["item"], m.metadata["event_payload"]["part"])
        for m in slack.thread(CHANNEL, parent.ts)
        if m.metadata
    ]


def shown(slack: FakeSlack) -> str:
    return "\n".join(m.text + str(m.blocks) for m in slack.messages)


async def test_a_600_high_day_posts_20_cards_and_one_list_of_the_rest(tmp_path, slack):
    digest = flood(600)
    settings = Settings(_env_file=None, slack_bot_token=slack.token, slack_api_url=slack.api_url)
    assert settings.digest_max_cards == 20
    async with open_slack_poster(settings) as poster:
        result = await post_digest(
            poster, Store(tmp_path / "d.db"), CHANNEL, digest, max_cards=settings.digest_max_cards
        )
    cards = [i for i in result.posted if i.startswith("card:")]
    assert len(cards) == 20 and result.posted.count(HIGH_LIST) == 1
    assert {i.removeprefix("card:") for i in cards} == {c.sha for c in digest.commits[580:600]}  # the top 20
    in_thread = items_in_thread(slack)
    assert len({i for i, _ in in_thread if i.startswith("card:")}) == 20
    list_parts = [p for i, p in in_thread if i == HIGH_LIST]
    assert list_parts == list(range(len(list_parts)))  # one item, in as many messages as Slack's limits need
    text = shown(slack)
    assert all(c.short_sha in text for c in digest.commits[:580])  # none dropped
    assert "More high-importance commits (580," in text


def synthetic_repo(tmp_path: Path) -> Path:
    """A day of four high commits (large edits of code that existed the day before) and a medium one."""
    repo = GitRepo.init(tmp_path / "src", remote="https://github.com/acme/widgets.git")
    code = "".join(f"def f{k}(x):\n    return x + {k}\n" for k in range(50))
    repo.commit(
        "Initial widgets (#1)",
        files={f"src/widgets/mod{i}.py": code for i in range(5)},
        when="2026-01-25T08:00:00+00:00",
    )
    for i, size in enumerate([900, 950, 1000, 150, 5]):
        code = "".join(f"def f{k}(x, y=0):\n    return x + y + {k}\n" for k in range(size))
        repo.commit(
            f"Step {i}: change the widgets (#{100 + i})",
            files={f"src/widgets/mod{i}.py": code},
            when=f"2026-01-26T{8 + i:02d}:00:00+00:00",
        )
    return repo.path


@pytest.mark.parametrize("kill_at", [2, 3], ids=["after-the-card", "after-the-list"])
def test_kill_9_mid_post_with_one_card_then_a_rerun_posts_nothing_twice(tmp_path, slack, kill_at):
    """DIGEST_MAX_CARDS=1: `digestbot post` killed the moment Slack accepted message `kill_at` (2: the one
    card, 3: the list of the other highs; accepted on Slack's side, never recorded on ours), then again."""
    git = synthetic_repo(tmp_path)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "SLACK_BOT_TOKEN": slack.token,
        "SLACK_API_URL": slack.api_url,
        "DIGEST_MAX_CARDS": "1",
    }

    def post() -> subprocess.Popen[str]:
        args = ["--db", str(tmp_path / "d.db"), "post", "--platform", "slack", "--channel", CHANNEL]
        args += ["--git-dir", str(git), "--date", "2026-01-26", "--tz", "UTC", "--lang", "en"]
        return subprocess.Popen(
            [sys.executable, "-m", "bot.cli", *args, "--analyzer", "heuristic"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )

    child: list[subprocess.Popen[str]] = []
    accepted = 0

    def kill(message: Any) -> None:
        nonlocal accepted
        accepted += 1
        if accepted == kill_at and child:
            os.kill(child[0].pid, signal.SIGKILL)  # before the fake answers: Slack has it, the store not

    slack.on_accept = kill
    child.append(post())
    assert child[0].wait(120) == -signal.SIGKILL
    slack.on_accept = None
    rerun = post()
    _, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    items = [i for i, _ in items_in_thread(slack)]
    assert len(items) == len(set(items)), items  # each item once
    assert [i.split(":")[0] for i in items] == ["card", HIGH_LIST, "medium"]
    assert len(slack.uploads) == 1 and len(slack.channel_messages(CHANNEL)) == 1
    [parent] = slack.channel_messages(CHANNEL)
    [listed] = [
        m
        for m in slack.thread(CHANNEL, parent.ts)
        if (m.metadata or {}).get("event_payload", {}).get("item") == HIGH_LIST
    ]
    card = items[0].removeprefix("card:")
    steps = {f"Step {i}" for i in range(5) if f"Step {i}:" in str(listed.blocks)}
    assert len(steps) == 3 and card[:7] not in str(listed.blocks)  # the three highs with no card, not it
