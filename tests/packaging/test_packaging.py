"""Packaging rules: dependency direction, typed packages, wheels that install on their own."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from support.shared import built_distributions

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ROOT / "packages"
CORE = {
    "agents-a365-runtime": PACKAGES / "agents-a365-runtime/src/agents_a365/runtime",
    "agents-a365-tooling": PACKAGES / "agents-a365-tooling/src/agents_a365/tooling",
}
FRAMEWORKS = ("langchain", "langchain_core", "langchain_mcp_adapters", "langgraph", "agents", "openai")


def imported_roots(folder: Path) -> set[str]:
    roots: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("name", sorted(CORE))
def test_core_packages_never_import_an_orchestrator(name: str) -> None:
    assert imported_roots(CORE[name]).isdisjoint(FRAMEWORKS)


def test_runtime_does_not_import_tooling() -> None:
    sources = " ".join(p.read_text() for p in CORE["agents-a365-runtime"].rglob("*.py"))
    assert "agents_a365.tooling" not in sources


def dependencies(folder: str) -> list[str]:
    data = tomllib.loads((PACKAGES / folder / "pyproject.toml").read_text())
    return [
        d.split(";")[0].split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip()
        for d in data["project"]["dependencies"]
    ]


def test_dependencies_point_one_way() -> None:
    assert not any(d.startswith("agents-a365") for d in dependencies("agents-a365-runtime"))
    assert "agents-a365-runtime" in dependencies("agents-a365-tooling")
    for ext in ("tooling-extensions-langchain", "tooling-extensions-openai"):
        deps = dependencies(ext)
        assert "agents-a365-tooling" in deps
        assert "agents-a365-emulator" not in deps
    assert not any(d.startswith("agents-a365") for d in dependencies("agents-a365-emulator"))


@pytest.mark.parametrize("folder", sorted(p.name for p in PACKAGES.iterdir() if p.is_dir()))
def test_every_member_is_typed_documented_and_namespaced(folder: str) -> None:
    member = PACKAGES / folder
    assert (member / "README.md").is_file()
    assert (member / "CHANGELOG.md").is_file()
    assert list(member.glob("src/agents_a365/**/py.typed"))
    assert not (member / "src/agents_a365/__init__.py").exists(), "agents_a365 must stay a namespace package"


@pytest.mark.slow
def test_wheels_build_and_core_installs_without_orchestrators(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    wheels = built_distributions(tmp_path_factory)  # built once per run for every test that installs them
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts/check_wheels.py"), "--wheels", str(wheels)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no langchain/openai-agents" in done.stdout
    assert "wheels OK" in done.stdout
