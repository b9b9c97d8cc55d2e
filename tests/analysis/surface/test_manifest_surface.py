"""What a Cargo or npm manifest offers users besides dependencies (analysis/surface/manifest_surface.py): Cargo
features and the default ones, npm `exports` subpaths, and the commands both install (entry_points.py)."""

from __future__ import annotations

import json

from analysis.models import SurfaceKind as K
from analysis.surface.entry_points import entry_point_changes
from analysis.surface.manifest_surface import manifest_changes

CRATE = """\
[package]
name = "tinyc"
version = "0.9.0"

[features]
default = ["std"]
std = []
simd = []

[dependencies]
indexmap = "2.1"
"""


def facts(changes) -> list[tuple]:
    return [(c.kind, c.name, c.old, c.new) for c in changes]


def test_cargo_features_removed_added_and_the_default_set_changed():
    # 'Make the `std` feature opt-in' changed what every build gets: ranked low, nothing users run changed
    opt_in = CRATE.replace('default = ["std"]', "default = []")
    assert facts(manifest_changes("crates/tinyc/Cargo.toml", CRATE, opt_in)) == [
        (K.DEFAULT_CHANGED, "tinyc/default", "std", "none")
    ]
    dropped = CRATE.replace("simd = []\n", "").replace("std = []\n", "std = []\nwasm = []\n")
    assert facts(manifest_changes("Cargo.toml", CRATE, dropped)) == [
        (K.OPTION_REMOVED, "tinyc/simd", None, None),
        (K.OPTION_ADDED, "tinyc/wasm", None, None),
    ]
    # a feature's own list changed, a dependency bumped, a workspace root, a new crate: no feature fact
    assert manifest_changes("Cargo.toml", CRATE, CRATE.replace("simd = []", 'simd = ["std"]')) == []
    assert manifest_changes("Cargo.toml", CRATE, CRATE.replace('"2.1"', '"2.2"')) == []
    root = '[workspace]\nmembers = ["crates/*"]\n[features]\nx = []\n'
    assert manifest_changes("Cargo.toml", root, root.replace("x = []", "")) == []
    assert manifest_changes("Cargo.toml", None, CRATE) == []
    assert manifest_changes("Cargo.toml", CRATE, "[package\n") == []


def package(exports: object, bin_: object = None) -> str:
    data = {"name": "@acme/web", "version": "1.0.0", "exports": exports}
    if bin_ is not None:
        data["bin"] = bin_
    return json.dumps(data, indent=2)


def test_npm_exports_subpaths_are_import_paths():
    before = package({".": "./dist/index.js", "./router": "./dist/router.js"})
    after = package({".": "./dist/index.js", "./testing": {"import": "./dist/testing.js"}})
    assert facts(manifest_changes("package.json", before, after)) == [
        (K.REMOVED, "@acme/web/router", None, None),
        (K.ADDED, "@acme/web/testing", None, None),
    ]
    # conditions of the one entry, a target moved, no map at all: nothing users import changed
    conditions = package({"import": "./dist/index.mjs", "require": "./dist/index.cjs"})
    assert manifest_changes("package.json", conditions, package({"import": "./dist/index.js"})) == []
    assert manifest_changes("package.json", before, before.replace("dist/router", "lib/router")) == []
    assert manifest_changes("package.json", package("./dist/index.js"), before) == []


def test_npm_and_cargo_commands_are_entry_points():
    exports = {".": "./dist/index.js"}
    before = package(exports, {"web": "./bin/web.js", "web-dev": "./bin/dev.js"})
    after = package(exports, {"web": "./bin/web.js", "webdev": "./bin/dev.js"})
    assert facts(entry_point_changes("package.json", before, after)) == [
        (K.RENAMED, "webdev", "web-dev", "webdev")
    ]
    assert facts(entry_point_changes("package.json", package(exports, "./cli.js"), package(exports))) == [
        (K.REMOVED, "web", None, None)
    ]
    cli = '[package]\nname = "tinyc-cli"\n\n[[bin]]\nname = "tinyc"\npath = "src/main.rs"\n'
    assert facts(entry_point_changes("Cargo.toml", cli, cli.replace('name = "tinyc"', 'name = "tc"'))) == [
        (K.RENAMED, "tc", "tinyc", "tc")
    ]
