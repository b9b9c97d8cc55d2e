"""A commit's surface: other languages through tree-sitter, renames across files, what is user-facing, and
the facts assembled from what a source read."""

from __future__ import annotations

from datetime import UTC, datetime

from analysis.models import Commit, FileChange, FileTexts, describe
from analysis.models import SurfaceKind as K
from analysis.surface.commit import FileVersions, commit_facts, commit_surface, file_specs
from analysis.surface.other_langs import tree_surface


def names(changes) -> set[tuple[K, str]]:
    return {(c.kind, c.name) for c in changes}


def test_rust_pub_items_fields_and_methods():
    before = "pub struct Conn { pub host: String, port: u16 }\nimpl Conn { pub fn open(host: &str) -> Conn { todo!() } fn hidden() {} }\npub fn ping(t: u32) {}\nfn private() {}\npub(crate) fn internal() {}\n"
    after = "pub struct Conn { pub addr: String, port: u16 }\nimpl Conn { pub fn open(host: &str, tls: bool) -> Conn { todo!() } }\npub fn probe(t: u32) {}\n"
    assert names(tree_surface("src/lib.rs", before, after, language="rust").changes) == {
        (K.FIELD_ADDED, "Conn.addr"),
        (K.FIELD_REMOVED, "Conn.host"),
        (K.PARAM_REQUIRED, "Conn::open(tls)"),  # Rust has no default arguments: every call breaks
        (K.ADDED, "probe"),
        (K.REMOVED, "ping"),
    }


def test_go_exported_names_only():
    before = "package kit\n\ntype Client struct { Timeout int; retries int }\nfunc (c *Client) Do(req, opts int) error { return nil }\nfunc New() *Client { return nil }\nfunc helper() {}\n"
    after = "package kit\n\ntype Client struct { Timeout int; retries int }\nfunc (c *Client) Do(req, options int) error { return nil }\nfunc NewClient() *Client { return nil }\n"
    found = tree_surface("kit.go", before, after, language="go").changes
    assert names(found) == {
        (K.PARAM_RENAMED, "Client.Do(options)"),
        (K.ADDED, "NewClient"),
        (K.REMOVED, "New"),
    }


def test_typescript_exports_and_c_headers():
    before = "export function render(node: Node, opts?: Options) {}\nexport class View { mount(el) {} private paint() {} }\nexport { a as b, c };\nfunction local() {}\n"
    after = "export function render(node: Node) {}\nexport class View { mount(el) {} unmount() {} }\nexport { a as b };\n"
    assert names(tree_surface("src/index.ts", before, after, language="typescript").changes) == {
        (K.PARAM_REMOVED, "render(opts)"),
        (K.ADDED, "View.unmount"),
        (K.REMOVED, "c"),
    }
    header_before = "#ifndef KIT_H\n#define KIT_H\n#define KIT_MAX 8\nint kit_open(const char *path, int flags);\nstatic int kit_local(void);\nstruct kit_opts { int depth; };\n#endif\n"
    header_after = "#ifndef KIT_H\n#define KIT_H\nint kit_open(const char *path);\nstruct kit_opts { int depth; int width; };\n#endif\n"
    assert names(tree_surface("include/kit.h", header_before, header_after, language="cpp").changes) == {
        (K.REMOVED, "KIT_MAX"),
        (K.PARAM_REMOVED, "kit_open(flags)"),
        (K.FIELD_ADDED, "kit_opts.width"),
    }


def test_a_parameter_callers_must_now_pass_breaks_them_and_one_they_may_leave_out_is_new():
    # a compiler's header: `pipeline(int x, int stages)` gained `bool warpSpecialize` (every call stopped
    # compiling) and read as a new capability
    before = "namespace mlir {\nint pipeline(int x, int stages);\nint coalesce(int x);\nint fuse(int a);\nint fuse(int a, int b);\n}\n"
    after = (
        "namespace mlir {\nint pipeline(int x, int stages, bool warpSpecialize);\n"
        "int coalesce(int x, int vec = 4);\nint fuse(int a);\nint fuse(int a, int b, int c);\n}\n"
    )
    assert names(tree_surface("include/passes.h", before, after, language="cpp").changes) == {
        (K.PARAM_REQUIRED, "mlir::pipeline(warpSpecialize)"),
        (K.PARAM_ADDED, "mlir::coalesce(vec)"),  # a default argument: calls still compile
        # overloads are told apart by their parameter types: `fuse(a, b)` calls stop compiling
        (K.REMOVED, "mlir::fuse(int, int)"),
        (K.ADDED, "mlir::fuse(int, int, int)"),
    }
    go_before = "package kit\n\nfunc Dial(addr string) error { return nil }\nfunc Run(task string) error { return nil }\n"
    go_after = "package kit\n\nfunc Dial(addr string, opts ...Option) error { return nil }\nfunc Run(task string, retries int) error { return nil }\n"
    assert names(tree_surface("kit.go", go_before, go_after, language="go").changes) == {
        (K.PARAM_ADDED, "Dial(opts)"),
        (K.PARAM_REQUIRED, "Run(retries)"),
    }
    ts_before = "export function render(node: Node) {}\nexport function mount(el: Element) {}\nexport function stop(id: number) {}\n"
    ts_after = "export function render(node: Node, opts?: Options) {}\nexport function mount(el: Element, root: Root) {}\nexport function stop(id: number, force = false) {}\n"
    assert names(tree_surface("src/index.ts", ts_before, ts_after, language="typescript").changes) == {
        (K.PARAM_ADDED, "render(opts)"),
        (K.PARAM_REQUIRED, "mount(root)"),
        (K.PARAM_ADDED, "stop(force)"),
    }


def test_public_enum_members_are_fields_of_their_enum():
    # a compiler crate renamed `Target::X86` to `Target::X86_64` (every user's `match` broke): no change found
    rust_before = "pub enum Target {\n    X86,\n    Wasm,\n}\nenum Private { A }\n"
    rust_after = "pub enum Target {\n    X86_64,\n    Wasm,\n    Arm64,\n}\nenum Private { B }\n"
    assert names(tree_surface("src/codegen.rs", rust_before, rust_after, language="rust").changes) == {
        (K.FIELD_REMOVED, "Target.X86"),
        (K.FIELD_ADDED, "Target.X86_64"),
        (K.FIELD_ADDED, "Target.Arm64"),
    }
    ts_before = 'export enum Mode { Strict = "strict", Loose = "loose" }\nenum Local { A }\n'
    ts_after = 'export enum Mode { Strict = "strict" }\nenum Local { B }\n'
    assert names(tree_surface("src/mode.ts", ts_before, ts_after, language="typescript").changes) == {
        (K.FIELD_REMOVED, "Mode.Loose")
    }
    # an exported interface's properties (a framework's options object): a new one is a capability
    opts_before = "export interface AppOptions {\n  trustProxy?: boolean;\n  bodyLimit?: number;\n  listen(): void;\n}\n"
    opts_after = "export interface AppOptions {\n  trustProxy?: boolean;\n  /** Match paths case-sensitively. */\n  caseSensitive?: boolean;\n  listen(): void;\n}\n"
    assert names(tree_surface("src/types.ts", opts_before, opts_after, language="typescript").changes) == {
        (K.FIELD_REMOVED, "AppOptions.bodyLimit"),
        (K.FIELD_ADDED, "AppOptions.caseSensitive"),
    }
    c_before = "enum kit_mode { KIT_FAST, KIT_SAFE };\n"
    c_after = "enum kit_mode { KIT_FAST, KIT_SAFE, KIT_DEBUG };\n"
    assert names(tree_surface("include/kit.h", c_before, c_after, language="cpp").changes) == {
        (K.FIELD_ADDED, "kit_mode.KIT_DEBUG")
    }


def test_a_public_item_newly_marked_deprecated_is_a_deprecation():
    # `#[deprecated]` on a public function, JSDoc `@deprecated` on a class method, Go's `Deprecated:` paragraph,
    # `[[deprecated]]` in a header: each ranked low as "no user-facing change found"
    rust_before = "/// Emits code.\npub fn emit_with(p: u8) {}\n#[deprecated]\npub fn old() {}\n"
    rust_after = '/// Emits code.\n#[deprecated(since = "0.9.0", note = "use `Compiler`")]\npub fn emit_with(p: u8) {}\n#[deprecated]\npub fn old() {}\n'
    assert names(tree_surface("src/codegen.rs", rust_before, rust_after, language="rust").changes) == {
        (K.DEPRECATION, "emit_with")
    }
    ts_before = "export class App {\n  param(name: string) {}\n  use(h: Handler) {}\n}\n"
    ts_after = "export class App {\n  /** @deprecated Use route-level validation. */\n  param(name: string) {}\n  /** Adds a handler. */\n  use(h: Handler) {}\n}\n"
    assert names(tree_surface("src/app.ts", ts_before, ts_after, language="typescript").changes) == {
        (K.DEPRECATION, "App.param")
    }
    go_before = "package kit\n\n// Dial connects.\nfunc Dial(addr string) error { return nil }\n"
    go_after = "package kit\n\n// Dial connects.\n//\n// Deprecated: use DialContext.\nfunc Dial(addr string) error { return nil }\n"
    assert names(tree_surface("kit.go", go_before, go_after, language="go").changes) == {
        (K.DEPRECATION, "Dial")
    }
    cls_before = "class Builder {\npublic:\n  int createCall(int argc);\n};\n"
    cls_after = (
        'class Builder {\npublic:\n  [[deprecated("use createInvoke")]] int createCall(int argc);\n};\n'
    )
    assert names(tree_surface("include/b.h", cls_before, cls_after, language="cpp").changes) == {
        (K.DEPRECATION, "Builder::createCall")
    }
    c_before = "int kit_open(const char *path);\n"
    c_after = '[[deprecated("use kit_open2")]] int kit_open(const char *path);\n'
    assert names(tree_surface("include/kit.h", c_before, c_after, language="cpp").changes) == {
        (K.DEPRECATION, "kit_open")
    }
    # a deprecation kept is none
    ts_kept = "/** @deprecated */\nexport function a() {}\nexport const b = 1;\n"
    after_kept = ts_kept + "export const c = 2;\n"
    assert names(tree_surface("src/a.ts", ts_kept, after_kept, language="typescript").changes) == {
        (K.ADDED, "c")
    }


def test_commonjs_exports_are_a_modules_names():
    # a CommonJS framework (`module.exports = {…}`, `exports.x = …`) removed a helper: nothing found
    before = "function a() {}\nmodule.exports = { a, b: require('./b'), c(x, y) {} };\nexports.d = function (req, res) {};\nmodule.exports.e = 1;\nlocal.f = 2;\n"
    after = "function a() {}\nmodule.exports = { a, c(x) {} };\nexports.d = function (req, res, next) {};\nmodule.exports.g = 1;\nlocal.h = 2;\n"
    assert names(tree_surface("lib/index.js", before, after, language="javascript").changes) == {
        (K.REMOVED, "b"),
        (K.PARAM_REMOVED, "c(y)"),
        (K.PARAM_ADDED, "d(next)"),
        (K.REMOVED, "e"),
        (K.ADDED, "g"),
    }
    single = "module.exports = createApplication;\n"
    assert (
        tree_surface(
            "lib/express.js", single, single.replace("createApplication", "create"), language="javascript"
        ).changes
        == []
    )
    assert names(tree_surface("lib/express.js", single, "const x = 1;\n", language="javascript").changes) == {
        (K.REMOVED, "default")
    }


def test_a_private_tree_or_detail_namespace_holds_no_user_api():
    # `include/kit/detail/`, `src/_internal/`, `namespace detail { … }`: the project's own helpers by the
    # languages' convention (as Go's `internal/` is by rule); their environment variables still count
    files = [
        FileVersions("include/kit/detail/buffer.h", "int kit_grow(int n);\n", "int kit_grow(int n, int by);\n"),
        FileVersions("src/_internal/paths.ts", "export function clean(p: string) {}\n", "export function join(a: string) {}\n"),
        FileVersions("src/private/env.rs", "pub fn a() {}\n", 'pub fn b() { std::env::var("KIT_TRACE"); }\n'),
    ]  # fmt: skip
    assert names(commit_surface(files, None, None)) == {(K.ENV_ADDED, "KIT_TRACE")}
    header = "namespace kit {\nint open(int f);\nnamespace detail {\nint grow(int n);\n}\n}\n"
    after = header.replace("int grow(int n);", "int grow(int n, int by);").replace(
        "int open(int f);", "int open(int f);\nint close(int f);"
    )
    assert names(tree_surface("include/kit/kit.h", header, after, language="cpp").changes) == {
        (K.ADDED, "kit::close")
    }


def test_a_file_with_syntax_errors_yields_nothing():
    assert tree_surface("a.rs", "pub fn a() {}", "pub fn b( {", language="rust").changes == []


def test_a_function_renamed_in_a_namespace_of_a_header_is_one_rename():
    # a qualified name (`mc::foldConstants`) is written unqualified in its declaration: the shape of the two
    # declarations must leave out the name as written, or a rename reads "removes X, adds Y"
    header = "#pragma once\nnamespace mc {{\nclass Builder;\nint {}(Builder &b, int maxIterations);\n}}\n"
    changes = commit_surface(
        [
            FileVersions(
                "include/mc/Ops.h", header.format("foldConstants"), header.format("foldAllConstants"), None
            )
        ],
        None,
        None,
    )
    assert [(c.kind, c.old, c.new) for c in changes] == [
        (K.RENAMED, "mc::foldConstants", "mc::foldAllConstants")
    ]


def test_a_function_moved_to_another_module_is_one_rename():
    changes = commit_surface(
        [
            FileVersions("pkg/old.py", "def scale(x):\n    return x * 3\n", "", None),
            FileVersions("pkg/new.py", None, "def scale_by_three(x):\n    return x * 3\n", None),
        ],
        None,
        None,
    )
    [change] = changes
    assert (change.kind, change.old, change.new, change.path) == (
        K.RENAMED,
        "pkg.old.scale",
        "pkg.new.scale_by_three",
        "pkg/new.py",
    )
    assert change.breaking
    assert (
        describe(change)
        == "renamed: pkg.new.scale_by_three (pkg.old.scale → pkg.new.scale_by_three); no alias at pkg/new.py:1"
    )


def test_what_is_not_shipped_or_is_a_test_gives_no_api_facts():
    removed = "def public_helper():\n    pass\n"
    files = [
        FileVersions("tutorial/app.py", removed, ""),
        FileVersions("pkg/tests/test_x.py", removed, ""),
        FileVersions("pkg/core.py", removed, ""),
    ]
    assert names(commit_surface(files, None, frozenset({"pkg/core.py", "pkg/tests/test_x.py"}))) == {
        (K.REMOVED, "pkg.core.public_helper")
    }
    # without packaging, the path's kind decides: an examples folder is not user-facing
    files[0] = FileVersions("examples/app.py", removed, "")
    assert names(commit_surface(files, None, None)) == {(K.REMOVED, "pkg.core.public_helper")}


def test_a_vendored_looking_tree_is_read_and_its_history_left_to_judge_it():
    # A compiler keeps a GPU backend's Python under third_party/<vendor>/backend/: its options class is what
    # users pass to a kernel launch. Whether the tree is the branch's own is the history's to say; this parse
    # is stored once per commit, so it reads the tree as what it would be outside the vendored folder.
    before = (
        "from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass BackendOptions:\n"
        "    num_warps: int = 4\n    maxnreg: int | None = None\n"
    )
    after = before.replace("maxnreg", "max_num_regs")
    files = [
        FileVersions("third_party/acme/backend/compiler.py", before, after),
        FileVersions("third_party/acme/test/test_backend.py", "def check_backend():\n    pass\n", ""),
    ]
    changes = commit_surface(files, None, None)
    assert [(c.kind, c.name.rsplit(".", 2)[-2:], c.old) for c in changes] == [
        (K.FIELD_RENAMED, ["BackendOptions", "max_num_regs"], "maxnreg")
    ]
    assert {c.path for c in changes} == {"third_party/acme/backend/compiler.py"}  # its test folder is tests
    # where the packaging says what ships and ships no such tree, it is not read
    assert commit_surface(files, None, frozenset()) == ()


def _commit(files: tuple[FileChange, ...]) -> Commit:
    return Commit("o/r", "c" * 40, "Change", "a", datetime(2026, 1, 1, tzinfo=UTC), ("p" * 40,), files)


def test_commit_facts_from_read_texts_and_what_was_not_read():
    commit = _commit(
        (
            FileChange("pkg/api.py", "modified", 1, 1),
            FileChange("pkg/new.py", "added", 2, 0),
            FileChange("docs/guide.md", "modified", 3, 1),
            FileChange("pkg/blob.py", "modified", 1, 1),
            FileChange("tests/test_api.py", "modified", 9, 1),  # never parsed: not read
        )
    )
    assert file_specs(commit) == [
        ("p" * 40, "pkg/api.py"), ("c" * 40, "pkg/api.py"), ("c" * 40, "pkg/new.py"),
        ("p" * 40, "pkg/blob.py"), ("c" * 40, "pkg/blob.py"),
    ]  # fmt: skip
    texts = FileTexts(
        {
            ("p" * 40, "pkg/api.py"): "def go(a):\n    pass\n",
            ("c" * 40, "pkg/api.py"): "def go(a, b):\n    pass\n",
            ("c" * 40, "pkg/new.py"): "class Thing:\n    pass\n",
        },
        {("p" * 40, "pkg/blob.py"), ("c" * 40, "pkg/blob.py")},  # too large: skipped, the rest still counts
    )
    pyproject = '[build-system]\nbuild-backend = "hatchling.build"\n[project]\nname = "pkg"\n'
    surface, shipped, prose = commit_facts(
        commit, texts, {"pyproject.toml": pyproject}, ["pyproject.toml", "pkg/__init__.py"]
    )
    assert shipped == {"pkg/api.py", "pkg/new.py", "pkg/blob.py"}
    assert names(surface) == {(K.PARAM_REQUIRED, "pkg.api.go(b)"), (K.ADDED, "pkg.new.Thing")}
    assert prose == frozenset()  # a signature changed: code, not prose
    # a file version that was never read (a request budget spent): no facts at all, not partial ones
    del texts.texts[("c" * 40, "pkg/new.py")]
    surface, shipped, prose = commit_facts(commit, texts, {"pyproject.toml": pyproject}, None)
    assert surface is None and shipped is not None and prose is None


# --- packaging: what users install, and from whom ------------------------------------------------------

# pydantic since it took pydantic-core into the repository: a Python distribution at the top pinning its
# sibling, a maturin (Rust) distribution beside it, and a docs build's own requirements.
_MONOREPO = {
    "pyproject.toml": '[build-system]\nbuild-backend = "hatchling.build"\n[project]\nname = "lib"\n'
    'dependencies = ["lib-core==2.41.5", "typing-extensions>=4.13"]\n',
    "lib-core/pyproject.toml": '[build-system]\nbuild-backend = "maturin"\n[project]\nname = "lib_core"\n',
    "lib-core/Cargo.toml": '[package]\nname = "lib-core"\n[dependencies]\npyo3 = "0.25"\n',
}
_TREE = [
    *_MONOREPO,
    "lib/__init__.py",
    "lib-core/src/lib.rs",
    "lib-core/python/lib_core/__init__.py",
    "docs/requirements.txt",
    ".github/workflows/requirements.txt",
]


def _monorepo_packaging():
    from analysis.surface.packaging import read_packaging
    from analysis.surface.packaging_files import packaging_paths

    wanted = packaging_paths(["pyproject.toml"], _TREE)
    assert "lib-core/pyproject.toml" in wanted  # a sibling distribution is read for its name
    return read_packaging({p: _MONOREPO[p] for p in wanted if p in _MONOREPO}, _TREE)


def test_a_pin_on_a_sibling_distribution_is_no_dependency_change():
    packaging = _monorepo_packaging()
    before = _MONOREPO["pyproject.toml"]
    after = before.replace("lib-core==2.41.5", "lib-core==2.42.0").replace(">=4.13", ">=4.14")
    found = names(commit_surface([FileVersions("pyproject.toml", before, after)], packaging, None))
    assert found == {(K.DEPENDENCY_CHANGED, "typing-extensions")}


def test_a_requirement_moved_to_another_packaging_file_is_still_installed():
    # requirements.txt folded into pyproject.toml: `ray` left one file for the other, users still get it
    pyproject = '[project]\nname = "plug"\ndynamic = ["dependencies"]\n'
    files = [
        FileVersions("requirements.txt", "ray>=2.9\npandas\n", "pandas\n"),
        FileVersions(
            "pyproject.toml",
            pyproject,
            pyproject.replace('dynamic = ["dependencies"]', 'dependencies = ["ray>=2.9"]'),
        ),
    ]
    found = names(commit_surface(files, None, None))
    assert (K.DEPENDENCY_REMOVED, "ray") in found and (K.DEPENDENCY_DROPPED, "ray") not in found
    # the same removal alone leaves the default install
    assert names(commit_surface(files[:1], None, None)) == {(K.DEPENDENCY_DROPPED, "ray")}


def test_a_requirement_for_pythons_no_longer_supported_is_removed_not_dropped():
    # a cleanup after the floor was raised: no supported Python installed the backport
    from analysis.surface.packaging import read_packaging

    pyproject = '[project]\nname = "plug"\nrequires-python = ">=3.10"\ndynamic = ["dependencies"]\n'
    packaging = read_packaging({"pyproject.toml": pyproject}, ["pyproject.toml", "plug/__init__.py"])
    before = "numpy\nimportlib_metadata; python_version < '3.10'\ntomli; python_version < '3.11'\n"
    files = [FileVersions("requirements/common.txt", before, "numpy\n")]
    assert names(commit_surface(files, packaging, None)) == {
        (K.DEPENDENCY_REMOVED, "importlib-metadata"),
        (K.DEPENDENCY_DROPPED, "tomli"),  # Python 3.10 users had it
    }


def test_requirements_of_ci_or_docs_and_a_python_packages_crate_state_nothing_users_install():
    packaging = _monorepo_packaging()
    files = [
        FileVersions("docs/requirements.txt", "mkdocs==1.5\n", "mkdocs==1.6\n"),
        FileVersions(".github/workflows/requirements.txt", "uv==0.4\n", "uv==0.5\n"),
        # the crate is compiled into the wheel: users never resolve pyo3, nor need a Rust toolchain
        FileVersions(
            "lib-core/Cargo.toml",
            _MONOREPO["lib-core/Cargo.toml"],
            '[package]\nname = "lib-core"\n[dependencies]\npyo3 = "0.26"\n',
        ),
        # its Rust sources: users reach them through the Python modules
        FileVersions(
            "lib-core/src/lib.rs", "pub fn validate() {}\n", "pub fn validate() {}\npub fn dump() {}\n"
        ),
    ]
    assert commit_surface(files, packaging, None) == ()
    # without a Python distribution owning them, a crate's manifest and public items are what users get
    alone = commit_surface(files[2:], None, None)
    assert (K.ADDED, "dump") in {(c.kind, c.name.rsplit("::", 1)[-1]) for c in alone}


def test_a_batch_collects_each_version_once_with_the_same_facts(monkeypatch):
    """A batch's commits touching one module in turn: each version is parsed and collected once (one's
    version after is the next one's before, the same text object from the source), and every commit's
    facts are those of parsing its two versions alone."""
    from analysis.surface import python as surface_python
    from analysis.surface.commit import expect_versions
    from analysis.surface.python import Collected

    versions = [
        "def run(task, retries=3):\n    return task\n\n\ndef legacy():\n    pass\n",
        "def run(task, retries=3, timeout=None):\n    return task\n\n\ndef legacy():\n    pass\n",
        "def run(task, retries=5, timeout=None):\n    return task\n",
        "import os\n\n\ndef run(task, retries=5, timeout=None):\n    return os.environ.get('KIT_MODE', task)\n",
    ]
    path = "kit/core.py"
    shas = ["a" * 40, "b" * 40, "c" * 40, "d" * 40]
    other = "e" * 40  # a commit between the third and the fourth that did not touch the module
    parents = {shas[1]: shas[0], shas[2]: shas[1], shas[3]: other}
    commits = [
        Commit(repo="o/kit", sha=sha, message=f"Change {n} (#{n})", author="A",
               committed_at=datetime(2026, 1, 1, n, tzinfo=UTC), parents=(parents[sha],),
               files=(FileChange(path, "modified", 2, 1),))
        for n, sha in enumerate(shas[1:], start=1)
    ]  # fmt: skip
    texts = {(shas[0], path): versions[0]}
    for n, sha in enumerate(shas[1:], start=1):
        texts[(sha, path)] = versions[n]
    texts[(other, path)] = texts[(shas[2], path)]  # the same blob: one text object
    read = FileTexts(texts, set())

    parsed: list[str] = []
    module = surface_python._Collector.module
    monkeypatch.setattr(
        surface_python._Collector,
        "module",
        lambda self, tree, text, *rest: parsed.append(text) or module(self, tree, text, *rest),
    )

    alone = [commit_facts(c, read, {}, None) for c in commits]
    assert len(parsed) == 6
    parsed.clear()
    collected = Collected()
    expect_versions(commits, read, collected)
    together = [commit_facts(c, read, {}, None, {}, collected) for c in reversed(commits)][::-1]
    assert together == alone and sorted(parsed) == sorted(versions)  # each version once, in either order
    assert not collected._kept  # nothing held past its last use
    kinds = {(c.kind, c.name) for facts, _, _ in together for c in facts}
    assert (K.PARAM_ADDED, "kit.core.run(timeout)") in kinds and (K.REMOVED, "kit.core.legacy") in kinds


def test_a_wrong_typed_packaging_value_loses_no_other_fact_of_the_commit():
    # valid TOML with a value of the wrong type, at the tip and in the commit itself
    pyproject = (
        '[project]\nname = "pkg"\ndependencies = ["httpx>=0.27"]\n[tool.setuptools]\npackages = ["pkg"]\n'
    )
    tip = pyproject + "py-modules = true\n"
    after = pyproject.replace("httpx>=0.27", "httpx>=0.28").replace(
        'name = "pkg"\n', 'name = "pkg"\noptional-dependencies = "none"\n'
    )
    commit = _commit(
        (FileChange("pkg/api.py", "modified", 0, 2), FileChange("pyproject.toml", "modified", 2, 1))
    )
    texts = FileTexts(
        {
            ("p" * 40, "pkg/api.py"): "def go(a):\n    pass\n\ndef keep(a):\n    pass\n",
            ("c" * 40, "pkg/api.py"): "def keep(a):\n    pass\n",
            ("p" * 40, "pyproject.toml"): pyproject,
            ("c" * 40, "pyproject.toml"): after,
        },
        set(),
    )
    tree = ["pyproject.toml", "pkg/__init__.py", "pkg/api.py"]
    surface, shipped, _ = commit_facts(commit, texts, {"pyproject.toml": tip}, tree)
    assert names(surface) == {(K.REMOVED, "pkg.api.go"), (K.DEPENDENCY_CHANGED, "httpx")}
    assert shipped == {"pkg/api.py"}
    # a commit that touches only Python code, under the wrong-typed tip
    only_code = _commit((FileChange("pkg/api.py", "modified", 0, 2),))
    surface, shipped, _ = commit_facts(only_code, texts, {"pyproject.toml": tip}, tree)
    assert names(surface) == {(K.REMOVED, "pkg.api.go")} and shipped == {"pkg/api.py"}


# --- nesting deeper than Python's recursion limit ------------------------------------------------------

DEPTH = 1200  # legal code: compilers accept it; a walker recursing per level raised RecursionError


def test_deeply_nested_rust_modules_and_cpp_namespaces_are_read():
    rust_before = "pub fn base() {}\n"
    rust_after = rust_before + "pub mod m { " * DEPTH + "pub fn deep_fn(a: i32) {}" + " }" * DEPTH + "\n"
    found = tree_surface("src/lib.rs", rust_before, rust_after, language="rust").changes
    assert (K.ADDED, "m::" * DEPTH + "deep_fn") in names(found)
    cpp_before = "int base();\n"
    cpp_after = cpp_before + "namespace n { " * DEPTH + "int deep_fn(int a);" + " }" * DEPTH + "\n"
    assert names(tree_surface("include/api.h", cpp_before, cpp_after, language="cpp").changes) == {
        (K.ADDED, "n::" * DEPTH + "deep_fn")
    }


def test_a_file_too_deep_for_a_walker_yields_nothing_and_no_error(monkeypatch):
    from analysis.surface import other_langs

    def too_deep(node, api) -> None:
        raise RecursionError

    monkeypatch.setattr(other_langs, "_rust", too_deep)
    assert tree_surface("src/lib.rs", "pub fn a() {}\n", "pub fn b() {}\n", language="rust").changes == []


def test_a_class_moved_to_a_submodule_and_imported_back_takes_its_members_along():
    # "Move `LoRAConfig` from `config/__init__.py` to `config/lora.py`": the package re-exports it, and its 8
    # fields and 3 methods were each stated removed ("breaks users", high)
    old_init = (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass LoRAConfig:\n    max_rank: int = 16\n"
        "    max_loras: int = 1\n\n    def compute_hash(self) -> str:\n        return str(self.max_rank)\n\n\n"
        "@dataclass\nclass CacheConfig:\n    block_size: int = 16\n"
    )
    new_init = (
        "from dataclasses import dataclass\n\nfrom pkg.config.lora import LoRAConfig\n\n__all__ = ['LoRAConfig', "
        "'CacheConfig']\n\n\n@dataclass\nclass CacheConfig:\n    block_size: int = 16\n"
    )
    lora = (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass LoRAConfig:\n    max_rank: int = 16\n"
        "    max_loras: int = 1\n\n    def compute_hash(self) -> str:\n        return str(self.max_rank)\n"
    )
    found = names(
        commit_surface(
            [
                FileVersions("pkg/config/__init__.py", old_init, new_init),
                FileVersions("pkg/config/lora.py", None, lora),
            ],
            None,
            None,
        )
    )
    assert not {(k, n) for k, n in found if k in (K.REMOVED, K.FIELD_REMOVED)}, found
    # moved without the import back, it is gone from where users import it: one removal
    gone = "from dataclasses import dataclass\n\n\n@dataclass\nclass CacheConfig:\n    block_size: int = 16\n"
    found = names(commit_surface([FileVersions("pkg/config/__init__.py", old_init, gone)], None, None))
    assert (K.REMOVED, "pkg.config.LoRAConfig") in found
    assert not {(k, n) for k, n in found if n.startswith("pkg.config.LoRAConfig.")}


def test_a_package_init_importing_names_from_outside_the_package_does_not_make_them_its_api():
    # moving a class out of a package's __init__ dropped its imports of torch names: "removes `ProcessGroup`"
    # and "removes `ReduceOp`" read as breaking users of the package
    before = (
        "from torch.distributed import ProcessGroup, ReduceOp\nfrom pkg.utils import cuda_count\n\n\n"
        "class ParallelConfig:\n    pass\n"
    )
    after = "from numpy import ndarray\n\n\nclass ParallelConfig:\n    pass\n"
    found = names(commit_surface([FileVersions("pkg/config/__init__.py", before, after)], None, None))
    assert found == set()  # a sibling package's name (`pkg.utils`) is not this package's either
    # what it imports from its own modules is its API: dropping it breaks `from pkg.config import LoRAConfig`
    own = (
        "from .lora import LoRAConfig\nfrom pkg.config.cache import CacheConfig\nfrom ..utils import helper\n"
    )
    found = names(commit_surface([FileVersions("pkg/config/__init__.py", own, "")], None, None))
    assert found == {(K.REMOVED, "pkg.config.LoRAConfig"), (K.REMOVED, "pkg.config.CacheConfig")}
    # listed in __all__, another distribution's name is the package's API all the same
    listed = before + "\n__all__ = ['ParallelConfig', 'ProcessGroup']\n"
    kept = after + "\n__all__ = ['ParallelConfig']\n"
    found = names(commit_surface([FileVersions("pkg/config/__init__.py", listed, kept)], None, None))
    assert (K.REMOVED, "pkg.config.ProcessGroup") in found


def test_an_overload_removed_from_a_header_is_a_removal_though_others_of_its_name_remain():
    # a compiler's public header dropped `compile(src, opt_level, debug)` and `Module::dump(int) const`, keeping
    # `compile(src)`, `compile(src, opt_level)` and `dump() const`: the dropped ones' callers stop compiling
    before = (
        "namespace ncc {\nint compile(const char* src);\nint compile(const char* src, int opt_level);\n"
        "int compile(const char* src, int opt_level, bool debug);\n"
        "class Module {\npublic:\n  void dump() const;\n  void dump(int indent) const;\n  void verify();\n};\n}\n"
    )
    after = (
        "namespace ncc {\nint compile(const char* source);\nint compile(const char *s, int level);\n"
        "class Module {\npublic:\n  void dump() const;\n  void verify();\n  void verify(bool strict);\n};\n}\n"
    )
    found = tree_surface("include/ncc/compiler.h", before, after, language="cpp")
    assert names(found.changes) == {
        (K.REMOVED, "ncc::compile(const char*, int, bool)"),  # parameter names and spacing do not matter
        (K.REMOVED, "ncc::Module::dump(int) const"),
        (K.ADDED, "ncc::Module::verify(bool)"),  # a new overload is new
    }
    assert all(c.breaking for c in found.changes if c.kind == K.REMOVED)


def test_an_overload_that_gains_a_defaulted_parameter_or_is_declared_twice_is_kept():
    # `f(int)` → `f(int, int = 0)` and `void f(void)` → `void f()`: every call still compiles; a declaration
    # beside its inline definition is one function, whose parameters are still compared by name
    before = (
        "namespace k {\nint f(int a);\nint f(const char* s);\nvoid g(void);\nvoid g(int x);\n"
        "int h(int x);\ninline int h(int x) { return x; }\n}\n"
    )
    after = (
        "namespace k {\nint f(int a, int b = 0);\nint f(const char* s);\nvoid g();\nvoid g(int y);\n"
        "int h(int y);\ninline int h(int y) { return y; }\n}\n"
    )
    assert names(tree_surface("include/k.h", before, after, language="cpp").changes) == {
        (K.PARAM_RENAMED, "k::h(y)"),
    }


def test_a_python_distributions_include_headers_are_an_api_its_other_native_sources_are_not() -> None:
    # a compiler with Python bindings built by scikit-build-core dropped `compile(src, opt_level)` from its public
    # header: read as a native source users reach only through the Python modules, the removal went unsaid
    from analysis.surface.packaging import read_packaging

    backend = '[build-system]\nbuild-backend = "scikit_build_core.build"\n[project]\nname = "ncc"\n'
    tree = ["pyproject.toml", "include/ncc/compiler.h", "src/driver.h", "python/ncc/__init__.py"]
    packaging = read_packaging({"pyproject.toml": backend}, tree)
    assert packaging is not None
    before = (
        "namespace ncc {\nint compile(const char* src);\nint compile(const char* src, int opt_level);\n}\n"
    )
    after = "namespace ncc {\nint compile(const char* src);\n}\n"
    files = [FileVersions(p, before, after) for p in ("include/ncc/compiler.h", "src/driver.h")]
    found = commit_surface(files, packaging, packaging.shipped(tree))
    assert names(found) == {(K.REMOVED, "ncc::compile(const char*, int)")}
    assert {c.path for c in found} == {"include/ncc/compiler.h"}


def test_headers_whose_namespaces_and_declarations_are_macros_are_read():
    # a binding library opens its namespaces with `KIT_NAMESPACE_BEGIN(...)` and declares members with macros
    # (`KIT_OBJECT_DEFAULT(slice, object, check)`, `KIT_DEPRECATED("...")`): tree-sitter found errors in every
    # header, and its new sub-interpreter API, a deprecation and a removed function went unsaid
    before = (
        '#pragma once\n#include "detail/common.h"\n\nKIT_NAMESPACE_BEGIN(KIT_NAMESPACE)\n\n'
        "class slice : public object {\npublic:\n    KIT_OBJECT_DEFAULT(slice, object, PySlice_Check)\n"
        "    ssize_t start() const;\n};\n\ninline object get_type(handle h) { return h; }\n"
        "inline object make_namespace(handle h) { return h; }\n\nKIT_NAMESPACE_BEGIN(detail)\n"
        "inline int helper(int x) { return x; }\nKIT_NAMESPACE_END(detail)\nKIT_NAMESPACE_END(KIT_NAMESPACE)\n"
    )
    after = (
        '#pragma once\n#include "detail/common.h"\n\nKIT_NAMESPACE_BEGIN(KIT_NAMESPACE)\n\n'
        "class slice : public object {\npublic:\n    KIT_OBJECT_DEFAULT(slice, object, PySlice_Check)\n"
        '    ssize_t start() const;\n};\n\nKIT_DEPRECATED("Use type::of() instead")\n'
        "inline object get_type(handle h) { return h; }\n\nclass subinterpreter {\npublic:\n"
        "    static subinterpreter create();\n};\n\nKIT_NAMESPACE_BEGIN(detail)\n"
        "inline int helper(int x, int y) { return x + y; }\nKIT_NAMESPACE_END(detail)\n"
        "KIT_NAMESPACE_END(KIT_NAMESPACE)\n"
    )
    found = tree_surface("include/kit/kit.h", before, after, language="cpp").changes
    assert names(found) == {
        (K.DEPRECATION, "KIT_NAMESPACE::get_type"),
        (K.REMOVED, "KIT_NAMESPACE::make_namespace"),
        (K.ADDED, "KIT_NAMESPACE::subinterpreter"),
        (K.ADDED, "KIT_NAMESPACE::subinterpreter::create"),
    }  # `detail`'s helper is the library's own
    assert {c.line for c in found if c.kind == K.DEPRECATION} == {13}  # lines kept as written
    # a library that spells them `FMT_BEGIN_NAMESPACE` / `FMT_END_NAMESPACE`
    fmt = "FMT_BEGIN_NAMESPACE\nint format_to(int n);\nFMT_END_NAMESPACE\n"
    widened = tree_surface("include/fmt/core.h", fmt, fmt.replace("int n", "int n, int m"), language="cpp")
    assert names(widened.changes) == {(K.PARAM_REQUIRED, "FMT_BEGIN_NAMESPACE::format_to(m)")}


def test_include_headers_count_where_a_python_packaging_read_statically_does_not_ship_them() -> None:
    # a setup.py that runs CMake to install the headers into the wheel: read statically, the distribution
    # shipped only its Python package, and the header's removed function went unsaid (a vendored header and a
    # test's header stay out)
    before = "namespace kit {\ninline int make_namespace(int a) { return a; }\ninline int keep(int a) { return a; }\n}\n"
    after = "namespace kit {\ninline int keep(int a) { return a; }\n}\n"
    paths = ("include/kit/kit.h", "third_party/zlib/include/zlib.h", "tests/include/fixture.h")
    files = [FileVersions(p, before, after) for p in paths]
    found = commit_surface(files, None, frozenset({"kit/__init__.py"}))
    assert names(found) == {(K.REMOVED, "kit::make_namespace")}
    assert {c.path for c in found} == {"include/kit/kit.h"}


def test_a_cmake_option_of_a_build_that_exports_a_package_config_is_its_users_even_in_a_python_distribution():
    # a binding library built by setup.py through CMake, and consumed by CMake projects through its package
    # config: dropping its `KIT_NUMPY_1_ONLY` option breaks every `-DKIT_NUMPY_1_ONLY=ON` build command; read
    # as a Python distribution's own build, the removal went unsaid
    from analysis.surface.packaging import read_packaging

    setup = "from setuptools import setup\nsetup(name='kit', packages=['kit'])\n"
    tree = ["setup.py", "CMakeLists.txt", "kit/__init__.py", "tests/CMakeLists.txt"]
    packaging = read_packaging({"setup.py": setup}, tree)
    assert packaging is not None
    exported = "include(CMakePackageConfigHelpers)\nconfigure_package_config_file(tools/kitConfig.cmake.in kitConfig.cmake)\n"
    before = 'option(KIT_INSTALL "Install headers" ON)\noption(KIT_NUMPY_1_ONLY "NumPy 1 only" OFF)\n'
    after = 'option(KIT_INSTALL "Install headers" ON)\n'
    files = [
        FileVersions("CMakeLists.txt", before + exported, after + exported),
        FileVersions("tests/CMakeLists.txt", before, after),  # the test suite's own build
    ]
    found = commit_surface(files, packaging, packaging.shipped(tree))
    assert names(found) == {(K.OPTION_REMOVED, "-DKIT_NUMPY_1_ONLY")}
    assert all(c.breaking for c in found)
    # without a package config, a Python distribution's CMake build stays its own
    plain = [FileVersions("CMakeLists.txt", before, after)]
    assert commit_surface(plain, packaging, packaging.shipped(tree)) == ()


def test_methods_defined_inline_in_a_class_body_are_its_api():
    # a header-only library defines its methods in the class body: `native_enum::doc` added and
    # `native_enum::values` removed went unsaid, as only declared methods (`void f();`) were read
    before = (
        "namespace kit {\nclass native_enum {\npublic:\n    object value(handle h) const { return h; }\n"
        "    object values() const { return {}; }\nprivate:\n    void grow() {}\n};\n}\n"
    )
    after = (
        "namespace kit {\nclass native_enum {\npublic:\n    object doc(const char* d) const { return {}; }\n"
        "    object value(handle h, bool strict) const { return h; }\nprivate:\n    void shrink() {}\n};\n}\n"
    )
    assert names(tree_surface("include/kit/native_enum.h", before, after, language="cpp").changes) == {
        (K.ADDED, "kit::native_enum::doc"),
        (K.REMOVED, "kit::native_enum::values"),
        (K.PARAM_REQUIRED, "kit::native_enum::value(strict)"),
    }


def test_a_nested_testing_package_is_read_a_top_level_testing_tree_is_not():
    # the test client a web framework ships for its users' tests, beside a project's top-level test tree
    before = "class TestClient:\n    def __init__(self, app, base_url='http://testserver'):\n        self.app = app\n"
    after = "class TestClient:\n    def __init__(self, app):\n        self.app = app\n"
    paths = ("kit/testing/client.py", "testing/helpers.py")
    found = commit_surface([FileVersions(p, before, after) for p in paths], None, None)
    assert names(found) == {(K.PARAM_REMOVED, "kit.testing.client.TestClient.__init__(base_url)")}
    assert {c.path for c in found} == {"kit/testing/client.py"}
