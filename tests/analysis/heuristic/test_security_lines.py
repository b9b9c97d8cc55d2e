"""Checks that close a hole (analysis/heuristic/security_lines.py `guards_in`), from a web framework's shapes:
a static-files handler that now keeps resolved paths inside its directory, a response that refuses a header
with a line break. A fix adding one is high (users must upgrade, as for an advisory); the same check in a new
feature, or a newline test in ordinary text work, is not."""

from __future__ import annotations

from datetime import UTC, datetime

from analysis.heuristic import rank
from analysis.heuristic.facts import _split_diff
from analysis.heuristic.security_lines import guards_in
from analysis.models import Commit, FileChange, Importance

TRAVERSAL = """@@ -17,6 +17,8 @@ class StaticFiles:
     def lookup_path(self, path: str) -> Tuple[str, Optional[os.stat_result]]:
         full_path = os.path.realpath(os.path.join(self.directory, path))
+        if os.path.commonpath([full_path, self.directory]) != self.directory:
+            return "", None
         try:
             return full_path, os.stat(full_path)
         except (FileNotFoundError, NotADirectoryError):"""

HEADERS = """@@ -13,6 +13,9 @@ class Response:
         self.status_code = status_code
         self.body = self.render(content)
         self.headers = dict(headers or {})
+        for key, value in self.headers.items():
+            if "\\r" in value or "\\n" in value:
+                raise ValueError(f"Invalid header {key!r}: a header may not contain a line break")
         if media_type is not None:
             self.media_type = media_type"""

NEWLINES = """@@ -3,4 +3,6 @@ def render(lines):
     out = []
     for line in lines:
+        if "\\n" in line:
+            line = line.replace("\\n", " ")
         out.append(line)"""


def diff(patch: str):
    return _split_diff(patch, "python")


def commit(title: str, path: str, patch: str) -> Commit:
    added = sum(1 for line in patch.splitlines() if line.startswith("+"))
    change = FileChange(path=path, status="modified", additions=added, deletions=0, patch=patch)
    return Commit(
        repo="quillhq/quill",
        sha="0123456789abcdef0123456789abcdef01234567",
        message=title,
        author="dev",
        committed_at=datetime(2025, 3, 12, 12, 0, tzinfo=UTC),
        files=(change,),
    )


def test_a_path_traversal_check_added_by_a_fix_is_a_behaviour_change() -> None:
    importance, reason = rank(
        commit(
            "🐛 Do not serve files outside the directory in `StaticFiles` (#1542)",
            "quill/staticfiles.py",
            TRAVERSAL,
        ),
        lang="en",
    )
    # medium (low before): a check many fixes add weighs as a behaviour change; only an advisory is high
    assert importance == Importance.MEDIUM
    assert "security-relevant: `commonpath`" in reason


def test_a_carriage_return_refused_in_headers_by_a_fix_is_a_behaviour_change() -> None:
    importance, reason = rank(
        commit("fix: reject header values with line breaks", "quill/responses.py", HEADERS), lang="en"
    )
    assert importance == Importance.MEDIUM
    assert 'security-relevant: `"\\r" in`' in reason


def test_the_same_check_in_a_new_feature_is_not_a_closed_hole() -> None:
    importance, reason = rank(
        commit("✨ Add `StaticFiles.lookup_path`", "quill/staticfiles.py", TRAVERSAL), lang="en"
    )
    assert importance != Importance.HIGH
    assert "commonpath" not in reason


def test_guards_are_read_in_code_and_a_newline_test_alone_is_none() -> None:
    assert guards_in(diff(TRAVERSAL)) == ["commonpath"]
    assert guards_in(diff(HEADERS)) == ['"\\r" in']
    assert guards_in(diff(NEWLINES)) == []
    # named in a comment only: no check added
    assert guards_in(diff("@@ -1,1 +1,2 @@\n x = 1\n+# use os.path.commonpath( here one day\n")) == []
