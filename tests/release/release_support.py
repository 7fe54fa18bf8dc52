"""Helpers of the release tests: run a script as CI does, git in a clone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
UV = os.environ.get("UV") or shutil.which("uv") or "uv"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def script(
    name: str, *args: str | Path, cwd: Path = ROOT, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run scripts/<name> with this interpreter (the workspace venv), as CI does."""
    env = {**os.environ, "UV": UV}
    return subprocess.run(
        [sys.executable, str(SCRIPTS / name), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )
