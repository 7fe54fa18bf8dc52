"""The LangChain extension against hostile peers: stores that never answer, duplicate server names.

The stores are real LangChain/LangGraph objects (a compiled ``StateGraph`` with a checkpointer, a
``BaseChatMessageHistory``) whose I/O never completes, as a remote store that stopped answering.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from microsoft_agents.hosting.core import TurnContext

from agents_a365.emulator import DEFAULT_AGENT_ID
from agents_a365.tooling import McpServerConnectionError, ToolingConfiguration, ToolServerDiscoveryError
from agents_a365.tooling.extensions.langchain import McpToolRegistrationService as LangChainService
from support.hostile_mcp import STRUCTURED_BREAKS, HostileMcp, structured_echo
from support.hostile_server import HostileServer
from support.jwt import make_jwt

SAFETY = 10.0  # a safety net against hangs only; the bound under test is chat_history_timeout
TOKEN = make_jwt(appid=DEFAULT_AGENT_ID)


class _SilentCheckpointer(InMemorySaver):
    """A checkpointer whose store stopped answering."""

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


class _SilentHistory(InMemoryChatMessageHistory):
    """A message history whose store stopped answering."""

    async def aget_messages(self) -> list[BaseMessage]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def _graph() -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda state: {"messages": []})
    builder.add_edge(START, "echo")
    return builder.compile(checkpointer=_SilentCheckpointer())


async def test_level_1_graph_state_that_never_answers_is_a_failed_result_in_time(turn: TurnContext) -> None:
    cfg = ToolingConfiguration(chat_history_timeout=0.3, use_tooling_manifest=False)
    async with LangChainService(configuration=cfg) as svc:
        async with asyncio.timeout(SAFETY):
            result = await svc.send_chat_history(turn, _graph(), {"configurable": {"thread_id": "t1"}})
    assert not result.succeeded
    assert isinstance(result.errors[0].exception, TimeoutError)


async def test_level_3_message_history_that_never_answers_is_a_failed_result_in_time(
    turn: TurnContext,
) -> None:
    cfg = ToolingConfiguration(chat_history_timeout=0.3, use_tooling_manifest=False)
    async with LangChainService(configuration=cfg) as svc:
        async with asyncio.timeout(SAFETY):
            result = await svc.send_chat_history_from_chat_history(turn, _SilentHistory())
    assert not result.succeeded
    assert isinstance(result.errors[0].exception, TimeoutError)


async def test_two_different_servers_under_one_name_are_a_clear_error(turn: TurnContext) -> None:
    async with HostileServer() as server:
        server.gateway(
            {"mcpServerName": "mail", "url": f"{server.base_url}/a/mcp"},
            {"mcpServerName": "mail", "url": f"{server.base_url}/b/mcp"},
        )
        cfg = ToolingConfiguration(
            mcp_platform_endpoint=server.base_url, use_tooling_manifest=False, request_timeout=0.5
        )
        async with LangChainService(configuration=cfg) as svc:
            with pytest.raises(ToolServerDiscoveryError, match="two different MCP servers are named 'mail'"):
                async with asyncio.timeout(SAFETY):
                    await svc.get_mcp_tools(None, None, turn, auth_token=TOKEN)


async def test_a_server_echoing_the_token_gets_it_into_no_tool_error_and_no_log_record(
    turn: TurnContext, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    raised: list[BaseException] = []
    outputs: list[str] = []
    async with HostileServer() as server:
        server.route("/mcp", HostileMcp(echo_headers_on_call=True))
        server.gateway({"mcpServerName": "echo", "url": f"{server.base_url}/mcp"})
        cfg = ToolingConfiguration(
            mcp_platform_endpoint=server.base_url, use_tooling_manifest=False, request_timeout=2
        )
        async with LangChainService(configuration=cfg) as svc:
            async with asyncio.timeout(SAFETY):
                async with svc.mcp_tools(None, None, turn, auth_token=TOKEN) as toolset:
                    for tool in toolset.tools():
                        try:
                            outputs.append(str(await tool.ainvoke({})))
                        except Exception as exc:
                            raised.append(exc)
    assert raised or outputs
    payload = TOKEN.split(".")[1]  # make_jwt's signature is a constant: look for the payload
    texts = [r.getMessage() for r in caplog.records] + [caplog.text, *outputs]
    texts += [f"{e!s} {e!r} {e.__cause__!r} {e.__context__!r}" for e in raised]
    leaks = [t[:200] for t in texts if payload in t]
    assert not leaks, leaks


@pytest.mark.parametrize(("structured", "error"), STRUCTURED_BREAKS)
async def test_structured_content_that_breaks_the_listed_output_schema_fails_the_call(
    turn: TurnContext, structured: dict[str, Any] | None, error: str
) -> None:
    """The interceptor calls the pool with the definition's output schema (as mcp's own client checks it)."""
    async with structured_echo() as (server, mcp):
        cfg = ToolingConfiguration(
            mcp_platform_endpoint=server.base_url, use_tooling_manifest=False, request_timeout=2
        )
        async with (
            LangChainService(configuration=cfg) as svc,
            asyncio.timeout(SAFETY),
            svc.mcp_tools(None, None, turn, auth_token=TOKEN) as toolset,
        ):
            (tool,) = toolset.tools()
            assert "ok" in str(await tool.ainvoke({}))
            mcp.structured = structured
            with pytest.raises(McpServerConnectionError, match=f"'echo'.*tool 'echo' .*{error}"):
                await tool.ainvoke({})
    assert mcp.methods.count("tools/list") == 1  # the schema came from the listed definition
