"""CI tests the extensions against the newest releases their ranges allow and against their floors (issue 24)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_ci_runs_each_extension_at_its_floors_and_at_the_newest_releases() -> None:
    job = yaml.safe_load((ROOT / ".github/workflows/ci.yml").read_text())["jobs"]["dependency-bounds"]
    assert "needs" not in job, "runs whatever changed: an upstream release breaks unchanged code"
    matrix = job["strategy"]["matrix"]
    assert matrix["package"] == ["langchain", "openai"]
    assert matrix["bound"] == ["lowest", "newest"]
    runs = [step.get("run", "") for step in job["steps"]]
    assert "uv run --frozen python scripts/check_min_versions.py ${{ matrix.package }}" in runs
    assert "uv run --frozen python scripts/check_min_versions.py ${{ matrix.package }} --newest" in runs
    assert any("test_mcp2_fresh_venv.py" in r for r in runs)  # the OpenAI extension on mcp 2.x


def test_check_min_versions_offers_the_newest_mode() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts/check_min_versions.py"), "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "--newest" in done.stdout
    assert "--resolution highest" in done.stdout
