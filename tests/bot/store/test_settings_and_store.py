import logging
import sqlite3
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from analysis.errors import ConfigError
from analysis.models import Analysis, ChangeType, Commit, FileChange, Importance
from bot.config.settings import load_settings
from bot.monitoring.logs import RedactSecrets, secrets_of
from bot.store.db import Store
from bot.store.migrations import MIGRATIONS


def test_bad_settings_name_the_variable(monkeypatch):
    monkeypatch.setenv("DIGEST_TZ", "Mars/Olympus")
    monkeypatch.setenv("LLM_CONCURRENCY", "zero")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "DIGEST_TZ" in str(err.value) and "LLM_CONCURRENCY" in str(err.value)


@pytest.mark.parametrize("value", ["0", "201", "many"])
def test_digest_max_cards_is_a_count_from_1_to_200(monkeypatch, tmp_path, value):
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    assert load_settings().digest_max_cards == 20
    monkeypatch.setenv("DIGEST_MAX_CARDS", "200")
    assert load_settings().digest_max_cards == 200
    monkeypatch.setenv("DIGEST_MAX_CARDS", value)
    with pytest.raises(ConfigError, match="DIGEST_MAX_CARDS"):
        load_settings()


def test_a_comment_kept_after_a_value_is_named_not_sent(monkeypatch, tmp_path):
    """`docker run --env-file` and systemd's EnvironmentFile= keep "# …" after a value in it: the token
    went to Discord with the comment and came back 401 with no word of the comment."""
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    monkeypatch.setenv("DISCORD_BOT_TOKEN", "MTE.secret555.xyz   # the bot token")
    monkeypatch.setenv("DIGEST_CATCHUP_DAYS", "3 # days")
    monkeypatch.setenv("DIGEST_REPO", "acme/widgets#readme")  # no space: not a comment
    with pytest.raises(ConfigError) as err:
        load_settings()
    said = str(err.value)
    assert "DISCORD_BOT_TOKEN: ends in a comment" in said and "on a line of its own" in said
    assert "DIGEST_CATCHUP_DAYS: ends in a comment" in said and "DIGEST_REPO" not in said
    assert "secret555" not in said


def test_quotes_kept_around_a_value_are_named_not_sent(monkeypatch, tmp_path):
    """`docker run --env-file` passes SLACK_BOT_TOKEN="xoxb-…" with its quotes: Slack refused the right
    token, and the message said to check the token."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLACK_BOT_TOKEN", '"xoxb-secret555-1"')
    monkeypatch.setenv("DIGEST_TZ", "'UTC'")
    with pytest.raises(ConfigError) as err:
        load_settings()
    said = str(err.value)
    assert "SLACK_BOT_TOKEN: is wrapped in quotes" in said and "DIGEST_TZ: is wrapped in quotes" in said
    assert "secret555" not in said


def test_a_dotenv_comment_is_dropped_by_the_dotenv_reader(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DIGEST_CATCHUP_DAYS", raising=False)
    (tmp_path / ".env").write_text("DIGEST_CATCHUP_DAYS=3   # days\n", encoding="utf-8")
    assert load_settings().digest_catchup_days == 3


def test_http_and_https_base_urls_load_as_written(monkeypatch):
    for name, value in [
        ("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1"),
        ("GITHUB_API_URL", "https://ghe.example.com/api/v3"),
        ("SLACK_API_URL", "http://[::1]:3001/api/"),
        ("DISCORD_API_URL", "https://discord.com/api/v10"),
    ]:
        monkeypatch.setenv(name, value)
        assert getattr(load_settings(), name.lower()) == value


def test_blank_values_mean_unset(monkeypatch):
    monkeypatch.setenv("LLM_RPM", "")
    monkeypatch.setenv("DIGEST_MODEL", "")
    s = load_settings()
    assert s.llm_rpm is None and not s.llm_configured


def test_secrets_never_in_repr_and_redacted_from_logs(monkeypatch, caplog):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_supersecretvalue123")
    s = load_settings()
    assert "ghp_supersecretvalue123" not in repr(s)
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "token=%s", ("ghp_supersecretvalue123",), None)
    RedactSecrets(secrets_of(s)).filter(record)
    assert record.getMessage() == "token=***"


def commit(sha="abc123", **kw):
    return Commit(
        repo="o/n",
        sha=sha,
        message="[Bugfix] x (#5)\n\nbody",
        author="A",
        committed_at=datetime(2026, 1, 1, tzinfo=UTC),
        files=(FileChange("a.py", "modified", 1, 2, "@@ -1 +1 @@"), FileChange("b.png", "added", 0, 0, None)),
        **kw,
    )


def test_store_roundtrip_and_migrations(tmp_path):
    path = tmp_path / "d.db"
    store = Store(path)
    assert store.schema_version == len(MIGRATIONS)
    store.save_commit(commit(parents=("p1",), additions=1, deletions=2, files_total=2))
    got = store.get_commit("o/n", "abc123")
    assert got == commit(parents=("p1",), additions=1, deletions=2, files_total=2)
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()
    again = Store(path)  # reopening does not re-run migrations
    assert again.get_commit("o/n", "abc123").files[1].patch is None


def test_saving_twice_replaces_files(tmp_path):
    store = Store(tmp_path / "d.db")
    store.save_commit(commit())
    store.save_commit(commit())
    assert len(store.get_commit("o/n", "abc123").files) == 2


def test_saving_again_updates_the_commit_and_its_files(tmp_path):
    # a force-pushed or re-fetched commit: its row is updated in place, its files are the new ones only
    store = Store(tmp_path / "d.db")
    store.save_commit(commit())
    changed = replace(
        commit(), message="[Bugfix] y (#6)", files=(FileChange("c.py", "added", 3, 0, "@@ +1 @@"),)
    )
    store.save_commit(changed)
    assert store.get_commit("o/n", "abc123") == changed
    assert store.db.execute("SELECT count(*) FROM commits").fetchone()[0] == 1


def test_an_installed_sqlite_utils_plugin_does_not_touch_the_store(tmp_path):
    # sqlite-utils runs its plugins' hooks on every connection it wraps; the store asks for none (loading them
    # scans every installed package at each start, and a plugin has no business in our connection)
    import sqlite_utils.plugins

    class Plugin:
        @sqlite_utils.hookimpl
        def prepare_connection(self, conn):
            conn.create_function("planted", 0, lambda: 1)

    plugin = Plugin()
    sqlite_utils.plugins.pm.register(plugin)
    try:
        store = Store(tmp_path / "d.db")
        with pytest.raises(sqlite3.OperationalError, match="planted"):
            store.db.execute("SELECT planted()")
        assert sqlite_utils.Database(memory=True).execute("SELECT planted()").fetchone() == (1,)  # it is live
    finally:
        sqlite_utils.plugins.pm.unregister(plugin)


def test_a_days_commits_are_saved_in_one_transaction(tmp_path):
    """keep_commits hands a day's (or an eval chunk's) commits over together: one commit to disk."""
    from bot.digest.pipeline import keep_commits

    store = Store(tmp_path / "d.db")
    store.save_commit(commit("s0"))  # stored already: not written again
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    keep_commits(store, [commit(f"s{n}") for n in range(4)])
    store.db.conn.set_trace_callback(None)
    assert [s for s in statements if s.startswith(("BEGIN", "COMMIT"))] == ["BEGIN IMMEDIATE", "COMMIT"]
    assert set(store.get_commits("o/n", [f"s{n}" for n in range(4)])) == {f"s{n}" for n in range(4)}


def test_analysis_cache_key(tmp_path):
    store = Store(tmp_path / "d.db")
    a = Analysis(
        sha="abc123",
        importance=Importance.LOW,
        importance_reason="r",
        change_type=ChangeType.BUGFIX,
        summary="s",
        lang="zh",
    )
    store.save_analysis("o/n", a, "m1", "p1")
    assert store.get_analysis("o/n", "abc123", "m1", "p1", "zh") == a
    assert store.get_analysis("o/n", "abc123", "m2", "p1", "zh") is None
    assert store.get_analysis("o/n", "abc123", "m1", "p1", "en") is None
    # saved again under the same key (a --refresh): replaced, one row
    again = a.model_copy(update={"importance": Importance.HIGH, "summary": "s2"})
    store.save_analysis("o/n", again, "m1", "p1")
    assert store.get_analysis("o/n", "abc123", "m1", "p1", "zh") == again
    assert store.query("SELECT importance, count(*) AS n FROM analyses") == [{"importance": "high", "n": 1}]


def test_several_analyses_saved_in_one_transaction(tmp_path, monkeypatch):
    store = Store(tmp_path / "d.db")
    made = [
        Analysis(sha=sha, importance=Importance.LOW, importance_reason="r", change_type=ChangeType.BUGFIX,
                 summary="s", lang="en")
        for sha in ("a1", "b2", "c3")
    ]  # fmt: skip
    opened: list[object] = []
    real = store.transaction
    monkeypatch.setattr(store, "transaction", lambda: opened.append(1) or real())
    store.save_analyses("o/n", made, "heuristic", "h1")
    assert len(opened) == 1
    assert [store.get_analysis("o/n", a.sha, "heuristic", "h1", "en") for a in made] == made


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "d.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    with pytest.raises(ConfigError, match="newer"):
        Store(path)


def test_not_a_database(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ConfigError):
        Store(path)


def test_posts_are_idempotency_records(tmp_path):
    store = Store(tmp_path / "d.db")
    store.record_post("slack", "C1", "k", "parent", "1.0", "1.0")
    store.record_post("slack", "C1", "k", "card:abc", "1.1", "1.0")
    assert set(store.get_posts("slack", "C1", "k")) == {"parent", "card:abc"}
    assert store.find_post("slack", "1.0")["item"] == "parent"
    assert store.get_posts("slack", "C2", "k") == {}


def test_history_keeps_whether_a_bot_wrote_each_commit(tmp_path):
    from analysis.history.followups import PastCommit
    from analysis.history.index import BranchCommit, automated

    store = Store(tmp_path / "d.db")
    when = datetime(2025, 9, 1, tzinfo=UTC)
    store.save_history(
        "o/n",
        "main",
        [
            BranchCommit("a" * 40, when, "Bump x (#1)", (("uv.lock", 4),), automated=True),
            PastCommit(
                "b" * 40, when.replace(hour=1), "Fix y (#2)", (("src/y.py", 2),)
            ),  # a reader that cannot tell
        ],
    )
    got = store.history("o/n", "main", when, when.replace(day=2))
    assert [(c.sha[0], automated(c)) for c in got] == [("a", True), ("b", False)]
    assert got[0].files == (("uv.lock", 4),)
