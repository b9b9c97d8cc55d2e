"""Settings keys renamed where they are read (setting_lines.renamed_keys, the `setting_renamed` signal). Each
test is built from the shape of a plugin's settings module: hostengine's `additional_config` dict read key by key,
a nested mapping read by subscript, the environment read in a file the surface step did not parse."""

from __future__ import annotations

from analysis.heuristic import analyze, rank
from analysis.heuristic.facts import Diff
from analysis.heuristic.setting_lines import renamed_keys, setting_changes
from analysis.models import Importance
from tests.analysis.heuristic.test_heuristic import fc, make
from tests.analysis.heuristic.test_judgment import hunk

LOW, MEDIUM, HIGH = Importance.LOW, Importance.MEDIUM, Importance.HIGH


def _diff(removed: list[str], added: list[str], context: list[str] = ()) -> Diff:
    return Diff(hunk(removed, added, context), "\n".join(removed), "\n".join(added), "python")


def test_a_key_of_the_settings_dict_renamed_where_it_is_read_breaks_users() -> None:
    # the plugin renamed a key of `additional_config`: users who set the old key silently lose the setting;
    # it ranked medium as "reads new settings"
    patch = hunk(
        ['        self.expert_map_path = additional_config.get("expert_map_path", None)'],
        ['        self.expert_map_path = additional_config.get("expert_map_file", None)'],
    )
    commit = make(
        "[EPLB] Rename expert_map_path to expert_map_file (#125)", fc("nimbus/plugin_config.py", 1, 1, patch)
    )
    importance, reason = rank(commit, "en")
    assert importance == HIGH
    assert reason.startswith(
        "impact (high): renames settings without reading the old name: `expert_map_path → expert_map_file`;"
    )
    assert "reads new settings" not in reason
    a = analyze(commit, "en")
    assert any(r.startswith("Breaking change (`expert_map_path → expert_map_file`") for r in a.risks)
    assert "breaks users: `expert_map_path → expert_map_file`" in a.insights["compatibility"]
    assert analyze(commit, "zh").importance_reason.startswith("影响（高）：重命名设置项且不再读取旧名称")


def test_a_key_renamed_by_subscript_or_with_another_form_of_read_is_paired_by_its_target() -> None:
    # `config["dynamic_eplb"]` → `config["enable_dynamic_eplb"]`: the same line but for the key
    same_line = _diff(
        ['    return {"n": config["num_redundant_experts"], "dynamic": config["dynamic_eplb"]}'],
        ['    return {"n": config["num_redundant_experts"], "dynamic": config["enable_dynamic_eplb"]}'],
    )
    assert renamed_keys(same_line, any_mapping=True) == [("dynamic_eplb", "enable_dynamic_eplb")]
    # `.get` → a subscript under a membership test: the same attribute assigned from another key
    target = _diff(
        ['        self.use_cached_graph = graph_config.get("use_cached_graph", False)'],
        [
            '        self.use_cached_graph = graph_config["use_cached_kv_graph"] if "use_cached_kv_graph"'
            " in graph_config else False"
        ],
    )
    assert renamed_keys(target, any_mapping=True) == [("use_cached_graph", "use_cached_kv_graph")]
    commit = make(
        "[Refactor] Rename use_cached_graph (#110)", fc("nimbus/plugin_config.py", 1, 1, target.text)
    )
    assert rank(commit, "en")[0] == HIGH  # a refactor by its title that breaks users is judged by the break
    # the old key still read by another file of the commit: a fallback moved there, no rename
    fallback = fc("nimbus/compat.py", 1, 0, hunk([], ['    legacy = options.get("use_cached_graph")']))
    moved = make(
        "[Refactor] Rename use_cached_graph (#110)",
        fc("nimbus/plugin_config.py", 1, 1, target.text),
        fallback,
    )
    assert "renames settings" not in rank(moved, "en")[1]


def test_a_key_still_read_as_a_fallback_or_named_by_a_deprecation_is_no_rename() -> None:
    fallback = _diff(
        ['        self.mode = options.get("graph_mode", "eager")'],
        ['        self.mode = options.get("compile_mode", options.get("graph_mode", "eager"))'],
    )
    assert renamed_keys(fallback, any_mapping=False) == []
    warned = _diff(
        ['        self.mode = options.get("graph_mode", "eager")'],
        [
            '        if "graph_mode" in options:',
            '            warnings.warn("graph_mode is deprecated, use compile_mode")',
            '        self.mode = options.get("compile_mode", "eager")',
        ],
    )
    assert renamed_keys(warned, any_mapping=False) == []
    # the old key still read by an unchanged line of the patch
    elsewhere = _diff(
        ['        self.mode = options.get("graph_mode", "eager")'],
        ['        self.mode = options.get("compile_mode", "eager")'],
        ['        self.legacy = options.get("graph_mode")'],
    )
    assert renamed_keys(elsewhere, any_mapping=False) == []
    # a key only moved (read on both sides) and a new key beside an unrelated removed one
    moved = _diff(
        ['        self.a = options.get("alpha", 1)'],
        ['        alpha = options.get("alpha", 1)', '        self.beta = options.get("beta", 2)'],
    )
    assert renamed_keys(moved, any_mapping=False) == []
    assert setting_changes(moved, any_mapping=False) == ([], ["beta"])


def test_a_new_key_read_by_subscript_is_a_new_setting_and_a_written_one_is_none() -> None:
    read = _diff(
        [],
        [
            '        self.eplb = load(additional_config["eplb_config"]) if "eplb_config" in additional_config else None'
        ],
    )
    assert setting_changes(read, any_mapping=True) == ([], ["eplb_config"])
    # writing a key (or into one) reads nothing users set: a converter filling a model's config
    written = _diff(
        ['    config["rope_scaling"] = {"rope_type": "yarn"}', '    config["rope_scaling"][new] = value'],
        [
            '    config["rope_parameters"] = {"rope_type": "yarn"}',
            '    config["rope_parameters"][new] = value',
        ],
    )
    assert setting_changes(written, any_mapping=True) == ([], [])
    assert renamed_keys(written, any_mapping=True) == []
    # outside a configuration module a `config` is a model's: only options and settings mappings count
    model = hunk(['    n = config["num_layers"]'], ['    n = config["num_hidden_layers"]'])
    assert rank(make("Read layers (#3)", fc("nimbus/models/llama.py", 1, 1, model)), "en")[0] == LOW


def test_an_environment_variable_renamed_where_it_is_read_in_an_unparsed_file() -> None:
    # the surface step finds environment variables by syntax; without it, the patch lines say the same
    env = hunk(
        [
            '        if os.environ.get("NIMBUS_TRACE_DIR") is not None:',
            '            d = os.environ.get("NIMBUS_TRACE_DIR")',
        ],
        [
            '        if os.environ.get("NIMBUS_PROFILE_DIR") is not None:',
            '            d = os.environ.get("NIMBUS_PROFILE_DIR")',
        ],
    )
    importance, reason = rank(
        make("[Misc] Rename the trace dir variable (#131)", fc("nimbus/platform.py", 2, 2, env)), "en"
    )
    assert importance == HIGH and "`NIMBUS_TRACE_DIR → NIMBUS_PROFILE_DIR`" in reason
    lines = _diff(
        ['    d = os.getenv("NIMBUS_TRACE_DIR", "/tmp")'], ['    d = os.getenv("NIMBUS_PROFILE_DIR", "/tmp")']
    )
    assert renamed_keys(lines, any_mapping=False, env=True) == [("NIMBUS_TRACE_DIR", "NIMBUS_PROFILE_DIR")]
    assert renamed_keys(lines, any_mapping=False) == []  # parsed files: the surface facts state it


def test_a_key_the_settings_module_no_longer_reads_breaks_users_who_set_it() -> None:
    # "[MLA] Remove chunked_prefill_for_mla": the key's read deleted; users' value is silently ignored
    patch = hunk(
        ['        self.chunked_prefill_for_mla = additional_config.get("chunked_prefill_for_mla", False)'], []
    )
    commit = make("[MLA] Remove chunked_prefill_for_mla (#150)", fc("nimbus/plugin_config.py", 0, 1, patch))
    importance, reason = rank(commit, "en")
    assert importance == HIGH
    assert reason.startswith(
        "impact (high): stops reading settings (users' values are ignored): `chunked_prefill_for_mla`"
    )
    assert "breaks users: `chunked_prefill_for_mla`" in analyze(commit, "en").insights["compatibility"]
    # read through a helper, or by another file of the commit: still read
    helper = hunk(
        ['        self.nz = additional_config.get("enable_weight_nz_layout", False)'],
        ['        self.nz = _flag(additional_config, "enable_weight_nz_layout")'],
    )
    assert (
        rank(make("[Refactor] One helper (#151)", fc("nimbus/plugin_config.py", 1, 1, helper)), "en")[0]
        == LOW
    )
    elsewhere = fc(
        "nimbus/ops/mla.py", 1, 0, hunk([], ['    on = options.get("chunked_prefill_for_mla", False)'])
    )
    moved = make(
        "[MLA] Read it where it is used (#152)", fc("nimbus/plugin_config.py", 0, 1, patch), elsewhere
    )
    assert "stops reading" not in rank(moved, "en")[1]
    # a module deleted says so by itself; outside a configuration module a key no longer read is not stated
    deleted = fc("nimbus/plugin_config.py", 0, 1, patch, status="removed")
    assert "stops reading" not in rank(make("Remove the config (#153)", deleted), "en")[1]
    other = hunk(['    on = options.get("fast_path", False)'], [])
    assert rank(make("Simplify (#154)", fc("nimbus/ops/mla.py", 0, 1, other)), "en")[0] == LOW


def test_a_settings_mappings_reads_are_found_alike_by_the_ascii_pattern_and_the_plain_one() -> None:
    """The name read as one run of letters checked by lookbehinds finds what the plain pattern finds, on
    ASCII text; text with other characters keeps the plain pattern (case folding reads `ſ` as `s`)."""
    import random

    from analysis.heuristic.setting_lines import _MAPPING_READ, _SUBSCRIPT_READ, _mapping_reads

    rng = random.Random(7)

    def fragment() -> str:
        name = rng.choice(["config", "configs", "cfg", "conf", "options", "opts", "settings", "ion", "conf2"])
        name = "".join(c.upper() if rng.random() < 0.3 else c for c in name)
        prefix = rng.choice(["", "my_", "x", "self.", "2", "vllm_", "_"])
        read = rng.choice([".get(", " . pop( ", "[", " [ ", ".items(", "\n.get("])
        key = rng.choice(['"k"', "'a.b'", '"9"', "k"])
        return (
            prefix
            + name
            + read
            + key
            + rng.choice([", 3)", ")", "]", " ]", ""])
            + rng.choice([" ", "\n", "("])
        )

    texts = ["".join(fragment() for _ in range(40)) for _ in range(200)]
    found = 0
    for read in (_MAPPING_READ, _SUBSCRIPT_READ):
        for text in texts:
            plain = [(m.span(), m.groups()) for m in read.plain.finditer(text)]
            assert [(m.span(), m.groups()) for m in read.finditer(text)] == plain
            found += len(plain)
    assert found > 100  # the texts do read settings
    assert _mapping_reads('x = ſettings.get("a", 1)', True) == {("ſettings", "a"): ["1"]}


def test_a_rename_is_paired_past_lines_reading_no_key_and_none_is_found_when_no_removed_line_reads_one() -> (
    None
):
    renamed = _diff(
        ["        n = 1", '        self.path = options.get("old_path", None)', "        m = 2"],
        ["        n = 3", '        self.path = options.get("new_path", None)'],
    )
    assert renamed_keys(renamed, any_mapping=False) == [("old_path", "new_path")]
    only_added = _diff(["        n = 1"], ['        self.path = options.get("new_path", None)'])
    assert renamed_keys(only_added, any_mapping=False) == []
    # read without a default (no get/pop): no default changed, and the subscript read is a new key
    assert setting_changes(_diff([], ['    x = options["fresh"]']), any_mapping=False) == ([], ["fresh"])


def test_a_default_under_an_is_none_guard_is_read_only_from_patches_that_have_such_a_guard() -> None:
    from analysis.heuristic.setting_lines import _guarded_defaults

    guarded = (
        "@@ -10,3 +10,3 @@\n"
        "     if cache_config.block_size is None:\n"
        "-        cache_config.block_size = 16\n"
        "+        cache_config.block_size = 128\n"
    )
    assert _guarded_defaults(guarded) == ["cache_config.block_size: 16 → 128"]
    spaced = guarded.replace(" is None:", "  is\tNone :")  # blanks the guard's pattern allows
    assert _guarded_defaults(spaced) == ["cache_config.block_size: 16 → 128"]
    # the guard changed itself, or is not one: no line of these patches is a guard, nothing is read
    assert _guarded_defaults(guarded.replace("     if", "-    if")) == []
    assert _guarded_defaults(guarded.replace("is None", "is not None")) == []
