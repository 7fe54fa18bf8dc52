"""MCP tool registration for LangChain agents and threat-protection chat history."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from langchain.agents import create_agent as _create_agent
from langchain_core.tools import BaseTool

from agents_a365.runtime import AuthorizationLike, TurnContextLike
from agents_a365.tooling import ToolOptions
from agents_a365.tooling.extensibility import (
    AgentTools,
    CallTime,
    McpSessionPool,
    list_servers,
    renamed_kwargs,
    resolve_tool_names,
)

from ._agent import McpAgent
from ._connections import to_langchain
from ._history_sends import ChatHistorySends, StateGraphLike
from ._toolset import AgentFactory, McpToolset

__all__ = ["ORCHESTRATOR_NAME", "McpToolRegistrationService", "StateGraphLike"]

ORCHESTRATOR_NAME = "LangChain"


class McpToolRegistrationService(ChatHistorySends):
    """Gives LangChain agents the MCP tools of Agent 365 and sends chat history to threat protection.

    Long-lived: keep one per process (it reuses the tooling service's HTTP connections and
    its discovery/token caches). Use it as an async context manager or call :meth:`aclose`;
    it closes the configuration service only when it created it.
    """

    orchestrator_name = ORCHESTRATOR_NAME
    distribution = "agents-a365-tooling-extensions-langchain"

    @property
    def session_pool(self) -> McpSessionPool:
        """The tooling service's MCP sessions (``configuration_service.session_pool``), reused across calls
        and turns; closed with the tooling service."""
        return self.configuration_service.session_pool

    # -- tools -------------------------------------------------------------------------------
    def create_agent(
        self,
        agent_options: Mapping[str, Any],
        *,
        authorization: AuthorizationLike | None = None,
        auth_handler_name: str | None = None,
        agent_factory: AgentFactory = _create_agent,
        options: ToolOptions | None = None,
        skip_unreachable: bool = True,
    ) -> McpAgent:
        """One agent for every user, built before any turn (the recommended form)::

            agent = service.create_agent({"model": model, "tools": [my_tool]}, authorization=app.auth,
                                         auth_handler_name="AGENTIC")
            result = await agent.ainvoke({"messages": [...]}, context=turn_identity(turn_context))

        ``agent_options`` are ``create_agent``'s keyword arguments; the MCP tools of the running turn's agent
        identity join ``tools``. ``authorization`` and ``auth_handler_name`` are the app's (hosting-core's
        ``app.auth``), used for each user's token exchange. A server that cannot be listed is left out of the
        turn with a WARNING (``skip_unreachable=False``: ``McpServerConnectionError``). See :class:`McpAgent`.
        """
        if not isinstance(agent_options, Mapping):
            raise ValueError("agent_options is required (the keyword arguments of create_agent)")
        core = self.configuration_service
        calltime = CallTime(core, authorization, auth_handler_name, self.tool_options(options))
        return McpAgent(AgentTools(calltime, skip_unreachable=skip_unreachable), agent_options, agent_factory)

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
        """The turn's MCP tools, valid inside the block only::

            async with service.mcp_tools(authorization, "agentic", turn_context) as toolset:
                agent = toolset.create_agent({"model": model, "tools": my_tools})
                result = await agent.ainvoke({"messages": [...]}, context=turn_identity(turn_context))

        Discovers once and lists every server concurrently (each within ``request_timeout``), on the
        tooling service's pooled MCP sessions (``session_pool``): the session that lists a server is the
        one its tool calls use, in this turn and the next (per server and user token, until idle for
        ``mcp_session_idle_timeout``). After the block exits (also on error or cancellation) its tools
        refuse to run, and nothing of the turn is left open. Raises ``McpServerConnectionError`` naming a
        server that cannot be listed in time; with ``skip_unreachable=True`` that server is left out with
        a warning instead. Also raises the tooling service's errors (``ToolServerDiscoveryError``,
        ``TokenAcquisitionError``, ``ValueError``).

        Warm turns: each server's tool definitions are cached per server and request headers
        (so per user; ``tool_cache_ttl``, default 300 s, ``0`` turns it off). On a cache hit the
        server is not contacted at registration. The trade-off: a cached server that has become
        unreachable is not caught (nor skipped) here; its tool calls raise ``McpServerConnectionError``
        instead, and its entry is invalidated so the next turn lists it again.
        """
        exited = asyncio.Event()
        try:
            yield await self._toolset(
                authorization, auth_handler_name, turn_context, auth_token, options, skip_unreachable, exited
            )
        finally:
            exited.set()

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
        """The turn's MCP tools, calling through the service's pooled MCP sessions (nothing to close).

        One session per server and user token is opened by the first call and reused by later calls and
        turns until it is idle for ``mcp_session_idle_timeout``, its token expires, the pool holds
        ``max_mcp_sessions``, or :meth:`aclose`; a session the server dropped is reopened once.

        ``skip_unreachable`` and the tool-definition cache as in :meth:`mcp_tools`: a warm turn
        makes no MCP request at all (a cached server that has become unreachable fails when its
        tools are called, and is listed again next turn)."""
        return await self._toolset(
            authorization, auth_handler_name, turn_context, auth_token, options, skip_unreachable, None
        )

    async def _toolset(
        self,
        authorization: AuthorizationLike | None,
        auth_handler_name: str | None,
        turn_context: TurnContextLike,
        auth_token: str | None,
        options: ToolOptions | None,
        skip_unreachable: bool,
        exited: asyncio.Event | None,
    ) -> McpToolset:
        core, options = self.configuration_service, self.tool_options(options)
        scope = core.turn_scope(turn_context, authorization, auth_handler_name, auth_token, options)
        servers = list((await scope.servers()).values())
        scope.enter()  # this task's turn from now on: its run needs no context (calls still resolve theirs)
        # Listed concurrently by the core (cached definitions cost no MCP request) on the pooled sessions.
        listed, _ = await list_servers(
            core.list_mcp_tools, servers, skip_unreachable=skip_unreachable, cache=core.tool_definitions
        )
        by_name = {s.mcp_server_name: (s, defs) for s, defs in listed}  # one server per name: the last
        # Named across servers once, at conversion; a merge renames only a clash with the agent's own tools.
        mcp_names = {name: [d.name for d in defs] for name, (_, defs) in by_name.items()}
        names = resolve_tool_names((), mcp_names)
        calltime, pool = (
            CallTime(core, authorization, auth_handler_name, options, registered=scope),
            core.session_pool,
        )
        tools = {
            name: await to_langchain(defs, name, s.url, calltime, names=names[name], exited=exited, pool=pool)
            for name, (s, defs) in by_name.items()
        }
        return McpToolset([server for server, _ in listed], tools, mcp_names)

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
        name-clash rule). Calls go through the service's pooled MCP sessions (see
        :meth:`get_mcp_toolset`).
        """
        toolset = await self._toolset(
            authorization, auth_handler_name, turn_context, auth_token, options, skip_unreachable, None
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
        agent_factory: AgentFactory = _create_agent,
        options: ToolOptions | None = None,
        skip_unreachable: bool = False,
    ) -> Any:
        """A new agent: ``agent_factory(**agent_options)`` with the MCP tools added to ``tools``.

        ``agent_options`` are the keyword arguments of ``langchain.agents.create_agent``
        (``model``, ``tools``, ``system_prompt``, ``middleware``, ``checkpointer``,
        ``context_schema``, …); every option is passed through unchanged except ``tools``, which
        becomes the agent's own tools followed by the MCP tools (names unique). MCP calls go through
        the service's pooled sessions (see :meth:`get_mcp_toolset`).
        """
        if not isinstance(agent_options, Mapping):
            raise ValueError("agent_options is required (the keyword arguments of create_agent)")
        toolset = await self._toolset(
            authorization, auth_handler_name, turn_context, auth_token, options, skip_unreachable, None
        )
        return toolset.create_agent(agent_options, agent_factory=agent_factory)
