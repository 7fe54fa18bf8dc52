"""scripts/check_changelogs.py against a temporary clone with release tags."""

from __future__ import annotations

from pathlib import Path

from release.release_support import ROOT, git, script

SOURCE = "packages/agents-a365-tooling/src/agents_a365/tooling/__init__.py"
CHANGELOG = "packages/agents-a365-tooling/CHANGELOG.md"


def test_this_repository_passes() -> None:
    done = script("check_changelogs.py")
    assert done.returncode == 0, done.stdout
    assert "changelogs OK (5 packages)" in done.stdout


def test_code_changed_since_the_release_tag_needs_an_unreleased_entry(clone: Path) -> None:
    # A fresh release of tooling at HEAD: the baseline for the check.
    git(clone, "tag", "agents-a365-tooling==0.1.5")
    assert script("check_changelogs.py", "tooling", "--root", clone).returncode == 0

    source = clone / SOURCE
    source.write_text(source.read_text() + "\n# a behaviour change\n")
    done = script("check_changelogs.py", "--root", clone)
    assert done.returncode == 1
    assert done.stdout.startswith("agents-a365-tooling: code changed since agents-a365-tooling==0.1.5")
    assert done.stdout.count("\n") == 1  # only the package that changed

    # Committing does not help; an Unreleased entry does.
    git(clone, "commit", "-qam", "change")
    assert script("check_changelogs.py", "--root", clone).returncode == 1
    changelog = clone / CHANGELOG
    changelog.write_text(changelog.read_text().replace("## Unreleased\n", "## Unreleased\n\n- Changed.\n", 1))
    assert script("check_changelogs.py", "--root", clone).returncode == 0


def test_the_highest_reachable_tag_counts(clone: Path) -> None:
    # A tag on an older commit is ignored when a newer release exists.
    old = git(clone, "rev-list", "--max-parents=0", "HEAD").split()[0]
    git(clone, "tag", "agents-a365-tooling==0.1.9", "HEAD")
    git(clone, "tag", "agents-a365-tooling==0.1.2", old)
    assert script("check_changelogs.py", "tooling", "--root", clone).returncode == 0


def test_a_missing_unreleased_section_fails(clone: Path) -> None:
    changelog = clone / CHANGELOG
    changelog.write_text(changelog.read_text().replace("## Unreleased", "## Next"))
    done = script("check_changelogs.py", "--root", clone)
    assert done.returncode == 1
    assert "agents-a365-tooling: CHANGELOG.md has no '## Unreleased' section" in done.stdout
    assert clone != ROOT
