"""Run one package's tests against the lowest (or, with --newest, the newest) versions its ranges allow.

    uv run python scripts/check_min_versions.py <package> [--newest] [--keep]

1. The package's direct third-party requirements are resolved with
   ``uv pip compile --resolution lowest-direct`` (so each sits at its declared lower bound,
   their own dependencies at the newest compatible version) and pinned. With ``--newest`` nothing is
   pinned: everything installs at the newest release the package's ranges and the test tools allow
   (``--resolution highest``, index metadata refreshed), and the script prints which direct
   requirement the test tools hold below the newest the package allows (the emulator keeps mcp on 1.x).
2. A fresh venv gets the package's wheel, its workspace siblings' wheels (built from this tree
   into a local wheelhouse), those pins, and the test tools (pytest, the emulator, hosting-core). The
   contract suite runs the extensions that are installed: this one alone (the cross-extension comparisons
   skip).
3. That package's tests run there (runtime -> tests/runtime, tooling -> tests/tooling,
   langchain -> tests/langchain + tests/contract, openai -> tests/openai +
   tests/contract, emulator -> tests/emulator).

Prints the pins and the pytest summary; exits with pytest's status.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _workspace import ROOT, UV, Member, find_member, members
from packaging.utils import canonicalize_name

# What the tests themselves import, beyond the package under test (the root dev group's floors).
TEST_TOOLS = [
    "pytest>=8.4",
    "pytest-asyncio>=1.2",
    "pytest-xdist>=3.6",  # the root pyproject's addopts pass -n
    "hypothesis>=6.140",
    "microsoft-agents-hosting-core>=1.9.0",
]


def run(*args: str | Path, cwd: Path = ROOT, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        sys.exit(f"command failed: {' '.join(map(str, args))}\n{done.stdout}\n{done.stderr}")
    return done


def resolved_pins(member: Member, work: Path, resolution: str = "lowest-direct") -> list[str]:
    """``name==version`` for each direct third-party requirement, at its lowest (or newest) allowed version."""
    workspace = {m.distribution for m in members().values()}
    direct = [r for r in member.requirements if r.name not in workspace]
    if not direct:
        return []
    source = work / "direct.in"
    source.write_text("\n".join(str(r) for r in direct) + "\n")
    compiled = run(
        UV,
        "pip",
        "compile",
        "--quiet",
        "--no-header",
        "--no-annotate",
        "--resolution",
        resolution,
        *(["--refresh"] if resolution == "highest" else []),
        "--python-version",
        f"{sys.version_info.major}.{sys.version_info.minor}",
        source,
    ).stdout
    names = {canonicalize_name(r.name) for r in direct}
    pins = []
    for line in compiled.splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line.strip())
        if match and canonicalize_name(match.group(1)) in names:
            pins.append(f"{match.group(1)}=={match.group(2)}")
    return pins


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("package")
    parser.add_argument("--keep", action="store_true", help="keep the venv (its path is printed)")
    parser.add_argument(
        "--newest", action="store_true", help="the newest allowed versions instead of the lowest"
    )
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args(argv)
    member = find_member(args.package)
    every = members()
    work = Path(tempfile.mkdtemp(prefix=f"a365-{'new' if args.newest else 'min'}-{member.short}-"))
    try:
        if args.newest:
            newest, pins = resolved_pins(member, work, "highest"), []
            print(
                f"{member.distribution}: newest allowed: {', '.join(newest) or '(no third-party dependencies)'}"
            )
        else:
            pins = resolved_pins(member, work)
            print(
                f"{member.distribution}: lowest direct versions: {', '.join(pins) or '(no third-party dependencies)'}"
            )
        wheelhouse = work / "wheelhouse"
        run(UV, "build", "--all-packages", "--wheel", "--quiet", "--out-dir", wheelhouse)
        wanted = {member.short, "emulator"}
        wanted |= {s for s, m in every.items() if any(r.name == m.distribution for r in member.requirements)}
        if "tests/contract" in member.tests:  # the suite runs the installed extensions only (this one)
            wanted |= {"runtime", "tooling"}
        wheels = [next(wheelhouse.glob(f"{every[s].wheel_stem}-*.whl")) for s in sorted(wanted)]
        venv = work / "venv"
        run(UV, "venv", "--quiet", "--python", sys.executable, venv)
        python = venv / "bin" / "python"
        refresh = ["--refresh"] if args.newest else []
        run(UV, "pip", "install", "--quiet", *refresh, "--python", python, *wheels, *pins, *TEST_TOOLS)
        frozen = run(UV, "pip", "freeze", "--python", python).stdout
        installed = {canonicalize_name(p.split("==")[0]): p for p in frozen.split() if "==" in p}
        for pin in pins:
            if installed.get(canonicalize_name(pin.split("==")[0])) != pin:
                sys.exit(f"{pin} was not installed as pinned")
        if args.newest:
            tested = [installed.get(canonicalize_name(p.split("==")[0]), p) for p in newest]
            print(f"tested with: {', '.join(tested)}")
            held = [f"{t} (newest allowed: {p})" for t, p in zip(tested, newest, strict=True) if t != p]
            if held:
                print(f"held back by the test tools: {', '.join(held)}")
        print(f"fresh venv: {len(installed)} distributions; running {' '.join(member.tests)}", flush=True)
        done = subprocess.run(
            [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *member.tests, *args.pytest_args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        lines = (done.stdout + done.stderr).strip().splitlines()
        print("\n".join(lines if done.returncode else lines[-3:]))
        return done.returncode
    finally:
        if args.keep:
            print(f"venv kept: {work / 'venv'}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
