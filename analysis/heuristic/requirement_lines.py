"""Readers of a dependency manifest's diff lines, for when the packaging files were not parsed: which
requirements changed version (requirements files, TOML and JSON manifests, go.mod, Gemfiles), which tables
and files only developers install, and the supported Python floor and classifiers a patch shows.
"""

from __future__ import annotations

import re

from analysis.heuristic.facts import Diff

PYTHON_FLOOR = re.compile(r"""(?:requires-python|python_requires)\s*=\s*["'][^"'\n]*?>=?\s*(\d+)\.(\d+)""")
PYTHON_CLASSIFIER = re.compile(r"Programming Language :: Python :: (\d+)\.(\d+)\b")

# A dependency line's package name: "torch==2.9", "mistral_common[image] >= 1.8", '"react": "^18"',
# 'serde = "1.0"', "github.com/x/y v1.2.3", "gem 'rails', '~> 7.0'".
_REQ_NAME = re.compile(
    r"^\s*(?:gem\s+|require\s+)?[\"']?(@?[A-Za-z0-9][\w.\-/@]*)(?:\[[^\]]*\])?[\"']?"
    r"\s*(?:==|>=|<=|~=|!=|===|>|<|=|:|\s+v?\d|,)"
)

# Manifests whose package names may hold a "/" (Go module paths, npm scopes); elsewhere a name with a
# "/" is a path (a coverage `omit` entry, an include pattern), not a package.
_SLASH_NAMES = frozenset({"go.mod", "go.work", "package.json", "deno.json", "bower.json", "composer.json"})

# A TOML table or JSON object whose entries are dependencies, and those that only developers install.
_TOML_TABLE = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*$")
_JSON_KEY = re.compile(r"""^\s*["']([\w.-]+)["']\s*:\s*[{\[]\s*$""")
DEVELOPER_ONLY = re.compile(
    r"(?:^|[^a-z])(?:dev|devel|develop|test|tests|testing|lint|linting|docs?|typing|bench)(?:[^a-z]|$)"
    r"|^dependency-groups$",  # PEP 735 groups are for developers: users never install them
    re.I,
)
_QUOTED = re.compile(r"""(["'])([^"'\n]+)\1""")
_DEPS_TABLE = re.compile(r"(?:^|[.-])(?:dependencies|requires|deps)$|^dependency-groups$", re.I)

# Manifest keys that carry a version but are not dependencies (the project's own version, ...).
_NOT_PACKAGES = frozenset(
    {"version", "name", "description", "license", "edition", "rust-version", "requires-python", "go"}
    | {"toolchain", "module", "authors", "homepage", "repository", "main", "types", "private", "engines"}
)


def manifest_stem(path: str) -> str:
    """A requirements file's name and folder without the generic words: `requirements/test.txt` → `test.txt`."""
    return re.sub(
        r"requirements|constraints", "", path.lower().rsplit("/", 2)[-1] if "/" in path else path.lower()
    )


def version_changes(diff: Diff, name: str) -> list[str]:
    removed: dict[str, str] = {}
    added: dict[str, str] = {}
    toml, json_like = name.endswith(".toml"), name.endswith(".json")
    table: str | None = None  # the TOML table (or JSON object) the line is in, when the hunk shows it
    for line in diff.text.split("\n"):
        sign, text = line[:1], line[1:]
        header = _TOML_TABLE.match(text) if toml else _JSON_KEY.match(text) if json_like else None
        if header:
            table = header.group(1)
            continue
        if sign not in ("-", "+") or (table is not None and DEVELOPER_ONLY.search(table)):
            continue
        side = removed if sign == "-" else added
        if toml:
            for requirement in _toml_requirements(text, table):
                _note_requirement(requirement, side, slash=False)
            continue
        _note_requirement(text, side, slash=name in _SLASH_NAMES)
    return [
        _version_change(name, old, added[name])
        for name, old in removed.items()
        if added.get(name, old) != old
    ]


def _toml_requirements(text: str, table: str | None) -> list[str]:
    """The requirements a TOML manifest line states: its quoted requirement strings ("name>=1.0",
    inside an array or not); else, only in a table of dependencies (Cargo's [dependencies], Poetry's),
    a `name = "1.0"` entry: elsewhere such a key is a tool's setting (`required-version = "0.8"`)."""
    quoted = [m.group(2) for m in _QUOTED.finditer(text)]
    found = [q for q in quoted if _REQ_NAME.match(q)]
    if found or not (table is not None and _DEPS_TABLE.search(table)):
        return found
    return [text]


def _note_requirement(line: str, side: dict[str, str], *, slash: bool) -> None:
    text = line.split("#", 1)[0].strip()
    m = _REQ_NAME.match(text)
    if not m or not re.search(r"\d", text[m.end(1) :]):
        return
    name = m.group(1).lower().replace("_", "-")
    if name not in _NOT_PACKAGES and (slash or "/" not in name):
        side.setdefault(name, " ".join(text.split()))


def _version_change(name: str, old: str, new: str) -> str:
    """Name and versions ("torch 2.9.0 → 2.10.0") when both lines carry one, else the name alone."""
    versions = [re.search(r"\d[\w.+*-]*", line) for line in (old[len(name) :], new[len(name) :])]
    if versions[0] and versions[1] and versions[0].group(0) != versions[1].group(0):
        return f"{name} {versions[0].group(0)} → {versions[1].group(0)}"
    return name
