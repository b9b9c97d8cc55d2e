import pytest

from analysis.errors import InputError
from analysis.refs import parse_ref


@pytest.mark.parametrize(
    ("text", "kind", "value", "repo"),
    [
        ("bb17e8f", "sha", "bb17e8f", "d/r"),
        (
            "BB17E8F11C3835FBB930C1669C069D950BEC110A",
            "sha",
            "bb17e8f11c3835fbb930c1669c069d950bec110a",
            "d/r",
        ),
        ("#33005", "pr", "33005", "d/r"),
        ("PR#7", "pr", "7", "d/r"),
        (
            "https://github.com/vllm-project/vllm/commit/bb17e8f11c38",
            "sha",
            "bb17e8f11c38",
            "vllm-project/vllm",
        ),
        ("<https://github.com/o/n/commit/abcdef1|label>", "sha", "abcdef1", "o/n"),
        ("https://github.com/o/n.git/commit/abcdef1", "sha", "abcdef1", "o/n"),
        ("https://github.com/o/n/pull/42/files", "pr", "42", "o/n"),
        ("vllm-project/vllm@bb17e8f", "sha", "bb17e8f", "vllm-project/vllm"),
        ("o/n@#12", "pr", "12", "o/n"),
        ("2026-01-29", "date", "2026-01-29", "d/r"),
        ("o/n@2026-01-29", "date", "2026-01-29", "o/n"),
        ("12345678", "sha", "12345678", "d/r"),  # digits only, no '#': a short SHA can be all digits
    ],
)
def test_accepted_forms(text, kind, value, repo):
    ref = parse_ref(text, "d/r")
    assert (ref.kind, ref.value, ref.repo) == (kind, value, repo)


def test_no_default_repo_stays_none():
    assert parse_ref("abc1234").repo is None


@pytest.mark.parametrize(
    "text", ["", "   ", "hello", "abc", "xyz1234", "2026-02-30", "not/a/repo@abc1234", "#"]
)
def test_rejected_with_clear_message(text):
    with pytest.raises(InputError) as err:
        parse_ref(text, "d/r")
    assert str(err.value)
    assert "\n" not in str(err.value)


def test_hostile_text_is_not_echoed_unbounded():
    with pytest.raises(InputError) as err:
        parse_ref("x" * 5000 + " @everyone")
    assert len(str(err.value)) < 300
