"""At DEBUG an operator can follow a turn: discovery, token exchanges, MCP sessions, threat-protection attempts."""

from __future__ import annotations

import logging

import pytest
from langchain_core.messages import HumanMessage

from agents_a365.emulator import Emulator
from agents_a365.emulator.turns import make_turn_context
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService
from support.platform import production_config


async def test_two_turns_log_what_happened_at_debug_and_never_a_token(
    emulator: Emulator, caplog: pytest.LogCaptureFixture
) -> None:
    turn = make_turn_context(agentic_app_id=emulator.config.agent_id)
    with caplog.at_level(logging.DEBUG, logger="agents_a365"):
        async with McpToolRegistrationService(configuration=production_config(emulator)) as service:
            for _ in range(2):  # a cold turn, then a warm one
                async with service.mcp_tools(emulator.authorization(), "AGENTIC", turn) as toolset:
                    assert toolset.tools()
                assert (await service.send_chat_history_from_messages(turn, [HumanMessage("hi")])).succeeded
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("agents_a365.tooling")]
    text = "\n".join(messages)
    assert any("discovery for agent" in m and "cache miss" in m for m in messages)
    assert any("discovery for agent" in m and "cache hit" in m for m in messages)
    assert any("token for scope" in m and "cache miss" in m for m in messages)
    assert any("token for scope" in m and "cache hit" in m for m in messages)
    assert any("MCP session" in m and "opened" in m for m in messages)
    assert any("MCP session" in m and "closed" in m for m in messages)
    assert sum("chat history send attempt 1" in m for m in messages) == 2
    assert not [
        r for r in caplog.records if r.levelno >= logging.WARNING
    ]  # a healthy turn warns about nothing
    assert "eyJ" not in text  # no token, whatever the level
