"""scripts/release.py in a temporary clone: dry run, a real release, ranges to widen, refusals."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.version import Version

from release.release_support import ROOT, git, script

RUNTIME = "packages/agents-a365-runtime"


def version(repo: Path, folder: str = RUNTIME) -> str:
    return tomllib.loads((repo / folder / "pyproject.toml").read_text())["project"]["version"]  # type: ignore[no-any-return]


# The tests release runtime from whatever version it is at (0.2.0.dev0 between releases: "0.2.0" is next).
CURRENT = Version(version(ROOT))
NEXT = (
    CURRENT.base_version if CURRENT.is_prerelease else f"{CURRENT.major}.{CURRENT.minor}.{CURRENT.micro + 1}"
)
AFTER = f"{Version(NEXT).major}.{Version(NEXT).minor}.{Version(NEXT).micro + 1}"
NEXT_MINOR = f"{CURRENT.major}.{CURRENT.minor + 1}.0"


def add_note(repo: Path, folder: str, note: str) -> None:
    changelog = repo / folder / "CHANGELOG.md"
    changelog.write_text(changelog.read_text().replace("## Unreleased\n", f"## Unreleased\n\n- {note}\n", 1))


def test_dry_run_builds_and_smoke_tests_but_writes_nothing(clone: Path) -> None:
    head, tags = git(clone, "rev-parse", "HEAD"), git(clone, "tag")
    done = script("release.py", "runtime", NEXT, "--dry-run", "--root", clone)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        f"built agents_a365_runtime-{NEXT}-py3-none-any.whl, agents_a365_runtime-{NEXT}.tar.gz" in done.stdout
    )
    assert "`import agents_a365.runtime` OK" in done.stdout
    assert git(clone, "status", "--porcelain") == ""
    assert (git(clone, "rev-parse", "HEAD"), git(clone, "tag")) == (head, tags)
    assert version(clone) == str(CURRENT)
    assert not (clone / "dist").exists()


def test_release_bumps_moves_notes_commits_and_tags(clone: Path) -> None:
    add_note(clone, RUNTIME, "Something users should know.")
    git(clone, "commit", "-qam", "note")
    done = script("release.py", "runtime", NEXT, "--date", "2026-12-01", "--root", clone)
    assert done.returncode == 0, done.stdout + done.stderr

    assert version(clone) == NEXT
    changelog = (clone / RUNTIME / "CHANGELOG.md").read_text()
    assert changelog.index(f"## Unreleased\n\n## {NEXT} - 2026-12-01\n\n") < changelog.index("## 0.1.0 - ")
    assert "Something users should know." in changelog.split(f"## {NEXT}")[1].split("## 0.1.0")[0]
    assert f'name = "agents-a365-runtime"\nversion = "{NEXT}"' in (clone / "uv.lock").read_text()
    assert git(clone, "status", "--porcelain") == ""
    assert git(clone, "tag", "--points-at", "HEAD").split() == [f"agents-a365-runtime=={NEXT}"]
    assert git(clone, "log", "-1", "--format=%s") == f"Release agents-a365-runtime=={NEXT}\n"
    assert sorted(p.name for p in (clone / f"dist/agents_a365_runtime-{NEXT}").iterdir()) == [
        f"agents_a365_runtime-{NEXT}-py3-none-any.whl",
        f"agents_a365_runtime-{NEXT}.tar.gz",
    ]
    # Nothing left to release: the Unreleased section is empty now.
    again = script("release.py", "runtime", AFTER, "--dry-run", "--root", clone)
    assert again.returncode == 1
    assert "Unreleased section is empty" in again.stderr


def test_a_version_a_dependent_rejects_names_the_ranges_to_widen(clone: Path) -> None:
    done = script("release.py", "runtime", NEXT_MINOR, "--root", clone)
    assert done.returncode == 1
    for dependent in (
        "agents-a365-tooling",
        "agents-a365-tooling-extensions-langchain",
        "agents-a365-tooling-extensions-openai",
    ):
        assert f"{dependent} requires agents-a365-runtime" in done.stderr
    assert done.stderr.count(": widen it") == 3
    assert git(clone, "status", "--porcelain") == ""
    assert version(clone) == str(CURRENT)


def test_refusals(clone: Path) -> None:
    lower = script("release.py", "runtime", "0.1.0", "--dry-run", "--root", clone)
    assert "is not higher than the current" in lower.stderr
    (clone / RUNTIME / "stray.txt").write_text("x")
    dirty = script("release.py", "runtime", NEXT, "--root", clone)
    assert "uncommitted changes" in dirty.stderr
    assert not git(clone, "tag", "--list", f"agents-a365-runtime=={NEXT}")
