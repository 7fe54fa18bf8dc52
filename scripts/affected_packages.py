"""Which packages a change affects, for CI: the changed ones, their workspace dependents, and the contract suite.

    uv run python scripts/affected_packages.py [--base REF | --files PATH ...] [--github-output]

Like LangChain's ``.github/scripts/check_diff.py``: a file under ``packages/<member>/`` (or its test
folder) marks that member; every workspace member that depends on a marked one (transitively) is
marked too, since a change in the core can break an extension. Files that shape every run (root
``pyproject.toml``, ``uv.lock``, shared test support, CI and release scripts) mark everything.
Documentation-only changes mark nothing, but the contract suite always runs.

Prints JSON ``{"full": bool, "packages": [short names], "test_paths": [...]}``; with
``--github-output`` also writes ``packages=`` and ``test-paths=`` to ``$GITHUB_OUTPUT``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from _workspace import ROOT, git, members

CONTRACT = "tests/contract"
# Paths whose change can break any package's tests.
EVERYTHING = (
    "pyproject.toml",
    "uv.lock",
    ".python-version",
    "tests/conftest.py",
    "tests/support/",
    "scripts/_workspace.py",
    ".github/workflows/ci.yml",
)
# Test folders that belong to no single package: they exercise the listed members together.
SHARED_TESTS = {
    "tests/reliability/": ("tooling", "langchain", "openai"),
    "tests/ui_stream/": ("tooling", "langchain", "openai"),
    "tests/demo/": ("langchain", "openai"),
    "tests/packaging/": ("runtime", "tooling", "langchain", "openai", "emulator"),
    "tests/release/": ("runtime", "tooling", "langchain", "openai", "emulator"),
    "scripts/": ("runtime", "tooling", "langchain", "openai", "emulator"),
    "examples/": ("langchain", "openai"),
}


def dependents_closure(marked: set[str], root: Path = ROOT) -> set[str]:
    every = members(root)
    by_distribution = {m.distribution: short for short, m in every.items()}
    result = set(marked)
    changed = True
    while changed:
        changed = False
        for short, member in every.items():
            if short in result:
                continue
            needs = {by_distribution.get(r.name) for r in member.requirements}
            if needs & result:
                result.add(short)
                changed = True
    return result


def affected(files: list[str], root: Path = ROOT) -> dict[str, object]:
    every = members(root)
    if any(f == p or (p.endswith("/") and f.startswith(p)) for f in files for p in EVERYTHING):
        marked = set(every)
    else:
        marked = set()
        for f in files:
            for short, member in every.items():
                folder = member.folder.relative_to(root).as_posix() + "/"
                own_tests = tuple(t for t in member.tests if t != CONTRACT)
                if f.startswith(folder) or any(f.startswith(t + "/") for t in own_tests):
                    marked.add(short)
            for prefix, shorts in SHARED_TESTS.items():
                if f.startswith(prefix):
                    marked.update(shorts)
        marked = dependents_closure(marked, root)
    order = list(every)
    packages = [s for s in order if s in marked]
    paths = {t for s in packages for t in every[s].tests}
    for prefix, shorts in SHARED_TESTS.items():
        if prefix.startswith("tests/") and marked.issuperset(shorts):
            paths.add(prefix.rstrip("/"))
    paths.add(CONTRACT)
    return {"full": marked == set(every), "packages": packages, "test_paths": sorted(paths)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--base", help="git ref to diff against (merge base with HEAD)")
    source.add_argument("--files", nargs="*", help="changed paths, relative to the repository root")
    parser.add_argument("--github-output", action="store_true")
    args = parser.parse_args(argv)
    files = (
        args.files if args.files is not None else git("diff", "--name-only", f"{args.base}...HEAD").split()
    )
    result = affected(files)
    print(json.dumps(result))
    if args.github_output and "GITHUB_OUTPUT" in os.environ:
        with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
            out.write(f"packages={json.dumps(result['packages'])}\n")
            out.write(f"test-paths={' '.join(result['test_paths'])}\n")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
