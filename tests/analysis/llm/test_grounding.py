from datetime import UTC, datetime

import pytest

from analysis.labels import label
from analysis.llm.grounding import consistent_change_type, ground, title_change_types
from analysis.models import Analysis, ChangeType, Commit, FileChange, Importance
from analysis.text import ZWSP

WHEN = datetime(2026, 1, 29, 12, 0, tzinfo=UTC)
PATCH = "@@ -1,3 +1,3 @@\n-torch==2.8.0\n+torch==2.9.1\n # gives a 1.5x speedup, 20-30% less memory"


def make_commit(
    message: str = "[Perf] Faster MoE (#12)\n\nCuts latency by 12%.", patch: str = PATCH
) -> Commit:
    files = (
        FileChange("vllm/model_executor/layers/fused_moe.py", "modified", 3, 1, patch),
        FileChange("csrc/moe/topk.cu", "modified", 10, 2, "@@ -1 +1 @@\n-a\n+b"),
        FileChange("docs/new_name.md", "renamed", 0, 0, None, previous_path="docs/old_name.md"),
    )
    return Commit("o/r", "f" * 40, message, "A", WHEN, files=files)


def make_analysis(**kw) -> Analysis:
    base = {
        "sha": "f" * 40,
        "importance": Importance.HIGH,
        "importance_reason": "Touches the MoE kernel.",
        "change_type": ChangeType.PERFORMANCE,
        "summary": "Speeds up MoE.",
        "scope": ["MoE layers"],
        "risks": ["Kernel regressions."],
        "recommendations": ["Benchmark the kernel."],
        "insights": {"performance": "Faster MoE."},
        "analyzer": "llm",
        "lang": "en",
    }
    return Analysis(**{**base, **kw})


def test_clean_analysis_is_unchanged_and_has_no_note():
    a = make_analysis()
    out = ground(a, make_commit(), "en")
    assert out == a and out is not a


@pytest.mark.parametrize(
    "cited",
    [
        "vllm/model_executor/layers/fused_moe.py",
        "fused_moe.py",
        "`layers/fused_moe.py:42`",
        "csrc/moe/topk.cu",
        "topk.cu",
        "docs/old_name.md",  # previous path of a rename
        "new_name.md",
        "vllm/model_executor/layers",  # a folder of a changed path (no extension: never checked anyway)
        "修改了vllm/model_executor/layers/fused_moe.py中的逻辑",
    ],
)
def test_real_paths_are_kept(cited):
    a = make_analysis(summary=f"It edits {cited}. Done.")
    out = ground(a, make_commit(), "en")
    assert out.summary == a.summary and not out.notes


def test_invented_paths_are_removed_sentence_by_sentence_and_item_by_item():
    a = make_analysis(
        summary="Speeds up MoE. It also rewrites vllm/engine/llm_engine.py. Kernels are faster.",
        scope=["MoE layers", "scheduler.py"],
        recommendations=["Check csrc/attention/attn.cu", "Benchmark the kernel."],
    )
    out = ground(a, make_commit(), "en")
    assert out.summary == "Speeds up MoE. Kernels are faster."
    assert out.scope == ["MoE layers"]
    assert out.recommendations == ["Benchmark the kernel."]
    # Readers learn how many, never what: the invented path stays out of every note.
    assert out.notes[-1] == "grounding: removed 3 statements citing files or figures not in the commit"
    assert out.grounding_removed == ["vllm/engine/llm_engine.py", "scheduler.py", "csrc/attention/attn.cu"]


def test_chinese_sentences_are_split_on_full_stops():
    a = make_analysis(
        summary="优化了 MoE。修改了 vllm/foo/bar.py 的调度逻辑！整体性能提升约 40%？内核更快。", lang="zh"
    )
    out = ground(a, make_commit(), "zh")
    assert out.summary == "优化了 MoE。内核更快。"
    assert out.notes[-1].startswith("事实核查：删除了 2 处")


@pytest.mark.parametrize(
    "figure", ["35%", "约 1.2–1.5×", "1.2-1.5x", "v0.3.0", "3 倍", "2x", "45 %", "torch 2.7.1", "20-40%"]
)
def test_invented_figures_are_removed(figure):
    a = make_analysis(insights={"performance": f"Faster MoE. Throughput improves by {figure} overall."})
    out = ground(a, make_commit(), "en")
    assert out.insights["performance"] == "Faster MoE."
    assert len(out.notes) == 1


@pytest.mark.parametrize(
    "figure", ["12%", "1.5x", "1.5×", "1.50 x", "20-30%", "20%", "2.9.1", "v2.8.0", "torch==2.9.1"]
)
def test_figures_present_in_message_or_diff_are_kept(figure):
    a = make_analysis(insights={"performance": f"Improves by {figure}."})
    out = ground(a, make_commit(), "en")
    assert out.insights["performance"] == f"Improves by {figure}." and not out.notes


def test_range_figure_from_the_message_is_kept():
    c = make_commit(message="[Perf] Faster\n\nBenchmarks show a 1.2–1.5× speedup and v0.3.0 compatibility.")
    a = make_analysis(summary="About 1.2–1.5× faster. Works with v0.3.0.")
    out = ground(a, c, "en")
    assert out.summary == a.summary and not out.notes


@pytest.mark.parametrize(
    "text", ["Targets SM-100 (H100) GPUs.", "Needs CUDA 12.8.", "Changes 3 files and 120 lines."]
)
def test_model_numbers_plain_numbers_and_two_part_decimals_are_not_checked(text):
    a = make_analysis(summary=text)
    assert ground(a, make_commit(), "en").summary == text


def test_allowed_text_counts_as_evidence():
    a = make_analysis(importance_reason="62% of the changed lines are in source files.")
    c = make_commit()
    assert ground(a, c, "en").importance_reason == label("en", "unknown")
    assert ground(a, c, "en", allowed_text="62% of lines in source").importance_reason == a.importance_reason


def test_emptied_fields_become_unknown():
    a = make_analysis(
        summary="Gives a 35% speedup.",
        risks=["Breaks vllm/foo.py", "May regress v9.9.9 users"],
        insights={"performance": "2.5x faster.", "security": ""},
    )
    out = ground(a, make_commit(), "zh")
    unknown = label("zh", "unknown")
    assert out.summary == unknown
    assert out.risks == [unknown]
    assert out.insights == {"performance": unknown, "security": unknown}
    assert out.notes[-1].startswith("事实核查：删除了 4 处")


def test_empty_lists_stay_empty():
    a = make_analysis(risks=[], scope=[])
    out = ground(a, make_commit(), "en")
    assert out.risks == [] and out.scope == []


def test_mentions_trailers_and_emails_are_neutralised():
    a = make_analysis(
        summary="Ping @everyone and <!channel> now. Contact bob@example.com.",
        recommendations=["Tell @here", "Signed-off-by: Bob <bob@example.com>"],
    )
    out = ground(a, make_commit(), "en")
    assert "@everyone" not in out.summary and f"@{ZWSP}everyone" in out.summary
    assert "<!channel>" not in out.summary and "bob@example.com" not in out.summary
    assert out.recommendations == [f"Tell @{ZWSP}here"]  # the copied trailer is gone


def test_notes_are_kept_and_one_is_appended():
    a = make_analysis(summary="Uses foo/bar.py.", notes=["covered 2 of 3 files"])
    out = ground(a, make_commit(), "en")
    assert out.notes[0] == "covered 2 of 3 files" and len(out.notes) == 2


# --- change type ------------------------------------------------------------------------------


def commit_titled(title: str) -> Commit:
    return Commit("o/r", "a" * 40, title + "\n\nbody", "A", WHEN)


@pytest.mark.parametrize(
    ("title", "proposed", "expected"),
    [
        ("[Bugfix] Fix broken GLM-OCR init (#33350)", ChangeType.REFACTOR, ChangeType.BUGFIX),
        ("[BugFix] Fix x", ChangeType.FEATURE, ChangeType.BUGFIX),
        ("[Bugfix] Fix token leak", ChangeType.SECURITY, ChangeType.SECURITY),  # a refinement stays
        ('Revert "[Perf] Faster MoE (#1)" (#2)', ChangeType.PERFORMANCE, ChangeType.REVERT),
        ("[Bugfix] Revert the cache change", ChangeType.BUGFIX, ChangeType.REVERT),
        ("fix(api)!: reject empty prompts", ChangeType.FEATURE, ChangeType.BUGFIX),
        ("feat: add Qwen3-ASR", ChangeType.OTHER, ChangeType.FEATURE),
        ("docs: typo", ChangeType.BUGFIX, ChangeType.DOCS),
        ("chore(deps): bump torch", ChangeType.FEATURE, ChangeType.DEPENDENCY),
        ("[CI/Build][Bugfix] Fix wheel build", ChangeType.REFACTOR, ChangeType.BUGFIX),
        ("[CI/Build][Bugfix] Fix wheel build", ChangeType.CI_BUILD, ChangeType.CI_BUILD),
        ("[Doc] Fix typos", ChangeType.BUGFIX, ChangeType.DOCS),
        ("[Misc] Tidy things", ChangeType.REFACTOR, ChangeType.REFACTOR),  # no type stated: model wins
        ("[Model] Add Foo", ChangeType.FEATURE, ChangeType.FEATURE),
        ("Speed up the scheduler", ChangeType.PERFORMANCE, ChangeType.PERFORMANCE),
    ],
)
def test_title_tag_wins_over_the_model(title, proposed, expected):
    assert consistent_change_type(commit_titled(title), proposed) == expected


def test_title_change_types():
    assert title_change_types("[Perf][Kernel] x") == [ChangeType.PERFORMANCE]
    assert title_change_types("[Doc/Test] x") == [ChangeType.DOCS, ChangeType.TESTS]
    assert title_change_types("plain title") == []
    # gitmoji state a type as a conventional prefix does (a web framework's convention)
    assert title_change_types("✨ Add support for models in Form parameters (#12129)") == [ChangeType.FEATURE]
    assert title_change_types(":bug: Fix nested models") == [ChangeType.BUGFIX]
    assert title_change_types("⬆️ Upgrade Starlette (#126)") == [ChangeType.DEPENDENCY]
    assert title_change_types("🍱 Update assets") == []  # not one that states a type
    assert title_change_types('⏪️ Revert "✨ Add X (#12)" (#13)') == [ChangeType.REVERT]
    # a declared "no functional change" (a compiler project's `NFC`) states a refactor, whatever the first word
    assert title_change_types("[X86] Fix a build warning (NFC)") == [ChangeType.REFACTOR]
    assert title_change_types("[mlir][NFC] Add a helper") == [ChangeType.REFACTOR]
    assert consistent_change_type(commit_titled("[X86] Fix a build warning (NFC)"), ChangeType.BUGFIX) == (
        ChangeType.REFACTOR
    )
    assert consistent_change_type(commit_titled("📝 Update docs for Query (#125)"), ChangeType.FEATURE) == (
        ChangeType.DOCS
    )


def _assessed(title: str, *files: FileChange, **kw):
    from analysis.heuristic import assess

    commit = Commit("o/r", "e" * 40, title, "A", WHEN, files=files, **kw)
    return commit, assess(commit)


SOURCE = FileChange("src/kit/loader.py", "modified", 12, 3, None)
DOCS = FileChange("docs/loader.md", "modified", 20, 2, None)
LOCK = FileChange("uv.lock", "modified", 9, 9, None)
MANIFEST = FileChange("pyproject.toml", "modified", 1, 1, None)


# a real 1.5B model's types on commits without a title tag: the facts settle each, or leave it to the model
@pytest.mark.parametrize(
    ("title", "files", "proposed", "expected"),
    [
        ("Drop support for Python 3.9 (#12)", (SOURCE,), ChangeType.REVERT, ChangeType.REFACTOR),
        ("Fix `SecretStr` equality with non-ASCII values", (SOURCE,), ChangeType.REFACTOR, ChangeType.BUGFIX),
        ("Bump `click` from 8.1 to 8.2", (LOCK, MANIFEST), ChangeType.SECURITY, ChangeType.DEPENDENCY),
        ("Explain the loader", (DOCS,), ChangeType.FEATURE, ChangeType.DOCS),
        ("Fix the token check", (SOURCE,), ChangeType.SECURITY, ChangeType.SECURITY),
        ("Improve the loader", (SOURCE,), ChangeType.PERFORMANCE, ChangeType.PERFORMANCE),
        ("Improve the loader", (SOURCE,), ChangeType.REVERT, ChangeType.OTHER),
    ],
)
def test_the_facts_settle_a_type_the_model_reads_otherwise(title, files, proposed, expected):
    commit, rules = _assessed(title, *files)
    assert consistent_change_type(commit, proposed, rules) == expected
    assert consistent_change_type(commit, proposed) == proposed  # without the rules, only a title decides


def test_a_refactor_that_changes_what_users_get_takes_the_rules_type():
    from analysis.models import SurfaceChange, SurfaceKind

    path = "src/kit/config.py"
    flipped = SurfaceChange(
        SurfaceKind.DEFAULT_CHANGED, "kit.Config.async_mode", path, 9, old="False", new="None"
    )
    commit, rules = _assessed(
        "Enable async mode by default",
        FileChange(path, "modified", 4, 2, None),
        surface=(flipped,),
        shipped=frozenset({path}),
    )
    assert rules.judgment.impact >= 2 and rules.change == ChangeType.FEATURE
    assert consistent_change_type(commit, ChangeType.REFACTOR, rules) == ChangeType.FEATURE
    assert (
        consistent_change_type(commit, ChangeType.CONFIG, rules) == ChangeType.CONFIG
    )  # a reading, not a denial
