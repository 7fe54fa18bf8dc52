"""scripts/release.py in a temporary clone: dry run, a real release, ranges to widen, refusals."""

from __future__ import annotations

import tomllib
from pathlib import Path

from release.release_support import git, script

RUNTIME = "packages/agents-a365-runtime"


def version(repo: Path, folder: str = RUNTIME) -> str:
    return tomllib.loads((repo / folder / "pyproject.toml").read_text())["project"]["version"]  # type: ignore[no-any-return]


def add_note(repo: Path, folder: str, note: str) -> None:
    changelog = repo / folder / "CHANGELOG.md"
    changelog.write_text(changelog.read_text().replace("## Unreleased\n", f"## Unreleased\n\n- {note}\n", 1))


def test_dry_run_builds_and_smoke_tests_but_writes_nothing(clone: Path) -> None:
    head, tags = git(clone, "rev-parse", "HEAD"), git(clone, "tag")
    done = script("release.py", "runtime", "0.1.1", "--dry-run", "--root", clone)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "built agents_a365_runtime-0.1.1-py3-none-any.whl, agents_a365_runtime-0.1.1.tar.gz" in done.stdout
    assert "`import agents_a365.runtime` OK" in done.stdout
    assert git(clone, "status", "--porcelain") == ""
    assert (git(clone, "rev-parse", "HEAD"), git(clone, "tag")) == (head, tags)
    assert version(clone) == "0.1.0"
    assert not (clone / "dist").exists()


def test_release_bumps_moves_notes_commits_and_tags(clone: Path) -> None:
    add_note(clone, RUNTIME, "Something users should know.")
    git(clone, "commit", "-qam", "note")
    done = script("release.py", "runtime", "0.1.1", "--date", "2026-12-01", "--root", clone)
    assert done.returncode == 0, done.stdout + done.stderr

    assert version(clone) == "0.1.1"
    changelog = (clone / RUNTIME / "CHANGELOG.md").read_text()
    assert changelog.index("## Unreleased\n\n## 0.1.1 - 2026-12-01\n\n") < changelog.index("## 0.1.0 - ")
    assert "Something users should know." in changelog.split("## 0.1.1")[1].split("## 0.1.0")[0]
    assert 'name = "agents-a365-runtime"\nversion = "0.1.1"' in (clone / "uv.lock").read_text()
    assert git(clone, "status", "--porcelain") == ""
    assert git(clone, "tag", "--points-at", "HEAD").split() == ["agents-a365-runtime==0.1.1"]
    assert git(clone, "log", "-1", "--format=%s") == "Release agents-a365-runtime==0.1.1\n"
    assert sorted(p.name for p in (clone / "dist/agents_a365_runtime-0.1.1").iterdir()) == [
        "agents_a365_runtime-0.1.1-py3-none-any.whl",
        "agents_a365_runtime-0.1.1.tar.gz",
    ]
    # Nothing left to release: the Unreleased section is empty now.
    again = script("release.py", "runtime", "0.1.2", "--dry-run", "--root", clone)
    assert again.returncode == 1
    assert "Unreleased section is empty" in again.stderr


def test_a_version_a_dependent_rejects_names_the_ranges_to_widen(clone: Path) -> None:
    done = script("release.py", "runtime", "0.2.0", "--root", clone)
    assert done.returncode == 1
    for dependent in (
        "agents-a365-tooling",
        "agents-a365-tooling-extensions-langchain",
        "agents-a365-tooling-extensions-openai",
    ):
        assert f"{dependent} requires agents-a365-runtime<0.2,>=0.1 : widen it" in done.stderr
    assert git(clone, "status", "--porcelain") == ""
    assert version(clone) == "0.1.0"


def test_refusals(clone: Path) -> None:
    lower = script("release.py", "runtime", "0.1.0", "--dry-run", "--root", clone)
    assert "is not higher than the current" in lower.stderr
    (clone / RUNTIME / "stray.txt").write_text("x")
    dirty = script("release.py", "runtime", "0.1.1", "--root", clone)
    assert "uncommitted changes" in dirty.stderr
    assert not git(clone, "tag", "--list", "agents-a365-runtime==0.1.1")
