"""Environment variables and command-line options of C/C++/CUDA, Rust, Go, JavaScript/TypeScript and MLIR
TableGen sources: read, added, removed, renamed, and options' defaults changed; and the options of CMake and
Meson builds (build_options.py reads them).

What is read (each a convention of a widely used library or of the language itself):
- environment: `getenv("X")` and any call whose name says it reads the environment (`getBoolEnv("X")`,
  `os.Getenv`, `os.LookupEnv`, `env!`, `option_env!`), Rust's `env::var("X")`, JavaScript's `process.env.X`;
  never a call that sets one (`setenv`, `putenv`, `unsetenv`);
- options: LLVM's `cl::opt<T> V("name", ..., cl::init(v))` (and `cl::list`, `cl::bits`), gflags'
  `DEFINE_bool(name, default, ...)`, Abseil's `ABSL_FLAG(T, name, default, ...)`, MLIR TableGen's
  `Option<"var", "name", "T", "default", ...>` and a pass's own flag (`def X : Pass<"name", ...>`), Go's `flag`
  package and cobra/pflag's `Flags()`, clap's `#[arg(long)]` fields and `.long("name")`, commander's and yargs'
  `.option(...)`;
- MLIR TableGen operation definitions (`def Dialect_FooOp : Dialect_Op<"foo", ...>`), added and removed: an
  operation users write in their IR and build from C++.

Why line patterns, not syntax trees: each convention is one call, macro or attribute with literal arguments,
which a pattern reads as well as a tree would, and `.cpp`/`.cu`/`.td` files have no public API worth a parse
(other_langs.py parses headers and modules for names). Lines that start as comments are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from analysis.models import SurfaceChange, SurfaceKind
from analysis.surface.build_options import build_options, is_build_options_file
from analysis.surface.python import FileSurface
from analysis.surface.python_nodes import ENV_NAME, is_switch
from analysis.surface.source_calls import Calls, Lines, arguments, call, is_string, unquote

_SHOWN = 120  # characters of a default kept in a fact
_PASS_SHAPE = "tablegen:pass"
# Sources without a public API that tree-sitter reads (other_langs.LANGUAGES has the ones with one).
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".cu", ".td")
KNOB_SUFFIXES = (
    *SOURCE_SUFFIXES,
    ".h",
    ".hh",
    ".hpp",
    ".hxx",
    ".cuh",
    ".rs",
    ".go",
    ".js",
    ".mjs",
    ".cjs",
    ".jsx",
)
KNOB_SUFFIXES += (".ts", ".mts", ".cts", ".tsx")

# A word any of the conventions above needs on a changed line: a source file's diff without one is not read.
_HINT = re.compile(
    r"env|Env|ENV|cl::(?:opt|list|bits)|DEFINE_|ABSL_FLAG|Option\s*<|Pass\s*<|Op\s*<|flag\.|Flags\(\)"
    r"|#\[(?:arg|clap|structopt)"
    r"|\.long\(|\.(?:required)?[oO]ption\("
)
_Q = r"""(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""  # a one-line string literal, either quote
# a word then a call of a string: whether the word reads the environment is `_reads_env`'s (a pattern that
# looked for "env" inside the word backtracked over every "env" of a long one: minutes on a hostile file)
_ENV_CALL = re.compile(rf"\b(\w++)\s*+!?\s*+\(\s*[&*]?\s*(?:[LuU]8?)?({_Q})")
_RUST_ENV = re.compile(rf"\benv::var(?:_os)?\s*\(\s*({_Q})")
_JS_ENV = re.compile(rf"\bprocess\.env(?:\.([A-Za-z_]\w*)|\[\s*({_Q})\s*\])")
_LLVM = re.compile(r"\bcl::(opt|list|bits)\s*<((?:[^<>;]|<[^<>;]*>)*)>\s*\w+\s*\(")
_LLVM_INIT = re.compile(r"\bcl::init\s*\(")
_GFLAGS = re.compile(r"\bDEFINE_(bool|int32|int64|uint32|uint64|double|string)\s*\(")
_ABSL = re.compile(r"\bABSL_FLAG\s*\(")
_TABLEGEN = re.compile(r"\b(Option|ListOption)\s*<")
# MLIR TableGen: a pass's command-line flag (`def X : Pass<"tile-combine", ...>`: `-tile-combine` on the opt
# tool's command line) and an operation's definition (`def Tile_AssumeOp : Tile_Op<"assume", ...>`: a name the
# IR users write spells, and C++ users build).
_TABLEGEN_PASS = re.compile(
    r"^[ \t]*def[ \t]+\w+[ \t]*:[ \t]*(?:Interface)?Pass[ \t]*<[ \t]*(\"[^\"\n]+\")", re.M
)
_TABLEGEN_OP = re.compile(r"^[ \t]*def[ \t]+(\w+)[ \t]*:[ \t]*\w*Op[ \t]*<[ \t]*\"[\w.]+\"", re.M)
_GO = re.compile(r"(?:\bflag|\bFlags\(\)|\bPersistentFlags\(\))\.([A-Z]\w*)\s*\(")
_GO_KINDS = re.compile(
    r"(Bool|Int|Int8|Int16|Int32|Int64|Uint|Uint8|Uint16|Uint32|Uint64|String|Float32|Float64|Duration|Count"
    r"|BoolSlice|IntSlice|Int64Slice|UintSlice|StringSlice|StringArray|StringToString|StringToInt|IP|IPSlice)"
    r"(Var)?(P)?"
)
_CLAP_ATTR = re.compile(r"#\[(?:arg|clap|structopt)\s*\(")
_CLAP_FIELD = re.compile(r"(?:pub(?:\([^)]*\))?\s+)?(\w+)\s*:")
_ATTRIBUTES_SKIPPED = 16  # at most this many attributes or comments between clap's and its field
_CLAP_BUILDER = re.compile(rf"\.long\s*\(\s*({_Q})\s*\)")
_JS_OPTION = re.compile(rf"\.(?:option|requiredOption)\s*\(\s*({_Q}|`[^`\n]*`)")
_LONG_FLAG = re.compile(r"--([A-Za-z0-9][\w.-]*)")
_FLAG_NAME = re.compile(r"[A-Za-z0-9][\w.-]*")
# What Cargo itself sets for a crate's build script and compile-time `env!` (`CARGO_PKG_VERSION`, `OUT_DIR`,
# `TARGET`): read by the code, never set by its users.
_CARGO_SET = re.compile(
    r"(?:CARGO|DEP|RUSTC|RUSTDOC)_\w+|CARGO|RUSTC|RUSTDOC|OUT_DIR|TARGET|HOST|PROFILE|NUM_JOBS|OPT_LEVEL|DEBUG"
)
_SETS_ENV = ("setenv", "set_env", "putenv", "unsetenv", "clearenv", "remove_env", "removeenv")


@dataclass(slots=True)
class _Option:
    line: int
    shape: str  # the library and type: a rename keeps it
    default: str | None = None


@dataclass(slots=True)
class Knobs:
    envs: dict[str, int] = field(default_factory=dict)  # name → first line read
    options: dict[str, _Option] = field(default_factory=dict)  # "--name" → where and how declared
    ops: dict[str, int] = field(default_factory=dict)  # TableGen operation definitions: name → line


_DECLARATION_LINES = 4  # a declaration's lines before the changed one: `cl::init(8)` under its `cl::opt<...>`


def mentions_knobs(patch: str) -> bool:
    """Whether a diff's changed lines could add, remove or change a knob (a cheap test before reading): a
    changed line with a convention's word, or one of the few lines above it in its hunk with one (a default
    on its own line of a declaration spread over several: `cl::init(8));`, TableGen's `"3",`)."""
    above: list[str] = []
    for line in patch.splitlines():
        if line.startswith("@@"):
            above = []
            continue
        changed = line[:1] in "+-" and not line.startswith(("+++", "---"))
        if changed and (_HINT.search(line) or any(_HINT.search(a) for a in above)):
            return True
        above = [*above[1 - _DECLARATION_LINES :], line]
    return False


def knob_surface(path: str, before: str | None, after: str | None, *, options: bool = True) -> FileSurface:
    """The knobs one file's versions add, remove, rename or re-default (options too unless `options` is False:
    a native extension's own flags are not a command line its users type)."""
    old = read_knobs(before or "", path) if before else Knobs()
    new = read_knobs(after or "", path) if after else Knobs()
    out = list(_env_changes(path, old, new, after or ""))
    if options:
        out.extend(_option_changes(path, old, new, after or ""))
        out.extend(
            SurfaceChange(SurfaceKind.REMOVED, k, path, line)
            for k, line in old.ops.items()
            if k not in new.ops
        )
        out.extend(
            SurfaceChange(SurfaceKind.ADDED, k, path, line) for k, line in new.ops.items() if k not in old.ops
        )
    out.sort(key=lambda c: (c.line or 0, c.kind.value, c.name))
    return FileSurface(out)


def read_knobs(text: str, path: str) -> Knobs:
    knobs = Knobs()
    lines = Lines(text)
    if is_build_options_file(path):  # a build's options only: its `$ENV{X}` are the build machine's
        for name, at, shape, default in build_options(text, path):
            if not lines.commented(at):
                knobs.options.setdefault(name, _Option(lines.number(at), shape, _tidy(default)))
        return knobs
    rust = path.endswith(".rs")
    for name, at in _envs(text, path):
        if ENV_NAME.fullmatch(name) and not lines.commented(at) and not (rust and _CARGO_SET.fullmatch(name)):
            knobs.envs.setdefault(name, lines.number(at))
    for name, option in _options(text, path, lines):
        knobs.options.setdefault(name, option)
    if path.endswith(".td"):
        for m in _TABLEGEN_OP.finditer(text):
            if not lines.commented(m.start(1)):
                knobs.ops.setdefault(m.group(1), lines.number(m.start(1)))
    return knobs


def _envs(text: str, path: str) -> Iterator[tuple[str, int]]:
    for m in _ENV_CALL.finditer(text):
        function = m.group(1).lower()
        if "env" in function and _reads_env(function):
            yield unquote(m.group(2)), m.start()
    if path.endswith(".rs"):
        for m in _RUST_ENV.finditer(text):
            yield unquote(m.group(1)), m.start()
    if "process.env" in text:
        for m in _JS_ENV.finditer(text):
            yield m.group(1) or unquote(m.group(2)), m.start()


def _reads_env(function: str) -> bool:
    if any(word in function for word in _SETS_ENV):
        return False
    return (
        function.endswith("env")
        or "env_" in function
        or "envvar" in function
        or re.search(r"(?:get|read|lookup|load|parse|fetch)\w*env", function) is not None
    )


def _options(text: str, path: str, lines: Lines) -> Iterator[tuple[str, _Option]]:
    def option(name: str, at: int, shape: str, default: str | None = None) -> Iterator[tuple[str, _Option]]:
        name = name.strip().lstrip("-")
        if _FLAG_NAME.fullmatch(name) and not lines.commented(at):
            yield f"--{name}", _Option(lines.number(at), shape, _tidy(default))

    calls = Calls(text)
    for m in _LLVM.finditer(text):
        args = calls.arguments(m.start(), m.end())
        if args and is_string(args[0]):
            inits = [i for i in map(_LLVM_INIT.search, args) if i is not None]
            default = next(iter(arguments(inits[0].string, inits[0].end())), None) if inits else None
            yield from option(unquote(args[0]), m.start(), f"cl::{m.group(1)}<{m.group(2).strip()}>", default)
    calls.fresh()
    for m in _GFLAGS.finditer(text):
        args = calls.arguments(m.start(), m.end())
        if args and len(args) >= 2:
            yield from option(args[0], m.start(), f"gflags:{m.group(1)}", args[1])
    calls.fresh()
    for m in _ABSL.finditer(text):
        args = calls.arguments(m.start(), m.end())
        if args and len(args) >= 3:
            yield from option(args[1], m.start(), f"absl:{args[0]}", args[2])
    calls.fresh()
    if path.endswith(".td"):
        yield from _tablegen(text, calls, option)
    if path.endswith(".go"):
        yield from _go(text, calls, option)
    if path.endswith(".rs"):
        yield from _clap(text, calls, option)
    calls.fresh()
    if "option" in text.lower():
        for m in _JS_OPTION.finditer(text):
            spec = unquote(m.group(1))
            longs = _LONG_FLAG.findall(spec)
            args = calls.arguments(m.start(), text.index("(", m.start()) + 1)
            if args is None:
                continue
            if longs:
                yield from option(longs[0], m.start(), "option", args[2] if len(args) >= 3 else None)
            elif len(args) >= 2 and args[1].startswith("{"):  # yargs: .option("name", {...})
                yield from option(spec, m.start(), "option")


def _tablegen(text: str, calls: Calls, option) -> Iterator[tuple[str, _Option]]:
    for m in _TABLEGEN_PASS.finditer(text):
        yield from option(unquote(m.group(1)), m.start(1), _PASS_SHAPE)
    for m in _TABLEGEN.finditer(text):
        args = calls.arguments(m.start(), m.end(), close=">")
        if args and len(args) >= 3 and all(is_string(a) for a in args[:3]):
            default = args[3] if m.group(1) == "Option" and len(args) >= 5 else None
            if default is not None and is_string(default):  # the C++ expression it holds: `"10"` is 10
                default = unquote(default)
            yield from option(unquote(args[1]), m.start(), f"tablegen:{unquote(args[2])}", default)


def _go(text: str, calls: Calls, option) -> Iterator[tuple[str, _Option]]:
    for m in _GO.finditer(text):
        kind = _GO_KINDS.fullmatch(m.group(1))
        if kind is None:
            continue
        args = calls.arguments(m.start(), m.end())
        if args is None:
            continue
        if kind.group(2):
            args = args[1:]  # the variable the flag is stored in
        if args and is_string(args[0]):
            at = 2 if kind.group(3) else 1  # after the shorthand letter
            default = args[at] if len(args) > at + 1 and kind.group(1) != "Count" else None
            yield from option(unquote(args[0]), m.start(), f"go:{kind.group(1)}", default)


def _clap(text: str, calls: Calls, option) -> Iterator[tuple[str, _Option]]:
    for m in _CLAP_ATTR.finditer(text):
        args = calls.arguments(m.start(), m.end())
        if not args or not any(
            a == "long" or (a.startswith("long") and a[4:].lstrip().startswith("=")) for a in args
        ):
            continue
        close = text.find("]", calls.until)  # past the attribute's arguments: a `]` inside them is theirs
        after = _CLAP_FIELD.match(text, _past_attributes(text, close + 1)) if close >= 0 else None
        named = next((a.split("=", 1)[1].strip() for a in args if a.startswith("long") and "=" in a), None)
        name = unquote(named) if named else (after.group(1).replace("_", "-") if after else None)
        default = next(
            (a.split("=", 1)[1].strip() for a in args if re.match(r"default_value(?:_t)?\s*=", a)), None
        )
        if name:
            yield from option(name, m.start(), "clap", default)
    for m in _CLAP_BUILDER.finditer(text):
        yield from option(unquote(m.group(1)), m.start(), "clap")


def _past_attributes(text: str, at: int) -> int:
    """Where the item after an attribute starts: past blanks, further attributes and line comments (a few:
    a run of thousands is not read again for each of its attributes)."""
    for _ in range(_ATTRIBUTES_SKIPPED):
        while at < len(text) and text[at].isspace():
            at += 1
        if text.startswith("#[", at):
            end = call(text, at + 2, "]")[1] - 1  # its closing bracket, past any inside it
        elif text.startswith("//", at):
            end = text.find("\n", at)
        else:
            break
        if end < 0:
            return len(text)
        at = end + 1
    return at


def _env_changes(path: str, old: Knobs, new: Knobs, after: str) -> Iterator[SurfaceChange]:
    gone = [k for k in old.envs if k not in new.envs and not _quoted(k, after)]
    came = [k for k in new.envs if k not in old.envs]
    if len(gone) == 1 and len(came) == 1:
        yield SurfaceChange(
            SurfaceKind.ENV_RENAMED, came[0], path, new.envs[came[0]], old=gone[0], new=came[0]
        )
        return
    for k in gone:
        yield SurfaceChange(SurfaceKind.ENV_REMOVED, k, path, old.envs[k])
    for k in came:
        yield SurfaceChange(SurfaceKind.ENV_ADDED, k, path, new.envs[k])


def _option_changes(path: str, old: Knobs, new: Knobs, after: str) -> Iterator[SurfaceChange]:
    gone = [k for k in old.options if k not in new.options]
    came = [k for k in new.options if k not in old.options]
    single = len(gone) == 1 and len(came) == 1  # one option out, one in: the same option renamed
    # ... unless one is a pass and the other a pass's option: a pass removed while another gains an option
    single = single and (old.options[gone[0]].shape == _PASS_SHAPE) == (
        new.options[came[0]].shape == _PASS_SHAPE
    )
    for r in list(gone):
        shape = old.options[r].shape
        match = came if single else [a for a in came if new.options[a].shape == shape]
        if len(match) == 1:
            a = match[0]
            gone.remove(r)
            came.remove(a)
            yield SurfaceChange(SurfaceKind.OPTION_RENAMED, a, path, new.options[a].line, old=r, new=a,
                                aliased=_quoted(r[2:], after))  # fmt: skip
    for r in gone:
        yield SurfaceChange(
            SurfaceKind.OPTION_REMOVED, r, path, old.options[r].line, aliased=_quoted(r[2:], after)
        )
    for a in came:
        yield SurfaceChange(SurfaceKind.OPTION_ADDED, a, path, new.options[a].line)
    for name, o in new.options.items():
        before = old.options.get(name)
        if before is None or before.default is None or o.default is None or _same(before.default, o.default):
            continue
        flipped = is_switch(name) and _boolish(before.default) is not None and _boolish(o.default) is not None
        kind = SurfaceKind.SWITCH_FLIPPED if flipped else SurfaceKind.DEFAULT_CHANGED
        yield SurfaceChange(kind, name, path, o.line, old=_shown(before.default), new=_shown(o.default))


def _quoted(name: str, text: str) -> bool:
    """The name still written as a string in the new version (an alias, a deprecation message)."""
    return f'"{name}"' in text or f"'{name}'" in text


def _tidy(default: str | None) -> str | None:
    if default is None:
        return None
    text = " ".join(default.split())
    return text or None


def _same(a: str, b: str) -> bool:
    """The same value retyped (`1.0` and `1`, `"x"` and `'x'`, `True` and `true`) is no change."""
    va, vb = unquote(a), unquote(b)
    if va == vb or (va.lower() in ("true", "false") and va.lower() == vb.lower()):
        return True
    try:
        return float(va.rstrip("fFuUlL")) == float(vb.rstrip("fFuUlL"))
    except ValueError:
        return False


def _boolish(value: str) -> bool | None:
    text = unquote(value).strip().lower()
    return True if text in ("true", "1", "on") else False if text in ("false", "0", "off") else None


def _shown(value: str) -> str:
    return value if len(value) <= _SHOWN else value[: _SHOWN - 1] + "…"
