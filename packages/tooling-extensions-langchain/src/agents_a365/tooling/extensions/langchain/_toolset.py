"""The MCP tools of one turn, and how they join an agent's own tools: a name clash is resolved by the tooling
core's rule (``resolve_tool_names``), applied to LangChain tools."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import BaseTool

from agents_a365.tooling import MCPServerConfig
from agents_a365.tooling.extensibility import require
from agents_a365.tooling.extensibility import resolve_tool_names as resolve_names

__all__ = ["A365_SERVER", "AgentFactory", "McpToolset", "resolve_tool_names", "tool_name"]

logger = logging.getLogger(__name__)

A365_SERVER = "a365_mcp_server"
"""The ``metadata`` key naming the Agent 365 MCP server of a tool this package built."""

AgentFactory = Callable[..., Any]
"""Builds an agent from ``create_agent`` keyword arguments (default: ``langchain.agents.create_agent``)."""


def tool_name(tool: Any) -> str | None:
    """The name a model sees for ``tool`` (a ``BaseTool``, a function or a tool dict)."""
    names = [getattr(tool, "name", None)]
    if isinstance(tool, Mapping):  # an OpenAI-style tool dict, or a plain one
        function = tool.get("function")
        names += [function.get("name") if isinstance(function, Mapping) else None, tool.get("name")]
    names.append(getattr(tool, "__name__", None))
    return next((name for name in names if isinstance(name, str)), None)


def resolve_tool_names(
    existing: Iterable[Any],
    tools_by_server: Mapping[str, Sequence[BaseTool]],
    mcp_names: Mapping[str, Sequence[str]] | None = None,
) -> list[BaseTool]:
    """The MCP tools of every server (in server order), renamed so no two tools share a name: the agent's
    own tools keep theirs, a clashing MCP tool becomes ``<server>_<tool>`` (see the tooling core's rule).
    ``mcp_names``: each tool's name on its server when it differs from its name (default: their names); a
    tool already under its resolved name is not copied."""
    reserved = [n for n in (tool_name(t) for t in existing) if n is not None]
    names = {s: (mcp_names or {}).get(s) or [t.name for t in tools] for s, tools in tools_by_server.items()}
    exposed = resolve_names(reserved, names)
    # The MCP adapter's coroutine calls the server with the original MCP name it closed over,
    # so only the name the model sees changes.
    return [
        tool if name == tool.name else tool.model_copy(update={"name": name})
        for server, tools in tools_by_server.items()
        for tool, name in zip(tools, exposed[server], strict=True)
    ]


class McpToolset:
    """The MCP tools discovered for a turn, grouped by server.

    Every tool calls through the tooling service's pooled sessions; those of
    :meth:`McpToolRegistrationService.mcp_tools` refuse to run once its ``async with`` block exits.
    """

    __slots__ = ("_by_server", "_names", "servers")

    def __init__(
        self,
        servers: Sequence[MCPServerConfig],
        tools_by_server: Mapping[str, Sequence[BaseTool]],
        mcp_names: Mapping[str, Sequence[str]] | None = None,
    ):
        """``mcp_names``: each tool's name on its server, when the tools were renamed (the service names the
        tools of servers that clash when it builds them)."""
        self.servers: tuple[MCPServerConfig, ...] = tuple(servers)
        self._by_server = {name: tuple(tools) for name, tools in tools_by_server.items()}
        self._names = mcp_names

    @property
    def tools_by_server(self) -> Mapping[str, tuple[BaseTool, ...]]:
        """Each server's tools, a name shared by two servers' tools resolved (as :meth:`tools` without
        ``existing_tools``)."""
        return dict(self._by_server)

    def tools(self, existing_tools: Sequence[Any] = ()) -> list[BaseTool]:
        """The MCP tools, renamed where needed so none clashes with ``existing_tools`` or another server's."""
        # Named across servers already (the service's): only a clash with the agent's own tools costs a copy.
        return resolve_tool_names(existing_tools, self._by_server, self._names)

    def merge(self, existing_tools: Sequence[Any] | None = None) -> list[Any]:
        """``existing_tools`` (unchanged, first) followed by the MCP tools, names unique. Agent 365 MCP tools
        among ``existing_tools`` (an earlier turn's) are replaced by this turn's."""
        given = list(existing_tools or ())
        own = [t for t in given if A365_SERVER not in (getattr(t, "metadata", None) or {})]
        if len(own) < len(given):
            logger.debug("replacing %d Agent 365 MCP tool(s) of an earlier turn", len(given) - len(own))
        return [*own, *self.tools(own)]

    def create_agent(
        self, agent_options: Mapping[str, Any], *, agent_factory: AgentFactory = create_agent
    ) -> Any:
        """``agent_factory(**agent_options)`` with the MCP tools merged into ``agent_options["tools"]``."""
        if not isinstance(agent_options, Mapping):
            raise ValueError("agent_options is required (the keyword arguments of create_agent)")
        require(agent_factory, "agent_factory")
        return agent_factory(**{**agent_options, "tools": self.merge(agent_options.get("tools"))})

    def __len__(self) -> int:
        return sum(len(tools) for tools in self._by_server.values())

    def __repr__(self) -> str:
        counts = ", ".join(f"{name}={len(tools)}" for name, tools in self._by_server.items())
        return f"McpToolset({counts})"
