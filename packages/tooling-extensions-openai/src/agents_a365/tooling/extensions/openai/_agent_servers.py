"""Every Agent 365 MCP server of an agent as one ``agents.mcp.MCPServer``, built once for every user.

``Agent(..., mcp_servers=[service.agent_servers(app.auth, "AGENTIC")])`` lives as long as the service. Each
``list_tools(run_context, agent)`` (the Agents SDK's, before each model call) resolves the run's turn and
offers that user's servers' tools; each ``call_tool`` resolves its turn again (the run context noted by the
``tool_meta_resolver``, else the task's scope) and calls with that user's token for the server's audience.
Names are unique across the servers and the agent's own tools (the core's rule), worked out once per change.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agents import Agent, FunctionTool, RunContextWrapper, default_tool_error_function
from agents.mcp import MCPUtil
from mcp.types import CallToolResult, GetPromptResult, ListPromptsResult, Tool

from agents_a365.tooling import MCPServerConfig, ToolServerNotGivenError
from agents_a365.tooling.extensibility import AgentTools, McpSessionPool, refusal, resolve_tool_names

from ._server import NotesTurn, output_schema

__all__ = ["A365Agent", "A365AgentServers"]

T = TypeVar("T")
TContext = TypeVar("TContext")
# Tools by server; exposed name -> (server, tool).
_View = tuple[dict[str, list[Tool]], dict[str, tuple[str, Tool]]]


class A365AgentServers(NotesTurn):
    """All the Agent 365 MCP servers of the running turn's user, as one ``MCPServer`` (built by
    ``McpToolRegistrationService.agent_servers``). Takes ``MCPServer``'s keyword arguments
    (``require_approval``, ``use_structured_content``, …); prompts and resources are not offered."""

    def __init__(self, tools: AgentTools, *, name: str = "agent365", **options: Any) -> None:
        super().__init__(**options)
        self._name, self._agent_tools = name, tools
        self._tool_cache = tools.calltime.service.tool_definitions
        self._version: tuple[Any, tuple[str, ...], _View] | None = None  # (union, own names, view)

    @property
    def name(self) -> str:
        return self._name

    async def connect(self) -> None:
        """Nothing to do: each user's pooled session opens on its first request."""

    async def cleanup(self) -> None:
        """Nothing to do: the sessions are the tooling service's (closed with it)."""

    @staticmethod
    def _view(
        union: Mapping[str, Sequence[Tool]], own: tuple[str, ...]
    ) -> tuple[Any, tuple[str, ...], _View]:
        exposed = resolve_tool_names(own, {n: [t.name for t in defs] for n, defs in union.items()})
        tools: dict[str, list[Tool]] = {}
        routes: dict[str, tuple[str, Tool]] = {}
        for server, defs in union.items():
            named = list(zip(defs, exposed[server], strict=True))
            tools[server] = [t if n == t.name else t.model_copy(update={"name": n}) for t, n in named]
            routes.update((n, (server, t)) for t, n in named)
        return union, own, (tools, routes)

    async def list_tools(self, run_context: Any = None, agent: Any = None) -> list[Tool]:
        _, listed, union = await self._agent_tools.turn(getattr(run_context, "context", None))
        own = tuple(n for n in (getattr(t, "name", None) for t in getattr(agent, "tools", None) or ()) if n)
        if self._version is None or self._version[0] is not union or self._version[1] != own:
            # Worked out once per change, not per turn; in a worker thread (thousands of tools take ~30 ms).
            self._version = await asyncio.to_thread(self._view, union, own)
        tools = self._version[2][0]
        return [t for server in listed for t in tools.get(server, ())]  # only this user's servers

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        route = self._version[2][1].get(tool_name) if self._version is not None else None
        if route is None:
            return refusal(
                ToolServerNotGivenError(f"tool {tool_name!r} is not one of this agent's MCP tools")
            )
        server, tool = route
        return await self._call_for_turn(server, tool_name, tool.name, arguments, meta, output_schema(tool))

    async def _server(self, name: str, context: Any = None) -> MCPServerConfig:
        return await self._agent_tools.calltime.server(name, context)

    async def _run(self, operation: Callable[[McpSessionPool], Awaitable[T]]) -> T:
        return await operation(self._agent_tools.calltime.service.session_pool)  # the running loop's pool

    async def list_prompts(self) -> ListPromptsResult:
        return ListPromptsResult(prompts=[])

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> GetPromptResult:
        raise ValueError(f"{self.name!r} offers no prompts")

    def __repr__(self) -> str:
        return f"A365AgentServers({self.name!r})"


@dataclass
class A365Agent(Agent[TContext]):
    """An ``agents.Agent`` built once for every user whose Agent 365 tools are function tools converted once per
    change of their definitions, not on every run as ``mcp_servers`` tools are (the Agents SDK converts those
    before each model call: ~33 µs a tool). ``agent_servers``: ``service.agent_servers(app.auth, "AGENTIC")``::

        agent = A365Agent(name="mailer", model=model, agent_servers=service.agent_servers(app.auth, "AGENTIC"))
        result = await Runner.run(agent, text, context=turn_context)

    Each run offers its user's servers' tools, worked out once per run (the Agents SDK asks before each model call
    and again while it resolves tool calls); each call resolves its turn, as ``A365AgentServers`` does.
    """

    agent_servers: A365AgentServers | None = None
    _converted: tuple[Any, dict[int, FunctionTool]] | None = field(default=None, init=False, repr=False)
    # A run's tools by its context's id (with a weak reference to check it is that run), until the run is gone.
    _runs: dict[int, tuple[weakref.ref[Any], list[Any]]] = field(default_factory=dict, init=False, repr=False)

    async def get_mcp_tools(self, run_context: RunContextWrapper[TContext]) -> list[Any]:
        seen = self._runs.get(key := id(run_context))
        if seen is None or seen[0]() is not run_context:
            seen = (weakref.ref(run_context), await self._run_tools(run_context))
            self._runs[key] = seen
            weakref.finalize(run_context, self._runs.pop, key, None)
        return list(seen[1])

    async def _run_tools(self, run_context: RunContextWrapper[TContext]) -> list[Any]:
        tools: list[Any] = await super().get_mcp_tools(run_context)
        servers = self.agent_servers
        if servers is None:
            return tools
        offered = await servers.list_tools(run_context, self)
        version = servers._version  # the exposed tools the list came from: converted once per version
        if self._converted is None or self._converted[0] is not version:
            strict = self.mcp_config.get("convert_schemas_to_strict", False)
            failure = self.mcp_config.get("failure_error_function", default_tool_error_function)
            every = [t for named in (version[2][0] if version else {}).values() for t in named]

            # Off the event loop: thousands of tools take ~100 ms to convert.
            def convert() -> dict[int, FunctionTool]:
                return {id(t): MCPUtil.to_function_tool(t, servers, strict, self, failure) for t in every}

            self._converted = (version, await asyncio.to_thread(convert))
        return [*tools, *(self._converted[1][id(t)] for t in offered)]
