"""Release one package of the workspace.

    uv run python scripts/release.py <package> <version> [--dry-run] [--date YYYY-MM-DD]

<package> is a short name (runtime, tooling, langchain, openai, emulator) or a distribution name.
In order, stopping at the first failure:

1. check: the version is higher than the current one, the Unreleased section has notes, and every
   workspace package that depends on this one still accepts the new version (else: which ranges
   to widen); without --dry-run the working tree must be clean;
2. stage: a copy of the package with the version bumped and the Unreleased notes moved under
   ``## <version> - <date>``;
3. build only that package's sdist and wheel (from the staged copy) into ``dist/<distribution>-<version>/``;
4. install the wheel alone into a fresh venv (its dependencies from the index; workspace siblings
   from a local wheelhouse built from this tree) and import it;
5. without --dry-run: write the bump and the changelog (and the member's version in uv.lock),
   commit, and create the tag ``<distribution>==<version>``.

--dry-run does 1-4 in temporary directories and writes, commits and tags nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _workspace import ROOT, UV, Member, find_member, git, members, unreleased_notes, workspace_dependents
from packaging.version import InvalidVersion, Version

IGNORED = shutil.ignore_patterns(".venv", "dist", "build", "__pycache__", "*.egg-info", ".*_cache")


class ReleaseError(SystemExit):
    pass


def step(message: str) -> None:
    print(f"- {message}", flush=True)


def run(*args: str | Path, cwd: Path) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ReleaseError(f"command failed: {' '.join(map(str, args))}\n{done.stdout}\n{done.stderr}")
    return done.stdout


def bump_pyproject(text: str, version: str) -> str:
    new, count = re.subn(r'(?m)^version = "[^"]*"$', f'version = "{version}"', text, count=1)
    if count != 1:
        raise ReleaseError("no version = line in [project]")
    return new


def move_unreleased(text: str, version: str, date: str) -> str:
    """The changelog with the Unreleased notes under ``## <version> - <date>`` and a fresh, empty Unreleased."""
    notes = unreleased_notes(text)
    if not notes:
        raise ReleaseError("the changelog's Unreleased section is empty: nothing to release")
    match = re.search(r"(?m)^## +Unreleased\s*$", text)
    assert match is not None
    rest = text[match.end() :]
    following = re.search(r"(?m)^## ", rest)
    tail = rest[following.start() :] if following else ""
    head = text[: match.start()]
    return f"{head}## Unreleased\n\n## {version} - {date}\n\n{notes}\n" + (f"\n{tail}" if tail else "")


def bump_lock(text: str, distribution: str, version: str) -> str:
    pattern = rf'(\[\[package\]\]\nname = "{re.escape(distribution)}"\nversion = )"[^"]*"'
    return re.sub(pattern, rf'\1"{version}"', text, count=1)


def check_dependents(member: Member, version: Version, root: Path) -> list[str]:
    """One line per workspace dependent whose range rejects ``version``."""
    return [
        f"{dependent} requires {req} : widen it to accept {version} (e.g. "
        f"{member.distribution}>={version.major}.{version.minor},<{version.major}.{version.minor + 1})"
        for dependent, req in workspace_dependents(member, root).items()
        if not req.specifier.contains(version, prereleases=True)
    ]


def sibling_closure(member: Member, root: Path) -> list[Member]:
    """Workspace members ``member`` needs, transitively."""
    every = {m.distribution: m for m in members(root).values()}
    found: dict[str, Member] = {}
    todo = [member]
    while todo:
        for req in todo.pop().requirements:
            if req.name in every and req.name not in found:
                found[req.name] = every[req.name]
                todo.append(every[req.name])
    return list(found.values())


def smoke_test(member: Member, version: str, wheel: Path, work: Path, root: Path) -> None:
    wheelhouse = work / "wheelhouse"
    siblings = sibling_closure(member, root)
    for sibling in siblings:
        run(
            UV,
            "build",
            "--package",
            sibling.distribution,
            "--wheel",
            "--quiet",
            "--out-dir",
            wheelhouse,
            cwd=root,
        )
    venv = work / "venv"
    run(UV, "venv", "--quiet", "--python", sys.executable, venv, cwd=work)
    python = venv / "bin" / "python"
    local = sorted(wheelhouse.glob("*.whl")) if siblings else []
    run(UV, "pip", "install", "--quiet", "--python", python, wheel, *local, cwd=work)
    probe = (
        f"import importlib.metadata as md, {member.import_name} as m; "
        f"assert md.version({member.distribution!r}) == {version!r}, md.version({member.distribution!r}); "
        f"assert 'site-packages' in m.__path__[0], m.__path__; print(m.__name__)"
    )
    run(python, "-c", probe, cwd=work)
    shown = f" + {', '.join(s.distribution for s in siblings)} from the wheelhouse" if siblings else ""
    step(f"fresh venv: {wheel.name}{shown} installs; `import {member.import_name}` OK")


def release(package: str, version_text: str, *, dry_run: bool, date: str, root: Path = ROOT) -> str:
    member = find_member(package, root)
    try:
        version = Version(version_text)
    except InvalidVersion as error:
        raise ReleaseError(f"not a version: {version_text!r}") from error
    current = Version(member.version)
    if version <= current:
        raise ReleaseError(f"{version} is not higher than the current {member.distribution} {current}")
    tag = f"{member.distribution}=={version}"
    if git("tag", "--list", tag, cwd=root).strip():
        raise ReleaseError(f"tag {tag} exists already")
    if not dry_run and git("status", "--porcelain", cwd=root).strip():
        raise ReleaseError("the working tree has uncommitted changes: commit or stash them first")
    step(f"{member.distribution}: {current} -> {version}")

    widen = check_dependents(member, version, root)
    if widen:
        raise ReleaseError("workspace dependents would reject the new version:\n  " + "\n  ".join(widen))
    step(f"dependents accept {version}: {', '.join(workspace_dependents(member, root)) or 'none'}")

    pyproject = bump_pyproject((member.folder / "pyproject.toml").read_text(encoding="utf-8"), str(version))
    changelog = move_unreleased(member.changelog.read_text(encoding="utf-8"), str(version), date)
    step(f"changelog: Unreleased notes moved under '## {version} - {date}'")

    with tempfile.TemporaryDirectory(prefix="a365-release-") as tmp:
        work = Path(tmp)
        staged = work / "src" / member.folder.name
        shutil.copytree(member.folder, staged, ignore=IGNORED)
        (staged / "pyproject.toml").write_text(pyproject, encoding="utf-8")
        (staged / "CHANGELOG.md").write_text(changelog, encoding="utf-8")
        built = work / "dist"
        run(UV, "build", "--quiet", "--out-dir", built, staged, cwd=work)
        artifacts = sorted(p.name for p in built.iterdir() if p.suffix in (".whl", ".gz"))
        stem = f"{member.wheel_stem}-{version}"
        if len(artifacts) != 2 or not all(a.startswith(stem) for a in artifacts):
            raise ReleaseError(f"expected one sdist and one wheel of {stem}, got {artifacts}")
        step(f"built {', '.join(artifacts)}")
        [wheel] = built.glob("*.whl")
        smoke_test(member, str(version), wheel, work, root)
        if dry_run:
            step("dry run: nothing written, committed or tagged")
            return tag
        out = root / "dist" / stem
        out.mkdir(parents=True, exist_ok=True)
        for name in artifacts:
            shutil.copy2(built / name, out / name)

    (member.folder / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    member.changelog.write_text(changelog, encoding="utf-8")
    paths = [member.folder / "pyproject.toml", member.changelog]
    lock = root / "uv.lock"
    if lock.is_file():
        lock.write_text(
            bump_lock(lock.read_text(encoding="utf-8"), member.distribution, str(version)), encoding="utf-8"
        )
        paths.append(lock)
    git("add", *(str(p.relative_to(root)) for p in paths), cwd=root)
    git("commit", "--quiet", "-m", f"Release {tag}", cwd=root)
    git("tag", "-a", tag, "-m", f"{member.distribution} {version}", cwd=root)
    step(f"committed and tagged {tag}; artifacts in {out.relative_to(root)}")
    step(f"publish: git push origin HEAD {tag!r}  (the release workflow builds and publishes)")
    return tag


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("package")
    parser.add_argument("version")
    parser.add_argument("--dry-run", action="store_true", help="check, build and smoke-test only")
    parser.add_argument("--date", default=dt.date.today().isoformat(), help="release date for the changelog")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        release(args.package, args.version, dry_run=args.dry_run, date=args.date, root=args.root.resolve())
    except ReleaseError as error:
        print(f"release failed: {error.code}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
