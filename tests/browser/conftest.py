"""Browser tests: the system's Chromium (Debian package ``chromium``) driven by puppeteer-core from npm.

The test command installs what it needs: ``apt-get install chromium`` when running as root on Debian
(skipped with the reason otherwise), ``npm ci`` for puppeteer-core and the page's build.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from node_tools import Node, install_lock, npm, npm_ci

JS_DIR = Path(__file__).parent / "js"
WEB_DIR = Path(__file__).resolve().parents[2] / "examples" / "ui_stream_app" / "web"
APT_TIMEOUT = 600
NPM_TIMEOUT = 300
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _which_browser() -> str | None:
    configured = os.environ.get("A365_CHROMIUM")
    if configured:
        return configured
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def _apt_install_chromium() -> str:
    """Installs Debian's chromium; returns why not when it cannot ('' on success)."""
    if shutil.which("apt-get") is None:
        return "no apt-get on this machine"
    if os.name != "posix" or os.geteuid() != 0:
        return "not root, so apt-get cannot install it (run: sudo apt-get install -y chromium)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        try:
            completed = subprocess.run(
                command, capture_output=True, text=True, timeout=APT_TIMEOUT, check=False, env=env
            )
        except subprocess.TimeoutExpired:
            return f"{' '.join(command)} did not finish within {APT_TIMEOUT}s"
        if completed.returncode != 0:
            return f"{' '.join(command)} failed: {completed.stderr[-500:]}"
    return ""


@pytest.fixture(scope="session")
def chromium() -> str:
    """Path of a Chromium/Chrome executable, installing Debian's ``chromium`` package when possible."""
    with install_lock(Path("/var/lib/apt")):  # one apt-get at a time across parallel workers
        found = _which_browser()
        if found is None:
            reason = _apt_install_chromium()
            found = _which_browser()
            if found is None:
                pytest.skip(f"no Chromium for the browser test: {reason or 'apt-get installed none'}")
    return found


@pytest.fixture(scope="session")
def puppeteer(node: Node) -> Path:
    """The driver script, with puppeteer-core installed (``npm ci``: no browser download)."""
    with install_lock(JS_DIR):
        if not (JS_DIR / "node_modules" / "puppeteer-core").is_dir():
            npm_ci(node, JS_DIR)
    return JS_DIR / "drive.mjs"


@pytest.fixture(scope="session")
def chat_page_build(node: Node) -> Path:
    """Builds the example's chat page from npm (``npm ci`` + esbuild) when its bundle is older than its
    sources or packages (so once per run, whichever parallel worker comes first)."""
    bundle = WEB_DIR / "dist" / "app.js"
    with install_lock(WEB_DIR):
        if not (WEB_DIR / "node_modules" / "@ai-sdk" / "react").is_dir():
            npm(node, WEB_DIR, "ci", "--no-audit", "--no-fund", "--loglevel=error")
        inputs = [*(WEB_DIR / "src").rglob("*"), WEB_DIR / "package.json", WEB_DIR / "node_modules"]
        newest = max(path.stat().st_mtime for path in inputs)
        if not bundle.exists() or bundle.stat().st_mtime < newest:
            npm(node, WEB_DIR, "run", "build", "--silent")
    return WEB_DIR / "dist"
