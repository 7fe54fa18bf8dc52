"""The ``User-Agent`` every Agent 365 request carries."""

from __future__ import annotations

import functools
import platform
from importlib.metadata import PackageNotFoundError, version

__all__ = ["get_sdk_version", "get_user_agent_header"]


@functools.cache
def get_sdk_version() -> str:
    try:
        return version("agents-a365-runtime")
    except PackageNotFoundError:  # running from a source tree without metadata
        return "0.0.0"


@functools.cache
def _platform_part() -> str:
    return f"{platform.system() or 'Unknown'}; Python {platform.python_version()}"


def get_user_agent_header(orchestrator: str | None = None) -> str:
    """``Agent365SDK/<version> (<OS>; Python <x.y.z>; <orchestrator>)``; no orchestrator part when empty."""
    orchestrator_part = f"; {orchestrator.strip()}" if orchestrator and orchestrator.strip() else ""
    return f"Agent365SDK/{get_sdk_version()} ({_platform_part()}{orchestrator_part})"
