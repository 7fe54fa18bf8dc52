"""Each package README states the requirements its pyproject declares (issue 24: the LangChain README said
``langgraph>=1.0`` while the package required 1.1.5).

Every backticked requirement in a package README (```name>=x```, ```name>=x,<y```) must name a dependency of
that package (a direct one or an extra's) and state exactly the bounds its pyproject declares; every
third-party dependency must be stated; "Python 3.N+" must be the ``requires-python`` floor.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file())
# `name op version[,op version]` inside backticks
STATED = re.compile(r"`([A-Za-z0-9][A-Za-z0-9._\-]*(?:\[[^\]`]*\])?\s*(?:[<>=!~]=?)\s*[^`\s]+)`")
PYTHON = re.compile(r"\bPython (3\.\d+)\+")


def declared(project: dict) -> dict[str, Requirement]:  # type: ignore[type-arg]
    found = [Requirement(r) for r in project.get("dependencies", [])]
    for extra in project.get("optional-dependencies", {}).values():
        found += [Requirement(r) for r in extra]
    return {canonicalize_name(r.name): r for r in found}


def stated(readme: str) -> list[Requirement]:
    found = []
    for text in STATED.findall(readme):
        try:
            found.append(Requirement(text))
        except InvalidRequirement:
            continue
    return found


def mismatches(readme: str, project: dict) -> list[str]:  # type: ignore[type-arg]
    deps = declared(project)
    problems = []
    for req in stated(readme):
        name = canonicalize_name(req.name)
        if name not in deps:
            problems.append(f"states `{req}` but the package does not depend on {req.name}")
        elif req.specifier != deps[name].specifier:
            problems.append(f"states `{req}`, the pyproject declares `{deps[name]}`")
    mentioned = {canonicalize_name(r.name) for r in stated(readme)}
    for name, req in deps.items():
        if not name.startswith("agents-a365") and name not in mentioned:
            problems.append(f"does not state `{req}`")
    floor = project["requires-python"].removeprefix(">=")
    pythons = PYTHON.findall(readme)
    if pythons != [floor]:
        problems.append(
            f"states Python {pythons or 'nowhere'}; requires-python is {project['requires-python']}"
        )
    return problems


@pytest.mark.parametrize("folder", FOLDERS)
def test_readme_states_the_declared_requirements(folder: str) -> None:
    package = ROOT / "packages" / folder
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    assert mismatches((package / "README.md").read_text(), project) == []


PROJECT = {
    "requires-python": ">=3.11",
    "dependencies": ["langgraph>=1.1.5", "mcp>=1.30,<2", "agents-a365-tooling>=0.2,<0.3"],
    "optional-dependencies": {"server": ["starlette>=0.40"]},
}


def test_checker_finds_each_mismatch() -> None:
    good = "Requires Python 3.11+, `langgraph>=1.1.5`, `mcp>=1.30,<2`; extra `starlette>=0.40`."
    assert mismatches(good, PROJECT) == []
    assert mismatches(good.replace("1.1.5", "1.0"), PROJECT) == [
        "states `langgraph>=1.0`, the pyproject declares `langgraph>=1.1.5`"
    ]
    assert mismatches(good.replace("`mcp>=1.30,<2`", "`mcp<2`"), PROJECT) == [
        "states `mcp<2`, the pyproject declares `mcp<2,>=1.30`"
    ]
    assert mismatches(good + " `httpx>=0.27`", PROJECT) == [
        "states `httpx>=0.27` but the package does not depend on httpx"
    ]
    assert mismatches(good.replace(", `langgraph>=1.1.5`", ""), PROJECT) == [
        "does not state `langgraph>=1.1.5`"
    ]
    assert mismatches(good.replace("3.11", "3.10"), PROJECT) == [
        "states Python ['3.10']; requires-python is >=3.11"
    ]
