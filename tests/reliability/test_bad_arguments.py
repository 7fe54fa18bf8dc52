"""Wrong argument types fail at the call with a TypeError naming the argument; renamed arguments still work."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents import SQLiteSession
from langchain_core.messages import HumanMessage

from agents_a365.emulator import Emulator
from agents_a365.emulator.turns import make_turn_context
from agents_a365.tooling import McpToolServerConfigurationService, ToolingConfiguration, ToolOptions
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService as LangChainService
from agents_a365.tooling.extensions.openai import McpToolRegistrationService as OpenAIService
from support.platform import production_config


@pytest.fixture
async def emu() -> AsyncIterator[Emulator]:
    async with Emulator() as emulator:
        yield emulator


@pytest.fixture
def config(emu: Emulator) -> ToolingConfiguration:
    return production_config(emu)


def _turn(emu: Emulator) -> Any:
    return make_turn_context(agentic_app_id=emu.config.agent_id)


@pytest.mark.parametrize("bad", [{"orchestrator_name": "x"}, "LangChain", 3])
async def test_options_of_the_wrong_type_are_a_type_error(
    emu: Emulator, config: ToolingConfiguration, bad: Any
) -> None:
    turn = _turn(emu)
    async with McpToolServerConfigurationService(config) as core:
        with pytest.raises(TypeError, match="options must be a ToolOptions"):
            await core.list_tool_servers(turn, emu.authorization(), "AGENTIC", options=bad)
        with pytest.raises(TypeError, match="options must be a ToolOptions"):
            await core.send_chat_history(turn, [], options=bad)
    async with LangChainService(configuration=config) as lc:
        with pytest.raises(TypeError, match="options must be a ToolOptions"):
            await lc.send_chat_history_from_messages(turn, [HumanMessage("x")], options=bad)
        with pytest.raises(TypeError, match="options must be a ToolOptions"):
            await lc.get_mcp_tools(emu.authorization(), "AGENTIC", turn, options=bad)
    async with OpenAIService(configuration=config) as oa:
        with pytest.raises(TypeError, match="options must be a ToolOptions"):
            await oa.send_chat_history_messages(turn, [], options=bad)
        session = SQLiteSession("bad-options")
        try:
            with pytest.raises(TypeError, match="options must be a ToolOptions"):
                await oa.send_chat_history(turn, session, options=bad)
        finally:
            session.close()
    assert emu.chat_messages == []  # nothing was sent with a wrong argument


@pytest.mark.parametrize("bad", ["hello", {"role": "user"}, 42])
async def test_a_history_that_is_not_a_list_is_a_type_error(
    emu: Emulator, config: ToolingConfiguration, bad: Any
) -> None:
    async with McpToolServerConfigurationService(config) as core:
        with pytest.raises(TypeError, match="chat_history_messages must be a list"):
            await core.send_chat_history(_turn(emu), bad)


async def test_langchain_tool_options_is_a_deprecated_alias_of_options(
    emu: Emulator, config: ToolingConfiguration
) -> None:
    turn = _turn(emu)
    async with LangChainService(configuration=config) as lc:
        with pytest.warns(DeprecationWarning, match="'tool_options' is deprecated, use 'options'"):
            result = await lc.send_chat_history_from_messages(
                turn, [HumanMessage("x")], tool_options=ToolOptions(orchestrator_name="Old")
            )
        assert result.succeeded
        assert "Old" in emu.requests_for("rtp")[-1].headers["user-agent"]
        with pytest.warns(DeprecationWarning, match="mcp_tools"):
            async with lc.mcp_tools(emu.authorization(), "AGENTIC", turn, tool_options=None) as toolset:
                assert toolset.tools()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the new name does not warn
            await lc.send_chat_history_from_messages(turn, [], options=ToolOptions(orchestrator_name="New"))
        with pytest.raises(TypeError, match="got both 'tool_options'"):
            await lc.send_chat_history_from_messages(turn, [], options=None, tool_options=None)


async def test_a_bad_auth_token_fails_fast_on_the_manifest_path_in_every_extension(
    emu: Emulator, tmp_path: Any
) -> None:
    # Validation lives in the core's discovery, so the OpenAI extension checks it too (it did not).
    from agents import Agent

    from agents_a365.runtime import InvalidTokenError, TokenExpiredError

    manifest = tmp_path / "ToolingManifest.json"
    manifest.write_text('{"mcpServers": [{"mcpServerName": "mail"}]}')
    config = ToolingConfiguration(
        use_tooling_manifest=True, manifest_path=manifest, mcp_platform_endpoint=emu.base_url
    )
    turn = _turn(emu)
    expired = emu.platform_token(expires_in=-60)
    async with OpenAIService(configuration=config) as oa, LangChainService(configuration=config) as lc:
        with pytest.raises(TokenExpiredError):
            await oa.add_tool_servers_to_agent(Agent(name="a"), None, None, turn, expired)
        with pytest.raises(InvalidTokenError):  # JWT-shaped but malformed
            await oa.add_tool_servers_to_agent(Agent(name="a"), None, None, turn, "not.a.jwt")
        with pytest.raises(TokenExpiredError):
            await lc.get_mcp_tools(None, None, turn, expired)
    assert emu.requests == []  # nothing was sent with a bad token
