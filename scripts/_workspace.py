"""What the release scripts know about the workspace: its members, their versions and dependencies.

Shared by scripts/release.py, check_changelogs.py, check_min_versions.py, compat_matrix.py and
affected_packages.py; stdlib (+ ``packaging``) only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
# `uv run` exports the path of the uv that started it; a pip-installed uv may not be on PATH.
UV = os.environ.get("UV") or shutil.which("uv") or "uv"

# short name -> (folder under packages/, the test folders that are "that package's tests")
_MEMBERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "runtime": ("agents-a365-runtime", ("tests/runtime",)),
    "tooling": ("agents-a365-tooling", ("tests/tooling",)),
    "langchain": ("tooling-extensions-langchain", ("tests/langchain", "tests/contract")),
    "openai": ("tooling-extensions-openai", ("tests/openai", "tests/contract")),
    "emulator": ("agents-a365-emulator", ("tests/emulator",)),
}


@dataclass(frozen=True)
class Member:
    short: str
    folder: Path
    tests: tuple[str, ...]

    @property
    def pyproject(self) -> dict:  # type: ignore[type-arg]
        return tomllib.loads((self.folder / "pyproject.toml").read_text(encoding="utf-8"))

    @property
    def distribution(self) -> str:
        return str(self.pyproject["project"]["name"])

    @property
    def version(self) -> str:
        return str(self.pyproject["project"]["version"])

    @property
    def requirements(self) -> list[Requirement]:
        return [Requirement(r) for r in self.pyproject["project"].get("dependencies", [])]

    @property
    def changelog(self) -> Path:
        return self.folder / "CHANGELOG.md"

    @property
    def import_name(self) -> str:
        src = self.folder / "src"
        typed = sorted(p.parent for p in src.rglob("py.typed"))
        return ".".join(typed[0].relative_to(src).parts)

    @property
    def wheel_stem(self) -> str:
        return self.distribution.replace("-", "_")


def members(root: Path = ROOT) -> dict[str, Member]:
    return {
        short: Member(short, root / "packages" / folder, tests) for short, (folder, tests) in _MEMBERS.items()
    }


def find_member(name: str, root: Path = ROOT) -> Member:
    """By short name (``openai``), distribution or folder name."""
    for member in members(root).values():
        if name in (member.short, member.distribution, member.folder.name):
            return member
    raise SystemExit(f"unknown package {name!r}: one of {', '.join(_MEMBERS)} (or a distribution name)")


def workspace_dependents(member: Member, root: Path = ROOT) -> dict[str, Requirement]:
    """Every workspace member that depends on ``member`` -> its requirement on it."""
    found = {}
    for other in members(root).values():
        for req in other.requirements:
            if req.name == member.distribution:
                found[other.distribution] = req
    return found


def git(*args: str, cwd: Path = ROOT) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def release_tags(distribution: str, root: Path = ROOT) -> list[tuple[Version, str]]:
    """``<distribution>==<version>`` tags reachable from HEAD, oldest first."""
    tags = git("tag", "--list", f"{distribution}==*", "--merged", "HEAD", cwd=root).split()
    return sorted((Version(t.split("==", 1)[1]), t) for t in tags)


def last_release_tag(distribution: str, root: Path = ROOT) -> str | None:
    tags = release_tags(distribution, root)
    return tags[-1][1] if tags else None


_HEADING = re.compile(r"^## +(.+?)\s*$", re.MULTILINE)


def changelog_sections(text: str) -> dict[str, str]:
    """``## <title>`` -> body (stripped), in order."""
    matches = list(_HEADING.finditer(text))
    sections = {}
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        sections[match.group(1)] = text[match.end() : end].strip()
    return sections


def unreleased_notes(text: str) -> str | None:
    """The body of the "Unreleased" section; None when the changelog has none."""
    return changelog_sections(text).get("Unreleased")
