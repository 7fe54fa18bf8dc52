"""Browser tests: the system's Chromium (Debian package ``chromium``) driven by puppeteer-core from npm.

The test command installs what it needs (``tests/support/installs.py``): ``apt-get install chromium`` when
running as root on Debian (skipped with the reason otherwise), ``npm ci`` for puppeteer-core and the page's build.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from node_tools import Node
from support.installs import ensure_chat_page, ensure_chromium, ensure_npm


@pytest.fixture(scope="session")
def chromium() -> str:
    """Path of a Chromium/Chrome executable, installing Debian's ``chromium`` package when possible."""
    found, why = ensure_chromium()
    if found is None:
        pytest.skip(f"no Chromium for the browser test: {why}")
    return found


@pytest.fixture(scope="session")
def puppeteer(node: Node) -> Path:
    """The driver script, with puppeteer-core installed (``npm ci``: no browser download)."""
    return ensure_npm(node, "browser") / "drive.mjs"


@pytest.fixture(scope="session")
def chat_page_build(node: Node) -> Path:
    """The example's chat page built from npm (``npm ci`` + esbuild) when its bundle is older than its
    sources or packages (so once per run, whichever parallel worker comes first)."""
    return ensure_chat_page(node)
