"""Cross-version contract runs: released extensions against the core at HEAD, and the other way round.

    uv run python scripts/compat_matrix.py [--ref <git ref>] [--extension langchain|openai] [--plan]

1. Wheels of every package are built at ``--ref`` (default: the commit of the latest release tags,
   ``<distribution>==<version>``) into a local wheelhouse (a ``git worktree`` of the ref), and at HEAD.
2. For each extension, two mixed installs, wherever the declared ranges allow them:
   the extension at HEAD with runtime + tooling at the release, and the extension at the release with
   runtime + tooling at HEAD. A combination the ranges forbid is reported as skipped (by range).
3. Each allowed combination gets a fresh venv (those wheels, the emulator and the test tools at HEAD) and
   runs the extension's contract suite there (``tests/contract/test_extensions.py``; the suite itself ships
   in the emulator distribution). A combination the ranges allow and the contract rejects fails the run.

``--plan`` prints the combinations and the range verdicts without building anything. Exit status: 0 when
every allowed combination passes.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from _workspace import ROOT, UV, Member, members
from packaging.specifiers import SpecifierSet
from packaging.version import Version

CORE = ("runtime", "tooling")
EXTENSIONS = ("langchain", "openai")
TEST_TOOLS = [
    "pytest>=8.4",
    "pytest-asyncio>=1.2",
    "pytest-xdist>=3.6",  # the root pyproject's addopts pass -n
    "hypothesis>=6.140",
    "microsoft-agents-hosting-core>=1.9.0",
]
TEST_CLASS = {"langchain": "TestLangChainExtension", "openai": "TestOpenAIExtension"}


@dataclass(frozen=True)
class Combination:
    extension: str
    extension_side: str  # "head" or "release"
    core_side: str
    allowed: bool
    why: str

    @property
    def label(self) -> str:
        return f"{self.extension}@{self.extension_side} + core@{self.core_side}"


def run(*args: str | Path, cwd: Path = ROOT, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def release_ref() -> str:
    """The commit of the newest release tag of the workspace (``<distribution>==<version>``)."""
    tags = [t for t in run("git", "tag", "--list", "*==*").stdout.split() if t]
    if not tags:
        sys.exit("no release tags (<distribution>==<version>): tag a release first (scripts/release.py)")
    newest = max(tags, key=lambda t: Version(t.split("==", 1)[1]))
    return run("git", "rev-list", "-n", "1", newest).stdout.strip()


def versions_at(ref: str) -> dict[str, str]:
    """Each member's version in its pyproject at ``ref``."""
    import tomllib

    found = {}
    for short, member in members().items():
        path = member.folder.relative_to(ROOT) / "pyproject.toml"
        text = run("git", "show", f"{ref}:{path.as_posix()}").stdout
        if text:
            found[short] = str(tomllib.loads(text)["project"]["version"])
    return found


def requirement_on(member: Member, dependency: Member, ref: str | None) -> str:
    """The specifier ``member`` declares on ``dependency`` at ``ref`` (None: HEAD)."""
    import tomllib

    from packaging.requirements import Requirement

    if ref is None:
        requirements = member.requirements
    else:
        path = member.folder.relative_to(ROOT) / "pyproject.toml"
        data = tomllib.loads(run("git", "show", f"{ref}:{path.as_posix()}").stdout)
        requirements = [Requirement(r) for r in data["project"].get("dependencies", [])]
    for requirement in requirements:
        if requirement.name == dependency.distribution:
            return str(requirement.specifier)
    return ""


def plan(ref: str, only: str | None) -> list[Combination]:
    every = members()
    head = {s: m.version for s, m in every.items()}
    old = versions_at(ref)
    combinations = []
    for extension in EXTENSIONS:
        if only and extension != only:
            continue
        for ext_side, core_side in (("head", "release"), ("release", "head")):
            ext_ref = None if ext_side == "head" else ref
            core_versions = head if core_side == "head" else old
            verdicts = []
            for core in CORE:
                spec = requirement_on(every[extension], every[core], ext_ref)
                version = core_versions[core]
                # Pre-releases count: HEAD's next version (0.N.0.devM) is what its release will be.
                ok = SpecifierSet(spec).contains(Version(version), prereleases=True)
                verdicts.append(
                    (ok, f"{every[core].distribution} {version} {'in' if ok else 'not in'} '{spec}'")
                )
            allowed = all(ok for ok, _ in verdicts)
            combinations.append(
                Combination(extension, ext_side, core_side, allowed, "; ".join(w for _, w in verdicts))
            )
    return combinations


def build_wheels(source: Path, out: Path) -> None:
    done = run(UV, "build", "--all-packages", "--wheel", "--quiet", "--out-dir", out, cwd=source)
    if done.returncode:
        sys.exit(f"building wheels in {source} failed:\n{done.stderr[-3000:]}")


def wheel(folder: Path, member: Member) -> Path:
    return next(folder.glob(f"{member.wheel_stem}-*.whl"))


def run_combination(combo: Combination, head: Path, release: Path, work: Path) -> tuple[bool, str]:
    every = members()
    ext_wheels = head if combo.extension_side == "head" else release
    core_wheels = head if combo.core_side == "head" else release
    wheels = [wheel(core_wheels, every[c]) for c in CORE]
    wheels += [wheel(ext_wheels, every[combo.extension]), wheel(head, every["emulator"])]
    venv = work / f"venv-{combo.extension}-{combo.extension_side}"
    run(UV, "venv", "--quiet", "--python", sys.executable, venv)
    python = venv / "bin" / "python"
    installed = run(UV, "pip", "install", "--quiet", "--python", python, *wheels, *TEST_TOOLS)
    if installed.returncode:
        return False, f"install failed: {installed.stderr[-2000:]}"
    done = run(
        python,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/contract/test_extensions.py",
        "-k",
        TEST_CLASS[combo.extension],
    )
    lines = (done.stdout + done.stderr).strip().splitlines()
    summary = lines[-1] if lines else "(no output)"
    # The extension must load: a suite skipped for lack of it is an incompatibility, not a pass.
    ok = done.returncode == 0 and " passed" in summary and "skipped" not in summary
    if not ok:
        why = run(python, "-c", f"import agents_a365.tooling.extensions.{combo.extension}")
        detail = (
            why.stderr.strip().splitlines()[-1:]
            if why.returncode
            else [line for line in lines if line.startswith(("FAILED", "E "))][:6]
        )
        summary = summary + "\n      " + "\n      ".join(detail)
    return ok, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--ref", help="the release to compare with (default: the newest release tags' commit)"
    )
    parser.add_argument("--extension", choices=EXTENSIONS)
    parser.add_argument("--plan", action="store_true", help="print the combinations only")
    args = parser.parse_args(argv)
    if args.ref:
        resolved = run("git", "rev-parse", "--verify", "--quiet", f"{args.ref}^{{commit}}")
        if resolved.returncode:
            sys.exit(f"unknown ref {args.ref!r}")
        ref = resolved.stdout.strip()
    else:
        ref = release_ref()
    combinations = plan(ref, args.extension)
    print(f"release ref {ref[:12]}; HEAD {run('git', 'rev-parse', '--short=12', 'HEAD').stdout.strip()}")
    for combo in combinations:
        print(f"  {combo.label:<38} {'allowed' if combo.allowed else 'skipped (by range)'}: {combo.why}")
    if args.plan:
        return 0
    work = Path(tempfile.mkdtemp(prefix="a365-compat-"))
    failures = 0
    try:
        tree = work / "release-tree"
        added = run("git", "worktree", "add", "--detach", "--quiet", tree, ref)
        if added.returncode:
            sys.exit(f"git worktree add failed: {added.stderr}")
        try:
            build_wheels(tree, work / "release")
        finally:
            run("git", "worktree", "remove", "--force", tree)
        build_wheels(ROOT, work / "head")
        for combo in combinations:
            if not combo.allowed:
                continue
            ok, summary = run_combination(combo, work / "head", work / "release", work)
            failures += not ok
            print(f"{'PASS' if ok else 'FAIL'} {combo.label}: {summary}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
