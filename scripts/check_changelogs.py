"""Fail when a package's code changed since its last release and its changelog's Unreleased did not.

    uv run python scripts/check_changelogs.py [PACKAGE ...]

For each workspace package (all by default): its last release tag is the highest
``<distribution>==<version>`` tag reachable from HEAD. When anything under its ``src/`` or its
``pyproject.toml`` differs between that tag and the working tree, the "## Unreleased" section of
its ``CHANGELOG.md`` must differ too (and not be empty). A package without a release tag only needs
the section. Exit status 1 lists every offender.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from _workspace import ROOT, Member, find_member, git, last_release_tag, members, unreleased_notes


def _at(ref: str, path: Path, root: Path) -> str:
    done = subprocess.run(
        ["git", "show", f"{ref}:{path.relative_to(root).as_posix()}"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout if done.returncode == 0 else ""


def problems(member: Member, root: Path) -> list[str]:
    name = member.distribution
    if not member.changelog.is_file():
        return [f"{name}: no CHANGELOG.md"]
    notes = unreleased_notes(member.changelog.read_text(encoding="utf-8"))
    if notes is None:
        return [f"{name}: CHANGELOG.md has no '## Unreleased' section"]
    tag = last_release_tag(name, root)
    if tag is None:
        return []
    code = [member.folder / "src", member.folder / "pyproject.toml"]
    changed = git(
        "diff", "--name-only", tag, "--", *(str(p.relative_to(root)) for p in code), cwd=root
    ).split()
    if not changed:
        return []
    before = unreleased_notes(_at(tag, member.changelog, root)) or ""
    if not notes or notes == before:
        shown = ", ".join(changed[:3]) + (" …" if len(changed) > 3 else "")
        return [
            f"{name}: code changed since {tag} ({shown}) but the Unreleased section of "
            f"{member.changelog.relative_to(root)} did not: add an entry"
        ]
    return []


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("packages", nargs="*", help="short names or distributions (default: all)")
    parser.add_argument("--root", type=Path, default=root, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root = args.root.resolve()
    chosen = [find_member(p, root) for p in args.packages] or list(members(root).values())
    found = [p for member in chosen for p in problems(member, root)]
    for problem in found:
        print(problem)
    if not found:
        print(f"changelogs OK ({len(chosen)} packages)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
