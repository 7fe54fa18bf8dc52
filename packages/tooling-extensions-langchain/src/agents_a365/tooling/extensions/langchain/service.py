"""MCP tool registration for LangChain agents and threat-protection chat history."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Protocol

from langchain.agents import create_agent
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from agents_a365.runtime import AuthorizationLike, OperationResult, TurnContextLike
from agents_a365.tooling import (
    MCPServerConfig,
    ToolOptions,
)
from agents_a365.tooling.extensibility import check_limit, renamed_kwargs
from agents_a365.tooling.extension_base import ExtensionServiceBase

from ._connections import build_client, load_tools_per_call, open_sessions
from ._conversion import convert_messages
from ._toolset import AgentFactory, McpToolset, build_agent

__all__ = ["ORCHESTRATOR_NAME", "McpToolRegistrationService", "StateGraphLike"]

logger = logging.getLogger(__name__)

ORCHESTRATOR_NAME = "LangChain"


class StateGraphLike(Protocol):
    """A compiled LangGraph graph (``CompiledStateGraph``, ``create_agent``'s result): only
    ``aget_state`` is called."""

    async def aget_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> Any: ...


def _require(value: Any, name: str) -> None:
    if value is None:
        raise ValueError(f"{name} is required")


def _state_messages(state_snapshot: Any) -> Any:
    """``state_snapshot.values["messages"]`` of a LangGraph ``StateSnapshot``."""
    values = getattr(state_snapshot, "values", None)
    messages = values.get("messages") if isinstance(values, Mapping) else getattr(values, "messages", None)
    if messages is None:
        raise ValueError("state_snapshot must contain messages")
    return messages


class McpToolRegistrationService(ExtensionServiceBase):
    """Gives LangChain agents the MCP tools of Agent 365 and sends chat history to threat protection.

    Long-lived: keep one per process (it reuses the tooling service's HTTP connections and
    its discovery/token caches). Use it as an async context manager or call :meth:`aclose`;
    it closes the configuration service only when it created it.
    """

    orchestrator_name = ORCHESTRATOR_NAME
    distribution = "agents-a365-tooling-extensions-langchain"

    async def _servers(
        self,
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        turn_context: TurnContextLike,
        auth_token: str | None,
        options: ToolOptions | None,
    ) -> list[MCPServerConfig]:
        _require(turn_context, "turn_context")
        return await self.configuration_service.list_tool_servers(
            turn_context,
            authorization,
            auth_handler_name,
            auth_token,
            options=self.tool_options(options),
        )

    # -- tools -------------------------------------------------------------------------------
    @renamed_kwargs(tool_options="options")
    @contextlib.asynccontextmanager
    async def mcp_tools(
        self,
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        turn_context: TurnContextLike,
        auth_token: str | None = None,
        *,
        options: ToolOptions | None = None,
        skip_unreachable: bool = False,
    ) -> AsyncIterator[McpToolset]:
        """The turn's MCP tools over one open session per server (the fast path).

        Discovers once, opens every server's session concurrently, and closes them all when
        the block exits (also on error or cancellation). The tools are valid only inside::

            async with service.mcp_tools(authorization, "agentic", turn_context) as toolset:
                agent = toolset.create_agent({"model": model, "tools": my_tools})
                result = await agent.ainvoke({"messages": [...]}, context=turn_identity(turn_context))

        Each server must connect within ``request_timeout``. Raises ``McpServerConnectionError``
        naming a server that cannot be reached in time (the other sessions are closed); with
        ``skip_unreachable=True`` that server is left out with a warning instead. Also raises
        the tooling service's errors (``ToolServerDiscoveryError``, ``TokenAcquisitionError``,
        ``ValueError``).

        Warm turns: each server's tool definitions are cached per server and request headers
        (so per user; ``tool_cache_ttl``, default 300 s, ``0`` turns it off). On a cache hit the
        server is not contacted at registration; its session is opened by the first tool call
        (concurrent first calls share it) and closed when the block exits. The trade-off: a
        cached server that has become unreachable is not caught (nor skipped) here; its tool
        calls raise ``McpServerConnectionError`` instead, and its entry is invalidated so the
        next turn lists it again.
        """
        servers = await self._servers(authorization, auth_handler_name, turn_context, auth_token, options)
        timeout = self.configuration.request_timeout
        client = build_client(servers, timeout)
        async with open_sessions(
            client,
            servers,
            self.configuration_service.tool_definitions,
            timeout=timeout,
            skip_unreachable=skip_unreachable,
        ) as connected:
            yield McpToolset(connected.servers, connected.tools_by_server)

    @renamed_kwargs(tool_options="options")
    async def get_mcp_toolset(
        self,
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        turn_context: TurnContextLike,
        auth_token: str | None = None,
        *,
        options: ToolOptions | None = None,
        skip_unreachable: bool = False,
    ) -> McpToolset:
        """The turn's MCP tools, each opening its own MCP session per call (nothing to close).

        ``skip_unreachable`` and the tool-definition cache as in :meth:`mcp_tools`: a warm turn
        makes no MCP request at all (a cached server that has become unreachable fails when its
        tools are called, and is listed again next turn)."""
        servers = await self._servers(authorization, auth_handler_name, turn_context, auth_token, options)
        timeout = self.configuration.request_timeout
        client = build_client(servers, timeout)
        connected = await load_tools_per_call(
            client,
            servers,
            self.configuration_service.tool_definitions,
            timeout=timeout,
            skip_unreachable=skip_unreachable,
        )
        return McpToolset(connected.servers, connected.tools_by_server)

    @renamed_kwargs(tool_options="options")
    async def get_mcp_tools(
        self,
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        turn_context: TurnContextLike,
        auth_token: str | None = None,
        *,
        existing_tools: Sequence[Any] = (),
        options: ToolOptions | None = None,
        skip_unreachable: bool = False,
    ) -> list[BaseTool]:
        """The MCP tools as LangChain tools, for custom graphs and ``bind_tools`` loops.

        Names are made unique against ``existing_tools`` and across servers (see the README's
        name-clash rule). Each tool opens an MCP session per call; use :meth:`mcp_tools` to
        share one session per server within a turn.
        """
        toolset = await self.get_mcp_toolset(
            authorization,
            auth_handler_name,
            turn_context,
            auth_token,
            options=options,
            skip_unreachable=skip_unreachable,
        )
        return toolset.tools(existing_tools)

    @renamed_kwargs(tool_options="options")
    async def add_tool_servers_to_agent(
        self,
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        turn_context: TurnContextLike,
        auth_token: str | None = None,
        *,
        agent_options: Mapping[str, Any],
        agent_factory: AgentFactory = create_agent,
        options: ToolOptions | None = None,
        skip_unreachable: bool = False,
    ) -> Any:
        """A new agent: ``agent_factory(**agent_options)`` with the MCP tools added to ``tools``.

        ``agent_options`` are the keyword arguments of ``langchain.agents.create_agent``
        (``model``, ``tools``, ``system_prompt``, ``middleware``, ``checkpointer``,
        ``context_schema``, …); every option is passed through unchanged except ``tools``, which
        becomes the agent's own tools followed by the MCP tools (names unique). Each MCP tool
        opens a session per call; prefer :meth:`mcp_tools` + ``toolset.create_agent`` per turn.
        """
        if not isinstance(agent_options, Mapping):
            raise ValueError("agent_options is required (the keyword arguments of create_agent)")
        toolset = await self.get_mcp_toolset(
            authorization,
            auth_handler_name,
            turn_context,
            auth_token,
            options=options,
            skip_unreachable=skip_unreachable,
        )
        return build_agent(toolset, agent_options, agent_factory)

    # -- chat history ------------------------------------------------------------------------
    @renamed_kwargs(tool_options="options")
    async def send_chat_history(
        self,
        turn_context: TurnContextLike,
        graph: StateGraphLike,
        config: RunnableConfig,
        limit: int | None = None,
        options: ToolOptions | None = None,
    ) -> OperationResult:
        """Level 1: the messages of ``graph``'s state for ``config`` (e.g. a checkpointer's
        ``thread_id``). A failing ``aget_state``, or one that does not answer within
        ``chat_history_timeout``, gives a failed result."""
        _require(turn_context, "turn_context")
        _require(graph, "graph")
        _require(config, "config")
        check_limit(limit)
        return await self.send_history_from_store(
            turn_context,
            lambda: graph.aget_state(config),
            lambda snapshot: convert_messages(_state_messages(snapshot), limit),
            options,
            store="the graph state",
        )

    @renamed_kwargs(tool_options="options")
    async def send_chat_history_from_state(
        self,
        turn_context: TurnContextLike,
        state_snapshot: Any,
        limit: int | None = None,
        options: ToolOptions | None = None,
    ) -> OperationResult:
        """Level 2: ``state_snapshot.values["messages"]`` of a LangGraph ``StateSnapshot``."""
        _require(turn_context, "turn_context")
        _require(state_snapshot, "state_snapshot")
        return await self.send_chat_history_from_messages(
            turn_context, _state_messages(state_snapshot), limit, options
        )

    @renamed_kwargs(tool_options="options")
    async def send_chat_history_from_chat_history(
        self,
        turn_context: TurnContextLike,
        chat_history: BaseChatMessageHistory,
        limit: int | None = None,
        options: ToolOptions | None = None,
    ) -> OperationResult:
        """Level 3: the messages of any ``BaseChatMessageHistory`` (``aget_messages``); a failing
        store, or one that does not answer within ``chat_history_timeout``, gives a failed result."""
        _require(turn_context, "turn_context")
        _require(chat_history, "chat_history")
        check_limit(limit)
        return await self.send_history_from_store(
            turn_context,
            chat_history.aget_messages,
            lambda messages: convert_messages(messages, limit),
            options,
            store="the message history",
        )

    @renamed_kwargs(tool_options="options")
    async def send_chat_history_from_messages(
        self,
        turn_context: TurnContextLike,
        messages: Sequence[Any],
        limit: int | None = None,
        options: ToolOptions | None = None,
    ) -> OperationResult:
        """Level 4: convert LangChain messages and send them (``limit``: the most recent N).

        Always sends, even an empty list (threat protection registers the user message from
        it). Remote failures come back as a failed result; bad arguments raise ``ValueError``.
        """
        _require(turn_context, "turn_context")
        _require(messages, "messages")
        return await self.send_history(turn_context, convert_messages(messages, limit), options)
