"""The MCP servers registered for one agent (one turn): their options checked, built with their tool names
resolved."""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agents.mcp import MCPServer
from mcp.types import Tool

from agents_a365.tooling import MCPServerConfig, McpToolServerConfigurationService
from agents_a365.tooling.extensibility import CallTime, resolve_tool_names

from ._server import A365MCPServer

__all__ = ["build_servers", "check_server_options", "server_url"]

# What ``server_options`` may set: ``MCPServer``'s own arguments (those of the installed openai-agents)
# and the two ``MCPServerStreamableHttp`` ones the server implements.
SERVER_OPTIONS = frozenset(
    {"cache_tools_list", "tool_filter"}
    | {n for n in inspect.signature(MCPServer.__init__).parameters if n != "self"}
)


def check_server_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``options`` as a dict; ``ValueError`` naming any option the servers do not take."""
    unknown = set(options or {}) - SERVER_OPTIONS
    if unknown:
        raise ValueError(
            f"server_options cannot set {sorted(unknown)}: the servers take {sorted(SERVER_OPTIONS)} "
            "(url, headers and name come from discovery)"
        )
    return dict(options or {})


def server_url(server: MCPServer) -> str | None:
    """The URL of an HTTP-based SDK server (ours, streamable HTTP or SSE), else ``None``."""
    params = getattr(server, "params", None)
    url = params.get("url") if isinstance(params, Mapping) else getattr(server, "url", None)
    return url if isinstance(url, str) and url.strip() else None


def build_servers(
    listed: Sequence[tuple[MCPServerConfig, Sequence[Tool]]],
    *,
    own_tools: Iterable[Any],
    core: McpToolServerConfigurationService,
    options: Mapping[str, Any],
    calltime: CallTime | None = None,
) -> list[A365MCPServer]:
    """One server per listed config, calling through ``core``'s session pool; a tool name
    clashing with another tool (one of ``own_tools``, the agent's function tools, or another server's) is
    exposed under the tooling core's rule."""
    own = [name for name in (getattr(t, "name", None) for t in own_tools) if isinstance(name, str)]
    exposed = resolve_tool_names(own, {c.mcp_server_name: [t.name for t in tools] for c, tools in listed})
    pool = core.session_pool  # read once: it reads the settings
    return [
        A365MCPServer(
            config,
            tools,
            pool=pool,
            tool_cache=core.tool_definitions,
            exposed_names=exposed[config.mcp_server_name],
            calltime=calltime,
            **options,
        )
        for config, tools in listed
    ]
