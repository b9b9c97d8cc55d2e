"""Environment variables and command-line options of native, Go, Rust, JavaScript and TableGen sources, in the
shapes their libraries are written in (LLVM's CommandLine, gflags, Abseil, MLIR TableGen, Go's flag and cobra,
clap, commander and yargs), and how a commit reads them."""

from __future__ import annotations

from datetime import UTC, datetime

from analysis.models import Commit, FileChange
from analysis.models import SurfaceKind as K
from analysis.surface.commit import FileVersions, commit_surface, wanted
from analysis.surface.native_knobs import knob_surface, mentions_knobs, read_knobs


def facts(path: str, before: str | None, after: str | None) -> set[tuple]:
    return {(c.kind, c.name, c.old, c.new, c.aliased) for c in knob_surface(path, before, after).changes}


LLVM_BEFORE = """\
#include "llvm/Support/CommandLine.h"

static llvm::cl::opt<bool> EnableLoopFusion(
    "enable-loop-fusion", llvm::cl::desc("Fuse adjacent loops"),
    llvm::cl::init(false));
static cl::opt<unsigned> UnrollCount("unroll-count", cl::desc("Unroll factor"), cl::init(4));
static cl::list<std::string> PassNames("passes", cl::desc("Passes to run"), cl::CommaSeparated);
"""


def test_llvm_options_flipped_renamed_and_removed():
    after = """\
#include "llvm/Support/CommandLine.h"

static llvm::cl::opt<bool> EnableLoopFusion(
    "enable-loop-fusion", llvm::cl::desc("Fuse adjacent loops"),
    llvm::cl::init(true));
static cl::opt<unsigned> UnrollCount("unroll-factor", cl::desc("Unroll factor"), cl::init(4));
"""
    assert facts("lib/Transforms/Fusion.cpp", LLVM_BEFORE, after) == {
        (K.SWITCH_FLIPPED, "--enable-loop-fusion", "false", "true", False),
        (K.OPTION_RENAMED, "--unroll-factor", "--unroll-count", "--unroll-factor", False),
        (K.OPTION_REMOVED, "--passes", None, None, False),
    }


def test_the_same_default_retyped_and_comments_are_no_change():
    after = LLVM_BEFORE.replace("cl::init(4)", "cl::init(4u)").replace("init(false)", "init( false )")
    after += '// static cl::opt<bool> Old("old-flag", cl::init(true));\n/* getenv("COMMENTED_OUT") */\n'
    assert facts("lib/Fusion.cpp", LLVM_BEFORE, after) == set()


def test_gflags_and_abseil_flags_with_defaults():
    before = (
        'DEFINE_int32(max_batch, 32, "Largest batch");\nABSL_FLAG(std::string, log_dir, "/tmp", "Logs");\n'
    )
    after = (
        'DEFINE_int32(max_batch, 64, "Largest batch");\nABSL_FLAG(std::string, log_dir, "/tmp", "Logs");\n'
        'ABSL_FLAG(bool, use_cache, true, "Cache compiled kernels");\n'
    )
    assert facts("src/main.cc", before, after) == {
        (K.DEFAULT_CHANGED, "--max_batch", "32", "64", False),
        (K.OPTION_ADDED, "--use_cache", None, None, False),
    }


def test_tablegen_pass_options():
    before = (
        'def Canonicalize : Pass<"canonicalize"> {\n  let options = [\n'
        '    Option<"topDown", "top-down", "bool", /*default=*/"true", "Seed the worklist in order">,\n'
        '    ListOption<"disabledPatterns", "disable-patterns", "std::string", "Labels of patterns">\n  ];\n}\n'
    )
    after = before.replace('/*default=*/"true"', '/*default=*/"false"').replace("disable-patterns", "skip")
    assert facts("include/Transforms/Passes.td", before, after) == {
        (K.DEFAULT_CHANGED, "--top-down", "true", "false", False),  # the C++ value, not its TableGen string
        (K.OPTION_RENAMED, "--skip", "--disable-patterns", "--skip", False),
    }
    numeric = 'Option<"maxIterations", "max-iterations", "int64_t", /*default=*/"10", "max iterations">'
    assert facts("Passes.td", numeric, numeric.replace('"10"', '"20"')) == {
        (K.DEFAULT_CHANGED, "--max-iterations", "10", "20", False)
    }


def test_go_flag_and_cobra_flags():
    before = """\
package main

import "flag"

var addr = flag.String("listen", ":8080", "address to serve on")

func init() {
	rootCmd.Flags().IntVarP(&workers, "workers", "w", 4, "worker count")
	rootCmd.PersistentFlags().BoolVar(&verbose, "verbose", false, "chatty logs")
}
"""
    after = before.replace('":8080"', '":9090"').replace('"verbose", false', '"debug", false')
    assert facts("cmd/server/main.go", before, after) == {
        (K.DEFAULT_CHANGED, "--listen", '":8080"', '":9090"', False),
        (K.OPTION_RENAMED, "--debug", "--verbose", "--debug", False),
    }


def test_clap_derive_and_builder():
    before = """\
#[derive(Parser)]
struct Cli {
    /// Emit debug info
    #[arg(long, default_value_t = false)]
    debug_info: bool,
    #[arg(short, long = "opt-level", default_value = "2")]
    opt_level: String,
    #[arg(short)]
    quiet: bool,
}
fn cmd() -> Command { Command::new("c").arg(Arg::new("target").long("target")) }
"""
    after = before.replace('default_value = "2"', 'default_value = "3"').replace('.long("target")', "")
    assert facts("src/cli.rs", before, after) == {
        (K.DEFAULT_CHANGED, "--opt-level", '"2"', '"3"', False),
        (K.OPTION_REMOVED, "--target", None, None, True),  # "target" stays, as the argument's id
    }
    assert set(read_knobs(before, "src/cli.rs").options) == {"--debug-info", "--opt-level", "--target"}


def test_commander_and_yargs_options():
    before = "program\n  .option('-p, --port <number>', 'port to serve on', '3000')\n  .requiredOption('--config <path>', 'config');\nyargs.option('watch', { type: 'boolean' });\n"
    after = before.replace("'3000'", "'8080'")
    assert facts("src/cli.ts", before, after) == {(K.DEFAULT_CHANGED, "--port", "'3000'", "'8080'", False)}
    assert set(read_knobs(before, "src/cli.ts").options) == {"--port", "--config", "--watch"}


def test_environment_variables_in_every_language():
    cases = {
        "src/runtime.cpp": (
            'const char* v = std::getenv("KIT_CACHE_DIR");',
            'bool b = getBoolEnv("KIT_DEBUG");',
        ),
        "src/config.rs": ('let v = std::env::var("KIT_CACHE_DIR");', 'let b = option_env!("KIT_DEBUG");'),
        "pkg/config.go": ('v := os.Getenv("KIT_CACHE_DIR")', 'b, ok := os.LookupEnv("KIT_DEBUG")'),
        "src/config.ts": ("const v = process.env.KIT_CACHE_DIR;", 'const b = process.env["KIT_DEBUG"];'),
    }
    for path, (before, after) in cases.items():
        assert facts(path, before, after) == {
            (K.ENV_RENAMED, "KIT_DEBUG", "KIT_CACHE_DIR", "KIT_DEBUG", False)
        }
        assert facts(path, before, before + "\n" + after) == {(K.ENV_ADDED, "KIT_DEBUG", None, None, False)}


def test_what_cargo_sets_for_a_crate_is_not_a_users_knob():
    build = 'fn main() {\n    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap();\n    let out = env::var("OUT_DIR");\n}\n'
    assert facts("build.rs", "fn main() {}\n", build) == set()
    version = 'const V: &str = env!("CARGO_PKG_VERSION");\nlet t = std::env::var("KIT_THREADS");\n'
    assert facts("src/main.rs", "", version) == {(K.ENV_ADDED, "KIT_THREADS", None, None, False)}


def test_setting_a_variable_is_not_reading_one_and_a_name_still_quoted_is_kept():
    assert facts("src/a.cc", "", 'setenv("KIT_HOME", dir, 1);\nunsetenv("KIT_TMP");') == set()
    before = 'auto a = getenv("KIT_OLD_NAME");\nauto b = getenv("KIT_OTHER");\n'
    after = 'auto b = getenv("KIT_OTHER");\nconst char* kRenamed[][2] = {{"KIT_OLD_NAME", "KIT_OTHER"}};\n'
    assert facts("src/a.cc", before, after) == set()  # still named as a string: a table of aliases
    assert facts("src/a.cc", before, 'auto b = getenv("KIT_OTHER");\n') == {
        (K.ENV_REMOVED, "KIT_OLD_NAME", None, None, False)
    }


def test_lines_are_where_the_knob_is():
    found = knob_surface("lib/a.cpp", "int x;\n", 'int x;\n\nauto v = getenv("KIT_LEVEL");\n').changes
    assert [(c.name, c.line) for c in found] == [("KIT_LEVEL", 3)]


def test_a_source_diff_without_a_knob_word_is_not_read():
    assert mentions_knobs('@@ -1 +1 @@\n-x = getenv("A_B")\n+x = 1\n')
    assert not mentions_knobs("@@ -1 +1 @@\n-int x = 1;\n+int x = 2;\n getenv in context only\n")
    commit = Commit(
        repo="o/r",
        sha="b" * 40,
        message="m",
        author="a",
        committed_at=datetime(2026, 1, 1, tzinfo=UTC),
        parents=("a" * 40,),
        files=(
            FileChange("lib/a.cpp", "modified", 1, 1, patch="@@ -1 +1 @@\n-int x = 1;\n+int x = 2;\n"),
            FileChange("lib/b.cpp", "modified", 1, 0, patch='@@ -1 +1,2 @@\n+auto v = getenv("KIT_X");\n'),
            FileChange("lib/c.cu", "modified", 1, 0, patch=None),
        ),
    )
    assert [f.path for f in wanted(commit)] == ["lib/b.cpp"]


def test_a_commit_moving_a_variable_between_files_changes_nothing_for_users():
    files = [
        FileVersions("src/a.cc", 'auto v = getenv("KIT_LEVEL");\n', "int a;\n"),
        FileVersions("src/b.cc", "int b;\n", 'auto v = getenv("KIT_LEVEL");\nauto w = getenv("KIT_NEW");\n'),
    ]
    assert {(c.kind, c.name) for c in commit_surface(files, None, None)} == {(K.ENV_ADDED, "KIT_NEW")}


def test_header_api_and_knobs_together_and_go_internal_flags():
    header = FileVersions(
        "include/kit/kit.h",
        "int kit_open(const char *path);\n",
        'int kit_open(const char *path);\ninline bool kit_debug() { return getenv("KIT_DEBUG") != nullptr; }\n',
    )
    internal = FileVersions(
        "internal/cli/flags.go",
        'package cli\nvar n = flag.Int("jobs", 1, "parallel jobs")\n',
        'package cli\nvar n = flag.Int("jobs", 8, "parallel jobs")\n',
    )
    found = {(c.kind, c.name) for c in commit_surface([header, internal], None, None)}
    assert found == {(K.ADDED, "kit_debug"), (K.ENV_ADDED, "KIT_DEBUG"), (K.DEFAULT_CHANGED, "--jobs")}


def test_a_clap_attribute_holding_brackets_still_names_its_field():
    text = '#[derive(Parser)]\nstruct Cli {\n    #[arg(long, value_parser = ["fast", "slow"])]\n    #[serde(rename = "x]")]\n    mode: String,\n    #[arg(long)]\n    verbose: bool,\n}\n'
    assert set(read_knobs(text, "src/cli.rs").options) == {"--mode", "--verbose"}


def test_declarations_are_read_once_and_at_most_so_many_per_file(monkeypatch):
    from analysis.surface import source_calls

    # an opening repeated inside the arguments of the one before it is part of them, not a declaration
    nested = 'static cl::opt<bool> A("outer", cl::desc(wrap(cl::opt<int> B("inner"))), cl::init(true));\n'
    assert set(read_knobs(nested, "lib/a.cpp").options) == {"--outer"}
    monkeypatch.setattr(source_calls, "MAX_DECLARATIONS", 3)
    many = "".join(f'DEFINE_bool(flag_{i}, false, "x");\n' for i in range(10))
    assert set(read_knobs(many, "src/flags.cc").options) == {"--flag_0", "--flag_1", "--flag_2"}


def test_a_file_that_drops_a_variable_another_file_now_reads_renames_nothing():
    # a.cc stops reading KIT_LEVEL and starts reading KIT_NEW; b.cc reads KIT_LEVEL now: it moved, KIT_NEW is new
    files = [
        FileVersions("src/a.cc", 'auto v = getenv("KIT_LEVEL");\n', 'auto v = getenv("KIT_NEW");\n'),
        FileVersions("src/b.cc", "int b;\n", 'auto v = getenv("KIT_LEVEL");\n'),
    ]
    assert {(c.kind, c.name, c.old) for c in commit_surface(files, None, None)} == {
        (K.ENV_ADDED, "KIT_NEW", None)
    }


def test_a_default_on_its_own_line_of_a_declaration_is_read():
    # "Lower the prologue load bound to 8": only `llvm::cl::init(16));` → `(8));` changed, under its
    # cl::opt in the hunk's context; the diff was not read ("no user-facing change found")
    before = (
        "static llvm::cl::opt<unsigned> maxPrologueLoads(\n"
        '    "tile-pipeline-max-prologue-loads",\n'
        '    llvm::cl::desc("Upper bound on loads hoisted into the pipeline prologue"),\n'
        "    llvm::cl::init(16));\n"
    )
    after = before.replace("init(16)", "init(8)")
    patch = (
        "@@ -9,4 +9,4 @@\n static llvm::cl::opt<unsigned> maxPrologueLoads(\n"
        '     "tile-pipeline-max-prologue-loads",\n'
        '     llvm::cl::desc("Upper bound on loads hoisted into the pipeline prologue"),\n'
        "-    llvm::cl::init(16));\n+    llvm::cl::init(8));\n"
    )
    assert mentions_knobs(patch)
    assert facts("lib/Transforms/Pipeline.cpp", before, after) == {
        (K.DEFAULT_CHANGED, "--tile-pipeline-max-prologue-loads", "16", "8", False)
    }
    # a declaration far above the changed line, or in another hunk, does not make it worth reading
    far = "@@ -1,6 +1,6 @@\n static cl::opt<int> A(\n x\n y\n z\n w\n-int q = 1;\n+int q = 2;\n"
    assert not mentions_knobs(far)
    assert not mentions_knobs(
        "@@ -1,1 +1,1 @@\n static cl::opt<int> A(\n@@ -9 +9 @@\n-int q = 1;\n+int q = 2;\n"
    )


PASSES_TD = """\
include "mlir/Pass/PassBase.td"

def TileCombineOps : Pass<"tile-combine", "mlir::ModuleOp"> {
  let summary = "Combine tile operations";
}

def TilePipeline : Pass<"tile-pipeline", "mlir::ModuleOp"> {
  let options = [
    Option<"numStages", "num-stages", "int32_t", /*default*/"3", "number of pipeline stages">
  ];
}
"""


def test_tablegen_passes_are_flags_and_operations_are_names():
    # "Remove the tile-combine pass": `-tile-combine` on the opt tool's command line went, unnamed
    removed = PASSES_TD.replace(
        'def TileCombineOps : Pass<"tile-combine", "mlir::ModuleOp"> {\n  let summary = "Combine tile operations";\n}\n',
        "",
    )
    assert facts("include/c/Transforms/Passes.td", PASSES_TD, removed) == {
        (K.OPTION_REMOVED, "--tile-combine", None, None, False)
    }
    # a pass removed while another pass gains an option is no rename of one into the other
    both = removed.replace(
        '"number of pipeline stages">',
        '"number of pipeline stages">,\n    Option<"depth", "depth", "int32_t", "1", "d">',
    )
    assert facts("include/c/Transforms/Passes.td", PASSES_TD, both) == {
        (K.OPTION_REMOVED, "--tile-combine", None, None, False),
        (K.OPTION_ADDED, "--depth", None, None, False),
    }
    # "[IR] Add tile.assume": a new operation of the dialect ranked low
    ops = 'class Tile_Op<string mnemonic> : Op<Tile_Dialect, mnemonic>;\n\ndef Tile_LoadOp : Tile_Op<"load", [Pure]> {\n}\n'
    added = (
        ops
        + '\n// def Tile_OldOp : Tile_Op<"old">;\ndef Tile_AssumeOp : Tile_Op<"assume", []> {\n  let arguments = (ins I1:$cond);\n}\n'
    )
    assert {(c.kind, c.name, c.line) for c in knob_surface("include/c/TileOps.td", ops, added).changes} == {
        (K.ADDED, "Tile_AssumeOp", 7)
    }
    assert {(c.kind, c.name) for c in knob_surface("include/c/TileOps.td", added, ops).changes} == {
        (K.REMOVED, "Tile_AssumeOp")
    }
    # C++ naming an operation's class is no definition
    assert (
        knob_surface(
            "lib/Ops.cpp", "", 'def X : Tile_Op<"x">;\nauto op = b.create<tile::AssumeOp>(l);\n'
        ).changes
        == []
    )


CMAKE = """\
cmake_minimum_required(VERSION 3.20)
project(Brick VERSION 3.2.0 LANGUAGES CXX)

option(BRICK_ENABLE_ASSERTIONS "Enable assertions" OFF)
option(BRICK_BUILD_TOOLS "Build the tools" ON)
option(BRICK_ENABLE_LTO "Link-time optimisation")
cmake_dependent_option(BRICK_USE_LLD "Link with lld" ON "BRICK_BUILD_TOOLS" OFF)
set(BRICK_DEFAULT_TARGET "x86_64" CACHE STRING "Default target triple")
set(BRICK_SEEN TRUE CACHE INTERNAL "")
# option(BRICK_OLD "commented out" ON)
set(BRICK_SOURCES a.cpp b.cpp)
"""


def test_cmake_and_meson_build_options():
    # a compiler built from source: `-DBRICK_ENABLE_LTO` removed, a default flipped, a cache option added;
    # each ranked low ("no user-facing change found"), though every packager's build command passes them
    assert set(read_knobs(CMAKE, "CMakeLists.txt").options) == {
        "-DBRICK_ENABLE_ASSERTIONS", "-DBRICK_BUILD_TOOLS", "-DBRICK_ENABLE_LTO", "-DBRICK_USE_LLD",
        "-DBRICK_DEFAULT_TARGET",
    }  # fmt: skip
    after = (
        CMAKE.replace('"Enable assertions" OFF', '"Enable assertions" TRUE')
        .replace('option(BRICK_ENABLE_LTO "Link-time optimisation")\n', "")
        .replace('"x86_64" CACHE', '"aarch64" CACHE')
    )
    assert {(k, n, o, v) for k, n, o, v, _ in facts("CMakeLists.txt", CMAKE, after)} == {
        (K.SWITCH_FLIPPED, "-DBRICK_ENABLE_ASSERTIONS", "OFF", "ON"),
        (K.OPTION_REMOVED, "-DBRICK_ENABLE_LTO", None, None),
        (K.DEFAULT_CHANGED, "-DBRICK_DEFAULT_TARGET", "x86_64", "aarch64"),
    }
    added = CMAKE.replace(
        "set(BRICK_SOURCES", 'set(BRICK_SANITIZER "" CACHE STRING "Sanitizer")\nset(BRICK_SOURCES'
    )
    assert {(k, n) for k, n, *_ in facts("CMakeLists.txt", CMAKE, added)} == {
        (K.OPTION_ADDED, "-DBRICK_SANITIZER")
    }
    # OFF retyped as FALSE is the same value
    assert facts("cmake/Options.cmake", CMAKE, CMAKE.replace('assertions" OFF', 'assertions" FALSE')) == set()
    meson = "option('tests', type : 'boolean', value : true)\noption('backend', type : 'combo', choices : ['a', 'b'], value : 'a')\n"
    assert {
        (k, n, o, v) for k, n, o, v, _ in facts("meson_options.txt", meson, meson.replace("'a')", "'b')"))
    } == {(K.DEFAULT_CHANGED, "-Dbackend", "a", "b")}


def test_a_build_option_is_read_only_where_a_python_distribution_does_not_own_the_build():
    commit = Commit(
        repo="o/r", sha="c" * 40, message="[CMake] Remove BRICK_ENABLE_LTO (#304)", author="a",
        committed_at=datetime(2026, 4, 1, tzinfo=UTC), parents=("a" * 40,),
        files=(FileChange("CMakeLists.txt", "modified", 0, 1, patch='@@ -6 +6 @@\n-option(BRICK_ENABLE_LTO "x" OFF)\n'),
               FileChange("cmake/Util.cmake", "modified", 1, 1, patch="@@ -1 +1 @@\n-set(A 1)\n+set(A 2)\n")),
    )  # fmt: skip
    assert [f.path for f in wanted(commit)] == ["CMakeLists.txt"]  # no option word, no read
    files = [
        FileVersions(
            "CMakeLists.txt", CMAKE, CMAKE.replace('option(BRICK_ENABLE_LTO "Link-time optimisation")\n', "")
        )
    ]
    assert {(c.kind, c.name) for c in commit_surface(files, None, None)} == {
        (K.OPTION_REMOVED, "-DBRICK_ENABLE_LTO")
    }
    from analysis.surface.packaging import read_packaging

    python = read_packaging(
        {
            "pyproject.toml": '[build-system]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "engine"\n'
        },
        ["pyproject.toml", "engine/__init__.py", "CMakeLists.txt"],
    )
    assert commit_surface(files, python, None) == ()
