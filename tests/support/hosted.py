"""The hosted example agent (examples/hosted_agent) for the tests: loaded from its file, served on 127.0.0.1."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from types import ModuleType

from aiohttp import web

from agents_a365.emulator import Emulator
from agents_a365.tooling import McpToolServerConfigurationService

from .platform import production_config

__all__ = ["EXAMPLE", "load_hosted_agent", "serve_hosted_agent"]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hosted_agent" / "agent.py"


def load_hosted_agent() -> ModuleType:
    """The example as users copy it (a script, not a package), quiet in development mode."""
    spec = importlib.util.spec_from_file_location("hosted_agent_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    module.quiet_development_warnings()
    return module


@contextlib.asynccontextmanager
async def serve_hosted_agent(hosted: ModuleType, orchestrator: str, emu: Emulator) -> AsyncIterator[str]:
    """The agent on a free port, its tools and threat protection on ``emu``; yields its /api/messages URL."""
    async with McpToolServerConfigurationService(production_config(emu)) as tooling:
        app, adapter = hosted.create_agent_app(orchestrator, tooling, tool_authorization=emu.authorization())
        runner = web.AppRunner(hosted.create_web_app(app, adapter, anonymous=True))
        await runner.setup()
        try:
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            yield f"http://127.0.0.1:{runner.addresses[0][1]}/api/messages"
        finally:
            await runner.cleanup()
