"""The ``User-Agent`` every Agent 365 request carries."""

from __future__ import annotations

import functools
import platform
from importlib.metadata import PackageNotFoundError, version

__all__ = ["RUNTIME_DISTRIBUTION", "get_sdk_version", "get_user_agent_header"]

RUNTIME_DISTRIBUTION = "agents-a365-runtime"


@functools.cache
def get_sdk_version(distribution: str = RUNTIME_DISTRIBUTION) -> str:
    """The installed version of ``distribution`` (one source: its package metadata)."""
    try:
        return version(distribution)
    except PackageNotFoundError:  # running from a source tree without metadata
        return "0.0.0"


_PLATFORM = f"{platform.system() or 'Unknown'}; Python {platform.python_version()}"


def get_user_agent_header(orchestrator: str | None = None, *, distribution: str | None = None) -> str:
    """``Agent365SDK/<version> (<OS>; Python <x.y.z>; <orchestrator>)``; no orchestrator part when empty.

    ``<version>`` is the version of ``distribution``, the package that sends the request (an
    extension passes its own name), so a server can tell which release of which package called it;
    the runtime's version when not given.
    """
    orchestrator_part = f"; {orchestrator.strip()}" if orchestrator and orchestrator.strip() else ""
    sdk_version = get_sdk_version(distribution or RUNTIME_DISTRIBUTION)
    return f"Agent365SDK/{sdk_version} ({_PLATFORM}{orchestrator_part})"
