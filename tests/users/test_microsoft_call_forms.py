"""Microsoft 2.0.0's call forms are accepted where they do not conflict with ours; the others fail saying what
to write instead."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import agents
import pytest
from agents import Agent

from agents_a365.emulator import Emulator
from agents_a365.tooling import (
    ChatHistoryMessage,
    McpToolServerConfigurationService,
    ToolingConfiguration,
    ToolOptions,
    get_mcp_platform_authentication_scope,
)
from agents_a365.tooling.extensions.openai import McpToolRegistrationService
from support.platform import AUTH_HANDLER, production_config
from users._users import user_turn

pytestmark = pytest.mark.filterwarnings("ignore:Use `streamable_http_client` instead:DeprecationWarning")
LOGGER = logging.getLogger("a-user-logger")


@pytest.fixture
async def core(emulator: Emulator) -> AsyncIterator[McpToolServerConfigurationService]:
    async with McpToolServerConfigurationService(production_config(emulator), logger=LOGGER) as service:
        yield service


def _shape(servers: list) -> list[tuple[str, str | None, str, dict[str, str]]]:
    return [(s.mcp_server_name, s.mcp_server_unique_name, s.url, s.headers) for s in servers]


async def test_microsofts_positional_order_is_ours_reordered(
    emulator: Emulator, core: McpToolServerConfigurationService
) -> None:
    turn, auth = user_turn(emulator, "alice"), emulator.authorization()
    token = emulator.platform_token(user_id="alice")
    ours = await core.list_tool_servers(turn, auth, AUTH_HANDLER, token, ToolOptions(orchestrator_name="X"))
    theirs = await core.list_tool_servers(
        emulator.config.agent_id, token, ToolOptions(orchestrator_name="X"), auth, AUTH_HANDLER, turn
    )
    keywords = await core.list_tool_servers(
        agentic_app_id=emulator.config.agent_id,
        auth_token=token,
        options=ToolOptions(orchestrator_name="X"),
        authorization=auth,
        auth_handler_name=AUTH_HANDLER,
        turn_context=turn,
    )
    assert _shape(ours) == _shape(theirs) == _shape(keywords)
    assert {s.identity for s in theirs} == {ours[0].identity}


async def test_microsofts_turnless_call_gives_servers_with_the_callers_token_and_no_identity(
    emulator: Emulator, core: McpToolServerConfigurationService
) -> None:
    token = emulator.platform_token(user_id="alice")
    servers = await core.list_tool_servers(agentic_app_id=emulator.config.agent_id, auth_token=token)
    assert all(s.identity is None for s in servers)
    by_name = {s.mcp_server_name: s.headers for s in servers}
    assert by_name["mail"]["Authorization"] == f"Bearer {token}"  # the platform audience's server
    # calendar has its own audience: the platform token is never sent to it, and with no turn there is
    # nothing to exchange it with (a WARNING says so).
    assert "Authorization" not in by_name["calendar"]
    assert emulator.requests_for("gateway")[-1].headers["authorization"] == f"Bearer {token}"


async def test_agentic_app_id_overrides_the_turns_and_is_validated(
    emulator: Emulator, core: McpToolServerConfigurationService
) -> None:
    turn, auth = user_turn(emulator, "alice"), emulator.authorization()
    await core.list_tool_servers(
        "other-agent", None, authorization=auth, auth_handler_name=AUTH_HANDLER, turn_context=turn
    )
    assert emulator.requests_for("gateway")[-1].path == "/agents/v2/other-agent/mcpServers"
    for bad in ("../x", "a/b", " ", 42):
        with pytest.raises(ValueError, match="agentic_app_id must be an agent id"):
            await core.list_tool_servers(agentic_app_id=bad, turn_context=turn)  # type: ignore[arg-type]


async def test_forms_that_cannot_be_accepted_say_what_to_write(
    emulator: Emulator, core: McpToolServerConfigurationService
) -> None:
    token = emulator.platform_token()
    with pytest.raises(ValueError, match="add turn_context=context"):
        await core.list_tool_servers(emulator.config.agent_id)  # production, no turn and no token
    with pytest.raises(TypeError, match="two values for 'auth_token'"):
        await core.list_tool_servers(emulator.config.agent_id, token, auth_token=token)
    async with McpToolRegistrationService(core, logger=LOGGER) as service:
        with pytest.raises(TypeError, match="pass only 'authorization'"):
            await service.add_tool_servers_to_agent(
                Agent(name="a"),
                auth=None,
                authorization=None,
                auth_handler_name=AUTH_HANDLER,
                turn_context=None,
            )


async def test_cleanup_all_servers_closes_them_and_the_service_stays_usable(
    emulator: Emulator, core: McpToolServerConfigurationService
) -> None:
    agents.set_tracing_disabled(True)
    service = McpToolRegistrationService(core, logger=LOGGER)
    turn = user_turn(emulator, "alice")
    agent = await service.add_tool_servers_to_agent(
        Agent(name="a"), auth=emulator.authorization(), auth_handler_name=AUTH_HANDLER, context=turn
    )
    await agent.mcp_servers[0].call_tool("list_emails", {})  # connects it
    await service.cleanup_all_servers()
    assert not any(server.is_connected for server in agent.mcp_servers)
    again = await service.add_tool_servers_to_agent(agent, emulator.authorization(), AUTH_HANDLER, turn)
    await again.mcp_servers[0].call_tool("list_emails", {})
    await service.cleanup_all_servers()


async def test_the_manifest_one_folder_up_and_the_unique_name_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, emulator: Emulator
) -> None:
    (tmp_path / "ToolingManifest.json").write_text(json.dumps({"mcpServers": [{"mcpServerName": "mail"}]}))
    (tmp_path / "agent").mkdir()
    monkeypatch.chdir(tmp_path / "agent")
    async with McpToolServerConfigurationService(ToolingConfiguration(use_tooling_manifest=True)) as service:
        [server] = await service.list_tool_servers(turn_context=user_turn(emulator, "alice"))
        assert (server.mcp_server_name, server.mcp_server_unique_name) == ("mail", "mail")
        (tmp_path / "agent" / "ToolingManifest.json").write_text(json.dumps([{"mcpServerName": "calendar"}]))
        [server] = await service.list_tool_servers(turn_context=user_turn(emulator, "alice"))
        assert server.mcp_server_name == "calendar"  # `.` first


def test_scope_helper_and_chat_history_message_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_mcp_platform_authentication_scope() == ["ea9ffc3e-8a23-4a7d-836d-234d7c7565c1/.default"]
    monkeypatch.setenv("MCP_PLATFORM_AUTHENTICATION_SCOPE", "api://test/.default")
    assert get_mcp_platform_authentication_scope() == ["api://test/.default"]
    message = ChatHistoryMessage(role="user", content="Hello")
    assert message.id
    assert message.timestamp.tzinfo is not None


async def test_a_logger_is_accepted_by_keyword_and_by_position() -> None:
    for service in (McpToolServerConfigurationService(LOGGER), McpToolRegistrationService(LOGGER)):
        async with service:
            assert isinstance(service.configuration, ToolingConfiguration)
