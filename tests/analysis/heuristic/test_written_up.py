"""Docs written for users beside a change of code they run (analysis/heuristic/written_up.py): a function body
now honours a value, a page says so; at least medium, unless the title or the commit's own release-notes entry
calls it a fix, docs, tests, CI or a restructuring."""

from __future__ import annotations

from analysis.heuristic import analyze, rank
from analysis.models import Importance
from tests.analysis.heuristic.test_heuristic import fc, make
from tests.analysis.heuristic.test_judgment import hunk

LOW, MEDIUM = Importance.LOW, Importance.MEDIUM

# A web framework's session middleware now lets a cookie last as long as the browser session: a function body
# changed, no public name, default or option did, so no surface fact states it.
CODE = fc(
    "web/middleware/sessions.py",
    3,
    0,
    hunk(
        [],
        ["        if self.max_age is None:", "            return headers", ""],
        ["    def send_wrapper(self, message):"],
        ["        headers = self.cookie_headers(message)"],
    ),
)
PAGE = fc(
    "docs/middleware.md",
    2,
    0,
    "@@ -43,3 +43,5 @@ Session middleware\n"
    " The cookie lasts `max_age` seconds.\n"
    "+\n"
    "+Set `max_age=None` to keep the cookie for the browser session only.\n",
)
TITLE = "`SessionMiddleware.max_age` now accepts `None` (#1387)"


def test_docs_written_beside_a_body_only_change_of_code_users_run_make_it_medium() -> None:
    assert rank(make(TITLE, CODE), "en")[0] == LOW
    importance, reason = rank(make(TITLE, CODE, PAGE), "en")
    assert importance == MEDIUM
    assert reason.startswith(
        "impact (medium): docs written for users beside the code change: `docs/middleware.md`"
    )
    zh = analyze(make(TITLE, CODE, PAGE), "zh")
    assert zh.importance_reason.startswith("影响（中）：随代码改动为用户写入文档：`docs/middleware.md`")


def test_docs_beside_a_fix_a_restructuring_or_docs_work_add_nothing() -> None:
    for title in (
        "Fix the session cookie for `max_age=None` (#1)",
        "[Bugfix] Keep the session cookie (#2)",
        "docs: explain the session cookie (#3)",
        "Refactor the session middleware (#4)",
        "Hide deprecated session options in README (#5)",
        "Document the session cookie's lifetime (#6)",
        'Revert "`SessionMiddleware.max_age` now accepts `None`"',
    ):
        assert rank(make(title, CODE, PAGE), "en")[0] == LOW, title


def test_only_user_docs_with_words_beside_code_count() -> None:
    # release notes are not a write-up for this rule (their own entry is read apart), nor is a blank line
    notes = fc(
        "CHANGELOG.md", 1, 0, "@@ -1,2 +1,3 @@\n # Changelog\n+- The session cookie may last a session.\n"
    )
    blank = fc("docs/middleware.md", 1, 0, "@@ -43,1 +43,2 @@\n The cookie lasts `max_age` seconds.\n+\n")
    comment = fc("web/middleware/sessions.py", 1, 0, hunk([], ["        # None: the browser session"]))
    assert rank(make(TITLE, CODE, notes), "en")[0] == LOW
    assert rank(make(TITLE, CODE, blank), "en")[0] == LOW
    assert rank(make(TITLE, comment, PAGE), "en")[0] == LOW
    assert rank(make(TITLE, PAGE), "en")[0] == LOW


def test_a_fragment_filing_the_change_as_a_fix_keeps_its_docs_the_fixs() -> None:
    fragment = fc(
        "CHANGES/1387.bugfix", 1, 0, "@@ -0,0 +1 @@\n+Keep the session cookie for `max_age=None`.\n", "added"
    )
    assert rank(make(TITLE, CODE, PAGE, fragment), "en")[0] == LOW
