from datetime import UTC, datetime

from analysis.models import Commit, FileChange
from bot.config.subscriptions import Filters


def commit(title="feat: x", author="Alice", login="alice", paths=("src/a.py",)):
    return Commit(
        repo="o/n",
        sha="a" * 40,
        message=title,
        author=author,
        author_login=login,
        committed_at=datetime(2026, 1, 1, tzinfo=UTC),
        files=tuple(FileChange(p, "modified", 1, 1, "@@") for p in paths),
    )


def test_ignore_bot_authors_with_literal_brackets():
    f = Filters(ignore_authors=("*[bot]",))
    assert not f.keep(commit(author="dependabot[bot]", login="dependabot[bot]"))
    assert f.keep(commit(author="Robert", login="robot"))  # '[bot]' is not a character class


def test_title_patterns():
    f = Filters(ignore_titles=(r"^\[CI\] Bump",))
    assert not f.keep(commit(title="[CI] Bump actions/checkout"))
    assert f.keep(commit(title="[CI] Fix flaky test"))


def test_include_and_exclude_paths():
    inc = Filters(include_paths=("vllm/",))
    assert inc.keep(commit(paths=("vllm/a/b.py", "docs/x.md")))
    assert not inc.keep(commit(paths=("docs/x.md",)))
    exc = Filters(exclude_paths=("docs/*",))
    assert not exc.keep(commit(paths=("docs/a.md", "docs/sub/b.md")))
    assert exc.keep(commit(paths=("docs/a.md", "src/x.py")))
    assert not Filters().active and exc.active


def test_path_filters_are_gitignore_patterns():
    md = Filters(exclude_paths=("**/*.md", "!CHANGELOG.md"))
    assert not md.keep(commit(paths=("README.md", "docs/deep/a.md")))
    assert md.keep(commit(paths=("README.md", "CHANGELOG.md")))  # negation keeps the changelog
    top = Filters(include_paths=("/vllm/",))
    assert top.keep(commit(paths=("vllm/a.py",)))
    assert not top.keep(commit(paths=("tests/vllm/a.py",)))  # a leading slash anchors at the root


def test_bad_path_pattern_is_a_config_error(tmp_path):
    import pytest

    from analysis.errors import ConfigError
    from bot.config.file import load_config

    path = tmp_path / "digest.toml"
    path.write_text(
        '[[subscription]]\nrepo = "o/n"\nslack_channels = ["C1"]\n[subscription.filters]\nexclude_paths = ["!"]\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"subscription\[0\]\.filters\.exclude_paths: bad path pattern"):
        load_config(path, default_tz="UTC", default_lang="en")
