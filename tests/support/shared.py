"""Something built once per test run and only read afterwards (wheels, a venv), shared by the parallel workers
(pytest-xdist: each runs the session and module fixtures itself)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from node_tools import install_lock

__all__ = ["built_once"]


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
