"""Every Agent 365 MCP server of an agent as one ``agents.mcp.MCPServer``, built once for every user.

``Agent(..., mcp_servers=[service.agent_servers(app.auth, "AGENTIC")])`` lives as long as the service. Each
``list_tools(run_context, agent)`` (the Agents SDK's, before each model call) resolves the run's turn and
offers that user's servers' tools; each ``call_tool`` resolves its turn again (the run context noted by the
``tool_meta_resolver``, else the task's scope) and calls with that user's token for the server's audience.
Names are unique across the servers and the agent's own tools (the core's rule), worked out once per change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from mcp.types import CallToolResult, GetPromptResult, ListPromptsResult, Tool

from agents_a365.tooling import MCPServerConfig, ToolServerNotGivenError
from agents_a365.tooling.extensibility import AgentTools, refusal, resolve_tool_names

from ._server import NotesTurn, call_for_turn, output_schema

__all__ = ["A365AgentServers"]

_View = tuple[
    dict[str, list[Tool]], dict[str, tuple[str, Tool]]
]  # tools by server; exposed -> (server, tool)


class A365AgentServers(NotesTurn):
    """All the Agent 365 MCP servers of the running turn's user, as one ``MCPServer`` (built by
    ``McpToolRegistrationService.agent_servers``). Takes ``MCPServer``'s keyword arguments
    (``require_approval``, ``use_structured_content``, …); prompts and resources are not offered."""

    def __init__(self, tools: AgentTools, *, name: str = "agent365", **options: Any) -> None:
        super().__init__(**options)
        self._name, self._agent_tools = name, tools
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
        (server, tool), calltime = route, self._agent_tools.calltime
        config = MCPServerConfig(
            mcp_server_name=server, url=self._agent_tools.urls.get(server, "a365://" + server)
        )
        core = calltime.service
        schema = output_schema(tool)
        run = _pooled(core)
        return await call_for_turn(
            calltime, config, tool_name, tool.name, arguments, meta, schema, run, core.tool_definitions
        )

    async def list_prompts(self) -> ListPromptsResult:
        return ListPromptsResult(prompts=[])

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> GetPromptResult:
        raise ValueError(f"{self.name!r} offers no prompts")

    def __repr__(self) -> str:
        return f"A365AgentServers({self.name!r})"


def _pooled(core: Any) -> Any:
    async def run(operation: Any) -> Any:
        return await operation(core.session_pool)  # the pool of the running loop, read at each call

    return run
