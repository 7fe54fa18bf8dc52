"""Build every wheel, install the core ones into fresh venvs, and check what came along.

    uv run python scripts/check_wheels.py [--out DIR | --wheels DIR]

1. ``uv build --all-packages`` builds the five wheels (four SDK packages + the emulator); with ``--wheels``
   they are taken from DIR (built already, e.g. by the tests).
2. A fresh venv gets only the runtime and tooling wheels: both import, and neither
   ``langchain`` nor ``openai-agents`` (nor hosting-core) was installed.
3. Each extension wheel goes into its own fresh venv with the core wheels: the namespace
   packages merge (``agents_a365.tooling.extensions.<x>`` imports from the wheel), and the
   other extension's framework is absent.
Exits non-zero with a message on the first failure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# `uv run` exports the path of the uv that started it; a pip-installed uv may not be on PATH.
UV = os.environ.get("UV") or shutil.which("uv") or "uv"
DISTRIBUTIONS = (
    "agents_a365_runtime",
    "agents_a365_tooling",
    "agents_a365_tooling_extensions_langchain",
    "agents_a365_tooling_extensions_openai",
    "agents_a365_emulator",
)
PROBE = """
import importlib.metadata as md, importlib.util as iu, json, sys
mods = sys.argv[1].split(",")
for m in mods:
    __import__(m)
print(json.dumps({
    "imported": mods,
    "distributions": sorted(d.metadata["Name"].lower() for d in md.distributions()),
    "files": {m: sys.modules[m].__file__ for m in mods},
}))
"""


def run(*args: str | Path, cwd: Path = ROOT) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"command failed: {' '.join(map(str, args))}\n{done.stdout}\n{done.stderr}")
    return done.stdout


def wheel(out: Path, dist: str) -> Path:
    found = sorted(out.glob(f"{dist}-*.whl"))
    if not found:
        sys.exit(f"no wheel for {dist} in {out}")
    return found[-1]


def install_and_probe(
    out: Path, work: Path, name: str, dists: list[str], modules: list[str]
) -> dict[str, object]:
    venv = work / name
    run(UV, "venv", "--quiet", "--python", sys.executable, venv)
    python = venv / "bin" / "python"
    run(UV, "pip", "install", "--quiet", "--python", python, *(wheel(out, d) for d in dists))
    result: dict[str, object] = json.loads(run(python, "-c", PROBE, ",".join(modules)))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="where to put the wheels (default: a temp dir)"
    )
    parser.add_argument("--wheels", type=Path, default=None, help="check the wheels already in this dir")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        out = args.wheels or args.out or work / "dist"
        if args.wheels is None:
            run(UV, "build", "--all-packages", "--wheel", "--quiet", "--out-dir", out)
        for dist in DISTRIBUTIONS:
            print(f"built {wheel(out, dist).name}")

        core = install_and_probe(
            out, work, "core", list(DISTRIBUTIONS[:2]), ["agents_a365.runtime", "agents_a365.tooling"]
        )
        installed = set(core["distributions"])  # type: ignore[arg-type]
        for forbidden in ("langchain", "langchain-core", "openai-agents", "microsoft-agents-hosting-core"):
            if forbidden in installed:
                sys.exit(f"core wheels pulled in {forbidden}")
        print(
            f"core venv: runtime + tooling import; {len(installed)} distributions, no langchain/openai-agents"
        )

        for ext, present, absent in (
            ("langchain", "langchain", "openai-agents"),
            ("openai", "openai-agents", "langchain"),
        ):
            probe = install_and_probe(
                out,
                work,
                ext,
                [*DISTRIBUTIONS[:2], f"agents_a365_tooling_extensions_{ext}"],
                [f"agents_a365.tooling.extensions.{ext}"],
            )
            names = set(probe["distributions"])  # type: ignore[arg-type]
            if present not in names or absent in names:
                sys.exit(f"{ext} venv: expected {present} and no {absent}, got {sorted(names)}")
            location = probe["files"][f"agents_a365.tooling.extensions.{ext}"]  # type: ignore[index]
            if str(ROOT) in location:
                sys.exit(f"{ext} extension imported from the source tree, not the wheel: {location}")
            print(f"{ext} venv: extension imports from the wheel; {present} present, {absent} absent")
    print("wheels OK")


if __name__ == "__main__":
    main()
