"""Something built once per test run and only read afterwards (wheels, a venv), shared by the parallel workers
(pytest-xdist: each runs the session and module fixtures itself)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from node_tools import install_lock

__all__ = ["built_distributions", "built_once"]

ROOT = Path(__file__).resolve().parents[2]
UV = os.environ.get("UV") or shutil.which("uv") or "uv"


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name`` in this run's temporary folder, filled by ``build(folder)`` by whichever worker asks
    first (the others wait for it); rebuilt when a build failed half-way."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, shared by its workers (each has its own below it)
    folder = base / name
    with install_lock(folder):
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            build(folder)
            (folder / ".built").touch()
    return folder


def built_distributions(factory: pytest.TempPathFactory) -> Path:
    """Every sdist and wheel of the workspace (``uv build --all-packages``: each wheel built from its sdist),
    built once per run for every test that reads or installs them."""

    def build(out: Path) -> None:
        subprocess.run(
            [UV, "build", "--all-packages", "--quiet", "--out-dir", str(out)],
            cwd=ROOT,
            check=True,
            timeout=600,
            capture_output=True,
        )

    return built_once(factory, "dist", build)
