"""Across extensions: the same conversation gives the platform the same body, and a failure the same outcome.

Each extension on its own is held to the contract by ``test_extensions.py`` (the suite in
``agents_a365.emulator.contract``); these tests compare the installed extensions with each other.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from agents_a365.emulator import Emulator, Fault
from agents_a365.emulator.contract import SCENARIOS, Scenario, send_scenario
from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration
from contract.adapters import ADAPTERS
from support.turns import make_turn_context

pytestmark = pytest.mark.skipif(
    len(ADAPTERS) < 2, reason="fewer than two extensions installed: nothing to compare"
)


def _all_surfaces() -> list[tuple[str, str]]:
    # Derived from the adapters: a new extension is one adapter, with no list to keep in step here.
    # (Building a service does no I/O: its HTTP client is created on first use.)
    tooling = McpToolServerConfigurationService()
    return [(name, s.name) for name, make in sorted(ADAPTERS.items()) for s in make(tooling).surfaces()]


SURFACES = _all_surfaces()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
async def test_bodies_are_identical_across_extensions(scenario: Scenario) -> None:
    """The same conversation through every surface of every extension, compared with each other."""
    bodies = {}
    for adapter_name, surface_name in SURFACES:
        async with Emulator() as emu:
            body = await send_scenario(emu, ADAPTERS[adapter_name], surface_name, scenario)
        if body is not None:
            bodies[(adapter_name, surface_name)] = body
    reference_key, reference = next(iter(bodies.items()))
    assert len({a for a, _ in bodies}) == len(ADAPTERS)  # every extension took part
    for key, body in bodies.items():
        assert body == reference, f"{key} differs from {reference_key}"


@pytest.mark.parametrize("fault", ["status_500", "timeout", "refused"])
async def test_same_failure_outcome_across_extensions(emulator: Emulator, fault: str) -> None:
    if fault == "refused":
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            endpoint = f"http://127.0.0.1:{sock.getsockname()[1]}"
    else:
        endpoint = emulator.base_url
        emulator.faults.set("rtp", Fault(status=500) if fault == "status_500" else Fault(latency_ms=10_000))
    config = ToolingConfiguration(mcp_platform_endpoint=endpoint, chat_history_timeout=1.0)

    async def outcome(factory: Any) -> str:
        async with McpToolServerConfigurationService(config) as tooling:
            surface = factory(tooling).surfaces()[0]
            result = await surface.send(make_turn_context(), SCENARIOS[0].messages, None)
        assert not result.succeeded
        return type(result.errors[0].exception).__name__

    # At once: each adapter with its own service, so a timeout costs the test one deadline, not one each.
    outcomes = dict(zip(ADAPTERS, await asyncio.gather(*map(outcome, ADAPTERS.values())), strict=True))
    assert len(set(outcomes.values())) == 1, outcomes
