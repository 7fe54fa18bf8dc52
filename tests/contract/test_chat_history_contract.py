"""Chat history contract: for the same conversation every extension sends the platform the same body."""

from __future__ import annotations

import socket
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agents_a365.emulator import Emulator, Fault
from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration
from contract.adapters import ADAPTERS
from contract.conversation import GENERATED, SCENARIOS, Scenario, expected_history
from support.platform import production_config
from support.turns import make_turn_context


def _all_surfaces() -> list[tuple[str, str]]:
    # Derived from the adapters: a new extension is one adapter, with no list to keep in step here.
    # (Building a service does no I/O: its HTTP client is created on first use.)
    tooling = McpToolServerConfigurationService()
    return [(name, s.name) for name, make in sorted(ADAPTERS.items()) for s in make(tooling).surfaces()]


SURFACES = _all_surfaces()


def normalize(record: dict[str, Any], started: datetime) -> list[tuple[str, str, str]]:
    """(role, content, id) with generated ids replaced, after checking they are fresh uuids and
    the timestamps are UTC and current."""
    rows = []
    for entry in record["chatHistory"]:
        stamp = datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00"))
        assert stamp.utcoffset() == timedelta(0)
        assert started - timedelta(seconds=1) <= stamp <= datetime.now(UTC) + timedelta(seconds=1)
        message_id = entry["id"]
        try:
            generated = uuid.UUID(message_id).version == 4
        except ValueError:
            generated = False
        rows.append((entry["role"], entry["content"], GENERATED if generated else message_id))
    return rows


async def send_through(
    emulator: Emulator, adapter_name: str, surface_name: str, scenario: Scenario
) -> list[Any]:
    async with McpToolServerConfigurationService(production_config(emulator)) as tooling:
        adapter = ADAPTERS[adapter_name](tooling)
        surface = next(s for s in adapter.surfaces() if s.name == surface_name)
        if scenario.limit is not None and not surface.supports_limit:
            pytest.skip(f"{adapter_name}/{surface_name} takes no limit")
        turn = make_turn_context(
            text="Book a meeting", activity_id=f"act-{scenario.name}", conversation_id="conv-c"
        )
        started = datetime.now(UTC)
        result = await surface.send(turn, scenario.messages, scenario.limit)
    assert result.succeeded, str(result)
    [record] = emulator.chat_messages
    assert record["conversationId"] == "conv-c"
    assert record["messageId"] == f"act-{scenario.name}"
    assert record["userMessage"] == "Book a meeting"
    return normalize(record, started)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
@pytest.mark.parametrize(("adapter_name", "surface_name"), SURFACES, ids=[f"{a}-{s}" for a, s in SURFACES])
async def test_every_surface_sends_the_expected_history(
    emulator: Emulator, adapter_name: str, surface_name: str, scenario: Scenario
) -> None:
    assert await send_through(emulator, adapter_name, surface_name, scenario) == expected_history(scenario)


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.limit is None], ids=lambda s: s.name)
async def test_bodies_are_identical_across_extensions(scenario: Scenario) -> None:
    """The same conversation through every surface of every extension, compared with each other."""
    bodies = {}
    for adapter_name, surface_name in SURFACES:
        async with Emulator() as emu:
            bodies[(adapter_name, surface_name)] = await send_through(
                emu, adapter_name, surface_name, scenario
            )
    reference = bodies[SURFACES[0]]
    for key, body in bodies.items():
        assert body == reference, f"{key} differs from {SURFACES[0]}"


async def test_generated_ids_are_unique_per_message(emulator: Emulator) -> None:
    scenario = next(s for s in SCENARIOS if s.name == "long_conversation")
    for adapter_name, surface_name in SURFACES:
        emulator.reset()
        await send_through(emulator, adapter_name, surface_name, scenario)
        ids = [e["id"] for e in emulator.chat_messages[0]["chatHistory"]]
        assert len(ids) == len(set(ids)), (adapter_name, surface_name)


async def test_same_argument_errors(adapter: Any) -> None:
    turn = make_turn_context()
    for message, call in adapter.missing_argument_calls(turn).items():
        with pytest.raises(ValueError, match=f"^{message}$"):
            await call()


@pytest.mark.parametrize("fault", ["status_500", "timeout", "refused"])
async def test_same_failure_behaviour(emulator: Emulator, fault: str) -> None:
    timeout = 1.0
    if fault == "refused":
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            endpoint = f"http://127.0.0.1:{sock.getsockname()[1]}"
    else:
        endpoint = emulator.base_url
        emulator.faults.set("rtp", Fault(status=500) if fault == "status_500" else Fault(latency_ms=10_000))
    config = ToolingConfiguration(mcp_platform_endpoint=endpoint, chat_history_timeout=timeout)
    scenario = SCENARIOS[0]
    outcomes = {}
    for adapter_name, factory in ADAPTERS.items():
        async with McpToolServerConfigurationService(config) as tooling:
            surface = factory(tooling).surfaces()[0]
            started = time.monotonic()
            result = await surface.send(make_turn_context(), scenario.messages, None)
            elapsed = time.monotonic() - started
        assert not result.succeeded
        assert elapsed < timeout + 1.0, (adapter_name, elapsed)
        outcomes[adapter_name] = type(result.errors[0].exception).__name__
    assert len(set(outcomes.values())) == 1, outcomes
