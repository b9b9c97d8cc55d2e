"""The platform-neutral chat core: what a thread is about, what a question focuses on, answers
without a model, the channel's repository, and subscriptions owned by the configuration file."""

import pytest

from analysis.errors import InputError
from analysis.models import Importance, key_of
from bot.app import chat_service
from bot.chat.commands import parse_command
from bot.config.settings import Settings
from bot.config.subscriptions import Destination, Registry, Subscription
from bot.digest.pipeline import save_digest
from bot.ports.protocols import Posted
from tests.fakes.digests import make_digest


@pytest.fixture
def service(store):
    return chat_service(Settings(digest_repo="fallback/repo", digest_lang="en"), store)


def posted_digest(store, lang="en"):
    digest = make_digest(lang=lang)
    for commit in digest.commits:
        store.save_commit(commit)
    save_digest(store, digest)
    key = key_of(digest)
    store.record_post("slack", "C1", key, "parent", "100.1", "100.1")
    high = digest.by_importance(Importance.HIGH)[0]
    store.record_post("discord", "D1", key, "parent", "500", "600")
    store.record_post("discord", "D1", key, f"card:{high.sha}", "601", "600")
    return digest, high


def test_a_digest_thread_is_about_the_day(service, store):
    digest, _ = posted_digest(store)
    ctx = service.thread_context("slack", "100.1")
    assert ctx is not None and ctx.digest is not None and ctx.commit is None
    assert [c.sha for c in ctx.digest.commits] == [c.sha for c in digest.commits]
    assert service.thread_context("slack", "999.9") is None  # not ours: stay silent


def test_a_reply_to_a_card_is_about_that_commit(service, store):
    _, high = posted_digest(store)
    ctx = service.thread_context("discord", "600", message_id="601")
    assert ctx.commit.sha == high.sha and ctx.analysis.importance == Importance.HIGH
    day = service.thread_context("discord", "600")
    assert day.digest is not None and day.commit is None


async def test_a_question_naming_a_commit_focuses_on_it(service, store):
    digest, _ = posted_digest(store)
    target = digest.commits[2]
    ctx = service.thread_context("slack", "100.1")
    by_sha = await service.answer(ctx, f"what could {target.sha[:8]} break?")
    assert ctx.commit.sha == target.sha and by_sha.cites == [target.sha]
    assert digest.analyses[target.sha].risks[0] in by_sha.plain()
    pr = digest.commits[3]
    fresh = service.thread_context("slack", "100.1")
    await service.answer(fresh, f"risks of #{pr.pr_number}?")
    assert fresh.commit.sha == pr.sha
    assert store.thread_focus("slack", "100.1") == (pr.repo, pr.sha)


async def test_without_a_model_answers_come_from_the_stored_analysis(service, store):
    digest, high = posted_digest(store)
    answer = await service.answer(service.thread_context("slack", "100.1"), "which commits are risky?")
    assert answer.source == "data" and answer.kind == "riskiest"
    assert high.title in answer.plain()  # high commits with risks come first
    card = service.thread_context("discord", "600", message_id="601")
    zh = (await service.answer(card, "这个提交有什么风险？")).plain()
    assert "潜在风险" in zh and digest.analyses[high.sha].risks[0] in zh


async def test_no_invention_when_nothing_is_known(service):
    assert "don't know" in (await service.answer(None, "anything?")).plain()


def test_channel_repository_fallbacks(service, store):
    assert service.channel_repo("slack", "C9") == "fallback/repo"  # DIGEST_REPO
    posted_digest(store)
    assert service.channel_repo("slack", "C1") == "acme/widgets"  # the latest digest posted there
    service.subscriptions.chat.add("slack", "C1", "other/repo", time=None, tz="UTC", lang="zh")
    assert service.channel_repo("slack", "C1") == "other/repo"  # its subscription wins
    assert service.channel_lang("slack", "C1") == "zh"


def test_standalone_cards_are_found_again(service, store):
    digest, high = posted_digest(store)
    store.save_analysis(high.repo, digest.analyses[high.sha], "heuristic", "h1")  # as card() stores it
    service.record_card("slack", "C7", high, "en", Posted("700.1", "700.1"))
    ctx = service.thread_context("slack", "700.1")
    assert ctx.commit.sha == high.sha and ctx.analysis is not None


def config_file_subscription() -> Subscription:
    """acme/widgets posted to slack C1 at 09:00 UTC, in English, by the config file."""
    return Subscription(
        name="daily",
        repo="acme/widgets",
        timezone="UTC",
        schedule="09:00",
        lang="en",
        destinations=(Destination("slack", "C1"),),
    )


async def test_config_file_subscriptions_cannot_be_removed_from_chat(store):
    file_sub = config_file_subscription()
    service = chat_service(Settings(), store)
    service.subscriptions = Registry(store, [file_sub])
    result = await service.execute("slack", "C1", parse_command("unsubscribe acme/widgets"))
    assert result.kind == "error" and "configuration file" in result.text
    listed = await service.execute("slack", "C1", parse_command("list"))
    assert "acme/widgets" in listed.text and "(config)" in listed.text


async def test_a_day_without_a_repository_is_a_clear_error(store):
    service = chat_service(Settings(), store)
    with pytest.raises(InputError):
        service.prepare("slack", "C1", "abc1234 extra")
    result = await service.execute("slack", "C1", service.prepare("slack", "C1", "2026-01-26"))
    assert result.kind == "error" and "which repository" in result.text


class MissingRepo:
    """A source whose repository does not exist (what GitHub answers 404 for)."""

    repo = "nobody/nothing"

    async def default_branch(self) -> str:
        from analysis.errors import SourceError

        raise SourceError(
            "repository nobody/nothing not found on GitHub; private repositories need GITHUB_TOKEN"
        )

    async def aclose(self) -> None:
        return None


async def test_subscribing_to_an_unknown_repository_says_so_at_once(store):
    service = chat_service(Settings(), store, source_factory=lambda repo: MissingRepo())
    result = await service.execute("slack", "C1", parse_command("subscribe nobody/nothing 08:00"))
    assert result.kind == "error" and "not found" in result.text
    assert service.subscriptions.for_channel("slack", "C1") == []  # nothing half-made


class KnownRepo:
    """A source whose repository exists; counts the requests made to its host."""

    def __init__(self, repo: str, asked: list[str]):
        self.repo = repo
        self.asked = asked

    async def default_branch(self) -> str:
        self.asked.append(self.repo)
        return "main"

    async def aclose(self) -> None:
        return None


async def test_chat_subscriptions_are_capped_per_channel_and_in_all(store):
    """A flood of `/digest subscribe` is a flood of daily digests and their model calls: capped, and
    refused before any request to the repository's host."""
    asked: list[str] = []
    settings = Settings(digest_lang="en", chat_subscriptions_per_channel=2, chat_subscriptions_max=3)
    service = chat_service(settings, store, source_factory=lambda repo: KnownRepo(repo, asked))
    for repo in ("acme/one", "acme/two"):
        ok = await service.execute("slack", "C1", parse_command(f"subscribe {repo} 08:00"))
        assert ok.kind == "message" and ok.text.startswith(f"Subscribed to {repo}")
    full = await service.execute("slack", "C1", parse_command("subscribe acme/three"))
    assert full.kind == "error" and "this channel has 2 subscriptions" in full.text
    assert "CHAT_SUBSCRIPTIONS_PER_CHANNEL" in full.text and asked == ["acme/one", "acme/two"]
    # one subscribed already: its time changes, it is no new subscription
    moved = await service.execute("slack", "C1", parse_command("subscribe acme/two 10:30"))
    assert moved.kind == "message" and "10:30" in moved.text
    assert (await service.execute("slack", "C2", parse_command("subscribe acme/four"))).kind == "message"
    over = await service.execute("slack", "C3", parse_command("subscribe acme/five"))
    assert over.kind == "error" and "the bot has 3 chat subscriptions" in over.text
    assert [s.repo for s in service.subscriptions.chat.all()] == ["acme/one", "acme/two", "acme/four"]


async def test_chat_subscriptions_off_leave_them_to_the_config_file(store):
    asked: list[str] = []
    settings = Settings(chat_subscriptions_max=0)
    service = chat_service(settings, store, source_factory=lambda repo: KnownRepo(repo, asked))
    refused = await service.execute("slack", "C1", parse_command("subscribe acme/one"))
    assert refused.kind == "error" and "config file" in refused.text and asked == []


async def test_subscribing_from_chat_to_what_the_config_file_posts_here_is_refused(store):
    """A chat copy of a file subscription posted the day twice (in DIGEST_TZ), and chat could not remove
    the file's; a new subscription takes the zone of the channel's digests."""
    file_sub = config_file_subscription()
    asked: list[str] = []
    service = chat_service(
        Settings(digest_lang="en", digest_tz="Asia/Shanghai"),
        store,
        source_factory=lambda repo: KnownRepo(repo, asked),
    )
    service.subscriptions = Registry(store, [file_sub])
    twice = await service.execute("slack", "C1", parse_command("subscribe acme/widgets 08:00"))
    assert twice.kind == "error" and "posted here by the configuration file (09:00 UTC, en)" in twice.text
    assert asked == [] and service.subscriptions.chat.all() == []
    other = await service.execute("slack", "C1", parse_command("subscribe acme/gadgets 08:00"))
    assert other.kind == "message" and "(UTC)" in other.text


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "⚠️ EST is a fixed UTC-05:00 all year: for New York with daylight saving use America/New_York"),
        ("zh", "⚠️ EST 全年固定为 UTC-05:00，不实行夏令时：若指实行夏令时的纽约，请用 America/New_York。"),
    ],
)
async def test_subscribing_in_a_fixed_zone_is_done_and_warned_about(store, lang, said):
    service = chat_service(Settings(digest_lang="en"), store, source_factory=lambda repo: KnownRepo(repo, []))
    reply = await service.execute("slack", "C1", parse_command(f"subscribe acme/one 09:00 EST {lang}"))
    assert reply.kind == "message" and reply.text.endswith("\n" + said)
    [sub] = service.subscriptions.chat.all()
    assert sub.timezone == "EST"  # not refused: a fixed offset may be what is wanted
    plain = await service.execute("slack", "C1", parse_command("subscribe acme/one 09:00 America/New_York"))
    assert "⚠️" not in plain.text
