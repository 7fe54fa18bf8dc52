"""The emulator's pytest plugin is opt-in: installing the emulator changes no one else's test sessions."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "agents_a365.emulator.pytest_plugin"


def test_no_pytest11_entry_point() -> None:
    project = tomllib.loads((ROOT / "packages/agents-a365-emulator/pyproject.toml").read_text())["project"]
    assert "pytest11" not in project.get("entry-points", {})
    installed = importlib.metadata.distribution("agents-a365-emulator").entry_points
    assert not [e for e in installed if e.group == "pytest11"]


def test_this_repository_loads_it_explicitly() -> None:
    assert PLUGIN in (ROOT / "tests/conftest.py").read_text()
    assert f"-p {PLUGIN}" in (ROOT / "docs/contract_example/pytest.ini").read_text()
    assert PLUGIN in (ROOT / "packages/agents-a365-emulator/README.md").read_text()
