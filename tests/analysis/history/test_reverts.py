from datetime import UTC, datetime

from analysis.history.reverts import mark_reverted, reverted_by
from analysis.models import Analysis, ChangeType, Commit, Importance


def commit(sha, message):
    return Commit(
        repo="o/n", sha=sha, message=message, author="A", committed_at=datetime(2026, 1, 1, tzinfo=UTC)
    )


def analysis(sha):
    return Analysis(
        sha=sha,
        importance=Importance.MEDIUM,
        importance_reason="r",
        change_type=ChangeType.FEATURE,
        summary="s",
    )


def test_git_revert_line_and_title_both_found():
    a = commit("a" * 40, "[Feature] Add fast path (#10)")
    b = commit(
        "b" * 40, 'Revert "[Feature] Add fast path (#10)" (#11)\n\nThis reverts commit ' + "a" * 40 + "."
    )
    c = commit("c" * 40, "Other work")
    d = commit("d" * 40, 'Revert "Other work"')
    found = reverted_by([d, c, b, a])
    assert found == {a.sha: b, c.sha: d}


def test_a_revert_of_an_older_commit_marks_nothing_today():
    b = commit("b" * 40, "Revert x\n\nThis reverts commit 1234567890abcdef.")
    assert reverted_by([b]) == {}


def test_note_in_the_report_language():
    a = commit("a" * 40, "feat: x")
    b = commit("b" * 40, 'Revert "feat: x"\n\nThis reverts commit aaaaaaaa.')
    marked = mark_reverted({a.sha: analysis(a.sha), b.sha: analysis(b.sha)}, [b, a], "en")
    assert marked[a.sha].notes[0].startswith("Reverted the same day by bbbbbbb")
    assert marked[b.sha].notes == []
    assert "回滚" in mark_reverted({a.sha: analysis(a.sha)}, [b, a], "zh")[a.sha].notes[0]
