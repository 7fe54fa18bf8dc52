"""The warm-turn benchmarks' plumbing at toy size (issue 26): ``warm_turn.py`` (both orchestrators) and
``function_tools.py`` (both ways of giving the Agents SDK the tools) run their turns in child processes against the
emulator and report every row. No timing is asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _rows(script: str) -> list[list[str]]:
    """The table rows ``scripts/bench/<script>`` prints at toy size (one run, 2 users, 1 round, 1 and 2 servers)."""
    command = [sys.executable, str(ROOT / "scripts/bench" / script), "--servers=1,2", "--runs=1"]
    command += ["--users=2", "--rounds=1"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return [
        [c.strip() for c in line.split("|")[1:-1]]
        for line in done.stdout.splitlines()
        if line.startswith("| ")
    ][1:]


@pytest.mark.slow
def test_warm_turn_benchmark_reports_every_orchestrator_and_count() -> None:
    rows = _rows("warm_turn.py")
    assert [(r[0], r[1]) for r in rows] == [
        ("langchain", "1"),
        ("langchain", "2"),
        ("openai", "1"),
        ("openai", "2"),
    ]
    for row in rows:
        assert row[2].endswith(" ms")
        assert float(row[2].split()[0]) > 0


@pytest.mark.slow
def test_function_tools_benchmark_reports_both_modes_for_every_count() -> None:
    rows = _rows("function_tools.py")
    assert [r[0] for r in rows] == ["1", "2"]
    for row in rows:
        assert row[1].endswith(" ms")
        assert row[2].endswith(" ms")
        assert float(row[3]) > 0
