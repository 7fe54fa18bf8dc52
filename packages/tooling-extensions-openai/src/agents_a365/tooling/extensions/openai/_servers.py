"""Discovered server configurations -> ``agents.mcp.MCPServerStreamableHttp`` instances."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from agents.mcp import MCPServer

from agents_a365.tooling import MCPServerConfig, ToolDefinitionCache, mcp_http_client_factory

from ._server import A365MCPServer

__all__ = ["RESERVED_SERVER_OPTIONS", "build_server", "new_servers", "normalize_url", "server_url"]

# Set from the discovered configuration; a caller's value would silently drop the
# server's own Authorization or rename it.
RESERVED_SERVER_OPTIONS = frozenset({"params", "name"})


def normalize_url(url: str) -> str:
    """The URL compared for duplicates: scheme and host lower-cased, trailing ``/`` ignored."""
    text = url.strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        return text.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"), parts.query, ""))


def server_url(server: MCPServer) -> str | None:
    """The URL of an HTTP-based SDK server (streamable HTTP or SSE), else ``None``."""
    params = getattr(server, "params", None)
    url = params.get("url") if isinstance(params, Mapping) else getattr(server, "url", None)
    return url if isinstance(url, str) and url.strip() else None


def new_servers(
    discovered: Iterable[MCPServerConfig], existing: Sequence[MCPServer]
) -> list[MCPServerConfig]:
    """The discovered servers whose URL is neither on the agent already nor listed twice."""
    seen = {normalize_url(url) for url in (server_url(s) for s in existing) if url is not None}
    result: list[MCPServerConfig] = []
    for config in discovered:
        key = normalize_url(config.url)
        if key in seen:
            continue
        seen.add(key)
        result.append(config)
    return result


def build_server(
    config: MCPServerConfig,
    *,
    timeout: float,
    options: Mapping[str, Any] | None = None,
    tool_cache: ToolDefinitionCache | None = None,
) -> A365MCPServer:
    """One SDK server for ``config``, connecting with its complete headers (own Authorization included).

    With ``tool_cache`` holding this server's definitions for these headers, the server is
    registered without connecting and connects on first use (see :class:`A365MCPServer`).

    ``timeout`` bounds each HTTP request and each MCP response (``client_session_timeout_seconds``);
    ``options`` are further ``MCPServerStreamableHttp`` arguments (``cache_tools_list``,
    ``tool_filter``, ``require_approval`` …) and may override those defaults.
    """
    kwargs: dict[str, Any] = {"cache_tools_list": True, "client_session_timeout_seconds": timeout}
    kwargs.update(options or {})
    return A365MCPServer(
        params={
            "url": config.url,
            # A copy: the SDK server must not share (or mutate) the frozen config's dict.
            "headers": dict(config.headers),
            "timeout": timeout,
            "terminate_on_close": True,
            # One shared TLS context: a fresh one per client costs ~18 ms of CPU (scripts/bench).
            "httpx_client_factory": mcp_http_client_factory,
        },
        name=config.mcp_server_name,
        tool_cache=tool_cache,
        list_timeout=timeout,
        identity=config.identity,
        **kwargs,
    )
