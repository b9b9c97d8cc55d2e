"""Issue 13 item 6: the heuristic judges code by its path and language first, and reads calls and
kernel markers in code only, never in string literals, docstrings or comments."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from analysis.heuristic import rank
from analysis.models import Commit, FileChange, Importance

# The shapes that misled the first report of this repository's own code: kernel markers inside
# regex patterns, and risky calls named in a docstring and a comment.
RULES_MODULE = [
    '"""Rules for kernel code and risky calls."""',
    "import re",
    '_KERNEL_HINTS = ("triton", "tl.", "num_warps", "__global__", "<<<")',
    "_KERNEL_MARKERS = re.compile(",
    '    r"@triton\\.jit|\\btl\\.(constexpr|load|store|program_id)\\b|\\bnum_warps\\b|__global__|<<<"',
    ")",
    '_RISKY = re.compile(r"\\bshell\\s*=\\s*True\\b|eval\\(")  # e.g. subprocess.run(x, shell=True)',
]
PACKAGE_DOCSTRING = [
    '"""The heuristic analyser.',
    "",
    "Signals: security words in the title, added deserialisation / eval / shell=True calls,",
    "pickle.loads(data) and os.system(cmd) among them.",
    '"""',
    "from analysis.heuristic.rules import rank",
]


def added_file(path: str, lines: list[str]) -> FileChange:
    patch = f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join("+" + line for line in lines)
    return FileChange(path=path, status="added", additions=len(lines), deletions=0, patch=patch)


def commit(*files: FileChange) -> Commit:
    return Commit(
        repo="acme/widget",
        sha="0123456789abcdef0123456789abcdef01234567",
        message="The rules module",
        author="Ada",
        committed_at=datetime(2026, 1, 29, 12, 0, tzinfo=UTC),
        files=files,
    )


def test_kernel_markers_inside_string_literals_are_not_kernel_code() -> None:
    importance, reason = rank(commit(added_file("analysis/rules.py", RULES_MODULE)), lang="en")
    assert importance == Importance.LOW
    assert "kernel" not in reason
    assert "security" not in reason


def test_risky_calls_named_in_a_docstring_are_not_security_signals() -> None:
    importance, reason = rank(
        commit(added_file("analysis/heuristic/__init__.py", PACKAGE_DOCSTRING)), lang="en"
    )
    assert "security" not in reason
    assert importance == Importance.LOW


def test_the_same_markers_in_code_still_count() -> None:
    triton = added_file(
        "src/widget/ops/scan.py",
        ["@triton.jit", "def scan(x_ptr, BLOCK: tl.constexpr):", "    x = tl.load(x_ptr)  # a string: 'no'"],
    )
    _, reason = rank(commit(triton), lang="en")
    assert "changes GPU/native kernel code `src/widget/ops/scan.py`" in reason
    shell = added_file("src/widget/run.py", ['subprocess.run("make", shell=True)  # builds it'])
    _, reason = rank(commit(shell), lang="en")
    assert "security-relevant: `shell=True`" in reason


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("value = eval(text)", "eval"), ("exec (code)", "exec"), ("x = pickle.loads(b)", "pickle.loads"),
        ("cloudpickle.load(f)", "cloudpickle.load"), ("dill.loads(b)", "dill.loads"),
        ("marshal.loads(b)", "marshal.loads"), ("yaml.load(f)", "yaml.load"), ("torch.load(path)", "torch.load"),
        ("os.system(cmd)", "os.system"), ("run(cmd, shell = True)", "shell=True"),
        ("load(m, trust_remote_code=True)", "trust_remote_code=True"), ("get(url, verify=False)", "verify=False"),
        ("<div dangerouslySetInnerHTML={x} />", "dangerouslySetInnerHTML"), ("el.innerHTML = html", "innerHTML="),
    ],
)  # fmt: skip
def test_every_risky_call_is_found_past_the_quick_word_check(line: str, named: str) -> None:
    """The words checked before the expression's search must not hide any form the expression finds."""
    path = "src/widget/page.tsx" if "HTML" in line else "src/widget/run.py"
    _, reason = rank(commit(added_file(path, [line])), lang="en")
    assert f"`{named}`" in reason


def test_cuda_markers_count_only_in_c_family_code() -> None:
    cpp = added_file("src/widget/launch.cpp", ["// a __global__ kernel is launched elsewhere", "int x = 1;"])
    _, reason = rank(commit(cpp), lang="en")
    assert "kernel" not in reason
    launch = added_file("src/widget/launch.cpp", ["scan<<<grid, block>>>(x);"])
    _, reason = rank(commit(launch), lang="en")
    assert "changes GPU/native kernel code `src/widget/launch.cpp`" in reason
    # CUDA syntax in a Python file is text about CUDA, not a kernel.
    py = added_file("src/widget/doc.py", ["TEMPLATE = 0  # kernel<<<grid, block>>>", "x = __global__"])
    _, reason = rank(commit(py), lang="en")
    assert "kernel" not in reason


@pytest.mark.parametrize("path", ["csrc/moe/permute.cu", "src/widget/attn.cuh"])
def test_kernel_files_are_known_by_path_alone(path: str) -> None:
    _, reason = rank(commit(added_file(path, ["int x = 1;"])), lang="en")
    assert f"changes GPU/native kernel code `{path}`" in reason
