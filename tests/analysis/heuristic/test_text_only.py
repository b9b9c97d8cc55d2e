"""Which patches change only prose (comments, docstrings, message text): docstrings are prose, not code."""

from __future__ import annotations

import re

import pytest

from analysis.heuristic.text_only import prose_only

OPENING_IN_CONTEXT = '''@@ -1,5 +1,5 @@
 def f():
     """Validate the
-    inptu.
+    input.
     """'''

MIDDLE_OF_A_LONG_DOCSTRING = """@@ -100,6 +100,6 @@ class Foo:
         Args:
             x: The value.
-            y: The othr value.
+            y: The other value.

         Returns:
             The result."""

DOCSTRING_FIRST_LINE = '''@@ -341,7 +341,7 @@ def max_length_validator(x: Any, max_length: Any) -> Any:
 def _extract_decimal_digits_info(decimal: Decimal) -> tuple[int, int]:
-    """Compute the total number of digits and decimal places for a given instance.
+    """Compute the number of decimal places and total digits for a given instance.

     This function handles both normalized and non-normalized Decimal instances.'''

DOC_ARGUMENT = '''@@ -5,6 +5,6 @@ def validate(
         strict: Annotated[
             bool,
             Doc(
-                """Whether to be strcit."""
+                """Whether to be strict."""
             ),'''

COMMENTS = """@@ -1,3 +1,3 @@
-# old comment on the thing
+# new comment on the thing
 x = 1"""

C_DOC_COMMENT = """@@ -10,5 +10,5 @@
 /**
- * Retruns the widget.
+ * Returns the widget.
  */
 int widget(void) {"""

CODE_AFTER_THE_DOCSTRING_CLOSES = '''@@ -10,5 +10,5 @@ class Model:
     more prose here.
     """
-    x = 1
+    x = 2
     return x'''

CODE = """@@ -10,4 +10,4 @@
     x = compute(a, b)
-    y = foo(x)
+    y = bar(x)
     return y"""

A_VALUE_IN_A_LIST = """@@ -1,4 +1,5 @@
 SUPPORTED = [
     "foo",
+    "bar",
 ]"""

CODE_AFTER_A_DOCSTRING_IN_CONTEXT = '''@@ -3,6 +3,6 @@
             Defaults to `None`.
         """
-        if x is None:
+        if x is not None:
             return 1
         return 2'''

NEW_FILE = """@@ -0,0 +1,6 @@
+# SPDX-License-Identifier: Apache-2.0
+from typing import Any
+
+def build(
+    specs: list[Any],
+) -> dict[str, Any]:"""


@pytest.mark.parametrize(
    "patch",
    [OPENING_IN_CONTEXT, MIDDLE_OF_A_LONG_DOCSTRING, DOCSTRING_FIRST_LINE, DOC_ARGUMENT, COMMENTS],
)
def test_docstrings_and_comments_are_prose(patch: str) -> None:
    assert prose_only(patch, "python")


@pytest.mark.parametrize(
    "patch",
    [CODE_AFTER_THE_DOCSTRING_CLOSES, CODE, A_VALUE_IN_A_LIST, CODE_AFTER_A_DOCSTRING_IN_CONTEXT, NEW_FILE],
)
def test_code_is_code(patch: str) -> None:
    assert not prose_only(patch, "python")


def test_c_like_doc_comments_are_prose() -> None:
    assert prose_only(C_DOC_COMMENT, "c")
    code = "@@ -10,4 +10,4 @@\n  */\n int widget(void) {\n-    return 1;\n+    return 2;\n }"
    assert not prose_only(code, "c")


def test_a_schema_string_spelling_out_a_signature_is_code_and_a_message_is_prose() -> None:
    # An op's declaration written as a string: two parameters added to it were read as "messages".
    schema = """@@ -40,6 +40,8 @@ LIBRARY(ext, m) {
       "                     int num_experts,"
       "                     int block_size, int max_loras, "
+      "                     int max_num_tokens_padded, "
+      "                     int max_num_m_blocks, "
       "                     Tensor !sorted_token_ids,"
       "                     Tensor !num_tokens_post_pad) -> () ");"""
    assert not prose_only(schema, "cpp")
    message = """@@ -8,4 +8,4 @@ void check(int n) {
   TORCH_CHECK(n > 0,
-      "the batch must not be empty, got ",
+      "the batch must hold at least one request, got ",
       n);"""
    assert prose_only(message, "cpp")


def test_a_comment_reworded_after_code_is_prose_and_the_code_beside_it_is_compared() -> None:
    # vllm's "[Doc]: fix typos in various files": `// Vector Shift Right Algebaic` spelled right at the end of a
    # `#define`; the header read as code and the commit ranked medium by its paths' record.
    define = """@@ -12,7 +12,7 @@ namespace vec_op {
 #define vec_sub(a, b) ((a) - (b))
-#define vec_sr(a, b) ((a) >> (b))  // Vector Shift Right Algebaic
+#define vec_sr(a, b) ((a) >> (b))  // Vector Shift Right Algebraic
 #define vec_sl(a, b) ((a) << (b))"""
    assert prose_only(define, "cpp")
    assert not prose_only(
        define.replace("+#define vec_sr(a, b) ((a) >> (b))", "+#define vec_sr(a, b) ((a) >>> (b))"), "cpp"
    )
    # a string on the line changed too: data, compared as written
    path = '@@ -3,3 +3,3 @@\n-const char* kRoot = "/srv";  // the root\n+const char* kRoot = "/var";  // where data lives\n'
    assert not prose_only(path, "cpp")
    hashed = "@@ -3,3 +3,3 @@\n-LIMIT = 10  # the most bytes\n+LIMIT = 10  # the most bytes read\n"
    assert prose_only(hashed, "python")
    assert not prose_only(hashed.replace("+LIMIT = 10", "+LIMIT = 12"), "python")
    # lines swapped are code changed, though each reads as before (vllm's "Prefer FlashAttention MLA as default")
    swapped = "@@ -55,4 +55,4 @@\n     return [\n-        Backend.FLASHMLA,\n         Backend.FLASH_ATTN_MLA,\n+        Backend.FLASHMLA,\n     ]\n"
    assert not prose_only(swapped, "python")
    # a space moved inside strings changes what they say ("Refactor vllm config str")
    spaced = '@@ -3,4 +3,4 @@\n-    f"model={m}," # x\n-    f" seed={s}"\n+    f"model={m}, " # y\n+    f"seed={s}"\n'
    assert not prose_only(spaced, "python")
    # a "#" inside a string is no comment: the string changed
    quoted = '@@ -3,3 +3,3 @@\n-TAG = "a # b"\n+TAG = "a # c"\n'
    assert not prose_only(quoted, "python")
    # a line that ends inside a block comment is not told this way
    opened = "@@ -3,3 +3,3 @@\n-int x = 1; /* the\n+int x = 2; /* the\n  limit */\n"
    assert not prose_only(opened, "c")


def test_unknown_languages_and_huge_patches_are_read_as_code() -> None:
    assert not prose_only(COMMENTS, None)
    many = "@@ -1,500 +1,500 @@\n" + "\n".join(f"-# c{i}\n+# d{i}" for i in range(500))
    assert not prose_only(many, "python")


# -- what is kept or skipped to spare CPU must read the same ---------------------------------------------


@pytest.mark.parametrize(
    "texts",
    [
        [
            "def f(x):",
            "    return x + 1",
            "",
            "# a comment",
        ],  # no triple quote: the string starts are not scanned
        ["    Validate the input.", '    """', "    return x"],  # one closes: scanned
        ["x = '''a", "b'''"],
        [],
    ],
)
def test_the_readings_of_a_side_are_those_of_a_scan_from_each_start(texts: list[str]) -> None:
    from analysis.heuristic.code_lines import open_states, scan
    from analysis.heuristic.text_only import _is_prose_line, _readings

    lines = tuple(("+", text) for text in texts)
    _readings.cache_clear()
    readings = _readings(lines, "python", False)
    assert [r[0] for r in readings] == list(open_states("python"))
    for start, scanned, left_open, prose in readings:
        assert (list(scanned), left_open) == scan(texts, "python", start)
        comment = re.compile(r"^\s*#")
        expected = all(
            _is_prose_line(t, c, b or e, comment) for t, (c, b, e) in zip(texts, scanned, strict=True)
        )
        assert prose == expected


def test_a_patch_read_by_the_facts_then_by_the_signals_counts_as_read_fresh() -> None:
    from analysis.heuristic.text_only import _most_plausible, _readings, changed_code_lines

    patch = MIDDLE_OF_A_LONG_DOCSTRING + "\n@@ -200,1 +200,1 @@\n-    x = compute(1)\n+    x = compute(2)"
    _readings.cache_clear()
    _most_plausible.cache_clear()
    fresh = changed_code_lines(patch, "python", 100)
    assert fresh == 2  # the code line on each side; the docstring's lines are prose
    assert not prose_only(patch, "python")  # fills the caches with this patch's sides
    assert changed_code_lines(patch, "python", 100) == fresh
    assert _readings.cache_info().hits > 0


@pytest.mark.parametrize(
    "line",
    [
        "Validate the input and return a model.",  # two plain names in a row
        '"""Base method for speech-to-text operations like',  # a triple-quoted string left open
        "Returns the value of 'key' for this request.",  # the names come before the quote
        "é the value",  # a non-ASCII name before them changes nothing
    ],
)
def test_a_line_that_never_parses_is_told_without_compiling(line: str) -> None:
    from analysis.heuristic.text_only import _looks_like_code, _never_parses, _parses

    assert _never_parses(line)
    assert not _parses(line)  # the shortcut agrees with the dozen compiles
    assert not _looks_like_code(line)


@pytest.mark.parametrize(
    "line",
    [
        "return the_value",  # a keyword and a name: a statement
        "x if cond else y",
        "match command",  # a soft keyword: left to compile
        "case Point",
        "value r'raw'",  # a name before a string's prefix: the pair is not two names
        "'''a''' and b c",  # the names come after a string: anything may precede them
        "x = 1  # set the value",  # the words are in a comment
        'f(""" closed """)',
        "Args:",  # no two names at all
        "a.b c",  # a name after a dot is not told (kept to compile)
    ],
)
def test_a_line_the_shortcut_cannot_rule_out_is_compiled(line: str) -> None:
    from analysis.heuristic.text_only import _looks_like_code, _never_parses, _parses

    assert not _never_parses(line)
    assert _looks_like_code(line) == _parses(line)
