"""docs/architecture.md matches the code: every path it names exists, every arrow of its diagram is an
import that really happens, and the order of bot/'s layers is the one import-linter enforces."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
TOPS = ("analysis", "bot", "adapters")


def _mermaid() -> str:
    return DOC.split("```mermaid", 1)[1].split("```", 1)[0]


def _node_packages() -> dict[str, str]:
    """Mermaid node id -> dotted package, from the subgraph a node sits in and its label."""
    nodes: dict[str, str] = {}
    top = None
    for line in _mermaid().splitlines():
        line = line.strip()
        if m := re.match(r"subgraph (\w+)\[", line):
            top = m.group(1)
        elif line == "end":
            top = None
        elif top and (m := re.match(r'(\w+)\["([^"]+)"\]', line)):
            label = m.group(2).split(" (")[0].rstrip("/")
            if re.fullmatch(r"\w+", label):  # "models, refs, window, text" names no single package
                nodes[m.group(1)] = f"{top}.{label}"
    for t in TOPS:
        nodes[t] = t
    return nodes


def _modules(package: str) -> list[Path]:
    base = ROOT / Path(*package.split("."))
    return sorted(base.rglob("*.py")) if base.is_dir() else [base.with_suffix(".py")]


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_every_named_path_exists() -> None:
    named = set(re.findall(r"`((?:analysis|bot|adapters)/[\w/.]*)", DOC))
    assert len(named) > 20
    missing = []
    for ref in named:
        path = ROOT / ref
        # `bot/app.open_source` names a function in bot/app.py; `bot/digest/surface` a module
        candidates = [path, path.with_suffix(".py"), ROOT / (ref.rsplit(".", 1)[0] + ".py")]
        if not any(c.exists() for c in candidates):
            missing.append(ref)
    assert missing == []


def test_every_package_is_on_the_page() -> None:
    packages = {
        str(p.parent.relative_to(ROOT)) + "/"
        for top in TOPS
        for p in (ROOT / top).rglob("__init__.py")
        if p.parent != ROOT / top and "__pycache__" not in p.parts
    }
    assert packages, "no packages found"
    assert sorted(p for p in packages if f"`{p}`" not in DOC) == []


def test_every_arrow_is_a_real_import() -> None:
    nodes = _node_packages()
    arrows = []
    for line in _mermaid().splitlines():
        if "-->" not in line or ".->" in line:
            continue
        left, right = (s.strip() for s in line.split("-->"))
        arrows += [(left, r.strip()) for r in right.split("&")]
    assert len(arrows) > 10
    wrong = []
    for src, dst in arrows:
        if src not in nodes or dst not in nodes:
            continue
        target = nodes[dst]
        if not any(
            imp == target or imp.startswith(target + ".")
            for module in _modules(nodes[src])
            for imp in _imports(module)
        ):
            wrong.append(f"{nodes[src]} -> {target}")
    assert wrong == []


def test_bot_layers_are_the_enforced_ones() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c.get("containers") == ["bot"])
    line = next(ln for ln in DOC.splitlines() if ln.startswith("`cli` →"))
    on_page = [part.strip().strip(".").replace("`", "") for part in line.split("→")]
    assert on_page == contract["layers"]


def test_long_modules_say_why() -> None:
    """Issue 20: no module over ~400 lines without a reason written at its top."""
    unexplained = []
    for top in TOPS:
        for path in (ROOT / top).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if text.count("\n") > 400:
                doc = ast.get_docstring(ast.parse(text)) or ""
                if "Over 400 lines because" not in doc:
                    unexplained.append(str(path.relative_to(ROOT)))
    assert unexplained == []
