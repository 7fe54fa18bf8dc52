"""docs/contract.md's worked example runs as a third party would run it: outside this repository's tests."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agents_a365.emulator.contract import SCENARIOS

pytestmark = pytest.mark.slow  # started first on the parallel workers (tests/conftest.py)

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "contract_example"


def test_the_worked_example_passes_the_contract_suite(tmp_path: Path) -> None:
    for name in ("test_my_extension.py", "pytest.ini"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing of this repository's tests
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=tmp_path,
        env={**env, "OPENAI_AGENTS_DISABLE_TRACING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed is not None
    # The whole suite ran: a test per scenario, ids, argument errors, 3 failures, 3 header rules.
    assert int(passed.group(1)) == len(SCENARIOS) + 8
