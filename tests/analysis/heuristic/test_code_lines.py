"""Code without its string literals and comments: what the heuristic reads for calls and kernel markers."""

from __future__ import annotations

import pytest

from analysis.heuristic.code_lines import code_only
from analysis.paths import language_of


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("analysis/heuristic/facts.py", "python"),
        ("csrc/attention.cu", "cuda"),
        ("src/kernels/gemm.cpp", "cpp"),
        ("include/widget.h", "c"),
        ("web/app.tsx", "javascript"),
        ("scripts/build.sh", "shell"),
        ("cmd/main.go", "go"),
        ("docs/index.md", None),
        ("config/app.yaml", None),
        ("Makefile", None),
    ],
)
def test_language_of_by_extension(path: str, language: str | None) -> None:
    assert language_of(path) == language


def test_python_strings_and_comments_are_emptied() -> None:
    lines = [
        '_MARKERS = re.compile(r"@triton\\.jit|\\btl\\.load\\b|__global__")',
        "subprocess.run(cmd, shell=True)  # not eval(x)",
        "x = 'it''s' + \"a \\\" quote\"",
    ]
    assert code_only(lines, "python") == [
        '_MARKERS = re.compile(r"")',
        "subprocess.run(cmd, shell=True)  ",
        'x = """" + ""',
    ]


def test_python_docstring_spanning_lines_is_not_code() -> None:
    lines = [
        "def f():",
        '    """Flags risky calls:',
        "    eval, pickle.loads(x), shell=True.",
        '    """',
        "    return eval(s)",
    ]
    assert code_only(lines, "python") == ["def f():", '    ""', "", '""', "    return eval(s)"]


def test_c_like_block_comments_line_comments_and_char_literals() -> None:
    lines = [
        "/* launches a __global__ kernel",
        "   with <<<grid, block>>> */ int x = 1;",
        'printf("__global__"); // <<<',
        "char c = '\"'; kernel<<<grid, block>>>(a);",
    ]
    assert code_only(lines, "cuda") == [
        "",
        " int x = 1;",
        'printf(""); ',
        'char c = ""; kernel<<<grid, block>>>(a);',
    ]


def test_shell_hash_inside_a_word_is_code() -> None:
    assert code_only(["n=${#list[@]} # count", "echo 'eval(x)'"], "shell") == ["n=${#list[@]} ", 'echo ""']


def test_unknown_language_is_left_as_is() -> None:
    lines = ["shell=True  # a YAML value", "eval: true"]
    assert code_only(lines, None) == lines


def test_plain_lines_come_back_whole_and_a_string_left_open_still_swallows_them() -> None:
    # a line with nothing that opens a string or comment is returned as is; the scanner's state still decides
    lines = ["x = f(1)", 'doc = """Start', "plain words = here", 'end"""  # note', "y = g(2)"]
    assert code_only(lines, "python") == ["x = f(1)", 'doc = ""', "", '""  ', "y = g(2)"]
    assert code_only(["int n = 1;", "/* a", "int m = 2;", "*/ int k;"], "c") == [
        "int n = 1;",
        "",
        "",
        " int k;",
    ]
