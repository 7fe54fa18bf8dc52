from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from release.release_support import ROOT, git


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A clone of this repository's HEAD with its release tags: what a maintainer starts from."""
    repo = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(repo)], check=True, capture_output=True)
    git(repo, "config", "user.email", "release-test@example.invalid")
    git(repo, "config", "user.name", "Release Test")
    git(repo, "config", "commit.gpgsign", "false")
    git(repo, "config", "tag.gpgsign", "false")
    return repo
