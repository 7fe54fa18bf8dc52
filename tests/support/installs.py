"""What the tests install before they can use it, once per machine or clone, started early in the background.

A clean machine needs Debian's ``chromium`` and ``redis-server`` (``apt-get``, as root on Debian) and the
JavaScript clients' npm packages (``npm ci`` against committed lock files), and the chat page built. Each
fixture that needs one calls its ``ensure_*`` here: under a lock shared by every process of the machine it
finds the thing done, or does it itself. With parallel workers ``python -m support.installs`` also starts in
the background once the ``serial`` tests are done (``tests/conftest.py``): the downloads and installs overlap the
slow tests, instead of holding the workers idle when the first test needs them. One ``apt-get`` at a time (one
lock), one ``apt-get update`` for everything missing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from node_tools import Node, find_node, install_lock, npm, npm_ci

__all__ = [
    "NPM_FOLDERS",
    "ensure_chat_page",
    "ensure_chromium",
    "ensure_npm",
    "ensure_redis_server",
    "start_in_background",
    "wait_for_background_installs",
]

logger = logging.getLogger(__name__)
TESTS = Path(__file__).resolve().parents[1]
APT_LOCK = Path("/var/lib/apt")  # the folder apt installs into: one lock for every apt-get of the run
APT_TIMEOUT = 600
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
WEB_DIR = TESTS.parent / "examples" / "ui_stream_app" / "web"
RUNNING = TESTS / ".installs-running"  # a lock's name only: held by the background installs while they run


def _pinned_ai(folder: Path) -> bool:
    manifest = folder / "node_modules" / "ai" / "package.json"
    pinned = json.loads((folder / "package.json").read_text())["dependencies"]["ai"]
    return manifest.exists() and json.loads(manifest.read_text())["version"] == pinned


# Each folder with a committed lock file, and whether its packages are installed.
NPM_FOLDERS: dict[str, tuple[Path, Callable[[Path], bool]]] = {
    "ui_stream": (TESTS / "ui_stream" / "js", _pinned_ai),
    "browser": (TESTS / "browser" / "js", lambda f: (f / "node_modules" / "puppeteer-core").is_dir()),
    "chat_page": (WEB_DIR, lambda f: (f / "node_modules" / "@ai-sdk" / "react").is_dir()),
    "playground": (
        TESTS / "hosted" / "playground",
        lambda f: (f / "node_modules" / "@microsoft" / "m365agentsplayground" / "cli.js").exists(),
    ),
}


def which_browser() -> str | None:
    if configured := os.environ.get("A365_CHROMIUM"):
        return configured
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def which_redis_server() -> str | None:
    return (
        os.environ.get("A365_REDIS_SERVER")
        or shutil.which("redis-server")
        or ("/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None)
    )


def _apt_install(packages: list[str]) -> str:
    """``apt-get install`` of ``packages`` (the caller holds the apt lock); why not, or '' when installed."""
    if shutil.which("apt-get") is None:
        return "no apt-get on this machine"
    if os.geteuid() != 0:
        command = f"sudo apt-get install -y --no-install-recommends {' '.join(packages)}"
        return f"not root, so apt-get cannot install it (run: {command})"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # Without recommends: 29 packages on this image, not 119 (printers, avahi, samba, perl, udev and the systemd
    # upgrade udev brings); 15 s and 19 CPU-s, not 29 s and 31 (headless chromium needs none of them).
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages]
    for command in (["apt-get", "update", "-qq"], install):
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=APT_TIMEOUT, env=env)
        except subprocess.TimeoutExpired:
            return f"{' '.join(command)} did not finish within {APT_TIMEOUT} s"
        if done.returncode != 0:
            return f"{' '.join(command)} failed: {done.stderr[-500:]}"
    if "redis-server" in packages:
        # The package's service started by its init script: stopped (the tests run their own servers).
        # policy-rc.d's 101 would keep it from starting, but that file is the machine's.
        with contextlib.suppress(OSError, subprocess.SubprocessError):  # no `service`, or it hangs
            subprocess.run(["service", "redis-server", "stop"], capture_output=True, timeout=30, check=False)
    return ""


_APT_PACKAGES = {"chromium": which_browser, "redis-server": which_redis_server}


def _ensure_apt(*packages: str) -> str:
    with install_lock(APT_LOCK):
        missing = [name for name in packages if _APT_PACKAGES[name]() is None]
        return _apt_install(missing) if missing else ""


def ensure_chromium() -> tuple[str | None, str]:
    """``(path, '')`` of a Chromium/Chrome, installing Debian's ``chromium`` when missing, else why not."""
    why = "" if which_browser() else _ensure_apt("chromium")
    found = which_browser()
    return found, "" if found else why or "apt-get installed none"


def ensure_redis_server() -> tuple[str | None, str]:
    """``(path, '')`` of ``redis-server``, installing Debian's package when missing, else why not."""
    why = "" if which_redis_server() else _ensure_apt("redis-server")
    found = which_redis_server()
    return found, "" if found else why or "apt-get installed no redis-server"


def ensure_npm(node: Node, name: str) -> Path:
    """``NPM_FOLDERS[name]``'s folder with its packages installed (``npm ci``, once)."""
    folder, installed = NPM_FOLDERS[name]
    with install_lock(folder):
        if not installed(folder):
            npm_ci(node, folder)
    return folder


def ensure_chat_page(node: Node) -> Path:
    """The example's chat page built (esbuild) when its bundle is older than its sources or packages."""
    ensure_npm(node, "chat_page")
    bundle = WEB_DIR / "dist" / "app.js"
    with install_lock(WEB_DIR):
        inputs = [*(WEB_DIR / "src").rglob("*"), WEB_DIR / "package.json", WEB_DIR / "node_modules"]
        newest = max(path.stat().st_mtime for path in inputs)
        if not bundle.exists() or bundle.stat().st_mtime < newest:
            npm(node, WEB_DIR, "run", "build", "--silent")
    return WEB_DIR / "dist"


def start_in_background(log: Path) -> subprocess.Popen[bytes]:
    """``python -m support.installs`` (this module) in the background, its output to ``log``; niced, so that
    the tests' processes (the loop-stall bounds of the ``serial`` ones) get the cores when both want them."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [
                *(["nice", "-n", "10"] if shutil.which("nice") else []),
                sys.executable,
                "-m",
                "support.installs",
            ],
            cwd=TESTS,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(TESTS)},
        )


def wait_for_background_installs() -> None:
    """Returns once no background installs run (at once when none was started): dpkg and npm on the other
    core slow a ``serial`` test's own steps enough to break its loop-stall bound."""
    with install_lock(RUNNING):
        pass


def _each(name: str, step: Callable[[], object]) -> None:
    try:
        step()
    except BaseException:  # npm's failure is pytest's Failed: the fixture that needs it tries again, reports
        logger.exception("%s: not installed here, the fixture that needs it will try", name)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    with install_lock(RUNNING):
        apt = threading.Thread(target=_each, args=("apt", lambda: _ensure_apt(*_APT_PACKAGES)))
        apt.start()  # the network and dpkg meanwhile npm installs (from its cache when it has them)
        node = find_node()
        if node is not None:
            for name in NPM_FOLDERS:
                _each(name, lambda name=name: ensure_npm(node, name))
            _each("chat page", lambda: ensure_chat_page(node))
        apt.join()
    logger.info("done")


if __name__ == "__main__":
    main()
