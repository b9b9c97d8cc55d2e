"""Issue 18 item 8: what ships is what is tested. The image's Python is the tests' Python, pinned by
digest; one lock file pins every dependency for the image and CI, in step with pyproject.toml; the
wheel carries the chart's CJK font and the deploy guide the unit's Documentation= points at; the
compose pins are exact versions; no port is exposed that nothing serves; every `--format` help that
points at docs/json.md finds its schema there; the README's test command says what it costs."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from tests.deploy.test_deploy_files import instructions

ROOT = Path(__file__).resolve().parents[2]


def pins(lock: str) -> dict[str, str]:
    found = {}
    for line in (ROOT / lock).read_text(encoding="utf-8").splitlines():
        if m := re.match(r"^([A-Za-z0-9_.-]+)==([^\s;]+)", line):
            found[canonical(m.group(1))] = m.group(2)
    return found


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_image_runs_the_python_the_tests_run_pinned_by_digest():
    bases = [arg.split()[0] for op, arg in instructions() if op == "FROM"]
    assert len(bases) == 2 and len(set(bases)) == 1  # build and runtime stages on one base
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert re.fullmatch(rf"python:{re.escape(here)}-slim@sha256:[0-9a-f]{{64}}", bases[0]), bases[0]
    ruff = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]
    assert ruff["target-version"] == "py" + here.replace(".", "")


def test_no_port_is_exposed_that_nothing_serves():
    exposed = [p for op, arg in instructions() if op == "EXPOSE" for p in arg.split()]
    assert exposed == ["9100"]  # /metrics and /healthz; Socket Mode needs no port


@pytest.mark.parametrize(
    ("lock", "extras"), [("requirements.lock", ()), ("requirements-test.lock", ("test",))]
)
def test_the_lock_files_pin_every_dependency_of_pyproject(lock, extras):
    locked = pins(lock)
    wanted = list(project()["dependencies"]) + [
        d for e in extras for d in project()["optional-dependencies"][e]
    ]
    for text in wanted:
        req = Requirement(text)
        name = canonical(req.name)
        assert name in locked, f"{req.name} is not in {lock}: regenerate it (command at its top)"
        assert req.specifier.contains(locked[name], prereleases=True), (
            f"{lock}: {name}=={locked[name]} vs {req}"
        )


def test_ci_and_the_image_install_the_same_pins():
    runtime, test = pins("requirements.lock"), pins("requirements-test.lock")
    assert {n: v for n, v in test.items() if n in runtime} == runtime
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "-r requirements.lock" in dockerfile and "-r /wheels/requirements.lock" in dockerfile
    assert "--no-deps /wheels/digestbot-" in dockerfile
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    ci = [shlex.split(line) for line in lines if line.strip() and not line.lstrip().startswith("#")]
    installs = [c for c in ci if c[:2] == [".venv/bin/pip", "install"]]
    assert any(c[-2:] == ["-r", "requirements-test.lock"] for c in installs)
    assert any("--no-deps" in c and c[-2:] == ["-e", "."] for c in installs)


def test_the_wheel_ships_the_font_and_the_guide_the_unit_points_at(tmp_path):
    tree = tmp_path / "src"
    for name in ("pyproject.toml", "README.md", "CHANGELOG.md"):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tree / name)
    (tree / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "deploy.md", tree / "docs" / "deploy.md")
    for package in ("analysis", "adapters", "bot"):
        shutil.copytree(ROOT / package, tree / package, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "-w",
            str(tmp_path),
            str(tree),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = tmp_path.glob("digestbot-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "adapters/fonts/NotoSansSC-chart.otf" in names and "adapters/fonts/OFL.txt" in names
    data = [n.split(".data/data/", 1)[1] for n in names if ".data/data/" in n]
    assert "share/doc/digestbot/deploy.md" in data
    unit = (ROOT / "deploy" / "digestbot.service").read_text(encoding="utf-8")
    [documentation] = re.findall(r"^Documentation=file://(\S+)$", unit, re.M)
    # The guide installs into the venv /opt/digestbot: data files land under that prefix.
    assert "python3 -m venv /opt/digestbot" in unit
    assert documentation == "/opt/digestbot/" + "share/doc/digestbot/deploy.md"


def test_compose_pins_exact_versions():
    services = yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))["services"]
    for name in ("ollama", "ollama-pull", "vllm"):
        image = services[name]["image"]
        assert re.fullmatch(r"[\w./-]+:v?\d+\.\d+\.\d+", image), image  # never :latest or a floating tag
        major, minor = (int(x) for x in image.rsplit(":", 1)[1].lstrip("v").split(".")[:2])
        assert (major, minor) >= (0, 24), f"{image}: older than what this guide was tested against"


def test_every_schema_link_in_help_finds_its_schema():
    from click.testing import CliRunner

    from bot.cli.main import cli

    documented = set(
        re.findall(r"^## `digestbot (\w+)", (ROOT / "docs" / "json.md").read_text(encoding="utf-8"), re.M)
    )
    for name in cli.commands:
        text = CliRunner().invoke(cli, [name, "--help"], terminal_width=200).output
        if "docs/json.md" in " ".join(text.split()):
            assert name in documented, f"`digestbot {name} --help` points to a schema docs/json.md lacks"


def test_the_readme_test_command_is_honest_about_time():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"][
        "ini_options"
    ]["addopts"]
    assert "-n auto" in addopts  # the bare `pytest` of the README runs in parallel
    assert "~20 s" not in readme
    assert re.search(r"about \d+ (s|min)[^\n]*on 2 cores", readme)
