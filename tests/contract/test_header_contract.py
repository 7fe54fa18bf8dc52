"""Across extensions: every request carries the same headers, whichever extension caused it.

Each extension's own header rules (User-Agent, channel, one audience per server, no CR/LF) are in the
suite (``agents_a365.emulator.contract``, run by ``test_extensions.py``).

Gateway discovery, each MCP server and threat protection are recorded by the emulator; the header
set may differ between extensions only in the orchestrator name inside ``User-Agent``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from agents_a365.emulator import DEFAULT_AGENT_ID, Emulator
from agents_a365.emulator.contract import SCENARIOS, ExtensionAdapter
from agents_a365.runtime import decode_token_payload
from agents_a365.tooling import McpToolServerConfigurationService
from contract.adapters import ADAPTERS
from support.platform import production_config
from support.turns import make_turn_context

CONTRACT_HEADERS = (
    "authorization",
    "user-agent",
    "x-ms-agentid",
    "x-ms-channel-id",
    "x-ms-subchannel-id",
    "x-ms-correlation-id",
)


async def run_turn(emulator: Emulator, adapter_name: str, turn: Any, authorization: Any) -> list[Any]:
    """Register the turn's MCP servers through the extension, then send its chat history."""
    requests, _ = await run_turn_with(emulator, adapter_name, turn, authorization)
    return requests


async def run_turn_with(
    emulator: Emulator, adapter_name: str, turn: Any, authorization: Any
) -> tuple[list[Any], ExtensionAdapter]:
    emulator.recorder.clear()
    async with McpToolServerConfigurationService(production_config(emulator)) as tooling:
        adapter = ADAPTERS[adapter_name](tooling)
        async with adapter.register(authorization, turn):
            pass
        result = await adapter.surfaces()[0].send(turn, SCENARIOS[0].messages, None)
    assert result.succeeded, str(result)
    return emulator.requests, adapter


def normalized(request: Any, orchestrator: str) -> tuple[tuple[str, Any], ...]:
    values: dict[str, Any] = {}
    for name in CONTRACT_HEADERS:
        value = request.headers.get(name)
        if value is None:
            continue
        if name == "authorization":
            claims = decode_token_payload(value.removeprefix("Bearer "))
            value = ("Bearer", claims["aud"], claims.get("oid"), claims.get("appid"))
        elif name == "user-agent":
            value = re.sub(r"^Agent365SDK/\S+ ", "Agent365SDK/<version> ", value)
            value = value.replace(f"; {orchestrator})", "; <orchestrator>)")
        elif name == "x-ms-correlation-id":
            value = "<activity id>" if value == "activity-1" else value
        values[name] = value
    return tuple(sorted(values.items()))


def by_target(requests: list[Any], orchestrator: str) -> dict[tuple[str, str | None], set[Any]]:
    result: dict[tuple[str, str | None], set[Any]] = {}
    for request in requests:
        result.setdefault((request.route, request.server), set()).add(normalized(request, orchestrator))
    return result


@pytest.fixture
def turn() -> Any:
    return make_turn_context(agentic_app_id=DEFAULT_AGENT_ID, channel_id="msteams:email")


async def test_same_headers_from_every_extension(emulator: Emulator, turn: Any) -> None:
    seen = {}
    for name in ADAPTERS:
        requests, adapter = await run_turn_with(emulator, name, turn, emulator.authorization())
        seen[name] = by_target(requests, adapter.orchestrator)
    first, *others = sorted(seen)
    assert set(seen[first]) == {("gateway", None), ("mcp", "mail"), ("mcp", "calendar"), ("rtp", None)}
    for other in others:  # every extension sends what the first one sends
        assert seen[other] == seen[first], f"{other} differs from {first}"
    for target, header_sets in seen[first].items():
        assert len(header_sets) == 1, f"{target}: requests of one target disagree: {header_sets}"


@pytest.mark.parametrize("adapter_name", sorted(ADAPTERS))
async def test_agent_id_precedence(
    emulator: Emulator, adapter_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT365_APPLICATION_NAME", "contract-app")
    # 1. The sender's agentic app blueprint id wins everywhere.
    with_blueprint = make_turn_context(
        agentic_app_id=DEFAULT_AGENT_ID, blueprint_id="blueprint-from-activity"
    )
    requests = await run_turn(emulator, adapter_name, with_blueprint, emulator.authorization())
    assert {r.headers["x-ms-agentid"] for r in requests} == {"blueprint-from-activity"}
    # 2. Else the token's claims (xms_par_app_azp first); threat protection has no token: the app name.
    plain = make_turn_context(agentic_app_id=DEFAULT_AGENT_ID)
    authorization = emulator.authorization(claims={"xms_par_app_azp": "blueprint-from-token"})
    requests = await run_turn(emulator, adapter_name, plain, authorization)
    assert {r.headers["x-ms-agentid"] for r in requests if r.route != "rtp"} == {"blueprint-from-token"}
    # 3. Else the application name.
    assert {r.headers["x-ms-agentid"] for r in requests if r.route == "rtp"} == {"contract-app"}
