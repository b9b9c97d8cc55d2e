"""docs/samples/ holds reports digestbot generated (docs/samples/generate.py), not hand-written text:
regenerating them gives the same reports, but for the time they were generated."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "docs" / "samples"
_GENERATED_AT = re.compile(r"(Generated|生成时间) \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")


def _load_generator():
    spec = importlib.util.spec_from_file_location("generate_samples", SAMPLES / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _without_time(text: str) -> str:
    return _GENERATED_AT.sub(r"\1 <time>", text)


def test_samples_are_what_digestbot_generates_today(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    fresh = _load_generator().generate(tmp_path)
    assert [p.name for p in fresh] == ["report.en.md", "report.zh.md"]
    for path in fresh:
        committed = (SAMPLES / path.name).read_text(encoding="utf-8")
        assert _without_time(path.read_text(encoding="utf-8")) == _without_time(committed), (
            f"docs/samples/{path.name} is stale: run .venv/bin/python docs/samples/generate.py"
        )
    assert "每日更新报告" in (SAMPLES / "report.zh.md").read_text(encoding="utf-8")
