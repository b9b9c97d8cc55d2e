"""Model text that repeats our instructions or itself is tidied, whatever the model."""

import pytest

from analysis.llm.echo import is_echo, shingles, shingles_with, tidy
from analysis.llm.prompts import commit_system
from analysis.models import Analysis, ChangeType, Importance


def instructions(lang):
    return commit_system(lang)


def analysis(**fields):
    base = {"sha": "a" * 40, "importance": Importance.MEDIUM, "importance_reason": "r", "change_type": ChangeType.FEATURE,
            "summary": "s"}  # fmt: skip
    return Analysis(**{**base, **fields})


def test_echoed_field_descriptions_are_removed_and_enumerations_split_zh():
    a = analysis(
        importance_reason="在有限范围内的实际修复、功能或优化，或可能引发问题的内部重构。",
        recommendations=[
            "评审者和运维人员应检查或采取的行动包括：1. 确认解析器配置；2. 检查文件系统解析器；3. 运行相关测试。",
            "评审者、运维人员或用户应检查或采取的行动，一到四项。",
        ],
    )
    out = tidy(a, instructions("zh"), "zh", reason_fallback="共 289 行变更（规模先验：中）")
    assert out.recommendations == ["确认解析器配置", "检查文件系统解析器", "运行相关测试。"]
    assert out.importance_reason == "共 289 行变更（规模先验：中）"  # our own stated prior, not "unknown"
    assert out.notes and "整理" in out.notes[-1]


def test_repeated_sentences_and_items_are_kept_once():
    a = analysis(
        summary="Adds a resolver for adapters. Adds a resolver for adapters. It reads the hub.",
        scope=["vllm/lora/resolver.py", "vllm/lora/resolver.py", "docs"],
    )
    out = tidy(a, instructions("en"), "en")
    assert out.summary == "Adds a resolver for adapters. It reads the hub."
    assert out.scope == ["vllm/lora/resolver.py", "docs"]


def test_an_echoed_lead_in_leaves_the_content_and_capitalises_it():
    a = analysis(summary="What reviewers, operators or users should check or do: run the LoRA tests.")
    assert tidy(a, instructions("en"), "en").summary == "Run the LoRA tests."


@pytest.mark.parametrize(
    "text",
    [
        "Reviewers should check that the resolver handles private repositories.",
        "This change could break older checkpoints that lack the scale tensors.",
        "检查配置加载逻辑是否兼容旧版本的检查点。",
        "可能影响到多模态 UUID 的匹配和处理，导致数据不一致或错误。",
    ],
)
def test_ordinary_analysis_text_is_left_alone(text):
    known = shingles(instructions("en") + instructions("zh"))
    assert not is_echo(text, known)
    a = analysis(summary=text, risks=[text])
    out = tidy(a, instructions("en") + instructions("zh"), "en")
    assert out.summary == text and out.risks == [text] and out.notes == []


def test_numbers_that_do_not_enumerate_stay_in_one_item():
    a = analysis(recommendations=["Upgrade to 2. then 3. as the release notes say"])
    assert tidy(a, instructions("en"), "en").recommendations == a.recommendations


def test_a_list_of_nothing_but_echoes_reads_unknown_not_none():
    a = analysis(recommendations=["评审者、运维人员或用户应检查或采取的行动，一到四项。"])
    assert tidy(a, instructions("zh"), "zh").recommendations == ["未知"]
    assert tidy(analysis(), instructions("zh"), "zh").recommendations == []  # nothing given stays nothing


def test_an_item_that_is_only_a_fields_name_is_dropped():
    # A real 1.5B model's risks list for a high card: ["risk"].
    out = tidy(
        analysis(risks=["risk"], recommendations=["建议", "Run the dataclass tests."]),
        instructions("en"),
        "en",
    )
    assert out.risks == ["Unknown"] and out.recommendations == ["Run the dataclass tests."]


def test_one_sentence_under_every_insight_is_kept_once():
    same = "Adds a new model architecture that must meet performance and safety expectations."
    a = analysis(insights={"architecture": same, "performance": same, "security": "Loads no remote code."})
    out = tidy(a, instructions("en"), "en")
    assert out.insights == {
        "architecture": same,
        "performance": "Unknown",
        "security": "Loads no remote code.",
    }


def test_one_sentence_with_each_dimension_swapped_in_is_kept_once():
    # A real 1.5B model's table for a dataclass refactor: one template, the dimension's name swapped in.
    template = (
        "The refactoring changes the {} of the dataclass fields, which could impact the {} of the code."
    )
    rows = {
        "architecture": template.format("structure", "performance and maintainability"),
        "performance": template.format("behavior", "performance"),
        "security": template.format("behavior", "security"),
        "maintainability": template.format("structure", "maintainability"),
        "compatibility": template.format("behavior", "compatibility"),
        "resources": "The refactoring changes the behavior of the dataclass fields, which could impact the resources used by the code.",
    }  # fmt: skip
    out = tidy(analysis(insights=rows), instructions("en"), "en")
    assert out.insights == {**{k: "Unknown" for k in rows}, "architecture": rows["architecture"]}
    assert "removed 5" in out.notes[-1]


def test_a_zh_template_row_is_kept_once_and_distinct_rows_stay():
    rows = {
        "architecture": "该提交重构了数据类字段的生成逻辑，可能影响代码的架构。",
        "performance": "该提交重构了数据类字段的生成逻辑，可能影响代码的性能。",
        "security": "该提交重构了数据类字段的生成逻辑，可能影响代码的安全性。",
        "maintainability": "新增的缓存减少了重复计算，但增加了失效路径。",
        "compatibility": "删除了公开函数 `foo`，调用方需要改用 `bar`。",
    }
    out = tidy(analysis(insights=rows), instructions("zh"), "zh")
    assert out.insights == {**rows, "performance": "未知", "security": "未知"}


def test_rows_that_say_different_things_are_all_kept():
    rows = {
        "architecture": "Moves the scheduler's queue into its own module; callers import it from the new path.",
        "performance": "Batches the cache lookups, so a step does one lookup instead of one per request.",
        "security": "No new input is parsed; nothing security-relevant changes.",
        "maintainability": "The queue logic is now in one place and tested on its own.",
        "compatibility": "The old import path still works through an alias.",
        "resources": "Memory use is unchanged.",
    }
    out = tidy(analysis(insights=rows), instructions("en"), "en")
    assert out.insights == rows and not out.notes


def test_our_coverage_note_copied_into_a_reason_is_removed():
    note = "covered 3 of 14 files (11 left out — over the length budget: pkg/a.py, pkg/b.py and 9 more)"
    a = analysis(importance_reason=f"Adds a model in 14 files; {note}.")
    out = tidy(a, instructions("en") + "\n" + note, "en")
    assert out.importance_reason == "Adds a model in 14 files."


def test_a_short_tail_of_our_words_goes_with_the_echo_beside_it_and_the_models_own_stays():
    scoring = "risk (low): 12 changed lines in 1 files (size prior: low); decided by impact"
    a = analysis(risks=[scoring, "Callers of the old loader break; see notes"])
    out = tidy(a, instructions("en"), "en", extra=scoring)
    # "see notes" is short too, but it is no run of our words and nothing beside it was an echo
    assert out.risks == ["Callers of the old loader break; see notes"]
    kept = tidy(analysis(risks=["risk (low): 12 changed lines in 1 files; a private hub"]), instructions("en"), "en",
                extra=scoring)  # fmt: skip
    assert kept.risks == ["A private hub"]  # a short tail that is not ours stays


def test_a_clause_is_never_cut_inside_parentheses_or_code():
    reason = "涉及 14 个文件（规模先验：高），新增 `a.py: b`，一到四项。"
    out = tidy(analysis(importance_reason=reason), instructions("zh"), "zh")
    assert out.importance_reason == "涉及 14 个文件（规模先验：高），新增 `a.py: b`。"
    assert out.importance_reason.count("（") == out.importance_reason.count("）")


def test_a_bare_lead_in_before_numbered_points_is_dropped():
    item = "评审者和运维人员应检查或采取以下行动：1. 确保修改符合预期；2. 重新运行测试"
    out = tidy(analysis(recommendations=[item]), instructions("zh"), "zh")
    assert out.recommendations == ["确保修改符合预期", "重新运行测试"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    "extra",
    [
        "",
        "covered 12 of 14 files (2 left out — lockfile: uv.lock)",
        "已覆盖 14 个文件中的 12 个",
        "ok",
        "a\nb c d e",
    ],
)
def test_shingles_with_a_note_are_those_of_the_text_with_the_note_on_its_own_line(lang, extra):
    """What the analyser checks a reply against (the instructions, then a commit's coverage note) is
    the same set as the joined text's, without tokenising the instructions for every note."""
    text = instructions(lang)
    assert shingles_with(text, extra) == shingles(text + "\n" + extra)
    assert shingles_with("two words", extra) == shingles("two words\n" + extra)


def test_a_thread_answer_made_of_the_qa_prompt_is_mostly_echo():
    from analysis.llm.echo import mostly_echo
    from analysis.llm.prompts import qa_instructions

    echoed = (
        "Answer only from the data given (the stored analysis, the commit and its diff, the day's commits). "
        "Reply in plain text of at most 150 words: no Markdown headings, no tables, no @-mentions."
    )
    assert mostly_echo(echoed, qa_instructions("en"))
    assert mostly_echo(
        "只依据给出的数据（已保存的分析、提交及其代码差异、当天的提交列表）作答。", qa_instructions("zh")
    )
    own = "The scheduler rewrite changes how preemption works; watch the p99 latency after deploying it."
    assert not mostly_echo(own, qa_instructions("en"))
    assert not mostly_echo("ok", qa_instructions("en"))
