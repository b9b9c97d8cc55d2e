"""A file's patch split into its removed and added lines (facts._split_diff): each side is the lines that begin
with its sign after the first hunk header, without the sign, whatever else a line holds."""

from __future__ import annotations

import re

import pytest

from analysis.heuristic.facts import _split_diff

PATCHES = [
    "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n ctx\n-old = 1\n+new = 2\n ctx",  # headers before the hunk
    "@@ -1 +1 @@\n-a\r\n+b\r\n\\ No newline at end of file\n",  # carriage returns kept, the git note is neither
    "@@ -1,2 +1,2 @@\n--x\n++y\n-\n+\n",  # a line whose text starts with its sign; empty changed lines
    "-no header\n+at all\n context",  # a patch without a hunk header
    "@@ -5 +5 @@ def f():\n-\tx = '\u2028'\n+\tx = '\x0c'",  # separators a pattern's `.` reads as text
    "",
]


@pytest.mark.parametrize("patch", PATCHES)
def test_each_side_is_the_lines_that_begin_with_its_sign(patch: str) -> None:
    start = patch.find("@@")
    body = patch[start:] if start >= 0 else patch
    diff = _split_diff(patch, "python")
    # the definition as a pattern says it, line by line
    assert diff.removed == "\n".join(re.findall(r"^-(.*)$", body, re.M))
    assert diff.added == "\n".join(re.findall(r"^\+(.*)$", body, re.M))
    assert (diff.text, diff.language) == (patch, "python")


def test_headers_before_the_first_hunk_are_no_changed_lines() -> None:
    diff = _split_diff(PATCHES[0])
    assert (diff.removed, diff.added) == ("old = 1", "new = 2")
