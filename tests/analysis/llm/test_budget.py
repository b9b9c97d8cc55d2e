import re
from datetime import UTC, datetime

import pytest

from analysis.llm.budget import DiffSelection, file_list, select_diff, split_hunks
from analysis.llm.tokens import estimate_tokens
from analysis.models import Commit, FileChange

WHEN = datetime(2026, 1, 29, 12, 0, tzinfo=UTC)


def hunk(start: int, lines: int, tag: str = "x") -> str:
    body = "\n".join(f"+    value_{tag}_{i} = compute_{tag}(arg_{i}, other_{i})" for i in range(lines))
    return f"@@ -{start},0 +{start},{lines} @@ def f_{tag}():\n{body}"


def patch(*hunks: str) -> str:
    return "\n".join(hunks)


def fc(path: str, text: str | None, status: str = "modified", **kw) -> FileChange:
    adds = sum(1 for line in (text or "").split("\n") if line.startswith("+"))
    return FileChange(path, status, kw.pop("additions", adds), kw.pop("deletions", 0), text, **kw)


def commit(*files: FileChange, files_total: int | None = None) -> Commit:
    return Commit("o/r", "c" * 40, "Title", "A", WHEN, files=tuple(files), files_total=files_total)


def included_hunks(text: str) -> list[str]:
    """The hunks of the selection text, each from its '@@' line to the next header or marker."""
    out: list[str] = []
    current: list[str] | None = None
    for line in text.split("\n"):
        if line.startswith("@@"):
            current = [line]
            out.append(current)  # type: ignore[arg-type]
        elif line.startswith(("--- a/", "[")):
            current = None
        elif current is not None:
            current.append(line)
    return ["\n".join(h) for h in out]  # type: ignore[arg-type]


def test_small_commit_is_complete():
    c = commit(fc("pkg/a.py", patch(hunk(1, 3))), fc("tests/test_a.py", patch(hunk(1, 2, "t"))))
    sel = select_diff(c, 4000)
    assert sel.complete and sel.coverage_note("en") is None and sel.coverage_note("zh") is None
    assert sel.shown == ["pkg/a.py", "tests/test_a.py"]
    assert sel.text.startswith("--- a/pkg/a.py (modified, +3 -0)\n@@")
    assert "left out" not in sel.text
    assert sel.tokens == estimate_tokens(sel.text)


def test_low_value_and_unavailable_files_are_left_out_with_reasons():
    c = commit(
        fc("pkg/a.py", patch(hunk(1, 3))),
        fc("uv.lock", patch(hunk(1, 50, "lock"))),
        fc("api/foo_pb2.py", patch(hunk(1, 50, "pb"))),
        fc("third_party/lib/x.c", patch(hunk(1, 5, "v"))),
        fc("static/app.min.js", patch(hunk(1, 5, "m"))),
        fc("assets/logo.png", None, status="added"),
        fc("pkg/big.py", None, additions=900),
    )
    sel = select_diff(c, 4000)
    assert dict(sel.omitted) == {
        "uv.lock": "lockfile",
        "api/foo_pb2.py": "generated",
        "third_party/lib/x.c": "vendored",
        "static/app.min.js": "minified",
        "assets/logo.png": "binary",
        "pkg/big.py": "diff unavailable",
    }
    assert sel.shown == ["pkg/a.py"] and not sel.complete
    assert "value_lock" not in sel.text and "value_pb" not in sel.text
    assert sel.text.splitlines()[-1].startswith("[left out of this diff: 6 of 7 files")
    note = sel.coverage_note("en")
    assert note.startswith("covered 1 of 7 files (6 left out")
    assert "lockfile: uv.lock" in note and "binary" in note
    assert sel.coverage_note("zh").startswith("已覆盖 7 个文件中的 1 个（未包含 6 个")


def test_pure_rename_and_empty_file_are_shown_by_header():
    c = commit(
        fc("pkg/new.py", None, status="renamed", previous_path="pkg/old.py"),
        fc("pkg/__init__.py", None, status="added"),
    )
    sel = select_diff(c, 1000)
    assert sel.complete
    assert "--- a/pkg/new.py (renamed, from pkg/old.py, +0 -0)" in sel.text


def test_priority_order_source_config_tests_docs():
    c = commit(
        fc("docs/guide.md", patch(hunk(1, 40, "d"))),
        fc("tests/test_x.py", patch(hunk(1, 30, "t"))),
        fc("conf/app.yaml", patch(hunk(1, 2, "c"))),
        fc("pkg/small.py", patch(hunk(1, 2, "s"))),
        fc("pkg/large.py", patch(hunk(1, 9, "l"))),
    )
    sel = select_diff(c, 100_000)
    headers = [line.split(" ")[1] for line in sel.text.splitlines() if line.startswith("--- a/")]
    # Source first (more changed lines first), then config, then tests, then docs.
    assert headers == [
        "a/pkg/large.py",
        "a/pkg/small.py",
        "a/conf/app.yaml",
        "a/tests/test_x.py",
        "a/docs/guide.md",
    ]


def test_budget_drops_low_priority_files_first():
    c = commit(
        fc("pkg/core.py", patch(hunk(1, 20, "core"))),
        fc("tests/test_core.py", patch(hunk(1, 20, "t"))),
        fc("docs/core.md", patch(hunk(1, 20, "d"))),
    )
    one = estimate_tokens(select_diff(commit(c.files[0]), 100_000).text)
    sel = select_diff(c, one + 150)
    assert sel.shown == ["pkg/core.py"]
    assert [p for p, _ in sel.omitted] == ["tests/test_core.py", "docs/core.md"]
    assert all(reason == "budget" for _, reason in sel.omitted)
    assert estimate_tokens(sel.text) <= one + 150


def test_whole_hunks_only_for_a_big_source_file():
    hunks = [hunk(100 * i + 1, 15 + i, f"h{i}") for i in range(8)]
    big = fc("pkg/engine.py", patch(*hunks))
    small = fc("pkg/util.py", patch(hunk(1, 3, "u")))
    c = commit(big, small)
    budget = 700
    sel = select_diff(c, budget)
    assert estimate_tokens(sel.text) <= budget
    assert sel.clipped == ["pkg/engine.py"] and sel.shown == ["pkg/util.py"]
    shown = included_hunks(sel.text)
    assert len(shown) >= 2
    for h in shown:  # every included hunk is complete, byte for byte
        assert h in hunks or h == hunk(1, 3, "u")
    assert re.search(r"\[… \d+ of 8 hunks of pkg/engine.py not shown: length budget\]", sel.text)
    note = sel.coverage_note("en")
    assert note == "covered 1 of 2 files in full, 1 in part (pkg/engine.py)"
    assert sel.coverage_note("zh") == "已完整覆盖 2 个文件中的 1 个，部分覆盖 1 个（pkg/engine.py）"


def test_big_file_is_not_crowded_out_by_small_neighbours():
    big = fc("pkg/core.py", patch(*[hunk(100 * i + 1, 20, f"b{i}") for i in range(6)]))
    smalls = [fc(f"pkg/s{i}.py", patch(hunk(1, 12, f"s{i}"))) for i in range(6)]
    sel = select_diff(commit(big, *smalls), 900)
    assert "pkg/core.py" in sel.clipped  # at least one hunk of the commit's biggest file


def test_low_priority_file_is_not_clipped_when_something_else_fits():
    tests_hunks = [hunk(100 * i + 1, 20, f"t{i}") for i in range(6)]
    c = commit(fc("pkg/a.py", patch(hunk(1, 3))), fc("tests/test_a.py", patch(*tests_hunks)))
    sel = select_diff(c, 400)
    assert sel.shown == ["pkg/a.py"] and not sel.clipped
    assert ("tests/test_a.py", "budget") in sel.omitted


def test_single_huge_patch_is_clipped_to_whole_hunks():
    hunks = [hunk(100 * i + 1, 30, f"h{i}") for i in range(40)]
    c = commit(fc("tests/test_huge.py", patch(*hunks)))  # even a low-priority file, when alone
    sel = select_diff(c, 1000)
    assert estimate_tokens(sel.text) <= 1000
    assert sel.clipped == ["tests/test_huge.py"]
    assert all(h in hunks for h in included_hunks(sel.text))
    assert "hunk cut" not in sel.text


def test_first_hunk_larger_than_budget_is_cut_at_a_line_and_marked():
    first = hunk(1, 400, "giant")
    c = commit(fc("pkg/gen_tables.py", patch(first, hunk(900, 300, "next"))))
    sel = select_diff(c, 500)
    assert estimate_tokens(sel.text) <= 500
    assert sel.clipped == ["pkg/gen_tables.py"]
    m = re.search(r"\[… hunk cut after (\d+) of 401 lines: length budget\]", sel.text)
    assert m
    kept = int(m.group(1))
    body = sel.text.split("\n", 1)[1]
    assert body.startswith("\n".join(first.split("\n")[:kept]) + "\n[… hunk cut")  # whole lines only
    assert "of 2 hunks of pkg/gen_tables.py not shown" in sel.text


@pytest.mark.parametrize("budget", [0, 5, 20, 60, 150, 400, 1000, 3000])
def test_budget_always_respected(budget):
    files = [
        fc(f"pkg/m{i}.py", patch(*[hunk(50 * j, 6 + i, f"{i}{j}") for j in range(3)])) for i in range(12)
    ]
    files += [fc("uv.lock", patch(hunk(1, 9, "lock"))), fc(f"docs/{'x' * 80}.md", patch(hunk(1, 3, "d")))]
    sel = select_diff(commit(*files, files_total=20), budget)
    assert estimate_tokens(sel.text) <= budget
    assert sel.tokens == estimate_tokens(sel.text)
    assert len(sel.shown) + len(sel.clipped) + len(sel.omitted) + sel.unlisted == 20


def test_capped_file_list_counts_unlisted_files():
    c = commit(fc("pkg/a.py", patch(hunk(1, 3))), files_total=3500)
    sel = select_diff(c, 4000)
    assert sel.files_total == 3500 and sel.unlisted == 3499 and not sel.complete
    assert "3499 not listed by the source" in sel.coverage_note("en")
    assert "3499 个未被数据源列出" in sel.coverage_note("zh")
    assert "3499 not listed by the source" in sel.text


def test_coverage_note_names_a_few_and_counts_the_rest():
    files = [fc(f"pkg/m{i:02}.py", patch(hunk(1, 30, str(i)))) for i in range(14)]
    sel = select_diff(commit(*files), 700)
    left = len(sel.omitted)
    assert left >= 5
    note = sel.coverage_note("en")
    assert note.startswith(f"covered {len(sel.shown)} of 14 files")
    assert f"({left} left out — over the length budget: " in note
    assert f"and {left - 2} more)" in note
    assert f"及另外 {left - 2} 个" in sel.coverage_note("zh")


def test_deterministic():
    files = [fc(f"pkg/m{i}.py", patch(hunk(1, 10 + i % 3, str(i)))) for i in range(30)]
    c = commit(*files)
    assert select_diff(c, 900) == select_diff(c, 900)
    reordered = commit(*reversed(files))
    assert select_diff(reordered, 900).text == select_diff(c, 900).text


def test_split_hunks_keeps_preamble_with_first_hunk():
    text = "diff header\n@@ -1 +1 @@\n-a\n+b\n@@ -9 +9 @@\n c"
    assert split_hunks(text) == ["diff header\n@@ -1 +1 @@\n-a\n+b", "@@ -9 +9 @@\n c"]


def test_empty_selection_dataclass():
    sel = DiffSelection(text="", files_total=0)
    assert sel.complete and sel.coverage_note("en") is None


# --- file list -------------------------------------------------------------------------------


def test_file_list_one_line_per_file():
    c = commit(
        fc("pkg/a.py", patch(hunk(1, 3))),
        fc("pkg/new.py", None, status="renamed", previous_path="pkg/old.py"),
        fc("uv.lock", patch(hunk(1, 2))),
    )
    assert file_list(c, 1000).splitlines() == [
        "modified pkg/a.py (+3 -0) [source]",
        "renamed pkg/old.py → pkg/new.py (+0 -0) [source]",
        "modified uv.lock (+2 -0) [lockfile]",
    ]


def _totals(text: str) -> int:
    total = 0
    for line in text.splitlines()[1:]:
        m = re.match(r"^(?:\S+/|\(root\)) (\d+) files? \(", line) or re.match(
            r"^… and (\d+) more files", line
        )
        assert m, line
        total += int(m.group(1))
    return total


def test_file_list_of_3000_files_groups_by_folder_and_adds_up():
    files = []
    for i in range(3000):
        top = ("vllm", "tests", "docs", "csrc", "benchmarks")[i % 5]
        files.append(fc(f"{top}/sub{i % 37}/f{i}.py", None, additions=1, deletions=1))
    c = commit(*files, files_total=3200)
    text = file_list(c, 600)
    assert estimate_tokens(text) <= 600
    assert text.splitlines()[0].startswith("3200 files changed (+3000 -3000), by folder:")
    assert _totals(text) == 3200
    assert "not listed by the source" in text.splitlines()[-1]
    # Roomier: every folder fits, the unlisted files are still counted.
    roomy = file_list(c, 20_000)
    assert _totals(roomy) == 3200


def test_file_list_tiny_budget_still_counts_everything():
    files = [fc(f"a{i}/f.py", None, additions=1) for i in range(50)]
    text = file_list(commit(*files), 10)
    assert text.splitlines()[-1] == "… and 50 more files in 50 more folders"
    assert _totals(text) == 50


def test_a_whole_later_hunk_is_preferred_to_cutting_the_first():
    small = hunk(900, 5, "next")
    c = commit(fc("pkg/gen_tables.py", patch(hunk(1, 400, "giant"), small)))
    sel = select_diff(c, 500)
    assert included_hunks(sel.text) == [small]
    assert "hunk cut" not in sel.text


def test_docs_only_commit_clips_its_main_file_and_keeps_the_small_ones():
    big = fc("docs/guide.md", patch(*[hunk(100 * i + 1, 20, f"g{i}") for i in range(6)]))
    small = [fc(f"docs/s{i}.md", patch(hunk(1, 2, f"s{i}"))) for i in range(3)]
    sel = select_diff(commit(big, *small), 1200)
    assert sel.clipped == ["docs/guide.md"]
    assert sorted(sel.shown) == ["docs/s0.md", "docs/s1.md", "docs/s2.md"]


def test_a_new_central_module_larger_than_the_budget_is_cut_not_dropped():
    module = hunk(1, 600, "model")  # a new file: one hunk, far over the budget
    neighbours = [fc(f"pkg/registry{i}.py", patch(hunk(10, 4, f"r{i}"))) for i in range(5)]
    c = commit(fc("pkg/models/new_model.py", patch(module), status="added"), *neighbours)
    budget = 1500
    sel = select_diff(c, budget)
    assert estimate_tokens(sel.text) <= budget
    assert "pkg/models/new_model.py" in sel.clipped  # seen in part, never left out
    assert re.search(r"\[… hunk cut after \d+ of 601 lines: length budget\]", sel.text)
    assert len(sel.shown) >= 3  # the small neighbours still fit beside it
    assert "covered" in sel.coverage_note("en")


def test_a_conversation_keeps_its_latest_turns_within_the_budget():
    from analysis.llm.budget import fit_turns

    turns = [("user", f"question {i} " + "word " * 50) for i in range(30)] + [("assistant", "x " * 5000)]
    kept = fit_turns(turns, 600, turn_max=200)
    assert kept[-1][0] == "assistant" and kept[-1][1].endswith(" …")  # the long last turn, cut
    assert estimate_tokens(kept[-1][1]) <= 200
    assert [t for _, t in kept[:-1]] == [t.strip() for _, t in turns[-len(kept) : -1]]  # newest, in order
    assert sum(estimate_tokens(f"{w}: {t}") + 1 for w, t in kept) <= 600
    assert fit_turns(turns, 0) == [] and fit_turns([], 100) == []


def test_the_whole_diffs_cost_is_what_select_diff_sends_when_it_fits():
    from analysis.llm.budget import whole_diff_cost

    c = commit(fc("docs/guide.md", patch(hunk(1, 26, "doc"))), fc("pkg/a.py", patch(hunk(1, 3))))
    whole = whole_diff_cost(c)
    assert whole is not None
    assert select_diff(c, whole).complete and not select_diff(c, whole - 40).complete
    # a part left out whatever the budget: no whole cost
    assert (
        whole_diff_cost(commit(fc("pkg/a.py", patch(hunk(1, 3))), fc("uv.lock", patch(hunk(1, 9))))) is None
    )
    assert whole_diff_cost(commit(fc("pkg/a.py", patch(hunk(1, 3))), files_total=5)) is None
