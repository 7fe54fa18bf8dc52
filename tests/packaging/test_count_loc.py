"""scripts/count_loc.py: what counts as a code line, and the --max gate CI runs."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts/count_loc.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("count_loc", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SAMPLE = '''"""Module docstring,
over two lines."""

import os  # a trailing comment: the line still counts

# a comment line


class Thing:
    """Class docstring."""

    limit = 3
    """An attribute docstring (PEP 257): documentation, not code."""

    text = """a multi-line string
that is not a docstring
counts every line"""

    def __init__(self) -> None:
        self.size = 1
        """An attribute docstring in __init__."""

    def method(self) -> str:
        """Method
        docstring."""
        return (
            os.sep
        )


async def run() -> None:
    x = 1
    "a bare string after the first statement is not a docstring"
'''
# Code lines: import; class; limit; text (3 lines); def __init__; self.size; def; return (3 lines); async def;
# x = 1; the bare string (in a function other than __init__: not an attribute docstring).
EXPECTED = 1 + 1 + 1 + 3 + 1 + 1 + 1 + 3 + 1 + 1 + 1


def test_counts_code_without_docstrings_comments_and_blank_lines() -> None:
    assert load().count_source(SAMPLE) == EXPECTED


def test_max_gate_and_per_folder_output(tmp_path: Path) -> None:
    folder = tmp_path / "pkg" / "src"
    folder.mkdir(parents=True)
    (folder / "a.py").write_text(SAMPLE)
    (folder / "b.py").write_text("# only a comment\n\nx = 1\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(SCRIPT), *args, str(folder)], capture_output=True, text=True, check=False
        )

    ok = run("--max", str(EXPECTED + 1))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.split() == [str(EXPECTED + 1), "pkg", str(EXPECTED + 1), "total"]
    over = run("--max", str(EXPECTED))
    assert over.returncode == 1
    assert "above the limit" in over.stderr


def test_ci_prints_the_library_size_with_its_limit() -> None:
    lint = yaml.safe_load((ROOT / ".github/workflows/ci.yml").read_text())["jobs"]["lint"]
    assert "uv run --frozen python scripts/count_loc.py --max 5855" in [s.get("run") for s in lint["steps"]]
